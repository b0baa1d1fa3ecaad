//! A child's command found as a Windows user expects. `CreateProcess` (and so Rust's `Command`)
//! tries a bare name with `.exe` only, so `npx`, which is `npx.cmd` on Windows, fails to start
//! (`spawn npx ENOENT`, which users of many MCP clients meet). A shell looks the name up on `PATH`
//! with each extension of `PATHEXT` instead; so does this, and the config written on a Mac or
//! Linux (`"command": "npx"`) starts its children unchanged on Windows. A `.cmd` or `.bat` found
//! so is run by Rust's `Command` through `cmd.exe` with its arguments escaped by the rules that
//! keep them from being read as commands (and refused where no escape is safe).

use std::path::{Path, PathBuf};

/// `PATHEXT` when the environment has none: what Windows sets by default, in its order.
const DEFAULT_EXTENSIONS: &str = ".COM;.EXE;.BAT;.CMD";

/// The file `command` names when looked up on `path` (folders split by `;`) with each of
/// `extensions` (`PATHEXT`), the first that `is_file`; `None` for a command with a folder or an
/// extension of its own (it is taken as written), or one found nowhere.
pub(super) fn search(
    command: &str,
    path: Option<&str>,
    extensions: Option<&str>,
    is_file: impl Fn(&Path) -> bool,
) -> Option<PathBuf> {
    let extensions: Vec<&str> = extensions
        .filter(|given| !given.trim().is_empty())
        .unwrap_or(DEFAULT_EXTENSIONS)
        .split(';')
        .filter(|extension| extension.starts_with('.'))
        .collect();
    let has_folder = command.contains(['/', '\\', ':']);
    let has_extension = extensions.iter().any(|extension| {
        command.len() > extension.len()
            && command[command.len() - extension.len()..].eq_ignore_ascii_case(extension)
    });
    if command.is_empty() || has_folder || has_extension {
        return None;
    }
    path?
        .split(';')
        .filter(|folder| !folder.is_empty())
        .flat_map(|folder| {
            let folder = folder.trim_matches('"');
            extensions
                .iter()
                .map(move |extension| Path::new(folder).join(format!("{command}{extension}")))
        })
        .find(|candidate| is_file(candidate))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_name_is_found_with_the_first_extension_of_pathext_on_the_first_folder() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (first, second) = (dir.path().join("a"), dir.path().join("b"));
        for folder in [&first, &second] {
            std::fs::create_dir(folder).expect("folder");
        }
        // Named as PATHEXT writes the extensions: Windows' file systems ignore the case, this
        // test's does not.
        std::fs::write(second.join("npx.CMD"), "").expect("npx.CMD");
        std::fs::write(second.join("npx.PS1"), "").expect("npx.PS1");
        std::fs::write(second.join("uvx.EXE"), "").expect("uvx.EXE");
        std::fs::write(first.join("uvx.BAT"), "").expect("uvx.BAT");
        let path = format!("{};\"{}\"", first.display(), second.display());
        let found = |command: &str, extensions: Option<&str>| {
            search(command, Some(&path), extensions, Path::is_file)
        };
        assert_eq!(found("npx", None), Some(second.join("npx.CMD")));
        // The first folder wins, then the first extension in PATHEXT's order.
        assert_eq!(found("uvx", None), Some(first.join("uvx.BAT")));
        assert_eq!(found("uvx", Some(".EXE;.BAT")), Some(first.join("uvx.BAT")));
        assert_eq!(
            found("npx", Some(".PS1;.CMD")),
            Some(second.join("npx.PS1"))
        );
        // Taken as written: a folder, an extension of its own, a name found nowhere.
        assert_eq!(found("C:\\tools\\npx", None), None);
        assert_eq!(found("./npx", None), None);
        assert_eq!(found("npx.cmd", None), None);
        assert_eq!(found("node", None), None);
        assert_eq!(found("", None), None);
        assert_eq!(search("npx", None, None, Path::is_file), None);
    }
}
