//! `${VAR}` / `${VAR:-default}` expansion of config strings. `$$` is a literal `$`; any other `$`
//! is kept as it is, so `$HOME` or a lone `$` pass through untouched.

/// Why a string could not be expanded. The message names the variable, never its value.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ExpandError {
    #[error("variable '{0}' is not set and has no default; set it, or write ${{{0}:-default}}")]
    Unset(String),
    #[error("'${{' is never closed; close it with '}}', or write '$$' for a literal '$'")]
    Unclosed,
    #[error(
        "'{0}' is not a variable name (letters, digits and '_', not starting with a digit); write '$$' for a literal '$'"
    )]
    BadName(String),
}

/// Expands `input`, looking variables up with `lookup`. An empty value counts as set.
pub(crate) fn expand(
    input: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<String, ExpandError> {
    let mut out = String::with_capacity(input.len());
    let mut rest = input;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix('$') {
            out.push('$');
            rest = tail;
        } else if let Some(body_start) = after.strip_prefix('{') {
            let close = body_start.find('}').ok_or(ExpandError::Unclosed)?;
            let body = &body_start[..close];
            let (name, default) = match body.split_once(":-") {
                Some((name, default)) => (name, Some(default)),
                None => (body, None),
            };
            if !is_var_name(name) {
                return Err(ExpandError::BadName(name.to_owned()));
            }
            match (lookup(name), default) {
                (Some(value), _) => out.push_str(&value),
                (None, Some(default)) => out.push_str(default),
                (None, None) => return Err(ExpandError::Unset(name.to_owned())),
            }
            rest = &body_start[close + 1..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    Ok(out)
}

fn is_var_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "HOME" => Some("/home/a".into()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
    }

    fn check(input: &str) -> Result<String, ExpandError> {
        expand(input, &env)
    }

    #[test]
    fn expands_set_variables_and_defaults() {
        assert_eq!(check("${HOME}/x").as_deref(), Ok("/home/a/x"));
        assert_eq!(check("${NOPE:-warn}").as_deref(), Ok("warn"));
        assert_eq!(check("${HOME:-other}").as_deref(), Ok("/home/a"));
        assert_eq!(check("${EMPTY:-d}").as_deref(), Ok(""));
        assert_eq!(check("${NOPE:-}").as_deref(), Ok(""));
    }

    #[test]
    fn dollars_outside_braces_are_literal() {
        assert_eq!(
            check("$$HOME costs $5 $").as_deref(),
            Ok("$HOME costs $5 $")
        );
        assert_eq!(check("$${HOME}").as_deref(), Ok("${HOME}"));
    }

    #[test]
    fn reports_unset_unclosed_and_bad_names() {
        assert_eq!(check("${NOPE}"), Err(ExpandError::Unset("NOPE".into())));
        assert_eq!(check("a ${HOME"), Err(ExpandError::Unclosed));
        assert_eq!(check("${1X}"), Err(ExpandError::BadName("1X".into())));
        assert_eq!(check("${}"), Err(ExpandError::BadName(String::new())));
    }
}
