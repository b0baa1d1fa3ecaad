//! Text into the terms search matches on: words split at anything not a letter or digit, at
//! `_` and `-`, and where camelCase turns (`readTextFile` → read, text, file), lowercased,
//! stemmed (so "files" finds "file" and "sorting" finds "sort"), without stop words.

/// The terms of `text`, in order, repeats kept (they count).
pub(crate) fn terms(text: &str) -> Vec<String> {
    let mut terms = Vec::new();
    words(text, |word| terms.extend(term(word)));
    terms
}

/// Calls `each` with every word of `text`, lowercased, in order (stop words included).
pub(crate) fn words(text: &str, mut each: impl FnMut(&str)) {
    let mut word = String::new();
    let mut previous: Option<char> = None;
    let mut flush = |word: &mut String| {
        if !word.is_empty() {
            each(word);
            word.clear();
        }
    };
    for character in text.chars() {
        if !character.is_alphanumeric() {
            flush(&mut word);
            previous = None;
            continue;
        }
        let turns = previous.is_some_and(|before| {
            (before.is_lowercase() && character.is_uppercase())
                || (before.is_alphabetic() != character.is_alphabetic())
        });
        if turns {
            flush(&mut word);
        }
        word.extend(character.to_lowercase());
        previous = Some(character);
    }
    flush(&mut word);
}

/// The term a lowercased word is searched by; none for a stop word.
pub(crate) fn term(word: &str) -> Option<String> {
    if is_stop_word(word) {
        return None;
    }
    Some(STEMMER.stem(word).into_owned())
}

/// True for a word that says how a request is phrased, not what it is about.
pub(crate) fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.contains(&word)
}

/// English's Snowball stemmer: "sorting", "sorted" and "sorts" are all "sort".
static STEMMER: std::sync::LazyLock<rust_stemmers::Stemmer> =
    std::sync::LazyLock::new(|| rust_stemmers::Stemmer::create(rust_stemmers::Algorithm::English));

/// Words that say how a request is phrased, not what it is about: people write them into
/// queries ("please make sure to…") and they would match every description.
const STOP_WORDS: &[&str] = &[
    "a", "about", "all", "also", "an", "and", "any", "are", "as", "at", "be", "been", "by", "can",
    "could", "did", "do", "does", "for", "from", "had", "has", "have", "i", "in", "into", "is",
    "it", "its", "just", "make", "me", "my", "now", "of", "on", "or", "our", "out", "please", "so",
    "some", "sure", "that", "the", "then", "there", "these", "this", "those", "to", "up", "us",
    "was", "we", "were", "what", "which", "will", "with", "would", "you", "your",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_split_at_case_turns_and_separators() {
        assert_eq!(terms("readTextFile"), ["read", "text", "file"]);
        assert_eq!(
            terms("list_directory-entries"),
            ["list", "directori", "entri"]
        );
        assert_eq!(
            terms("Get the HTML of 2 pages"),
            ["get", "html", "2", "page"]
        );
        assert_eq!(terms("sorting sorted sorts"), ["sort", "sort", "sort"]);
        assert_eq!(terms("sha256sum, class"), ["sha", "256", "sum", "class"]);
    }
}
