//! `--trace` for stdio servers: `talaria` starts the server through itself (a hidden
//! `__trace-proxy` subcommand) that copies the frames both ways unchanged and reports each on
//! its stderr, which the client already captures. Secrets are redacted from what is printed
//! (`Authorization`, tokens, passwords, API keys), never from what is sent.
//!
//! Other transports (HTTP, legacy SSE, WebSocket, the in-process demo) are traced through the
//! client's own hook ([`ClientOptions::trace`](talaria::client::ClientOptions::trace)):
//! [`print_event`] prints what it reports, HTTP heads and SSE fields included.

use std::io::{self, BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::Value;

use super::exit::Exit;
use super::printer::Printer;
use super::stderr::describe_frame;
use talaria::client::TraceEvent;

/// Starts a frame the proxy sends towards the server, on its stderr.
const OUT: &str = "\u{1f}talaria-frame> ";
/// Starts a frame the proxy passes back from the server.
const IN: &str = "\u{1f}talaria-frame< ";

/// The hidden subcommand's name.
pub(crate) const PROXY_SUBCOMMAND: &str = "__trace-proxy";

/// A frame reported by the proxy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Frame {
    /// Client to server.
    pub(crate) outgoing: bool,
    /// The frame, secrets redacted.
    pub(crate) text: String,
}

/// The frame a line of the proxy's stderr reports, if it is one.
pub(crate) fn parse_line(line: &str) -> Option<Frame> {
    if let Some(text) = line.strip_prefix(OUT) {
        return Some(Frame { outgoing: true, text: text.to_owned() });
    }
    line.strip_prefix(IN).map(|text| Frame { outgoing: false, text: text.to_owned() })
}

/// Runs the proxy: `command` as a child, frames copied both ways and reported on stderr.
/// Exits with the child's exit code.
pub(crate) fn proxy(command: &[String]) -> Exit {
    let Some((program, args)) = command.split_first() else {
        eprintln!("talaria: {PROXY_SUBCOMMAND} needs a command");
        return Exit::Usage;
    };
    let mut child = match Command::new(program).args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn() {
        Ok(child) => child,
        Err(e) => {
            eprintln!("talaria: cannot start {program}: {e}");
            return Exit::Transport;
        }
    };
    let (Some(mut to_child), Some(from_child)) = (child.stdin.take(), child.stdout.take()) else {
        return Exit::Transport;
    };
    let upstream = std::thread::Builder::new().name("talaria-proxy-up".into()).spawn(move || {
        let _ = copy_lines(io::stdin().lock(), &mut to_child, OUT);
        // Dropping the pipe closes the child's stdin: the server sees EOF as we did.
    });
    let _ = copy_lines(BufReader::new(from_child), &mut io::stdout().lock(), IN);
    let status = child.wait();
    drop(upstream);
    match status {
        Ok(status) if status.success() => Exit::Ok,
        Ok(status) => {
            eprintln!("talaria: the server ended: {status}");
            // The proxy ends as the server did, so the client reports the server's status.
            std::process::exit(passthrough_code(status))
        }
        Err(e) => {
            eprintln!("talaria: cannot wait for the server: {e}");
            Exit::Transport
        }
    }
}

/// The exit code that tells a parent how `status` ended: its code, or 128 + the signal that
/// killed it (as a shell reports it).
fn passthrough_code(status: std::process::ExitStatus) -> i32 {
    #[cfg(unix)]
    if let Some(signal) = std::os::unix::process::ExitStatusExt::signal(&status) {
        return 128 + signal;
    }
    status.code().unwrap_or(1)
}

/// Copies newline-delimited frames from `input` to `output`, reporting each on stderr.
fn copy_lines(mut input: impl BufRead, output: &mut impl Write, prefix: &str) -> io::Result<()> {
    let mut line = Vec::new();
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            return Ok(());
        }
        output.write_all(&line)?;
        output.flush()?;
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\n', '\r']);
        if !text.is_empty() {
            eprintln!("{prefix}{}", redact(text));
        }
    }
}

/// Prints one event of the client's trace (a frame, an HTTP head, SSE fields), secrets
/// redacted, if tracing is on.
pub(crate) fn print_event(printer: &Printer, event: &TraceEvent<'_>) {
    if !printer.tracing() {
        return;
    }
    let dim = |text: &str| printer.style.dim(text);
    let (out, back) = (printer.style.cyan("→"), printer.style.green("←"));
    match event {
        TraceEvent::Sent(frame) | TraceEvent::Received(frame) => {
            let outgoing = matches!(event, TraceEvent::Sent(_));
            let text = redact(String::from_utf8_lossy(frame).trim_end());
            printer.line(&describe_frame(printer, &Frame { outgoing, text }));
        }
        TraceEvent::HttpRequest { method, url, headers } => {
            printer.line(&format!("{out} {method} {}", redact_bearer(url)));
            for (name, value) in *headers {
                printer.line(&format!("  {}", dim(&header_line(name, value))));
            }
        }
        TraceEvent::HttpResponse { status, headers } => {
            printer.line(&format!("{back} HTTP {status}"));
            for (name, value) in *headers {
                printer.line(&format!("  {}", dim(&header_line(name, value))));
            }
        }
        TraceEvent::SseEvent { event, id, retry } => {
            let mut fields = Vec::new();
            if let Some(event) = event {
                fields.push(format!("event: {event}"));
            }
            if let Some(id) = id {
                fields.push(format!("id: {id}"));
            }
            if let Some(retry) = retry {
                fields.push(format!("retry: {retry}"));
            }
            printer.line(&format!("{back} {}", dim(&format!("SSE {}", fields.join(", ")))));
        }
        // A kind of event this CLI does not know yet: nothing to print.
        _ => {}
    }
}

/// `text` with secrets replaced by `[redacted]`: the string values of sensitive members of a
/// JSON frame, and `Bearer` credentials anywhere.
pub(crate) fn redact(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let suspicious =
        ["authorization", "token", "secret", "password", "api_key", "apikey", "api-key", "cookie", "bearer"];
    if !suspicious.iter().any(|word| lower.contains(word)) {
        return text.to_owned();
    }
    match serde_json::from_str::<Value>(text) {
        Ok(mut value) => {
            redact_value(&mut value);
            value.to_string()
        }
        Err(_) => redact_bearer(text),
    }
}

fn redact_value(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, item) in map.iter_mut() {
                if is_sensitive(key) && item.is_string() {
                    *item = Value::String("[redacted]".into());
                } else {
                    redact_value(item);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact_value),
        Value::String(s) => {
            let redacted = redact_bearer(s);
            if redacted != *s {
                *s = redacted;
            }
        }
        _ => {}
    }
}

/// Whether a member or header name holds a secret (`progressToken` and friends do not).
pub(crate) fn is_sensitive(name: &str) -> bool {
    let name = name.to_ascii_lowercase().replace(['-', '_'], "");
    let exact =
        ["authorization", "proxyauthorization", "cookie", "setcookie", "password", "secret", "apikey", "xapikey"];
    let harmless = ["progresstoken", "maxtokens", "nextcursor"];
    exact.contains(&name.as_str())
        || (!harmless.contains(&name.as_str()) && (name.ends_with("token") || name.ends_with("secret")))
}

/// `Bearer <credential>` with the credential replaced.
fn redact_bearer(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let Some(at) = lower.find("bearer ") else { return text.to_owned() };
    let start = at + "bearer ".len();
    let end = text[start..].find(|c: char| c.is_whitespace() || c == '"' || c == ',').map_or(text.len(), |n| start + n);
    format!("{}[redacted]{}", &text[..start], &text[end..])
}

/// A header as printed in a trace: its value redacted when the name is sensitive.
pub(crate) fn header_line(name: &str, value: &str) -> String {
    if is_sensitive(name) {
        let scheme = value.split_once(' ').map(|(s, _)| format!("{s} ")).unwrap_or_default();
        format!("{name}: {scheme}[redacted]")
    } else {
        format!("{name}: {value}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_redacted_and_progress_tokens_are_not() {
        let frame =
            r#"{"params":{"_meta":{"progressToken":7},"arguments":{"api_key":"k","note":"Bearer abc def","n":"x"}}}"#;
        let got = redact(frame);
        assert!(got.contains(r#""progressToken":7"#), "{got}");
        assert!(got.contains(r#""api_key":"[redacted]""#), "{got}");
        assert!(got.contains(r#""note":"Bearer [redacted] def""#), "{got}");
        assert_eq!(redact(r#"{"a":1}"#), r#"{"a":1}"#);
        assert_eq!(header_line("Authorization", "Bearer t0k"), "Authorization: Bearer [redacted]");
        assert_eq!(header_line("Accept", "x"), "Accept: x");
        assert!(!is_sensitive("progressToken"));
        assert!(is_sensitive("access_token"));
    }

    #[test]
    fn proxy_lines_are_recognised() {
        let line = format!("{OUT}{{}}");
        assert_eq!(parse_line(&line), Some(Frame { outgoing: true, text: "{}".into() }));
        assert_eq!(parse_line("plain stderr"), None);
    }
}
