//! toolshelf builds for the systems it ships for, not only the one the tests run on: a `cargo
//! check` for macOS (`scripts/check-platforms.sh`, which fetches the target's standard library
//! and zig into target/), so a `cfg` that breaks it fails here; Windows is built and run under
//! Wine (`windows.rs`). The two stand for every target: no code asks for an architecture, only
//! for a system (`architecture_platforms`).

#[test]
fn toolshelf_checks_for_macos() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/check-platforms.sh");
    let output = std::process::Command::new("bash")
        .args([script, "aarch64-apple-darwin"])
        .output()
        .expect("bash runs");
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "scripts/check-platforms.sh failed:\n{said}"
    );
    assert!(
        !said.contains("warning:"),
        "warnings on another system:\n{said}"
    );
}
