//! Replicas of `serve --http` behind HAProxy (`deploy/haproxy.cfg`): sessions stay on their
//! replica, clients without a session spread, a lost replica's sessions start anew elsewhere.

use std::process::Stdio;

use serde_json::{Value, json};

use crate::harness::{
    DEADLINE, children_of, free_port,
    http::{fixture_config, haproxy, serve, wait_healthy},
    python_env,
};

#[tokio::test]
async fn replicas_behind_haproxy_keep_sessions_apart_and_recover_from_a_lost_replica() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    let (_dir, path) = fixture_config();
    let token = "replica-t0ken";
    let mut replicas = Vec::new();
    for _ in 0..3 {
        replicas.push(serve(&path, token).await);
    }
    let lb_port = free_port();
    // HAProxy's own warnings go to a file beside the config, not into the tests' output.
    let haproxy_log = std::fs::File::create(_dir.path().join("haproxy.log")).expect("log file");
    let _balancer = tokio::process::Command::new(haproxy())
        .args(["-db", "-f"])
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/haproxy.cfg"))
        .env("LB_PORT", lb_port.to_string())
        .env("REPLICA1_PORT", replicas[0].1.to_string())
        .env("REPLICA2_PORT", replicas[1].1.to_string())
        .env("REPLICA3_PORT", replicas[2].1.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(haproxy_log)
        .kill_on_drop(true)
        .spawn()
        .expect("start haproxy");
    wait_healthy(lb_port).await;

    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/python/replicas_client.py"
    );
    let mut client = tokio::process::Command::new(python_env().join("bin/python"))
        .arg(script)
        .arg(format!("http://127.0.0.1:{lb_port}/mcp"))
        .arg(token)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start the agents");
    let mut lines = BufReader::new(client.stdout.take().expect("stdout")).lines();
    let mut next_line = async || -> Value {
        let line = tokio::time::timeout(DEADLINE, lines.next_line())
            .await
            .expect("the agents answer in time")
            .expect("read")
            .expect("a line");
        serde_json::from_str(&line).unwrap_or_else(|_| panic!("not JSON: {line}"))
    };
    // Which replica a fixture process belongs to.
    let replica_pids: Vec<u32> = replicas
        .iter()
        .map(|(process, _)| process.id().expect("replica pid"))
        .collect();
    let replica_of = |pid: &Value| -> usize {
        let pid: u32 = pid
            .as_str()
            .and_then(|pid| pid.parse().ok())
            .expect("a pid");
        replica_pids
            .iter()
            .position(|replica| children_of(*replica).contains(&pid))
            .unwrap_or_else(|| panic!("pid {pid} is no replica's child"))
    };

    let first = next_line().await;
    let sessions: Vec<Vec<usize>> = first["sessions"]
        .as_array()
        .expect("sessions")
        .iter()
        .map(|pids| {
            pids.as_array()
                .expect("pids")
                .iter()
                .map(replica_of)
                .collect()
        })
        .collect();
    // A session's calls all reach the replica that holds it; sessions spread over replicas.
    for calls in &sessions {
        assert!(calls.iter().all(|replica| *replica == calls[0]), "{first}");
    }
    let used: std::collections::BTreeSet<usize> = sessions.iter().map(|calls| calls[0]).collect();
    assert!(used.len() >= 2, "sessions on replicas {used:?}: {first}");
    // Calls without a session go to any replica.
    let spread: std::collections::BTreeSet<usize> = first["sessionless"]
        .as_array()
        .expect("sessionless")
        .iter()
        .map(replica_of)
        .collect();
    assert!(
        spread.len() >= 2,
        "sessionless calls on {spread:?}: {first}"
    );

    // The replica of the first session is lost.
    let lost = sessions[0][0];
    replicas[lost].0.start_kill().expect("kill a replica");
    let _ = replicas[lost].0.wait().await;
    let mut stdin = client.stdin.take().expect("stdin");
    stdin.write_all(b"killed\n").await.expect("tell the agents");
    stdin.flush().await.expect("flush");

    let second = next_line().await;
    let after = second["after"].as_array().expect("after");
    for (number, seen) in after.iter().enumerate() {
        let expected = json!(json!({ "said": seen["said"] }).to_string());
        if sessions[number][0] == lost {
            // The spec's 404 for a session the replica that answered does not hold.
            assert_eq!(seen["error"], json!("Session terminated"), "{second}");
            assert_eq!(seen["answer_after_new_session"], expected, "{second}");
            assert_ne!(replica_of(&seen["pid_after_new_session"]), lost, "{second}");
        } else {
            // Sessions elsewhere go on, each answered with its own call's result.
            assert_eq!(seen["error"], Value::Null, "{second}");
            assert_eq!(seen["answer"], expected, "{second}");
        }
    }
}
