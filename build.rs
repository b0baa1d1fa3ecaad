//! Links the code that serves calls together. LTO puts each function in a section of its own,
//! and the linker lays them out in the order it meets them: the functions a forwarded call runs
//! (stdio and HTTP) were spread over hundreds of pages of `.text`, each page shared with code
//! that never runs again. `benches/hot_code.order` lists them first, then start-up's, and LLD
//! places them in that order (`--symbol-ordering-file`), so a call's code fills contiguous
//! pages: fewer page faults a start and less memory resident with children open, measured with
//! the same code linked both ways (docs/performance.md, the ninth round and round 4's check).
//!
//! Only where the linker is LLD, which rustc uses by default for x86_64 Linux since 1.90 unless
//! another linker is set, and only for optimized builds. The names are a release build's, and
//! most carry a hash that changes with any dependency or the toolchain, which LLD would skip
//! without a word: `benches/hot_code.toolchain` records what the file was written for, and
//! `tests/it/hot_code.rs` fails when the build is another's; `python3 benches/hot_code.py`
//! writes both files again.
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
