use rmcp::model::{ServerNotification, ToolListChangedNotification};

use super::*;
use crate::transport::http::stream_routes::STANDALONE_KEPT;

fn list_changed() -> ServerJsonRpcMessage {
    ServerJsonRpcMessage::notification(ServerNotification::ToolListChangedNotification(
        ToolListChangedNotification::default(),
    ))
}

fn ids(from: &mut mpsc::UnboundedReceiver<ServerSseMessage>) -> Vec<String> {
    std::iter::from_fn(|| from.try_recv().ok())
        .map(|event| event.event_id.unwrap_or_default())
        .collect()
}

#[test]
fn the_get_stream_gets_what_was_sent_while_none_was_open_and_a_second_one_stays_quiet() {
    let mut standalone = Standalone::default();
    standalone.send(list_changed());
    standalone.send(list_changed());
    let mut live = standalone.open(None);
    assert_eq!(ids(&mut live), ["1", "2"]);
    let mut quiet = standalone.open(None);
    standalone.send(list_changed());
    assert_eq!(ids(&mut live), ["3"]);
    assert_eq!(ids(&mut quiet), Vec::<String>::new());
    // The live stream gone, a resume after event 1 replays what came after it.
    drop(live);
    let mut resumed = standalone.open(Some(1));
    assert_eq!(ids(&mut resumed), ["2", "3"]);
}

#[test]
fn only_the_newest_events_are_kept_for_a_get_stream() {
    let mut standalone = Standalone::default();
    for _ in 0..STANDALONE_KEPT + 4 {
        standalone.send(list_changed());
    }
    let mut live = standalone.open(None);
    let got = ids(&mut live);
    assert_eq!(got.len(), STANDALONE_KEPT);
    assert_eq!(got.first().map(String::as_str), Some("5"));
}
