//! Search by meaning against a real child: a tool the fixture gains through `list_changed` is
//! found at the next search by a query that shares no word with it, `open_toolbox {query}`
//! and `toolshelf search` answer the same ranking, and `"search": {"meaning": false}` ranks by
//! words alone, as before the model: the same query finds nothing. The agent declares roots,
//! sampling and elicitation, as desktop clients do.

use serde_json::{Value, json};

use crate::{
    harness::{ClientKind, Shelf, eventually, serve_command_as, write_config},
    persisted_catalog::{dev_config, opened, scene},
    shell::run,
};

/// No word of it is in any tool of the fixture.
const QUERY: &str = "put on some tunes";
const GAINED: &str = "play_song\tStart music playback on the speaker\n";

fn names(tools: &Value) -> Vec<String> {
    tools
        .as_array()
        .expect("tools")
        .iter()
        .map(|tool| format!("{}/{}/{}", tool["toolbox"], tool["server"], tool["name"]))
        .map(|name| name.replace('"', ""))
        .collect()
}

/// `toolshelf serve` on `config` with the user's cache folder `cache`, to a capable client;
/// the config's folder goes with it.
async fn serve(cache: &std::path::Path, config: &Value) -> (Shelf, tempfile::TempDir) {
    let (dir, path) = write_config(config);
    let mut command = crate::harness::toolshelf();
    command
        .arg("serve")
        .arg("--config")
        .arg(&path)
        .env("XDG_CACHE_HOME", cache);
    let shelf = serve_command_as(command, std::process::Stdio::null(), ClientKind::Capable).await;
    (shelf, dir)
}

async fn agent_search(shelf: &Shelf, query: &str) -> Vec<String> {
    let answer = opened(&shelf.call("open_toolbox", json!({"query": query})).await);
    names(&answer["tools"])
}

fn shell_search(cache: &std::path::Path, config: &Value, query: &str) -> Vec<String> {
    let (_dir, path) = write_config(config);
    let path = path.to_str().expect("utf-8");
    let (code, out, err) = run(cache, &["search", "--config", path, "--json", query]);
    assert_eq!(code, 0, "{err}");
    names(&serde_json::from_str(&out).expect("JSON"))
}

#[tokio::test]
async fn a_tool_gained_by_list_changed_is_found_by_meaning_at_both_doors_and_not_by_words() {
    let (_dir, cache, starts, extra) = scene("get_forecast\tWeather conditions for a city\n");
    let config = dev_config(&starts, &extra, json!({}), &[]);
    let (shelf, _dir) = serve(&cache, &config).await;
    opened(&shelf.open("dev").await);
    let before = agent_search(&shelf, QUERY).await;
    assert!(
        !before.contains(&"dev/fx/play_song".to_owned()),
        "{before:?}"
    );

    std::fs::write(
        &extra,
        format!("get_forecast\tWeather conditions for a city\n{GAINED}"),
    )
    .expect("write");
    shelf
        .use_tool("dev", "fx", "notify_list_changed", json!({}))
        .await;
    let found = eventually(
        "the next search finds the gained tool by meaning",
        || async {
            let found = agent_search(&shelf, QUERY).await;
            (found.first().map(String::as_str) == Some("dev/fx/play_song")).then_some(found)
        },
    )
    .await;
    shelf.close().await;

    // The shell reads what the session's catalog kept and ranks it the same.
    assert_eq!(shell_search(&cache, &config, QUERY), found);

    // Words alone: nothing shares a word with the query, at either door.
    let mut words = config.clone();
    words["search"] = json!({"meaning": false});
    assert_eq!(shell_search(&cache, &words, QUERY), Vec::<String>::new());
    let (shelf, _dir) = serve(&cache, &words).await;
    assert_eq!(agent_search(&shelf, QUERY).await, Vec::<String>::new());
    // What words do match ranks as before: the tool whose name holds them first.
    assert_eq!(
        agent_search(&shelf, "play song")
            .await
            .first()
            .map(String::as_str),
        Some("dev/fx/play_song")
    );
    shelf.close().await;
}
