//! "Did you mean …?": the closest known name to a mistyped one, or nothing when no candidate is
//! close enough to be a likely typo.

/// The candidate closest to `input` (case-insensitive edit distance), if it is close: at most one
/// edit for short names, about a third of the length for longer ones. Ties keep the first.
pub(crate) fn closest<'a>(
    input: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let input_lower = input.to_lowercase();
    let limit = (input.chars().count() / 3).max(1);
    let mut best: Option<(usize, &str)> = None;
    for candidate in candidates {
        let distance = edit_distance(&input_lower, &candidate.to_lowercase());
        if distance <= limit && best.is_none_or(|(found, _)| distance < found) {
            best = Some((distance, candidate));
        }
    }
    best.map(|(_, candidate)| candidate)
}

/// Levenshtein distance over chars, with one row of memory.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = if ca == *cb {
                diagonal
            } else {
                1 + diagonal.min(above).min(row[j])
            };
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_typos_and_ignores_case() {
        assert_eq!(closest("comand", ["command", "args"]), Some("command"));
        assert_eq!(
            closest("FileSytem", ["filesystem", "memory"]),
            Some("filesystem")
        );
        assert_eq!(
            closest("read_fille", ["read_file", "write_file"]),
            Some("read_file")
        );
    }

    #[test]
    fn rejects_weak_matches() {
        assert_eq!(closest("xyz", ["command", "args"]), None);
        assert_eq!(closest("db", ["fs"]), None);
    }

    #[test]
    fn distance_is_levenshtein() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("same", "same"), 0);
    }
}
