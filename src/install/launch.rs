//! The command a client runs to start this toolshelf: the binary's own path, or, when this
//! binary runs from a package manager's cache that may be emptied (`npx`, `uvx`), the package
//! manager's command that fetches it again, at this version.

use std::path::{Path, PathBuf};

/// How a client starts toolshelf.
pub(super) struct Launch {
    pub command: String,
    /// What comes before toolshelf's own arguments (`-y toolshelf-mcp@0.1.0` for npx).
    prefix: Vec<String>,
}

/// The npm and PyPI package that carries toolshelf.
const PACKAGE: &str = "toolshelf-mcp";

impl Launch {
    pub(super) fn of_this_program() -> Launch {
        let program = std::env::current_exe()
            .and_then(std::fs::canonicalize)
            .unwrap_or_else(|_| PathBuf::from("toolshelf"));
        Launch::of(&program)
    }

    fn of(program: &Path) -> Launch {
        let path = program.to_string_lossy();
        let pinned = format!("{PACKAGE}@{}", env!("CARGO_PKG_VERSION"));
        if path.contains("/_npx/") || path.contains("/node_modules/") {
            Launch {
                command: "npx".into(),
                prefix: vec!["-y".into(), pinned],
            }
        } else if path.contains("/uv/archive-v") || path.contains("/.cache/uv/") {
            Launch {
                command: "uvx".into(),
                prefix: vec![pinned],
            }
        } else {
            Launch {
                command: path.into_owned(),
                prefix: Vec::new(),
            }
        }
    }

    /// The arguments that serve `config` (an absolute path: clients start servers from folders
    /// of their own).
    pub(super) fn args(&self, config: &Path) -> Vec<String> {
        let mut args = self.prefix.clone();
        args.extend([
            "serve".into(),
            "--config".into(),
            config.to_string_lossy().into_owned(),
        ]);
        args
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_binary_in_a_package_cache_is_started_by_its_package_manager() {
        let version = env!("CARGO_PKG_VERSION");
        let npx = Launch::of(Path::new(
            "/home/u/.npm/_npx/1a2b/node_modules/toolshelf-mcp-linux-x64/bin/toolshelf",
        ));
        assert_eq!(npx.command, "npx");
        assert_eq!(
            npx.args(Path::new("/c.json")),
            [
                "-y",
                &format!("toolshelf-mcp@{version}"),
                "serve",
                "--config",
                "/c.json"
            ]
        );
        let uvx = Launch::of(Path::new("/home/u/.cache/uv/archive-v0/AbC/bin/toolshelf"));
        assert_eq!(uvx.command, "uvx");
        let installed = Launch::of(Path::new("/home/u/.cargo/bin/toolshelf"));
        assert_eq!(installed.command, "/home/u/.cargo/bin/toolshelf");
        assert_eq!(
            installed.args(Path::new("/c.json")),
            ["serve", "--config", "/c.json"]
        );
    }
}
