//! JSON-RPC on the wire, as a hostile or careless client writes it: every request gets exactly
//! one answer, under the id it was sent with, and nothing it sends costs toolshelf for good.

use serde_json::{Value, json};

use crate::harness::{RawClient, config, fixture, write_config};

fn dev() -> Value {
    config(&[("dev", "Development", json!({ "fixture": fixture(&[]) }))])
}

fn use_tool_line(id: &str, name: &str, arguments: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"use_tool","arguments":{{"tool":{{"toolbox":"dev","server":"fixture","name":"{name}"}},"arguments":{arguments}}}}}}}"#
    )
}

/// Reads answers until `count` lines have come; returns them as written.
async fn lines(client: &mut RawClient, count: usize) -> Vec<String> {
    let mut found = Vec::new();
    for _ in 0..count {
        found.push(client.next_line().await);
    }
    found
}

#[tokio::test]
async fn every_legal_id_is_answered_as_written_and_other_ids_get_an_error_with_a_null_id() {
    let mut client = RawClient::start(&dev()).await;
    for id in [
        "1.5",
        "123456789012345678901234567890",
        "-7",
        "1e3",
        r#""d\u0031""#,
    ] {
        client
            .send_line(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#))
            .await;
        assert_eq!(
            client.next_line().await,
            format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#)
        );
    }
    for id in ["null", r#"{"a":1}"#, "[1]", "true"] {
        client
            .send_line(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#))
            .await;
        let answer = client.next().await;
        assert!(
            answer.as_object().is_some_and(|o| o.contains_key("id")),
            "{answer}"
        );
        assert_eq!(answer["id"], Value::Null, "{id}: {answer}");
        assert_eq!(answer["error"]["code"], json!(-32600), "{id}: {answer}");
    }
    // The direct use_tool path and the open path answer fractional ids too.
    client.open(1, "dev").await;
    client
        .send_line(&use_tool_line("2.5", "echo", r#"{"a":1}"#))
        .await;
    let line = client.next_line().await;
    assert!(
        line.starts_with(r#"{"jsonrpc":"2.0","id":2.5,"result":{"content""#),
        "{line}"
    );
}

#[tokio::test]
async fn a_request_whose_id_is_in_flight_is_refused_and_the_first_is_answered() {
    let mut client = RawClient::start(&dev()).await;
    client.open(1, "dev").await;
    // Direct path (plain use_tool), and rmcp's path (a _meta key the direct path leaves to it).
    for (id, meta) in [
        (r#""s""#, ""),
        (r#""t""#, r#","_meta":{"traceparent":"00-x"}"#),
    ] {
        let slow = use_tool_line(id, "sleep", r#"{"ms":400}"#);
        let slow = slow.replacen(
            r#""name":"use_tool""#,
            &format!(r#""name":"use_tool"{meta}"#),
            1,
        );
        client.send_line(&format!("{slow}\n{slow}")).await;
        let answers = lines(&mut client, 2).await;
        let refused: Value = serde_json::from_str(&answers[0]).expect("JSON");
        assert_eq!(refused["error"]["code"], json!(-32600), "{answers:?}");
        let name = id.trim_matches('"');
        assert_eq!(
            refused["error"]["message"],
            json!(format!(
                "request id '{name}' is already in use by a call in flight; give each request an id of its own"
            ))
        );
        let answered: Value = serde_json::from_str(&answers[1]).expect("JSON");
        assert_eq!(answered["id"], json!(name));
        assert_eq!(
            answered["result"]["content"][0]["text"],
            json!("slept 400 ms"),
            "{answers:?}"
        );
    }
    // Two pings with one id in one write: two answers, whichever way they are served.
    let ping = r#"{"jsonrpc":"2.0","id":"d1","method":"ping"}"#;
    client.send_line(&format!("{ping}\n{ping}")).await;
    for line in lines(&mut client, 2).await {
        let answer: Value = serde_json::from_str(&line).expect("JSON");
        assert_eq!(answer["id"], json!("d1"), "{line}");
    }
    // The id is free again once answered.
    client.send_line(ping).await;
    assert_eq!(
        client.next_line().await,
        r#"{"jsonrpc":"2.0","id":"d1","result":{}}"#
    );
}

#[tokio::test]
async fn params_toolshelf_cannot_read_are_refused_under_the_requests_id() {
    let mut client = RawClient::start(&dev()).await;
    let deep = format!("{}{}", "[".repeat(300), "]".repeat(300));
    let cases = [
        (
            "no_params",
            r#"{"jsonrpc":"2.0","id":"x","method":"tools/call"}"#.to_owned(),
        ),
        (
            "deep_open",
            format!(
                r#"{{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{{"name":"open_toolbox","arguments":{{"toolbox":{deep}}}}}}}"#
            ),
        ),
        (
            "huge_number",
            r#"{"jsonrpc":"2.0","id":"x","method":"ping","params":{"_meta":{"n":1e400}}}"#
                .to_owned(),
        ),
        (
            "lone_surrogate",
            r#"{"jsonrpc":"2.0","id":"x","method":"tools/list","params":{"cursor":"\udfff"}}"#
                .to_owned(),
        ),
        (
            "initialize_without_client_info",
            r#"{"jsonrpc":"2.0","id":"x","method":"initialize","params":{}}"#.to_owned(),
        ),
    ];
    for (case, line) in cases {
        client.send_line(&line).await;
        let answer = client.next().await;
        assert_eq!(answer["id"], json!("x"), "{case}: {answer}");
        assert_eq!(answer["error"]["code"], json!(-32602), "{case}: {answer}");
    }
    // A method nobody has is still -32601.
    let (_, unknown) = client.request(9, "tools/frobnicate", json!({})).await;
    assert_eq!(unknown["error"]["code"], json!(-32601), "{unknown}");
}

/// Arguments no rmcp server can read (the fixture among them: it would drop the line and the call
/// would wait out callTimeout), each with the start of the text that refuses it.
pub(crate) fn unreadable_arguments() -> Vec<(String, &'static str)> {
    let deep = format!("{}{}", "[".repeat(300), "]".repeat(300));
    vec![
        (
            r#"{"a":{"b":[0,1,2,1e400]}}"#.to_owned(),
            "Invalid tool invocation parameters: arguments.a.b[3]: number 1e400 is outside the range of a double, so servers cannot read it; send a number within ±1.7976931348623157e308 (or the value as a string)",
        ),
        (
            r#"{"message":"hi \udfff"}"#.to_owned(),
            r#"Invalid tool invocation parameters: arguments.message: string "hi \udfff" holds a lone surrogate \udfff, which is not Unicode text, so servers cannot read it; send the character as UTF-8 or as a full surrogate pair"#,
        ),
        (
            r#"{"k":1,"k":2}"#.to_owned(),
            r#"Invalid tool invocation parameters: arguments: key "k" appears twice in one object, and servers keep different ones; send each key once"#,
        ),
        (
            format!(r#"{{"deep":{deep}}}"#),
            "Invalid tool invocation parameters: arguments.deep[0][0]",
        ),
    ]
}

/// `answer` is the refusal of unreadable arguments under `id`: an error result an agent can fix.
pub(crate) fn assert_refused(answer: &Value, id: Value, text: &str) {
    assert_eq!(answer["id"], id, "{answer}");
    let result = &answer["result"];
    assert_eq!(result["isError"], json!(true), "{answer}");
    let said = result["content"][0]["text"].as_str().unwrap_or_default();
    assert!(said.starts_with(text), "{said}");
    let error = &result["structuredContent"]["error"];
    assert_eq!(error["kind"], json!("invalid_arguments"), "{answer}");
    assert_eq!(error["retryable"], json!(false), "{answer}");
}

#[tokio::test]
async fn arguments_a_child_cannot_read_are_refused_at_once_and_nothing_is_lost() {
    crate::docs::assert_quoted(unreadable_arguments()[0].1);
    let mut client = RawClient::start(&dev()).await;
    client.open(1, "dev").await;
    for (id, (arguments, text)) in unreadable_arguments().iter().enumerate() {
        let id = id + 2;
        client
            .send_line(&use_tool_line(&id.to_string(), "echo", arguments))
            .await;
        assert_refused(&client.next().await, json!(id), text);
    }
    // The same session goes on: a readable call is answered by the child.
    client
        .send_line(&use_tool_line(
            "9",
            "echo",
            r#"{"text":"\ud83d\ude00 ok","n":1e300}"#,
        ))
        .await;
    let answer = client.next().await;
    assert_eq!(answer["id"], json!(9), "{answer}");
    assert_ne!(answer["result"]["isError"], json!(true), "{answer}");

    // Flat mode refuses them the same way.
    let (dir, path) = write_config(&dev());
    let mut command = crate::harness::toolshelf();
    command
        .args(["serve", "--flat", "--config"])
        .arg(&path)
        .env("RUST_LOG", "warn");
    let mut flat = RawClient::spawn(command, Some(dir), "2025-06-18").await;
    for (id, (arguments, text)) in unreadable_arguments().iter().enumerate() {
        flat.send_line(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"fixture:echo","arguments":{arguments}}}}}"#
        ))
        .await;
        assert_refused(&flat.next().await, json!(id), text);
    }
}

/// Resident memory of `pid` in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kib| kib.parse().ok())
        .unwrap_or(0)
}

#[tokio::test]
async fn large_messages_leave_no_memory_behind_and_an_oversized_one_is_answered_under_its_id() {
    let mut client = RawClient::start(&dev()).await;
    client.open(1, "dev").await;
    let before = rss_kib(client.pid());
    // 15 MB each way (the fixture's codec drops lines over 16 MiB), then a 30 MB result, over
    // the limit toward the agent, then a 70 MB request, over the limit toward toolshelf.
    let payload = "x".repeat(15_000_000);
    client
        .send_line(&use_tool_line(
            "2",
            "echo",
            &format!(r#"{{"s":"{payload}"}}"#),
        ))
        .await;
    let echoed = client.next_line().await;
    assert!(echoed.len() > 15_000_000, "{}", &echoed[..200]);
    drop(echoed);
    client
        .send_line(&use_tool_line("3", "big", r#"{"bytes":30000000}"#))
        .await;
    let refused = client.next().await;
    assert_eq!(refused["result"]["isError"], json!(true), "{refused}");
    let huge = use_tool_line(
        r#""huge""#,
        "echo",
        &format!(r#"{{"s":"{}"}}"#, "y".repeat(70 << 20)),
    );
    client.send_line(&huge).await;
    drop(huge);
    let answer = client.next().await;
    assert_eq!(answer["id"], json!("huge"), "{answer}");
    assert_eq!(answer["error"]["code"], json!(-32600), "{answer}");
    let (_, pong) = client.request(4, "ping", json!({})).await;
    assert_eq!(pong["result"], json!({}));
    let after = rss_kib(client.pid());
    assert!(
        after < before + 8 * 1024,
        "resident memory went from {before} KiB to {after} KiB"
    );
}

/// A large result is answered in a copy of the child's line, its envelope written over the
/// child's: an agent's id of any length gets it whole, under that id.
#[tokio::test]
async fn a_large_result_is_answered_whole_under_ids_short_and_long() {
    let mut client = RawClient::start(&dev()).await;
    client.open(1, "dev").await;
    let long = format!(r#""{}""#, "i".repeat(300));
    for id in ["2", long.as_str(), r#""\u0033""#] {
        for bytes in [70_000, 1_000_000] {
            client
                .send_line(&use_tool_line(
                    id,
                    "big",
                    &format!(r#"{{"bytes":{bytes}}}"#),
                ))
                .await;
            let line = client.next_line().await;
            let start = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"#);
            assert!(line.starts_with(&start), "{}", &line[..400.min(line.len())]);
            let answer: Value = serde_json::from_str(&line).expect("one JSON answer");
            let text = answer["result"]["content"][0]["text"]
                .as_str()
                .unwrap_or_default();
            assert_eq!(text.len(), bytes, "{id}");
        }
    }
}

#[tokio::test]
async fn relative_paths_in_a_config_start_at_its_folder_wherever_the_client_runs_toolshelf() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::os::unix::fs::symlink(crate::harness::fixture_bin(), dir.path().join("fixture"))
        .expect("link the fixture");
    let events = dir.path().join("events.log");
    let config = config(&[(
        "dev",
        "Development",
        json!({ "fixture": { "command": "./fixture", "args": ["--events", "events.log"] } }),
    )]);
    let path = dir.path().join("toolboxes.json");
    std::fs::write(&path, config.to_string()).expect("write the config");
    let mut command = crate::harness::toolshelf();
    command
        .args(["serve", "--config"])
        .arg(&path)
        .current_dir("/")
        .env("RUST_LOG", "warn");
    let mut client = RawClient::spawn(command, None, "2025-06-18").await;
    let opened = client.open(1, "dev").await;
    assert_ne!(opened["result"]["isError"], json!(true), "{opened}");
    client
        .send_line(&use_tool_line("2", "sleep", r#"{"ms":1}"#))
        .await;
    let answer = client.next().await;
    assert_ne!(answer["result"]["isError"], json!(true), "{answer}");
    // The fixture's relative `--events` file is in the config's folder too.
    crate::harness::wait_for_line(&events, "start sleep").await;
}
