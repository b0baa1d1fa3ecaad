//! `open_toolbox {query}` as an agent uses it, over real restarts of toolshelf on one cache
//! folder: a search answers from the persisted catalog starting no child (counted by the
//! fixture and by toolshelf's child processes), a found tool is callable at once, a tool not
//! found keeps use_tool's "not open", and the catalog's changes (drift on the first start, a
//! `list_changed`) reach the next search.

use serde_json::{Value, json};

use crate::{
    harness::{Shelf, error_text, eventually, npm_server},
    persisted_catalog::{dev_config, opened, scene, serve, started},
};

/// The tools of a search answer, as `toolbox/server/name`.
fn found(answer: &Value) -> Vec<String> {
    answer["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|tool| {
            format!("{}/{}/{}", tool["toolbox"], tool["server"], tool["name"]).replace('"', "")
        })
        .collect()
}

async fn search(shelf: &Shelf, arguments: Value) -> Value {
    opened(&shelf.call("open_toolbox", arguments).await)
}

#[tokio::test]
async fn a_search_starts_nothing_finds_what_the_catalog_remembers_and_follows_its_changes() {
    let (_dir, cache, starts, extra) = scene("old_gadget\n");
    let mut config = dev_config(&starts, &extra, json!({"prestart": "firstCall"}), &[]);
    config["toolboxes"]["demo"] = json!({"mcpServers": {
        "everything": npm_server("mcp-server-everything", &["stdio"])
    }});
    config["toolboxes"]["later"] = json!({"mcpServers": {
        "fx2": {"command": crate::harness::fixture_bin()}
    }});

    // The first run lists dev and demo (so the catalog remembers them), never later.
    let (shelf, _log) = serve(&cache, &config, &[]).await;
    let result = shelf.call("open_toolbox", json!({"query": "echo"})).await;
    crate::docs::assert_quoted(&crate::harness::text(&result));
    assert_eq!(
        crate::harness::text(&result),
        "Not searched (their tools are not known yet): dev, demo, later.\nopen_toolbox {\"toolbox\":\"dev\"} lists the tools of a toolbox not searched, and later searches include them."
    );
    let none = opened(&result);
    assert_eq!(found(&none), Vec::<String>::new(), "{none}");
    assert_eq!(
        none["notSearched"],
        json!(["dev", "demo", "later"]),
        "{none}"
    );
    assert!(
        none["hint"].as_str().is_some_and(
            |hint| hint.starts_with(r#"open_toolbox {"toolbox":"dev"} lists the tools"#)
        ),
        "{none}"
    );
    assert!(shelf.children().is_empty(), "a search started a child");
    opened(&shelf.open("dev").await);
    opened(&shelf.open("demo").await);
    shelf.close().await;
    assert_eq!(started(&starts), 1);

    // The fixture will list another tool than the one remembered.
    std::fs::write(&extra, "new_widget\n").expect("write");
    let (shelf, _log) = serve(&cache, &config, &[]).await;
    let result = shelf
        .call(
            "open_toolbox",
            json!({"query": "add two numbers", "limit": 3}),
        )
        .await;
    let text = crate::harness::text(&result);
    let first_two: Vec<&str> = text.lines().take(2).collect();
    crate::docs::assert_quoted(&first_two.join("\n"));
    assert!(
        text.starts_with("Best first, as toolbox/server/name(arguments; ? optional): description\ndemo/everything/get-sum(a: number, b: number): Returns the sum of two numbers\n"),
        "{text}"
    );
    let answer = opened(&result);
    let tools = found(&answer);
    assert_eq!(tools.len(), 3, "{answer}");
    assert!(
        tools[..2].contains(&"demo/everything/get-sum".to_owned()),
        "the everything server's adder ranks high: {answer}"
    );
    assert_eq!(answer["notSearched"], json!(["later"]), "{answer}");
    let best = &answer["tools"][0];
    assert!(best["description"].is_string(), "{best}");
    assert!(
        answer["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|tool| tool["inputSchema"]["properties"].is_object()),
        "the schema to call it with: {answer}"
    );
    let gadget = search(&shelf, json!({"query": "old gadget", "toolbox": "dev"})).await;
    assert_eq!(found(&gadget)[0], "dev/fx/old_gadget", "{gadget}");
    assert!(
        found(&gadget).iter().all(|tool| tool.starts_with("dev/")),
        "one toolbox searched: {gadget}"
    );
    assert!(shelf.children().is_empty(), "a search started a child");
    assert_eq!(started(&starts), 1, "a search started the fixture");

    // A tool no search showed: its toolbox is still not open.
    let closed = shelf
        .use_tool("dev", "fx", "notify_list_changed", json!({}))
        .await;
    assert_eq!(
        error_text(&closed),
        "Error executing tool: Toolbox 'dev' is not open"
    );

    // A found tool is called at once: its toolbox opens, the fixture starts, and its live
    // list (which drifted from the remembered one) replaces it in the index.
    let echo = search(&shelf, json!({"query": "echo arguments", "toolbox": "dev"})).await;
    assert_eq!(found(&echo)[0], "dev/fx/echo", "{echo}");
    let called = shelf
        .use_tool("dev", "fx", "echo", json!({"said": "hi"}))
        .await;
    assert_ne!(called.is_error, Some(true), "{called:?}");
    assert_eq!(started(&starts), 2);
    let widget = search(&shelf, json!({"query": "new widget"})).await;
    assert_eq!(found(&widget)[0], "dev/fx/new_widget", "{widget}");
    // Gone from the index; by meaning, a gadget is still much like a widget.
    let gone = search(&shelf, json!({"query": "gadget"})).await;
    assert!(
        !found(&gone).contains(&"dev/fx/old_gadget".to_owned()),
        "{gone}"
    );

    // A list_changed reaches the index.
    std::fs::write(&extra, "grown_sprocket\n").expect("write");
    shelf
        .use_tool("dev", "fx", "notify_list_changed", json!({}))
        .await;
    eventually("a search finds the tool the list gained", || async {
        let answer = search(&shelf, json!({"query": "sprocket"})).await;
        (found(&answer).first().map(String::as_str) == Some("dev/fx/grown_sprocket")).then_some(())
    })
    .await;
    shelf.close().await;
}

#[tokio::test]
async fn a_search_request_is_checked_strictly() {
    let (_dir, cache, starts, extra) = scene("");
    let config = dev_config(&starts, &extra, json!({}), &[]);
    let (shelf, _log) = serve(&cache, &config, &[]).await;
    let cases = [
        (
            json!({}),
            r#"Invalid open_toolbox parameters: give "toolbox" to open a toolbox, or "query" to search the tools of every toolbox"#,
        ),
        (
            json!({"toolbox": "dev", "limit": 3}),
            r#"Invalid open_toolbox parameters: limit: only a search takes a limit; add "query", or leave "limit" out"#,
        ),
        (
            json!({"query": "?! -"}),
            r#"Invalid open_toolbox parameters: query: has no word to search for; say in words what you want to do, e.g. "read a file""#,
        ),
        (
            json!({"query": "echo", "limit": 0}),
            "Invalid open_toolbox parameters: limit: must be at least 1",
        ),
        (
            json!({"query": "echo", "toolbox": "dve"}),
            "Toolbox 'dve' does not exist\nDid you mean: dev?",
        ),
        (
            json!({"query": "echo", "top": 3}),
            "Invalid open_toolbox parameters: top: unknown key, allowed keys: toolbox, query, limit",
        ),
    ];
    for (input, expected) in cases {
        let answer = shelf.call("open_toolbox", input.clone()).await;
        assert_eq!(error_text(&answer), expected, "{input}");
    }
    assert!(shelf.children().is_empty());
    shelf.close().await;
    assert_eq!(started(&starts), 0);
}

/// Over `serve --http` each session searches the toolboxes it can reach, the shared children's
/// live lists included, and calls what it found.
#[tokio::test]
async fn a_session_over_http_searches_and_calls_what_it_found() {
    use crate::harness::http::{RawSession, fixture_session, use_tool_request};
    let (served, _events, _first) = fixture_session(60).await;
    let session = RawSession::open(served.port).await;
    let answer = session
        .post(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "open_toolbox", "arguments": {"query": "echo arguments", "limit": 1}}}))
        .await;
    assert!(
        answer.body.contains(r#"dev/fixture/echo("#),
        "{}",
        answer.body
    );
    let called = session
        .post(use_tool_request(3, "echo", json!({"via": "search"}), None))
        .await;
    assert!(
        called.body.contains(r#"{\"via\":\"search\"}"#) && !called.body.contains("isError\":true"),
        "{}",
        called.body
    );
}
