//! "Did you mean ...?": the closest of a few known words to one mistyped.

/// The candidate closest to `word` by edit distance, if it is close enough to be what was
/// meant: at most a third of the word's length away (and at least one edit allowed).
///
/// # Examples
///
/// ```ignore
/// assert_eq!(closest("sdtio", ["stdio", "ws", "http"]), Some("stdio"));
/// assert_eq!(closest("banana", ["stdio", "ws", "http"]), None);
/// ```
pub(crate) fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (word.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .map(|candidate| (distance(word, candidate), candidate))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, candidate)| candidate)
}

/// The Levenshtein distance between `a` and `b` (insertions, deletions, substitutions; an
/// adjacent swap counts as one edit, as typing slips usually are).
fn distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    // Three rows: two back (for swaps), one back, and this one.
    let mut before: Vec<usize> = Vec::new();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut row = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            row[j] = (previous[j] + 1).min(row[j - 1] + 1).min(previous[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                row[j] = row[j].min(before[j - 2] + 1);
            }
        }
        before = std::mem::replace(&mut previous, row);
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slips_are_caught_and_strangers_are_not() {
        assert_eq!(distance("stdio", "sdtio"), 1, "a swap is one edit");
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(closest("sdtio", ["stdio", "ws", "http", "sse"]), Some("stdio"));
        assert_eq!(closest("--jsn", ["--json", "--trace"]), Some("--json"));
        assert_eq!(closest("htp", ["stdio", "ws", "http", "sse"]), Some("http"));
        assert_eq!(closest("banana", ["stdio", "ws", "http"]), None);
        assert_eq!(closest("list-tool", ["list-tools", "list-prompts"]), Some("list-tools"));
    }
}
