//! `benches/hot_code.order`, which build.rs hands to the linker: the functions that serve a call
//! first, start-up's after them, each a symbol name once. The file is written by
//! `benches/hot_code.py`; a hand edit or a broken run of it would be taken by the linker as is.
//! Its names carry hashes that change with the compiler and the dependencies, and LLD skips a
//! name the build does not have without a word: so the test fails when the toolchain or
//! Cargo.lock is not the one the file was written for (`benches/hot_code.toolchain`).

use std::collections::BTreeSet;

use sha2::Digest;

fn order() -> Vec<String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/hot_code.order");
    std::fs::read_to_string(path)
        .expect("benches/hot_code.order reads")
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn each_line_names_one_function_once() {
    let order = order();
    assert!(order.len() > 100, "{} names", order.len());
    let odd: Vec<_> = order
        .iter()
        .filter(|name| name.is_empty() || name.contains(char::is_whitespace))
        .collect();
    assert!(
        odd.is_empty(),
        "lines that are not one symbol name: {odd:?}"
    );
    let distinct: BTreeSet<_> = order.iter().collect();
    assert_eq!(distinct.len(), order.len(), "a name listed twice");
}

#[test]
fn the_code_that_serves_a_call_comes_before_start_ups() {
    let order = order();
    let position = |module: &str| order.iter().position(|name| name.contains(module));
    // Mangled module paths: toolshelf::session::door, children::tool_calls, the HTTP gate.
    // (stdio's router is inlined into the task that polls it since `SessionState::route`: its
    // code is named by tokio's generic functions there.)
    let call_path = [
        "9toolshelf7session4door",
        "9toolshelf8children10tool_calls",
        "9toolshelf9transport4http4gate",
    ];
    let last_of_call = call_path
        .iter()
        .map(|module| position(module).unwrap_or_else(|| panic!("{module} is not in the order")))
        .max()
        .expect("modules");
    let first_of_cli = position("9toolshelf3cli").expect("the command line's code is listed");
    assert!(
        last_of_call < first_of_cli,
        "the call's code (up to line {last_of_call}) must come before start-up's (line {first_of_cli})"
    );
}

/// What this build's symbol names come from, as `benches/hot_code.py` writes it.
fn toolchain() -> String {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    let verbose = std::process::Command::new(rustc)
        .arg("-vV")
        .output()
        .expect("rustc -vV runs");
    let verbose = String::from_utf8_lossy(&verbose.stdout).into_owned();
    let commit = verbose
        .lines()
        .find(|line| line.starts_with("commit-hash: "))
        .expect("rustc names its commit");
    let lock =
        std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.lock")).expect("Cargo.lock");
    let digest: String = sha2::Sha256::digest(&lock)
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    format!("rustc {commit}\nCargo.lock sha256: {digest}\n")
}

/// A compiler or dependency update gives most functions new names, and the linker would skip
/// the stale ones silently: the order must be written again for the build it orders.
#[test]
fn the_order_is_for_this_compiler_and_these_dependencies() {
    let written = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/benches/hot_code.toolchain"
    ))
    .expect("benches/hot_code.toolchain reads");
    let now = toolchain();
    assert_eq!(
        written, now,
        "benches/hot_code.order was written for another compiler or Cargo.lock, so a release build would lay out none of its renamed functions: run python3 benches/hot_code.py (about 10 minutes) and commit benches/hot_code.order and benches/hot_code.toolchain"
    );
}
