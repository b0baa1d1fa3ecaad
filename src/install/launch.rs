//! The command a client runs to start this toolshelf: the binary's own path, or, when this
//! binary runs from a package runner's cache, which may be emptied (`npx`, `uvx`, `pipx run`),
//! the runner's command that fetches it again, at this version. A package installed for good
//! (`npm install -g`, `uv tool install`, `pipx install`, `cargo install`) is started by its path.

use std::path::{Path, PathBuf};

/// How a client starts toolshelf.
pub(super) struct ClientLaunch {
    pub command: String,
    /// What comes before toolshelf's own arguments (`-y toolshelf-mcp@0.1.0` for npx).
    prefix: Vec<String>,
}

/// The npm and PyPI package that carries toolshelf.
const PACKAGE: &str = "toolshelf-mcp";

impl ClientLaunch {
    pub(super) fn of_this_program() -> ClientLaunch {
        let program = std::env::current_exe()
            .ok()
            .and_then(|program| crate::children::process_tree::path_for_clients(&program))
            .unwrap_or_else(|| PathBuf::from("toolshelf"));
        ClientLaunch::of(&program)
    }

    fn of(program: &Path) -> ClientLaunch {
        let path = program.to_string_lossy();
        // The caches' folders, whichever separator the system writes.
        let folders = path.replace('\\', "/");
        let pinned = format!("{PACKAGE}@{}", env!("CARGO_PKG_VERSION"));
        if folders.contains("/_npx/") {
            ClientLaunch {
                command: "npx".into(),
                prefix: vec!["-y".into(), pinned],
            }
        } else if folders.contains("/uv/archive-v") || folders.contains("/uv/cache/archive-v") {
            ClientLaunch {
                command: "uvx".into(),
                prefix: vec![pinned],
            }
        } else if folders.contains("/pipx/.cache/") {
            let spec = format!("{PACKAGE}=={}", env!("CARGO_PKG_VERSION"));
            ClientLaunch {
                command: "pipx".into(),
                prefix: vec!["run".into(), "--spec".into(), spec, PACKAGE.into()],
            }
        } else {
            ClientLaunch {
                command: path.into_owned(),
                prefix: Vec::new(),
            }
        }
    }

    /// The command and arguments a client's entry holds to serve `config`, as the client's
    /// system starts them (on Windows, `npx` through `cmd /c`).
    pub(super) fn entry(&self, config: &Path) -> (String, Vec<String>) {
        crate::children::process_tree::command_for_clients(self.command.clone(), self.args(config))
    }

    /// The arguments that serve `config` (an absolute path: clients start servers from folders
    /// of their own).
    fn args(&self, config: &Path) -> Vec<String> {
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
        let npx = ClientLaunch::of(Path::new(
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
        let uvx = ClientLaunch::of(Path::new("/home/u/.cache/uv/archive-v0/AbC/bin/toolshelf"));
        assert_eq!(uvx.command, "uvx");
        // The same caches on Windows.
        for windows in [
            r"C:\Users\u\AppData\Local\npm-cache\_npx\1a2b\node_modules\toolshelf-mcp-win32-x64\bin\toolshelf.exe",
            r"C:\Users\u\AppData\Local\uv\cache\archive-v0\AbC\Scripts\toolshelf.exe",
        ] {
            assert_ne!(ClientLaunch::of(Path::new(windows)).command, windows);
        }
        let pipx = ClientLaunch::of(Path::new(
            "/home/u/.local/pipx/.cache/0123abcd/bin/toolshelf",
        ));
        assert_eq!(
            pipx.args(Path::new("/c.json"))[..4],
            [
                "run",
                "--spec",
                &format!("toolshelf-mcp=={version}"),
                "toolshelf-mcp"
            ]
        );
        let global = "/usr/lib/node_modules/toolshelf-mcp-linux-x64/bin/toolshelf";
        assert_eq!(ClientLaunch::of(Path::new(global)).command, global);
        let installed = ClientLaunch::of(Path::new("/home/u/.cargo/bin/toolshelf"));
        assert_eq!(installed.command, "/home/u/.cargo/bin/toolshelf");
        assert_eq!(
            installed.args(Path::new("/c.json")),
            ["serve", "--config", "/c.json"]
        );
    }
}
