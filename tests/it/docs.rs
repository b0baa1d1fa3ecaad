//! The docs tell the truth: every relative link resolves, every command, flag and config key
//! they name exists, and the texts and figures they quote are what toolshelf produces (the
//! tests that produce a quoted text call `assert_quoted` with it).

use std::{
    collections::{BTreeSet, HashMap},
    path::{Path, PathBuf},
    process::Stdio,
};

use serde_json::Value;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Every document of the repository: the README, CONTRIBUTING, ARCHITECTURE and docs/.
fn documents() -> Vec<(PathBuf, String)> {
    let mut paths: Vec<PathBuf> = ["README.md", "CONTRIBUTING.md", "ARCHITECTURE.md"]
        .iter()
        .map(|name| Path::new(ROOT).join(name))
        .collect();
    let mut pages: Vec<PathBuf> = std::fs::read_dir(Path::new(ROOT).join("docs"))
        .expect("docs/")
        .map(|entry| entry.expect("a docs/ entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    pages.sort();
    paths.extend(pages);
    paths
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|error| panic!("read {}: {error}", path.display()));
            (path, text)
        })
        .collect()
}

pub(crate) fn document(name: &str) -> String {
    std::fs::read_to_string(Path::new(ROOT).join(name)).expect(name)
}

/// Fails unless a document quotes `text` (line breaks and indentation aside).
pub(crate) fn assert_quoted(text: &str) {
    let collapse = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
    let wanted = collapse(text);
    assert!(
        documents()
            .iter()
            .any(|(_, document)| collapse(document).contains(&wanted)),
        "no document quotes what toolshelf writes any more: {text}"
    );
}

/// The lines of `text` outside fenced code blocks, and those inside them.
pub(crate) fn prose_and_code(text: &str) -> (Vec<&str>, Vec<&str>) {
    let (mut prose, mut code, mut fenced) = (Vec::new(), Vec::new(), false);
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if fenced {
            code.push(line);
        } else {
            prose.push(line);
        }
    }
    (prose, code)
}

/// The inline code spans of `lines` (one backtick each side).
fn code_spans(lines: &[&str]) -> Vec<String> {
    let joined = lines.join("\n");
    joined
        .split('`')
        .skip(1)
        .step_by(2)
        .map(|span| span.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect()
}

/// A heading's anchor as code hosts make it: lower case, punctuation dropped, spaces as `-`.
fn anchor(heading: &str) -> String {
    heading
        .trim_start_matches('#')
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

fn anchors(text: &str) -> BTreeSet<String> {
    let (prose, _) = prose_and_code(text);
    prose
        .iter()
        .filter(|line| line.starts_with('#'))
        .map(|line| anchor(line))
        .collect()
}

/// The targets of the Markdown links in `text` (`[label](target)`), outside code.
fn link_targets(text: &str) -> Vec<String> {
    let (prose, _) = prose_and_code(text);
    let joined = prose.join("\n");
    joined
        .match_indices("](")
        .filter_map(|(at, _)| {
            let rest = &joined[at + 2..];
            rest.find(')').map(|end| rest[..end].to_owned())
        })
        .collect()
}

#[test]
fn every_relative_link_and_anchor_resolves() {
    let mut broken = Vec::new();
    for (path, text) in documents() {
        for target in link_targets(&text) {
            if target.starts_with("http://") || target.starts_with("https://") {
                continue;
            }
            let (file, fragment) = target.split_once('#').unwrap_or((&target, ""));
            let linked = if file.is_empty() {
                path.clone()
            } else {
                path.parent().expect("a folder").join(file)
            };
            if !linked.exists() {
                broken.push(format!("{}: {target} (no such file)", path.display()));
                continue;
            }
            if !fragment.is_empty() {
                let text = std::fs::read_to_string(&linked).unwrap_or_default();
                if !anchors(&text).contains(fragment) {
                    broken.push(format!("{}: {target} (no such heading)", path.display()));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn every_document_in_docs_is_linked_from_the_readme() {
    let readme = document("README.md");
    for (path, _) in documents() {
        let Ok(page) = path.strip_prefix(Path::new(ROOT).join("docs")) else {
            continue;
        };
        let link = format!("](docs/{})", page.display());
        assert!(readme.contains(&link), "the README does not link {link}");
    }
}

/// `toolshelf ARGS --help`, or None when toolshelf refuses it (no such command).
fn help(args: &[&str]) -> Option<String> {
    let output = crate::harness::toolshelf_std()
        .args(args)
        .arg("--help")
        .stdin(Stdio::null())
        .output()
        .expect("run toolshelf");
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).into_owned())
}

/// The `--flags` a help text lists.
fn flags_of(help: &str) -> BTreeSet<String> {
    help.split(|c: char| c.is_whitespace() || matches!(c, ',' | '[' | ']' | '='))
        .filter(|word| word.starts_with("--") && word.len() > 2)
        .map(|word| word.trim_end_matches(['.', ':', ')']).to_owned())
        .collect()
}

/// The flags of other programs that the docs name on their own, with whose they are.
const OTHER_PROGRAMS_FLAGS: &[&str] = &[
    "--locked",               // cargo install
    "--path",                 // cargo install
    "--cli",                  // the MCP Inspector
    "--build-arg",            // docker build
    "--bench",                // cargo bench
    "--quick",                // the benchmark
    "--only",                 // the benchmark
    "--out",                  // the benchmark
    "--transport",            // the everything server's own
    "--scope",                // claude mcp add
    "--env",                  // claude mcp add
    "--bin",                  // cargo install
    "--profile",              // cargo build
    "--test",                 // cargo test
    "--lib",                  // cargo test
    "--ask",                  // toolshelf-fixture, the tests' child
    "--protocol",             // toolshelf-fixture
    "--symbol-ordering-file", // LLD, as build.rs passes it
    "--zig",                  // maturin build
];

/// Where a command line of toolshelf starts in `text`: at its start, after `$ ` or `-- `, or after
/// variables set for it (`TOOLSHELF_TOKEN=… toolshelf serve`); not inside prose or a quoted text.
fn command_line_at(text: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(found) = text[from..].find("toolshelf ") {
        let at = from + found;
        let before = text[..at].trim();
        let before = before.strip_prefix('$').unwrap_or(before).trim();
        let leads_in = before.is_empty()
            || before.ends_with(" --")
            || before == "--"
            || before.split_whitespace().all(|word| word.contains('='));
        if leads_in {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

#[test]
fn every_command_and_flag_the_docs_name_exists() {
    let global = help(&[]).expect("toolshelf --help");
    let mut helps: HashMap<String, Option<String>> = HashMap::new();
    let global_flags = flags_of(&global);
    let mut known_flags = global_flags.clone();
    let mut missing = Vec::new();
    for (path, text) in documents() {
        let (prose, code) = prose_and_code(&text);
        let mut uses = code_spans(&prose);
        uses.extend(code.iter().map(|line| line.to_string()));
        for span in &uses {
            let Some(at) = command_line_at(span) else {
                continue;
            };
            let words: Vec<&str> = span[at + "toolshelf ".len()..].split_whitespace().collect();
            let Some(command) = words.first().filter(|word| {
                word.chars().all(|c| c.is_ascii_lowercase() || c == '-') && !word.starts_with('-')
            }) else {
                continue;
            };
            let command_help = helps
                .entry(command.to_string())
                .or_insert_with(|| help(&[command]))
                .clone();
            let Some(command_help) = command_help else {
                missing.push(format!("{}: `toolshelf {command}`", path.display()));
                continue;
            };
            let flags = flags_of(&command_help);
            known_flags.extend(flags.iter().cloned());
            for word in &words[1..] {
                let flag = word.split('=').next().unwrap_or(word);
                let flag = flag.trim_matches(|c: char| !(c.is_ascii_alphanumeric() || c == '-'));
                if flag.starts_with("--")
                    && flag.len() > 2
                    && !flags.contains(flag)
                    && !global_flags.contains(flag)
                {
                    missing.push(format!(
                        "{}: `toolshelf {command} … {flag}`",
                        path.display()
                    ));
                }
            }
        }
    }
    // A flag named on its own is one of toolshelf's, or of a program the docs say it is of.
    for (path, text) in documents() {
        let (prose, _) = prose_and_code(&text);
        for span in code_spans(&prose) {
            let flag = span.split([' ', '=']).next().unwrap_or_default();
            if flag.starts_with("--")
                && flag.len() > 2
                && !known_flags.contains(flag)
                && !OTHER_PROGRAMS_FLAGS.contains(&flag)
            {
                missing.push(format!("{}: `{span}`", path.display()));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "named but not in --help:\n{}",
        missing.join("\n")
    );
}

/// Every property name in the config's JSON Schema, at any depth.
fn schema_keys() -> BTreeSet<String> {
    let output = crate::harness::toolshelf_std()
        .arg("schema")
        .output()
        .expect("toolshelf schema");
    let schema: Value = serde_json::from_slice(&output.stdout).expect("the schema is JSON");
    fn walk(value: &Value, keys: &mut BTreeSet<String>) {
        match value {
            Value::Object(map) => {
                if let Some(Value::Object(properties)) = map.get("properties") {
                    keys.extend(properties.keys().cloned());
                }
                map.values().for_each(|value| walk(value, keys));
            }
            Value::Array(items) => items.iter().for_each(|value| walk(value, keys)),
            _ => {}
        }
    }
    let mut keys = BTreeSet::new();
    walk(&schema, &mut keys);
    keys
}

#[test]
fn the_configuration_reference_names_every_config_key_and_no_other() {
    let keys = schema_keys();
    let reference = document("docs/configuration.md");
    let (prose, _) = prose_and_code(&reference);
    let spans: BTreeSet<String> = code_spans(&prose).into_iter().collect();
    let undocumented: Vec<&String> = keys.iter().filter(|key| !spans.contains(*key)).collect();
    assert!(
        undocumented.is_empty(),
        "docs/configuration.md does not name these config keys: {undocumented:?}"
    );
    // The first column of its tables names keys only.
    let mut unknown = Vec::new();
    for row in prose.iter().filter(|line| line.starts_with("| `")) {
        let cell = row.split('|').nth(1).unwrap_or_default();
        for span in code_spans(&[cell]) {
            for word in span.split(['.', ',', ' ']) {
                let word = word.trim();
                if !word.is_empty() && !word.starts_with('<') && !keys.contains(word) {
                    unknown.push(format!("{word} (in `{span}`)"));
                }
            }
        }
    }
    assert!(unknown.is_empty(), "not config keys: {unknown:?}");
}

/// The first fenced block after `heading` in `text`.
pub(crate) fn block_after(text: &str, heading: &str) -> String {
    let rest = &text[text.find(heading).unwrap_or_else(|| panic!("no {heading}"))..];
    let body = rest.split("```").nth(1).expect("a fenced block");
    body.split_once('\n')
        .map_or("", |(_, lines)| lines)
        .to_owned()
}

/// The `--client` names `install --help` lists, which are the code's `Client::ALL`: the README's
/// list of them and docs/install.md's table name each, and no other.
#[test]
fn the_docs_list_every_client_the_code_knows() {
    let help = help(&["install"]).expect("install --help");
    let listed = help
        .split_once("[possible values: ")
        .and_then(|(_, rest)| rest.split_once(']'))
        .map(|(values, _)| values)
        .expect("install --help lists the clients");
    let names: Vec<&str> = listed.split(", ").collect();
    let known: Vec<String> = toolshelf::clients::Client::ALL
        .iter()
        .map(|client| {
            clap::ValueEnum::to_possible_value(client)
                .expect("a name")
                .get_name()
                .to_owned()
        })
        .collect();
    assert_eq!(names, known, "install --help");
    let readme = document("README.md");
    let sentence = readme
        .lines()
        .skip_while(|line| !line.starts_with("`install` takes "))
        .take_while(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let in_readme: Vec<&str> = sentence
        .split("edits")
        .next()
        .unwrap_or_default()
        .split('`')
        .skip(3)
        .step_by(2)
        .collect();
    assert_eq!(
        in_readme, known,
        "the README's `install` takes …: {sentence}"
    );
    let install = document("docs/install.md");
    let rows: Vec<&str> = install
        .lines()
        .skip_while(|line| !line.starts_with("| `--client` |"))
        .skip(2)
        .take_while(|line| line.starts_with("| `"))
        .filter_map(|line| line.split('`').nth(1))
        .collect();
    assert_eq!(rows, known, "docs/install.md's table of clients");
}
