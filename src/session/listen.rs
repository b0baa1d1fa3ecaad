//! 2026-07-28's `subscriptions/listen`: an agent without a session asks for a stream of the
//! changes it cares about (tool, prompt and resource lists; updates of given resources) instead
//! of `resources/subscribe`. toolshelf accepts what it can tell: list changes of prompts and
//! resources, of tools only in flat mode (toolbox mode's two tools never change), and updates
//! of every resource URI a served child holds; the children are subscribed for the stream's life
//! as `resources/subscribe` would, and unsubscribed when it ends.

use rmcp::{ErrorData as McpError, model::SubscriptionFilter, service::SubscriptionContext};

use super::state::SessionState;

impl SessionState {
    /// The part of `requested` toolshelf serves.
    pub(super) fn listen_filter(&self, requested: &SubscriptionFilter) -> SubscriptionFilter {
        let mut accepted = requested.clone();
        if !self.is_flat() {
            accepted.tools_list_changed = None;
        }
        accepted
    }

    /// Serves one stream until the agent cancels it: subscribes the children to its resources
    /// (refusing the stream if one of them has no such resource), passes their changes on, then
    /// unsubscribes them.
    pub(super) async fn listen_for(&self, context: SubscriptionContext) -> Result<(), McpError> {
        let uris = context
            .accepted()
            .resource_subscriptions
            .clone()
            .unwrap_or_default();
        let cancel = context.request_context().ct.clone();
        let (servers, _) = self.offering_servers().await;
        let routes = &self.resources;
        let _listening = self.agent.listen(context.sink().clone());
        let mut subscribed = Vec::new();
        for uri in &uris {
            let outcome = routes
                .subscription(&servers, "resources/subscribe", uri, &cancel)
                .await;
            if let Err(error) = outcome {
                self.unsubscribe_all(&subscribed).await;
                return Err(error);
            }
            subscribed.push(uri.clone());
        }
        context.cancelled().await;
        self.unsubscribe_all(&subscribed).await;
        Ok(())
    }

    async fn unsubscribe_all(&self, uris: &[String]) {
        let (servers, _) = self.offering_servers().await;
        let never = tokio_util::sync::CancellationToken::new();
        for uri in uris {
            let outcome = self
                .resources
                .subscription(&servers, "resources/unsubscribe", uri, &never)
                .await;
            if let Err(error) = outcome {
                tracing::debug!(%uri, %error, "a child was not unsubscribed at the end of a listen stream");
            }
        }
    }
}
