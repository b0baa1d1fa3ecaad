use rmcp::model::NumberOrString;

use super::*;
use crate::{children::progress_out::CurrentToken, jsonrpc::line_writer::LineWriter};

/// What `out` wrote to `theirs`, once it is closed.
async fn written(out: LineWriter, theirs: &mut tokio::io::DuplexStream) -> String {
    out.close().await;
    let mut written = String::new();
    tokio::io::AsyncReadExt::read_to_string(theirs, &mut written)
        .await
        .expect("read");
    written
}

fn raw(text: &str) -> Box<RawValue> {
    RawValue::from_string(text.to_owned()).expect("JSON")
}

#[tokio::test]
async fn progress_goes_forward_only_and_not_after_the_answer() {
    let (ours, mut theirs) = tokio::io::duplex(1 << 16);
    let out = LineWriter::spawn(ours);
    let calls = ToolCalls::default();
    let target = ProgressTarget {
        out: ProgressOut::Lines(out.clone()),
        token: CurrentToken::new(Some(ProgressToken(rmcp::model::NumberOrString::String(
            "agent-1".into(),
        )))),
    };
    let ticket = calls.register(Some(target), None, None).expect("open");
    let progress = |text: &str| {
        let params: ChildProgress<'_> = serde_json::from_str(text).expect("params");
        calls.progress(ticket.id, &params)
    };
    let token = ticket.id;
    let sent = [
        format!(r#"{{"progressToken":{token},"progress":1,"total":3,"message":"one"}}"#),
        format!(r#"{{"progressToken":{token},"progress":1}}"#),
        format!(r#"{{"progressToken":{token},"progress":2.5,"total":"x"}}"#),
    ];
    for text in &sent {
        assert_eq!(progress(text), Some(()));
    }
    calls.answer(ticket.id, ChildAnswer::Result(raw("{}").into()));
    assert_eq!(progress(&sent[0]), None, "no progress after the answer");
    let written = written(out, &mut theirs).await;
    assert_eq!(
        written,
        concat!(
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"agent-1","progress":1,"total":3,"message":"one"}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"agent-1","progress":2.5}}"#,
            "\n"
        )
    );
}

#[test]
fn a_closed_connection_takes_no_call_and_fails_those_waiting() {
    let calls = ToolCalls::default();
    let mut ticket = calls.register(None, None, None).expect("open");
    calls.close();
    assert!(matches!(
        ticket.answer.try_recv(),
        Err(oneshot::error::TryRecvError::Closed)
    ));
    assert!(calls.register(None, None, None).is_none());
}

#[tokio::test]
async fn a_created_task_keeps_its_progress_route_until_it_ends() {
    let (ours, mut theirs) = tokio::io::duplex(1 << 16);
    let out = LineWriter::spawn(ours);
    let calls = ToolCalls::default();
    let token = CurrentToken::new(Some(ProgressToken(NumberOrString::String("a1".into()))));
    let target = ProgressTarget {
        out: ProgressOut::Lines(out.clone()),
        token,
    };
    let task = calls
        .register(Some(target.clone()), None, None)
        .expect("open");
    calls.expect_task(task.id);
    let plain = calls.register(Some(target), None, None).expect("open");
    let progress = |id: i64, value: u32| {
        let text = format!(r#"{{"progressToken":{id},"progress":{value}}}"#);
        let params: ChildProgress<'_> = serde_json::from_str(&text).expect("params");
        calls.progress(id, &params)
    };
    let created = r#"{"task":{"taskId":"c1","status":"working","ttl":60000}}"#;
    let answered =
        |text: &str| ChildAnswer::Result(RawValue::from_string(text.into()).expect("JSON").into());
    calls.answer(task.id, answered(created));
    calls.answer(plain.id, answered(r#"{"content":[]}"#));
    assert_eq!(
        progress(task.id, 1),
        Some(()),
        "the task's progress goes on"
    );
    assert_eq!(
        progress(plain.id, 1),
        None,
        "a plain call's ends with its answer"
    );
    calls.task_ended("c1");
    assert_eq!(progress(task.id, 2), None, "and the task's with the task");
    let written = written(out, &mut theirs).await;
    assert_eq!(
        written,
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"a1\",\"progress\":1}}\n"
    );
}

/// The watch of the calls' timeouts tells a call that ran out, and only that one; a limit past
/// what the clock can count is no limit (a config may say 1e19 seconds), not a panic.
#[tokio::test]
async fn only_a_call_past_its_limit_expires() {
    let calls = ToolCalls::default();
    let mut quick = calls
        .register(None, None, Some(std::time::Duration::from_millis(20)))
        .expect("open");
    let mut endless = calls
        .register(None, None, Some(std::time::Duration::MAX))
        .expect("open");
    let mut slow = calls
        .register(None, None, Some(std::time::Duration::from_secs(600)))
        .expect("open");
    let expired = tokio::time::timeout(std::time::Duration::from_secs(10), &mut quick.expired);
    assert!(matches!(expired.await, Ok(Ok(()))));
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    assert!(endless.expired.try_recv().is_err());
    assert!(slow.expired.try_recv().is_err());
    calls.answer(slow.id, ChildAnswer::Result(raw("{}").into()));
    assert!(matches!(slow.answer.try_recv(), Ok(ChildAnswer::Result(_))));
}
