//! The shape ARCHITECTURE.md promises, checked on the source: no import cycle between the files
//! of `src/`, `children` speaking upward only through its port, transports implementing no
//! MCP feature, and files kept small.

use std::{
    collections::{BTreeMap, BTreeSet},
    fs,
    path::{Path, PathBuf},
};

/// Every library file of `src/` (the binaries left out) by its module path, e.g.
/// `["children", "client"]`, with its text up to its unit tests.
pub(crate) fn library() -> BTreeMap<Vec<String>, (PathBuf, String)> {
    let mut files = BTreeMap::new();
    for (relative, path) in sources() {
        if relative.starts_with("bin") || relative == Path::new("main.rs") {
            continue;
        }
        let mut module: Vec<String> = relative
            .with_extension("")
            .iter()
            .map(|part| part.to_string_lossy().into_owned())
            .collect();
        if matches!(module.last().map(String::as_str), Some("mod" | "lib")) {
            module.pop();
        }
        let text = fs::read_to_string(&path).expect("a source file reads");
        let text = match text.find("#[cfg(test)]\nmod tests") {
            Some(at) => text[..at].to_owned(),
            None => text,
        };
        files.insert(module, (path, text));
    }
    files
}

/// Every `.rs` file under `src/`: its path from `src/`, and its full path.
fn sources() -> Vec<(PathBuf, PathBuf)> {
    rust_files("src")
}

/// The `.rs` files under `folder` of the repository, each with its path relative to `folder`.
pub(crate) fn rust_files(folder: &str) -> Vec<(PathBuf, PathBuf)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(folder);
    let mut files = Vec::new();
    let mut folders = vec![root.clone()];
    while let Some(folder) = folders.pop() {
        for entry in fs::read_dir(&folder).expect("the folder reads") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|ext| ext == "rs") {
                let relative = path
                    .strip_prefix(&root)
                    .expect("under the folder")
                    .to_path_buf();
                files.push((relative, path));
            }
        }
    }
    files
}

/// The text without its comments, so a doc comment that names a module is no import of it.
pub(crate) fn code(text: &str) -> String {
    text.lines()
        .map(|line| match line.find("//") {
            Some(at) if !line[..at].contains('"') => &line[..at],
            _ => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The paths below `crate::` that `text` names: `crate::a::b::C` and each item of a
/// `use crate::{a::b, c::{d, e}}` group, written out in full.
fn crate_paths(text: &str) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        let (found, used) = if rest.starts_with('{') {
            // `crate::{…}`: a group straight under the crate.
            let (found, used) = path_at(&format!("::{rest}"), Vec::new());
            (found, used - 2)
        } else {
            path_at(rest, Vec::new())
        };
        paths.extend(found.into_iter().filter(|path| !path.is_empty()));
        rest = &rest[used..];
    }
    paths
}

/// The paths at the start of `text` under `prefix` (a group expands to one path per item), and
/// how many bytes they took.
fn path_at(text: &str, prefix: Vec<String>) -> (Vec<Vec<String>>, usize) {
    let mut path = prefix;
    let bytes = text.as_bytes();
    let mut at = 0;
    loop {
        let start = at;
        while at < bytes.len() && (bytes[at].is_ascii_alphanumeric() || bytes[at] == b'_') {
            at += 1;
        }
        if at > start {
            path.push(text[start..at].to_owned());
        }
        if text[at..].starts_with("::{") {
            at += 3;
            let mut paths = Vec::new();
            loop {
                while at < bytes.len() && (bytes[at].is_ascii_whitespace() || bytes[at] == b',') {
                    at += 1;
                }
                if at >= bytes.len() || bytes[at] == b'}' {
                    return (paths, at + 1);
                }
                let (found, used) = path_at(&text[at..], path.clone());
                paths.extend(found);
                at += used.max(1);
                // Skip an `as name` rename.
                while at < bytes.len() && !matches!(bytes[at], b',' | b'}') {
                    at += 1;
                }
            }
        }
        if text[at..].starts_with("::") {
            at += 2;
            continue;
        }
        return (vec![path], at);
    }
}

/// The file a path names: its longest prefix that is a file of the library.
fn file_of<'a>(
    files: &'a BTreeMap<Vec<String>, (PathBuf, String)>,
    path: &[String],
) -> Option<&'a Vec<String>> {
    (1..=path.len())
        .rev()
        .find_map(|len| files.get_key_value(&path[..len]).map(|(key, _)| key))
}

/// The paths `super::` names in the file of `module`: `super::x` a sibling of its module (or
/// of its parent, in `mod.rs`), and each item of a `super::{x, y::z}` group.
fn super_paths(module: &[String], code: &str) -> Vec<Vec<String>> {
    let parent = module[..module.len().saturating_sub(1)].to_vec();
    let mut named = Vec::new();
    for (at, _) in code.match_indices("super::") {
        let rest = &code[at + "super::".len()..];
        let (found, _) = match rest.starts_with('{') {
            true => path_at(&format!("::{rest}"), parent.clone()),
            false => path_at(rest, parent.clone()),
        };
        named.extend(found);
    }
    named
}

/// The groups of files of `files` that reach each other through their imports.
fn import_cycles(files: &BTreeMap<Vec<String>, (PathBuf, String)>) -> BTreeSet<BTreeSet<String>> {
    let mut edges: BTreeMap<&Vec<String>, BTreeSet<&Vec<String>>> = BTreeMap::new();
    for (module, (_, text)) in files {
        let code = code(text);
        let mut named = crate_paths(&code);
        named.extend(super_paths(module, &code));
        for path in named {
            if let Some(target) = file_of(files, &path)
                && target != module
                && !module.starts_with(target)
            {
                edges.entry(module).or_default().insert(target);
            }
        }
    }
    // A file that reaches a file that reaches it back is in a cycle.
    let mut cycles = BTreeSet::new();
    for start in files.keys() {
        let reach = |from: &Vec<String>| {
            let mut seen = BTreeSet::new();
            let mut todo = vec![from];
            while let Some(next) = todo.pop() {
                for target in edges.get(next).into_iter().flatten() {
                    if seen.insert(*target) {
                        todo.push(target);
                    }
                }
            }
            seen
        };
        let forward = reach(start);
        let mut cycle: BTreeSet<String> = forward
            .iter()
            .filter(|other| **other != start && reach(other).contains(start))
            .map(|other| other.join("/"))
            .collect();
        if !cycle.is_empty() {
            cycle.insert(start.join("/"));
            cycles.insert(cycle);
        }
    }
    cycles
}

/// The files that import each other which ARCHITECTURE.md justifies (its Decisions say why),
/// each group exactly.
const JUSTIFIED_CYCLES: &[&[&str]] = &[
    &["session/audit_trail", "session/calls", "session/state"],
    &["transport/http/caller_view", "transport/http/sessions"],
];

#[test]
fn no_file_of_src_imports_a_file_that_imports_it_back() {
    let cycles = import_cycles(&library());
    let justified: BTreeSet<BTreeSet<String>> = JUSTIFIED_CYCLES
        .iter()
        .map(|group| group.iter().map(|file| (*file).to_owned()).collect())
        .collect();
    let unjustified: Vec<&BTreeSet<String>> = cycles.difference(&justified).collect();
    assert!(
        unjustified.is_empty(),
        "import cycles in src/ that ARCHITECTURE.md does not justify: {unjustified:?}"
    );
    let gone: Vec<&BTreeSet<String>> = justified.difference(&cycles).collect();
    assert!(
        gone.is_empty(),
        "no longer cycles: take them out of JUSTIFIED_CYCLES and ARCHITECTURE.md: {gone:?}"
    );
    let architecture = crate::docs::document("ARCHITECTURE.md");
    for file in JUSTIFIED_CYCLES.iter().copied().flatten() {
        let name = file.rsplit('/').next().unwrap_or(file);
        assert!(
            architecture.contains(&format!("`{name}`")),
            "ARCHITECTURE.md does not name {file}, whose cycle it should justify"
        );
    }
}

/// The reader sees a cycle written every way the code writes imports: `super::{…}` groups,
/// `super::x::Y`, `crate::{a::b}` and `crate::a::B`.
#[test]
fn a_planted_import_cycle_is_seen() {
    let file = |module: &[&str], text: &str| {
        let module: Vec<String> = module.iter().map(|part| (*part).to_owned()).collect();
        (module, (PathBuf::from("planted.rs"), text.to_owned()))
    };
    let group = BTreeMap::from([
        file(&["a"], ""),
        file(&["a", "x"], "use super::{y::Thing, z};"),
        file(&["a", "y"], "use super::{x::Other};"),
        file(&["a", "z"], ""),
    ]);
    assert_eq!(import_cycles(&group).len(), 1, "a super group");
    let crate_wide = BTreeMap::from([
        file(&["p"], "use crate::{q::Q};"),
        file(&["q"], "fn f() { crate::p::P::new(); }"),
    ]);
    assert_eq!(import_cycles(&crate_wide).len(), 1, "crate paths");
    let none = BTreeMap::from([
        file(&["a"], ""),
        file(&["a", "x"], "use super::y;"),
        file(&["a", "y"], "use super::z; // super::x is not named here"),
        file(&["a", "z"], ""),
    ]);
    assert!(
        import_cycles(&none).is_empty(),
        "{:?}",
        import_cycles(&none)
    );
}

#[test]
fn children_speak_upward_only_through_their_port() {
    // Everything that serves the agent or a command: children are below all of it.
    let above = [
        "session",
        "transport",
        "tasks",
        "meta_tools",
        "flat",
        "child_call",
        "child_offers",
        "toolboxes",
        "search",
        "shell",
        "cli",
        "check",
        "import",
        "install",
        "config_commands",
        "audit",
    ];
    let library = library();
    for top in above {
        assert!(
            library.contains_key(&vec![top.to_owned()]),
            "no module `{top}` in src/ any more: rename it here"
        );
    }
    for (module, (path, text)) in library {
        if module.first().is_none_or(|top| top != "children") {
            continue;
        }
        for named in crate_paths(&code(&text)) {
            assert!(
                !above.contains(&named[0].as_str()),
                "{} names crate::{}: children speak to the agent side only through agent_port",
                path.display(),
                named.join("::")
            );
        }
    }
}

#[test]
fn transports_serve_no_request_themselves() {
    for (module, (path, text)) in library() {
        if module.first().is_some_and(|top| top == "transport") {
            assert!(
                !code(&text).contains("ServerHandler for"),
                "{} implements rmcp's ServerHandler: requests are the session's (src/session)",
                path.display()
            );
        }
    }
}

/// A file is what a reader takes in at once: the code, its tests and the benchmark's. Unit tests
/// that push one over go in a sibling; integration tests are split by subject.
#[test]
fn files_stay_under_400_lines() {
    let mut over = Vec::new();
    let files = ["src", "tests", "benches"].into_iter().flat_map(|folder| {
        rust_files(folder)
            .into_iter()
            .map(move |file| (folder, file))
    });
    for (folder, (relative, path)) in files {
        let lines = fs::read_to_string(&path).expect("reads").lines().count();
        let name = format!("{folder}/{}", relative.display());
        if lines > 400 {
            over.push(format!("{name}: {lines} lines"));
        }
    }
    over.sort();
    assert!(
        over.is_empty(),
        "files over 400 lines:\n{}",
        over.join("\n")
    );
}

/// `unsafe_code` is `deny` for the three audited calls ARCHITECTURE.md names; a fourth
/// `#[allow(unsafe_code)]` is a change to audit, and to say there.
#[test]
fn unsafe_code_is_allowed_exactly_where_audited() {
    let mut allowed: Vec<String> = sources()
        .into_iter()
        .filter(|(_, path)| {
            fs::read_to_string(path)
                .expect("reads")
                .contains("#[allow(unsafe_code)]")
        })
        .map(|(relative, _)| relative.display().to_string())
        .collect();
    allowed.sort();
    assert_eq!(
        allowed,
        [
            "children/process_tree/unix.rs",
            "main.rs",
            "resident_code.rs"
        ],
        "files with #[allow(unsafe_code)]"
    );
    let architecture = crate::docs::document("ARCHITECTURE.md");
    assert!(
        architecture.contains("three audited calls: `prctl`, `mallopt`, `madvise`"),
        "ARCHITECTURE.md names the audited calls"
    );
}
