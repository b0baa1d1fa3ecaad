//! Questions a child asks while it runs a task, for an agent on the tasks extension
//! (2026-07-28). A child on 2025-11-25 sends them as requests tied to the task, and only while
//! someone waits in `tasks/result`; an agent on the extension has no session to take requests.
//! So toolshelf waits in `tasks/result` on the agent's behalf once the child says the task
//! needs input, keeps the child's requests here, shows them in the agent's `tasks/get` as
//! `inputRequests` (keys `q1`, `q2`, … over the task's life) and answers them with what the
//! agent's `tasks/update` brings.
//!
//! Transport-independent: `SessionTasks` owns one per task.

use std::{
    collections::BTreeMap,
    future::Future,
    sync::{Arc, Mutex, MutexGuard},
    time::Duration,
};

use rmcp::model::{ClientResult, InputRequest, InputRequests, InputResponses, ServerRequest};
use tokio::sync::{Notify, oneshot};
use tokio_util::sync::{CancellationToken, DropGuard};

use crate::children::Relayed;
use crate::locks;

/// How long a `tasks/get` that finds the child waiting for input waits for its questions to
/// arrive, so that the agent sees them in that answer rather than in a later poll.
pub(crate) const QUESTION_WAIT: Duration = Duration::from_millis(500);

/// The questions of one task.
#[derive(Default)]
pub(crate) struct TaskQuestions {
    state: Mutex<State>,
    asked: Notify,
}

#[derive(Default)]
struct State {
    /// Keys already given, for the next.
    keys: u64,
    pending: BTreeMap<String, Pending>,
    /// Stops toolshelf's own wait in the child's `tasks/result`, when there is one; dropped
    /// with the task's route, it stops the wait.
    listening: Option<DropGuard>,
}

struct Pending {
    kind: Relayed,
    request: InputRequest,
    answer: oneshot::Sender<ClientResult>,
}

impl TaskQuestions {
    fn state(&self) -> MutexGuard<'_, State> {
        locks::lock(&self.state)
    }

    /// Runs `wait` (toolshelf's `tasks/result` to the child, stopped by the token it gets)
    /// unless one runs. Once it ends, a later `input_required` starts another.
    pub(crate) fn listen<F>(self: &Arc<Self>, wait: impl FnOnce(CancellationToken) -> F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        let stop = CancellationToken::new();
        {
            let mut state = self.state();
            if state.listening.is_some() {
                return;
            }
            state.listening = Some(stop.clone().drop_guard());
        }
        let waiting = wait(stop);
        // Weak: the questions go with the task's route, not with this wait.
        let questions = Arc::downgrade(self);
        tokio::spawn(async move {
            waiting.await;
            if let Some(questions) = questions.upgrade()
                && let Some(guard) = questions.state().listening.take()
            {
                guard.disarm();
            }
        });
    }

    /// The child's `request`, answered by the agent's `tasks/update`. `cancel` is the child's
    /// cancellation of its request.
    pub(crate) async fn ask(
        &self,
        kind: Relayed,
        request: ServerRequest,
        cancel: &CancellationToken,
    ) -> Result<ClientResult, String> {
        let request = Relayed::into_input(request)?;
        let (answer, answered) = oneshot::channel();
        let key = {
            let mut state = self.state();
            state.keys += 1;
            let key = format!("q{}", state.keys);
            let pending = Pending {
                kind,
                request,
                answer,
            };
            state.pending.insert(key.clone(), pending);
            key
        };
        self.asked.notify_waiters();
        let answer = tokio::select! {
            answer = answered => answer.map_err(|_| {
                "the MCP client did not answer: its task ended or was forgotten first".to_owned()
            }),
            () = cancel.cancelled() => Err("cancelled".into()),
        };
        self.state().pending.remove(&key);
        answer
    }

    /// The questions not answered yet; after up to `wait` for a first one when there is none.
    pub(crate) async fn outstanding(&self, wait: Duration) -> InputRequests {
        let asked = self.asked.notified();
        tokio::pin!(asked);
        // Registered before looking, so a question asked in between is not missed.
        asked.as_mut().enable();
        if self.state().pending.is_empty() {
            let _ = tokio::time::timeout(wait, asked).await;
        }
        self.state()
            .pending
            .iter()
            .map(|(key, pending)| (key.clone(), pending.request.clone()))
            .collect()
    }

    /// Gives the agent's `answers` to the questions they name. All or nothing: a key that names
    /// no outstanding question, or an answer that is not the result its question asks for,
    /// refuses the whole update.
    pub(crate) fn answer(&self, answers: InputResponses) -> Result<(), String> {
        let mut state = self.state();
        if let Some(unknown) = answers.keys().find(|key| !state.pending.contains_key(*key)) {
            let outstanding: Vec<&str> = state.pending.keys().map(String::as_str).collect();
            return Err(if outstanding.is_empty() {
                format!(
                    "inputResponses has '{unknown}', but the task asks nothing now; call tasks/get to see what it asks"
                )
            } else {
                format!(
                    "inputResponses has '{unknown}', which is not one of the task's outstanding inputRequests ({}); answer those keys",
                    outstanding.join(", ")
                )
            });
        }
        let mut results = Vec::with_capacity(answers.len());
        for (key, answer) in answers {
            let kind = state.pending[&key].kind;
            let result = kind
                .result(answer)
                .map_err(|why| format!("inputResponses '{key}': {why}"))?;
            results.push((key, result));
        }
        for (key, result) in results {
            if let Some(pending) = state.pending.remove(&key) {
                // The child may have withdrawn it meanwhile: then nobody waits for the answer.
                let _ = pending.answer.send(result);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::{ElicitRequest, ElicitRequestParams};

    use super::*;

    fn question() -> ServerRequest {
        let params: ElicitRequestParams = serde_json::from_value(serde_json::json!({
            "message": "which?",
            "requestedSchema": {"type": "object", "properties": {}}
        }))
        .expect("params");
        ServerRequest::ElicitRequest(ElicitRequest::new(params))
    }

    #[tokio::test]
    async fn a_question_waits_for_the_answer_under_its_key_and_a_wrong_key_changes_nothing() {
        let questions = Arc::new(TaskQuestions::default());
        let asking = tokio::spawn({
            let questions = questions.clone();
            async move {
                questions
                    .ask(Relayed::Elicitation, question(), &CancellationToken::new())
                    .await
            }
        });
        let outstanding = questions.outstanding(Duration::from_secs(5)).await;
        assert_eq!(outstanding.keys().collect::<Vec<_>>(), ["q1"]);

        let wrong = InputResponses::from([("q9".to_owned(), serde_json::json!({}))]);
        let refused = questions.answer(wrong).expect_err("q9 was not asked");
        assert!(refused.contains("(q1)"), "{refused}");
        assert_eq!(questions.outstanding(Duration::ZERO).await.len(), 1);

        let accept = serde_json::json!({"action": "accept", "content": {"x": "y"}});
        questions
            .answer(InputResponses::from([("q1".to_owned(), accept)]))
            .expect("q1 is outstanding");
        let answered = asking.await.expect("joined").expect("answered");
        assert!(matches!(answered, ClientResult::ElicitResult(_)));
        assert!(questions.outstanding(Duration::ZERO).await.is_empty());
    }
}
