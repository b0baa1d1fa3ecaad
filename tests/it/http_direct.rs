//! A session's `use_tool` calls over `serve --http` answered on toolshelf's direct path, past
//! rmcp: as rmcp would answer them, kept alive by calls, resumed after a dropped stream.

use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::{
    DEADLINE,
    http::{RawSession, fixture_session, http, use_tool_request},
};

#[tokio::test]
async fn a_sessions_use_tool_calls_are_answered_past_rmcp_as_rmcp_would() {
    let (served, events, session) = fixture_session(1).await;
    let echo = |id: u64, message: &str| {
        session.post(use_tool_request(
            id,
            "echo",
            json!({"message": message}),
            None,
        ))
    };

    // A plain call: answered with a JSON body holding the child's result as it wrote it.
    let echoed = echo(2, "hi").await;
    assert_eq!(
        (echoed.status, echoed.content_type.as_str()),
        (200, "application/json")
    );
    let answer: Value = serde_json::from_str(&echoed.body).expect("JSON");
    assert_eq!(answer["id"], json!(2), "{answer}");
    assert_eq!(
        answer["result"]["content"][0]["text"],
        json!(r#"{"message":"hi"}"#),
        "{answer}"
    );

    // A call that asks for progress needs a stream: rmcp's path, progress before the answer.
    let progressed = session
        .post(use_tool_request(
            3,
            "progress",
            json!({"steps": 2}),
            Some(json!({"progressToken": "p"})),
        ))
        .await;
    assert_eq!(progressed.content_type, "text/event-stream");
    assert_eq!(
        progressed.body.matches("notifications/progress").count(),
        2,
        "{}",
        progressed.body
    );
    assert!(
        progressed.body.contains("sent 2 progress notifications"),
        "{}",
        progressed.body
    );

    // An id in flight is refused; a cancelled call ends its stream without an answer.
    let slow = tokio::spawn({
        let session = RawSession {
            url: session.url.clone(),
            id: session.id.clone(),
            token: None,
        };
        async move {
            session
                .post(use_tool_request(7, "sleep", json!({"ms": 30_000}), None))
                .await
        }
    });
    crate::harness::wait_for_line(&events, "start sleep").await;
    let twice = echo(7, "again").await;
    assert!(
        twice
            .body
            .contains("request id '7' is already in use by a call in flight"),
        "{}",
        twice.body
    );
    let cancelled = session
        .post(
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 7, "reason": "enough"}}),
        )
        .await;
    assert_eq!(cancelled.status, 202);
    let slow = tokio::time::timeout(DEADLINE, slow)
        .await
        .expect("the cancelled call's request ends")
        .expect("joined");
    assert_eq!(
        (slow.status, slow.content_type.as_str(), slow.body.as_str()),
        (200, "text/event-stream", "")
    );
    crate::harness::wait_for_line(&events, "cancelled sleep").await;

    // Direct calls keep the session alive for twice its idle expiry (1 s) ...
    let began = std::time::Instant::now();
    let mut id = 10;
    while began.elapsed() < Duration::from_secs(2) {
        let echoed = echo(id, "still here").await;
        assert_eq!(echoed.status, 200, "call {id}: {}", echoed.body);
        id += 1;
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    // ... and a session left alone still expires: rmcp's 404 for it. (Any request to a live
    // session keeps it alive, so the wait watches /metrics, which touches no session.)
    let metrics = format!("http://127.0.0.1:{}/metrics", served.port);
    crate::harness::eventually("the idle session expires", || async {
        let text = http().get(&metrics).send().await.ok()?.text().await.ok()?;
        text.lines()
            .any(|line| line == "toolshelf_sessions_open 0")
            .then_some(())
    })
    .await;
    let gone = echo(id, "late").await;
    assert_eq!(gone.status, 404, "{}", gone.body);
}

/// A session's streams are toolshelf's own (`session_streams`): a call whose POST stream was
/// dropped is resumed with `Last-Event-ID` and its answer arrives there; a call in flight keeps
/// its session past `sessionIdleTimeout`; an answer read is not replayed again.
#[tokio::test]
async fn a_direct_call_keeps_its_session_after_its_client_went_away() {
    let (_served, events, session) = fixture_session(1).await;

    // A plain call (no progress: the direct path) longer than the idle timeout; its client
    // goes away once the child has started it.
    let call = use_tool_request(2, "sleep", json!({"ms": 2_500}), None).to_string();
    let (url, id) = (session.url.clone(), session.id.clone());
    let abandoned = tokio::spawn(async move { RawSession::post_to(&url, Some(&id), &call).await });
    crate::harness::wait_for_line(&events, "start sleep").await;
    abandoned.abort();

    // Past the idle timeout, while the call still runs, the session is there.
    tokio::time::sleep(Duration::from_millis(1_800)).await;
    let ping = session
        .post(json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}))
        .await;
    assert_eq!(ping.status, 200, "{}", ping.body);
}

#[tokio::test]
async fn a_dropped_calls_stream_resumes_and_a_call_in_flight_keeps_its_session() {
    let (_served, events, session) = fixture_session(1).await;

    // A call longer than the idle timeout, on an event stream (it asks for progress); the
    // client reads the priming event and goes away.
    let call = use_tool_request(
        2,
        "sleep",
        json!({"ms": 2_500}),
        Some(json!({"progressToken": "t"})),
    );
    let mut response =
        RawSession::post_to(&session.url, Some(&session.id), &call.to_string()).await;
    let first = tokio::time::timeout(DEADLINE, response.chunk())
        .await
        .expect("the priming event in time")
        .expect("a chunk")
        .expect("not the end");
    let first = String::from_utf8_lossy(&first).into_owned();
    let last_event = first
        .lines()
        .find_map(|line| line.strip_prefix("id: ").or(line.strip_prefix("id:")))
        .expect("the priming event has an id")
        .trim()
        .to_owned();
    assert!(last_event.starts_with("0/"), "{first}");
    drop(response);
    crate::harness::wait_for_line(&events, "start sleep").await;

    // Past the idle timeout, the call in flight has kept the session: the resumed stream
    // carries the answer, then ends.
    let resume = || {
        http()
            .get(&session.url)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", &session.id)
            .header("last-event-id", &last_event)
            .send()
    };
    let resumed = tokio::time::timeout(DEADLINE, async {
        resume().await.expect("GET").text().await.expect("a body")
    })
    .await
    .expect("the resumed stream ends");
    let answer = resumed
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
        .find(|message| message["id"] == json!(2))
        .unwrap_or_else(|| panic!("the call's answer on the resumed stream: {resumed}"));
    assert_eq!(
        answer["result"]["content"][0]["text"],
        json!("slept 2500 ms"),
        "{answer}"
    );

    // Read once, not again: the stream is gone.
    let again = resume().await.expect("GET").text().await.expect("a body");
    assert!(!again.contains("\"id\":2"), "{again}");
}
