//! What an imported config must not carry as written: literal secrets in `env` and `headers`
//! become `${VAR}` references (the user is told which variables to set), and clients' own
//! variable syntax (VS Code's `${env:X}`, `${input:id}`, `${userHome}`…) becomes toolshelf's.

use serde_json::{Map, Value};

/// Words in a variable's name that say its value is a secret.
const SECRET_WORDS: &[&str] = &[
    "KEY",
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "PASS",
    "AUTH",
    "CREDENTIAL",
    "PRIVATE",
    "COOKIE",
    "SESSION",
];

/// `value` (a string, or an array of them) with clients' variables in toolshelf's syntax.
pub(super) fn variables(server: &str, value: &Value, notes: &mut Vec<String>) -> Value {
    match value {
        Value::String(text) => Value::String(converted(server, text, notes)),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|item| variables(server, item, notes))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn converted(server: &str, text: &str, notes: &mut Vec<String>) -> String {
    let mut result = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        result.push_str(&rest[..start]);
        let Some(length) = rest[start..].find('}') else {
            break;
        };
        let inner = &rest[start + 2..start + length];
        let replaced = match inner.split_once(':') {
            Some(("env", name)) => format!("${{{name}}}"),
            Some(("input", id)) => {
                let name = variable_name(id);
                notes.push(format!(
                    "{server}: VS Code's input '{id}' became ${{{name}}}: set {name} in toolshelf's environment"
                ));
                format!("${{{name}}}")
            }
            _ => match inner {
                "userHome" => "${HOME}".to_owned(),
                "workspaceFolder" | "workspaceRoot" => {
                    notes.push(format!(
                        "{server}: ${{{inner}}} became ${{PWD}}, the folder toolshelf runs in; write the path if that is not the project"
                    ));
                    "${PWD}".to_owned()
                }
                // `${VAR}` and `${VAR:-default}` mean what they mean to toolshelf.
                _ => rest[start..start + length + 1].to_owned(),
            },
        };
        result.push_str(&replaced);
        rest = &rest[start + length + 1..];
    }
    result.push_str(rest);
    result
}

/// `pairs` of `env` or `headers` (`key`) with every literal secret replaced by a reference.
/// With `kept`, each secret's (variable, value) goes there, for a file of the server's own
/// (`consolidate`'s envFile); without, the user is told to set the variable.
pub(super) fn referenced(
    server: &str,
    key: &str,
    pairs: &Map<String, Value>,
    notes: &mut Vec<String>,
    mut kept: Option<&mut Vec<(String, String)>>,
) -> Map<String, Value> {
    let headers = key == "headers";
    pairs
        .iter()
        .map(|(name, value)| {
            let Some(text) = value.as_str() else {
                return (name.clone(), value.clone());
            };
            let text = converted(server, text, notes);
            let literal = !text.contains("${");
            if !literal || !(headers || is_secret(name, &text)) {
                return (name.clone(), Value::String(text));
            }
            let variable = match headers {
                true => variable_name(&format!("{server}_{name}")),
                false => variable_name(name),
            };
            let scheme = text
                .split_once(' ')
                .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
                .map(|(scheme, _)| format!("{scheme} "));
            match kept.as_deref_mut() {
                Some(kept) => {
                    let value = match &scheme {
                        Some(scheme) => text[scheme.len()..].to_owned(),
                        None => text.clone(),
                    };
                    kept.push((variable.clone(), value));
                    notes.push(format!(
                        "{server}.{key}.{name}: a secret was written here; it is ${{{variable}}} now, set in the server's envFile"
                    ));
                }
                None => notes.push(format!(
                    "{server}.{key}.{name}: a secret was written here; the new file says ${{{variable}}}: set {variable} in toolshelf's environment"
                )),
            }
            let reference = format!("{}${{{variable}}}", scheme.unwrap_or_default());
            (name.clone(), Value::String(reference))
        })
        .collect()
}

/// A variable's name holds a secret word, or its value looks like a token.
fn is_secret(name: &str, value: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    if SECRET_WORDS.iter().any(|word| upper.contains(word)) {
        return true;
    }
    let tokenish = value.len() >= 20
        && !value.contains(char::is_whitespace)
        && !value.starts_with('/')
        && !value.contains("://")
        && value.chars().any(|c| c.is_ascii_digit())
        && value.chars().any(|c| c.is_ascii_alphabetic());
    let prefixed = [
        "sk-",
        "ghp_",
        "gho_",
        "github_pat_",
        "xoxb-",
        "xoxp-",
        "AKIA",
    ]
    .iter()
    .any(|prefix| value.starts_with(prefix));
    tokenish || prefixed
}

/// `text` as an environment variable's name: upper case, `_` for anything else.
fn variable_name(text: &str) -> String {
    let name: String = text
        .chars()
        .map(|c| match c.is_ascii_alphanumeric() {
            true => c.to_ascii_uppercase(),
            false => '_',
        })
        .collect();
    match name.starts_with(|c: char| c.is_ascii_digit()) {
        true => format!("_{name}"),
        false => name,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn secrets_become_references_and_the_rest_stays() {
        let mut notes = Vec::new();
        let env = json!({"GITHUB_TOKEN": "ghp_abc", "LOG_LEVEL": "debug", "ROOT": "/srv/data",
                         "OPAQUE": "a1b2c3d4e5f6g7h8i9j0k1", "FROM_ENV": "${env:HOME_DIR}"});
        let env = referenced(
            "gh",
            "env",
            env.as_object().expect("object"),
            &mut notes,
            None,
        );
        assert_eq!(
            Value::Object(env),
            json!({"GITHUB_TOKEN": "${GITHUB_TOKEN}", "LOG_LEVEL": "debug", "ROOT": "/srv/data",
                   "OPAQUE": "${OPAQUE}", "FROM_ENV": "${HOME_DIR}"})
        );
        let headers = json!({"Authorization": "Bearer xyz", "X-Api-Key": "k"});
        let headers = referenced(
            "api",
            "headers",
            headers.as_object().expect("object"),
            &mut notes,
            None,
        );
        assert_eq!(
            Value::Object(headers),
            json!({"Authorization": "Bearer ${API_AUTHORIZATION}", "X-Api-Key": "${API_X_API_KEY}"})
        );
        assert_eq!(notes.len(), 4, "{notes:?}");
        assert!(notes[0].contains("set GITHUB_TOKEN"), "{notes:?}");
    }

    #[test]
    fn clients_variables_become_toolshelf_s() {
        let mut notes = Vec::new();
        let args = json!([
            "${workspaceFolder}/src",
            "${input:api-key}",
            "${userHome}/x",
            "${KEEP:-a}",
            "plain"
        ]);
        assert_eq!(
            variables("s", &args, &mut notes),
            json!([
                "${PWD}/src",
                "${API_KEY}",
                "${HOME}/x",
                "${KEEP:-a}",
                "plain"
            ])
        );
        assert_eq!(notes.len(), 2, "{notes:?}");
    }
}
