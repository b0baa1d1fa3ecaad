//! toolshelf builds for the systems it ships for, not only the one the tests run on: the macOS
//! build (`scripts/cross-build.sh`, which fetches the target's standard library and zig into
//! target/) compiles with no warning, so a `cfg` that breaks it fails here, and links against
//! the frameworks' text stubs (packaging/macos-sdk) into what macOS runs
//! (`scripts/check_binary.py`: Mach-O arm64, macOS 11 at the oldest, a code signature matching
//! its pages); Intel macOS and Linux on ARM are checked (`scripts/check-platforms.sh`). Windows
//! is built and run under Wine (`windows.rs`).

use std::{path::Path, process::Command};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

#[test]
fn toolshelf_links_for_macos_into_what_macos_runs() {
    let target = "aarch64-apple-darwin";
    let built = Command::new("bash")
        .arg(Path::new(ROOT).join("scripts/cross-build.sh"))
        .args([target, "toolshelf"])
        .output()
        .expect("bash runs");
    let said = String::from_utf8_lossy(&built.stderr);
    assert!(
        built.status.success(),
        "scripts/cross-build.sh failed:\n{said}"
    );
    assert!(
        !said.contains("warning:"),
        "warnings on another system:\n{said}"
    );
    let printed = String::from_utf8_lossy(&built.stdout);
    let folder = printed.lines().last().expect("the folder");

    let checked = Command::new(Path::new(ROOT).join("target/cross-tools/bin/python"))
        .arg(Path::new(ROOT).join("scripts/check_binary.py"))
        .arg(target)
        .arg(Path::new(folder).join("toolshelf"))
        .output()
        .expect("python runs");
    let verdict = String::from_utf8_lossy(&checked.stdout);
    assert!(
        checked.status.success() && verdict.contains("Mach-O arm64, macOS 11.0"),
        "{verdict}{}",
        String::from_utf8_lossy(&checked.stderr)
    );
}

/// The targets neither this test nor `windows` builds: Intel macOS and Linux on ARM, by `cargo
/// check` (a dependency or a `cfg` that breaks one of them fails here).
#[test]
fn toolshelf_checks_for_intel_macos_and_linux_on_arm() {
    let checked = Command::new("bash")
        .arg(Path::new(ROOT).join("scripts/check-platforms.sh"))
        .args(["x86_64-apple-darwin", "aarch64-unknown-linux-gnu"])
        .output()
        .expect("bash runs");
    let said = String::from_utf8_lossy(&checked.stderr);
    assert!(
        checked.status.success(),
        "scripts/check-platforms.sh failed:\n{said}"
    );
    assert!(
        !said.contains("warning:"),
        "warnings on another system:\n{said}"
    );
}
