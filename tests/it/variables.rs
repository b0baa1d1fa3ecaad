//! Variables a config uses: one that is unset makes only the servers that use it unavailable,
//! with the fix, and a server's `envFile` supplies variables for it and its child.

use serde_json::json;

use crate::harness::{config, error_text, fixture, fixture_bin, start_logged, text};

#[tokio::test]
async fn an_unset_variable_makes_only_its_server_unavailable_and_is_said_once() {
    let mut needs = fixture(&[]);
    needs["env"] = json!({"TOKEN": "${TOOLSHELF_TEST_NEVER_SET}"});
    let config = config(&[
        ("gh", "Needs a token", json!({ "github": needs.clone() })),
        (
            "dev",
            "Development",
            json!({ "fixture": fixture(&[]), "needs": needs }),
        ),
    ]);
    let (shelf, log) = start_logged(&config, None).await;

    // A toolbox of other servers works as ever.
    let opened = shelf.open("dev").await;
    assert_ne!(opened.is_error, Some(true), "{}", text(&opened));
    let listed: serde_json::Value = serde_json::from_str(&text(&opened)).expect("JSON");
    let needs = listed["servers"]
        .as_array()
        .and_then(|servers| servers.iter().find(|server| server["name"] == "needs"))
        .unwrap_or_else(|| panic!("no server needs in {listed}"));
    assert_eq!(needs["status"], json!("failed"), "{listed}");
    let fix = "variable TOOLSHELF_TEST_NEVER_SET (in env.TOKEN) is not set: set TOOLSHELF_TEST_NEVER_SET in toolshelf's environment, in the client's env block for toolshelf, or in an envFile of this server (or write ${TOOLSHELF_TEST_NEVER_SET:-default} in the config)";
    assert_eq!(needs["error"], json!(fix), "{listed}");
    crate::docs::assert_quoted(
        &fix.replace("TOOLSHELF_TEST_NEVER_SET", "GITHUB_TOKEN")
            .replace("env.TOKEN", "env.GITHUB_PERSONAL_ACCESS_TOKEN"),
    );
    let echoed = shelf
        .use_tool("dev", "fixture", "echo", json!({"message": "m"}))
        .await;
    assert_ne!(echoed.is_error, Some(true), "{}", text(&echoed));
    let refused = shelf.use_tool("dev", "needs", "echo", json!({})).await;
    assert_eq!(
        error_text(&refused),
        format!(
            "Error executing tool 'echo' in server 'needs' (toolbox 'dev'): the server is not available: it cannot start: {fix}"
        )
    );
    // A toolbox whose only server is unavailable says why, and so does every try.
    for _ in 0..2 {
        let gh = shelf.open("gh").await;
        assert_eq!(gh.is_error, Some(true));
        assert!(
            error_text(&gh).contains(&format!("- github: {fix}")),
            "{}",
            error_text(&gh)
        );
    }
    shelf.close().await;
    let logged = std::fs::read_to_string(log.path()).expect("log");
    // Once per server at start, never per open or call.
    assert_eq!(
        logged
            .matches("TOOLSHELF_TEST_NEVER_SET (in env.TOKEN)")
            .count(),
        2,
        "{logged}"
    );
    assert!(!logged.contains("failed to start"), "{logged}");
}

#[tokio::test]
async fn an_env_file_gives_variables_to_the_config_and_to_the_child() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("secrets.env"),
        "# for the fixture\nFROM_FILE=from the file\nexport ONLY_IN_FILE='kept'\nBOTH=file\n",
    )
    .expect("write the env file");
    let config = config(&[(
        "dev",
        "Development",
        json!({ "fixture": {
            "command": fixture_bin(),
            "envFile": "secrets.env",
            "env": { "EXPANDED": "${FROM_FILE}!", "BOTH": "config" },
        }}),
    )]);
    let path = dir.path().join("toolboxes.json");
    std::fs::write(&path, config.to_string()).expect("write the config");
    let shelf = crate::harness::start_at(dir, &path, &[]).await;
    shelf.open("dev").await;
    for (name, value) in [
        ("EXPANDED", json!("from the file!")),
        ("ONLY_IN_FILE", json!("kept")),
        ("BOTH", json!("config")),
    ] {
        let said = shelf
            .use_tool("dev", "fixture", "env", json!({ "name": name }))
            .await;
        assert_eq!(text(&said), value.to_string(), "{name}");
    }
    shelf.close().await;
}
