//! Links the code that serves calls together. LTO puts each function in a section of its own,
//! and the linker lays them out in the order it meets them: the ~560 functions a forwarded call
//! runs (stdio and HTTP) were spread over 469 pages of a 14 MB `.text`, each page shared with
//! code that never runs again. `benches/hot_code.order` lists them first, then start-up's, and
//! LLD places them in that order (`--symbol-ordering-file`), so a call's code fills 238
//! contiguous pages. Measured in turn with the same code linked both ways, `serve --http` took
//! 1.17–1.19 × the HTTP floor's CPU per call against 1.28 ×, a start 300 page faults against
//! 355, and a session with 16 children open 8.7 MB resident against 15.8 (the code it runs is
//! faulted in 64 KiB at a time; docs/performance.md, the ninth round).
//!
//! Only where the linker is LLD, which rustc uses by default for x86_64 Linux since 1.90 unless
//! another linker is set, and only for optimized builds. The names are a release build's, and
//! most carry a hash of toolshelf's crate, which changes with any dependency or the toolchain:
//! `python3 benches/hot_code.py` writes the file again then. A name the build does not have is
//! skipped, so a stale file costs only the order it no longer gives.
//! `TOOLSHELF_HOT_CODE_ORDER=0` links without it, to measure the difference;
//! `TOOLSHELF_LINK_MAP=FILE` has LLD write its map there, where the script counts the names found.

use std::{env, path::Path, process::Command};

const ORDER: &str = "benches/hot_code.order";
const TARGET: &str = "x86_64-unknown-linux-gnu";

fn main() {
    println!("cargo:rerun-if-changed={ORDER}");
    println!("cargo:rerun-if-env-changed=TOOLSHELF_HOT_CODE_ORDER");
    println!("cargo:rerun-if-env-changed=RUSTC_LINKER");
    println!("cargo:rerun-if-env-changed=CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER");
    println!("cargo:rerun-if-env-changed=TARGET_CC");
    println!("cargo:rerun-if-env-changed=TOOLSHELF_LINK_MAP");
    if !linked_by_rustcs_lld() {
        return;
    }
    let Ok(manifest) = env::var("CARGO_MANIFEST_DIR") else {
        return;
    };
    let order = Path::new(&manifest).join(ORDER);
    if order.is_file() {
        println!(
            "cargo:rustc-link-arg-bin=toolshelf=-Wl,--symbol-ordering-file={}",
            order.display()
        );
        println!("cargo:rustc-link-arg-bin=toolshelf=-Wl,--no-warn-symbol-ordering");
        if let Some(map) = env::var_os("TOOLSHELF_LINK_MAP") {
            let map = Path::new(&map).display().to_string();
            println!("cargo:rustc-link-arg-bin=toolshelf=-Wl,-Map={map}");
        }
    }
}

/// An optimized build for x86_64 Linux (glibc) by rustc 1.90 or later, its linker not set
/// anywhere cargo would take it from: GNU ld and zig's linker refuse the option. maturin's
/// `--zig`, which builds the packages, sets `RUSTC_LINKER` and the target's `…_LINKER` to its
/// zig wrapper (seen from a build script under maturin 1's `build --release --zig`).
fn linked_by_rustcs_lld() -> bool {
    let var = |name: &str| env::var(name).unwrap_or_default();
    if var("TOOLSHELF_HOT_CODE_ORDER") == "0"
        || var("PROFILE") != "release"
        || var("TARGET") != TARGET
        || env::var_os("RUSTC_LINKER").is_some()
        || env::var_os("CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER").is_some()
        || env::var_os("TARGET_CC").is_some()
    {
        return false;
    }
    let flags = var("CARGO_ENCODED_RUSTFLAGS");
    if flags.contains("linker") || flags.contains("fuse-ld") {
        return false;
    }
    rustc_minor().is_some_and(|minor| minor >= 90)
}

/// The minor version of the rustc cargo builds with (`1.MINOR.PATCH`).
fn rustc_minor() -> Option<u32> {
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let output = Command::new(rustc).arg("--version").output().ok()?;
    let text = String::from_utf8(output.stdout).ok()?;
    text.split_whitespace()
        .nth(1)?
        .split('.')
        .nth(1)?
        .parse()
        .ok()
}
