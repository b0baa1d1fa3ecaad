//! The package descriptions under `packaging/` agree with each other and with `Cargo.toml`: one
//! version everywhere, one MCP Registry name, the names the registry entry lists are the
//! packages' own; and `server.json` is valid against the registry's schema (a pinned copy).

use std::path::Path;

use serde_json::Value;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn read(path: &str) -> String {
    std::fs::read_to_string(Path::new(ROOT).join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn json(path: &str) -> Value {
    serde_json::from_str(&read(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn crate_version() -> String {
    env!("CARGO_PKG_VERSION").to_owned()
}

/// The value of `key = "…"` in the `[project]` table of pyproject.toml.
fn pyproject(key: &str) -> String {
    let text = read("pyproject.toml");
    let project = text.split("[project]").nth(1).expect("[project]");
    project
        .lines()
        .find_map(|line| line.strip_prefix(&format!("{key} = \"")))
        .and_then(|rest| rest.strip_suffix('"'))
        .unwrap_or_else(|| panic!("pyproject.toml has no [project] {key}"))
        .to_owned()
}

#[test]
fn every_package_has_the_crate_s_version_and_the_registry_s_names() {
    let version = crate_version();
    let launcher = json("packaging/npm/toolshelf-mcp/package.json");
    let platforms = json("packaging/platforms.json");
    let bundle = json("packaging/mcpb/manifest.json");
    let server = json("packaging/registry/server.json");

    assert_eq!(launcher["version"], version.as_str());
    // The launcher depends on each platform's package (scripts/stage_packages.py names them so),
    // at the same version.
    let mut expected = serde_json::Map::new();
    for platform in platforms["platforms"].as_array().expect("platforms") {
        let node = platform["node"].as_str().expect("node");
        expected.insert(format!("toolshelf-mcp-{node}"), version.as_str().into());
    }
    assert_eq!(
        launcher["optionalDependencies"],
        Value::Object(expected),
        "packaging/npm/toolshelf-mcp/package.json's optionalDependencies: one per platform of packaging/platforms.json"
    );
    assert_eq!(bundle["version"], version.as_str());
    assert_eq!(server["version"], version.as_str());
    // pyproject's version is dynamic: maturin takes Cargo.toml's.
    assert!(read("pyproject.toml").contains("dynamic = [\"version\"]"));

    let name = server["name"].as_str().expect("server.json name");
    assert_eq!(
        launcher["mcpName"], name,
        "npm proves ownership with mcpName"
    );
    assert!(
        read("packaging/pypi/README.md").contains(&format!("mcp-name: {name}")),
        "PyPI proves ownership with an mcp-name line in the README"
    );

    let packages = server["packages"].as_array().expect("packages");
    for package in packages {
        assert_eq!(package["version"], version.as_str(), "{package}");
        let identifier = package["identifier"].as_str().expect("identifier");
        match package["registryType"].as_str() {
            Some("npm") => assert_eq!(identifier, launcher["name"]),
            Some("pypi") => assert_eq!(identifier, pyproject("name")),
            Some("mcpb") => assert!(
                identifier.ends_with(&format!("/v{version}/toolshelf-{version}-linux-x64.mcpb")),
                "{identifier}"
            ),
            other => panic!("a package of registry type {other:?}"),
        }
    }
    let kinds: Vec<&str> = packages
        .iter()
        .filter_map(|p| p["registryType"].as_str())
        .collect();
    assert_eq!(kinds, ["npm", "pypi", "mcpb"]);
}

#[test]
fn server_json_is_valid_against_the_registry_s_schema() {
    let schema = json("packaging/registry/server.schema.json");
    let validator = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft7)
        .should_validate_formats(true)
        .build(&schema)
        .expect("the registry's schema compiles");
    let server = json("packaging/registry/server.json");
    let errors: Vec<String> = validator
        .iter_errors(&server)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");

    // The schema does catch what the registry refuses.
    let mut wrong = server.clone();
    wrong["packages"][0]["transport"]["type"] = "pipe".into();
    wrong["packages"][1]["version"] = "latest".into();
    assert!(!validator.is_valid(&wrong));
    assert_eq!(
        schema["$id"], server["$schema"],
        "server.json names the pinned schema"
    );
}

#[test]
fn the_bundle_manifest_runs_the_binary_it_ships_on_the_user_s_config() {
    let bundle = json("packaging/mcpb/manifest.json");
    let server = &bundle["server"];
    assert_eq!(server["type"], "binary");
    let entry = server["entry_point"].as_str().expect("entry_point");
    assert_eq!(
        server["mcp_config"]["command"],
        format!("${{__dirname}}/{entry}")
    );
    assert_eq!(
        server["mcp_config"]["args"],
        serde_json::json!(["serve", "--config", "${user_config.config}"])
    );
    assert_eq!(bundle["user_config"]["config"]["required"], true);
}
