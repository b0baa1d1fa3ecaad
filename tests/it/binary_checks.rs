//! The check every shipped binary passes before it is packed (`scripts/check_binary.py`, run by
//! `scripts/package.sh` on each target's binary) can fail: it refuses what its target does not
//! run.

use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// scripts/check_binary.py, which package.sh runs on every binary it ships, refuses one that is
/// not what its target claims: another architecture or format, a symbol table left in, glibc
/// symbols newer than 2.17.
#[test]
fn the_binary_check_refuses_a_binary_its_target_does_not_ship() {
    let host = "x86_64-unknown-linux-gnu";
    let shipped = match std::env::var_os("TOOLSHELF_PACKAGES") {
        Some(_) => format!("target/{host}/release/toolshelf"),
        None => {
            crate::packaging::packages();
            format!("target/package/{host}/debug/toolshelf")
        }
    };
    let check = |target: &str, binary: &Path| {
        std::process::Command::new(Path::new(ROOT).join("target/cross-tools/bin/python"))
            .arg(Path::new(ROOT).join("scripts/check_binary.py"))
            .args([target, &binary.display().to_string(), "--stripped"])
            .output()
            .expect("run check_binary.py")
    };
    let passed = check(host, &Path::new(ROOT).join(shipped.as_str()));
    assert!(passed.status.success(), "{passed:?}");
    let refusals = [
        (
            host,
            PathBuf::from(crate::harness::toolshelf_bin()),
            "not stripped",
        ),
        (
            host,
            PathBuf::from(crate::harness::toolshelf_bin()),
            "newer than glibc 2.17",
        ),
        (
            "aarch64-unknown-linux-gnu",
            Path::new(ROOT).join(shipped.as_str()),
            "not aarch64",
        ),
        (
            "aarch64-apple-darwin",
            Path::new(ROOT).join(shipped.as_str()),
            "not a single-architecture Mach-O",
        ),
        (
            "x86_64-pc-windows-gnu",
            Path::new(ROOT).join(shipped.as_str()),
            "not a PE file",
        ),
    ];
    for (target, binary, says) in refusals {
        let refused = check(target, &binary);
        let said = String::from_utf8_lossy(&refused.stderr);
        assert!(
            !refused.status.success() && said.contains(says),
            "{target}: {said}"
        );
    }
}
