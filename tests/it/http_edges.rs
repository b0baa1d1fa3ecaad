//! `serve --http` at its edges, as a hostile or careless client meets them: arguments no child
//! can read, connections that stall or sit idle, the ends of sessions, and every limit of the
//! config's `http` section.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::harness::{
    DEADLINE, config, fixture,
    http::{
        RawSession, fixture_session, fixture_session_in, http, post_status, serve, use_tool_request,
    },
    python::agent,
    write_config,
};

#[tokio::test]
async fn arguments_a_child_cannot_read_are_refused_at_once_over_http() {
    let (_served, _events, session) = fixture_session(60).await;
    for (id, (arguments, text)) in crate::wire::unreadable_arguments().iter().enumerate() {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"use_tool","arguments":{{"tool":{{"toolbox":"dev","server":"fixture","name":"echo"}},"arguments":{arguments}}}}}}}"#
        );
        let response = RawSession::post_to(&session.url, Some(&session.id), &body).await;
        assert_eq!(response.status().as_u16(), 200);
        let answer: Value =
            serde_json::from_str(&response.text().await.expect("a body")).expect("JSON");
        crate::wire::assert_refused(&answer, json!(id), text);
    }
    // A request rmcp reads itself (here: from a browser's loopback origin) that holds what it
    // cannot read outside a call's arguments (which it gets as written) gets a JSON-RPC error
    // that says why and what the rules are, where rmcp answers 415 with serde's text.
    for (body, code, said) in [
        (
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"use_tool","_meta":{"n":1e400},"arguments":{"tool":{"toolbox":"dev","server":"fixture","name":"echo"},"arguments":{}}}}"#,
            -32700,
            "Parse error: the request holds JSON that MCP servers cannot read (number out of range",
        ),
        (
            r#"{"no":"message"}"#,
            -32600,
            "Invalid request: the body is not a JSON-RPC message of MCP",
        ),
    ] {
        let response = from_browser(&session, body.to_owned()).await;
        assert_eq!(response.status().as_u16(), 400);
        let answer: Value =
            serde_json::from_str(&response.text().await.expect("a body")).expect("JSON");
        assert_eq!(answer["error"]["code"], json!(code), "{answer}");
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(message.starts_with(said), "{message}");
        if code == -32700 {
            crate::docs::assert_quoted(said);
        }
    }
    // A call asking for progress (rmcp's path) is refused as a plain one is, and so is one from a
    // browser's origin: rmcp gets the arguments as written, and the call checks them.
    let body = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"_meta":{"progressToken":"p"},"name":"use_tool","arguments":{"tool":{"toolbox":"dev","server":"fixture","name":"echo"},"arguments":{"n":1e400}}}}"#;
    let response = RawSession::post_to(&session.url, Some(&session.id), body).await;
    assert_eq!(response.status().as_u16(), 200);
    let answer: Value =
        serde_json::from_str(&response.text().await.expect("a body")).expect("JSON");
    crate::wire::assert_refused(
        &answer,
        json!(7),
        "Invalid tool invocation parameters: arguments.n: number 1e400",
    );
    let plain = body.replace(r#""_meta":{"progressToken":"p"},"#, "");
    let said = from_browser(&session, plain.replace(":7,", ":9,")).await;
    let said = said.text().await.expect("a body");
    let data = said.lines().filter_map(|line| line.strip_prefix("data: "));
    let answer = data
        .filter_map(|data| serde_json::from_str::<Value>(data).ok())
        .next();
    crate::wire::assert_refused(
        &answer.unwrap_or_else(|| panic!("an answer: {said}")),
        json!(9),
        "Invalid tool invocation parameters: arguments.n: number 1e400",
    );
    let echoed = session
        .post(use_tool_request(
            8,
            "echo",
            json!({"message": "after"}),
            None,
        ))
        .await;
    assert!(
        echoed.body.contains(r#"{\"message\":\"after\"}"#),
        "{}",
        echoed.body
    );
}

/// `body` posted in `session` as a browser's page on a loopback origin posts it.
async fn from_browser(session: &RawSession, body: String) -> reqwest::Response {
    http()
        .post(&session.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("origin", "http://localhost:3000")
        .header("mcp-session-id", &session.id)
        .body(body)
        .send()
        .await
        .expect("POST")
}

/// Reads from `stream` until the server closes it; the bytes it sent.
async fn until_closed(stream: &mut tokio::net::TcpStream) -> Vec<u8> {
    let mut seen = Vec::new();
    tokio::time::timeout(DEADLINE, stream.read_to_end(&mut seen))
        .await
        .expect("the server closes the connection in time")
        .expect("read");
    seen
}

/// `toolshelf_http_connections_open` in `/metrics`.
async fn connections_open(port: u16) -> u64 {
    let text = http()
        .get(format!("http://127.0.0.1:{port}/metrics"))
        .send()
        .await
        .expect("GET /metrics")
        .text()
        .await
        .expect("a body");
    text.lines()
        .find_map(|line| line.strip_prefix("toolshelf_http_connections_open "))
        .and_then(|value| value.trim().parse().ok())
        .unwrap_or_else(|| panic!("no connection gauge in {text}"))
}

#[tokio::test]
async fn stalled_and_idle_connections_are_closed_while_others_are_served() {
    let (served, events, session) =
        fixture_session_in(json!({"headerReadTimeout": 0.5, "connectionIdleTimeout": 1.5})).await;
    let address = format!("127.0.0.1:{}", served.port);
    // A client that sends its headers a byte at a time, slower than the limit allows.
    let mut slow = tokio::net::TcpStream::connect(&address)
        .await
        .expect("connect");
    let slowloris = async {
        for byte in
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
        {
            if slow.write_all(&[*byte]).await.is_err() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    // One that connects and sends nothing, and one that keeps its connection after a request.
    let mut silent = tokio::net::TcpStream::connect(&address)
        .await
        .expect("connect");
    let mut kept = tokio::net::TcpStream::connect(&address)
        .await
        .expect("connect");
    kept.write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .await
        .expect("write");
    assert!(connections_open(served.port).await >= 4);
    // Meanwhile a call longer than the idle limit is answered on its connection, and ordinary
    // requests are served.
    let call = session.post(use_tool_request(2, "sleep", json!({"ms": 2000}), None));
    let health = async {
        crate::harness::wait_for_line(&events, "start sleep").await;
        let health = http()
            .get(format!("http://{address}/healthz"))
            .send()
            .await
            .expect("GET /healthz");
        assert_eq!(health.status().as_u16(), 200);
    };
    let (_, answered, ()) = tokio::join!(slowloris, call, health);
    assert_eq!(answered.status, 200, "{}", answered.body);
    assert!(answered.body.contains("slept"), "{}", answered.body);
    // The slow client was cut off before it finished its headers.
    let mut rest = Vec::new();
    let _ = tokio::time::timeout(DEADLINE, slow.read_to_end(&mut rest)).await;
    assert!(rest.is_empty(), "{}", String::from_utf8_lossy(&rest));
    let kept_saw = String::from_utf8(until_closed(&mut kept).await).expect("text");
    assert!(kept_saw.starts_with("HTTP/1.1 200 OK"), "{kept_saw}");
    assert!(until_closed(&mut silent).await.is_empty());
    // Closed connections are no longer counted (the scrape's own connection may still be).
    crate::harness::eventually("connections counted down", || async {
        (connections_open(served.port).await <= 2).then_some(())
    })
    .await;
}

#[tokio::test]
async fn a_session_s_end_is_204_and_an_unknown_one_404_and_the_sdk_closes_silently() {
    let (served, _events, _session) = fixture_session(60).await;
    let url = format!("http://127.0.0.1:{}/mcp", served.port);
    let seen = crate::harness::python::agent("session_end.py", &[&url]).await;
    assert_eq!(seen["opened"], json!(true), "{seen}");
    assert!(seen["session"].is_string(), "{seen}");
    assert_eq!(seen["warnings"], json!([]), "{seen}");
    let gone = json!([
        404,
        "Not Found: no session has this id (it ended already: DELETE, idle expiry or a restart of toolshelf); nothing to end\n"
    ]);
    assert_eq!(seen["again"], gone, "{seen}");
    assert_eq!(seen["unknown"], gone, "{seen}");
}

#[tokio::test]
async fn the_access_log_is_one_flag_away_and_holds_no_secret() {
    let (_config_dir, path) = crate::harness::write_config(&crate::harness::config(&[(
        "dev",
        "Fixture",
        json!({ "fixture": crate::harness::fixture(&[]) }),
    )]));
    let logs = tempfile::tempdir().expect("tempdir");
    let mut seen = Vec::new();
    for flags in [&["--access-log"][..], &[]] {
        let log_path = logs.path().join(format!("{}.log", flags.len()));
        let log = std::fs::File::create(&log_path).expect("log file");
        let (process, port) =
            crate::harness::http::serve_logged(&path, "s3cret-token", flags, log.into()).await;
        let session = RawSession::open_with(port, Some("s3cret-token")).await;
        let id = session.id.clone();
        session
            .post(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "open_toolbox", "arguments": {"toolbox": "dev"}}}))
            .await;
        let echoed = session
            .post(use_tool_request(
                2,
                "echo",
                json!({"message": "private words"}),
                None,
            ))
            .await;
        assert!(echoed.body.contains("private words"), "{}", echoed.body);
        let refused = http().post(&session.url).send().await.expect("POST");
        assert_eq!(refused.status().as_u16(), 401);
        drop(process);
        seen.push((std::fs::read_to_string(&log_path).expect("log"), id));
    }
    let (on, id) = &seen[0];
    let lines: Vec<&str> = on
        .lines()
        .filter(|line| line.contains("toolshelf_access"))
        .collect();
    assert!(lines.len() >= 5, "{on}");
    let call = lines
        .iter()
        .find(|line| line.contains("call=dev/fixture/echo"))
        .unwrap_or_else(|| panic!("no line of the call in {on}"));
    for field in [
        "method=POST",
        "path=/mcp",
        &format!("session={}", &id[..8]),
        "status=200",
        "micros=",
    ] {
        assert!(call.contains(field), "{field} missing in {call}");
    }
    assert!(lines.iter().any(|line| line.contains("status=401")), "{on}");
    // The sample line in docs/http.md has this line's fields, in this order.
    let sample: Vec<String> = call[call.find("method=").unwrap_or_default()..]
        .split_whitespace()
        .map(|field| match field.split_once('=') {
            Some(("session", _)) => "session=5b68c601".to_owned(),
            Some(("micros", _)) => "micros=2206".to_owned(),
            _ => field.to_owned(),
        })
        .collect();
    crate::docs::assert_quoted(&sample.join(" "));
    for secret in ["s3cret-token", "private words", id.as_str()] {
        assert!(!on.contains(secret), "{secret} in {on}");
    }
    let (off, _) = &seen[1];
    assert!(!off.contains("toolshelf_access"), "{off}");
}

#[tokio::test]
async fn a_refused_origin_or_host_is_told_which_flag_admits_it() {
    let (served, _events, _session) = fixture_session(60).await;
    let url = format!("http://127.0.0.1:{}/mcp", served.port);
    for (header, value, flag) in [
        ("origin", "http://evil.example", "--allowed-origin ORIGIN"),
        ("host", "evil.example", "--allowed-host HOST"),
    ] {
        let refused = http()
            .post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header(header, value)
            .body(String::from_utf8(crate::harness::http::initialize()).expect("utf-8"))
            .send()
            .await
            .expect("POST");
        assert_eq!(refused.status().as_u16(), 403);
        let said = refused.text().await.expect("a body");
        assert!(said.starts_with("Forbidden: toolshelf does not"), "{said}");
        assert!(said.contains(flag), "{said}");
        let (head, _) = said
            .split_once(':')
            .map(|(_, rest)| rest)
            .and_then(|rest| rest.split_once(':'))
            .unwrap_or_default();
        crate::docs::assert_quoted(&format!("Forbidden:{head}:"));
    }
}

#[tokio::test]
async fn limits_refuse_clearly_and_an_idle_session_expires_with_its_children() {
    let mut mine = fixture(&[]);
    mine["sharing"] = json!("session");
    let mut file = config(&[("dev", "Fixture", json!({ "mine": mine }))]);
    file["http"] = json!({
        "maxSessions": 1,
        "maxCallsPerSession": 1,
        "sessionIdleTimeout": 2,
        "maxBodyBytes": 4096
    });
    let (_dir, path) = write_config(&file);
    let token = "limits-t0ken";
    let (_process, port) = serve(&path, token).await;

    let url = format!("http://127.0.0.1:{port}/mcp");
    let seen = agent("http_limits.py", &[&url, token]).await;
    let refused = seen["b_refused"].as_str().unwrap_or_default();
    assert!(
        refused.contains(
            "toolshelf holds as many agent sessions as it may (1, http.maxSessions in the config)"
        ),
        "{seen}"
    );
    let refused = seen["second_call_refused"].as_str().unwrap_or_default();
    assert!(
        refused.contains("this session has as many use_tool calls in flight as toolshelf runs at once (1, http.maxCallsPerSession in the config)"),
        "{seen}"
    );
    assert_eq!(
        seen["after_limit"],
        json!(r#"{"said":"one at a time"}"#),
        "{seen}"
    );
    // The session expired after 2 s without a request; its own child stopped within 10 s of that.
    let stopped = seen["child_stopped_after_s"].as_f64().expect("stopped");
    assert!(stopped < 12.0, "{seen}");
    // The expired session no longer counts: a new agent gets in.
    assert_eq!(seen["c_refused"], Value::Null, "{seen}");
    assert_eq!(seen["c_opened"], json!(true), "{seen}");
    assert_eq!(
        seen["c_after_crash"],
        json!(r#"{"said":"again"}"#),
        "{seen}"
    );
    let scraped = agent(
        "metrics_scrape.py",
        &[&format!("http://127.0.0.1:{port}/metrics"), token],
    )
    .await;
    let crashed = scraped["samples"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|sample| {
            sample[0] == "toolshelf_children_crashed_total"
                && sample[1] == json!({"toolbox": "dev", "server": "mine"})
        });
    assert_eq!(
        crashed.and_then(|sample| sample[2].as_f64()),
        Some(1.0),
        "{scraped}"
    );

    let bearer = format!("Bearer {token}");
    assert_eq!(
        post_status(port, &[("authorization", &bearer)], vec![b' '; 8192]).await,
        413,
        "a body over http.maxBodyBytes"
    );
}
