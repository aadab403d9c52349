//! A server's surface, for people and for CI: a tool described with an example call
//! (`describe`), everything the server offers as one JSON value (`snapshot`), and what changed
//! between a saved snapshot and the server now (`diff`).

use serde_json::{json, Map, Value};

use super::coerce;

/// The sections of a snapshot that list named things, and the member naming each.
const LISTS: [(&str, &str); 4] =
    [("tools", "name"), ("prompts", "name"), ("resources", "uri"), ("resourceTemplates", "uriTemplate")];

/// A tool as `describe` shows it: its declaration, plus an example call line.
pub(crate) fn describe_tool(tool: &Value) -> Value {
    let mut described = tool.clone();
    let name = tool.get("name").and_then(Value::as_str).unwrap_or("?");
    let schema = tool.get("inputSchema").and_then(Value::as_object).cloned().unwrap_or_default();
    let required = coerce::required(&schema);
    let mut words = vec![format!("call_tool {name}")];
    // Required fields first, then the optional ones (bracketed).
    let mut fields = coerce::property_names(&schema);
    fields.sort_by_key(|field| !required.contains(field));
    for field in fields {
        let property = coerce::property(&schema, &field);
        let example = example_value(property);
        let word = format!("{field}={example}");
        words.push(if required.contains(&field) { word } else { format!("[{word}]") });
    }
    if let Some(object) = described.as_object_mut() {
        object.insert("example".into(), Value::String(words.join(" ")));
    }
    described
}

/// A value to show for a field in an example: its default, first choice, or its type.
fn example_value(property: Option<&Value>) -> String {
    let Some(property) = property else { return "<value>".into() };
    if let Some(default) = property.get("default") {
        return default.as_str().map_or_else(|| default.to_string(), str::to_owned);
    }
    if let Some((first, _)) = coerce::enum_choices(property).into_iter().next() {
        return first.as_str().map_or_else(|| first.to_string(), str::to_owned);
    }
    let kind = property.get("type").and_then(Value::as_str).unwrap_or("value");
    format!("<{kind}>")
}

/// A snapshot from its parts: lists sorted by name, so that two snapshots of the same
/// surface are equal whatever order the server listed things in.
pub(crate) fn snapshot(state: &Value, lists: [Vec<Value>; 4]) -> Value {
    let mut snapshot = Map::new();
    snapshot.insert("protocolVersion".into(), state.get("protocolVersion").cloned().unwrap_or(Value::Null));
    snapshot.insert("serverInfo".into(), state.get("serverInfo").cloned().unwrap_or(Value::Null));
    snapshot.insert("capabilities".into(), state.get("capabilities").cloned().unwrap_or(Value::Null));
    snapshot.insert("instructions".into(), state.get("instructions").cloned().unwrap_or(Value::Null));
    for ((section, key), mut items) in LISTS.into_iter().zip(lists) {
        items.sort_by(|a, b| a.get(key).map(Value::to_string).cmp(&b.get(key).map(Value::to_string)));
        snapshot.insert(section.into(), Value::Array(items));
    }
    Value::Object(snapshot)
}

/// What changed from `before` to `now`: per list, the names added, removed and changed; and
/// the other members that differ. `same` says whether nothing did.
pub(crate) fn diff(before: &Value, now: &Value) -> Value {
    let mut added = Map::new();
    let mut removed = Map::new();
    let mut changed = Map::new();
    for (section, key) in LISTS {
        let index = |snapshot: &Value| -> Vec<(String, Value)> {
            snapshot
                .get(section)
                .and_then(Value::as_array)
                .map(|items| {
                    items
                        .iter()
                        .map(|i| (i.get(key).and_then(Value::as_str).unwrap_or("").to_owned(), i.clone()))
                        .collect()
                })
                .unwrap_or_default()
        };
        let (old, new) = (index(before), index(now));
        let names = |list: &[(String, Value)], keep: &dyn Fn(&str, &Value) -> bool| -> Vec<Value> {
            list.iter().filter(|(n, v)| keep(n, v)).map(|(n, _)| Value::String(n.clone())).collect()
        };
        let find = |list: &[(String, Value)], name: &str| list.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone());
        let gained = names(&new, &|n, _| find(&old, n).is_none());
        let lost = names(&old, &|n, _| find(&new, n).is_none());
        let differ = names(&new, &|n, v| find(&old, n).is_some_and(|o| o != *v));
        for (map, list) in [(&mut added, gained), (&mut removed, lost), (&mut changed, differ)] {
            if !list.is_empty() {
                map.insert(section.into(), Value::Array(list));
            }
        }
    }
    for member in ["protocolVersion", "serverInfo", "capabilities", "instructions"] {
        let (old, new) = (before.get(member).unwrap_or(&Value::Null), now.get(member).unwrap_or(&Value::Null));
        if old != new {
            changed.insert(member.into(), json!({"before": old, "now": new}));
        }
    }
    let same = added.is_empty() && removed.is_empty() && changed.is_empty();
    json!({"same": same, "added": added, "removed": removed, "changed": changed})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_example_call_names_required_fields_and_brackets_the_rest() {
        let tool = json!({"name": "echo", "inputSchema": {"type": "object", "properties": {
            "text": {"type": "string"}, "case": {"type": "string", "enum": ["upper", "lower"]},
            "times": {"type": "integer", "default": 2}}, "required": ["text"]}});
        let example = describe_tool(&tool)["example"].as_str().unwrap_or("").to_owned();
        assert!(example.starts_with("call_tool echo "), "{example}");
        for word in ["text=<string>", "[case=upper]", "[times=2]"] {
            assert!(example.contains(word), "{word} in {example}");
        }
    }

    #[test]
    fn a_diff_names_what_was_added_removed_and_changed() {
        let tool = |name: &str, d: &str| json!({"name": name, "description": d, "inputSchema": {"type": "object"}});
        let state = json!({"protocolVersion": "2025-11-25", "serverInfo": {"name": "s", "version": "1"}});
        let before = snapshot(&state, [vec![tool("b", "x"), tool("a", "x")], vec![], vec![], vec![]]);
        let same = snapshot(&state, [vec![tool("a", "x"), tool("b", "x")], vec![], vec![], vec![]]);
        assert_eq!(diff(&before, &same)["same"], true, "the order a server lists in is not a change");
        let later = json!({"protocolVersion": "2025-11-25", "serverInfo": {"name": "s", "version": "2"}});
        let now = snapshot(&later, [vec![tool("a", "y"), tool("c", "x")], vec![], vec![], vec![]]);
        let found = diff(&before, &now);
        assert_eq!(found["same"], false);
        assert_eq!(found["added"]["tools"], json!(["c"]));
        assert_eq!(found["removed"]["tools"], json!(["b"]));
        assert_eq!(found["changed"]["tools"], json!(["a"]));
        assert_eq!(found["changed"]["serverInfo"]["now"]["version"], "2");
    }
}
