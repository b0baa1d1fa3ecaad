//! Where toolshelf writes what the agent reads (ARCHITECTURE.md's invariant): the files that
//! build a JSON-RPC error, a tool's error result or an HTTP body of toolshelf's own are the ones
//! listed here, each group with its reason. A file that starts writing such a text fails the
//! test until it is listed (or the text moves to `error`); a listed file that stops, too.

use std::collections::BTreeSet;

/// The calls that make a text the agent reads.
const MAKERS: &[&str] = &[
    "McpError::new(",
    "McpError::invalid_params(",
    "McpError::invalid_request(",
    "McpError::internal_error(",
    "McpError::method_not_found(",
    "McpError::resource_not_found(",
    "ErrorData::new(",
    "ErrorData::invalid_params(",
    "ErrorData::invalid_request(",
    "ErrorData::internal_error(",
    "ErrorData::method_not_found(",
    "ErrorData::resource_not_found(",
    "error_line(",
    "error_data_line(",
    "CallToolResult::error(",
    "text(StatusCode::",
    "respond(StatusCode::",
];

/// The files that write agent-visible texts, by group.
const WRITERS: &[(&str, &[&str])] = &[
    // The error table of `use_tool` and the meta-tools' own answers; flat mode's names.
    ("error and meta-tools", &["error", "qualified_names"]),
    // The JSON-RPC errors of protocol state: tasks, rounds, ids in flight, the call budget.
    (
        "protocol state",
        &[
            "tasks",
            "tasks/errors",
            "tasks/task_json",
            "session/input_rounds",
            "session/in_flight",
            "session/budget",
        ],
    ),
    // Each door's edge: a line or body that is no request, a refusal before any session.
    (
        "door edges",
        &[
            "jsonrpc/envelope",
            "transport/stdio",
            "transport/stdio/router",
            "transport/http/gate",
            "transport/http/challenge",
            "transport/http/direct",
            "transport/http/response",
            "transport/http/sessions",
        ],
    ),
    // The session core's answers to what rmcp hands it, and the cancelled relay.
    (
        "session core",
        &[
            "session/handler",
            "session/door",
            "session/calls",
            "session/session_link",
        ],
    ),
    // A child's own errors and requests relayed to the agent, with toolshelf's context.
    (
        "child relays",
        &[
            "child_call",
            "child_offers",
            "child_offers/resources",
            "children/agent_port",
            "children/call_error",
            "children/client",
        ],
    ),
];

/// Whether `text` calls a maker, however its lines break the call.
fn makes_a_text(text: &str) -> bool {
    let code: String = crate::architecture::code(text).split_whitespace().collect();
    MAKERS.iter().any(|maker| code.contains(maker))
}

#[test]
fn agent_visible_texts_are_written_only_in_the_files_listed() {
    let writing: BTreeSet<String> = crate::architecture::library()
        .into_iter()
        .filter(|(_, (_, text))| makes_a_text(text))
        .map(|(module, _)| module.join("/"))
        .collect();
    let listed: BTreeSet<String> = WRITERS
        .iter()
        .flat_map(|(_, files)| files.iter().map(|file| (*file).to_owned()))
        .collect();
    let unlisted: Vec<_> = writing.difference(&listed).collect();
    assert!(
        unlisted.is_empty(),
        "agent-visible texts written outside the files listed: {unlisted:?}; move them to `error` or list the file with its reason"
    );
    let stale: Vec<_> = listed.difference(&writing).collect();
    assert!(
        stale.is_empty(),
        "listed files that write no such text: {stale:?}"
    );
}

/// The test sees a text written where none may be.
#[test]
fn a_text_written_elsewhere_is_seen() {
    assert!(makes_a_text(
        "fn refuse() -> McpError {\n    McpError::invalid_params(\n        \"no\", None)\n}"
    ));
    assert!(makes_a_text("text(\n    StatusCode::GONE, \"gone\")"));
    assert!(!makes_a_text("// McpError::invalid_params(\"no\", None)"));
}
