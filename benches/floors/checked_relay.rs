//! `toolshelf-floor stdio-checked TOOLBOX SERVER TOOL[,TOOL...] -- COMMAND...`: the least a
//! relay must do to serve `use_tool` calls the way toolshelf must, on the event loop the loop
//! floor runs on. For each `use_tool` line of the agent's: read it as JSON (the id kept raw,
//! unknown keys refused), find the identifier among the tools it was given, write the child a
//! `tools/call` under an id of its own with the arguments as they came; for the child's answer:
//! read it as JSON, find its id, check that its result is an object with a `content` array, and
//! write the result under the agent's id. Every other line passes as it is, both ways. No
//! schema, no sessions, no timeouts, no cancellation, no progress, no budgets, no audit: what
//! toolshelf adds over this is the cost of those, and of how it is built.

use std::{collections::HashMap, io::Write, process::ExitCode};

use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AgentLine<'a> {
    #[serde(borrow)]
    jsonrpc: &'a str,
    #[serde(borrow)]
    id: &'a RawValue,
    #[serde(borrow)]
    method: &'a str,
    #[serde(borrow)]
    params: CallParams<'a>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CallParams<'a> {
    #[serde(borrow)]
    name: &'a str,
    #[serde(borrow)]
    arguments: UseTool<'a>,
    /// Read past: this floor forwards no progress (rmcp's clients ask for it on every call).
    #[expect(dead_code, reason = "read only to be passed over")]
    #[serde(rename = "_meta", borrow, default)]
    meta: Option<&'a RawValue>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UseTool<'a> {
    #[serde(borrow)]
    tool: Identifier<'a>,
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Identifier<'a> {
    #[serde(borrow)]
    toolbox: &'a str,
    #[serde(borrow)]
    server: &'a str,
    #[serde(borrow)]
    name: &'a str,
}

#[derive(Deserialize)]
struct ChildLine<'a> {
    id: Option<u64>,
    #[serde(borrow)]
    result: Option<&'a RawValue>,
    #[serde(borrow)]
    error: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct ToolResult<'a> {
    #[serde(borrow)]
    content: &'a RawValue,
}

/// The floor's own ids start here, above any id the agent's `initialize` could have used.
const FIRST_ID: u64 = 1 << 40;

pub async fn relay(
    toolbox: &str,
    server: &str,
    tools: &str,
    command: &str,
    args: &[&str],
) -> ExitCode {
    let Some((_child, mut to_child, from_child)) = super::child_on_event_loop(command, args) else {
        return ExitCode::FAILURE;
    };
    let (stdin, stdout) = rmcp::transport::stdio_pipes();
    let known = Known {
        toolbox: toolbox.to_owned(),
        server: server.to_owned(),
        tools: tools.split(',').map(str::to_owned).collect(),
    };
    // Agent ids of the calls in flight, by the floor's id; shared by the two directions, which
    // run in turn on one thread.
    let waiting = std::rc::Rc::new(std::cell::RefCell::new(HashMap::<u64, Box<RawValue>>::new()));
    let (agent_out, agent_in) = tokio::sync::mpsc::unbounded_channel::<Vec<u8>>();
    let answers = waiting.clone();
    let local = tokio::task::LocalSet::new();
    local
        .run_until(async move {
            // The child's lines: answers to the floor's calls checked and re-addressed.
            let downward = tokio::task::spawn_local(async move {
                let mut out = stdout;
                let mut agent_in = agent_in;
                let mut from_child = BufReader::with_capacity(1 << 16, from_child);
                let mut line = Vec::with_capacity(1 << 12);
                loop {
                    // A refusal may come while a line is half read: what was read stays in
                    // `line`, and the next read goes on from there.
                    tokio::select! {
                        biased;
                        Some(refusal) = agent_in.recv() => {
                            if out.write_all(&refusal).await.is_err() { return; }
                        }
                        read = from_child.read_until(b'\n', &mut line) => {
                            if !matches!(read, Ok(n) if n > 0) { return; }
                            let answer = readdressed(&line, &mut answers.borrow_mut());
                            if out.write_all(answer.as_deref().unwrap_or(&line)).await.is_err() {
                                return;
                            }
                            line.clear();
                        }
                    }
                }
            });
            let mut from_agent = BufReader::with_capacity(1 << 16, stdin);
            let mut line = Vec::with_capacity(1 << 12);
            let mut next_id = FIRST_ID;
            loop {
                line.clear();
                match from_agent.read_until(b'\n', &mut line).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                let request = match call_line(&line, &known, next_id) {
                    Some(Upward::Call(id, request)) => {
                        waiting.borrow_mut().insert(next_id, id);
                        next_id += 1;
                        request
                    }
                    Some(Upward::Refused(refusal)) => {
                        let _ = agent_out.send(refusal);
                        continue;
                    }
                    None => line.clone(),
                };
                if to_child.write_all(&request).await.is_err() {
                    break;
                }
            }
            downward.abort();
        })
        .await;
    ExitCode::SUCCESS
}

/// What the floor does with a `use_tool` line of the agent's.
enum Upward {
    /// The agent's id, kept for the answer, and the child's request.
    Call(Box<RawValue>, Vec<u8>),
    /// The agent's error: the floor was not given that tool.
    Refused(Vec<u8>),
}

/// The one server's tools the floor serves.
struct Known {
    toolbox: String,
    server: String,
    tools: std::collections::HashSet<String>,
}

/// For a `use_tool` line, the agent's id and the child's request, or the refusal of an unknown
/// tool; `None` for any other line.
fn call_line(line: &[u8], known: &Known, id: u64) -> Option<Upward> {
    // The line checked for UTF-8 once, whole, not string by string.
    let call: AgentLine = serde_json::from_str(std::str::from_utf8(line).ok()?).ok()?;
    if call.jsonrpc != "2.0" || call.method != "tools/call" || call.params.name != "use_tool" {
        return None;
    }
    let Identifier {
        toolbox,
        server,
        name,
    } = call.params.arguments.tool;
    let found = toolbox == known.toolbox && server == known.server;
    let Some(tool) = known.tools.get(name).filter(|_| found) else {
        let message = format!(
            "no tool {toolbox}/{server}/{name}: this floor serves {}/{}/{{{}}} only, as started",
            known.toolbox,
            known.server,
            known.tools.iter().cloned().collect::<Vec<_>>().join(",")
        );
        let refusal = format!(
            r#"{{"jsonrpc":"2.0","id":{},"error":{{"code":-32602,"message":{}}}}}"#,
            call.id.get(),
            serde_json::Value::from(message)
        );
        return Some(Upward::Refused([refusal.as_bytes(), b"\n"].concat()));
    };
    let mut request = Vec::with_capacity(line.len() + 64);
    request.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    // Written in place: the floor's work per call is what it measures.
    write!(request, "{id}").ok()?;
    request.extend_from_slice(br#","method":"tools/call","params":{"name":"#);
    serde_json::to_writer(&mut request, tool).ok()?;
    if let Some(arguments) = call.params.arguments.arguments {
        request.extend_from_slice(br#","arguments":"#);
        request.extend_from_slice(arguments.get().as_bytes());
    }
    request.extend_from_slice(b"}}\n");
    Some(Upward::Call(call.id.to_owned(), request))
}

/// The child's answer to one of the floor's calls under the agent's id: its result if that is
/// a tool result, its error as it is, else an error saying so; `None` for any other line (it
/// passes as it is).
fn readdressed(line: &[u8], waiting: &mut HashMap<u64, Box<RawValue>>) -> Option<Vec<u8>> {
    let answer: ChildLine = serde_json::from_str(std::str::from_utf8(line).ok()?).ok()?;
    let agent_id = waiting.remove(&answer.id?)?;
    let checked = answer.result.filter(|result| {
        serde_json::from_str::<ToolResult>(result.get())
            .is_ok_and(|result| result.content.get().starts_with('['))
    });
    let (member, value) = match (checked, answer.error) {
        (Some(result), _) => ("result", result.get()),
        (None, Some(error)) => ("error", error.get()),
        (None, None) => ("error", r#"{"code":-32603,"message":"not a tool result"}"#),
    };
    let mut out = Vec::with_capacity(line.len() + 16);
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    out.extend_from_slice(agent_id.get().as_bytes());
    out.extend_from_slice(b",\"");
    out.extend_from_slice(member.as_bytes());
    out.extend_from_slice(b"\":");
    out.extend_from_slice(value.as_bytes());
    out.extend_from_slice(b"}\n");
    Some(out)
}
