//! toolshelf builds for the systems it ships for, not only the one the tests run on: the macOS
//! build (`scripts/cross-build.sh`, which fetches the target's standard library and zig into
//! target/) compiles with no warning, so a `cfg` that breaks it fails here, and links against
//! the frameworks' text stubs (packaging/macos-sdk) into what macOS runs
//! (`scripts/check_binary.py`: Mach-O arm64, macOS 11 at the oldest, a code signature matching
//! its pages); Intel macOS, Linux on ARM and Windows on ARM are checked
//! (`scripts/check-platforms.sh`). Windows x64 is built and run under Wine (`windows.rs`).

use std::{path::Path, process::Command};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Runs `scripts/SCRIPT ARGS…`, which must succeed without a compiler warning; gives what it
/// printed on stdout.
fn cross(script: &str, args: &[&str]) -> String {
    let ran = Command::new("bash")
        .arg(Path::new(ROOT).join("scripts").join(script))
        .args(args)
        .output()
        .expect("bash runs");
    let said = String::from_utf8_lossy(&ran.stderr);
    assert!(ran.status.success(), "scripts/{script} failed:\n{said}");
    assert!(
        !said.contains("warning:"),
        "warnings on another system:\n{said}"
    );
    String::from_utf8_lossy(&ran.stdout).into_owned()
}

#[test]
fn toolshelf_links_for_macos_into_what_macos_runs() {
    let target = "aarch64-apple-darwin";
    let printed = cross("cross-build.sh", &[target, "toolshelf"]);
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

/// The targets neither this test nor `windows` builds: Intel macOS, Linux on ARM and Windows on
/// ARM, by `cargo check` (a dependency or a `cfg` that breaks one of them fails here).
#[test]
fn toolshelf_checks_for_intel_macos_and_for_arm() {
    cross(
        "check-platforms.sh",
        &[
            "x86_64-apple-darwin",
            "aarch64-unknown-linux-gnu",
            "aarch64-pc-windows-gnullvm",
        ],
    );
}
