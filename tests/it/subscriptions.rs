//! 2026-07-28's `subscriptions/listen`, with the Python `mcp` SDK's `Client.listen()`: the
//! stream is acknowledged with what toolshelf serves, and a child's resource updates reach it.

use serde_json::json;

use crate::harness::{config, npm_server, write_config};

#[tokio::test]
async fn a_listen_stream_gets_the_updates_of_a_childs_resource() {
    let (_dir, path) = write_config(&config(&[(
        "demo",
        "Demo",
        json!({ "everything": npm_server("mcp-server-everything", &["stdio"]) }),
    )]));
    let args = crate::harness::python::toolshelf_serve(&["--flat"], &path);
    let seen = crate::harness::python::python_client("listen_client.py", args).await;
    assert_eq!(seen["protocol"], json!("2026-07-28"), "{seen}");
    let first = &seen["first_uri"];
    assert_eq!(
        seen["honored"],
        json!({"resource_subscriptions": [first], "resources_list_changed": true, "tools_list_changed": true}),
        "{seen}"
    );
    assert_eq!(&seen["updated"], first, "{seen}");
}
