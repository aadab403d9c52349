//! RFC 6570 level-1 URI templates, as MCP resource templates use them.
//!
//! A resource template such as `file:///{path}` or `db://{table}/rows/{id}` names a family of
//! resources. [`UriTemplate::expand`] fills its variables in; [`UriTemplate::match_uri`] is the
//! inverse: it tells whether a URI a client asked for belongs to the family, and with which values.
//!
//! Only level 1 is supported: literal text and simple `{name}` expressions. The operators of the
//! higher levels (`{+x}`, `{#x}`, `{/x}`, `{?x}`, ...), the modifiers (`{x:3}`, `{x*}`) and lists
//! (`{x,y}`) are refused with [`TemplateError::UnsupportedOperator`] or
//! [`TemplateError::UnsupportedModifier`]. Two variables with no literal text between them
//! (`{a}{b}`) are refused too: no URI could tell where one ends and the other starts.
//!
//! # Examples
//!
//! ```
//! use std::collections::BTreeMap;
//!
//! use talaria_core::server::uri_template::UriTemplate;
//!
//! let template = UriTemplate::parse("db://{table}/rows/{id}").unwrap();
//! let vars = BTreeMap::from([("table".to_owned(), "users".to_owned()), ("id".to_owned(), "a/b".to_owned())]);
//! let uri = template.expand(&vars).unwrap();
//! assert_eq!(uri, "db://users/rows/a%2Fb");
//! assert_eq!(template.match_uri(&uri), Some(vars));
//! ```

use crate::alloc_prelude::*;
use alloc::collections::{BTreeMap, BTreeSet};
use core::fmt;
use core::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The characters that open a level-2 to level-4 expression, or are reserved for future operators.
const OPERATORS: &[u8] = b"+#./;?&=,!@|";

/// Upper-case hexadecimal digits, as RFC 3986 recommends for percent-encoding.
const HEX_DIGITS: &[u8; 16] = b"0123456789ABCDEF";

/// A parsed RFC 6570 level-1 URI template.
///
/// Built by [`UriTemplate::parse`] (or [`str::parse`], or deserialized from a JSON string), so a
/// value of this type is always valid: every expression is a simple `{name}`, names are distinct,
/// and any two variables are separated by literal text. Literal text is kept verbatim: it is
/// neither validated against the URI grammar nor percent-encoded.
///
/// # Examples
///
/// ```
/// use talaria_core::server::uri_template::UriTemplate;
///
/// let template: UriTemplate = "file:///{path}".parse().unwrap();
/// assert_eq!(template.as_str(), "file:///{path}");
/// assert_eq!(template.variables().collect::<Vec<_>>(), ["path"]);
/// assert_eq!(template.match_uri("file:///a%20b").unwrap()["path"], "a b");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriTemplate {
    /// The template as written.
    source: String,
    /// The literal text before the first variable (all of it if there is no variable).
    prefix: String,
    /// The variables in order, each with the literal text that follows it.
    variables: Vec<Variable>,
}

/// A variable of a template and the literal text after it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Variable {
    /// The variable name, as written between the braces.
    name: String,
    /// The literal text up to the next variable or the end; empty only for the last variable.
    suffix: String,
}

impl UriTemplate {
    /// Parses a level-1 URI template.
    ///
    /// A template is literal text with `{name}` expressions. Names follow the RFC 6570 `varname`
    /// rule: ASCII letters, digits, `_` and percent-encoded triplets, with single dots allowed
    /// between them (`{a.b}`). Literal text may hold anything but `{` and `}`.
    ///
    /// # Errors
    ///
    /// A [`TemplateError`] naming the first problem and its byte position in `template`: an
    /// unclosed, nested or unmatched brace, an empty or invalid name, a level-2+ operator or
    /// modifier, two variables that touch, or a name used twice.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::server::uri_template::{TemplateError, UriTemplate};
    ///
    /// assert!(UriTemplate::parse("db://{table}/rows/{id}").is_ok());
    /// assert_eq!(
    ///     UriTemplate::parse("file:///{+path}"),
    ///     Err(TemplateError::UnsupportedOperator { operator: '+', position: 9 }),
    /// );
    /// assert_eq!(UriTemplate::parse("{a}{b}"), Err(TemplateError::AdjacentVariables { position: 3 }));
    /// ```
    pub fn parse(template: &str) -> Result<Self, TemplateError> {
        let bytes = template.as_bytes();
        let mut prefix = String::new();
        let mut variables: Vec<Variable> = Vec::new();
        let mut from = 0;
        while let Some(found) = bytes.get(from..).and_then(|rest| memchr::memchr2(b'{', b'}', rest)) {
            let open = from + found;
            let literal = template.get(from..open).unwrap_or_default();
            match variables.last_mut() {
                Some(last) => last.suffix.push_str(literal),
                None => prefix.push_str(literal),
            }
            if bytes.get(open) == Some(&b'}') {
                return Err(TemplateError::UnmatchedClose { position: open });
            }
            let body = open + 1;
            let close = match bytes.get(body..).and_then(|rest| memchr::memchr2(b'{', b'}', rest)) {
                Some(end) if bytes.get(body + end) == Some(&b'}') => body + end,
                Some(nested) => return Err(TemplateError::NestedBrace { position: body + nested }),
                None => return Err(TemplateError::UnclosedExpression { position: open }),
            };
            let name = template.get(body..close).unwrap_or_default();
            check_name(name, open)?;
            if variables.last().is_some_and(|last| last.suffix.is_empty()) {
                return Err(TemplateError::AdjacentVariables { position: open });
            }
            if variables.iter().any(|v| v.name == name) {
                return Err(TemplateError::DuplicateVariable { name: name.to_owned(), position: open });
            }
            variables.push(Variable { name: name.to_owned(), suffix: String::new() });
            from = close + 1;
        }
        let literal = template.get(from..).unwrap_or_default();
        match variables.last_mut() {
            Some(last) => last.suffix.push_str(literal),
            None => prefix.push_str(literal),
        }
        Ok(Self { source: template.to_owned(), prefix, variables })
    }

    /// The template as written.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::server::uri_template::UriTemplate;
    ///
    /// assert_eq!(UriTemplate::parse("db://{table}").unwrap().as_str(), "db://{table}");
    /// ```
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The variable names, in the order they appear in the template, each once.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::server::uri_template::UriTemplate;
    ///
    /// let template = UriTemplate::parse("db://{table}/rows/{id}").unwrap();
    /// assert_eq!(template.variables().collect::<Vec<_>>(), ["table", "id"]);
    /// ```
    pub fn variables(&self) -> impl Iterator<Item = &str> + '_ {
        self.variables.iter().map(|v| v.name.as_str())
    }

    /// Expands the template with the given values (RFC 6570 simple string expansion).
    ///
    /// Literal text is copied verbatim. Each value is written as UTF-8 with every byte outside the
    /// unreserved set (ASCII letters, digits, `-`, `.`, `_`, `~`) percent-encoded with upper-case
    /// hex digits, so `a b/c` becomes `a%20b%2Fc`. Values for names the template does not use are
    /// ignored. An empty value expands to nothing, as RFC 6570 prescribes; note that
    /// [`UriTemplate::match_uri`] never matches an empty value.
    ///
    /// # Errors
    ///
    /// [`TemplateError::MissingVariable`] if `vars` has no value for one of the variables.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::collections::BTreeMap;
    ///
    /// use talaria_core::server::uri_template::UriTemplate;
    ///
    /// let template = UriTemplate::parse("file:///{path}").unwrap();
    /// let vars = BTreeMap::from([("path".to_owned(), "été 1/2".to_owned())]);
    /// assert_eq!(template.expand(&vars).unwrap(), "file:///%C3%A9t%C3%A9%201%2F2");
    /// assert!(template.expand(&BTreeMap::new()).is_err());
    /// ```
    pub fn expand(&self, vars: &BTreeMap<String, String>) -> Result<String, TemplateError> {
        let mut out = String::with_capacity(self.source.len());
        out.push_str(&self.prefix);
        for var in &self.variables {
            let value = vars.get(&var.name).ok_or_else(|| TemplateError::MissingVariable { name: var.name.clone() })?;
            percent_encode_into(&mut out, value);
            out.push_str(&var.suffix);
        }
        Ok(out)
    }

    /// Matches a URI against the template and returns the decoded value of every variable.
    ///
    /// The inverse of [`UriTemplate::expand`]: literal text must match exactly (byte for byte, no
    /// normalisation), and each variable matches a non-empty run of the URI that holds no `/`,
    /// percent-decoded. A value is never allowed to span a raw `/` because simple expansion
    /// encodes every slash in a value (as `%2F`), so a raw `/` in a URI is always template text;
    /// this also keeps `file:///{name}` from matching nested paths. Other characters are accepted
    /// raw (`file:///a b` matches with `a b`), so URIs written by hand still match.
    ///
    /// Returns `None` if the URI does not match, or if the only ways to match would give a
    /// variable an invalid percent-encoding (`%zz`, a truncated `%4`) or bytes that are not UTF-8
    /// once decoded (`%FF`).
    ///
    /// When a URI can be split in several ways (`{a}-{b}` against `x-y-z`, which is ambiguous
    /// because `-` is unreserved and is never encoded), the first variable takes the shortest
    /// run that leaves the rest matchable, then the second, and so on: here `a` = `x`, `b` =
    /// `y-z`. A template whose literal texts between variables each hold a character that
    /// expansion always encodes (`/`, `:`, `?`, a non-ASCII character, ...) is never ambiguous,
    /// and `match_uri(expand(vars))` gives `vars` back for any non-empty values.
    ///
    /// Matching is a search that explores each (variable, position, decoder state) at most once,
    /// and the decoder has a few hundred states at most, so the work is bounded by the number of
    /// variables times the length of the URI (times a logarithm, and the length of the literal
    /// compared at each candidate end), whatever the input: there is no exponential backtracking
    /// and no regex.
    ///
    /// # Examples
    ///
    /// ```
    /// use talaria_core::server::uri_template::UriTemplate;
    ///
    /// let template = UriTemplate::parse("db://{table}/rows/{id}").unwrap();
    /// let vars = template.match_uri("db://users/rows/42").unwrap();
    /// assert_eq!((vars["table"].as_str(), vars["id"].as_str()), ("users", "42"));
    /// assert_eq!(template.match_uri("db://users/rows/4/2"), None);
    /// assert_eq!(template.match_uri("db://users/rows/%FF"), None);
    /// ```
    #[must_use]
    pub fn match_uri(&self, uri: &str) -> Option<BTreeMap<String, String>> {
        let spans = self.split(uri)?;
        self.variables
            .iter()
            .zip(spans)
            .map(|(var, (start, end))| Some((var.name.clone(), percent_decode(uri.get(start..end)?)?)))
            .collect()
    }

    /// Finds the byte span of every variable in `uri`, leftmost-shortest first.
    ///
    /// A depth-first search: one frame per variable on the stack, each scanning its run byte by
    /// byte through a [`Decoder`] and stopping at every place where the run is complete and the
    /// following literal occurs. Nodes (variable, position, decoder state) and starts (variable,
    /// position) are recorded when first reached; reaching one again means it was already
    /// explored and led nowhere, since positions only grow along a path.
    fn split(&self, uri: &str) -> Option<Vec<(usize, usize)>> {
        let bytes = uri.as_bytes();
        let first = bytes.strip_prefix(self.prefix.as_bytes())?;
        let Some(last) = self.variables.last() else {
            return first.is_empty().then(Vec::new);
        };
        if !bytes.ends_with(last.suffix.as_bytes()) {
            return None;
        }
        let last_end = bytes.len() - last.suffix.len();
        let start = self.prefix.len();
        let mut nodes = BTreeSet::new();
        let mut starts = BTreeSet::from([(0, start)]);
        let mut stack = vec![Frame::new(start)];
        loop {
            let var = stack.len().checked_sub(1)?;
            let frame = stack.last_mut()?;
            let Some(end) = self.advance(frame, var, bytes, last_end, &mut nodes) else {
                stack.pop();
                continue;
            };
            if var + 1 == self.variables.len() {
                return Some(stack.iter().map(|f| (f.start, f.pos)).collect());
            }
            let suffix_len = self.variables.get(var).map_or(0, |v| v.suffix.len());
            let next = end + suffix_len;
            if starts.insert((var + 1, next)) {
                stack.push(Frame::new(next));
            }
        }
    }

    /// Moves `frame` (the run of variable `var`) to the next place where it may end.
    ///
    /// Returns that end, or `None` when the run can go no further: a `/`, the end of the URI, a
    /// byte that no continuation could decode, or a node already explored.
    fn advance(
        &self,
        frame: &mut Frame,
        var: usize,
        uri: &[u8],
        last_end: usize,
        nodes: &mut BTreeSet<(usize, usize, Decoder)>,
    ) -> Option<usize> {
        let suffix = self.variables.get(var)?.suffix.as_bytes();
        let is_last = var + 1 == self.variables.len();
        loop {
            if frame.resume {
                let byte = *uri.get(frame.pos)?;
                if byte == b'/' || (is_last && frame.pos >= last_end) {
                    return None;
                }
                frame.state = frame.state.step(byte)?;
                frame.pos += 1;
                if !nodes.insert((var, frame.pos, frame.state)) {
                    return None;
                }
            }
            frame.resume = true;
            if frame.pos > frame.start && frame.state.is_complete() {
                let ends_here = if is_last {
                    frame.pos == last_end
                } else {
                    uri.get(frame.pos..).is_some_and(|rest| rest.starts_with(suffix))
                };
                if ends_here {
                    return Some(frame.pos);
                }
            }
        }
    }
}

impl FromStr for UriTemplate {
    type Err = TemplateError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl fmt::Display for UriTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

impl Serialize for UriTemplate {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.source)
    }
}

impl<'de> Deserialize<'de> for UriTemplate {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let source = String::deserialize(deserializer)?;
        Self::parse(&source).map_err(serde::de::Error::custom)
    }
}

/// Why a URI template could not be parsed or expanded.
///
/// Positions are byte offsets into the template.
///
/// # Examples
///
/// ```
/// use talaria_core::server::uri_template::{TemplateError, UriTemplate};
///
/// let err = UriTemplate::parse("db://{table").unwrap_err();
/// assert_eq!(err, TemplateError::UnclosedExpression { position: 5 });
/// assert_eq!(err.to_string(), "unclosed expression: the `{` at byte 5 has no matching `}`");
/// ```
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    /// A `{` with no `}` after it.
    #[error("unclosed expression: the `{{` at byte {position} has no matching `}}`")]
    UnclosedExpression {
        /// Where the `{` is.
        position: usize,
    },
    /// A `{` inside an expression.
    #[error("nested `{{` at byte {position}")]
    NestedBrace {
        /// Where the inner `{` is.
        position: usize,
    },
    /// A `}` outside any expression.
    #[error("unmatched `}}` at byte {position}")]
    UnmatchedClose {
        /// Where the `}` is.
        position: usize,
    },
    /// An expression with nothing between its braces: `{}`.
    #[error("empty variable name at byte {position}")]
    EmptyName {
        /// Where the `{` is.
        position: usize,
    },
    /// A character a variable name may not hold, a malformed percent-encoding, or a dot that is
    /// not between two name characters.
    #[error("invalid character in variable name at byte {position}")]
    InvalidName {
        /// Where the offending character is.
        position: usize,
    },
    /// An expression that starts with an operator of a higher level (`+`, `#`, `.`, `/`, `;`,
    /// `?`, `&`) or one RFC 6570 reserves for future use (`=`, `,`, `!`, `@`, `|`).
    #[error("unsupported operator `{operator}` at byte {position}: only level-1 `{{name}}` expressions are supported")]
    UnsupportedOperator {
        /// The operator.
        operator: char,
        /// Where the operator is.
        position: usize,
    },
    /// A prefix (`{x:3}`) or explode (`{x*}`) modifier, or a list of variables (`{x,y}`).
    #[error("unsupported modifier `{modifier}` at byte {position}: only level-1 `{{name}}` expressions are supported")]
    UnsupportedModifier {
        /// The modifier: `:`, `*` or `,`.
        modifier: char,
        /// Where the modifier is.
        position: usize,
    },
    /// A variable right after another one (`{a}{b}`): no URI could tell where one ends.
    #[error("the variable at byte {position} follows another one with no literal text between them")]
    AdjacentVariables {
        /// Where the `{` of the second variable is.
        position: usize,
    },
    /// A variable name used twice in the template.
    #[error("variable `{name}` appears twice (again at byte {position})")]
    DuplicateVariable {
        /// The name.
        name: String,
        /// Where the `{` of the second use is.
        position: usize,
    },
    /// [`UriTemplate::expand`] was given no value for a variable.
    #[error("no value for variable `{name}`")]
    MissingVariable {
        /// The name.
        name: String,
    },
}

/// The scan of one variable's run during matching.
#[derive(Debug)]
struct Frame {
    /// Where the run starts.
    start: usize,
    /// Where the run currently ends (exclusive).
    pos: usize,
    /// The decoder state after `start..pos`.
    state: Decoder,
    /// Whether the end at `pos` was already tried, so the scan must step past it first.
    resume: bool,
}

impl Frame {
    fn new(start: usize) -> Self {
        Self { start, pos: start, state: Decoder::START, resume: false }
    }
}

/// An incremental percent-decoder and UTF-8 validator, fed one URI byte at a time.
///
/// Deterministic with few states, so two runs in the same state at the same position have the
/// same future: that is what makes memoisation in [`UriTemplate::split`] sound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Decoder {
    /// Hex digits still expected after a `%` (0, 2 or 1).
    pending_hex: u8,
    /// The high nibble already read, when `pending_hex` is 1; 0 otherwise.
    high: u8,
    /// UTF-8 continuation bytes still expected.
    continuation: u8,
    /// The lowest value the next continuation byte may take (0x80 when none is expected).
    low: u8,
    /// The highest value the next continuation byte may take (0xBF when none is expected).
    high_limit: u8,
}

impl Decoder {
    /// Nothing read yet.
    const START: Self = Self { pending_hex: 0, high: 0, continuation: 0, low: 0x80, high_limit: 0xBF };

    /// Whether the bytes read so far decode to a complete UTF-8 string.
    fn is_complete(self) -> bool {
        self.pending_hex == 0 && self.continuation == 0
    }

    /// Reads one byte of the URI; `None` if no continuation could make the run decodable.
    fn step(self, byte: u8) -> Option<Self> {
        match self.pending_hex {
            0 if byte == b'%' => Some(Self { pending_hex: 2, ..self }),
            0 => self.decoded(byte),
            2 => Some(Self { pending_hex: 1, high: hex_value(byte)?, ..self }),
            _ => Self { pending_hex: 0, high: 0, ..self }.decoded((self.high << 4) | hex_value(byte)?),
        }
    }

    /// Feeds one decoded byte to the UTF-8 validator (the table of RFC 3629, section 4).
    fn decoded(self, byte: u8) -> Option<Self> {
        if self.continuation > 0 {
            if byte < self.low || byte > self.high_limit {
                return None;
            }
            return Some(Self { continuation: self.continuation - 1, low: 0x80, high_limit: 0xBF, ..self });
        }
        let (continuation, low, high_limit) = match byte {
            0x00..=0x7F => (0, 0x80, 0xBF),
            0xC2..=0xDF => (1, 0x80, 0xBF),
            0xE0 => (2, 0xA0, 0xBF),
            0xE1..=0xEC | 0xEE..=0xEF => (2, 0x80, 0xBF),
            0xED => (2, 0x80, 0x9F),
            0xF0 => (3, 0x90, 0xBF),
            0xF1..=0xF3 => (3, 0x80, 0xBF),
            0xF4 => (3, 0x80, 0x8F),
            _ => return None,
        };
        Some(Self { continuation, low, high_limit, ..self })
    }
}

/// Checks a variable name (`{` at `open`, the name right after it).
fn check_name(name: &str, open: usize) -> Result<(), TemplateError> {
    let bytes = name.as_bytes();
    let at = open + 1;
    let Some(&first) = bytes.first() else {
        return Err(TemplateError::EmptyName { position: open });
    };
    if OPERATORS.contains(&first) {
        return Err(TemplateError::UnsupportedOperator { operator: char::from(first), position: at });
    }
    let mut i = 0;
    let mut after_dot = false;
    while let Some(&byte) = bytes.get(i) {
        match byte {
            b'%' => {
                let valid = bytes.get(i + 1..i + 3).is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit));
                if !valid {
                    return Err(TemplateError::InvalidName { position: at + i });
                }
                i += 2;
                after_dot = false;
            }
            b'.' if after_dot => return Err(TemplateError::InvalidName { position: at + i }),
            b'.' => after_dot = true,
            b':' | b'*' | b',' => {
                return Err(TemplateError::UnsupportedModifier { modifier: char::from(byte), position: at + i })
            }
            b'_' => after_dot = false,
            _ if byte.is_ascii_alphanumeric() => after_dot = false,
            _ => return Err(TemplateError::InvalidName { position: at + i }),
        }
        i += 1;
    }
    if after_dot {
        return Err(TemplateError::InvalidName { position: at + bytes.len() - 1 });
    }
    Ok(())
}

/// Appends `value` to `out` with every byte outside the unreserved set percent-encoded.
fn percent_encode_into(out: &mut String, value: &str) {
    for &byte in value.as_bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push('%');
            out.push(char::from(HEX_DIGITS[usize::from(byte >> 4)]));
            out.push(char::from(HEX_DIGITS[usize::from(byte & 0x0F)]));
        }
    }
}

/// Decodes percent-encoded triplets; `None` on a malformed triplet or bytes that are not UTF-8.
fn percent_decode(run: &str) -> Option<String> {
    let mut bytes = Vec::with_capacity(run.len());
    let mut rest = run.as_bytes();
    while let Some((&byte, tail)) = rest.split_first() {
        if byte == b'%' {
            let (&[high, low], tail) = tail.split_first_chunk::<2>()?;
            bytes.push((hex_value(high)? << 4) | hex_value(low)?);
            rest = tail;
        } else {
            bytes.push(byte);
            rest = tail;
        }
    }
    String::from_utf8(bytes).ok()
}

/// The value of an ASCII hex digit of either case.
fn hex_value(byte: u8) -> Option<u8> {
    char::from(byte).to_digit(16).and_then(|d| u8::try_from(d).ok())
}

#[cfg(test)]
mod tests;
