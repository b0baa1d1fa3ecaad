//! What the team gateway adds to a call of `serve --http`: one toolshelf as the other sections
//! run it (one token), one with named tokens and access rules (the caller is one from whom the
//! rules withhold a tool of the server called, so the call goes through the withheld lookup),
//! one with the same and the audit log on, and one admitting OAuth access tokens (JWTs of a
//! stand-in issuer, `issuer.rs`) under rules by group and subject: once with one token for
//! every call (checked at its first use, then remembered), once with a new token for each call
//! (its signature verified each time). The same fixture, client and call, in alternating
//! blocks; the figures are each one's added p50 over the first.

use serde_json::json;

use super::*;

impl Bench<'_> {
    pub(super) async fn gateway(&self) -> anyhow::Result<Value> {
        let fixture = self.fixture_server(&[]);
        let plain = self.config(
            "gateway_plain",
            json!({"bench": {"mcpServers": {"fx": fixture}}}),
        )?;
        let mut ruled = fixture;
        ruled["tools"] = json!({"sleep": {"access": {"callers": ["alice"]}}});
        let policy = self.dir.join("gateway_policy.json");
        std::fs::write(
            &policy,
            serde_json::to_vec(&json!({
                "access": {"callers": ["alice", "bob"]},
                "toolboxes": {"bench": {"mcpServers": {"fx": ruled}}},
            }))?,
        )?;
        let tokens = self.dir.join("gateway_tokens");
        std::fs::create_dir_all(&tokens)?;
        std::fs::write(tokens.join("alice"), "gateway-alice-token")?;
        std::fs::write(tokens.join("bob"), "gateway-bob-token")?;
        let mut by_claims = self.fixture_server(&[]);
        by_claims["tools"] = json!({"sleep": {"access": {"subjects": ["alice"]}}});
        let claims_policy = self.dir.join("gateway_claims.json");
        std::fs::write(
            &claims_policy,
            serde_json::to_vec(&json!({
                "access": {"groups": ["bench"]},
                "toolboxes": {"bench": {"mcpServers": {"fx": by_claims}}},
            }))?,
        )?;
        let issuer = Issuer::start().await?;
        let audit = self.dir.join("gateway_audit.jsonl");
        let tokens_dir = tokens.to_str().unwrap_or_default();
        let audit_log = audit.to_str().unwrap_or_default();
        let servers = [
            ServedHttp::start(&self.options.toolshelf, &plain).await?,
            ServedHttp::start_with(
                &self.options.toolshelf,
                &policy,
                &["--tokens-dir", tokens_dir],
            )
            .await?,
            ServedHttp::start_with(
                &self.options.toolshelf,
                &policy,
                &["--tokens-dir", tokens_dir, "--audit-log", audit_log],
            )
            .await?,
            ServedHttp::start_with(
                &self.options.toolshelf,
                &claims_policy,
                &["--oauth-issuer", &issuer.url],
            )
            .await?,
        ];
        let bob = json!({"sub": "bob", "groups": ["bench"], "scope": "tools"});
        let jwt_url = servers[3].url.clone();
        let open = json!({"toolbox": "bench"});
        let echo = json!({"tool": {"toolbox": "bench", "server": "fx", "name": "echo"}, "arguments": {"message": "x"}});
        let mut sessions = Vec::new();
        let bobs_token = issuer.token(&jwt_url, &bob, 0)?;
        for (at, served) in servers.iter().enumerate() {
            let token = match at {
                0 => http_serve::TOKEN,
                3 => &bobs_token,
                _ => "gateway-bob-token",
            };
            let session = DirectHttp::connect(&served.url, Some(token)).await?;
            session.call("open_toolbox", open.clone()).await?;
            sessions.push(session);
        }
        // The same session of Bob's, each call with a token it has not used before.
        let mut renewed = DirectHttp::connect(&jwt_url, Some(&bobs_token)).await?;
        renewed.call("open_toolbox", open.clone()).await?;
        let mut serial = 1;
        let (rounds, per_round) = (self.rounds(2, 20), self.rounds(20, 200));
        let mut samples: [Vec<Duration>; 5] = Default::default();
        for round in 0..=rounds {
            // Round 0 warms every path up and is not counted.
            let mut blocks: [Vec<Duration>; 5] = Default::default();
            for (block, session) in blocks.iter_mut().zip(&sessions) {
                timed(block, per_round, || session.call("use_tool", echo.clone())).await?;
            }
            let tokens = (0..per_round)
                .map(|at| issuer.token(&jwt_url, &bob, serial + at as u64))
                .collect::<anyhow::Result<Vec<_>>>()?;
            serial += per_round as u64;
            for token in &tokens {
                renewed.set_bearer(token)?;
                let began = std::time::Instant::now();
                renewed.call("use_tool", echo.clone()).await?;
                blocks[4].push(began.elapsed());
            }
            if round > 0 {
                for (all, block) in samples.iter_mut().zip(blocks) {
                    all.extend(block);
                }
            }
        }
        sessions.push(renewed);
        http_serve::close_all(sessions).await;
        let [plain, ruled, audited, jwt, jwt_new] = samples;
        Ok(json!({
            "access_rules": compare(&plain, &ruled),
            "access_rules_and_audit": compare(&plain, &audited),
            "jwt_and_rules": compare(&plain, &jwt),
            "jwt_new_token_each_call": compare(&plain, &jwt_new),
            "audit_lines": std::fs::read_to_string(&audit)?.lines().count(),
        }))
    }
}
