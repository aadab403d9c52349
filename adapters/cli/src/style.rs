//! Colour: ANSI styles, off when the stream is not a terminal, with `NO_COLOR` or
//! `--no-color`; and coloured pretty-printed JSON.

use std::fmt::Write as _;

use serde_json::Value;

/// Whether to colour one output stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Style {
    color: bool,
}

/// Whether colour is wanted on a stream: it is a terminal, `NO_COLOR` is unset or empty and
/// `--no-color` was not given.
pub(crate) fn color_wanted(no_color_flag: bool, is_terminal: bool) -> bool {
    let no_color_env = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    is_terminal && !no_color_flag && !no_color_env
}

impl Style {
    /// A style that colours when `color` is true.
    pub(crate) const fn new(color: bool) -> Self {
        Self { color }
    }

    /// Plain text, never coloured.
    #[cfg(test)]
    pub(crate) const fn plain() -> Self {
        Self { color: false }
    }

    fn paint(self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    /// Bold.
    pub(crate) fn bold(self, text: &str) -> String {
        self.paint("1", text)
    }

    /// Dim (secondary information: latency, descriptions).
    pub(crate) fn dim(self, text: &str) -> String {
        self.paint("2", text)
    }

    /// Red (errors).
    pub(crate) fn red(self, text: &str) -> String {
        self.paint("31", text)
    }

    /// Green (success, strings).
    pub(crate) fn green(self, text: &str) -> String {
        self.paint("32", text)
    }

    /// Yellow (warnings, numbers).
    pub(crate) fn yellow(self, text: &str) -> String {
        self.paint("33", text)
    }

    /// Cyan (names: tools, keys).
    pub(crate) fn cyan(self, text: &str) -> String {
        self.paint("36", text)
    }

    /// Magenta (booleans, null).
    pub(crate) fn magenta(self, text: &str) -> String {
        self.paint("35", text)
    }

    /// `value` pretty-printed (two-space indent), coloured by token kind.
    pub(crate) fn json(self, value: &Value) -> String {
        let mut out = String::new();
        self.write_json(&mut out, value, 0);
        out
    }

    fn write_json(self, out: &mut String, value: &Value, indent: usize) {
        let pad = |n: usize| "  ".repeat(n);
        match value {
            Value::Null => out.push_str(&self.magenta("null")),
            Value::Bool(b) => out.push_str(&self.magenta(&b.to_string())),
            Value::Number(n) => out.push_str(&self.yellow(&n.to_string())),
            Value::String(s) => out.push_str(&self.green(&Value::String(s.clone()).to_string())),
            Value::Array(items) if items.is_empty() => out.push_str("[]"),
            Value::Array(items) => {
                out.push_str("[\n");
                for (i, item) in items.iter().enumerate() {
                    out.push_str(&pad(indent + 1));
                    self.write_json(out, item, indent + 1);
                    out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
                }
                let _ = write!(out, "{}]", pad(indent));
            }
            Value::Object(map) if map.is_empty() => out.push_str("{}"),
            Value::Object(map) => {
                out.push_str("{\n");
                for (i, (key, item)) in map.iter().enumerate() {
                    let key = Value::String(key.clone()).to_string();
                    let _ = write!(out, "{}{}: ", pad(indent + 1), self.cyan(&key));
                    self.write_json(out, item, indent + 1);
                    out.push_str(if i + 1 < map.len() { ",\n" } else { "\n" });
                }
                let _ = write!(out, "{}}}", pad(indent));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;

    #[test]
    fn plain_json_is_serde_pretty() {
        let value = json!({"a": [1, "x", null, {"b": true}], "c": {}, "d": []});
        assert_eq!(Style::plain().json(&value), serde_json::to_string_pretty(&value).unwrap());
    }

    #[test]
    fn colour_wraps_tokens() {
        let style = Style::new(true);
        assert_eq!(style.red("no"), "\x1b[31mno\x1b[0m");
        assert!(style.json(&json!({"k": 1})).contains("\x1b[33m1\x1b[0m"));
        assert!(!color_wanted(true, true));
        assert!(!color_wanted(false, false));
    }
}
