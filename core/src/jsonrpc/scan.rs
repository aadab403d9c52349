//! A textual pre-check that lets a reader skip a parse: whether a JSON text could hold a
//! given string at all.

/// Whether the JSON text `json` could hold `word`: it appears in the text literally, or the
/// text has escapes (`\u0069nitialize` spells `initialize`). `false` is certain; `true` means
/// "parse to know". Quote the word (`"\"method\""`) to look for a whole key or string; it
/// must hold no backslash.
pub(crate) fn may_hold(json: &[u8], word: &str) -> bool {
    memchr::memchr(b'\\', json).is_some() || memchr::memmem::find(json, word.as_bytes()).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_text_without_the_word_and_without_escapes_is_ruled_out() {
        let method = "\"method\"";
        assert!(may_hold(br#"{"id":1,"method":"ping"}"#, method));
        assert!(may_hold(br#"{"\u006dethod":"ping"}"#, method), "an escape may spell it");
        assert!(may_hold(br#"{"id":1,"result":{"a":"x\"y"}}"#, method), "any escape means parse to know");
        assert!(!may_hold(br#"{"id":1,"result":{"methods":["ping"]}}"#, method), "a longer key is not the key");
        assert!(!may_hold(br#"{"id":1,"result":{}}"#, method));
        assert!(!may_hold(b"", method));
    }
}
