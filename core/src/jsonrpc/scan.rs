//! A textual pre-check that lets a reader skip a parse: whether a JSON text could hold a
//! given key or string at all.

use memchr::memmem::Finder;

use crate::sync::OnceCell;

/// A word to look for in JSON texts, its searcher built once (on first use).
///
/// Quote the word (`"\"method\""`) to look for a whole key or string. It must be plain
/// ASCII with no backslash: then the only way a JSON text can spell it other than literally
/// is with `\u` escapes.
pub(crate) struct Word {
    word: &'static str,
    finder: OnceCell<Finder<'static>>,
}

impl Word {
    /// The word `word`.
    pub(crate) const fn new(word: &'static str) -> Self {
        Self { word, finder: OnceCell::new() }
    }

    /// Whether the JSON text `json` could hold the word: it appears in the text literally, or
    /// the text has `\u` escapes (`\u006dethod` spells `method`). `false` is certain; `true`
    /// means "parse to know". Other escapes (`\n`, `\"`) cannot spell the word.
    pub(crate) fn may_be_in(&self, json: &[u8]) -> bool {
        debug_assert!(self.word.is_ascii() && !self.word.contains('\\'), "{:?} cannot be looked for", self.word);
        self.finder.get_or_init(|| Finder::new(self.word.as_bytes())).find(json).is_some()
            || UNICODE_ESCAPE.get_or_init(|| Finder::new(br"\u")).find(json).is_some()
    }
}

/// The searcher for the start of a `\u` escape, built once like a word's (`memmem::find`
/// would build one on every call).
static UNICODE_ESCAPE: OnceCell<Finder<'static>> = OnceCell::new();

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_text_without_the_word_and_without_escapes_is_ruled_out() {
        static METHOD: Word = Word::new("\"method\"");
        assert!(METHOD.may_be_in(br#"{"id":1,"method":"ping"}"#));
        assert!(METHOD.may_be_in(br#"{"\u006dethod":"ping"}"#), "an escape may spell it");
        assert!(METHOD.may_be_in(br#"{"id":1,"result":{"a":"\u00e9"}}"#), "any \\u escape means parse to know");
        assert!(!METHOD.may_be_in(br#"{"id":1,"result":{"a":"x\"y\n"}}"#), "other escapes cannot spell it");
        assert!(!METHOD.may_be_in(br#"{"id":1,"result":{"methods":["ping"]}}"#), "a longer key is not the key");
        assert!(!METHOD.may_be_in(br#"{"id":1,"result":{}}"#));
        assert!(!METHOD.may_be_in(b""));
    }
}
