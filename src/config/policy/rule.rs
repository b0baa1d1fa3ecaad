//! One `access` rule and who it admits. A caller is either a named bearer token (`callers`) or
//! the holder of an OAuth access token, known by its claims: its subject (`subjects`), its
//! groups (`groups`) and its scopes (`scopes`). A rule admits a caller that any of its lists
//! names.

use serde_json::Value;

use crate::config::Violation;

/// Who is asking, as the transport proved it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Identity<'a> {
    /// The name a static bearer token stands for.
    pub caller: Option<&'a str>,
    /// An access token's `sub`.
    pub subject: Option<&'a str>,
    /// An access token's groups (its groups claim).
    pub groups: &'a [String],
    /// An access token's scopes.
    pub scopes: &'a [String],
}

/// One `access` rule: who it admits.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Rule {
    pub(super) callers: Vec<String>,
    subjects: Vec<String>,
    groups: Vec<String>,
    scopes: Vec<String>,
}

impl Rule {
    pub(super) fn admits(&self, who: Identity<'_>) -> bool {
        let named = |list: &[String], value: &str| list.iter().any(|named| named == value);
        who.caller
            .is_some_and(|caller| named(&self.callers, caller))
            || who
                .subject
                .is_some_and(|subject| named(&self.subjects, subject))
            || who.groups.iter().any(|group| named(&self.groups, group))
            || who.scopes.iter().any(|scope| named(&self.scopes, scope))
    }

    /// True when the rule names an access token's claims (a subject, a group or a scope).
    pub(super) fn names_claims(&self) -> bool {
        !(self.subjects.is_empty() && self.groups.is_empty() && self.scopes.is_empty())
    }

    fn describe(&self) -> String {
        let kinds = [
            ("", &self.callers),
            ("subject ", &self.subjects),
            ("group ", &self.groups),
            ("scope ", &self.scopes),
        ];
        let named: Vec<String> = kinds
            .iter()
            .flat_map(|(kind, list)| list.iter().map(move |name| format!("{kind}{name}")))
            .collect();
        match named.as_slice() {
            [] => "no caller".to_owned(),
            named => named.join(", "),
        }
    }
}

/// The rule of `node`'s `access` (at `path`), if it names who it admits; a subject, group or
/// scope that no token could carry is a problem. These are checked here rather than by patterns
/// in the config's schema: a pattern is a regular expression compiled at every start, and these
/// twelve took a quarter of start-up's instructions.
pub(super) fn rule(node: &Value, path: &str, problems: &mut Vec<Violation>) -> Option<Rule> {
    let access = node.get("access")?;
    let mut list = |key: &str| -> Option<Vec<String>> {
        let items = access.get(key)?.as_array()?;
        let names: Vec<String> = items
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect();
        for (at, name) in names.iter().enumerate() {
            if let Some(problem) = misspelt(key, name) {
                problems.push(Violation::other(format!("{path}.{key}[{at}]"), problem));
            }
        }
        Some(names)
    };
    let lists = ["callers", "subjects", "groups", "scopes"].map(&mut list);
    if lists.iter().all(Option::is_none) {
        return None;
    }
    let [callers, subjects, groups, scopes] = lists.map(Option::unwrap_or_default);
    Some(Rule {
        callers,
        subjects,
        groups,
        scopes,
    })
}

/// Why `name` cannot stand in `key`'s list, if it cannot: a subject or group has no control
/// characters; a scope is printable ASCII without spaces, '"' or '\' (RFC 6749, 3.3).
fn misspelt(key: &str, name: &str) -> Option<String> {
    match key {
        "subjects" | "groups" if name.chars().any(char::is_control) => Some(format!(
            "invalid name '{}': a subject or a group has no control characters",
            name.escape_debug()
        )),
        "scopes"
            if !name
                .bytes()
                .all(|b| b.is_ascii_graphic() && b != b'"' && b != b'\\') =>
        {
            Some(format!(
                "invalid scope '{name}': a scope is printable ASCII without spaces, '\"' or '\\' (one scope per item)"
            ))
        }
        _ => None,
    }
}

/// Reports each name `rule` (at `path`) gives that a rule above it (`limits`, with where each
/// is written; `None`: no rule there) never lets through. A token's caller has no claims, so
/// it passes a rule only by its name; a token with claims may hold any subject, group and scope,
/// so its names below pass any rule above that names claims at all.
pub(super) fn unreachable(
    rule: &Rule,
    limits: &[(Option<&Rule>, String)],
    path: &str,
    problems: &mut Vec<Violation>,
) {
    let named = [
        ("callers", "caller", &rule.callers),
        ("subjects", "subject", &rule.subjects),
        ("groups", "group", &rule.groups),
        ("scopes", "scope", &rule.scopes),
    ];
    for (key, kind, names) in named {
        for (at, name) in names.iter().enumerate() {
            let passes = |limit: &Rule| match key {
                "callers" => limit.admits(Identity {
                    caller: Some(name),
                    ..Identity::default()
                }),
                _ => limit.names_claims(),
            };
            let barred = limits
                .iter()
                .find(|(limit, _)| limit.is_none_or(|limit| !passes(limit)));
            let Some((limit, written)) = barred else {
                continue;
            };
            let above = match limit {
                Some(limit) => format!("{written} admits only {}", limit.describe()),
                None => format!("no {written} rule admits anyone to this toolbox"),
            };
            let fix = match key {
                "callers" => format!("add '{name}' to {written}"),
                _ => format!("let {written} admit access tokens (by subjects, groups or scopes)"),
            };
            problems.push(Violation::other(
                format!("{path}.access.{key}[{at}]"),
                format!(
                    "{kind} '{name}' can never use this, since {above}: {fix}, or remove it here"
                ),
            ));
        }
    }
}
