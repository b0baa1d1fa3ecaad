//! Who may call `serve --http`, by bearer token: each token stands for a named caller. The
//! tokens come from files or the environment, never from the config file: one token
//! (`TOOLSHELF_TOKEN` or `--token-file`) is the caller `default`, and each file of
//! `--tokens-dir DIR` is a caller named like the file (the layout of a mounted Kubernetes
//! secret). A request's token is compared with every token, in constant time each, whichever
//! matches.

use std::{path::Path, sync::Arc};

use subtle::ConstantTimeEq;

use crate::{
    config::{Identity, Policy},
    resource_server::Verified,
    schema_check::{NAME_PATTERN, is_name},
    session::Who,
};

/// The caller the single token stands for.
pub const DEFAULT_CALLER: &str = "default";

/// A request's caller, as a request's extension: the session it begins is bound to it.
#[derive(Clone, Debug)]
pub(super) struct Caller {
    /// The static token's name, or the access token's subject.
    pub(super) name: Arc<str>,
    /// What an access token proved; `None` for a static token.
    pub(super) claims: Option<Arc<Verified>>,
}

/// Two requests are of one caller when they name the same token, or the same subject of the
/// same issuer (a new token of the subject still reaches its sessions).
impl PartialEq for Caller {
    fn eq(&self, other: &Caller) -> bool {
        let issuer = |caller: &Caller| caller.claims.as_ref().map(|claims| claims.issuer.clone());
        self.name == other.name && issuer(self) == issuer(other)
    }
}

/// What tells callers' views apart: a token's name, or a subject with its groups and scopes.
pub(super) type ViewKey = (Arc<str>, Option<(String, Vec<String>, Vec<String>)>);

impl Caller {
    pub(super) fn token(name: &Arc<str>) -> Caller {
        Caller {
            name: name.clone(),
            claims: None,
        }
    }

    pub(super) fn verified(claims: Arc<Verified>) -> Caller {
        Caller {
            name: claims.subject.as_str().into(),
            claims: Some(claims),
        }
    }

    /// Who the policy sees.
    pub(super) fn identity(&self) -> Identity<'_> {
        match &self.claims {
            None => Identity {
                caller: Some(&self.name),
                ..Identity::default()
            },
            Some(claims) => Identity {
                caller: None,
                subject: Some(&claims.subject),
                groups: &claims.groups,
                scopes: &claims.scopes,
            },
        }
    }

    pub(super) fn view_key(&self) -> ViewKey {
        let claims = self.claims.as_ref().map(|claims| {
            let issuer_and_subject = format!("{} {}", claims.issuer, claims.subject);
            (
                issuer_and_subject,
                claims.groups.clone(),
                claims.scopes.clone(),
            )
        });
        (self.name.clone(), claims)
    }

    /// The caller as the audit log names it, and whether `/metrics` may count by that name.
    pub(super) fn who(&self, session: String) -> Who {
        Who {
            caller: Some(self.name.to_string()),
            session,
            counted: self.claims.is_none(),
        }
    }
}

/// The named tokens `serve --http` admits.
#[derive(Clone)]
pub struct Callers {
    /// Names shared with each request's `Caller`, not copied for it.
    named: Vec<(Arc<str>, Vec<u8>)>,
}

impl std::fmt::Debug for Callers {
    // Names only: a token never reaches a log, not even a debug one.
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_list()
            .entries(self.named.iter().map(|(name, _)| name))
            .finish()
    }
}

impl Callers {
    /// The callers of `single` (the token of `default`) and of every file in `dir`; `None` when
    /// there is neither. Every problem is reported at once, each with its file and its fix.
    pub fn load(single: Option<String>, dir: Option<&Path>) -> Result<Option<Callers>, String> {
        let mut named: Vec<(String, Vec<u8>)> = Vec::new();
        let mut problems = Vec::new();
        if let Some(token) = single {
            named.push((DEFAULT_CALLER.to_owned(), token.into_bytes()));
        }
        if let Some(dir) = dir {
            read_dir(dir, &mut named, &mut problems);
        }
        for (at, (name, token)) in named.iter().enumerate() {
            let twin = named[..at].iter().find(|(_, other)| other == token);
            if let Some((first, _)) = twin {
                problems.push(format!(
                    "callers '{first}' and '{name}' have the same token: give each caller a token of its own"
                ));
            }
            if named[..at].iter().any(|(other, _)| other == name) {
                problems.push(format!(
                    "caller '{name}' has two tokens (TOOLSHELF_TOKEN or --token-file is the caller '{DEFAULT_CALLER}'): remove one"
                ));
            }
        }
        if !problems.is_empty() {
            return Err(problems.join("\n"));
        }
        let named = named
            .into_iter()
            .map(|(name, token)| (Arc::from(name), token))
            .collect::<Vec<_>>();
        Ok((!named.is_empty()).then_some(Callers { named }))
    }

    /// The caller whose token `given` is, if any.
    pub(super) fn identify(&self, given: &[u8]) -> Option<&Arc<str>> {
        let mut found = None;
        // Every token is compared, so the time taken says nothing of which matched.
        for (name, token) in &self.named {
            if bool::from(given.ct_eq(token)) {
                found = Some(name);
            }
        }
        found
    }

    /// The callers' names, in the order they were read.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.named.iter().map(|(name, _)| &**name)
    }
}

/// Refuses a policy that no caller could satisfy as `serve --http` is started: one without
/// tokens or OAuth to name callers, one naming callers that have no token, one naming claims
/// of access tokens without OAuth to check them (all of them at once).
pub fn check_policy(
    policy: Option<&Policy>,
    callers: Option<&Callers>,
    oauth: bool,
) -> Result<(), String> {
    let Some(policy) = policy.filter(|policy| policy.gates()) else {
        return Ok(());
    };
    if callers.is_none() && !oauth {
        return Err("the config has access rules, which name callers by their tokens, but serve --http was given no token: give one per caller with --tokens-dir DIR (or the single caller 'default' with TOOLSHELF_TOKEN or --token-file FILE), or remove the config's access rules".to_owned());
    }
    let mut problems = Vec::new();
    if policy.names_claims() && !oauth {
        problems.push("the config's access rules name subjects, groups or scopes, which only OAuth access tokens carry, but serve --http was given no --oauth-issuer to check them: add --oauth-issuer URL (your authorization server), or name callers by token instead".to_owned());
    }
    let known: Vec<&str> = callers
        .map(|callers| callers.names().collect())
        .unwrap_or_default();
    let unknown: Vec<&str> = policy
        .callers()
        .into_iter()
        .filter(|caller| !known.contains(caller))
        .collect();
    if !unknown.is_empty() {
        let tokens = match known.is_empty() {
            true => "no token names a caller".to_owned(),
            false => format!("the tokens name {}", known.join(", ")),
        };
        problems.push(format!(
            "the config's access rules name callers without a token: {}; {tokens}. Add a file per caller to --tokens-dir, or correct the names in the config",
            unknown.join(", "),
        ));
    }
    match problems.is_empty() {
        true => Ok(()),
        false => Err(problems.join("\n")),
    }
}

/// Reads every caller file of `dir` into `named`; what is wrong into `problems`.
fn read_dir(dir: &Path, named: &mut Vec<(String, Vec<u8>)>, problems: &mut Vec<String>) {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) => {
            problems.push(format!(
                "cannot read the tokens folder {}: {error}; give a folder with one file per caller",
                dir.display()
            ));
            return;
        }
    };
    let mut files: Vec<_> = entries.flatten().map(|entry| entry.path()).collect();
    files.sort();
    for path in files {
        let name = path
            .file_name()
            .and_then(|name| name.to_str())
            .unwrap_or_default()
            .to_owned();
        // A mounted secret's own bookkeeping (`..data`, `..2026_…`), and hidden files.
        if name.starts_with('.') || path.is_dir() {
            continue;
        }
        if !is_name(&name) {
            problems.push(format!(
                "{}: a caller's name is its file's name, which must match {NAME_PATTERN}; rename the file",
                path.display()
            ));
            continue;
        }
        match std::fs::read_to_string(&path) {
            Ok(text) if text.trim().is_empty() => problems.push(format!(
                "{}: the file is empty; put caller '{name}''s token in it",
                path.display()
            )),
            Ok(text) => named.push((name, text.trim().as_bytes().to_vec())),
            Err(error) => problems.push(format!("cannot read {}: {error}", path.display())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_token_names_its_caller_and_no_other() {
        let dir = tempfile::tempdir().expect("dir");
        std::fs::write(dir.path().join("alice"), "alice-token\n").expect("write");
        std::fs::write(dir.path().join("bob"), "bob-token").expect("write");
        std::fs::create_dir(dir.path().join("..data")).expect("dir");
        let callers = Callers::load(Some("shared".into()), Some(dir.path()))
            .expect("loads")
            .expect("callers");
        assert_eq!(
            callers.names().collect::<Vec<_>>(),
            ["default", "alice", "bob"]
        );
        assert_eq!(
            callers.identify(b"alice-token").map(|name| &**name),
            Some("alice")
        );
        assert_eq!(
            callers.identify(b"shared").map(|name| &**name),
            Some("default")
        );
        assert_eq!(callers.identify(b"alice-toke").map(|name| &**name), None);
        assert_eq!(callers.identify(b"").map(|name| &**name), None);
        assert!(!format!("{callers:?}").contains("token"));
    }

    #[test]
    fn every_problem_is_reported_at_once() {
        let dir = tempfile::tempdir().expect("dir");
        std::fs::write(dir.path().join("a b"), "t1").expect("write");
        std::fs::write(dir.path().join("empty"), " \n").expect("write");
        std::fs::write(dir.path().join("one"), "same").expect("write");
        std::fs::write(dir.path().join("two"), "same").expect("write");
        std::fs::write(dir.path().join("default"), "other").expect("write");
        let error = Callers::load(Some("x".into()), Some(dir.path())).expect_err("refused");
        assert!(error.contains("a b: a caller's name"), "{error}");
        assert!(error.contains("empty: the file is empty"), "{error}");
        assert!(
            error.contains("callers 'one' and 'two' have the same token"),
            "{error}"
        );
        assert!(error.contains("caller 'default' has two tokens"), "{error}");
        assert!(
            !error.contains("same\n") && !error.contains("other"),
            "{error}"
        );
        assert!(Callers::load(None, None).expect("nothing").is_none());
    }

    #[test]
    fn a_policy_is_refused_when_nothing_could_name_its_callers() {
        let value = serde_json::json!({
            "access": {"callers": ["alice"], "groups": ["eng"]},
            "toolboxes": {"a": {"mcpServers": {"s": {"command": "x"}}}}
        });
        let config =
            crate::config::parse(&value.to_string(), Path::new("."), &|_| None).expect("valid");
        let policy = config.policy.as_deref();
        let dir = tempfile::tempdir().expect("dir");
        std::fs::write(dir.path().join("alice"), "alice-token").expect("write");
        let alice = Callers::load(None, Some(dir.path())).expect("loads");
        let without_oauth = check_policy(policy, alice.as_ref(), false).expect_err("refused");
        assert!(
            without_oauth.starts_with("the config's access rules name subjects, groups or scopes"),
            "{without_oauth}"
        );
        assert!(check_policy(policy, alice.as_ref(), true).is_ok());
        let without_tokens = check_policy(policy, None, true).expect_err("refused");
        assert!(
            without_tokens.contains("callers without a token: alice; no token names a caller"),
            "{without_tokens}"
        );
    }
}
