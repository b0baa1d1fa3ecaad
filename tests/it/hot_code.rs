//! `benches/hot_code.order`, which build.rs hands to the linker: the functions that serve a call
//! first, start-up's after them, each a symbol name once. The file is written by
//! `benches/hot_code.py`; a hand edit or a broken run of it would be taken by the linker as is.

use std::collections::BTreeSet;

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
    // Mangled module paths: toolshelf::session::door, children::tool_calls, the HTTP gate,
    // stdio's router.
    let call_path = [
        "9toolshelf7session4door",
        "9toolshelf8children10tool_calls",
        "9toolshelf9transport4http4gate",
        "9toolshelf9transport5stdio6router",
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
