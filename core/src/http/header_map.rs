//! A request's headers as received, packed into one string: what handlers see of an HTTP
//! request or a WebSocket handshake.

use crate::alloc_prelude::*;
use core::fmt;

use crate::http::headers::HeaderLookup;

/// Header fields in the order received, names as sent (looked up case-insensitively).
///
/// The fields share one string: sized up front ([`Headers::with_capacity`]), a request's
/// headers cost two allocations however many there are.
///
/// # Examples
///
/// ```
/// use talaria_core::http::Headers;
///
/// let mut headers = Headers::new();
/// headers.push("Content-Type", "application/json");
/// headers.push("X-Trace", "a");
/// headers.push("x-trace", "b");
/// assert_eq!(headers.get("x-TRACE"), Some("a"), "the first of a repeated header");
/// assert_eq!(headers.get_all("X-Trace").collect::<Vec<_>>(), ["a", "b"]);
/// assert_eq!(headers.len(), 3);
/// let pairs: Headers = [("Host", "127.0.0.1")].into_iter().collect();
/// assert_eq!(pairs.iter().next(), Some(("Host", "127.0.0.1")));
/// ```
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Headers {
    /// Every name and value, one after the other.
    text: String,
    /// Where each field's name and value end in `text` (its name starts where the previous
    /// field's value ends).
    ends: Vec<(usize, usize)>,
}

impl Headers {
    /// No headers.
    #[must_use]
    pub const fn new() -> Self {
        Self { text: String::new(), ends: Vec::new() }
    }

    /// No headers yet, with room for `fields` fields of `bytes` bytes of names and values in
    /// all (so that filling it allocates twice).
    #[must_use]
    pub fn with_capacity(fields: usize, bytes: usize) -> Self {
        Self { text: String::with_capacity(bytes), ends: Vec::with_capacity(fields) }
    }

    /// Adds a field after the others.
    pub fn push(&mut self, name: &str, value: &str) {
        self.text.push_str(name);
        let name_end = self.text.len();
        self.text.push_str(value);
        self.ends.push((name_end, self.text.len()));
    }

    /// The value of the first field named `name` (compared case-insensitively).
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&str> {
        self.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v)
    }

    /// The values of every field named `name`, in order.
    pub fn get_all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.iter().filter(move |(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v)
    }

    /// Every field as (name, value), in the order received.
    #[must_use]
    pub fn iter(&self) -> Iter<'_> {
        Iter { headers: self, front: 0, back: self.ends.len() }
    }

    /// Field `i` (which exists).
    fn field(&self, i: usize) -> (&str, &str) {
        let start = i.checked_sub(1).map_or(0, |before| self.ends[before].1);
        let (name_end, value_end) = self.ends[i];
        (&self.text[start..name_end], &self.text[name_end..value_end])
    }

    /// How many fields there are.
    #[must_use]
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether there are none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }
}

impl fmt::Debug for Headers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<N: AsRef<str>, V: AsRef<str>> FromIterator<(N, V)> for Headers {
    fn from_iter<I: IntoIterator<Item = (N, V)>>(fields: I) -> Self {
        let mut headers = Self::new();
        headers.extend(fields);
        headers
    }
}

impl<N: AsRef<str>, V: AsRef<str>> Extend<(N, V)> for Headers {
    fn extend<I: IntoIterator<Item = (N, V)>>(&mut self, fields: I) {
        for (name, value) in fields {
            self.push(name.as_ref(), value.as_ref());
        }
    }
}

/// The fields of [`Headers`] as (name, value), in order ([`Headers::iter`]).
#[derive(Debug, Clone)]
pub struct Iter<'a> {
    headers: &'a Headers,
    /// The next field from the front, and one past the next from the back.
    front: usize,
    back: usize,
}

impl<'a> Iterator for Iter<'a> {
    type Item = (&'a str, &'a str);

    fn next(&mut self) -> Option<Self::Item> {
        (self.front < self.back).then(|| {
            self.front += 1;
            self.headers.field(self.front - 1)
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.back - self.front;
        (left, Some(left))
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        (self.front < self.back).then(|| {
            self.back -= 1;
            self.headers.field(self.back)
        })
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl<'a> IntoIterator for &'a Headers {
    type Item = (&'a str, &'a str);
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl HeaderLookup for Headers {
    fn header(&self, name: &str) -> Option<&str> {
        self.get(name)
    }

    fn header_count(&self, name: &str) -> usize {
        self.get_all(name).count()
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn empty_names_and_values_keep_their_places() {
        let headers: Headers = [("", "x"), ("A", ""), ("b", "2")].into_iter().collect();
        assert_eq!(headers.iter().collect::<Vec<_>>(), [("", "x"), ("A", ""), ("b", "2")]);
        assert_eq!((headers.get("a"), headers.get("B"), headers.get("c")), (Some(""), Some("2"), None));
        assert!(Headers::new().is_empty());
        assert_eq!(format!("{headers:?}"), r#"[("", "x"), ("A", ""), ("b", "2")]"#);
        assert_eq!(headers.iter().next_back(), Some(("b", "2")));
        assert_eq!(headers.iter().rev().map(|(n, _)| n).collect::<Vec<_>>(), ["b", "A", ""]);
        let names: Vec<&str> = (&headers).into_iter().map(|(name, _)| name).collect();
        assert_eq!(names, ["", "A", "b"]);
    }

    proptest! {
        /// Whatever is pushed comes back out, in order, as pushed.
        #[test]
        fn fields_round_trip(fields in proptest::collection::vec(("\\PC{0,12}", "\\PC{0,20}"), 0..20)) {
            let headers: Headers = fields.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
            let back: Vec<(String, String)> = headers.iter().map(|(n, v)| (n.to_owned(), v.to_owned())).collect();
            prop_assert_eq!(headers.len(), fields.len());
            prop_assert_eq!(back, fields);
        }
    }
}
