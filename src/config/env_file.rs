//! A server's `envFile`: `KEY=VALUE` lines, the format VS Code's `envFile` and dotenv read.
//! Blank lines and `#` comments are skipped, `export ` before a key is allowed, and a value in
//! single or double quotes loses them (double quotes also read `\n`, `\"` and `\\`). The values
//! are secrets: no message quotes one.

use std::path::Path;

/// The variables of the file at `path`, in file order, or why they cannot be had.
pub(super) fn read(path: &Path) -> Result<Vec<(String, String)>, String> {
    let text = std::fs::read_to_string(path).map_err(|error| {
        format!(
            "its envFile {} cannot be read ({error}); create it or correct the path (a relative one starts at the config file's folder)",
            path.display()
        )
    })?;
    parse(&text).map_err(|line| {
        format!(
            "its envFile {} has a line {line} that is not KEY=VALUE (a key is letters, digits and '_'); correct or remove it",
            path.display()
        )
    })
}

/// The values of the variables of an envFile's `text` (its lines that read), to keep them out
/// of what is printed.
pub(crate) fn values(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| parse(line).ok())
        .flatten()
        .map(|(_, value)| value)
        .collect()
}

/// The variables of `text`; the number of the first line that is not a variable, if any.
fn parse(text: &str) -> Result<Vec<(String, String)>, usize> {
    let mut variables = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").unwrap_or(line);
        let Some((key, value)) = line.split_once('=') else {
            return Err(index + 1);
        };
        let key = key.trim();
        let named = key
            .chars()
            .next()
            .is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
            && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !named {
            return Err(index + 1);
        }
        variables.push((key.to_owned(), unquoted(value.trim())));
    }
    Ok(variables)
}

fn unquoted(value: &str) -> String {
    if let Some(inner) = value
        .strip_prefix('\'')
        .and_then(|rest| rest.strip_suffix('\''))
    {
        return inner.to_owned();
    }
    if let Some(inner) = value
        .strip_prefix('"')
        .and_then(|rest| rest.strip_suffix('"'))
    {
        let mut out = String::with_capacity(inner.len());
        let mut chars = inner.chars();
        while let Some(c) = chars.next() {
            match (c, chars.clone().next()) {
                ('\\', Some('n')) => {
                    out.push('\n');
                    chars.next();
                }
                ('\\', Some(escaped @ ('"' | '\\'))) => {
                    out.push(escaped);
                    chars.next();
                }
                _ => out.push(c),
            }
        }
        return out;
    }
    // An unquoted value ends at a ` #` comment.
    value
        .split_once(" #")
        .map_or(value, |(value, _)| value.trim_end())
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn reads_what_dotenv_files_hold() {
        let text = "# tokens\n\nGITHUB_TOKEN=ghp_1\nexport API_KEY = 'a b' \nQUOTED=\"x\\ny\\\"z\"\nPLAIN=v # note\nEMPTY=\n";
        assert_eq!(
            parse(text),
            Ok(vec![
                ("GITHUB_TOKEN".into(), "ghp_1".into()),
                ("API_KEY".into(), "a b".into()),
                ("QUOTED".into(), "x\ny\"z".into()),
                ("PLAIN".into(), "v".into()),
                ("EMPTY".into(), String::new()),
            ])
        );
    }

    #[test]
    fn names_the_first_line_that_is_not_a_variable() {
        assert_eq!(parse("A=1\nnot a variable\n"), Err(2));
        assert_eq!(parse("1A=1"), Err(1));
        assert_eq!(parse("=1"), Err(1));
    }
}
