use rmcp::model::{ElicitRequest, ElicitRequestParams};

use super::*;

#[tokio::test]
async fn a_request_the_agent_cannot_take_is_refused_at_once_and_says_why() {
    let link = SessionLink::default();
    let params: ElicitRequestParams = serde_json::from_value(serde_json::json!({
        "message": "name?",
        "requestedSchema": {"type": "object", "properties": {}}
    }))
    .expect("params");
    let request = ServerRequest::ElicitRequest(ElicitRequest::new(params));
    let refused = link
        .relay(
            Relayed::Elicitation,
            request,
            "dev/fixture",
            None,
            &CancellationToken::new(),
        )
        .await
        .expect_err("no agent session");
    assert_eq!(refused.code, ErrorCode::METHOD_NOT_FOUND);
    assert_eq!(
        refused.message,
        "elicitation/create from dev/fixture cannot be relayed: no call of the MCP client that declared elicitation is in flight on dev/fixture (clients on protocol 2026-07-28 answer servers' requests only as part of a call)"
    );
    assert_eq!(link.child_capabilities(), ClientCapabilities::default());
}
