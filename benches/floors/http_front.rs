//! `toolshelf-floor http ADDR -- COMMAND...`: the smallest streamable-HTTP front a stdio child
//! could have. It takes a POST, writes its body as one line to the child under an id of its
//! own (so that sessions' ids cannot collide), and answers the child's line, its id put back,
//! as `application/json`. The child's `initialize` answer is kept and given to every later
//! session (one child serves them all, as toolshelf's shared child does); a DELETE ends
//! nothing. Nothing else of MCP is known here.

use std::{
    collections::HashMap,
    convert::Infallible,
    net::SocketAddr,
    process::ExitCode,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Request, Response, StatusCode, body::Incoming};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::{
    io::{AsyncBufReadExt, AsyncWriteExt, BufReader},
    process::ChildStdin,
    sync::oneshot,
};

struct Front {
    to_child: tokio::sync::Mutex<ChildStdin>,
    waiting: Mutex<HashMap<u64, oneshot::Sender<Value>>>,
    next_id: AtomicU64,
    initialized: tokio::sync::OnceCell<Value>,
    told_initialized: AtomicBool,
    sessions: AtomicU64,
}

pub async fn serve(address: &str, command: &str, args: &[&str]) -> ExitCode {
    let Ok(address) = address.parse::<SocketAddr>() else {
        eprintln!("toolshelf-floor: {address} is not an address");
        return ExitCode::from(2);
    };
    let Some((_child, to_child, from_child)) = super::child_on_event_loop(command, args) else {
        return ExitCode::FAILURE;
    };
    let front = Arc::new(Front {
        to_child: tokio::sync::Mutex::new(to_child),
        waiting: Mutex::new(HashMap::new()),
        next_id: AtomicU64::new(1),
        initialized: tokio::sync::OnceCell::new(),
        told_initialized: AtomicBool::new(false),
        sessions: AtomicU64::new(0),
    });
    tokio::spawn(answers(front.clone(), from_child));
    let Ok(listener) = tokio::net::TcpListener::bind(address).await else {
        eprintln!("toolshelf-floor: cannot listen on {address}");
        return ExitCode::FAILURE;
    };
    while let Ok((stream, _)) = listener.accept().await {
        let _ = stream.set_nodelay(true);
        let front = front.clone();
        let service = hyper::service::service_fn(move |request| {
            let front = front.clone();
            async move { Ok::<_, Infallible>(front.answer(request).await) }
        });
        tokio::spawn(
            hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service),
        );
    }
    ExitCode::SUCCESS
}

/// Hands each line of the child to the request waiting under its id.
async fn answers(front: Arc<Front>, from_child: tokio::process::ChildStdout) {
    let mut lines = BufReader::with_capacity(1 << 16, from_child).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let Some(id) = message.get("id").and_then(Value::as_u64) else {
            continue;
        };
        let waiting = front.waiting.lock().map(|mut waiting| waiting.remove(&id));
        if let Ok(Some(waiting)) = waiting {
            let _ = waiting.send(message);
        }
    }
}

impl Front {
    async fn answer(&self, request: Request<Incoming>) -> Response<Full<Bytes>> {
        if request.method() == hyper::Method::DELETE {
            return respond(StatusCode::NO_CONTENT, Bytes::new(), None);
        }
        let Ok(body) = request
            .into_body()
            .collect()
            .await
            .map(|body| body.to_bytes())
        else {
            return respond(StatusCode::BAD_REQUEST, Bytes::new(), None);
        };
        let Ok(mut message) = serde_json::from_slice::<Value>(&body) else {
            return respond(StatusCode::BAD_REQUEST, Bytes::new(), None);
        };
        let Some(id) = message.get_mut("id").map(Value::take) else {
            let once = message["method"] == "notifications/initialized";
            if !(once && self.told_initialized.swap(true, Ordering::SeqCst)) {
                self.send(&message).await;
            }
            return respond(StatusCode::ACCEPTED, Bytes::new(), None);
        };
        let (mut answer, session) = if message["method"] == "initialize" {
            let first = self.initialized.get_or_init(|| self.forward(message)).await;
            let session = self.sessions.fetch_add(1, Ordering::SeqCst);
            (first.clone(), Some(format!("floor-{session}")))
        } else {
            (self.forward(message).await, None)
        };
        answer["id"] = id;
        respond(StatusCode::OK, Bytes::from(answer.to_string()), session)
    }

    /// `message` under an id of the front's, and the child's answer to it.
    async fn forward(&self, mut message: Value) -> Value {
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        message["id"] = id.into();
        let (answered, answer) = oneshot::channel();
        if let Ok(mut waiting) = self.waiting.lock() {
            waiting.insert(id, answered);
        }
        self.send(&message).await;
        answer.await.unwrap_or_default()
    }

    async fn send(&self, message: &Value) {
        let mut line = message.to_string().into_bytes();
        line.push(b'\n');
        let mut to_child = self.to_child.lock().await;
        let _ = to_child.write_all(&line).await;
        let _ = to_child.flush().await;
    }
}

fn respond(status: StatusCode, body: Bytes, session: Option<String>) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(body));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        "content-type",
        hyper::header::HeaderValue::from_static("application/json"),
    );
    if let Some(session) = session.and_then(|session| session.parse().ok()) {
        headers.insert("mcp-session-id", session);
    }
    response
}
