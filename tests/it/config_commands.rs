//! `toolshelf init`, `add` and `remove` on a config file in a folder of the test's own (the
//! default `./toolboxes.json`, a path without a folder), and the shell completion of the names
//! in it.

use std::path::Path;

use crate::harness::{fixture_bin, fresh_cache, toolshelf_std};

/// `toolshelf` in `folder`, with a catalog of its own in `cache` and the default config there.
fn toolshelf_in(folder: &Path, cache: &Path) -> std::process::Command {
    let mut command = toolshelf_std();
    command
        .current_dir(folder)
        .env("XDG_CACHE_HOME", cache)
        .env_remove("TOOLSHELF_CONFIG");
    command
}

/// `toolshelf ARGS` in `folder`; (exit code, stdout).
fn run_in(folder: &Path, cache: &Path, args: &[&str]) -> (i32, String) {
    let output = toolshelf_in(folder, cache)
        .args(args)
        .output()
        .expect("run toolshelf");
    let said = String::from_utf8_lossy(&output.stdout).into_owned();
    (output.status.code().unwrap_or(-1), said)
}

/// What bash's completion script asks toolshelf for the word at `index` of `words`.
fn completions(folder: &Path, cache: &Path, index: usize, words: &[&str]) -> Vec<String> {
    let output = toolshelf_in(folder, cache)
        .arg("--")
        .args(words)
        .env("COMPLETE", "bash")
        .env("_CLAP_IFS", "\n")
        .env("_CLAP_COMPLETE_INDEX", index.to_string())
        .env("_CLAP_COMPLETE_COMP_TYPE", "9")
        .env("_CLAP_COMPLETE_SPACE", "true")
        .output()
        .expect("run toolshelf");
    assert!(output.status.success(), "{output:?}");
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::to_owned)
        .filter(|word| !word.starts_with('-'))
        .collect()
}

#[test]
fn init_writes_a_starter_that_loads_and_keeps_an_existing_file() {
    let folder = tempfile::tempdir().expect("folder");
    let cache = fresh_cache();
    let (code, said) = run_in(folder.path(), &cache, &["init"]);
    assert_eq!(code, 0, "{said}");
    assert!(
        said.starts_with("wrote toolboxes.json: one toolbox, `memory`"),
        "{said}"
    );
    let path = folder.path().join("toolboxes.json");
    let config = toolshelf::config::load(&path).expect("the starter loads");
    assert_eq!(config.toolboxes.keys().collect::<Vec<_>>(), ["memory"]);

    let (code, said) = run_in(folder.path(), &cache, &["init"]);
    assert_eq!(
        (code, said.as_str()),
        (
            2,
            "error: toolboxes.json exists; edit it (`toolshelf add` adds a server), or pass --force to replace it\n"
        )
    );
}

#[test]
fn add_and_remove_edit_the_config_in_place_and_refuse_a_broken_one() {
    let folder = tempfile::tempdir().expect("folder");
    let cache = fresh_cache();
    let path = folder.path().join("toolboxes.json");
    // The user's own layout: four spaces, a key order of their own.
    let before = "{\n    \"toolboxes\": {\n        \"notes\": {\n            \"mcpServers\": {\"n\": {\"command\": \"true\"}},\n            \"description\": \"Notes\"\n        }\n    }\n}\n";
    std::fs::write(&path, before).expect("write");

    let fixture = fixture_bin();
    // A new toolbox without a description: the agent would choose it blind.
    let (code, said) = run_in(
        folder.path(),
        &cache,
        &["add", "dev", "fixture", "--", fixture],
    );
    assert_eq!(
        (code, said.as_str()),
        (
            2,
            "error: toolbox `dev` is new, and an agent chooses a toolbox by its description: add --description \"what its tools are for\" (e.g. --description \"Read and write the project's notes\"); nothing was changed\n"
        )
    );
    assert_eq!(std::fs::read_to_string(&path).expect("read"), before);
    let add = [
        "add",
        "dev",
        "fixture",
        "--description",
        "Development",
        "--",
        fixture,
    ];
    let (code, said) = run_in(folder.path(), &cache, &add);
    assert_eq!(
        (code, said.as_str()),
        (
            0,
            "added `fixture` to toolbox `dev` (a new toolbox) in toolboxes.json\n"
        )
    );
    let added = std::fs::read_to_string(&path).expect("read");
    let kept = "{\n    \"toolboxes\": {\n        \"notes\": {\n            \"mcpServers\": {\"n\": {\"command\": \"true\"}},\n            \"description\": \"Notes\"\n        },";
    assert!(added.starts_with(kept), "{added}");
    // The default config, a path with no folder: its server starts in the config's folder.
    let (code, said) = run_in(
        folder.path(),
        &cache,
        &["call", "dev", "fixture", "echo", "message=added"],
    );
    assert_eq!(code, 0, "{said}");
    assert!(said.contains("added"), "{said}");

    let (code, said) = run_in(folder.path(), &cache, &add);
    assert_eq!(code, 2);
    assert_eq!(
        said,
        "error: toolbox `dev` already has a server `fixture`; `toolshelf remove dev fixture` first to replace it\n"
    );
    let (code, said) = run_in(
        folder.path(),
        &cache,
        &["add", "dev", "web", "--url", "not a url"],
    );
    assert_eq!(code, 2, "{said}");
    assert!(
        said.starts_with("error: toolboxes.json not changed: the change would make these problems:\n  - toolboxes.dev.mcpServers.web.url: is not a URL"),
        "{said}"
    );
    assert_eq!(std::fs::read_to_string(&path).expect("read"), added);

    let (code, said) = run_in(folder.path(), &cache, &["remove", "dev", "fixture"]);
    assert_eq!(
        (code, said.as_str()),
        (
            0,
            "removed `fixture` and its toolbox `dev`, which had no other server, from toolboxes.json\n"
        )
    );
    assert_eq!(std::fs::read_to_string(&path).expect("read"), before);
    let (code, said) = run_in(folder.path(), &cache, &["remove", "notes", "x"]);
    assert_eq!(
        (code, said.as_str()),
        (
            2,
            "error: toolbox `notes` has no server `x` in toolboxes.json (its servers: n)\n"
        )
    );
}

#[test]
fn the_shell_completes_toolbox_server_and_remembered_tool_names() {
    let folder = tempfile::tempdir().expect("folder");
    let cache = fresh_cache();
    let add = [
        "add",
        "dev",
        "fixture",
        "--description",
        "Dev",
        "--",
        fixture_bin(),
    ];
    assert_eq!(run_in(folder.path(), &cache, &add).0, 0);
    let toolboxes = completions(folder.path(), &cache, 2, &["toolshelf", "call", ""]);
    assert_eq!(toolboxes, ["dev"]);
    let servers = completions(folder.path(), &cache, 3, &["toolshelf", "call", "dev", ""]);
    assert_eq!(servers, ["fixture"]);
    // No tool is offered before the server's tools were ever listed; nothing is started.
    let words = ["toolshelf", "call", "dev", "fixture", "ec"];
    assert!(completions(folder.path(), &cache, 4, &words).is_empty());
    assert_eq!(run_in(folder.path(), &cache, &["tools", "dev"]).0, 0);
    assert_eq!(completions(folder.path(), &cache, 4, &words), ["echo"]);
    let logins = completions(folder.path(), &cache, 2, &["toolshelf", "login", "d"]);
    assert_eq!(logins, ["dev/fixture"]);
}
