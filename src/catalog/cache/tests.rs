use super::*;

fn tool(name: &str) -> ListedTool {
    let raw = serde_json::value::to_raw_value(&serde_json::json!({
        "name": name,
        "description": "d",
        "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}}},
        "execution": {"taskSupport": "optional"}
    }))
    .expect("raw");
    ListedTool::read(&raw).expect("a tool")
}

#[test]
fn a_written_catalog_reads_back_with_execution_and_capabilities() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = CacheFile {
        stem: dir.path().join("k"),
    };
    let capabilities = rmcp::model::ServerCapabilities::builder()
        .enable_prompts()
        .build();
    let offered = rmcp::model::ClientCapabilities::builder()
        .enable_elicitation()
        .build();
    let identity = ListIdentity {
        server_info: None,
        capabilities: Some(&capabilities),
        protocol_version: Some("2025-11-25"),
        offer: Offer::of(&offered),
    };
    file.write("fs", &identity, &[tool("a"), tool("b")]);
    assert!(dir.path().join("k-e.json").exists());
    // A list given to a client that offered something else is not this offer's.
    assert!(file.read("fs", Offer::default()).is_none());
    let read = file.read("fs", Offer::of(&offered)).expect("remembered");
    let names: Vec<&str> = read.tools.iter().map(|tool| &*tool.tool.name).collect();
    assert_eq!(names, ["a", "b"]);
    assert_eq!(
        read.tools[0].execution.as_deref().map(|raw| raw.get()),
        Some(r#"{"taskSupport":"optional"}"#)
    );
    assert!(read.capabilities.expect("capabilities").prompts.is_some());
    assert!(read.listed_at.elapsed().expect("in the past") < Duration::from_secs(60));
}

#[test]
fn files_unused_past_the_limit_are_swept_and_a_read_counts_as_use() {
    let dir = tempfile::tempdir().expect("temp dir");
    let old = SystemTime::now() - STALE_AFTER - Duration::from_secs(60);
    let file = CacheFile {
        stem: dir.path().join("read"),
    };
    file.write("fs", &ListIdentity::default(), &[tool("a")]);
    for name in ["read.json", "stale.json", "notes.txt"] {
        let path = dir.path().join(name);
        if !path.exists() {
            std::fs::write(&path, b"{}").expect("write");
        }
        std::fs::File::options()
            .write(true)
            .open(&path)
            .and_then(|opened| opened.set_modified(old))
            .expect("age the file");
    }
    std::fs::write(dir.path().join("fresh.json"), b"{}").expect("write");
    assert!(file.read("fs", Offer::default()).is_some());
    assert_eq!(sweep(dir.path(), SystemTime::now()), 1);
    let mut left: Vec<String> = std::fs::read_dir(dir.path())
        .expect("folder")
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["fresh.json", "notes.txt", "read.json"]);
}

#[test]
fn a_file_that_does_not_read_is_absent_and_clear_removes_only_catalog_files() {
    let dir = tempfile::tempdir().expect("temp dir");
    let folder = dir.path().join("catalog");
    std::fs::create_dir(&folder).expect("folder");
    let file = CacheFile {
        stem: folder.join("k"),
    };
    let path = folder.join("k.json");
    std::fs::write(&path, b"{\"format\": 1, \"tools\": [").expect("write");
    assert!(file.read("fs", Offer::default()).is_none());
    std::fs::write(
        &path,
        br#"{"format": 9, "server": "fs", "listedAt": 0, "tools": []}"#,
    )
    .expect("write");
    assert!(
        file.read("fs", Offer::default()).is_none(),
        "another format is not read"
    );
    std::fs::write(folder.join("notes.txt"), b"mine").expect("write");
    assert_eq!(clear_folder(&folder).expect("cleared"), 1);
    assert!(folder.join("notes.txt").exists(), "not toolshelf's: kept");
    assert_eq!(clear_folder(&dir.path().join("none")).expect("nothing"), 0);
}
