//! Children's prompts, resources, templates, completions and subscriptions, passed on in flat
//! mode and in toolbox mode (server-everything as the child).
#![allow(
    deprecated,
    reason = "resources/subscribe is legacy-only in rmcp, and the revisions before 2026-07-28 have it"
)]

use std::{process::Stdio, sync::atomic::Ordering};

use rmcp::model::{
    ArgumentInfo, CompleteRequestParams, GetPromptRequestParams, ReadResourceRequestParams,
    Reference, SubscribeRequestParams, UnsubscribeRequestParams,
};
use serde_json::{Value, json};

use crate::harness::{Shelf, config, eventually, write_config};

/// `toolshelf serve ARGS` with server-everything as server `everything` of toolbox `demo`, its
/// entry with the keys of `more`.
async fn everything_shelf(args: &[&str], more: Value) -> (Shelf, tempfile::TempDir) {
    let mut server = crate::harness::npm_server("mcp-server-everything", &["stdio"]);
    if let (Some(server), Value::Object(more)) = (server.as_object_mut(), more) {
        server.extend(more);
    }
    let config = config(&[(
        "demo",
        "The MCP reference server",
        json!({ "everything": server }),
    )]);
    let (dir, path) = write_config(&config);
    let mut process = crate::harness::toolshelf();
    process.args(["serve", "--config"]).arg(&path).args(args);
    let flat = crate::harness::serve_command(process, Stdio::null()).await;
    (flat, dir)
}

#[tokio::test]
async fn prompts_and_resources_of_children_in_flat_mode() {
    let (flat, _dir) = everything_shelf(&["--flat"], json!({})).await;
    let client = &flat.client;

    // Prompts, named as tools are.
    let prompts = client.list_all_prompts().await.expect("prompts/list");
    let names: Vec<&str> = prompts.iter().map(|prompt| prompt.name.as_str()).collect();
    assert!(names.contains(&"everything:args-prompt"), "{names:?}");
    assert!(
        names.iter().all(|name| name.starts_with("everything:")),
        "{names:?}"
    );
    let mut arguments = serde_json::Map::new();
    arguments.insert("city".into(), json!("Paris"));
    let got = client
        .get_prompt(GetPromptRequestParams::new("everything:args-prompt").with_arguments(arguments))
        .await
        .expect("prompts/get");
    assert!(
        serde_json::to_string(&got.messages)
            .unwrap_or_default()
            .contains("Paris")
    );
    // A server that is not served: toolshelf's error, with the closest name (a prompt the
    // server does not have is the server's to answer).
    let missing = client
        .get_prompt(GetPromptRequestParams::new("evrything:args-prompt"))
        .await
        .expect_err("no such prompt");
    assert!(
        missing.to_string().contains(
            "Prompt not found: evrything:args-prompt\nDid you mean: everything:args-prompt?"
        ),
        "{missing}"
    );

    // Resources and templates as the server wrote them; reads reach it.
    let resources = client.list_all_resources().await.expect("resources/list");
    let first = resources.first().expect("a resource").uri.clone();
    let read = client
        .read_resource(ReadResourceRequestParams::new(first.clone()))
        .await
        .expect("resources/read");
    assert!(
        serde_json::to_string(&read)
            .unwrap_or_default()
            .contains(&first)
    );
    let templates = client
        .list_all_resource_templates()
        .await
        .expect("resources/templates/list");
    assert!(
        templates
            .iter()
            .any(|template| template.uri_template == "demo://resource/dynamic/text/{resourceId}")
    );
    // A URI nobody listed reaches the server whose template it matches.
    let dynamic = client
        .read_resource(ReadResourceRequestParams::new(
            "demo://resource/dynamic/text/3",
        ))
        .await
        .expect("a templated read");
    assert!(
        serde_json::to_string(&dynamic)
            .unwrap_or_default()
            .contains("dynamic/text/3")
    );
    let nowhere = client
        .read_resource(ReadResourceRequestParams::new("nowhere://x"))
        .await
        .expect_err("no server has it");
    assert!(
        nowhere
            .to_string()
            .contains("Resource not found: nowhere://x"),
        "{nowhere}"
    );

    // Completions of a prompt's argument reach the server, under its own prompt name.
    let mut completion = CompleteRequestParams::new(
        Reference::for_prompt("everything:completable-prompt"),
        ArgumentInfo::new("department", "Eng"),
    );
    completion.context = None;
    let completed = client
        .complete(completion)
        .await
        .expect("completion/complete");
    assert!(
        completed
            .completion
            .values
            .iter()
            .any(|value| value == "Engineering"),
        "{completed:?}"
    );

    // A subscription: the server's updates of the resource reach the agent.
    client
        .subscribe(SubscribeRequestParams::new(first.clone()))
        .await
        .expect("resources/subscribe");
    flat.try_call("everything:toggle-subscriber-updates", json!({}))
        .await
        .expect("a result");
    eventually("an update of the subscribed resource", || async {
        (flat.updates.load(Ordering::SeqCst) > 0).then_some(())
    })
    .await;
    client
        .unsubscribe(UnsubscribeRequestParams::new(first))
        .await
        .expect("resources/unsubscribe");
}

#[tokio::test]
async fn prompts_and_resources_of_open_toolboxes_in_toolbox_mode() {
    let overrides = json!({
        "tags": ["demo"],
        "prompts": {
            "simple-prompt": { "alias": "hello", "description": "Says hello", "tags": ["greeting"] },
            "resource-prompt": { "hidden": true },
        },
    });
    let (shelf, _dir) = everything_shelf(&[], overrides).await;
    let client = &shelf.client;
    // Nothing is open: nothing is offered.
    assert!(
        client
            .list_all_prompts()
            .await
            .expect("prompts/list")
            .is_empty()
    );
    assert!(
        client
            .list_all_resources()
            .await
            .expect("resources/list")
            .is_empty()
    );
    let opened = shelf
        .try_call("open_toolbox", json!({"toolbox": "demo"}))
        .await
        .expect("open_toolbox");
    assert_ne!(opened.is_error, Some(true));
    let prompts = client.list_all_prompts().await.expect("prompts/list");
    // The config's overrides: an alias, a description, tags, a hidden prompt.
    let names: Vec<&str> = prompts.iter().map(|prompt| prompt.name.as_str()).collect();
    assert!(!names.contains(&"everything:simple-prompt"), "{names:?}");
    assert!(!names.contains(&"everything:resource-prompt"), "{names:?}");
    let hello = prompts
        .iter()
        .find(|prompt| prompt.name == "everything:hello")
        .expect("the alias is listed");
    assert_eq!(hello.description.as_deref(), Some("Says hello"));
    assert_eq!(
        hello
            .meta
            .as_ref()
            .and_then(|meta| meta.get("toolshelf/tags")),
        Some(&json!(["demo", "greeting"]))
    );
    // The alias and the server's own name both reach the prompt; a hidden one is not there.
    for name in ["everything:hello", "everything:simple-prompt"] {
        let got = client
            .get_prompt(GetPromptRequestParams::new(name))
            .await
            .expect("prompts/get");
        assert!(!got.messages.is_empty(), "{name}");
    }
    let hidden = client
        .get_prompt(GetPromptRequestParams::new("everything:resource-prompt"))
        .await
        .expect_err("hidden");
    assert!(
        hidden
            .to_string()
            .contains("Prompt not found: everything:resource-prompt"),
        "{hidden}"
    );
    let resources = client.list_all_resources().await.expect("resources/list");
    assert_eq!(resources.len(), 7, "{resources:?}");
    // A subscription: the updates of the resource reach the agent here too.
    let first = resources.first().expect("a resource").uri.clone();
    client
        .subscribe(SubscribeRequestParams::new(first))
        .await
        .expect("resources/subscribe");
    let toggled = shelf
        .try_call(
            "use_tool",
            json!({"tool": {"toolbox": "demo", "server": "everything", "name": "toggle-subscriber-updates"}}),
        )
        .await
        .expect("use_tool");
    assert_ne!(toggled.is_error, Some(true));
    eventually("an update of the subscribed resource", || async {
        (shelf.updates.load(Ordering::SeqCst) > 0).then_some(())
    })
    .await;
    // Toolbox mode still has exactly two tools.
    assert_eq!(shelf.names().await, ["open_toolbox", "use_tool"]);
}
