//! A string-keyed map that keeps its members in the order they were written, for the schema
//! objects whose order means something to a person (an elicitation form's fields are asked in
//! the order the server listed them).

use crate::alloc_prelude::*;
use core::fmt;

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A map from names to `V` in insertion order (document order when read from JSON). Lookups
/// are linear: it is meant for the few members of a form, not for large maps.
///
/// # Examples
///
/// ```
/// use talaria_core::schema::OrderedMap;
///
/// let form: OrderedMap<u32> = serde_json::from_str(r#"{"zeta": 1, "alpha": 2}"#).unwrap();
/// assert_eq!(form.keys().collect::<Vec<_>>(), ["zeta", "alpha"]);
/// assert_eq!(form["alpha"], 2);
/// assert_eq!(serde_json::to_string(&form).unwrap(), r#"{"zeta":1,"alpha":2}"#);
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct OrderedMap<V> {
    entries: Vec<(String, V)>,
}

impl<V> Default for OrderedMap<V> {
    fn default() -> Self {
        Self { entries: Vec::new() }
    }
}

impl<V: fmt::Debug> fmt::Debug for OrderedMap<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.entries.iter().map(|(k, v)| (k, v))).finish()
    }
}

impl<V> OrderedMap<V> {
    /// An empty map.
    #[must_use]
    pub const fn new() -> Self {
        Self { entries: Vec::new() }
    }

    /// Sets `key` to `value`: in place if the key is there (returning the old value), else
    /// at the end.
    pub fn insert(&mut self, key: String, value: V) -> Option<V> {
        match self.entries.iter_mut().find(|(k, _)| *k == key) {
            Some((_, slot)) => Some(core::mem::replace(slot, value)),
            None => {
                self.entries.push((key, value));
                None
            }
        }
    }

    /// The value of `key`, if present.
    #[must_use]
    pub fn get(&self, key: &str) -> Option<&V> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Whether `key` is present.
    #[must_use]
    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Removes `key`, returning its value.
    pub fn remove(&mut self, key: &str) -> Option<V> {
        let at = self.entries.iter().position(|(k, _)| k == key)?;
        Some(self.entries.remove(at).1)
    }

    /// The members, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &V)> {
        self.entries.iter().map(|(k, v)| (k, v))
    }

    /// The names, in order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(k, _)| k.as_str())
    }

    /// How many members.
    #[must_use]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

impl<V> core::ops::Index<&str> for OrderedMap<V> {
    type Output = V;

    /// # Panics
    ///
    /// If `key` is absent, as `BTreeMap`'s indexing does.
    #[allow(clippy::panic)]
    fn index(&self, key: &str) -> &V {
        self.get(key).unwrap_or_else(|| panic!("no member {key:?}"))
    }
}

impl<V> FromIterator<(String, V)> for OrderedMap<V> {
    fn from_iter<I: IntoIterator<Item = (String, V)>>(iter: I) -> Self {
        let mut map = Self::new();
        for (k, v) in iter {
            map.insert(k, v);
        }
        map
    }
}

impl<'a, V> IntoIterator for &'a OrderedMap<V> {
    type Item = (&'a String, &'a V);
    type IntoIter = core::iter::Map<core::slice::Iter<'a, (String, V)>, fn(&'a (String, V)) -> (&'a String, &'a V)>;

    fn into_iter(self) -> Self::IntoIter {
        self.entries.iter().map(|(k, v)| (k, v))
    }
}

impl<V: Serialize> Serialize for OrderedMap<V> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.entries.len()))?;
        for (k, v) in &self.entries {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl<'de, V: Deserialize<'de>> Deserialize<'de> for OrderedMap<V> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Entries<V>(core::marker::PhantomData<V>);
        impl<'de, V: Deserialize<'de>> Visitor<'de> for Entries<V> {
            type Value = OrderedMap<V>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Self::Value, A::Error> {
                let mut map = OrderedMap::new();
                while let Some((k, v)) = access.next_entry::<String, V>()? {
                    // A repeated name keeps its first place and its last value, as JSON
                    // parsers that keep order do.
                    map.insert(k, v);
                }
                Ok(map)
            }
        }
        deserializer.deserialize_map(Entries(core::marker::PhantomData))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn order_survives_a_round_trip_and_inserts_replace_in_place() {
        let text = r#"{"name":"a","age":1,"city":"b"}"#;
        let mut map: OrderedMap<serde_json::Value> = serde_json::from_str(text).unwrap();
        assert_eq!(serde_json::to_string(&map).unwrap(), text);
        assert_eq!(map.insert("age".into(), 2.into()), Some(1.into()));
        map.insert("zip".into(), "c".into());
        assert_eq!(map.keys().collect::<Vec<_>>(), ["name", "age", "city", "zip"]);
        assert_eq!(map.remove("name"), Some("a".into()));
        assert_eq!((map.len(), map.contains_key("name")), (3, false));
    }
}
