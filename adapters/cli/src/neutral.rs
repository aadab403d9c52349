//! Terminal safety: text from a server never drives the user's terminal.
//!
//! A server's text (a tool result, a log message, an error, its stderr) may carry escape
//! sequences that clear the screen, move the cursor, set the window title or rewrite what
//! was printed (`\r`, backspace). Human output shows such characters as visible symbols
//! instead: C0 controls as their Unicode control pictures (`␛` for ESC), DEL as `␡`, C1
//! controls as `�`. Newlines and tabs stay. The one sequence let through at the output
//! sink is the colour (SGR, `ESC [ digits ; m`) this CLI's own styles write.

use std::borrow::Cow;

use serde_json::Value;

/// `text` with every control character but newline and tab made visible; with `allow_sgr`,
/// colour sequences stay (for output this CLI styled itself).
///
/// # Examples
///
/// ```ignore
/// assert_eq!(neutralize("a\x1b[2Jb", false), "a␛[2Jb");
/// assert_eq!(neutralize("\x1b[31mred\x1b[0m", true), "\x1b[31mred\x1b[0m");
/// assert_eq!(neutralize("\x1b]0;title\x07", true), "␛]0;title␇");
/// ```
pub(crate) fn neutralize(text: &str, allow_sgr: bool) -> Cow<'_, str> {
    if !text.chars().any(is_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if c == '\x1b' && allow_sgr {
            if let Some(len) = sgr_len(rest) {
                out.push_str(&rest[..len]);
                rest = &rest[len..];
                continue;
            }
        }
        out.push(visible(c));
        rest = &rest[c.len_utf8()..];
    }
    Cow::Owned(out)
}

/// Every string in `value` (keys too) neutralized, with no sequence let through.
pub(crate) fn neutralize_value(value: &Value) -> Value {
    match value {
        Value::String(s) => Value::String(neutralize(s, false).into_owned()),
        Value::Array(items) => Value::Array(items.iter().map(neutralize_value).collect()),
        Value::Object(map) => {
            Value::Object(map.iter().map(|(k, v)| (neutralize(k, false).into_owned(), neutralize_value(v))).collect())
        }
        other => other.clone(),
    }
}

fn is_control(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t') || ('\u{80}'..='\u{9f}').contains(&c)
}

fn visible(c: char) -> char {
    match c {
        '\n' | '\t' => c,
        '\u{7f}' => '\u{2421}',
        c if (c as u32) < 0x20 => char::from_u32(0x2400 + c as u32).unwrap_or('\u{fffd}'),
        c if is_control(c) => '\u{fffd}',
        c => c,
    }
}

/// The length of the SGR sequence `text` starts with (`ESC [ [0-9;]* m`), if it does.
fn sgr_len(text: &str) -> Option<usize> {
    let body = text.strip_prefix("\x1b[")?;
    let params = body.bytes().take_while(|b| b.is_ascii_digit() || *b == b';').count();
    (body.as_bytes().get(params) == Some(&b'm')).then_some(2 + params + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_are_shown_not_obeyed() {
        assert_eq!(neutralize("plain text\nline two\tend", false), "plain text\nline two\tend");
        assert!(matches!(neutralize("plain", true), Cow::Borrowed(_)));
        // Clear screen, set the title (OSC ... BEL), carriage return, backspace, a C1 CSI.
        assert_eq!(neutralize("a\x1b[2J\x1b]0;pwned\x07b\rc\x08\u{9b}", false), "a␛[2J␛]0;pwned␇b␍c␈\u{fffd}");
        assert_eq!(neutralize("\x1b[1;31mred\x1b[0m \x1b[2J", true), "\x1b[1;31mred\x1b[0m ␛[2J");
        assert_eq!(neutralize("\x1b[31mred", false), "␛[31mred", "server text gets no colour either");
        assert_eq!(neutralize("\x7f", false), "␡");
    }

    #[test]
    fn values_are_cleaned_everywhere() {
        let dirty = serde_json::json!({"content": [{"type": "text", "text": "\x1b[2Jhi"}], "k\x1b": 1});
        let clean = neutralize_value(&dirty);
        assert_eq!(clean["content"][0]["text"], "␛[2Jhi");
        assert!(clean.get("k␛").is_some());
    }
}
