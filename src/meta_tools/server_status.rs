//! The status of each server in an `open_toolbox` answer, and the sentence of `open_toolbox`'s
//! description that explains every one.

use serde::Serialize;

/// Where a server of an opened toolbox is, as its entry says. `open_toolbox`'s description
/// explains every one (`ServerStatus::described`).
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum ServerStatus {
    Ready,
    Starting,
    Idle,
    Failed,
}

impl ServerStatus {
    const ALL: [ServerStatus; 4] = [
        ServerStatus::Ready,
        ServerStatus::Starting,
        ServerStatus::Idle,
        ServerStatus::Failed,
    ];

    /// The status and, where it is not plain, what it means for the agent's next call.
    fn explained(self) -> &'static str {
        match self {
            ServerStatus::Ready => "ready",
            ServerStatus::Starting => "starting (a call waits)",
            ServerStatus::Idle => "idle (its next call starts it)",
            ServerStatus::Failed => "failed (with the error)",
        }
    }

    /// Every status, explained, as `open_toolbox`'s description says them.
    pub(crate) fn described() -> String {
        let explained: Vec<&str> = ServerStatus::ALL.iter().map(|s| s.explained()).collect();
        let (last, rest) = explained.split_last().unwrap_or((&"", &[]));
        format!("A server is {} or {last}.", rest.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every variant written in `ServerStatus`'s declaration, read from this file, is in the
    /// description the agent reads.
    #[test]
    fn the_description_explains_every_status_the_code_declares() {
        let code = include_str!("server_status.rs");
        let declared = code
            .split_once("pub(crate) enum ServerStatus {")
            .and_then(|(_, rest)| rest.split_once('}'))
            .map(|(variants, _)| variants)
            .expect("the enum's declaration");
        let variants: Vec<String> = declared
            .split(',')
            .map(str::trim)
            .filter(|variant| !variant.is_empty())
            .map(str::to_lowercase)
            .collect();
        assert_eq!(variants.len(), ServerStatus::ALL.len(), "{variants:?}");
        let description = ServerStatus::described();
        for variant in variants {
            let words: Vec<&str> = description
                .split(|c: char| !c.is_ascii_alphabetic())
                .collect();
            assert!(
                words.contains(&variant.as_str()),
                "{variant} is not said in: {description}"
            );
        }
    }
}
