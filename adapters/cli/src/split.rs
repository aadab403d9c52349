//! Splitting a command line (a REPL line, a line of stdin) into words, shell-style, with one
//! convenience: JSON written inline stays one word.
//!
//! - Whitespace separates words; `'...'` is literal; `"..."` allows `\"` and `\\`; a backslash
//!   outside quotes escapes the next character.
//! - An unquoted `{` or `[` starts JSON: until its brackets balance, whitespace does not split
//!   and double-quoted strings are kept verbatim, quotes included. So `call_tool echo {"text":
//!   "hi there"}` and `call_tool add nums:=[1, 2]` need no extra quoting.

/// Splits `line` into words.
///
/// # Errors
///
/// An unterminated quote or unbalanced JSON brackets, described.
pub(crate) fn split_words(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => return Err("unterminated single quote".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\')) => word.push(c),
                            Some(c) => {
                                word.push('\\');
                                word.push(c);
                            }
                            None => return Err("unterminated double quote".into()),
                        },
                        Some(c) => word.push(c),
                        None => return Err("unterminated double quote".into()),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(c) = chars.next() {
                    word.push(c);
                }
            }
            '{' | '[' => {
                in_word = true;
                word.push(c);
                take_json(&mut chars, &mut word)?;
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

/// Copies JSON after its opening bracket (already in `word`) until the brackets balance.
fn take_json(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, word: &mut String) -> Result<(), String> {
    let mut depth = 1usize;
    while depth > 0 {
        let Some(c) = chars.next() else { return Err("unbalanced brackets in inline JSON".into()) };
        word.push(c);
        match c {
            '{' | '[' => depth += 1,
            '}' | ']' => depth -= 1,
            '"' => loop {
                let Some(c) = chars.next() else { return Err("unterminated string in inline JSON".into()) };
                word.push(c);
                match c {
                    '"' => break,
                    '\\' => {
                        if let Some(c) = chars.next() {
                            word.push(c);
                        }
                    }
                    _ => {}
                }
            },
            _ => {}
        }
    }
    Ok(())
}

/// Where the word under the cursor starts (for completion): after the last whitespace that is
/// not inside quotes.
pub(crate) fn word_start(line: &str) -> usize {
    let mut start = 0;
    let mut quote = None;
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, c) if c.is_whitespace() => start = i + c.len_utf8(),
            _ => {}
        }
    }
    start
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn split(line: &str) -> Vec<String> {
        split_words(line).unwrap()
    }

    #[test]
    fn shell_quoting() {
        assert_eq!(split("call_tool echo text='hi there'"), ["call_tool", "echo", "text=hi there"]);
        assert_eq!(split(r#"a "b \"c\"" d\ e"#), ["a", r#"b "c""#, "d e"]);
        assert_eq!(split("  "), Vec::<String>::new());
        assert_eq!(split("x ''"), ["x", ""]);
        assert!(split_words("say 'oops").is_err());
    }

    #[test]
    fn inline_json_stays_one_word() {
        assert_eq!(split(r#"call_tool echo {"text": "hi there"}"#), ["call_tool", "echo", r#"{"text": "hi there"}"#]);
        assert_eq!(split(r#"x nums:=[1, 2, {"a": "]"}] y"#), ["x", r#"nums:=[1, 2, {"a": "]"}]"#, "y"]);
        assert!(split_words("x {\"a\": 1").is_err());
    }

    #[test]
    fn word_start_skips_quoted_spaces() {
        assert_eq!(word_start("call_tool ec"), 10);
        assert_eq!(word_start("call_tool echo text='a b"), 15);
        assert_eq!(word_start(""), 0);
    }
}
