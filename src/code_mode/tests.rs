//! The engine's limits, each reached by a script; the calls answered by a function of the test
//! (the integration tests make them through real children: tests/it/code_mode.rs).

use std::{
    sync::atomic::{AtomicUsize, Ordering},
    time::Duration,
};

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::*;

fn limits() -> Limits {
    Limits {
        timeout: Duration::from_secs(20),
        cpu: Duration::from_millis(300),
        memory_bytes: 4 * 1024 * 1024,
        recursion_depth: 100,
        tool_calls: 5,
        output_bytes: 100,
    }
}

/// Runs `code`, each call answered with its own arguments under `"echo"`.
async fn run_script(code: &str) -> Finished {
    let cancel = CancellationToken::new();
    run(code.to_owned(), &limits(), &cancel, |call, _| async move {
        Ok(json!({"tool": call.tool, "echo": call.arguments}))
    })
    .await
}

/// A call that answers only once the run cancels it.
async fn until_cancelled(_: ToolCall, call_cancel: CancellationToken) -> Result<Value, String> {
    call_cancel.cancelled().await;
    Err("cancelled".to_owned())
}

fn raised(finished: &Finished) -> &str {
    match &finished.ending {
        Ending::Raised(traceback) => traceback,
        other => panic!("expected a raise, got {other:?}"),
    }
}

#[tokio::test]
async fn calls_return_python_values_and_the_last_expression_is_the_result() {
    let finished = run_script(
        "import asyncio\na = await call_tool('t/s/one', {'n': 1})\nprint('n is', a['echo']['n'])\nboth = await asyncio.gather(call_tool('t/s/two', n=2), call_tool('t/s/three'))\n[a['echo']['n'], both[0]['echo']['n'], both[1]['echo']]",
    )
    .await;
    assert_eq!(finished.ending, Ending::Returned(json!([1, 2, {}])));
    assert_eq!(finished.output.text, "n is 1\n");
}

#[tokio::test]
async fn a_failed_call_raises_with_its_error_which_the_script_may_catch() {
    let cancel = CancellationToken::new();
    let code = "try:\n    await call_tool('t/s/x', {})\nexcept RuntimeError as e:\n    print('caught', e)\nawait call_tool('t/s/x')";
    let finished = run(code.to_owned(), &limits(), &cancel, |_, _| async move {
        Err("t/s/x failed: no such thing".to_owned())
    })
    .await;
    assert_eq!(finished.output.text, "caught t/s/x failed: no such thing\n");
    assert!(raised(&finished).contains("RuntimeError: t/s/x failed: no such thing"));
}

#[tokio::test]
async fn hostile_scripts_are_each_stopped_with_their_reason() {
    let cases = [
        ("while True: pass", "TimeoutError"),
        ("x = []\nwhile True: x.append('a' * 10000)", "MemoryError"),
        ("'a' * 10**9", "MemoryError"),
        ("def f(n): return f(n + 1)\nf(0)", "RecursionError"),
        ("import os\nos.getenv('HOME')", "PermissionError"),
        ("open('/etc/passwd').read()", "PermissionError"),
        ("import subprocess", "ModuleNotFoundError"),
        ("call_tool(1, 2)", "TypeError"),
        ("1 +", "SyntaxError"),
    ];
    for (code, error) in cases {
        let finished = run_script(code).await;
        assert!(raised(&finished).contains(error), "{code}: {finished:?}");
    }
}

#[tokio::test]
async fn output_past_its_limit_is_counted_not_kept() {
    let finished = run_script("for i in range(1000): print('0123456789')\n'done'").await;
    assert_eq!(finished.ending, Ending::Returned(json!("done")));
    assert_eq!(finished.output.text.len(), 100);
    assert_eq!(finished.output.cut, 11_000 - 100);
}

#[tokio::test]
async fn a_call_past_the_limit_ends_the_run_even_if_the_script_catches_errors() {
    let made = AtomicUsize::new(0);
    let cancel = CancellationToken::new();
    let code = "while True:\n    try:\n        await call_tool('t/s/x')\n    except Exception:\n        pass";
    let finished = run(code.to_owned(), &limits(), &cancel, |_, _| {
        made.fetch_add(1, Ordering::Relaxed);
        async { Ok(Value::Null) }
    })
    .await;
    assert_eq!(finished.ending, Ending::TooManyCalls);
    assert_eq!(made.load(Ordering::Relaxed), 5);
}

#[tokio::test]
async fn cancelling_stops_a_computing_script_and_a_waiting_one() {
    for code in [
        "while True: pass",
        "print('before')\nawait call_tool('t/s/slow')",
    ] {
        let cancel = CancellationToken::new();
        let limits = Limits {
            cpu: Duration::from_secs(600),
            ..limits()
        };
        let stopper = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            stopper.cancel();
        });
        let finished = run(code.to_owned(), &limits, &cancel, until_cancelled).await;
        assert_eq!(finished.ending, Ending::Cancelled, "{code}");
    }
}

#[tokio::test]
async fn a_run_past_its_timeout_stops_with_what_it_printed() {
    let limits = Limits {
        timeout: Duration::from_millis(100),
        ..limits()
    };
    let cancel = CancellationToken::new();
    let code = "print('started')\nawait call_tool('t/s/slow')";
    let finished = run(code.to_owned(), &limits, &cancel, until_cancelled).await;
    assert_eq!(finished.ending, Ending::TimedOut);
    assert_eq!(finished.output.text, "started\n");
}
