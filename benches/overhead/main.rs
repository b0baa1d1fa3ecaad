//! `cargo bench --bench overhead [-- --quick] [--only SECTION]...`: what toolshelf costs over
//! calling a child directly, measured side by side in one run. Prints a table and writes
//! `target/bench/overhead.json`. See docs/performance.md.

mod http_child;
mod http_serve;
mod issuer;
// How the tests start `serve --http` and wait for servers: one way, in one file.
#[path = "../../tests/it/harness/launch.rs"]
mod launch;
mod measure;

use std::{io::Write, path::PathBuf, process::ExitCode};

fn main() -> ExitCode {
    let mut options = measure::Options {
        quick: false,
        toolshelf: PathBuf::from(env!("CARGO_BIN_EXE_toolshelf")),
        fixture: PathBuf::from(env!("CARGO_BIN_EXE_toolshelf-fixture")),
        floor: PathBuf::from(env!("CARGO_BIN_EXE_toolshelf-floor")),
        npm_bin: Some(PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/target/interop/node_modules/.bin"
        )))
        .filter(|bin| bin.join("mcp-server-everything").exists()),
        python: Some(PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/target/pyenv/bin/python"
        )))
        .filter(|python| python.exists()),
        only: Vec::new(),
    };
    let mut out = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/target/bench/overhead.json"
    ));
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--quick" => options.quick = true,
            "--out" => out = args.next().map(PathBuf::from).unwrap_or(out),
            "--only" => match args.next() {
                Some(section) if measure::SECTIONS.contains(&section.as_str()) => {
                    options.only.push(section)
                }
                given => {
                    let _ = writeln!(
                        std::io::stderr(),
                        "--only takes one of {} (given: {})",
                        measure::SECTIONS.join(", "),
                        given.as_deref().unwrap_or("nothing")
                    );
                    return ExitCode::from(2);
                }
            },
            "--bench" => {} // passed by `cargo bench`
            other => {
                let _ = writeln!(
                    std::io::stderr(),
                    "unknown argument {other}; use --quick, --only SECTION or --out FILE"
                );
                return ExitCode::from(2);
            }
        }
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            let _ = writeln!(std::io::stderr(), "cannot start the runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let report = match runtime.block_on(measure::run(&options)) {
        Ok(report) => report,
        Err(error) => {
            let _ = writeln!(std::io::stderr(), "benchmark failed: {error:#}");
            return ExitCode::FAILURE;
        }
    };
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{}", measure::table(&report));
    if let Some(parent) = out.parent() {
        let _ = std::fs::create_dir_all(parent);
    }
    match serde_json::to_vec_pretty(&report).map(|json| std::fs::write(&out, json)) {
        Ok(Ok(())) => {
            let _ = writeln!(stdout, "figures written to {}", out.display());
            ExitCode::SUCCESS
        }
        _ => {
            let _ = writeln!(std::io::stderr(), "cannot write {}", out.display());
            ExitCode::FAILURE
        }
    }
}
