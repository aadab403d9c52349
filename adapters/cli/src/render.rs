//! Results for a person: lists as aligned lines, tool results block by block (`isError`
//! marked, images and audio summarised by MIME type and size and optionally saved, structured
//! content as JSON), everything else as coloured JSON.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::coerce;
use super::exec::{Outcome, Shape};
use super::style::Style;

/// Renders `outcome` for a person; binary content is saved under `save` when given.
pub(crate) fn render(outcome: &Outcome, style: Style, save: Option<&Path>) -> String {
    // The server's text is shown, never obeyed by the terminal.
    let value = &super::neutral::neutralize_value(&outcome.value);
    let mut out = String::new();
    match outcome.shape {
        Shape::Tools => tools(&mut out, value, style),
        Shape::ToolResult => tool_result(&mut out, value, style, save),
        Shape::Prompts => prompts(&mut out, value, style),
        Shape::Prompt => prompt(&mut out, value, style, save),
        Shape::Resources => list(&mut out, value.get("resources"), "uri", style, "(no resources)"),
        Shape::Templates => list(&mut out, value.get("resourceTemplates"), "uriTemplate", style, "(no templates)"),
        Shape::Contents => contents(&mut out, value, style, save),
        Shape::Completion => completion(&mut out, value, style),
        Shape::Pong => out.push_str(&style.green("pong")),
        Shape::Roots => roots(&mut out, value),
        Shape::State => state(&mut out, value, style),
        Shape::Done => out.push_str(&style.green(value.get("message").and_then(Value::as_str).unwrap_or("ok"))),
        Shape::Raw => out.push_str(&style.json(value)),
    }
    out.trim_end().to_owned()
}

fn str_of<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

fn items(value: Option<&Value>) -> &[Value] {
    value.and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

fn tools(out: &mut String, value: &Value, style: Style) {
    let tools = items(value.get("tools"));
    if tools.is_empty() {
        out.push_str("(no tools)");
    }
    for tool in tools {
        let name = str_of(tool, "name").unwrap_or("?");
        let schema = tool.get("inputSchema").and_then(Value::as_object).cloned().unwrap_or_default();
        let required = coerce::required(&schema);
        let mut names = coerce::property_names(&schema);
        names.sort_by_key(|n| !required.contains(n));
        let args: Vec<String> = names
            .into_iter()
            .map(|arg| {
                let placeholder = coerce::placeholder(coerce::property(&schema, &arg));
                if required.contains(&arg) {
                    format!("{arg}={placeholder}")
                } else {
                    format!("[{arg}={placeholder}]")
                }
            })
            .collect();
        let line = format!("{} {}", style.bold(&style.cyan(name)), args.join(" "));
        let _ = writeln!(out, "{}", line.trim_end());
        if let Some(description) = str_of(tool, "description") {
            let _ = writeln!(out, "    {}", style.dim(description));
        }
    }
}

fn tool_result(out: &mut String, value: &Value, style: Style, save: Option<&Path>) {
    if value.get("isError").and_then(Value::as_bool) == Some(true) {
        let _ = writeln!(out, "{}", style.red("✗ the tool reported an error:"));
    }
    let blocks = items(value.get("content"));
    let structured = value.get("structuredContent");
    for (i, block) in blocks.iter().enumerate() {
        // A text block that repeats the structured content adds nothing.
        if structured.is_some()
            && str_of(block, "text").and_then(|t| serde_json::from_str::<Value>(t).ok()).as_ref() == structured
        {
            continue;
        }
        content_block(out, block, style, save, i);
    }
    if let Some(structured) = structured {
        let _ = writeln!(out, "{}\n{}", style.dim("structured content:"), style.json(structured));
    }
    if blocks.is_empty() && structured.is_none() {
        out.push_str(&style.dim("(no content)"));
    }
}

fn content_block(out: &mut String, block: &Value, style: Style, save: Option<&Path>, index: usize) {
    match str_of(block, "type") {
        Some("text") => {
            let _ = writeln!(out, "{}", str_of(block, "text").unwrap_or(""));
        }
        Some(kind @ ("image" | "audio")) => {
            let mime = str_of(block, "mimeType").unwrap_or("application/octet-stream");
            let data = str_of(block, "data").unwrap_or("");
            let _ = writeln!(out, "{}", binary_line(kind, mime, data, style, save, index));
        }
        Some("resource_link") => {
            let uri = str_of(block, "uri").unwrap_or("?");
            let name = str_of(block, "name").unwrap_or("");
            let _ = writeln!(out, "→ {} {}", style.cyan(uri), style.dim(name));
        }
        Some("resource") => {
            let resource = block.get("resource").cloned().unwrap_or(Value::Null);
            resource_contents(out, &resource, style, save, index);
        }
        _ => {
            let _ = writeln!(out, "{}", style.json(block));
        }
    }
}

fn resource_contents(out: &mut String, contents: &Value, style: Style, save: Option<&Path>, index: usize) {
    let uri = str_of(contents, "uri").unwrap_or("?");
    let mime = str_of(contents, "mimeType");
    match mime {
        Some(mime) => {
            let _ = writeln!(out, "{} {}", style.cyan(uri), style.dim(mime));
        }
        None => {
            let _ = writeln!(out, "{}", style.cyan(uri));
        }
    }
    if let Some(text) = str_of(contents, "text") {
        let _ = writeln!(out, "{text}");
    } else if let Some(blob) = str_of(contents, "blob") {
        let line = binary_line("blob", mime.unwrap_or("application/octet-stream"), blob, style, save, index);
        let _ = writeln!(out, "{line}");
    }
}

/// `[image image/png, 68 bytes]`, and where it was saved.
fn binary_line(kind: &str, mime: &str, base64: &str, style: Style, save: Option<&Path>, index: usize) -> String {
    let bytes = decode_base64(base64);
    let size = bytes.as_ref().map_or_else(|| "undecodable base64".to_owned(), |b| human_size(b.len()));
    let mut line = style.yellow(&format!("[{kind} {mime}, {size}]"));
    if let (Some(dir), Some(bytes)) = (save, bytes) {
        match save_bytes(dir, kind, mime, index, &bytes) {
            Ok(path) => line.push_str(&format!(" saved to {}", path.display())),
            Err(e) => line.push_str(&format!(" (not saved: {e})")),
        }
    }
    line
}

fn save_bytes(dir: &Path, kind: &str, mime: &str, index: usize, bytes: &[u8]) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let extension = mime.rsplit('/').next().unwrap_or("bin").split(['+', ';']).next().unwrap_or("bin");
    let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or(0);
    let path = dir.join(format!("{kind}-{stamp}-{index}.{extension}"));
    std::fs::write(&path, bytes)?;
    Ok(path)
}

fn human_size(bytes: usize) -> String {
    match bytes {
        0..1024 => format!("{bytes} bytes"),
        1024..1_048_576 => format!("{:.1} KiB", bytes as f64 / 1024.0),
        _ => format!("{:.1} MiB", bytes as f64 / 1_048_576.0),
    }
}

/// Standard base64 (padding optional, whitespace ignored); `None` if malformed.
fn decode_base64(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let mut buffer = 0u32;
    let mut bits = 0;
    for byte in text.bytes().filter(|b| !b.is_ascii_whitespace() && *b != b'=') {
        let value = match byte {
            b'A'..=b'Z' => byte - b'A',
            b'a'..=b'z' => byte - b'a' + 26,
            b'0'..=b'9' => byte - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        };
        buffer = (buffer << 6) | u32::from(value);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            // Invariant: shifted down to the top 8 of the buffered bits.
            #[allow(clippy::cast_possible_truncation)]
            out.push((buffer >> bits) as u8);
            buffer &= (1 << bits) - 1;
        }
    }
    Some(out)
}

fn prompts(out: &mut String, value: &Value, style: Style) {
    let prompts = items(value.get("prompts"));
    if prompts.is_empty() {
        out.push_str("(no prompts)");
    }
    for prompt in prompts {
        let args: Vec<String> = items(prompt.get("arguments"))
            .iter()
            .map(|a| {
                let name = str_of(a, "name").unwrap_or("?");
                if a.get("required").and_then(Value::as_bool) == Some(true) {
                    format!("{name}=<value>")
                } else {
                    format!("[{name}=<value>]")
                }
            })
            .collect();
        let line = format!("{} {}", style.bold(&style.cyan(str_of(prompt, "name").unwrap_or("?"))), args.join(" "));
        let _ = writeln!(out, "{}", line.trim_end());
        if let Some(description) = str_of(prompt, "description") {
            let _ = writeln!(out, "    {}", style.dim(description));
        }
    }
}

fn prompt(out: &mut String, value: &Value, style: Style, save: Option<&Path>) {
    if let Some(description) = str_of(value, "description") {
        let _ = writeln!(out, "{}", style.dim(description));
    }
    for (i, message) in items(value.get("messages")).iter().enumerate() {
        let _ = write!(out, "{} ", style.bold(&format!("{}:", str_of(message, "role").unwrap_or("?"))));
        match message.get("content") {
            Some(block) => content_block(out, block, style, save, i),
            None => out.push('\n'),
        }
    }
}

fn list(out: &mut String, list: Option<&Value>, key: &str, style: Style, empty: &str) {
    let entries = items(list);
    if entries.is_empty() {
        out.push_str(empty);
    }
    for entry in entries {
        let mime = str_of(entry, "mimeType").map(|m| format!(" ({m})")).unwrap_or_default();
        let _ = writeln!(
            out,
            "{}  {}{}",
            style.cyan(str_of(entry, key).unwrap_or("?")),
            str_of(entry, "name").unwrap_or(""),
            mime
        );
        if let Some(description) = str_of(entry, "description") {
            let _ = writeln!(out, "    {}", style.dim(description));
        }
    }
}

fn contents(out: &mut String, value: &Value, style: Style, save: Option<&Path>) {
    for (i, contents) in items(value.get("contents")).iter().enumerate() {
        resource_contents(out, contents, style, save, i);
    }
}

fn completion(out: &mut String, value: &Value, style: Style) {
    let completion = value.get("completion").cloned().unwrap_or(Value::Null);
    let values: Vec<&str> = items(completion.get("values")).iter().filter_map(Value::as_str).collect();
    if values.is_empty() {
        out.push_str(&style.dim("(no completions)"));
    } else {
        out.push_str(&values.join("  "));
    }
    let more = completion.get("hasMore").and_then(Value::as_bool) == Some(true);
    if let Some(total) = completion.get("total").and_then(Value::as_u64).filter(|t| *t as usize > values.len()) {
        let _ = write!(out, "  {}", style.dim(&format!("({} of {total})", values.len())));
    } else if more {
        let _ = write!(out, "  {}", style.dim("(more)"));
    }
}

fn roots(out: &mut String, value: &Value) {
    let roots = items(value.get("roots"));
    if roots.is_empty() {
        out.push_str("(no roots)");
    }
    for root in roots {
        let _ = writeln!(out, "{} {}", str_of(root, "uri").unwrap_or("?"), str_of(root, "name").unwrap_or(""));
    }
}

fn state(out: &mut String, value: &Value, style: Style) {
    let Some(map) = value.as_object() else { return };
    for (key, item) in map {
        let shown = match item {
            Value::String(s) => s.clone(),
            Value::Null => "-".to_owned(),
            Value::Object(_) | Value::Array(_) => serde_json::to_string(item).unwrap_or_default(),
            other => other.to_string(),
        };
        let _ = writeln!(out, "{:18} {shown}", style.dim(key));
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::time::Duration;

    use serde_json::json;

    use super::*;

    fn outcome(value: Value, shape: Shape) -> Outcome {
        Outcome { value, shape, tool_error: false, elapsed: Duration::ZERO }
    }

    #[test]
    fn tool_results_summarise_binaries_and_mark_errors() {
        let value = json!({"content": [
            {"type": "text", "text": "hello"},
            {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
        ], "isError": true});
        let text = render(&outcome(value, Shape::ToolResult), Style::plain(), None);
        assert_eq!(text, "✗ the tool reported an error:\nhello\n[image image/png, 8 bytes]");
    }

    #[test]
    fn structured_content_is_not_shown_twice() {
        let value = json!({"content": [{"type": "text", "text": "{\"sum\":3}"}], "structuredContent": {"sum": 3}});
        let text = render(&outcome(value, Shape::ToolResult), Style::plain(), None);
        assert_eq!(text, "structured content:\n{\n  \"sum\": 3\n}");
    }

    #[test]
    fn tools_show_typed_argument_placeholders() {
        let value = json!({"tools": [{"name": "add", "description": "Adds", "inputSchema": {"type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a"]}}]});
        let text = render(&outcome(value, Shape::Tools), Style::plain(), None);
        assert_eq!(text, "add a=<integer> [b=<integer>]\n    Adds");
    }

    #[test]
    fn base64_decodes() {
        assert_eq!(decode_base64("aGk=").unwrap(), b"hi");
        assert_eq!(decode_base64("aGV5").unwrap(), b"hey");
        assert!(decode_base64("a*").is_none());
        assert_eq!(human_size(2048), "2.0 KiB");
    }

    #[test]
    fn binaries_are_saved_when_asked() {
        let dir = std::env::temp_dir().join(format!("talaria-render-{}", std::process::id()));
        let value = json!({"content": [{"type": "image", "data": "aGk=", "mimeType": "image/png"}]});
        let text = render(&outcome(value, Shape::ToolResult), Style::plain(), Some(&dir));
        let path = text.split(" saved to ").nth(1).unwrap();
        assert!(path.ends_with(".png"));
        assert_eq!(std::fs::read(path).unwrap(), b"hi");
        let _ = std::fs::remove_dir_all(dir);
    }
}
