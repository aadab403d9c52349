//! `doctor`: diagnoses a server and prints a report with fixes: which revisions and eras it
//! speaks, whether what it declares matches what it does, whether its tools' schemas are
//! sound, and how fast it answers; before that, what comes before MCP (`doctor_net`): TLS,
//! redirects and sign-in for an HTTP server, a stdout banner for a stdio one.
//!
//! `talaria doctor URL`, or `talaria <connection> doctor` (`talaria stdio -- CMD ::: doctor`).
//! Each finding is `ok`, `warning` or `error`; the run exits 3 when any is an error.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use talaria_core::schema::tools::Tool;
use talaria_core::version::ProtocolVersion;

use super::catalog::Catalog;
use super::connect::{Connector, Hooks, Session};
use super::exit::Exit;
use super::printer::Printer;
use super::Settings;

/// How sure a finding is that something is wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Level {
    /// Fine.
    Ok,
    /// Works, but something is off.
    Warning,
    /// Broken.
    Error,
}

impl Level {
    const fn name(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Warning => "warning",
            Self::Error => "error",
        }
    }
}

/// One finding: what was checked, how it went, and what to do about it.
struct Finding {
    check: String,
    level: Level,
    detail: String,
    fix: Option<String>,
}

/// The report being written.
#[derive(Default)]
pub(crate) struct Report {
    findings: Vec<Finding>,
}

impl Report {
    pub(crate) fn add(&mut self, check: impl Into<String>, level: Level, detail: impl Into<String>, fix: Option<&str>) {
        self.findings.push(Finding { check: check.into(), level, detail: detail.into(), fix: fix.map(str::to_owned) });
    }

    pub(crate) fn to_json(&self) -> Value {
        let findings: Vec<Value> = self
            .findings
            .iter()
            .map(|f| json!({"check": f.check, "level": f.level.name(), "detail": f.detail, "fix": f.fix}))
            .collect();
        let errors = self.findings.iter().filter(|f| f.level == Level::Error).count();
        let warnings = self.findings.iter().filter(|f| f.level == Level::Warning).count();
        json!({"findings": findings, "errors": errors, "warnings": warnings})
    }
}

/// Runs the diagnosis against `connector`'s server and prints the report.
pub(crate) fn run(connector: &Connector, settings: &Settings, printer: &Arc<Printer>) -> Exit {
    let mut report = Report::default();
    super::doctor_net::check(connector, &mut report);
    let hooks = || Hooks {
        printer: Arc::clone(printer),
        catalog: Arc::new(Catalog::default()),
        questions: None,
        waiting: || false,
    };
    // Each revision, newest first; the newest that works is examined further.
    let mut examined: Option<Session> = None;
    for version in ProtocolVersion::ALL.iter().rev().copied() {
        let pinned = Connector { protocol: Some(version), ..connector.clone() };
        let started = Instant::now();
        match pinned.connect(&hooks()) {
            Ok(session) => {
                let took = started.elapsed();
                report.add(
                    format!("revision {}", version.as_str()),
                    Level::Ok,
                    format!("handshake in {} ms over {}", took.as_millis(), session.transport),
                    None,
                );
                if examined.is_none() {
                    examined = Some(session);
                } else {
                    session.client.close();
                }
            }
            Err(failure) => {
                report.add(format!("revision {}", version.as_str()), Level::Warning, failure.to_string(), None);
            }
        }
    }
    match examined {
        None => report.add(
            "reachable",
            Level::Error,
            "no revision could be spoken with this server",
            Some("check the URL or command, the credentials (--oauth, -H), and the server's logs (-v)"),
        ),
        Some(session) => {
            examine(&session, &mut report);
            session.client.close();
        }
    }
    print(&report, settings, printer);
    if report.findings.iter().any(|f| f.level == Level::Error) {
        Exit::Protocol
    } else {
        Exit::Ok
    }
}

/// What one working session shows: declared capabilities against behaviour, tool schemas,
/// latency.
fn examine(session: &Session, report: &mut Report) {
    let client = &session.client;
    let caps = client.server_capabilities().cloned().unwrap_or_default();
    let listing =
        |report: &mut Report, what: &str, declared: bool, listed: Result<usize, String>| match (declared, listed) {
            (true, Ok(n)) => report.add(format!("{what} capability"), Level::Ok, format!("declared, {n} listed"), None),
            (true, Err(e)) => report.add(
                format!("{what} capability"),
                Level::Error,
                format!("declared, but listing failed: {e}"),
                Some("answer the list request, or do not declare the capability"),
            ),
            (false, Ok(n)) if n > 0 => report.add(
                format!("{what} capability"),
                Level::Warning,
                format!("not declared, yet {n} listed"),
                Some("declare the capability: clients only ask for what is declared"),
            ),
            (false, _) => {}
        };
    let tools = client.list_all_tools().map_err(|e| e.to_string());
    listing(report, "tools", caps.tools.is_some(), tools.as_ref().map(Vec::len).map_err(Clone::clone));
    if let Ok(tools) = &tools {
        for tool in tools {
            check_tool(tool, report);
        }
    }
    let prompts = client.list_all_prompts().map(|p| p.len()).map_err(|e| e.to_string());
    listing(report, "prompts", caps.prompts.is_some(), prompts);
    let resources = client.list_all_resources().map(|r| r.len()).map_err(|e| e.to_string());
    listing(report, "resources", caps.resources.is_some(), resources);
    latency(session, report);
}

/// A tool's schemas: an object at the top, `required` naming declared properties, and
/// (where there is one) the same for the output schema.
fn check_tool(tool: &Tool, report: &mut Report) {
    let mut problems = schema_problems(&Value::Object((*tool.input_schema).clone()), "inputSchema");
    if let Some(output) = &tool.output_schema {
        problems.extend(schema_problems(&Value::Object((**output).clone()), "outputSchema"));
    }
    if tool.description.as_deref().is_none_or(str::is_empty) {
        report.add(
            format!("tool {}", tool.name),
            Level::Warning,
            "no description",
            Some("describe the tool: models choose tools by their descriptions"),
        );
    }
    if problems.is_empty() {
        report.add(format!("tool {}", tool.name), Level::Ok, "schemas are sound", None);
    } else {
        report.add(
            format!("tool {}", tool.name),
            Level::Error,
            problems.join("; "),
            Some("fix the schema: clients validate arguments and results against it"),
        );
    }
}

/// What is wrong with a tool schema at `at`, if anything.
fn schema_problems(schema: &Value, at: &str) -> Vec<String> {
    let mut problems = Vec::new();
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        problems.push(format!("{at}: the type must be \"object\""));
    }
    let properties = schema.get("properties");
    if properties.is_some_and(|p| !p.is_object()) {
        problems.push(format!("{at}: properties must be an object"));
    }
    for name in schema.get("required").and_then(Value::as_array).into_iter().flatten() {
        let declared = name.as_str().is_some_and(|n| properties.and_then(|p| p.get(n)).is_some());
        if !declared {
            problems.push(format!("{at}: required {name} is not among the properties"));
        }
    }
    problems
}

/// The median of a few round trips.
fn latency(session: &Session, report: &mut Report) {
    let mut times: Vec<Duration> = Vec::new();
    for _ in 0..5 {
        let started = Instant::now();
        if session.client.list_all_tools().is_err() && session.client.ping().is_err() {
            return;
        }
        times.push(started.elapsed());
    }
    times.sort();
    let median = times[times.len() / 2];
    let level = if median > Duration::from_secs(1) { Level::Warning } else { Level::Ok };
    let fix =
        (level == Level::Warning).then_some("a list should answer well under a second; look at the server's slow path");
    report.add("latency", level, format!("median round trip {} ms (5 tries)", median.as_millis()), fix);
}

fn print(report: &Report, settings: &Settings, printer: &Printer) {
    if settings.json {
        println!("{}", report.to_json());
        return;
    }
    let style = settings.out;
    for finding in &report.findings {
        let mark = match finding.level {
            Level::Ok => style.green("✓"),
            Level::Warning => style.yellow("!"),
            Level::Error => style.red("✗"),
        };
        println!("{mark} {}: {}", style.bold(&finding.check), finding.detail);
        if let Some(fix) = &finding.fix {
            println!("    {}", style.dim(&format!("fix: {fix}")));
        }
    }
    let summary = report.to_json();
    printer.line(&format!("{} errors, {} warnings", summary["errors"], summary["warnings"]));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsound_tool_schemas_are_found() {
        assert!(
            schema_problems(&json!({"type": "object", "properties": {"a": {}}, "required": ["a"]}), "in").is_empty()
        );
        let problems = schema_problems(&json!({"type": "string", "properties": [], "required": ["b"]}), "in");
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert!(problems[2].contains("\"b\" is not among the properties"), "{problems:?}");
    }
}
