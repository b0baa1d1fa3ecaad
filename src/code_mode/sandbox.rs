//! One script in Monty, on a thread of its own: the interpreter is synchronous and a script
//! may compute for seconds, so it never runs on the runtime's one thread, where it would hold
//! up every other session. The thread pauses at each `call_tool`, hands the calls up, and goes
//! on with their results; it has no file system, environment, network or process to reach:
//! what Monty asks the host for (`open`, `os.getenv`, …) is refused.

use std::{
    borrow::Cow,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
        mpsc,
    },
};

use monty::{MontyRun, RunProgress};
use monty_types::{
    CompileOptions, ExcType, ExtFunctionResult, MontyException, MontyObject, NameLookupResult,
    PrintWriter, PrintWriterCallback, ResourceLimits,
};
use serde_json::Value;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use super::{CALL_TOOL, Ending, Finished, Limits, ToolCall, tracker::ScriptTracker, values};

/// The interpreter's thread's stack: Monty keeps Python's frames on its heap, but parsing and
/// printing nested values recurse natively; the memory is reserved, not used.
const STACK_BYTES: usize = 64 * 1024 * 1024;

/// What the script's thread tells the host.
pub(super) enum Up {
    /// The calls it made since it last waited, each with its id; it waits for all their results.
    Calls(Vec<(u32, ToolCall)>),
    /// It ended.
    Finished(Finished),
}

/// The result of one call: its Python value, or the error the script gets raised.
pub(super) type CallResult = Result<Value, String>;

/// A running script, seen from the host.
pub(super) struct Script {
    stopped: Arc<AtomicBool>,
    answers: Option<mpsc::Sender<Vec<(u32, CallResult)>>>,
}

impl Script {
    /// Starts `code` on its own thread; its calls and its end arrive on the receiver.
    pub(super) fn start(code: String, limits: &Limits) -> (Self, UnboundedReceiver<Up>) {
        let (up, events) = unbounded_channel();
        let (answers, results) = mpsc::channel();
        let stopped = Arc::new(AtomicBool::new(false));
        let run = Run {
            up: up.clone(),
            results,
            stopped: stopped.clone(),
            limits: *limits,
        };
        let spawned = std::thread::Builder::new()
            .name("run_code".into())
            .stack_size(STACK_BYTES)
            .spawn(move || run.finish(code));
        if let Err(error) = spawned {
            let _ = up.send(Up::Finished(Finished {
                output: Output::default(),
                ending: Ending::NotStarted(error.to_string()),
            }));
        }
        let script = Script {
            stopped,
            answers: Some(answers),
        };
        (script, events)
    }

    /// Hands the script its calls' results.
    pub(super) fn answer(&self, results: Vec<(u32, CallResult)>) {
        if let Some(answers) = &self.answers {
            let _ = answers.send(results);
        }
    }

    /// Ends the script where it is: in the interpreter at its next statement, or at once if it
    /// waits for results. It then finishes with `Ending::Stopped`.
    pub(super) fn stop(&mut self) {
        self.stopped.store(true, Ordering::Relaxed);
        self.answers = None;
    }
}

impl Drop for Script {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The script's side.
struct Run {
    up: UnboundedSender<Up>,
    results: mpsc::Receiver<Vec<(u32, CallResult)>>,
    stopped: Arc<AtomicBool>,
    limits: Limits,
}

impl Run {
    fn finish(self, code: String) {
        let mut output = Output::new(self.limits.output_bytes);
        let ending = self.run(code, &mut output);
        let _ = self.up.send(Up::Finished(Finished { output, ending }));
    }

    fn run(&self, code: String, output: &mut Output) -> Ending {
        let inputs = vec![CALL_TOOL.to_owned()];
        let runner = match MontyRun::new(code, "script.py", inputs, CompileOptions::default()) {
            Ok(runner) => runner,
            Err(error) => return Ending::Raised(error.to_string()),
        };
        let limits = ResourceLimits::new()
            .max_duration(self.limits.cpu)
            .max_memory(self.limits.memory_bytes)
            .max_recursion_depth(Some(self.limits.recursion_depth));
        let call_tool = MontyObject::Function {
            name: CALL_TOOL.to_owned(),
            docstring: None,
        };
        let tracker = ScriptTracker::new(limits, self.stopped.clone());
        let mut progress = runner.start(vec![call_tool], tracker, PrintWriter::Callback(output));
        let mut calls = 0;
        let mut waiting = Vec::new();
        loop {
            if self.stopped.load(Ordering::Relaxed) {
                return Ending::Stopped;
            }
            progress = match progress {
                Ok(RunProgress::Complete(value)) => {
                    return Ending::Returned(values::to_json(value));
                }
                Err(error) => return Ending::Raised(error.to_string()),
                Ok(RunProgress::FunctionCall(call)) if call.function_name == CALL_TOOL => {
                    calls += 1;
                    if calls > self.limits.tool_calls {
                        return Ending::TooManyCalls;
                    }
                    match ToolCall::read(call.args.clone(), call.kwargs.clone()) {
                        Ok(tool_call) => {
                            waiting.push((call.call_id, tool_call));
                            call.resume_pending(PrintWriter::Callback(output))
                        }
                        Err(message) => {
                            let error = MontyException::new(ExcType::TypeError, Some(message));
                            call.resume(
                                ExtFunctionResult::Error(error),
                                PrintWriter::Callback(output),
                            )
                        }
                    }
                }
                Ok(RunProgress::FunctionCall(call)) => {
                    let name = call.function_name.clone();
                    call.resume(
                        ExtFunctionResult::NotFound(name),
                        PrintWriter::Callback(output),
                    )
                }
                Ok(RunProgress::ResolveFutures(pending)) => {
                    if !waiting.is_empty()
                        && self
                            .up
                            .send(Up::Calls(std::mem::take(&mut waiting)))
                            .is_err()
                    {
                        return Ending::Stopped;
                    }
                    let Ok(results) = self.results.recv() else {
                        return Ending::Stopped;
                    };
                    let results = results
                        .into_iter()
                        .map(|(id, result)| (id, python_result(result)))
                        .collect();
                    pending.resume(results, PrintWriter::Callback(output))
                }
                Ok(RunProgress::OsCall(call)) => {
                    let error = MontyException::new(
                        ExcType::PermissionError,
                        Some(format!(
                            "{} is not available: a script has no file system, environment or network of its own; reach them through a tool, with {CALL_TOOL}",
                            call.function_call.name()
                        )),
                    );
                    call.resume(
                        ExtFunctionResult::Error(error),
                        PrintWriter::Callback(output),
                    )
                }
                Ok(RunProgress::NameLookup(lookup)) => {
                    lookup.resume(NameLookupResult::Undefined, PrintWriter::Callback(output))
                }
            };
        }
    }
}

fn python_result(result: CallResult) -> ExtFunctionResult {
    match result {
        Ok(value) => ExtFunctionResult::Return(values::from_json(value)),
        Err(message) => {
            ExtFunctionResult::Error(MontyException::new(ExcType::RuntimeError, Some(message)))
        }
    }
}

/// What the script printed, up to its limit; past it, only how much more it printed.
#[derive(Debug, Default)]
pub(crate) struct Output {
    pub(crate) text: String,
    /// Bytes printed past the limit.
    pub(crate) cut: usize,
    limit: usize,
}

impl Output {
    fn new(limit: usize) -> Self {
        Output {
            limit,
            ..Output::default()
        }
    }

    fn push(&mut self, text: &str) {
        let room = self.limit.saturating_sub(self.text.len());
        if self.cut == 0 && text.len() <= room {
            self.text.push_str(text);
            return;
        }
        let mut end = room.min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        if self.cut == 0 {
            self.text.push_str(&text[..end]);
        } else {
            end = 0;
        }
        self.cut += text.len() - end;
    }
}

impl PrintWriterCallback for Output {
    fn stdout_write(&mut self, output: Cow<'_, str>) -> Result<(), MontyException> {
        self.push(&output);
        Ok(())
    }

    fn stdout_push(&mut self, end: char) -> Result<(), MontyException> {
        self.push(end.encode_utf8(&mut [0; 4]));
        Ok(())
    }
}
