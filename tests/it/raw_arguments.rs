//! The agent's arguments reach the child byte for byte on every path a call can take: stdio's
//! door (plain, with a progress token, task-augmented, flat), rmcp's path (an MCP key in
//! `_meta`, a 2026-07-28 request that runs in rounds, flat), and `serve --http` (the direct
//! path, a call with progress, a client without a session). The corpus is big and exact numbers,
//! escapes, unicode, arguments no child can read, and every one-byte mutation of three seeds
//! that still parses; the fixture child records each line it reads (`--lines`) before decoding
//! it. A case no child could read is refused at once, and the same on every path.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Value, json, value::RawValue};

use crate::harness::{
    RawClient, config, fixture,
    http::{Answered, RawSession, serve_with},
    write_config,
};

const SEEDS: &[&str] = &[
    r#"{"n":123456789012345678901234567890,"f":1.50,"e":1E2}"#,
    r#"{"s":"\u00e9\"\\\/é😀","a":[-0,1e-7,{}],"t":true}"#,
    r#"{"id":18446744073709551616,"k":"\ud83d\ude00","z":-0.0e+0}"#,
];

/// Cases beside the mutations: what no child can read, and what JSON allows and a re-encoding
/// would change.
const FIXED: &[&str] = &[
    r#"1e400"#,
    r#""\ud800""#,
    r#"{"a":1,"a":2}"#,
    r#"{ "spaced" :	[ 1 , 2 ] }"#,
    r#"-1.0000000000000000000000000001"#,
    r#"[12345678901234567890123,0.1,1E-2,-0]"#,
];

/// The corpus: each case is a value, sent as `{"case":K,"value":CASE}` so that what the child
/// received can be told apart even when a path altered it.
fn corpus() -> Vec<String> {
    let mut cases: Vec<String> = FIXED.iter().map(|case| (*case).to_owned()).collect();
    for seed in SEEDS {
        let bytes = seed.as_bytes();
        for at in 0..bytes.len() {
            for byte in (b' '..=b'~').chain([b'\t']) {
                if byte == bytes[at] {
                    continue;
                }
                let mut mutated = bytes.to_vec();
                mutated[at] = byte;
                let Ok(text) = String::from_utf8(mutated) else {
                    continue;
                };
                if serde_json::from_str::<&RawValue>(&text).is_ok() {
                    cases.push(text);
                }
            }
        }
    }
    cases.sort();
    cases.dedup();
    cases
}

fn arguments(case: usize, value: &str) -> String {
    format!(r#"{{"case":{case},"value":{value}}}"#)
}

#[derive(Clone, Copy, Debug)]
enum Way {
    StdioPlain,
    StdioProgress,
    StdioTask,
    StdioMcpMeta,
    StdioRounds,
    FlatPlain,
    FlatMcpMeta,
    HttpPlain,
    HttpProgress,
    HttpSessionless,
}

const CLIENT_INFO: &str = r#""io.modelcontextprotocol/clientInfo":{"name":"agent","version":"1"}"#;

impl Way {
    fn flat(self) -> bool {
        matches!(self, Way::FlatPlain | Way::FlatMcpMeta)
    }

    /// The `tools/call` request `id` with `arguments`, as this way sends it.
    fn request(self, id: usize, arguments: &str) -> String {
        let call = match self.flat() {
            true => format!(r#""name":"fixture:echo","arguments":{arguments}"#),
            false => format!(
                r#""name":"use_tool","arguments":{{"tool":{{"toolbox":"dev","server":"fixture","name":"echo"}},"arguments":{arguments}}}"#
            ),
        };
        let extra = match self {
            Way::StdioProgress | Way::HttpProgress => {
                format!(r#","_meta":{{"progressToken":{id}}}"#)
            }
            Way::StdioTask => r#","task":{"ttl":60000}"#.to_owned(),
            Way::StdioMcpMeta | Way::FlatMcpMeta => format!(r#","_meta":{{{CLIENT_INFO}}}"#),
            Way::StdioRounds | Way::HttpSessionless => format!(
                r#","_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28",{CLIENT_INFO},"io.modelcontextprotocol/clientCapabilities":{{"roots":{{}}}}}}"#
            ),
            Way::StdioPlain | Way::FlatPlain | Way::HttpPlain => String::new(),
        };
        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{{call}{extra}}}}}"#)
    }
}

/// What came of each call (its `case` is its place): the arguments the child received as it
/// read them, or the answer's text when the call was refused before the child.
type Outcomes = BTreeMap<usize, Result<String, String>>;

/// Each of `calls` (their arguments) made one way, of a toolshelf of its own.
async fn send_all(way: Way, calls: &[String]) -> Outcomes {
    let dir = tempfile::tempdir().expect("tempdir");
    let lines = dir.path().join("lines");
    let lines_arg = lines.to_str().expect("UTF-8 path");
    let config = config(&[(
        "dev",
        "Fixture",
        json!({ "fixture": fixture(&["--lines", lines_arg]) }),
    )]);
    let answers = match way {
        Way::HttpPlain | Way::HttpProgress | Way::HttpSessionless => {
            over_http(way, &config, calls).await
        }
        _ => over_stdio(way, &config, calls).await,
    };
    let received = received(&std::fs::read_to_string(&lines).unwrap_or_default());
    (0..calls.len())
        .map(|id| {
            let outcome = match received.get(&id) {
                Some(text) => Ok(text.clone()),
                None => Err(answers.get(&id).cloned().unwrap_or_default()),
            };
            (id, outcome)
        })
        .collect()
}

/// Answers the server's requests of a client that declared roots, sampling and elicitation.
const CAPABILITIES: &str = r#"{"roots":{"listChanged":true},"sampling":{},"elicitation":{}}"#;

async fn over_stdio(way: Way, config: &Value, calls: &[String]) -> BTreeMap<usize, String> {
    let capabilities = serde_json::from_str(CAPABILITIES).expect("JSON");
    let flat: &[&str] = if way.flat() { &["--flat"] } else { &[] };
    let mut raw = RawClient::start_declaring(config, "2025-11-25", flat, capabilities).await;
    if !way.flat() {
        raw.send_line(r#"{"jsonrpc":"2.0","id":"open","method":"tools/call","params":{"name":"open_toolbox","arguments":{"toolbox":"dev"}}}"#).await;
        answers_of(&mut raw, 1).await;
    }
    let mut answers = BTreeMap::new();
    for wave in (0..calls.len()).collect::<Vec<_>>().chunks(16) {
        for &id in wave {
            raw.send_line(&way.request(id, &calls[id])).await;
        }
        answers.extend(answers_of(&mut raw, wave.len()).await);
    }
    answers
}

/// The next `count` answers on `raw`, by id; the server's own requests are answered on the way.
async fn answers_of(raw: &mut RawClient, count: usize) -> BTreeMap<usize, String> {
    let mut answers = BTreeMap::new();
    let mut seen = 0;
    while seen < count {
        let line = raw.next_line().await;
        let message: Value = serde_json::from_str(&line).expect("JSON");
        match (message.get("method"), message.get("id")) {
            (Some(method), Some(id)) => {
                let result = match method.as_str() {
                    Some("roots/list") => json!({"roots": []}),
                    _ => json!({}),
                };
                let reply = json!({"jsonrpc": "2.0", "id": id, "result": result});
                raw.send_line(&reply.to_string()).await;
            }
            (Some(_), None) => {}
            (None, Some(id)) => {
                seen += 1;
                if let Some(id) = id.as_u64() {
                    answers.insert(id as usize, line);
                }
            }
            (None, None) => panic!("a message that is neither: {line}"),
        }
    }
    answers
}

async fn over_http(way: Way, config: &Value, calls: &[String]) -> BTreeMap<usize, String> {
    let (_dir, path) = write_config(config);
    let (_process, port) = serve_with(&path, "", &[]).await;
    let session = match way {
        Way::HttpSessionless => RawSession {
            url: format!("http://127.0.0.1:{port}/mcp"),
            id: String::new(),
            token: None,
        },
        _ => {
            let session = RawSession::open(port).await;
            let open = r#"{"jsonrpc":"2.0","id":"open","method":"tools/call","params":{"name":"open_toolbox","arguments":{"toolbox":"dev"}}}"#;
            assert_eq!(session.post_text(open.to_owned()).await.status, 200);
            session
        }
    };
    let mut answers = BTreeMap::new();
    for wave in (0..calls.len()).collect::<Vec<_>>().chunks(16) {
        let posts = wave.iter().map(|&id| {
            let request = way.request(id, &calls[id]);
            async {
                match way {
                    // 2026-07-28 names its revision on every request.
                    Way::HttpSessionless => sessionless(&session.url, request).await,
                    _ => session.post_text(request).await,
                }
            }
        });
        for (&id, answered) in wave.iter().zip(futures::future::join_all(posts).await) {
            answers.insert(id, format!("{} {}", answered.status, answered.body));
        }
    }
    answers
}

/// `body` posted without a session, as a 2026-07-28 client posts it.
async fn sessionless(url: &str, body: String) -> Answered {
    let response = crate::harness::http::http()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "use_tool")
        .body(body)
        .send()
        .await
        .expect("POST");
    let status = response.status().as_u16();
    Answered {
        status,
        content_type: String::new(),
        body: response.text().await.expect("a body"),
    }
}

/// The arguments of each `tools/call` the child read, by case, as it read them.
fn received(lines: &str) -> BTreeMap<usize, String> {
    #[derive(Deserialize)]
    struct Line<'a> {
        #[serde(borrow)]
        method: Option<&'a str>,
        #[serde(borrow)]
        params: Option<Params<'a>>,
    }
    #[derive(Deserialize)]
    struct Params<'a> {
        #[serde(borrow)]
        arguments: Option<&'a RawValue>,
    }
    #[derive(Deserialize)]
    struct Case {
        case: usize,
    }
    let mut received = BTreeMap::new();
    for line in lines.lines() {
        let line: Line<'_> = serde_json::from_str(line).expect("the child read JSON");
        if line.method != Some("tools/call") {
            continue;
        }
        let arguments = line.params.and_then(|params| params.arguments);
        let arguments = arguments.expect("a call with arguments").get();
        let case: Case = serde_json::from_str(arguments).expect("a case");
        assert!(
            received.insert(case.case, arguments.to_owned()).is_none(),
            "case {} reached the child twice",
            case.case
        );
    }
    received
}

/// Cases sent together, as the values of one call's array: readable ones, which reach the
/// child together or not at all.
const PACKED: usize = 32;

#[tokio::test]
async fn every_path_forwards_the_agents_arguments_byte_for_byte() {
    let cases = corpus();
    assert!(cases.len() > 2000, "{} cases", cases.len());
    // The first way takes each case alone, and so finds the ones refused.
    let alone: Vec<String> = (0..cases.len())
        .map(|id| arguments(id, &cases[id]))
        .collect();
    let first = send_all(Way::StdioPlain, &alone).await;
    let mut refused = Vec::new();
    for (&id, outcome) in &first {
        match outcome {
            Ok(received) => assert_eq!(received, &alone[id], "case {id} reached the child changed"),
            Err(answer) => {
                assert!(
                    answer.contains("arguments.value"),
                    "case {id} ({}) refused unexplained: {answer}",
                    cases[id]
                );
                refused.push(id);
            }
        }
    }
    let index = |case: &str| {
        cases
            .iter()
            .position(|known| known == case)
            .expect("a case")
    };
    for unreadable in [r#"1e400"#, r#""\ud800""#, r#"{"a":1,"a":2}"#] {
        assert!(refused.contains(&index(unreadable)), "{unreadable}");
    }
    for readable in &FIXED[3..] {
        assert!(!refused.contains(&index(readable)), "{readable}");
    }
    // Every other way: the refused cases alone, the rest packed.
    let readable: Vec<usize> = (0..cases.len())
        .filter(|id| !refused.contains(id))
        .collect();
    // Each call's case is its place among the calls.
    let mut calls: Vec<String> = (refused.iter().enumerate())
        .map(|(at, &id)| arguments(at, &cases[id]))
        .collect();
    for ids in readable.chunks(PACKED) {
        let values: Vec<&str> = ids.iter().map(|&id| cases[id].as_str()).collect();
        calls.push(arguments(calls.len(), &format!("[{}]", values.join(","))));
    }
    let ways = [
        Way::StdioProgress,
        Way::StdioTask,
        Way::StdioMcpMeta,
        Way::StdioRounds,
        Way::FlatPlain,
        Way::FlatMcpMeta,
        Way::HttpPlain,
        Way::HttpProgress,
        Way::HttpSessionless,
    ];
    let runs = futures::future::join_all(ways.map(|way| send_all(way, &calls))).await;
    for (way, outcomes) in ways.iter().zip(runs) {
        for (call, outcome) in outcomes {
            match (outcome, call < refused.len()) {
                (Ok(received), false) => assert_eq!(
                    received, calls[call],
                    "{way:?}: call {call} reached the child changed"
                ),
                (Ok(received), true) => panic!("{way:?} forwarded what stdio refused: {received}"),
                (Err(answer), true) => {
                    assert!(answer.contains("arguments.value"), "{way:?}: {answer}")
                }
                (Err(answer), false) => panic!("{way:?}: readable cases refused: {answer}"),
            }
        }
    }
}
