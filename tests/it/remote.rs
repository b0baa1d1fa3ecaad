//! Remote children: servers reached over streamable HTTP and the legacy HTTP+SSE transport,
//! beside a stdio child in one toolbox. The servers are real: server-everything in its HTTP
//! modes (the same pinned npm package the stdio tests run) and a header-checking server written
//! with the Python `mcp` SDK.

use serde_json::{Value, json};

use crate::harness::{
    DEADLINE, RawClient, config, free_port, interop_dir, npm_server, opened_tools, python_env,
    write_config,
};

/// A server listening on a loopback port, restartable on the same port.
pub(crate) struct HttpServer {
    program: String,
    args: Vec<String>,
    pub(crate) port: u16,
    path: &'static str,
    /// More of the server's environment.
    env: Vec<(String, String)>,
    /// "http", or "https" for a server given a certificate.
    scheme: &'static str,
    process: Option<tokio::process::Child>,
}

impl HttpServer {
    /// server-everything in `mode` (`streamableHttp` or `sse`).
    pub(crate) async fn everything(mode: &str) -> Self {
        let script = interop_dir()
            .join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
        let path = if mode == "sse" { "/sse" } else { "/mcp" };
        let mut server = Self {
            program: "node".into(),
            args: vec![script.display().to_string(), mode.into()],
            port: free_port(),
            path,
            env: Vec::new(),
            scheme: "http",
            process: None,
        };
        server.spawn().await;
        server
    }

    /// The header-checking Python server, accepting `token`.
    pub(crate) async fn header_checker(token: &str) -> Self {
        Self::python("header_server.py", token).await
    }

    /// The OAuth-protected Python server with its authorization server; access tokens live
    /// `lifetime` seconds.
    pub(crate) async fn oauth_protected(lifetime: &str) -> Self {
        Self::python("oauth_server.py", lifetime).await
    }

    /// A server of `tests/python/`, run as `SCRIPT PORT ARGUMENT`.
    pub(crate) async fn python(script: &str, argument: &str) -> Self {
        let mut server = Self::python_unstarted(script, argument);
        server.spawn().await;
        server
    }

    /// The header-checking server over TLS, with the certificate in `certs` (make_cert.py).
    pub(crate) async fn header_checker_over_tls(token: &str, certs: &std::path::Path) -> Self {
        let mut server = Self::python_unstarted("header_server.py", token);
        let file = |name: &str| certs.join(name).display().to_string();
        server.env = vec![
            ("TLS_CERT".into(), file("server.pem")),
            ("TLS_KEY".into(), file("server.key")),
        ];
        server.scheme = "https";
        server.spawn().await;
        server
    }

    pub(crate) fn python_unstarted(script: &str, argument: &str) -> Self {
        let script = format!("{}/tests/python/{script}", env!("CARGO_MANIFEST_DIR"));
        let port = free_port();
        Self {
            program: python_env().join("bin/python").display().to_string(),
            args: vec![script, port.to_string(), argument.into()],
            port,
            path: "/mcp",
            env: Vec::new(),
            scheme: "http",
            process: None,
        }
    }

    pub(crate) async fn spawn(&mut self) {
        let process = tokio::process::Command::new(&self.program)
            .args(&self.args)
            .env("PORT", self.port.to_string())
            .envs(self.env.iter().cloned())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn the HTTP server");
        self.process = Some(process);
        assert!(
            crate::harness::launch::until_listening(self.port, DEADLINE).await,
            "{} did not listen on port {} in time",
            self.program,
            self.port
        );
    }

    pub(crate) async fn kill(&mut self) {
        if let Some(mut process) = self.process.take() {
            process.kill().await.expect("kill the HTTP server");
        }
    }

    pub(crate) fn url(&self) -> String {
        format!("{}://127.0.0.1:{}{}", self.scheme, self.port, self.path)
    }
}

pub(crate) fn use_tool(server: &str, name: &str, arguments: Value) -> Value {
    json!({
        "name": "use_tool",
        "arguments": {"tool": {"toolbox": "mix", "server": server, "name": name}, "arguments": arguments}
    })
}

/// Calls server-everything's `echo` through toolshelf and returns its text.
pub(crate) async fn echo(shelf: &mut RawClient, id: u64, server: &str, message: &str) -> String {
    let call = use_tool(server, "echo", json!({ "message": message }));
    let (_, answer) = shelf.request(id, "tools/call", call).await;
    result_text(&answer)
}

pub(crate) fn result_text(answer: &Value) -> String {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a text result: {answer}"))
        .to_owned()
}

#[tokio::test]
async fn a_toolbox_mixes_stdio_streamable_http_and_sse_servers() {
    let web = HttpServer::everything("streamableHttp").await;
    let old = HttpServer::everything("sse").await;
    let mut shelf = RawClient::start(&config(&[(
        "mix",
        "stdio, streamable HTTP and SSE",
        json!({
            "local": npm_server("mcp-server-everything", &[]),
            "web": {"type": "http", "url": web.url()},
            "old": {"type": "sse", "url": old.url()},
        }),
    )]))
    .await;
    let opened = shelf.open(1, "mix").await;
    assert_eq!(opened["result"]["isError"], json!(false), "{opened}");
    let opened: Value =
        serde_json::from_str(&result_text(&opened)).expect("open_toolbox answers JSON");
    let tools = opened_tools(&opened);
    for server in ["local", "web", "old"] {
        assert!(
            tools
                .iter()
                .any(|tool| tool["server"] == server && tool["name"] == "echo"),
            "{server} is missing from {opened}"
        );
    }

    // The same call gives the same result whichever transport carries it.
    let mut echoes = Vec::new();
    for (id, server) in [(2, "local"), (3, "web"), (4, "old")] {
        let call = use_tool(server, "echo", json!({"message": "héllo \"remote\""}));
        let (_, answer) = shelf.request(id, "tools/call", call).await;
        echoes.push(answer["result"].clone());
    }
    assert_eq!(echoes[0], echoes[1]);
    assert_eq!(echoes[0], echoes[2]);

    // Progress comes back under the agent's token over both HTTP transports.
    for (id, server) in [(5, "web"), (6, "old")] {
        let mut call = use_tool(
            server,
            "trigger-long-running-operation",
            json!({"duration": 1, "steps": 3}),
        );
        call["_meta"] = json!({"progressToken": id * 10});
        let (before, answer) = shelf.request(id, "tools/call", call).await;
        assert_ne!(answer["result"]["isError"], json!(true), "{answer}");
        let progress: Vec<&Value> = before
            .iter()
            .filter(|message| message["method"] == "notifications/progress")
            .collect();
        assert!(!progress.is_empty(), "{server}: no progress in {before:?}");
        assert!(
            progress
                .iter()
                .all(|notice| notice["params"]["progressToken"] == json!(id * 10)),
            "{progress:?}"
        );
    }

    // A cancelled call gets no answer, and the server still serves the next one.
    let call = use_tool(
        "web",
        "trigger-long-running-operation",
        json!({"duration": 30, "steps": 30}),
    );
    let request = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": call});
    shelf.send_line(&request.to_string()).await;
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7, "reason": "test"}});
    shelf.send_line(&cancel.to_string()).await;
    let (before, answer) = shelf
        .request(
            8,
            "tools/call",
            use_tool("web", "echo", json!({"message": "after"})),
        )
        .await;
    assert!(
        before.iter().all(|message| message["id"] != json!(7)),
        "the cancelled call was answered: {before:?}"
    );
    assert_eq!(result_text(&answer), "Echo: after");
}

#[tokio::test]
async fn a_dead_remote_server_fails_the_call_at_once_and_the_next_call_reconnects() {
    let mut web = HttpServer::everything("streamableHttp").await;
    let servers = json!({
        // The call timeout is longer than the test's deadline: the call must fail on the lost
        // connection, not on its timeout.
        "web": {"url": web.url(), "callTimeout": 600},
    });
    let mut shelf = RawClient::start(&config(&[("mix", "", servers)])).await;
    let opened = shelf.open(1, "mix").await;
    assert_eq!(opened["result"]["isError"], json!(false), "{opened}");

    let mut call = use_tool(
        "web",
        "trigger-long-running-operation",
        json!({"duration": 60, "steps": 60}),
    );
    call["_meta"] = json!({"progressToken": "long"});
    let request = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call});
    shelf.send_line(&request.to_string()).await;
    // The server is working on the call once it reports progress: then it dies.
    loop {
        let message = shelf.next().await;
        if message["method"] == "notifications/progress" {
            break;
        }
    }
    web.kill().await;
    let failed = loop {
        let message = shelf.next().await;
        if message["id"] == json!(2) {
            break message;
        }
    };
    assert_eq!(failed["result"]["isError"], json!(true), "{failed}");
    let text = result_text(&failed);
    assert!(
        text.contains(&format!("the connection to {} was lost", web.url())),
        "{text}"
    );

    web.spawn().await;
    assert_eq!(echo(&mut shelf, 3, "web", "back").await, "Echo: back");
}

#[tokio::test]
async fn a_restarted_remote_server_gets_a_new_session_without_a_failed_call() {
    let mut web = HttpServer::everything("streamableHttp").await;
    let mut shelf =
        RawClient::start(&config(&[("mix", "", json!({"web": {"url": web.url()}}))])).await;
    let opened = shelf.open(1, "mix").await;
    assert_eq!(opened["result"]["isError"], json!(false), "{opened}");
    assert_eq!(echo(&mut shelf, 2, "web", "one").await, "Echo: one");
    // The new process knows no session: toolshelf opens a new one for the next call.
    web.kill().await;
    web.spawn().await;
    assert_eq!(echo(&mut shelf, 3, "web", "two").await, "Echo: two");
}

#[tokio::test]
async fn headers_reach_a_remote_server_and_a_refused_token_is_reported_without_its_value() {
    let token = "s3cret-token-value";
    let checker = HttpServer::header_checker(token).await;
    let servers = json!({
        "good": {
            "url": checker.url(),
            "headers": {"Authorization": "Bearer ${TS_TEST_TOKEN}", "X-Tag": "${TS_TEST_TAG:-untagged}"},
        },
        "bad": {"url": checker.url(), "headers": {"Authorization": "Bearer wrong-t0ken-value"}},
    });
    let (dir, path) = write_config(&config(&[("mix", "", servers)]));
    let mut command = crate::harness::toolshelf();
    command
        .args(["serve", "--config"])
        .arg(&path)
        .env("RUST_LOG", "warn")
        .env("TS_TEST_TOKEN", token)
        .env("TS_TEST_TAG", "tagged");
    let mut shelf = RawClient::spawn(command, Some(dir), "2025-06-18").await;
    let opened = shelf.open(1, "mix").await;
    let shown = opened.to_string();
    assert!(shown.contains("HTTP 401 Unauthorized"), "{shown}");
    assert!(!shown.contains("wrong-t0ken-value"), "{shown}");
    assert!(!shown.contains(token), "{shown}");

    let (_, answer) = shelf
        .request(2, "tools/call", use_tool("good", "seen_headers", json!({})))
        .await;
    let seen = structured(&answer);
    assert_eq!(seen["x-tag"], json!("tagged"), "{answer}");
    assert_eq!(seen["authorization"], json!(format!("Bearer {token}")));
    assert_eq!(
        seen["mcp-protocol-version"].as_str().map(str::len),
        Some(10)
    );
    assert!(seen["mcp-session-id"].is_string(), "{seen}");
}

/// A tool's structured result (or its text, as JSON) from a `tools/call` answer.
pub(crate) fn structured(answer: &Value) -> Value {
    let content = &answer["result"]["structuredContent"];
    let value = if content.is_null() {
        serde_json::from_str(&result_text(answer)).expect("a JSON result")
    } else {
        content.clone()
    };
    value.get("result").cloned().unwrap_or(value)
}
