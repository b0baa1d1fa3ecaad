//! `deploy/` lints clean with the registries' linters: hadolint for the Dockerfile,
//! kubernetes-validate (strict: unknown fields are errors) for the manifests, and the toolbox
//! config in the ConfigMap against `toolshelf schema`.

use std::{path::Path, process::Command};

use crate::harness::{lint_env, toolshelf_bin};

fn run(program: &Path, args: &[&str]) {
    let output = Command::new(program)
        .args(args)
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
    let printed = Command::new(toolshelf_bin())
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
}
