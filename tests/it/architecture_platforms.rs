//! Platform code lives at one seam per concern, `cfg` there only: the process tree
//! (`children::process_tree`), owner-only files (`private_file`), the system's signals
//! (`signals`), and Linux's own memory calls (`main`'s allocator settings, `resident_code`).
//! A `cfg` on the system anywhere else fails this test.

use std::fs;

/// The files that may ask which system they are built for.
const SEAMS: &[&str] = &[
    "children/process_tree/mod.rs",
    "children/process_tree/unix.rs",
    "children/process_tree/windows.rs",
    "private_file.rs",
    "signals.rs",
    "main.rs",
    "resident_code.rs",
];

/// Whether `code` asks which system it is built for.
fn asks_the_system(code: &str) -> bool {
    let code: String = code.split_whitespace().collect();
    [
        "unix",
        "windows",
        "target_os",
        "target_env",
        "target_family",
    ]
    .iter()
    .any(|word| {
        [
            "cfg(",
            "cfg(not(",
            "cfg(all(",
            "cfg(any(",
            "cfg!(",
            "cfg_attr(",
        ]
        .iter()
        .any(|start| code.contains(&format!("{start}{word}")))
    })
}

#[test]
fn only_the_seams_ask_which_system_they_are_built_for() {
    let mut elsewhere: Vec<String> = crate::architecture::rust_files("src")
        .into_iter()
        .filter(|(_, path)| asks_the_system(&fs::read_to_string(path).expect("reads")))
        .map(|(relative, _)| relative.display().to_string())
        .filter(|relative| !SEAMS.contains(&relative.as_str()))
        .collect();
    elsewhere.sort();
    assert!(
        elsewhere.is_empty(),
        "platform code outside its seams: {elsewhere:?}; move it to the seam of its concern"
    );
}

/// The cross checks stand for every target by one of each system (`platforms.rs`): that holds
/// while no code asks for an architecture.
#[test]
fn no_code_asks_for_an_architecture() {
    let asking: Vec<String> = crate::architecture::rust_files("src")
        .into_iter()
        .filter(|(_, path)| {
            fs::read_to_string(path)
                .expect("reads")
                .contains("target_arch")
        })
        .map(|(relative, _)| relative.display().to_string())
        .collect();
    assert!(
        asking.is_empty(),
        "code that asks for an architecture: {asking:?}"
    );
}

#[test]
fn a_cfg_on_the_system_is_seen() {
    assert!(asks_the_system("#[cfg(unix)]\nfn a() {}"));
    assert!(asks_the_system("#[cfg(all(target_os = \"linux\", test))]"));
    assert!(asks_the_system("if cfg!(windows) {}"));
    assert!(!asks_the_system("#[cfg(test)]\nmod tests;"));
}
