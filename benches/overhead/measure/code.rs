//! Code mode's rows: a `run_code` script that makes one call, beside the same call through
//! `use_tool` on the same `toolshelf serve --code` (the script's interpreter started anew each
//! run), and the private memory a script holds while it waits on its call.

use serde_json::{Value, json};

use super::*;

/// Scripts in flight at once for the memory figure.
const SCRIPTS_IN_FLIGHT: usize = 32;

impl Bench<'_> {
    pub(super) async fn code(&self) -> anyhow::Result<Value> {
        let config = self.config(
            "code",
            json!({"bench": {"mcpServers": {"fx": self.fixture_server(&[])}}}),
        )?;
        let mut command = tokio::process::Command::new(&self.options.toolshelf);
        command
            .args(["serve", "--code", "--no-cache", "--config"])
            .arg(&config)
            .env("RUST_LOG", "error");
        let (client, pid) = connect(command).await?;
        call(&client, "open_toolbox", json!({"toolbox": "bench"})).await?;
        let script = json!({"code": "await call_tool('bench/fx/echo', {})"});
        let (rounds, per_round) = (self.rounds(4, 40), self.rounds(25, 250));
        let (mut used, mut scripted) = (Vec::new(), Vec::new());
        for _ in 0..per_round.min(100) {
            use_tool(&client, "echo", json!({})).await?;
            run_code(&client, &script).await?;
        }
        for _ in 0..rounds {
            for _ in 0..per_round {
                let began = Instant::now();
                use_tool(&client, "echo", json!({})).await?;
                used.push(began.elapsed());
            }
            for _ in 0..per_round {
                let began = Instant::now();
                run_code(&client, &script).await?;
                scripted.push(began.elapsed());
            }
        }
        let one_call = compare(&used, &scripted);

        // Scripts waiting on a slow call: what each holds beyond an idle toolshelf.
        let before = private_kb(pid)?;
        let waiting = json!({"code": "await call_tool('bench/fx/sleep', {'ms': 1500})"});
        let runs: Vec<_> = (0..SCRIPTS_IN_FLIGHT)
            .map(|_| run_code(&client, &waiting))
            .collect();
        let measured = async {
            tokio::time::sleep(Duration::from_millis(700)).await;
            private_kb(pid)
        };
        let (during, ended) = tokio::join!(measured, futures::future::join_all(runs));
        ended.into_iter().collect::<anyhow::Result<Vec<_>>>()?;
        let during = during?;
        close(client).await;
        Ok(json!({
            "one_call": one_call,
            "scripts_in_flight": SCRIPTS_IN_FLIGHT,
            "private_kb_per_script": round((during as f64 - before as f64) / SCRIPTS_IN_FLIGHT as f64),
        }))
    }
}

async fn run_code(client: &Client, script: &Value) -> anyhow::Result<CallToolResult> {
    let result = call(client, "run_code", script.clone()).await?;
    if result.is_error == Some(true) {
        bail!("run_code failed: {result:?}");
    }
    Ok(result)
}
