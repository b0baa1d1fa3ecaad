//! Remote children: servers reached over streamable HTTP and the legacy HTTP+SSE transport,
//! beside a stdio child in one toolbox. The servers are real: server-everything in its HTTP
//! modes (the same pinned npm package the stdio tests run) and a header-checking server written
//! with the Python `mcp` SDK.

use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::{
    DEADLINE, RawClient, config, free_port, interop_dir, npm_server, opened_tools, python_env,
    write_config,
};

/// A server listening on a loopback port, restartable on the same port.
struct HttpServer {
    program: String,
    args: Vec<String>,
    port: u16,
    path: &'static str,
    /// More of the server's environment.
    env: Vec<(String, String)>,
    /// "http", or "https" for a server given a certificate.
    scheme: &'static str,
    process: Option<tokio::process::Child>,
}

impl HttpServer {
    /// server-everything in `mode` (`streamableHttp` or `sse`).
    async fn everything(mode: &str) -> Self {
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
    async fn header_checker(token: &str) -> Self {
        Self::python("header_server.py", token).await
    }

    /// The OAuth-protected Python server with its authorization server; access tokens live
    /// `lifetime` seconds.
    async fn oauth_protected(lifetime: &str) -> Self {
        Self::python("oauth_server.py", lifetime).await
    }

    /// A server of `tests/python/`, run as `SCRIPT PORT ARGUMENT`.
    async fn python(script: &str, argument: &str) -> Self {
        let mut server = Self::python_unstarted(script, argument);
        server.spawn().await;
        server
    }

    /// The header-checking server over TLS, with the certificate in `certs` (make_cert.py).
    async fn header_checker_over_tls(token: &str, certs: &std::path::Path) -> Self {
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

    fn python_unstarted(script: &str, argument: &str) -> Self {
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

    async fn spawn(&mut self) {
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

    async fn kill(&mut self) {
        if let Some(mut process) = self.process.take() {
            process.kill().await.expect("kill the HTTP server");
        }
    }

    fn url(&self) -> String {
        format!("{}://127.0.0.1:{}{}", self.scheme, self.port, self.path)
    }
}

fn use_tool(server: &str, name: &str, arguments: Value) -> Value {
    json!({
        "name": "use_tool",
        "arguments": {"tool": {"toolbox": "mix", "server": server, "name": name}, "arguments": arguments}
    })
}

/// Calls server-everything's `echo` through toolshelf and returns its text.
async fn echo(shelf: &mut RawClient, id: u64, server: &str, message: &str) -> String {
    let call = use_tool(server, "echo", json!({ "message": message }));
    let (_, answer) = shelf.request(id, "tools/call", call).await;
    result_text(&answer)
}

fn result_text(answer: &Value) -> String {
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

    let call = use_tool(
        "web",
        "trigger-long-running-operation",
        json!({"duration": 60, "steps": 60}),
    );
    let request = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call});
    shelf.send_line(&request.to_string()).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
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

/// Runs `toolshelf login` as a user would: reads the authorization URL it prints and opens it
/// (the test's authorization server redirects at once to toolshelf's loopback callback).
async fn log_in(config: &std::path::Path, data: &std::path::Path, target: &str) -> String {
    use tokio::io::AsyncBufReadExt;
    let mut login = crate::harness::toolshelf()
        .args(["login", "--no-browser", "--config"])
        .arg(config)
        .arg(target)
        .env("XDG_DATA_HOME", data)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("run toolshelf login");
    let mut lines = tokio::io::BufReader::new(login.stderr.take().expect("stderr")).lines();
    let mut said = String::new();
    let finished = tokio::time::timeout(DEADLINE, async {
        while let Some(line) = lines.next_line().await.expect("read") {
            said.push_str(&line);
            said.push('\n');
            if line.starts_with("http") {
                open_in_browser(&line).await;
            }
        }
        login.wait().await.expect("login exits")
    })
    .await
    .expect("the login ends in time");
    assert!(finished.success(), "{said}");
    said
}

/// What a browser does with the authorization URL here: follows the redirect to the callback.
async fn open_in_browser(url: &str) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let response = reqwest::get(url)
        .await
        .expect("the authorization URL answers");
    assert!(response.status().is_success(), "{}", response.status());
    let page = response.text().await.expect("the callback's page");
    assert!(page.contains("logged in"), "{page}");
}

/// Makes the OAuth server forget its tokens (`query`: which).
async fn revoke(server: &HttpServer, query: &str) {
    let url = format!("http://127.0.0.1:{}/revoke{query}", server.port);
    let response = reqwest::Client::new()
        .post(url)
        .send()
        .await
        .expect("revoke");
    assert!(response.status().is_success());
}

#[tokio::test]
async fn an_oauth_server_is_logged_in_to_once_and_its_tokens_renew_by_themselves() {
    use std::os::unix::fs::PermissionsExt;
    let server = HttpServer::oauth_protected("2").await;
    let servers = json!({"secure": {"url": server.url(), "auth": "oauth"}});
    let (dir, path) = write_config(&config(&[("mix", "", servers)]));
    let data = tempfile::tempdir().expect("data folder");
    let log = tempfile::NamedTempFile::new().expect("log file");
    let mut command = crate::harness::toolshelf();
    command
        .args(["serve", "--config"])
        .arg(&path)
        .env("RUST_LOG", "debug")
        .env("XDG_DATA_HOME", data.path());
    let mut shelf = RawClient::spawn_logged(
        command,
        None,
        "2025-06-18",
        log.reopen().expect("log").into(),
    )
    .await;

    // Nobody has logged in: the open says at once which command the user must run.
    let opened = shelf.open(1, "mix").await.to_string();
    let login = format!("toolshelf login --config '{}' mix/secure", path.display());
    assert!(opened.contains("needs an OAuth login"), "{opened}");
    assert!(opened.contains(&login), "{opened}");

    let said = log_in(&path, data.path(), "mix/secure").await;
    assert!(said.contains("Logged in to mix/secure"), "{said}");
    let folder = data.path().join("toolshelf/oauth");
    let files: Vec<_> = std::fs::read_dir(&folder)
        .expect("the login folder")
        .map(|entry| entry.expect("entry").path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let mode = |path: &std::path::Path| {
        std::fs::metadata(path)
            .expect("metadata")
            .permissions()
            .mode()
            & 0o777
    };
    assert_eq!(mode(&files[0]), 0o600);
    assert_eq!(mode(&folder), 0o700);

    // The running toolshelf uses the new login when the agent opens the toolbox again.
    let opened_again = shelf.open(2, "mix").await;
    let listed: Value = serde_json::from_str(&result_text(&opened_again)).expect("JSON");
    let tools = opened_tools(&listed);
    assert!(
        tools.iter().any(|tool| tool["name"] == "whoami"),
        "{opened_again}"
    );
    let whoami = || use_tool("secure", "whoami", json!({}));
    let (_, answer) = shelf.request(6, "tools/call", whoami()).await;
    let first: Value =
        serde_json::from_str(&result_text(&answer)).unwrap_or_else(|_| panic!("{answer}"));
    assert_eq!(first["refreshes"], json!(0), "{answer}");

    // A second toolshelf on the same config (another MCP client) shares the login.
    let mut other = crate::harness::toolshelf();
    other
        .args(["serve", "--config"])
        .arg(&path)
        .env("RUST_LOG", "warn")
        .env("XDG_DATA_HOME", data.path());
    let mut other = RawClient::spawn(other, None, "2025-06-18").await;
    other.open(1, "mix").await;

    // The token expires: both renew it before their calls, without the user, one after the
    // other (the server accepts each refresh token once).
    tokio::time::sleep(Duration::from_millis(2200)).await;
    let (mine, theirs) = tokio::join!(
        shelf.request(3, "tools/call", whoami()),
        other.request(2, "tools/call", whoami()),
    );
    let second: Value = serde_json::from_str(&result_text(&mine.1)).expect("whoami");
    let parallel: Value = serde_json::from_str(&result_text(&theirs.1)).expect("whoami");
    let refreshes = second["refreshes"]
        .as_u64()
        .max(parallel["refreshes"].as_u64());
    assert!(refreshes >= Some(1), "{second} {parallel}");
    assert_ne!(second["token"], first["token"]);

    // The server forgets its tokens: the refused one is renewed and the call sent again.
    revoke(&server, "").await;
    let (_, answer) = shelf.request(4, "tools/call", whoami()).await;
    let third: Value = serde_json::from_str(&result_text(&answer)).expect("whoami");
    assert!(third["refreshes"].as_u64() > refreshes, "{answer}");

    // Refresh tokens gone too: the call fails with what the user must do.
    revoke(&server, "?refresh=1").await;
    let (_, answer) = shelf.request(5, "tools/call", whoami()).await;
    assert_eq!(answer["result"]["isError"], json!(true), "{answer}");
    assert!(answer.to_string().contains(&login), "{answer}");

    // No token reached the log or the agent.
    let logged = std::fs::read_to_string(log.path()).expect("log");
    assert!(logged.contains("secure"), "the log has the server's events");
    assert!(!logged.contains("tok-"), "{logged}");
    assert!(!opened.contains("tok-") && !answer.to_string().contains("tok-"));

    // Logging out revokes the tokens at the authorization server (RFC 7009), then removes them.
    let saved: Value =
        serde_json::from_slice(&std::fs::read(&files[0]).expect("the login file")).expect("JSON");
    let tokens = &saved["credentials"]["token_response"];
    let output = crate::harness::toolshelf_std()
        .args(["logout", "--config"])
        .arg(&path)
        .arg("mix/secure")
        .env("XDG_DATA_HOME", data.path())
        .output()
        .expect("logout");
    assert!(output.status.success(), "{output:?}");
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(
        said.contains("revoked the tokens at the authorization server"),
        "{said}"
    );
    assert!(!said.contains("tok-"), "{said}");
    let logged_out = said
        .split_once("Logged out of mix/secure: ")
        .and_then(|(_, rest)| rest.split_once(" /"))
        .map(|(done, _)| done)
        .unwrap_or_default();
    assert!(logged_out.ends_with("and removed"), "{said}");
    crate::docs::assert_quoted(&format!("Logged out of work/linear: {logged_out}"));
    assert!(!files[0].exists(), "logout removes the tokens");
    let revocations = reqwest::Client::new()
        .get(format!("http://127.0.0.1:{}/revocations", server.port))
        .send()
        .await
        .expect("revocations")
        .text()
        .await
        .expect("a body");
    let revocations: Value = serde_json::from_str(&revocations).expect("JSON");
    assert_eq!(
        revocations,
        json!([
            {"token": tokens["refresh_token"], "hint": "refresh_token", "client": saved["client_id"]},
            {"token": tokens["access_token"], "hint": "access_token", "client": saved["client_id"]},
        ]),
        "{saved}"
    );
    drop(dir);
}

/// A tool's structured result (or its text, as JSON) from a `tools/call` answer.
fn structured(answer: &Value) -> Value {
    let content = &answer["result"]["structuredContent"];
    let value = if content.is_null() {
        serde_json::from_str(&result_text(answer)).expect("a JSON result")
    } else {
        content.clone()
    };
    value.get("result").cloned().unwrap_or(value)
}

#[tokio::test]
async fn a_remote_list_change_comes_on_the_get_stream_and_idleness_ends_the_session() {
    let token = "an0ther-token-value";
    let checker = HttpServer::header_checker(token).await;
    let servers = json!({"good": {
        "url": checker.url(),
        "headers": {"Authorization": format!("Bearer {token}")},
        "idleTimeout": 1,
    }});
    let mut shelf = RawClient::start(&config(&[("mix", "", servers)])).await;
    shelf.open(1, "mix").await;
    let (_, answer) = shelf
        .request(2, "tools/call", use_tool("good", "seen_headers", json!({})))
        .await;
    let first = structured(&answer)["mcp-session-id"].clone();
    assert!(first.is_string(), "{answer}");

    // The server announces a change after the call, outside any request: the notification
    // can only come on the GET stream, and toolshelf re-lists the server.
    shelf
        .request(3, "tools/call", use_tool("good", "grow_later", json!({})))
        .await;
    let mut id = 10;
    let deadline = tokio::time::Instant::now() + DEADLINE;
    loop {
        id += 1;
        let opened = shelf.open(id, "mix").await;
        let listed: Value = serde_json::from_str(&result_text(&opened)).expect("JSON");
        if opened_tools(&listed)
            .iter()
            .any(|tool| tool["name"] == "grown")
        {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "never listed: {opened}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // A second without calls: the child is stopped and its session ended with a DELETE; the
    // next call opens a new one.
    loop {
        tokio::time::sleep(Duration::from_millis(1500)).await;
        id += 1;
        let (_, answer) = shelf
            .request(
                id,
                "tools/call",
                use_tool("good", "ended_sessions", json!({})),
            )
            .await;
        let ended = structured(&answer);
        if ended.as_array().is_some_and(|ended| ended.contains(&first)) {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "never ended: {answer}"
        );
    }
    let (_, answer) = shelf
        .request(
            id + 1,
            "tools/call",
            use_tool("good", "seen_headers", json!({})),
        )
        .await;
    let second = structured(&answer)["mcp-session-id"].clone();
    assert!(second.is_string() && second != first, "{answer}");
}

/// The relays of a local child, through a remote one: server-everything over streamable HTTP
/// asks for a sampled message, input and its roots, and the agent (the `mcp` SDK) answers each.
/// Its answer to sampling takes longer than the child's `callTimeout`, paused meanwhile.
#[tokio::test]
async fn the_agent_answers_a_remote_childs_sampling_elicitation_and_roots() {
    let web = HttpServer::everything("streamableHttp").await;
    let spec = json!({"type": "http", "url": web.url(), "callTimeout": 1.0});
    let (_dir, args) = crate::clients::demo_everything(spec);
    let seen = crate::harness::python::python_client("mcp_client.py", args).await;
    let text = |key: &str| seen[key].as_str().unwrap_or_default().to_owned();
    assert!(text("sampled").contains("sampled by the agent"), "{seen}");
    assert!(text("elicited").contains("Ada Lovelace"), "{seen}");
    assert!(text("roots").contains("file:///tmp/agent-root"), "{seen}");
    assert!(
        text("roots_later").contains("file:///tmp/agent-root-later"),
        "the agent's roots change did not reach the child: {seen}"
    );
}

/// TLS is rustls with the system's trust store, which `SSL_CERT_FILE` replaces: a server with a
/// certificate from an authority nobody trusts is refused with the reason, and the same server
/// is reached once that authority is the trusted one.
#[tokio::test]
async fn a_tls_server_is_reached_when_its_authority_is_trusted_through_ssl_cert_file() {
    let certs = tempfile::tempdir().expect("certificate folder");
    let made = std::process::Command::new(python_env().join("bin/python"))
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/python/make_cert.py"
        ))
        .arg(certs.path())
        .status()
        .expect("run make_cert.py");
    assert!(made.success());
    let token = "tls-t0ken-value";
    let server = HttpServer::header_checker_over_tls(token, certs.path()).await;
    assert!(server.url().starts_with("https://"));
    let servers = json!({"secure": {
        "url": server.url(),
        "headers": {"Authorization": format!("Bearer {token}")},
    }});
    let (dir, path) = write_config(&config(&[("mix", "", servers)]));
    let serve = |authority: Option<&std::path::Path>| {
        let mut command = crate::harness::toolshelf();
        command
            .args(["serve", "--config"])
            .arg(&path)
            .env("RUST_LOG", "warn")
            .env_remove("SSL_CERT_FILE")
            .env_remove("SSL_CERT_DIR");
        if let Some(authority) = authority {
            command.env("SSL_CERT_FILE", authority);
        }
        command
    };

    let mut untrusted = RawClient::spawn(serve(None), None, "2025-06-18").await;
    let opened = untrusted.open(1, "mix").await.to_string();
    assert!(opened.contains("invalid peer certificate"), "{opened}");
    assert!(
        opened.contains("SSL_CERT_FILE"),
        "the error says what to do: {opened}"
    );
    assert!(!opened.contains(token), "{opened}");

    let authority = certs.path().join("ca.pem");
    let mut trusted = RawClient::spawn(serve(Some(&authority)), None, "2025-06-18").await;
    trusted.open(1, "mix").await;
    let (_, answer) = trusted
        .request(
            2,
            "tools/call",
            use_tool("secure", "seen_headers", json!({})),
        )
        .await;
    assert_eq!(
        structured(&answer)["authorization"],
        json!(format!("Bearer {token}")),
        "{answer}"
    );
    drop(dir);
}
