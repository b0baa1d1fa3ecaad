//! What in a tool's texts a model would read as instructions the user never sees (tool
//! poisoning): invisible and direction characters (zero-width, bidi controls, Unicode tag
//! characters, which carry ASCII unseen), markers of instructions aimed at the model
//! (`<IMPORTANT>`, "do not tell the user"), references to secret files (`~/.ssh`, a client's
//! MCP config), and a text far longer than descriptions are. The name, the title, the
//! description and every string of the schemas (keys too) are read.

use serde_json::{Map, Value};

use super::CatalogTool;

/// One thing found in one text of a tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Finding {
    /// Where: `description`, `title`, `inputSchema.properties.path.description`, …
    pub field: String,
    /// What, for a person: `invisible character U+200B ×3`, `instruction to the model
    /// "<important>"`.
    pub what: String,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.what)
    }
}

/// Phrases that speak to the model behind the user's back, lowercased: those of the published
/// tool-poisoning examples (Invariant Labs' `<IMPORTANT>` and shadowing tools, hidden
/// instructions of rug pulls) and their like. None is in the tools of the real servers the
/// tests start (`tests/it/poisoning.rs`).
const MARKERS: &[&str] = &[
    "<important>",
    "</important>",
    "<system>",
    "<instructions>",
    "<secret>",
    "<hidden>",
    "ignore previous instructions",
    "ignore all previous",
    "ignore the previous instructions",
    "disregard previous",
    "disregard all previous",
    "do not tell the user",
    "don't tell the user",
    "do not mention this",
    "don't mention this",
    "without telling the user",
    "without informing the user",
    "never tell the user",
    "not notify the user",
    "never be reported to the user",
    "hide this from the user",
    "the user must not",
    "not visible to the user",
    "when this tool is available",
];

/// Files no tool's text has a reason to name, lowercased: keys, cloud credentials, the MCP
/// clients' own configs (which hold other servers' secrets).
const SECRET_FILES: &[&str] = &[
    "~/.ssh",
    ".ssh/id_",
    "id_rsa",
    "id_ed25519",
    "id_ecdsa",
    "~/.aws",
    ".aws/credentials",
    "~/.gnupg",
    "~/.netrc",
    ".git-credentials",
    "~/.kube/config",
    ".docker/config.json",
    "~/.config/gcloud",
    "/etc/shadow",
    ".cursor/mcp.json",
    "claude_desktop_config.json",
];

/// Far longer than the texts of the real servers the tests start (the longest of their 70 tools'
/// has 457 characters), and than most servers' long descriptions: room for pages of padding
/// with an instruction at their end.
const LONGEST_TEXT: usize = 8_000;

/// Everything found in the texts of `listed` the agent sees (the config's title and
/// description where it gives them), in the order of its fields.
pub(crate) fn scan(listed: &CatalogTool) -> Vec<Finding> {
    let mut findings = Vec::new();
    let tool = &listed.tool;
    scan_text("name", &tool.name, &mut findings);
    if let Some(title) = &listed.title {
        scan_text("title", title, &mut findings);
    }
    if let Some(title) = tool.annotations.as_ref().and_then(|a| a.title.as_ref()) {
        scan_text("annotations.title", title, &mut findings);
    }
    if let Some(description) = &listed.description {
        scan_text("description", description, &mut findings);
    }
    scan_members("inputSchema", &tool.input_schema, &mut findings);
    if let Some(output) = &tool.output_schema {
        scan_members("outputSchema", output, &mut findings);
    }
    findings
}

/// Each key of `members` and every string under it.
fn scan_members(field: &str, members: &Map<String, Value>, findings: &mut Vec<Finding>) {
    for (key, member) in members {
        let inner = format!("{field}.{key}");
        scan_text(&inner, key, findings);
        scan_value(&inner, member, findings);
    }
}

fn scan_value(field: &str, value: &Value, findings: &mut Vec<Finding>) {
    match value {
        Value::String(text) => scan_text(field, text, findings),
        Value::Array(items) => {
            for item in items {
                scan_value(field, item, findings);
            }
        }
        Value::Object(members) => scan_members(field, members, findings),
        _ => {}
    }
}

fn scan_text(field: &str, text: &str, findings: &mut Vec<Finding>) {
    let mut found = |what: String| {
        findings.push(Finding {
            field: field.to_owned(),
            what,
        })
    };
    let mut hidden: Vec<(char, usize)> = Vec::new();
    for c in text.chars().filter(|c| is_hidden(*c)) {
        match hidden.iter_mut().find(|(seen, _)| *seen == c) {
            Some((_, count)) => *count += 1,
            None => hidden.push((c, 1)),
        }
    }
    for (c, count) in hidden {
        let times = if count > 1 {
            format!(" ×{count}")
        } else {
            String::new()
        };
        found(format!("{} U+{:04X}{times}", hidden_kind(c), u32::from(c)));
    }
    let lower = text.to_lowercase();
    for marker in MARKERS.iter().filter(|marker| lower.contains(*marker)) {
        found(format!("instruction to the model \"{marker}\""));
    }
    for file in SECRET_FILES.iter().filter(|file| lower.contains(*file)) {
        found(format!("reference to a secret file \"{file}\""));
    }
    let length = text.chars().count();
    if length > LONGEST_TEXT {
        found(format!(
            "{length} characters, where descriptions stay under {LONGEST_TEXT}"
        ));
    }
}

/// Characters that show nothing, or change the order of what is shown, and that a real tool's
/// text has no use for. Emoji variation selectors (U+FE00–U+FE0F) are left out: `⚠️` has one.
fn is_hidden(c: char) -> bool {
    matches!(c,
        '\u{00}'..='\u{08}' | '\u{0B}' | '\u{0C}' | '\u{0E}'..='\u{1F}' | '\u{7F}'..='\u{9F}'
        | '\u{AD}' | '\u{34F}' | '\u{61C}' | '\u{115F}' | '\u{1160}' | '\u{17B4}' | '\u{17B5}'
        | '\u{180B}'..='\u{180F}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{206F}' | '\u{3164}' | '\u{FEFF}'
        | '\u{FFA0}' | '\u{FFF9}'..='\u{FFFB}' | '\u{1D173}'..='\u{1D17A}'
        | '\u{E0000}'..='\u{E007F}' | '\u{E0100}'..='\u{E01EF}')
}

fn hidden_kind(c: char) -> &'static str {
    match c {
        '\u{E0000}'..='\u{E007F}' => "Unicode tag character (ASCII no one sees)",
        '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{61C}' => {
            "direction control"
        }
        '\u{00}'..='\u{1F}' | '\u{7F}'..='\u{9F}' => "control character",
        _ => "invisible character",
    }
}

#[cfg(test)]
#[path = "poisoning_tests.rs"]
mod tests;
