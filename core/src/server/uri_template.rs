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

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::str::FromStr;

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
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|&(k, v)| (k.to_owned(), v.to_owned())).collect()
    }

    fn matched(template: &str, uri: &str) -> Option<BTreeMap<String, String>> {
        UriTemplate::parse(template).unwrap().match_uri(uri)
    }

    #[test]
    fn parse_errors_name_the_problem_and_its_position() {
        use TemplateError as E;
        let cases: &[(&str, TemplateError)] = &[
            ("file:///{path", E::UnclosedExpression { position: 8 }),
            ("{", E::UnclosedExpression { position: 0 }),
            ("a{b{c}}", E::NestedBrace { position: 3 }),
            ("a}b", E::UnmatchedClose { position: 1 }),
            ("{a}}", E::UnmatchedClose { position: 3 }),
            ("x{}", E::EmptyName { position: 1 }),
            ("{a b}", E::InvalidName { position: 2 }),
            ("{a-b}", E::InvalidName { position: 2 }),
            ("{é}", E::InvalidName { position: 1 }),
            ("{a..b}", E::InvalidName { position: 3 }),
            ("{a.}", E::InvalidName { position: 2 }),
            ("{a%4}", E::InvalidName { position: 2 }),
            ("{a%zz}", E::InvalidName { position: 2 }),
            ("{+x}", E::UnsupportedOperator { operator: '+', position: 1 }),
            ("{#x}", E::UnsupportedOperator { operator: '#', position: 1 }),
            ("a{/x}", E::UnsupportedOperator { operator: '/', position: 2 }),
            ("{?x,y}", E::UnsupportedOperator { operator: '?', position: 1 }),
            ("{.x}", E::UnsupportedOperator { operator: '.', position: 1 }),
            ("{|x}", E::UnsupportedOperator { operator: '|', position: 1 }),
            ("{x:3}", E::UnsupportedModifier { modifier: ':', position: 2 }),
            ("{x*}", E::UnsupportedModifier { modifier: '*', position: 2 }),
            ("{x,y}", E::UnsupportedModifier { modifier: ',', position: 2 }),
            ("db://{a}{b}", E::AdjacentVariables { position: 8 }),
            ("{a}/{a}", E::DuplicateVariable { name: "a".to_owned(), position: 4 }),
        ];
        for (template, error) in cases {
            assert_eq!(UriTemplate::parse(template).as_ref(), Err(error), "{template}");
        }
    }

    #[test]
    fn valid_names_and_literals_parse() {
        for template in ["", "no variables", "{a}", "{a.b_c.D9}", "{%41b}", "x{_}y", "é{a}ü", "{a}/{b}"] {
            let parsed = UriTemplate::parse(template).unwrap();
            assert_eq!(parsed.as_str(), template);
            assert_eq!(parsed.to_string(), template);
        }
        let t = UriTemplate::parse("{a.b}:{%41}").unwrap();
        assert_eq!(t.variables().collect::<Vec<_>>(), ["a.b", "%41"]);
    }

    #[test]
    fn mcp_examples_expand_and_match() {
        let file = UriTemplate::parse("file:///{path}").unwrap();
        assert_eq!(file.expand(&vars(&[("path", "notes.txt")])).unwrap(), "file:///notes.txt");
        assert_eq!(file.match_uri("file:///notes.txt"), Some(vars(&[("path", "notes.txt")])));
        assert_eq!(file.match_uri("file:///a%20b"), Some(vars(&[("path", "a b")])));
        assert_eq!(file.match_uri("file:///a%2Fb"), Some(vars(&[("path", "a/b")])));

        let db = UriTemplate::parse("db://{table}/rows/{id}").unwrap();
        let uri = db.expand(&vars(&[("table", "users"), ("id", "42"), ("unused", "x")])).unwrap();
        assert_eq!(uri, "db://users/rows/42");
        assert_eq!(db.match_uri(&uri), Some(vars(&[("table", "users"), ("id", "42")])));
    }

    #[test]
    fn expansion_encodes_everything_but_unreserved() {
        let t = UriTemplate::parse("x:{v}").unwrap();
        let cases = [
            ("AZaz09-._~", "x:AZaz09-._~"),
            ("a b/c?d#e", "x:a%20b%2Fc%3Fd%23e"),
            ("100%", "x:100%25"),
            ("é€😀", "x:%C3%A9%E2%82%AC%F0%9F%98%80"),
            ("{}", "x:%7B%7D"),
            ("", "x:"),
        ];
        for (value, uri) in cases {
            assert_eq!(t.expand(&vars(&[("v", value)])).unwrap(), uri);
        }
        assert_eq!(t.expand(&BTreeMap::new()), Err(TemplateError::MissingVariable { name: "v".to_owned() }));
    }

    #[test]
    fn unicode_values_match_encoded_or_raw() {
        assert_eq!(matched("file:///{p}", "file:///%C3%A9t%C3%A9"), Some(vars(&[("p", "été")])));
        assert_eq!(matched("file:///{p}", "file:///%c3%a9"), Some(vars(&[("p", "é")])));
        assert_eq!(matched("file:///{p}", "file:///été"), Some(vars(&[("p", "été")])));
        assert_eq!(matched("файл:{p}/ü", "файл:%F0%9F%98%80/ü"), Some(vars(&[("p", "😀")])));
    }

    #[test]
    fn non_matching_uris_give_none() {
        let cases = [
            ("file:///{p}", "http:///x"),
            ("file:///{p}", "file:///"),
            ("file:///{p}", "file:///a/b"),
            ("file:///{p}", "file:///%zz"),
            ("file:///{p}", "file:///%4"),
            ("file:///{p}", "file:///%C3"),
            ("file:///{p}", "file:///%FF"),
            ("file:///{p}", "file:///%ED%A0%80"),
            ("file:///{p}", "file:///%C0%80"),
            ("db://{t}/rows/{id}", "db://users/rows/"),
            ("db://{t}/rows/{id}", "db://users/row/1"),
            ("db://{t}/rows/{id}", "db://users/rows/1/extra"),
            ("a{x}a", "a"),
            ("a{x}a", "aa"),
            ("plain", "plain/"),
            ("", "x"),
        ];
        for (template, uri) in cases {
            assert_eq!(matched(template, uri), None, "{template} vs {uri}");
        }
        assert_eq!(matched("plain", "plain"), Some(BTreeMap::new()));
        assert_eq!(matched("", ""), Some(BTreeMap::new()));
    }

    #[test]
    fn ambiguous_splits_take_the_shortest_first_variable() {
        assert_eq!(matched("{a}-{b}", "x-y-z"), Some(vars(&[("a", "x"), ("b", "y-z")])));
        assert_eq!(matched("{a}.{b}", "x..y"), Some(vars(&[("a", "x"), ("b", ".y")])));
    }

    #[test]
    fn matching_backtracks_over_undecodable_runs() {
        // The first "3" cuts "%C3" in half, so `a` must extend to the second one.
        assert_eq!(matched("{a}3{b}", "%C3%A93x"), Some(vars(&[("a", "é"), ("b", "x")])));
        // Neither split works: "%-y" and "x-%" both hold a truncated escape.
        assert_eq!(matched("{a}-{b}", "x-%-y"), None);
        assert_eq!(matched("{a}-{b}", "x-y-%zz"), None);
        assert_eq!(matched("{a}-{b}:", "x-%41-y:"), Some(vars(&[("a", "x"), ("b", "A-y")])));
        // `c` fails from byte 5, but `b` succeeds from there once `a` has taken "z%41".
        assert_eq!(matched("{a}%{b}%{c}", "z%41%x%y"), Some(vars(&[("a", "zA"), ("b", "x"), ("c", "y")])));
        // Ending `a` at the first "%A9" leaves it with half of "é".
        assert_eq!(matched("{a}%A9{b}", "%C3%A9%A9x"), Some(vars(&[("a", "é"), ("b", "x")])));
    }

    #[test]
    fn decoder_agrees_with_std_utf8_validation() {
        fn check(bytes: &[u8]) {
            let state = bytes.iter().try_fold(Decoder::START, |state, &b| state.decoded(b));
            let expected = match std::str::from_utf8(bytes) {
                Ok(_) => Some(true),
                Err(e) if e.error_len().is_none() => Some(false),
                Err(_) => None,
            };
            assert_eq!(state.map(Decoder::is_complete), expected, "{bytes:02X?}");
        }
        let edges =
            [0x00, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xED, 0xF0, 0xF4, 0xF5];
        for b0 in 0..=0xFF {
            for b1 in 0..=0xFF {
                check(&[b0, b1]);
            }
            for b1 in edges {
                for b2 in edges {
                    check(&[b0, b1, b2]);
                    for b3 in edges {
                        check(&[b0, b1, b2, b3]);
                    }
                }
            }
        }
        let escaped = "%e2%82%AC".bytes().try_fold(Decoder::START, Decoder::step);
        assert_eq!(escaped.map(Decoder::is_complete), Some(true));
        assert_eq!("%4".bytes().try_fold(Decoder::START, Decoder::step).map(Decoder::is_complete), Some(false));
        assert_eq!("%4G".bytes().try_fold(Decoder::START, Decoder::step), None);
    }

    #[test]
    fn pathological_inputs_match_in_linear_time() {
        let template = UriTemplate::parse("{a}-{b}-{c}-{d}-{e}/{f}").unwrap();
        let uri = "x-".repeat(20_000);
        assert_eq!(template.match_uri(&uri), None);
        let template = UriTemplate::parse("{a}%{b}%{c}%{d}").unwrap();
        let uri = "%".repeat(20_000);
        assert_eq!(template.match_uri(&uri), None);
    }

    #[test]
    fn serde_uses_the_template_string_and_refuses_invalid_ones() {
        let t = UriTemplate::parse("db://{table}").unwrap();
        assert_eq!(serde_json::to_string(&t).unwrap(), r#""db://{table}""#);
        assert_eq!(serde_json::from_str::<UriTemplate>(r#""db://{table}""#).unwrap(), t);
        let err = serde_json::from_str::<UriTemplate>(r#""db://{+table}""#).unwrap_err();
        assert!(err.to_string().contains("unsupported operator `+`"), "{err}");
        assert!(serde_json::from_str::<UriTemplate>("42").is_err());
        assert_eq!("db://{table}".parse::<UriTemplate>(), Ok(t));
    }

    /// Every split of `uri` into the template's variables, ends in increasing order: the first
    /// solution found is the leftmost-shortest one. Exponential; for small inputs only.
    fn brute_force(t: &UriTemplate, uri: &str) -> Option<BTreeMap<String, String>> {
        fn go(t: &UriTemplate, uri: &str, var: usize, at: usize, out: &mut Vec<String>) -> bool {
            let Some(v) = t.variables.get(var) else { return at == uri.len() };
            for end in at + 1..=uri.len() {
                let (Some(run), Some(rest)) = (uri.get(at..end), uri.get(end..)) else { continue };
                if run.contains('/') || !rest.starts_with(&v.suffix) {
                    continue;
                }
                let Some(value) = percent_decode(run) else { continue };
                out.push(value);
                if go(t, uri, var + 1, end + v.suffix.len(), out) {
                    return true;
                }
                out.pop();
            }
            false
        }
        let rest = uri.strip_prefix(&t.prefix)?;
        let mut out = Vec::new();
        go(t, uri, 0, uri.len() - rest.len(), &mut out).then(|| t.variables().map(str::to_owned).zip(out).collect())
    }

    /// Pieces of URIs that make the search backtrack: separators, escapes cut in half, UTF-8
    /// sequences split between a variable and a literal.
    const TOKENS: &[&str] = &["a", "/", "-", "%", "%41", "%C3", "%A9", "é"];

    /// Fewer pieces, so that UTF-8 sequences split across a literal come up often.
    const UTF8_TOKENS: &[&str] = &["a", "/", "%", "%C3", "%A9"];

    /// A template shape built from `alphabet` and a URI that follows it, so that the URI often
    /// matches, in several ways: (prefix, literals, last literal, URI).
    fn shaped(alphabet: &'static [&'static str]) -> impl Strategy<Value = (String, Vec<String>, String, String)> {
        let tokens = move |len: std::ops::Range<usize>| {
            prop::collection::vec(prop::sample::select(alphabet), len).prop_map(|t| t.concat())
        };
        let literals = prop::collection::vec(tokens(1..3), 0..3);
        (tokens(0..2), literals, tokens(0..2), prop::collection::vec(tokens(0..4), 3)).prop_map(
            |(prefix, literals, last, runs)| {
                let mut uri = prefix.clone();
                for (run, literal) in runs.iter().zip(&literals) {
                    uri.push_str(run);
                    uri.push_str(literal);
                }
                uri.push_str(&runs[literals.len()]);
                uri.push_str(&last);
                (prefix, literals, last, uri)
            },
        )
    }

    /// A literal that expansion cannot produce inside a value: it holds a character expansion
    /// always encodes.
    fn separating_literal() -> impl Strategy<Value = String> {
        ("[^{}]{0,3}", "[^{}A-Za-z0-9._~%-]", "[^{}]{0,3}").prop_map(|(a, sep, b)| format!("{a}{sep}{b}"))
    }

    /// A template from a prefix, variables `v0`, `v1`, ... and the literals after them.
    fn template(prefix: &str, literals: &[String], last: &str) -> UriTemplate {
        let mut source = prefix.to_owned();
        for (i, literal) in literals.iter().enumerate() {
            source.push_str(&format!("{{v{i}}}{literal}"));
        }
        source.push_str(&format!("{{v{}}}{last}", literals.len()));
        UriTemplate::parse(&source).unwrap()
    }

    fn values(t: &UriTemplate, values: &[String]) -> BTreeMap<String, String> {
        t.variables().map(str::to_owned).zip(values.iter().cloned()).collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn match_inverts_expand_for_separated_templates(
            prefix in "[^{}]{0,4}",
            literals in prop::collection::vec(separating_literal(), 0..4),
            last in "[^{}]{0,4}",
            raw in prop::collection::vec("(?s).{1,8}", 4),
        ) {
            let t = template(&prefix, &literals, &last);
            let vars = values(&t, &raw);
            let uri = t.expand(&vars).unwrap();
            prop_assert_eq!(t.match_uri(&uri), Some(vars));
        }

        #[test]
        fn match_finds_a_split_of_any_expansion(
            prefix in "[^{}]{0,3}",
            literals in prop::collection::vec("[^{}]{1,3}", 0..4),
            last in "[^{}]{0,3}",
            raw in prop::collection::vec("(?s).{1,6}", 4),
        ) {
            let t = template(&prefix, &literals, &last);
            let uri = t.expand(&values(&t, &raw)).unwrap();
            let found = t.match_uri(&uri);
            prop_assert!(found.is_some(), "{} vs {}", t, uri);
            prop_assert_eq!(t.expand(&found.unwrap()).unwrap(), uri);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]

        #[test]
        fn match_agrees_with_brute_force((prefix, literals, last, uri) in shaped(TOKENS)) {
            let t = template(&prefix, &literals, &last);
            prop_assert_eq!(t.match_uri(&uri), brute_force(&t, &uri), "{} vs {}", t, uri);
        }

        #[test]
        fn match_agrees_with_brute_force_on_split_utf8((prefix, literals, last, uri) in shaped(UTF8_TOKENS)) {
            let t = template(&prefix, &literals, &last);
            prop_assert_eq!(t.match_uri(&uri), brute_force(&t, &uri), "{} vs {}", t, uri);
        }

        #[test]
        fn arbitrary_templates_and_uris_never_panic(template in "(?s).{0,16}", uri in "(?s).{0,32}") {
            if let Ok(t) = UriTemplate::parse(&template) {
                if let Some(found) = t.match_uri(&uri) {
                    prop_assert!(found.keys().map(String::as_str).eq(t.variables().collect::<BTreeSet<_>>()));
                    prop_assert!(found.values().all(|v| !v.is_empty()));
                }
            }
        }

        #[test]
        fn arbitrary_uris_against_fixed_templates_agree_with_brute_force(uri in "(?s)[a-z:/%0-9A-F{}é-]{0,40}") {
            for template in ["file:///{path}", "db://{table}/rows/{id}", "{a}-{b}-{c}", "{a}%{b}"] {
                let t = UriTemplate::parse(template).unwrap();
                prop_assert_eq!(t.match_uri(&uri), brute_force(&t, &uri));
            }
        }
    }
}
