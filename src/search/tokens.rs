//! Text into the terms search matches on: words split at anything not a letter or digit, at
//! `_` and `-`, and where camelCase turns (`readTextFile` → read, text, file), lowercased, with
//! a plural's `s` taken off so "files" finds "file".

/// The terms of `text`, in order, repeats kept (they count).
pub(crate) fn terms(text: &str) -> Vec<String> {
    let mut terms = Vec::new();
    let mut word = String::new();
    let mut previous: Option<char> = None;
    for character in text.chars() {
        if !character.is_alphanumeric() {
            flush(&mut word, &mut terms);
            previous = None;
            continue;
        }
        let turns = previous.is_some_and(|before| {
            (before.is_lowercase() && character.is_uppercase())
                || (before.is_alphabetic() != character.is_alphabetic())
        });
        if turns {
            flush(&mut word, &mut terms);
        }
        word.extend(character.to_lowercase());
        previous = Some(character);
    }
    flush(&mut word, &mut terms);
    terms
}

fn flush(word: &mut String, terms: &mut Vec<String>) {
    if word.is_empty() {
        return;
    }
    let term = std::mem::take(word);
    terms.push(singular(term));
}

/// `files` → `file`, `queries` → `query`; short words and `ss` endings stay.
fn singular(term: String) -> String {
    if term.len() > 4 && term.ends_with("ies") {
        return format!("{}y", &term[..term.len() - 3]);
    }
    if term.len() > 3 && term.ends_with('s') && !term.ends_with("ss") && !term.ends_with("us") {
        return term[..term.len() - 1].to_owned();
    }
    term
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_split_at_case_turns_and_separators() {
        assert_eq!(terms("readTextFile"), ["read", "text", "file"]);
        assert_eq!(
            terms("list_directory-entries"),
            ["list", "directory", "entry"]
        );
        assert_eq!(
            terms("Get the HTML of 2 pages"),
            ["get", "the", "html", "of", "2", "page"]
        );
        assert_eq!(terms("sha256sum, class"), ["sha", "256", "sum", "class"]);
    }
}
