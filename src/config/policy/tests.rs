use serde_json::json;

use super::*;
use crate::config::Config;

fn parse(value: serde_json::Value) -> Result<Config, Vec<Violation>> {
    super::super::parse(&value.to_string(), std::path::Path::new("."), &|_| None)
}

fn server(extra: serde_json::Value) -> serde_json::Value {
    let mut server = json!({"command": "true"});
    for (key, value) in extra.as_object().into_iter().flatten() {
        server[key] = value.clone();
    }
    server
}

fn as_caller(config: &Config, caller: &str) -> Config {
    config.for_caller(Identity {
        caller: Some(caller),
        ..Identity::default()
    })
}

#[test]
fn a_config_without_rules_has_no_policy_and_shows_everything() {
    let config = parse(json!({"toolboxes": {"a": {"mcpServers": {"s": server(json!({}))}}}}))
        .expect("valid");
    assert!(config.policy.is_none());
    assert_eq!(as_caller(&config, "anyone").toolboxes.len(), 1);
}

#[test]
fn each_level_narrows_the_one_above() {
    let config = parse(json!({
        "access": {"callers": ["alice", "bob"]},
        "toolboxes": {
            "open": {"mcpServers": {
                "fs": server(json!({"tools": {"write": {"access": {"callers": ["alice"]}}}})),
                "admin": server(json!({"access": {"callers": ["alice"]}}))
            }},
            "ops": {"access": {"callers": ["bob"]}, "mcpServers": {"k": server(json!({}))}},
            "closed": {"access": {"callers": []}, "mcpServers": {"x": server(json!({}))}}
        }
    }))
    .expect("valid");
    let alice = as_caller(&config, "alice");
    assert_eq!(alice.toolboxes.keys().collect::<Vec<_>>(), ["open"]);
    assert_eq!(alice.toolboxes["open"].servers.len(), 2);
    assert!(alice.withheld.covers("ops", None, None));
    assert!(!alice.withheld.covers("open", Some("fs"), Some("write")));

    let bob = as_caller(&config, "bob");
    assert_eq!(bob.toolboxes.keys().collect::<Vec<_>>(), ["open", "ops"]);
    let servers: Vec<&str> = bob.toolboxes["open"]
        .servers
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(servers, ["fs"]);
    assert!(bob.withheld.covers("open", Some("admin"), None));
    assert!(bob.withheld.covers("open", Some("fs"), Some("write")));
    assert!(!bob.withheld.covers("open", Some("fs"), Some("read")));
    assert_eq!(
        bob.withheld.tools("open", "fs").map(|tools| tools.len()),
        Some(1)
    );

    let stranger = as_caller(&config, "carol");
    assert!(stranger.toolboxes.is_empty());
    let nobody = config.for_caller(Identity::default());
    assert!(nobody.toolboxes.is_empty());
    assert_eq!(
        config.policy.as_ref().map(|p| p.callers()),
        Some(vec!["alice", "bob"])
    );
}

#[test]
fn a_rule_that_could_never_apply_is_an_error() {
    let problems = parse(json!({
        "toolboxes": {
            "a": {"access": {"callers": ["alice"]}, "mcpServers": {
                "s": server(json!({
                    "access": {"callers": ["alice", "bob"]},
                    "tools": {"t": {"access": {"callers": ["carol"]}}},
                    "prompts": {"p": {"access": {"callers": ["alice"]}}}
                }))
            }},
            "b": {"mcpServers": {"s": server(json!({"access": {"callers": ["alice"]}}))}}
        }
    }))
    .expect_err("unreachable rules");
    let texts: Vec<String> = problems.iter().map(ToString::to_string).collect();
    assert_eq!(
        texts,
        [
            "toolboxes.a.mcpServers.s.access.callers[1]: caller 'bob' can never use this, since toolboxes.a.access admits only alice: add 'bob' to toolboxes.a.access, or remove it here",
            "toolboxes.a.mcpServers.s.prompts.p.access: a prompt follows its server's access: remove this, or give the server an access rule",
            "toolboxes.a.mcpServers.s.tools.t.access.callers[0]: caller 'carol' can never use this, since toolboxes.a.access admits only alice: add 'carol' to toolboxes.a.access, or remove it here",
            "toolboxes.b.mcpServers.s.access.callers[0]: caller 'alice' can never use this, since no toolboxes.b.access rule admits anyone to this toolbox: add 'alice' to toolboxes.b.access, or remove it here",
        ]
    );
}

#[test]
fn an_access_rule_is_checked_strictly() {
    let problems = parse(json!({
        "access": {"callers": ["ok"], "roles": ["x"], "scopes": ["two words"]},
        "toolboxes": {"a": {"access": {"callers": ["no spaces"], "groups": ["bell\u{7}"], "subjects": [""]}, "mcpServers": {"s": server(json!({}))}}}
    }))
    .expect_err("bad rules");
    let texts: Vec<String> = problems.iter().map(ToString::to_string).collect();
    assert!(texts.contains(&"access.scopes[0]: invalid scope 'two words': a scope is printable ASCII without spaces, '\"' or '\\' (one scope per item)".to_owned()), "{texts:?}");
    let paths: Vec<&str> = problems.iter().map(|p| p.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "access.roles",
            "access.scopes[0]",
            "toolboxes.a.access.callers[0]",
            "toolboxes.a.access.groups[0]",
            "toolboxes.a.access.subjects[0]"
        ],
        "{problems:?}"
    );
}

#[test]
fn the_nearest_rule_that_says_confirm_decides_and_confirm_alone_gates_nobody() {
    let config = parse(json!({
        "access": {"confirm": "destructive"},
        "toolboxes": {"a": {"mcpServers": {
            "s": server(json!({"tools": {"t": {"access": {"confirm": "always"}}}})),
            "quiet": server(json!({"access": {"confirm": "destructive"}}))
        }}}
    }))
    .expect("valid");
    let policy = config.policy.as_ref().expect("a policy");
    assert!(!policy.gates());
    assert_eq!(as_caller(&config, "anyone").toolboxes.len(), 1);
    assert_eq!(
        policy.confirmation("a", "s", "t", false).as_deref(),
        Some("toolboxes.a.mcpServers.s.tools.t.access.confirm")
    );
    assert_eq!(policy.confirmation("a", "s", "u", false), None);
    assert_eq!(
        policy.confirmation("a", "s", "u", true).as_deref(),
        Some("access.confirm")
    );
    assert_eq!(
        policy.confirmation("a", "quiet", "u", true).as_deref(),
        Some("toolboxes.a.mcpServers.quiet.access.confirm")
    );
}

#[test]
fn access_tokens_are_admitted_by_subject_group_or_scope_and_tokens_by_name_only() {
    let config = parse(json!({
        "toolboxes": {
            "eng": {"access": {"groups": ["eng"], "callers": ["ci"]}, "mcpServers": {
                "fs": server(json!({"tools": {"rm": {"access": {"scopes": ["admin"]}}}}))
            }},
            "ops": {"access": {"subjects": ["carol"]}, "mcpServers": {"k": server(json!({}))}}
        }
    }))
    .expect("valid");
    let policy = config.policy.as_ref().expect("a policy");
    assert!(policy.gates() && policy.names_claims());
    let groups = ["eng".to_owned()];
    let scopes = ["admin".to_owned()];
    let engineer = config.for_caller(Identity {
        subject: Some("dave"),
        groups: &groups,
        ..Identity::default()
    });
    assert_eq!(engineer.toolboxes.keys().collect::<Vec<_>>(), ["eng"]);
    assert!(engineer.withheld.covers("eng", Some("fs"), Some("rm")));
    let admin = config.for_caller(Identity {
        subject: Some("carol"),
        groups: &groups,
        scopes: &scopes,
        ..Identity::default()
    });
    assert_eq!(admin.toolboxes.keys().collect::<Vec<_>>(), ["eng", "ops"]);
    assert!(!admin.withheld.covers("eng", Some("fs"), Some("rm")));
    // A token named like a subject or a group is not one: it passes by `callers` only.
    assert!(as_caller(&config, "carol").toolboxes.is_empty());
    let ci = as_caller(&config, "ci");
    assert_eq!(ci.toolboxes.keys().collect::<Vec<_>>(), ["eng"]);
    assert!(ci.withheld.covers("eng", Some("fs"), Some("rm")));
}

#[test]
fn claims_below_a_rule_of_tokens_only_could_never_apply() {
    let problems = parse(json!({
        "toolboxes": {"a": {"access": {"callers": ["ci"]}, "mcpServers": {
            "s": server(json!({"access": {"groups": ["eng"], "callers": ["ci"]}}))
        }}}
    }))
    .expect_err("unreachable");
    let texts: Vec<String> = problems.iter().map(ToString::to_string).collect();
    assert_eq!(
        texts,
        [
            "toolboxes.a.mcpServers.s.access.groups[0]: group 'eng' can never use this, since toolboxes.a.access admits only ci: let toolboxes.a.access admit access tokens (by subjects, groups or scopes), or remove it here"
        ]
    );
}

#[test]
fn a_withheld_tool_is_withheld_by_its_alias_too() {
    let config = parse(json!({
        "access": {"callers": ["alice", "bob"]},
        "toolboxes": {"a": {"mcpServers": {
            "fs": server(json!({"tools": {"write": {"alias": "put", "access": {"callers": ["alice"]}}}}))
        }}}
    }))
    .expect("valid");
    let bob = as_caller(&config, "bob");
    assert!(bob.withheld.covers_flat("fs:put", ":"));
    assert!(bob.withheld.covers_flat("fs:write", ":"));
    assert!(!bob.withheld.covers_flat("fs:read", ":"));
    assert!(
        !as_caller(&config, "alice")
            .withheld
            .covers_flat("fs:put", ":")
    );
}
