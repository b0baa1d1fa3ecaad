//! The variables a server's entries use: `${VAR}` from toolshelf's environment, then from the
//! server's `envFile`. An unset variable does not make the config invalid: it makes the servers
//! that use it unavailable, with the fix (`ServerSpec::unavailable`), so one missing secret
//! does not take every other toolbox down.

use std::path::Path;

use serde_json::Value;

use super::{
    env_file,
    expand::{ExpandError, expand},
};
use crate::schema_check::{Violation, ViolationKind};

/// A server's `envFile`, read.
pub(super) struct ServerVariables {
    from_file: Vec<(String, String)>,
    /// Why the file could not be read: the server is unavailable for it.
    failure: Option<String>,
}

impl ServerVariables {
    /// The `envFile` named `file` (relative to `base_dir`), if any; a `${…}` in its name that is
    /// not a variable is a problem at `{path}.envFile`.
    pub(super) fn read(
        file: Option<&str>,
        base_dir: &Path,
        path: &str,
        lookup: &dyn Fn(&str) -> Option<String>,
        problems: &mut Vec<Violation>,
    ) -> Self {
        let mut variables = Self {
            from_file: Vec::new(),
            failure: None,
        };
        let Some(file) = file else {
            return variables;
        };
        match expand(file, lookup) {
            Ok(file) => match env_file::read(&base_dir.join(file)) {
                Ok(read) => variables.from_file = read,
                Err(failure) => variables.failure = Some(failure),
            },
            Err(error) => problems.push(expansion_problem(format!("{path}.envFile"), error)),
        }
        variables
    }

    /// `name`'s value: toolshelf's environment first, as dotenv never overrides what is set.
    pub(super) fn lookup(
        &self,
        name: &str,
        environment: &dyn Fn(&str) -> Option<String>,
    ) -> Option<String> {
        environment(name).or_else(|| {
            self.from_file
                .iter()
                .find(|(key, _)| key == name)
                .map(|(_, value)| value.clone())
        })
    }

    /// The child's environment `env` with the file's variables below its own entries.
    pub(super) fn add_to(&self, env: &mut Vec<(String, String)>) {
        let mut merged: Vec<(String, String)> = self
            .from_file
            .iter()
            .filter(|(key, _)| !env.iter().any(|(set, _)| set == key))
            .cloned()
            .collect();
        merged.append(env);
        *env = merged;
    }

    /// Why the server at `path` cannot start, if it cannot: its `envFile` did not read, or
    /// variables it uses are unset (taken out of `problems[first..]`, where they are not
    /// problems of the config).
    pub(super) fn unavailable(
        self,
        problems: &mut Vec<Violation>,
        first: usize,
        path: &str,
    ) -> Option<String> {
        self.failure
            .or_else(|| unset_variables(problems, first, path))
    }
}

/// A `${…}` that could not be expanded: an unset variable (its name as the message, turned
/// into the server's `unavailable` by `build_server`), or a problem of the config.
pub(super) fn expansion_problem(at: String, error: ExpandError) -> Violation {
    match error {
        ExpandError::Unset(name) => Violation {
            path: at,
            message: name,
            kind: ViolationKind::UnsetVariable,
        },
        other => Violation::other(at, other.to_string()),
    }
}

/// Takes the unset variables found since `problems[first]` out of the problems (each a
/// `{path}.…` of one server) and says why the server is unavailable.
fn unset_variables(problems: &mut Vec<Violation>, first: usize, path: &str) -> Option<String> {
    let mut unset: Vec<(String, String)> = Vec::new();
    let mut index = first;
    while index < problems.len() {
        if problems[index].kind != ViolationKind::UnsetVariable {
            index += 1;
            continue;
        }
        let found = problems.remove(index);
        let at = found
            .path
            .strip_prefix(path)
            .map_or(found.path.as_str(), |rest| rest.trim_start_matches('.'))
            .to_owned();
        unset.push((found.message, at));
    }
    let (first_name, _) = unset.first()?;
    let listed: Vec<String> = unset
        .iter()
        .map(|(name, at)| format!("{name} (in {at})"))
        .collect();
    let mut names: Vec<&str> = unset.iter().map(|(name, _)| name.as_str()).collect();
    names.dedup();
    Some(if names.len() == 1 {
        format!(
            "variable {} is not set: set {first_name} in toolshelf's environment, in the client's env block for toolshelf, or in an envFile of this server (or write ${{{first_name}:-default}} in the config)",
            listed.join(", ")
        )
    } else {
        format!(
            "variables {} are not set: set them in toolshelf's environment, in the client's env block for toolshelf, or in an envFile of this server",
            listed.join(", ")
        )
    })
}

/// Reports the unset variables of a server whose shape is wrong elsewhere: in whichever of
/// `command`, `url`, `args`, `env`, `headers` and `cwd` are strings where strings belong.
pub(super) fn check_variables(
    server: &Value,
    path: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
    problems: &mut Vec<Violation>,
) {
    let mut found = Vec::new();
    let mut check = |value: &Value, at: String| {
        // An unset variable only makes the server unavailable; the shape refuses the config.
        if let Some(text) = value.as_str()
            && let Err(error) = expand(text, lookup)
            && !matches!(error, ExpandError::Unset(_))
        {
            found.push(Violation::other(at, error.to_string()));
        }
    };
    for key in ["command", "url", "cwd"] {
        if let Some(value) = server.get(key) {
            check(value, format!("{path}.{key}"));
        }
    }
    for (index, arg) in server
        .get("args")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        check(arg, format!("{path}.args[{index}]"));
    }
    for table in ["env", "headers"] {
        for (key, value) in server
            .get(table)
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            check(value, format!("{path}.{table}.{key}"));
        }
    }
    problems.extend(found);
}
