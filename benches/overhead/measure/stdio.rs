//! The stdio rows: round trips of a no-op and of large results, calls per second at 1 to 128 in
//! flight, and toolshelf's resident memory.

use serde_json::{Value, json};

use super::*;

impl Bench<'_> {
    /// 1. Sequential round trip of a no-op tool.
    pub(super) async fn latency(&self, direct: &Client, proxied: &Client) -> anyhow::Result<Value> {
        let (rounds, per_round) = (self.rounds(4, 40), self.rounds(50, 500));
        let (a, b) = self
            .alternate(direct, proxied, "echo", json!({}), rounds, per_round)
            .await?;
        Ok(compare(&a, &b))
    }

    /// 2. The same with large text results.
    pub(super) async fn payload(&self, direct: &Client, proxied: &Client) -> anyhow::Result<Value> {
        let mut figures = serde_json::Map::new();
        for (label, bytes, per_round) in [("100KB", 100_000, 50), ("1MB", 1_000_000, 10)] {
            let rounds = self.rounds(2, 10);
            let per_round = if self.options.quick { 3 } else { per_round };
            let arguments = json!({"bytes": bytes});
            let (a, b) = self
                .alternate(direct, proxied, "big", arguments, rounds, per_round)
                .await?;
            figures.insert(label.into(), compare(&a, &b));
        }
        Ok(Value::Object(figures))
    }

    /// 3. Calls per second with N calls in flight on one connection.
    pub(super) async fn throughput(
        &self,
        direct: &Client,
        proxied: &Client,
    ) -> anyhow::Result<Value> {
        let total = self.rounds(200, 4000);
        let rounds = self.rounds(1, 3);
        let mut figures = serde_json::Map::new();
        for in_flight in [1usize, 8, 32, 128] {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            for _ in 0..rounds {
                a.push(rate(total, in_flight, || call(direct, "echo", json!({}))).await?);
                b.push(rate(total, in_flight, || use_tool(proxied, "echo", json!({}))).await?);
            }
            figures.insert(in_flight.to_string(), rates(&mut a, &mut b));
        }
        Ok(Value::Object(figures))
    }

    /// 5. toolshelf's resident memory: idle, with 16 children open, and over many calls.
    pub(super) async fn memory(
        &self,
        proxied: &Client,
        pid_with_one: u32,
    ) -> anyhow::Result<Value> {
        // A fresh toolshelf for the idle and 16-children figures.
        let servers: serde_json::Map<String, Value> = (0..16)
            .map(|index| (format!("fx{index}"), self.fixture_server(&[])))
            .collect();
        let config = self.config("memory", json!({"many": {"mcpServers": servers}}))?;
        let (client, pid) = self.toolshelf(&config).await?;
        // Idle: toolshelf has also handled the `initialized` notification that follows the
        // answer, which ends its start-up (its start-up code is unmapped then).
        tokio::time::sleep(Duration::from_millis(200)).await;
        let idle = rss_kb(pid)?;
        let idle_private = private_kb(pid)?;
        call(&client, "open_toolbox", json!({"toolbox": "many"})).await?;
        let with_16 = rss_kb(pid)?;
        close(client).await;

        // Growth over many calls, on the toolshelf that has served all the runs above.
        let calls = self.rounds(2_000, 100_000);
        rate(calls / 10, 32, || use_tool(proxied, "echo", json!({}))).await?;
        let before = rss_kb(pid_with_one)?;
        rate(calls, 32, || use_tool(proxied, "echo", json!({}))).await?;
        let after = rss_kb(pid_with_one)?;
        Ok(json!({
            "idle_kb": idle,
            "idle_private_kb": idle_private,
            "with_16_children_kb": with_16,
            "calls": calls,
            "before_calls_kb": before,
            "after_calls_kb": after,
            "growth_kb": after as i64 - before as i64,
        }))
    }
}
