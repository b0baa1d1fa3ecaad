//! The agent's requests in flight, by the id the agent wrote. Every request gets exactly one
//! answer: a second request whose id is still in flight is refused (its own answer says so), and
//! the first is not disturbed. A request served by rmcp gets an id of toolshelf's own, since
//! rmcp's `RequestId` holds neither `1.5` nor numbers beyond 64 bits; its answer goes out under
//! the agent's id again.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex, MutexGuard},
};

use rmcp::model::{NumberOrString, RequestId};
use tokio_util::sync::CancellationToken;

use crate::jsonrpc::envelope::AgentId;
use crate::locks;

/// Shared by the transport (which reads requests and writes rmcp's answers) and the direct
/// `use_tool` path (which answers its own). Cheap to clone.
#[derive(Clone, Default)]
pub(crate) struct RequestsInFlight {
    table: Arc<Mutex<Table>>,
}

/// Each call looks ids up a few times: foldhash (seeded per process) costs a fraction of the
/// default SipHash; an agent choosing colliding ids only slows its own session.
type Ids<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

#[derive(Default)]
struct Table {
    by_agent: Ids<AgentId, Route>,
    /// rmcp's id → the agent's.
    by_rmcp: Ids<i64, AgentId>,
    next: i64,
}

/// Who answers a request.
enum Route {
    /// The direct `use_tool` path; `serial` tells this request from a later one with its id.
    Direct {
        cancel: CancellationToken,
        serial: i64,
    },
    /// rmcp, under its own id.
    Rmcp(i64),
}

/// A request whose id is already in flight.
#[derive(Debug)]
pub(crate) struct InUse;

impl InUse {
    /// The error line that refuses request `id`.
    pub(crate) fn answer(id: &AgentId) -> Vec<u8> {
        crate::jsonrpc::envelope::error_line(
            Some(id),
            rmcp::model::ErrorCode::INVALID_REQUEST,
            &format!(
                "request id '{id}' is already in use by a call in flight; give each request an id of its own"
            ),
        )
    }
}

/// What cancelling a request found.
pub(crate) enum Cancelled {
    /// A direct call: its token is cancelled.
    Direct,
    /// A request rmcp serves: tell rmcp, under this id.
    Rmcp(RequestId),
    /// No such request in flight.
    Unknown,
}

/// A direct call's hold on its id: `finish` says whether its answer is still wanted.
pub(crate) struct DirectTicket {
    pub cancel: CancellationToken,
    serial: i64,
}

impl RequestsInFlight {
    fn lock(&self) -> MutexGuard<'_, Table> {
        locks::lock(&self.table)
    }

    /// Takes `id` for a direct call.
    pub(crate) fn begin_direct(&self, id: &AgentId) -> Result<DirectTicket, InUse> {
        let mut table = self.lock();
        if table.by_agent.contains_key(id) {
            return Err(InUse);
        }
        let serial = table.next_serial();
        let cancel = CancellationToken::new();
        table.by_agent.insert(
            id.clone(),
            Route::Direct {
                cancel: cancel.clone(),
                serial,
            },
        );
        Ok(DirectTicket { cancel, serial })
    }

    /// Ends a direct call: true if it should be answered (it was not cancelled).
    pub(crate) fn finish_direct(&self, id: &AgentId, ticket: &DirectTicket) -> bool {
        let mut table = self.lock();
        let mine = matches!(
            table.by_agent.get(id),
            Some(Route::Direct { serial, .. }) if *serial == ticket.serial
        );
        if mine {
            table.by_agent.remove(id);
        }
        mine && !ticket.cancel.is_cancelled()
    }

    /// Takes `id` for a request rmcp serves; returns the id to give rmcp.
    pub(crate) fn begin_rmcp(&self, id: &AgentId) -> Result<RequestId, InUse> {
        let mut table = self.lock();
        if table.by_agent.contains_key(id) {
            return Err(InUse);
        }
        let internal = table.next_serial();
        table.by_agent.insert(id.clone(), Route::Rmcp(internal));
        table.by_rmcp.insert(internal, id.clone());
        Ok(NumberOrString::Number(internal))
    }

    /// rmcp answers request `internal`: the agent's id for it, if it is still wanted.
    pub(crate) fn finish_rmcp(&self, internal: &RequestId) -> Option<AgentId> {
        let NumberOrString::Number(internal) = internal else {
            return None;
        };
        let mut table = self.lock();
        let id = table.by_rmcp.remove(internal)?;
        table.by_agent.remove(&id);
        Some(id)
    }

    /// The agent's id of rmcp's request `internal`, while it is in flight.
    pub(crate) fn rmcp_request(&self, internal: &RequestId) -> Option<AgentId> {
        let NumberOrString::Number(internal) = internal else {
            return None;
        };
        self.lock().by_rmcp.get(internal).cloned()
    }

    /// The agent cancelled request `id`: it frees its id and gets no answer.
    pub(crate) fn cancel(&self, id: &AgentId) -> Cancelled {
        let mut table = self.lock();
        match table.by_agent.remove(id) {
            Some(Route::Direct { cancel, .. }) => {
                cancel.cancel();
                Cancelled::Direct
            }
            Some(Route::Rmcp(internal)) => {
                table.by_rmcp.remove(&internal);
                Cancelled::Rmcp(NumberOrString::Number(internal))
            }
            None => Cancelled::Unknown,
        }
    }
}

impl Table {
    fn next_serial(&mut self) -> i64 {
        self.next += 1;
        self.next
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(text: &str) -> AgentId {
        match crate::jsonrpc::envelope::read(
            format!(r#"{{"jsonrpc":"2.0","id":{text},"method":"ping"}}"#).as_bytes(),
        ) {
            crate::jsonrpc::envelope::Incoming::Request { id, .. } => id,
            _ => panic!("not a request"),
        }
    }

    #[test]
    fn an_id_in_flight_is_refused_until_answered() {
        let requests = RequestsInFlight::default();
        let first = requests.begin_direct(&id("1.5")).expect("free");
        assert!(requests.begin_rmcp(&id("1.5")).is_err());
        assert!(requests.begin_direct(&id("1.5")).is_err());
        assert!(requests.finish_direct(&id("1.5"), &first));
        let internal = requests.begin_rmcp(&id("1.5")).expect("free again");
        assert_eq!(requests.finish_rmcp(&internal), Some(id("1.5")));
        assert_eq!(requests.finish_rmcp(&internal), None);
    }

    #[test]
    fn a_cancelled_call_does_not_free_a_later_one_with_its_id() {
        let requests = RequestsInFlight::default();
        let old = requests.begin_direct(&id(r#""a""#)).expect("free");
        assert!(matches!(requests.cancel(&id(r#""a""#)), Cancelled::Direct));
        let new = requests
            .begin_direct(&id(r#""a""#))
            .expect("free after cancel");
        assert!(!requests.finish_direct(&id(r#""a""#), &old));
        assert!(requests.begin_direct(&id(r#""a""#)).is_err());
        assert!(requests.finish_direct(&id(r#""a""#), &new));
    }
}
