//! One word, one thing: a type seen outside its file (`pub`, `pub(crate)`, `pub(super)`) has a
//! name no other type of `src/` declares at the top of its file. Types private to a file may
//! share a name with other private ones (each file's own `State`).

use std::collections::BTreeMap;

/// The types declared at the top of `text` (before its unit tests): name and whether the file
/// shows it to others.
fn declared(text: &str) -> Vec<(String, bool)> {
    let mut types = Vec::new();
    for line in text.lines() {
        let (shown, rest) = match line.strip_prefix("pub") {
            Some(rest) => match rest.strip_prefix('(') {
                Some(scope) => (true, scope.split_once(") ").map_or("", |(_, rest)| rest)),
                None => (true, rest.trim_start()),
            },
            None => (false, line),
        };
        for kind in ["struct ", "enum ", "trait ", "type "] {
            if let Some(name) = rest.strip_prefix(kind) {
                let name: String = name
                    .chars()
                    .take_while(char::is_ascii_alphanumeric)
                    .collect();
                if name.starts_with(|first: char| first.is_ascii_uppercase()) {
                    types.push((name, shown));
                }
            }
        }
    }
    types
}

#[test]
fn a_type_seen_outside_its_file_has_a_name_of_its_own() {
    let mut by_name: BTreeMap<String, Vec<(String, bool)>> = BTreeMap::new();
    for (module, (_, text)) in crate::architecture::library() {
        for (name, shown) in declared(&text) {
            by_name
                .entry(name)
                .or_default()
                .push((module.join("/"), shown));
        }
    }
    let clashes: Vec<_> = by_name
        .iter()
        .filter(|(_, files)| files.len() > 1 && files.iter().any(|(_, shown)| *shown))
        .collect();
    assert!(clashes.is_empty(), "one name, two types: {clashes:?}");
}

#[test]
fn a_clash_is_seen() {
    let planted = "pub(crate) struct Session {\nenum Session {\nstruct State;\nstruct Other;";
    let names: Vec<_> = declared(planted)
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    assert_eq!(names, ["Session", "Session", "State", "Other"]);
    assert_eq!(
        declared("pub(super) enum Routed {")[0],
        ("Routed".to_owned(), true)
    );
}
