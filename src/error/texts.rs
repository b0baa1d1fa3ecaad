//! The pieces of the error table's texts: the rule for invalid input, and the names offered
//! where one was not found.

use crate::schema_check::{Violation, ViolationKind};

/// Lists longer than this are not spelled out in an error.
const MAX_LISTED: usize = 20;

/// The table's rule: an empty identifier field has its own text; anything else is listed after the
/// prefix. Violations are joined with "; ".
pub(super) fn invalid(prefix: &str, violations: &[Violation]) -> String {
    let mut empties = Vec::new();
    let mut others = Vec::new();
    for violation in violations {
        match empty_field_text(violation) {
            Some(text) => empties.push(text.to_owned()),
            None => others.push(violation.to_string()),
        }
    }
    if others.is_empty() {
        empties.join("; ")
    } else {
        others.extend(empties);
        format!("{prefix}: {}", others.join("; "))
    }
}

fn empty_field_text(violation: &Violation) -> Option<&'static str> {
    if violation.kind != ViolationKind::Empty {
        return None;
    }
    match violation.path.as_str() {
        "tool.toolbox" | "toolbox" => Some("toolbox: Toolbox name cannot be empty"),
        "tool.server" => Some("server: Server name cannot be empty"),
        "tool.name" => Some("name: Tool name cannot be empty"),
        _ => None,
    }
}

/// The close match, if any; else every valid name when there are few.
pub(super) fn suggestions(input: &str, known: &[String]) -> Vec<String> {
    match crate::suggest::closest(input, known.iter().map(String::as_str)) {
        Some(close) => vec![close.to_owned()],
        None if known.len() <= MAX_LISTED => known.to_vec(),
        None => Vec::new(),
    }
}

/// "\nDid you mean: x?" for a close match, else "\n{label}: a, b" when the list is short.
pub(super) fn alternatives(input: &str, known: &[String], label: &str) -> String {
    if let Some(close) = crate::suggest::closest(input, known.iter().map(String::as_str)) {
        return format!("\nDid you mean: {close}?");
    }
    if known.is_empty() {
        format!("\n{label}: none")
    } else if known.len() <= MAX_LISTED {
        format!("\n{label}: {}", known.join(", "))
    } else {
        String::new()
    }
}
