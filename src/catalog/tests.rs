use std::sync::Arc;

use serde_json::json;

use super::*;

fn catalog(server: serde_json::Value) -> ServerCatalog {
    let config = json!({"toolboxes": {"t": {"mcpServers": {"s": server}}}});
    let config = crate::config::parse(&config.to_string(), std::path::Path::new("."), &|_| None)
        .unwrap_or_else(|problems| panic!("{problems:?}"));
    ServerCatalog::new("t", &config.toolboxes["t"].servers[0], None)
}

fn listed(tools: Vec<Tool>) -> Vec<ListedTool> {
    tools.into_iter().map(ListedTool::from).collect()
}

fn tool(name: &str, description: &str) -> Tool {
    Tool::new(
        name.to_owned(),
        description.to_owned(),
        Arc::new(Default::default()),
    )
}

#[test]
fn overrides_apply_and_tags_merge_in_order_without_repeats() {
    let catalog = catalog(json!({
        "command": "x",
        "tags": ["git", "vcs"],
        "tools": {
            "git_status": {"alias": "status", "title": "Status", "description": "Mine", "tags": ["read-only", "git"]},
            "git_push": {"hidden": true},
            "git_nope": {"alias": "nope"}
        }
    }));
    catalog.replace(
        listed(vec![
            tool("git_status", "Theirs"),
            tool("git_push", "p"),
            tool("git_log", "l"),
        ]),
        &ListIdentity::default(),
    );
    let tools = catalog.tools();
    assert_eq!(tools.len(), 2);
    assert_eq!(tools[0].alias.as_deref(), Some("status"));
    assert_eq!(tools[0].title.as_deref(), Some("Status"));
    assert_eq!(tools[0].description.as_deref(), Some("Mine"));
    assert_eq!(tools[0].tags, ["git", "vcs", "read-only"]);
    assert_eq!(tools[1].description.as_deref(), Some("l"));
    assert_eq!(tools[1].tags, ["git", "vcs"]);
    assert_eq!(catalog.resolve("status").as_deref(), Some("git_status"));
    assert!(
        catalog.resolve("git_push").is_none(),
        "hidden tools are not callable"
    );
    assert_eq!(catalog.names(), ["git_status", "git_log", "status"]);
    assert_eq!(
        catalog.warnings(),
        [
            "toolboxes.t.mcpServers.s.tools.git_nope: the server has no tool 'git_nope'; fix the tool name or remove the override"
        ]
    );
}

#[test]
fn changes_name_added_removed_and_changed_tools() {
    let before = catalog(json!({"command": "x"}));
    before.replace(
        listed(vec![tool("a", "1"), tool("b", "1"), tool("c", "1")]),
        &ListIdentity::default(),
    );
    let after = catalog(json!({"command": "x"}));
    after.replace(
        listed(vec![tool("a", "1"), tool("b", "2"), tool("d", "1")]),
        &ListIdentity::default(),
    );
    let found = changes(&before.tools(), &after.tools()).expect("changes");
    assert_eq!(found.added, ["d"]);
    assert_eq!(found.removed, ["c"]);
    assert_eq!(found.changed, ["b"]);
    assert!(changes(&before.tools(), &before.tools()).is_none());
    assert!(before.changes_since_shown().is_none(), "never shown before");
    before.replace(listed(vec![tool("a", "1")]), &ListIdentity::default());
    let since = before.changes_since_shown().expect("changed since shown");
    assert_eq!(since.removed, ["b", "c"]);
    assert!(before.changes_since_shown().is_none(), "told once");
}

#[test]
fn an_alias_equal_to_another_tools_name_conflicts() {
    let git = catalog(json!({"command": "x", "tools": {"git_status": {"alias": "log"}}}));
    git.replace(
        listed(vec![tool("git_status", ""), tool("git_log", "")]),
        &ListIdentity::default(),
    );
    let other = catalog(json!({"command": "x"}));
    other.replace(listed(vec![tool("log", "")]), &ListIdentity::default());
    let conflicts = alias_conflicts(&[("git", &git), ("other", &other)]);
    assert_eq!(conflicts.len(), 1);
    assert!(conflicts[0].starts_with("alias 'log' of tool 'git_status' (server 'git') is also the name of tool 'log' of server 'other'"));
    // An alias equal to its own tool's name is no conflict.
    let own = catalog(json!({"command": "x", "tools": {"log": {"alias": "log"}}}));
    own.replace(listed(vec![tool("log", "")]), &ListIdentity::default());
    assert!(alias_conflicts(&[("own", &own)]).is_empty());
}
