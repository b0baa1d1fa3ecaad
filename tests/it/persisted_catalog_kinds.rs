//! The persisted catalog for each kind of client: flat mode lists remembered tools and starts a
//! server on its first call; a list is kept per kind of client, and drift is only within one.

use std::{path::Path, process::Stdio};

use serde_json::json;

use crate::harness::{eventually, npm_server, text, toolshelf, write_config};
use crate::persisted_catalog::{catalog_files, check, dev_config, scene, started, tool_names};

#[tokio::test]
async fn flat_mode_lists_remembered_tools_and_starts_a_server_on_its_first_call() {
    let (_dir, cache, starts, extra) = scene("old_tool\n");
    let config = dev_config(&starts, &extra, json!({}), &[]);
    let (_config_dir, path) = write_config(&config);
    let flat = |cache: &Path| {
        let mut command = toolshelf();
        command
            .args(["serve", "--flat", "--config"])
            .arg(&path)
            .env("XDG_CACHE_HOME", cache);
        crate::harness::serve_command(command, Stdio::null())
    };
    let first = flat(&cache).await;
    assert!(first.names().await.contains(&"fx:old_tool".to_owned()));
    assert_eq!(started(&starts), 1);
    drop(first);

    std::fs::write(&extra, "new_tool\n").expect("write");
    let second = flat(&cache).await;
    let names = second.names().await;
    assert!(
        names.contains(&"fx:old_tool".to_owned()),
        "the remembered list: {names:?}"
    );
    assert_eq!(started(&starts), 1, "tools/list started nothing");
    let echoed = second
        .try_call("fx:echo", json!({"message": "flat"}))
        .await
        .expect("a result");
    assert!(text(&echoed).contains("flat"));
    assert_eq!(started(&starts), 2);
    eventually("tools/list_changed", || async {
        (second.changes.load(std::sync::atomic::Ordering::SeqCst) > 0).then_some(())
    })
    .await;
    let names = second.names().await;
    assert!(
        names.contains(&"fx:new_tool".to_owned()) && !names.contains(&"fx:old_tool".to_owned()),
        "{names:?}"
    );
}

/// server-everything lists more tools to a client that offers sampling and elicitation: such an
/// agent is answered from the list `check` (which offers neither) kept, marked as a list of a
/// client that offered less, until its own kind's list is kept; and it is told of no change
/// that only its capabilities explain.
#[tokio::test]
async fn a_list_is_kept_per_kind_of_client_and_drift_is_only_within_one_kind() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cache = dir.path().join("cache");
    let config = crate::harness::config(&[(
        "demo",
        "Demo",
        json!({ "everything": npm_server("mcp-server-everything", &[]) }),
    )]);
    let (_config_dir, path) = write_config(&config);
    check(&cache, &path);
    assert_eq!(catalog_files(&cache).len(), 1);

    let capable = || async {
        let mut command = toolshelf();
        command
            .args(["serve", "--config"])
            .arg(&path)
            .env("XDG_CACHE_HOME", &cache)
            .env("RUST_LOG", "warn");
        crate::harness::RawClient::spawn_declaring(
            command,
            None,
            "2025-11-25",
            Stdio::null(),
            json!({"sampling": {}, "elicitation": {}}),
        )
        .await
    };
    let mut agent = capable().await;
    let first = agent.open(1, "demo").await;
    let first = first["result"]["structuredContent"]["servers"][0].clone();
    assert_eq!(
        first["catalog"], "cached-fewer-offers",
        "no list of this kind yet, so the nearest: {first}"
    );
    // The server starts behind the answer; its live list then replaces the nearest one.
    let deadline = std::time::Instant::now() + crate::harness::DEADLINE;
    let mut id = 2;
    let live = loop {
        let opened = agent.open(id, "demo").await;
        let server = opened["result"]["structuredContent"]["servers"][0].clone();
        assert!(server.get("changes").is_none(), "no drift: {server}");
        if server["catalog"] == "live" {
            break server;
        }
        assert!(std::time::Instant::now() < deadline, "never live: {server}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        id += 1;
    };
    let (nearest, own) = (tool_names(&first), tool_names(&live));
    assert!(
        own.len() > nearest.len() && nearest.iter().all(|tool| own.contains(tool)),
        "this kind's list holds the nearest one's and more: {nearest:?} {own:?}"
    );
    // Gone, not killed: a kill may land while the catalog is written (its temporary file left).
    agent.end().await;
    let files = catalog_files(&cache);
    assert_eq!(files.len(), 2, "one list per kind of client: {files:?}");
    assert!(
        files
            .iter()
            .any(|file| file.to_string_lossy().ends_with("-es.json")),
        "{files:?}"
    );

    // The next agent of that kind is answered from its kind's list, as the server gave it.
    let mut next = capable().await;
    let remembered = next.open(1, "demo").await;
    let remembered = &remembered["result"]["structuredContent"]["servers"][0];
    assert_eq!(remembered["catalog"], "cached", "{remembered}");
    assert_eq!(tool_names(remembered), own);
}
