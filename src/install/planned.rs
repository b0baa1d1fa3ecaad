//! A file as a move (`consolidate`) or its undo leaves it, and the diff `--dry-run` shows of it
//! with no secret in it.

use std::path::PathBuf;

/// One file as the move leaves it.
pub(super) struct Planned {
    pub path: PathBuf,
    /// Its content now; `None`: it does not exist.
    pub before: Option<String>,
    pub after: String,
    /// It holds secrets: written owner-only, its values never printed.
    pub secret: bool,
}

impl Planned {
    /// The diff `--dry-run` prints, every value of `secrets` shown as `<secret>` (the client's
    /// file held them), and a secret file's values too.
    pub(super) fn shown_diff(&self, secrets: &[String]) -> String {
        let masked = |text: &str| -> String {
            match self.secret {
                true => text
                    .lines()
                    .map(|line| match line.split_once('=') {
                        Some((key, _)) if !line.starts_with('#') => format!("{key}=<secret>\n"),
                        _ => format!("{line}\n"),
                    })
                    .collect(),
                false => secrets
                    .iter()
                    .filter(|secret| !secret.is_empty())
                    .fold(text.to_owned(), |text, secret| {
                        text.replace(secret.as_str(), "<secret>")
                    }),
            }
        };
        let before = masked(self.before.as_deref().unwrap_or_default());
        super::diff(&self.path, &before, &masked(&self.after))
    }
}

/// The secret values that the secret files among `files` hold (`after`, else `before`), as
/// their envFile reader reads them.
pub(super) fn secrets_of(files: &[Planned]) -> Vec<String> {
    files
        .iter()
        .filter(|file| file.secret)
        .flat_map(|file| {
            let mut values = crate::config::env_file_values(&file.after);
            values.extend(crate::config::env_file_values(
                file.before.as_deref().unwrap_or_default(),
            ));
            values
        })
        .collect()
}
