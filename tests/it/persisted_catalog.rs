//! The persisted catalog: real restarts of toolshelf over one cache folder. A second run opens
//! a toolbox from the remembered tools without starting its server (the fixture counts its
//! starts in a file), calls still work, a changed tool list is reported, a corrupt file is
//! survived, a changed launch spec misses, and no secret reaches the files.

use std::{
    os::unix::fs::PermissionsExt,
    path::{Path, PathBuf},
    process::Stdio,
};

use rmcp::model::CallToolResult;
use serde_json::{Value, json};

use crate::harness::{
    Shelf, error_text, eventually, fixture_bin, npm_server, text, toolshelf_std, write_config,
};

const SECRET: &str = "s3cret-value-42";

/// A config of one toolbox `dev` with the fixture as `fx`: it counts its starts in `starts`,
/// lists one more tool per line of `extra`, and gets a secret in its environment.
pub(crate) fn dev_config(starts: &Path, extra: &Path, catalog: Value, more_args: &[&str]) -> Value {
    let mut args = vec![
        "--starts-file".to_owned(),
        starts.display().to_string(),
        "--extra-tools-file".to_owned(),
        extra.display().to_string(),
    ];
    args.extend(more_args.iter().map(|arg| (*arg).to_owned()));
    json!({
        "catalog": catalog,
        "toolboxes": {"dev": {"description": "Development", "mcpServers": {
            "fx": {"command": fixture_bin(), "args": args, "env": {"FIXTURE_SECRET": SECRET}}
        }}}
    })
}

/// `toolshelf serve ARGS` on `config` with `cache` as the user's cache folder; its log goes to
/// the returned file.
pub(crate) async fn serve(
    cache: &Path,
    config: &Value,
    args: &[&str],
) -> (Shelf, tempfile::NamedTempFile) {
    let (dir, path) = write_config(config);
    let log = tempfile::NamedTempFile::new().expect("log file");
    let cache = cache.to_str().expect("utf-8");
    let env = [("XDG_CACHE_HOME", cache), ("RUST_LOG", "warn")];
    let stderr = Stdio::from(log.reopen().expect("log"));
    let shelf = crate::harness::spawn_with(dir, &path, &env, args, stderr).await;
    (shelf, log)
}

/// A folder with the user's cache folder (`cache`), the fixture's count of starts (`starts`)
/// and its extra tools (`extra`, holding `tools`, one name per line).
pub(crate) fn scene(tools: &str) -> (tempfile::TempDir, PathBuf, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let (cache, starts, extra) = (
        dir.path().join("cache"),
        dir.path().join("starts"),
        dir.path().join("extra"),
    );
    std::fs::write(&extra, tools).expect("write");
    (dir, cache, starts, extra)
}

pub(crate) fn started(path: &Path) -> usize {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .count()
}

pub(crate) fn opened(result: &CallToolResult) -> Value {
    assert_ne!(result.is_error, Some(true), "{}", text(result));
    result
        .structured_content
        .clone()
        .expect("structured content")
}

pub(crate) fn tool_names(server: &Value) -> Vec<String> {
    server["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|tool| tool["name"].as_str().expect("name").to_owned())
        .collect()
}

/// `toolshelf check` of the config at `path`, `cache` as the user's cache folder; it passes.
pub(crate) fn check(cache: &Path, path: &Path) {
    let checked = toolshelf_std()
        .args(["check", "--config"])
        .arg(path)
        .env("XDG_CACHE_HOME", cache)
        .output()
        .expect("run check");
    assert!(checked.status.success(), "{checked:?}");
}

pub(crate) fn catalog_files(cache: &Path) -> Vec<PathBuf> {
    let folder = cache.join("toolshelf").join("catalog");
    let Ok(entries) = std::fs::read_dir(folder) else {
        return Vec::new();
    };
    entries.flatten().map(|entry| entry.path()).collect()
}

#[tokio::test]
async fn a_second_run_opens_from_the_catalog_without_starting_the_server() {
    let (_dir, cache, starts, extra) = scene("old_tool\n");
    let mut config = dev_config(&starts, &extra, json!({"prestart": "firstCall"}), &[]);
    config["toolboxes"]["demo"] = json!({"mcpServers": {
        "everything": npm_server("mcp-server-everything", &["stdio"])
    }});

    let (shelf, _log) = serve(&cache, &config, &[]).await;
    let first = opened(&shelf.open("dev").await);
    assert_eq!(first["servers"][0]["catalog"], "live", "{first}");
    assert_eq!(first["servers"][0]["status"], "ready");
    assert_eq!(started(&starts), 1);
    let demo = opened(&shelf.open("demo").await);
    assert_eq!(demo["servers"][0]["catalog"], "live", "{demo}");
    shelf.close().await;

    let mut files = catalog_files(&cache);
    assert_eq!(files.len(), 2, "{files:?}");
    // The fixture's file is the one that names it.
    files.sort_by_key(|file| {
        !std::fs::read_to_string(file)
            .unwrap_or_default()
            .contains("old_tool")
    });
    let mode = |path: &Path| {
        std::fs::metadata(path)
            .expect("metadata")
            .permissions()
            .mode()
            & 0o777
    };
    assert_eq!(mode(&files[0]), 0o600, "owner-only file");
    assert_eq!(
        mode(files[0].parent().expect("folder")),
        0o700,
        "owner-only folder"
    );
    let written = std::fs::read_to_string(&files[0]).expect("read");
    assert!(
        !written.contains(SECRET),
        "an env value reached the catalog: {written}"
    );
    assert!(written.contains("old_tool"), "{written}");
    let written: Value = serde_json::from_str(&written).expect("JSON");
    assert_eq!(written["serverInfo"]["name"], "toolshelf-fixture");
    assert!(written["protocolVersion"].is_string(), "{written}");

    let (shelf, _log) = serve(&cache, &config, &[]).await;
    let second = opened(&shelf.open("dev").await);
    let server = &second["servers"][0];
    assert_eq!(server["catalog"], "cached", "{second}");
    assert!(server["catalogAge"].is_u64(), "{second}");
    assert_eq!(server["status"], "idle", "firstCall: nothing runs yet");
    assert_eq!(server["tools"], first["servers"][0]["tools"]);
    assert!(
        shelf.children().is_empty(),
        "a child was started: {:?}",
        shelf.children()
    );
    assert_eq!(started(&starts), 1, "no process started for the open");

    let echoed = shelf
        .use_tool("dev", "fx", "echo", json!({"message": "from the catalog"}))
        .await;
    assert!(
        text(&echoed).contains("from the catalog"),
        "{}",
        text(&echoed)
    );
    assert_eq!(started(&starts), 2, "the call started the server");

    let remembered = opened(&shelf.open("demo").await);
    assert_eq!(
        remembered["servers"][0]["catalog"], "cached",
        "{remembered}"
    );
    assert_eq!(
        remembered["servers"][0]["tools"],
        demo["servers"][0]["tools"]
    );
    let echoed = shelf
        .use_tool(
            "demo",
            "everything",
            "echo",
            json!({"message": "remembered"}),
        )
        .await;
    assert!(text(&echoed).contains("remembered"), "{}", text(&echoed));
    shelf.close().await;
}

#[tokio::test]
async fn a_changed_tool_list_is_reported_and_persisted() {
    let (_dir, cache, starts, extra) = scene("old_tool\n");
    // The default: servers start in the background behind a remembered answer.
    let config = dev_config(&starts, &extra, json!({}), &[]);
    let (shelf, _log) = serve(&cache, &config, &[]).await;
    opened(&shelf.open("dev").await);
    shelf.close().await;

    std::fs::write(&extra, "new_tool\n").expect("write");
    let (shelf, _log) = serve(&cache, &config, &[]).await;
    let answered = opened(&shelf.open("dev").await);
    let server = &answered["servers"][0];
    assert_eq!(server["catalog"], "cached", "{answered}");
    assert_eq!(server["status"], "starting", "{answered}");
    assert!(tool_names(server).contains(&"old_tool".to_owned()));
    eventually("the background start", || async {
        (started(&starts) == 2).then_some(())
    })
    .await;

    let gone = shelf.use_tool("dev", "fx", "old_tool", json!({})).await;
    assert_eq!(gone.is_error, Some(true));
    let message = error_text(&gone);
    assert!(
        message.contains("Tool 'old_tool' not found in server 'fx'")
            && message.contains("new_tool"),
        "{message}"
    );

    let reopened = opened(&shelf.open("dev").await);
    let server = &reopened["servers"][0];
    assert_eq!(server["catalog"], "live", "{reopened}");
    assert_eq!(
        server["changes"],
        json!({"added": ["new_tool"], "removed": ["old_tool"]}),
        "{reopened}"
    );
    let again = opened(&shelf.open("dev").await);
    assert!(
        again["servers"][0].get("changes").is_none(),
        "told once: {again}"
    );
    shelf.close().await;

    let (shelf, _log) = serve(&cache, &config, &[]).await;
    let third = opened(&shelf.open("dev").await);
    assert_eq!(third["servers"][0]["catalog"], "cached");
    let names = tool_names(&third["servers"][0]);
    assert!(
        names.contains(&"new_tool".to_owned()) && !names.contains(&"old_tool".to_owned()),
        "{names:?}"
    );
    shelf.close().await;
}

#[tokio::test]
async fn check_refreshes_a_corrupt_file_is_survived_a_changed_spec_misses_and_the_cache_can_be_off()
{
    let (dir, cache, starts, extra) = scene("");
    let config = dev_config(&starts, &extra, json!({}), &[]);
    let (_config_dir, path) = write_config(&config);
    check(&cache, &path);
    let files = catalog_files(&cache);
    assert_eq!(files.len(), 1, "check wrote the catalog: {files:?}");

    std::fs::write(&files[0], b"{\"format\": 1, \"tools\": [tr").expect("corrupt it");
    let (shelf, log) = serve(&cache, &config, &[]).await;
    let live = opened(&shelf.open("dev").await);
    assert_eq!(live["servers"][0]["catalog"], "live", "{live}");
    shelf.close().await;
    let logged = std::fs::read_to_string(log.path()).expect("log");
    assert!(logged.contains("does not read"), "{logged}");
    let rewritten: Value =
        serde_json::from_slice(&std::fs::read(&files[0]).expect("read")).expect("rewritten whole");
    assert!(rewritten["tools"].is_array());

    let renamed = dev_config(&starts, &extra, json!({}), &["--name", "renamed"]);
    let (shelf, _log) = serve(&cache, &renamed, &[]).await;
    let missed = opened(&shelf.open("dev").await);
    assert_eq!(
        missed["servers"][0]["catalog"], "live",
        "another args: a miss"
    );
    shelf.close().await;
    assert_eq!(catalog_files(&cache).len(), 2);

    let empty = dir.path().join("empty-cache");
    let (shelf, _log) = serve(&empty, &config, &["--no-cache"]).await;
    assert_eq!(
        opened(&shelf.open("dev").await)["servers"][0]["catalog"],
        "live"
    );
    shelf.close().await;
    let off = dev_config(&starts, &extra, json!({"cache": false}), &[]);
    let (shelf, _log) = serve(&empty, &off, &[]).await;
    assert_eq!(
        opened(&shelf.open("dev").await)["servers"][0]["catalog"],
        "live"
    );
    shelf.close().await;
    assert!(
        catalog_files(&empty).is_empty(),
        "nothing written with the cache off"
    );

    let printed = toolshelf_std()
        .args(["cache", "path"])
        .env("XDG_CACHE_HOME", &cache)
        .output()
        .expect("cache path");
    assert_eq!(
        String::from_utf8_lossy(&printed.stdout).trim(),
        cache.join("toolshelf/catalog").display().to_string()
    );
    let cleared = toolshelf_std()
        .args(["cache", "clear"])
        .env("XDG_CACHE_HOME", &cache)
        .output()
        .expect("cache clear");
    assert!(cleared.status.success());
    assert!(
        String::from_utf8_lossy(&cleared.stderr).contains("removed 2 catalog file(s)"),
        "{cleared:?}"
    );
    assert!(catalog_files(&cache).is_empty());
}
