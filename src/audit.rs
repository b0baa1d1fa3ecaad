//! The audit log (`serve --audit-log FILE`): one JSON line for every call of a child's tool,
//! every open and every search, on both transports: when, who (the caller its token names and
//! the session), what (toolbox, server, tool), how it ended, how long it took, the revision of
//! the server's tool list, and a SHA-256 of the arguments — never their values, never a token.
//! The file is the owner's alone and bounded: past its size limit it moves to `FILE.1`
//! (replacing the one before) and a new file begins. `-` writes the lines to stderr instead.

use std::{
    io::Write,
    path::{Path, PathBuf},
    sync::{Mutex, OnceLock},
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::locks;

/// The process's audit log, once `install`ed.
static LOG: OnceLock<AuditLog> = OnceLock::new();

struct AuditLog {
    sink: Mutex<Sink>,
}

enum Sink {
    Stderr,
    File {
        path: PathBuf,
        file: std::fs::File,
        written: u64,
        limit: u64,
    },
}

/// One line of the log.
#[derive(Serialize)]
pub(crate) struct Record<'a> {
    /// `call`, `open`, `search` or `script` (a `run_code`).
    pub event: &'static str,
    pub caller: Option<&'a str>,
    pub session: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub toolbox: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<&'a str>,
    /// `ok`, `tool_error` (the tool answered `isError`), `refused` (a JSON-RPC error), or the
    /// kind of toolshelf's own error (`toolbox_not_open`, `timeout`, …).
    pub outcome: &'a str,
    pub ms: f64,
    /// The revision of the server's tool list the call was resolved against.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revision: Option<u64>,
    /// `sha256:` and the hex digest of the arguments as the agent sent them (of a search's
    /// query, for `search`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// The `run_code` script a call was made by (or, for `script`, the one that ran): the
    /// digest of its code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub script: Option<&'a str>,
}

/// Starts the audit log at `path` (`-`: stderr), a file kept under `limit` bytes.
pub fn install(path: &Path, limit: u64) -> Result<(), String> {
    let sink = if path == Path::new("-") {
        Sink::Stderr
    } else {
        let file = open(path)?;
        let written = file.metadata().map_or(0, |meta| meta.len());
        Sink::File {
            path: path.to_owned(),
            file,
            written,
            limit,
        }
    };
    let _ = LOG.set(AuditLog {
        sink: Mutex::new(sink),
    });
    Ok(())
}

fn open(path: &Path) -> Result<std::fs::File, String> {
    crate::private_file::append(path).map_err(|error| {
        format!(
            "cannot open the audit log {}: {error}; give a file in a folder toolshelf can write, or - for stderr",
            path.display()
        )
    })
}

/// True when calls are audited (so their records are worth making).
pub(crate) fn enabled() -> bool {
    LOG.get().is_some()
}

/// `sha256:HEX` of `bytes`.
pub(crate) fn digest(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    let mut text = String::with_capacity(7 + 64);
    text.push_str("sha256:");
    for byte in hash {
        text.push_str(&format!("{byte:02x}"));
    }
    text
}

/// Writes `record` as one line, if the log is on; a failed write is logged, never fatal.
pub(crate) fn record(record: &Record<'_>) {
    let Some(log) = LOG.get() else {
        return;
    };
    let Ok(body) = serde_json::to_string(record) else {
        return;
    };
    let line = format!(
        "{{\"time\":\"{}\",{}\n",
        rfc3339(SystemTime::now()),
        &body[1..]
    );
    let mut sink = locks::lock(&log.sink);
    let written = match &mut *sink {
        Sink::Stderr => std::io::stderr().lock().write_all(line.as_bytes()),
        Sink::File {
            path,
            file,
            written,
            limit,
        } => {
            if *written > 0 && *written + line.len() as u64 > *limit {
                let mut moved = path.clone().into_os_string();
                moved.push(".1");
                let _ = std::fs::rename(&*path, &moved);
                match open(path) {
                    Ok(fresh) => {
                        *file = fresh;
                        *written = 0;
                    }
                    Err(error) => tracing::error!(%error, "the audit log could not begin anew"),
                }
            }
            *written += line.len() as u64;
            file.write_all(line.as_bytes())
        }
    };
    if let Err(error) = written {
        tracing::error!(%error, "an audit record was not written");
    }
}

/// `time` as RFC 3339 in UTC, to the millisecond (`2026-11-26T18:40:00.123Z`).
fn rfc3339(time: SystemTime) -> String {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or(Duration::ZERO);
    let seconds = since.as_secs();
    let (days, rest) = ((seconds / 86_400) as i64, seconds % 86_400);
    // Howard Hinnant's days-to-civil, for the proleptic Gregorian calendar.
    let shifted = days + 719_468;
    let era = shifted.div_euclid(146_097);
    let day_of_era = shifted.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60,
        since.subsec_millis()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_rfc3339_utc() {
        let at = |seconds: u64, millis: u64| {
            rfc3339(UNIX_EPOCH + Duration::from_millis(seconds * 1000 + millis))
        };
        assert_eq!(at(0, 0), "1970-01-01T00:00:00.000Z");
        assert_eq!(at(951_782_400, 7), "2000-02-29T00:00:00.007Z");
        assert_eq!(at(1_795_718_400, 123), "2026-11-26T18:40:00.123Z");
    }

    #[test]
    fn a_digest_names_its_hash() {
        assert_eq!(
            digest(b"{}"),
            "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
        );
    }
}
