//! `deploy/` lints clean with the registries' linters: hadolint for the Dockerfile,
//! kubernetes-validate (strict: unknown fields are errors) for the manifests, the toolbox
//! config in the ConfigMap against `toolshelf schema`, and both HAProxy configs with
//! `haproxy -c`.

use std::{path::Path, process::Command};

use crate::harness::{http::haproxy, lint_env};

fn run(program: &Path, args: &[&str]) {
    run_with(program, args, &[]);
}

fn run_with(program: &Path, args: &[&str], env: &[(&str, &str)]) {
    let output = Command::new(program)
        .args(args)
        .envs(env.iter().copied())
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap_or_else(|error| panic!("run {}: {error}", program.display()));
    assert!(
        output.status.success(),
        "{} {args:?} found problems:\n{}{}",
        program.display(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn the_dockerfile_and_the_kubernetes_manifests_lint_clean() {
    let env = lint_env();
    run(&env.join("bin/hadolint"), &["deploy/Dockerfile"]);
    let manifests: Vec<String> =
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/kubernetes"))
            .expect("deploy/kubernetes")
            .map(|entry| entry.expect("entry").path().display().to_string())
            .filter(|path| path.ends_with(".yaml"))
            .collect();
    assert!(manifests.len() >= 4, "{manifests:?}");
    let mut args = vec!["--strict"];
    args.extend(manifests.iter().map(String::as_str));
    run(&env.join("bin/kubernetes-validate"), &args);

    let schema = tempfile::NamedTempFile::new().expect("temp file");
    let printed = crate::harness::toolshelf_std()
        .arg("schema")
        .output()
        .expect("toolshelf schema");
    std::fs::write(schema.path(), printed.stdout).expect("write the schema");
    let schema_path = schema.path().display().to_string();
    run(
        &env.join("bin/python"),
        &[
            "tests/deploy/check_configmap.py",
            "deploy/kubernetes/configmap.yaml",
            &schema_path,
        ],
    );

    let balancer = tempfile::NamedTempFile::new().expect("temp file");
    let balancer_path = balancer.path().display().to_string();
    run(
        &env.join("bin/python"),
        &[
            "tests/deploy/configmap_key.py",
            "deploy/kubernetes/balancer.yaml",
            "toolshelf-balancer",
            "haproxy.cfg",
            &balancer_path,
        ],
    );
    let haproxy = haproxy();
    run(&haproxy, &["-c", "-f", &balancer_path]);
    let ports = [
        ("LB_PORT", "9000"),
        ("REPLICA1_PORT", "9001"),
        ("REPLICA2_PORT", "9002"),
        ("REPLICA3_PORT", "9003"),
    ];
    run_with(&haproxy, &["-c", "-f", "deploy/haproxy.cfg"], &ports);
}

#[test]
fn the_balancer_config_the_docs_quote_is_deploys() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = std::fs::read_to_string(root.join("deploy/haproxy.cfg")).expect("haproxy.cfg");
    let docs = std::fs::read_to_string(root.join("docs/deployment.md")).expect("deployment.md");
    let quoted = crate::docs::block_after(&docs, "## Scaling out");
    let lines: Vec<&str> = config.lines().map(str::trim_end).collect();
    for line in quoted.lines().filter(|line| !line.trim().is_empty()) {
        assert!(
            lines.contains(&line.trim_end()),
            "docs/deployment.md quotes a line deploy/haproxy.cfg does not have: {line}"
        );
    }
}
