//! Code mode over `serve --http`, with two agents of the Python `mcp` SDK (declaring roots,
//! sampling and elicitation): a script that computes never holds up another session's script;
//! a tool the access rules withhold from a caller is, in his script, a tool that does not
//! exist; the audit log names the script of each call by its digest; each hostile script is
//! stopped with its reason while another caller's calls go on; a cancelled script cancels its
//! child's call; and the session's call budget holds for a script's calls.

use std::process::Stdio;

use serde_json::{Value, json};

use crate::{
    code_mode::HOSTILE,
    harness::{config, eventually, fixture, http::serve_logged, python::agent, write_config},
};

const ALICE: &str = "alice-t0ken-3333333333333";
const BOB: &str = "bob-t0ken-44444444444444444";

/// A folder with Alice's and Bob's tokens and the fixture's events file, and a config of
/// toolbox `dev` with the fixture as `server`: the folder, its tokens folder, the events
/// file's path and the config.
fn callers_of(server: &str) -> (tempfile::TempDir, std::path::PathBuf, String, Value) {
    let dir = tempfile::tempdir().expect("dir");
    let events = dir.path().join("events.log");
    let tokens = dir.path().join("tokens");
    std::fs::create_dir(&tokens).expect("tokens dir");
    std::fs::write(tokens.join("alice"), ALICE).expect("write");
    std::fs::write(tokens.join("bob"), BOB).expect("write");
    let events = events.to_str().expect("utf-8").to_owned();
    let file = config(&[(
        "dev",
        "Fixture",
        json!({ server: fixture(&["--events", &events]) }),
    )]);
    (dir, tokens, events, file)
}

#[tokio::test]
async fn scripts_of_two_callers_run_side_by_side_each_within_its_own_view() {
    let (dir, tokens, events_arg, mut file) = callers_of("fixture");
    let audit = dir.path().join("audit.jsonl");
    file["access"] = json!({"callers": ["alice", "bob"]});
    file["toolboxes"]["dev"]["mcpServers"]["fixture"]["tools"] =
        json!({"sleep": {"access": {"callers": ["alice"]}}});
    file["code"] = json!({"enabled": true, "cpuTimeout": 3});
    let (_config_dir, path) = write_config(&file);
    let args = [
        "--tokens-dir",
        tokens.to_str().expect("utf-8"),
        "--audit-log",
        audit.to_str().expect("utf-8"),
    ];
    let (_process, port) = serve_logged(&path, "", &args, Stdio::null()).await;
    let url = format!("http://127.0.0.1:{port}/mcp");
    let seen = agent("code_mode_agents.py", &[&url, ALICE, BOB, &events_arg]).await;

    assert_eq!(
        seen["alice"]["tools"],
        json!(["open_toolbox", "use_tool", "run_code"])
    );
    assert_eq!(seen["alice"]["kind"], "script_limit", "{seen}");
    assert!(
        seen["alice"]["text"]
            .as_str()
            .is_some_and(|text| text.contains("code.cpuTimeout")),
        "{seen}"
    );
    assert_eq!(seen["bob"]["shared"]["text"], "\"bob\"", "{seen}");
    assert_eq!(seen["alice_done_before_bob"], false, "{seen}");
    let withheld = seen["bob"]["withheld"]["text"].as_str().unwrap_or_default();
    assert!(
        withheld.contains("dev/fixture/sleep failed: Error executing tool: Tool 'sleep' not found in server 'fixture'"),
        "{seen}"
    );

    // Each call's record names its script; the script has a record of its own.
    let digest = |code: &str| {
        use sha2::Digest;
        let hash = sha2::Sha256::digest(code.as_bytes());
        let hex: String = hash.iter().map(|byte| format!("{byte:02x}")).collect();
        format!("sha256:{hex}")
    };
    let bobs_denied = digest("await call_tool('dev/fixture/sleep', {'ms': 1})");
    let lines: Vec<Value> = eventually("the audit log has the scripts' records", || async {
        let text = std::fs::read_to_string(&audit).unwrap_or_default();
        let lines: Vec<Value> = text
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect();
        let scripts = lines
            .iter()
            .filter(|line| line["event"] == "script")
            .count();
        (scripts >= 3).then_some(lines)
    })
    .await;
    let of = |event: &str| -> Vec<(Value, Value, Value)> {
        lines
            .iter()
            .filter(|line| line["event"] == event && line["script"] == bobs_denied.as_str())
            .map(|line| {
                (
                    line["caller"].clone(),
                    line["tool"].clone(),
                    line["outcome"].clone(),
                )
            })
            .collect()
    };
    assert_eq!(
        of("call"),
        [(json!("bob"), json!("sleep"), json!("denied"))]
    );
    assert_eq!(
        of("script"),
        [(json!("bob"), Value::Null, json!("script_error"))]
    );
}

#[tokio::test]
async fn hostile_scripts_over_http_are_stopped_while_another_caller_goes_on() {
    let (_dir, tokens, events_arg, mut file) = callers_of("fx");
    let events_arg = events_arg.as_str();
    file["code"] = crate::code_mode::hostile_limits();
    file["code"]["enabled"] = json!(true);
    file["http"] = json!({"maxCallsPerSession": 1});
    let (_config_dir, path) = write_config(&file);
    let args = ["--tokens-dir", tokens.to_str().expect("utf-8")];
    let (_process, port) = serve_logged(&path, "", &args, Stdio::null()).await;
    let url = format!("http://127.0.0.1:{port}/mcp");
    let loud = "for i in range(10000): print(i)";
    let mut scripts: Vec<&str> = HOSTILE.iter().map(|(script, _, _)| *script).collect();
    scripts.push(loud);
    let cases = serde_json::to_string(&scripts).expect("json");
    let seen = agent(
        "code_mode_hostile.py",
        &[&url, ALICE, BOB, events_arg, &cases],
    )
    .await;

    let answers = seen["cases"].as_array().expect("an answer per script");
    for ((script, expected, said), answer) in HOSTILE.iter().zip(answers) {
        assert_eq!(answer["kind"], *expected, "{script}: {answer}");
        let text = answer["text"].as_str().unwrap_or_default();
        assert!(text.contains(said), "{script}: {answer}");
        assert_eq!(answer["after"], "{\"n\":1}", "after {script}: {answer}");
    }
    let printed = &answers[HOSTILE.len()];
    assert_eq!(printed["error"], false, "{printed}");
    let printed = printed["text"].as_str().unwrap_or_default();
    assert!(printed.len() < 1300, "{}", printed.len());
    assert!(printed.contains("more bytes printed were cut"), "{printed}");
    // The cancelled script's child call was cancelled (the agent waited for the fixture to say
    // so), and the session goes on.
    assert_eq!(
        seen["after_cancel"]["text"], "{\"still\":\"here\"}",
        "{seen}"
    );
    // Of two calls at once, the session's budget of one call in flight refuses the second, as
    // it would refuse a second use_tool.
    let budget = seen["budget"]["text"].as_str().unwrap_or_default();
    assert!(
        budget.contains("this session has as many use_tool calls in flight as toolshelf runs at once (1, http.maxCallsPerSession in the config)"),
        "{seen}"
    );
    // Bob's calls all answered right while Alice's scripts ran.
    assert!(
        seen["bob"]["calls"].as_u64() > Some(HOSTILE.len() as u64),
        "{seen}"
    );
    assert_eq!(seen["bob"]["wrong"], json!([]), "{seen}");
}
