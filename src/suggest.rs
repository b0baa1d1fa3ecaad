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

/// Edit distance over chars where swapping two neighbours counts as one edit (optimal string
/// alignment), since `ehco` for `echo` is one slip, not two.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let width = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * width];
    for i in 0..=a.len() {
        d[i * width] = i;
    }
    for (j, cell) in d.iter_mut().enumerate().take(width) {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[(i - 1) * width + j] + 1)
                .min(d[i * width + j - 1] + 1)
                .min(d[(i - 1) * width + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[(i - 2) * width + j - 2] + 1);
            }
            d[i * width + j] = best;
        }
    }
    d[a.len() * width + b.len()]
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
    fn transpositions_count_once() {
        assert_eq!(closest("sya", ["say", "answer"]), Some("say"));
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
        assert_eq!(edit_distance("ehco", "echo"), 1);
    }
}
