//! `talaria demo`: the README's first command. Starts the bundled demo server in this process
//! and walks through a short tour (handshake, lists, a typed tool call, a tool call with a live
//! progress bar, a prompt, a resource, a completion, log messages), showing each step as the
//! REPL command that does it, then offers the REPL itself.

use std::io::IsTerminal as _;
use std::sync::Arc;

use talaria_core::schema::LoggingLevel;
use talaria_core::version::Era;

use super::args::DemoArgs;
use super::catalog::Catalog;
use super::commands::{self, Command};
use super::connect::{Connector, Hooks, Session, Target};
use super::exec::Exec;
use super::exit::Exit;
use super::printer::Printer;
use super::repl;
use super::scripted::{emit_failure, emit_outcome};
use super::wait::Nobody;
use super::Settings;

/// The tour: what each step shows, and the command that shows it.
const STEPS: &[(&str, &str)] = &[
    ("The server's tools, with their arguments typed by schema", "list_tools"),
    ("A tool call: key=value arguments are typed by the input schema", "call_tool add a=2 b=40"),
    ("A long call: the server reports progress, shown as a live bar", "call_tool slow steps=8 step_ms=150"),
    ("A tool error is a result with isError set (exit code 3 in scripts)", "call_tool fail"),
    ("A prompt, filled in with arguments", "get_prompt greet name=Ada tone=pirate"),
    ("Resources, and reading one", "list_resources"),
    ("", "read_resource file:///readme.md"),
    ("A resource template, expanded by the server", "read_resource notes://42"),
    ("Completion: the server suggests values for a prompt argument", "complete greet name=A"),
    ("Logging: the server's log messages appear as they arrive", "call_tool log"),
    ("A tool described: its schemas and an example call", "describe echo"),
    ("The connection: revision, capabilities, transport, latency", "show_state"),
];

/// Steps of the tour when nobody is at a terminal: the server's questions, answered as
/// scripted mode does (at a terminal, the session asks the person instead: see [`YOUR_TURN`]).
const SCRIPTED_STEPS: &[(&str, &str)] = &[
    (
        "The server asks the client's model (sampling): scripted mode answers with --sampling-reply",
        "call_tool sample question=Ready?",
    ),
    ("The server asks the user (elicitation): scripted mode declines unless told", "call_tool elicit question=Name?"),
];

/// What to try first in the session after the tour: what only an interactive client shows.
const YOUR_TURN: &[(&str, &str)] = &[
    ("call_tool sample question=Ready?", "the server asks your model: you answer as the model"),
    ("call_tool elicit question=Name?", "the server asks you: a form, checked as you type"),
    ("call_tool slow steps=100 step_ms=100", "then Ctrl-C: the call is cancelled, the session stays"),
    ("wire on", "then any command: every frame both ways"),
];

/// Runs the tour, then (on a terminal, unless `--no-interactive`) the REPL.
pub(crate) fn run(args: &DemoArgs, settings: &Settings, printer: &Arc<Printer>) -> Exit {
    let interactive = !args.no_interactive && std::io::stdin().is_terminal();
    let connector = Connector {
        target: Target::Demo,
        headers: Vec::new(),
        protocol: None,
        timeout: None,
        log_level: Some(LoggingLevel::Info),
        proxy: false,
        scripted: super::server_requests::Scripted {
            sampling_reply: Some("Ready when you are (a scripted reply standing in for a model).".into()),
            ..super::server_requests::Scripted::default()
        },
        oauth: None,
        smol: false,
        tls: talaria::tls::TlsRoots::new(),
        record: None,
    };
    printer.set_logs(true);
    let style = printer.style;
    printer.line(&style.bold("Talaria demo: a tour of MCP against the bundled demo server (in this process)."));
    if !interactive {
        let hooks = Hooks {
            printer: Arc::clone(printer),
            catalog: Arc::new(Catalog::default()),
            questions: None,
            waiting: || false,
        };
        return match connector.connect(&hooks) {
            Ok(session) => {
                let exit = tour_pausing(&session, settings, printer, false);
                session.client.close();
                printer.line(&style.dim("Run `talaria demo` on a terminal to continue interactively after the tour."));
                exit
            }
            Err(failure) => {
                emit_failure(settings, printer, &failure);
                failure.exit()
            }
        };
    }
    let live = match repl::connect(&connector, printer) {
        Ok(live) => live,
        Err(failure) => {
            emit_failure(settings, printer, &failure);
            return failure.exit();
        }
    };
    let exit = tour_pausing(&live.session, settings, printer, true);
    printer.line("");
    printer.line(&style.bold("Now it is your turn: the same commands work here (Tab completes). `exit` leaves."));
    repl::run(&connector, settings, printer, Some(live)).or(exit)
}

/// Waits for Enter before the next section, on a terminal (`q` skips the rest of the pauses).
struct Pauses {
    on: bool,
}

impl Pauses {
    fn wait(&mut self, printer: &Printer) {
        if !self.on {
            return;
        }
        eprint!("{}", printer.style.dim("  (Enter: next step, q: run the rest without pausing) "));
        let mut line = String::new();
        if std::io::stdin().read_line(&mut line).is_err() || line.trim() == "q" || line.is_empty() {
            self.on = false;
        }
    }
}

/// The command to suggest for running `talaria`: its name if it is on `PATH`, else the path
/// this process runs from (a newcomer who ran `cargo run` has no `talaria` on `PATH`).
fn talaria_command() -> String {
    let on_path = std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join("talaria").is_file()));
    if on_path {
        return "talaria".into();
    }
    std::env::current_exe().map_or_else(|_| "talaria".into(), |exe| exe.display().to_string())
}

/// The steps, in order, pausing between sections when `pause` (interactive); returns the
/// first failure's exit code (a tool error is expected).
fn tour_pausing(session: &Session, settings: &Settings, printer: &Arc<Printer>, pause: bool) -> Exit {
    let mut pauses = Pauses { on: pause };
    let style = printer.style;
    let client = &session.client;
    let info = client.server_info();
    heading(printer, 1, "The handshake: who the server is and what it offers");
    println!(
        "{} {} {} over {}, protocol {} ({} era), {} ms",
        style.dim("connected to"),
        style.cyan(&info.name),
        info.version,
        session.transport,
        client.protocol_version().as_str(),
        if client.protocol_version().era() == Era::Stateless { "stateless" } else { "legacy" },
        session.connect_time.as_millis()
    );
    if let Some(capabilities) = client.server_capabilities().and_then(|c| serde_json::to_value(c).ok()) {
        let names: Vec<String> = capabilities.as_object().map(|m| m.keys().cloned().collect()).unwrap_or_default();
        println!("{} {}", style.dim("capabilities:"), names.join(", "));
    }
    let mut exit = Exit::Ok;
    let mut number = 1;
    let scripted = if pause { &[][..] } else { SCRIPTED_STEPS };
    for (what, line) in STEPS.iter().chain(scripted) {
        if !what.is_empty() {
            pauses.wait(printer);
            number += 1;
            heading(printer, number, what);
        }
        println!("{}{}", style.dim("talaria> "), style.bold(line));
        let words: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
        let command = match commands::parse(&words) {
            Ok(command) => command,
            Err(failure) => {
                emit_failure(settings, printer, &failure);
                exit = exit.or(failure.exit());
                continue;
            }
        };
        let mut exec = Exec { session, printer, ui: &mut Nobody, validate: true };
        match exec.run(&command) {
            Ok(outcome) => emit_outcome(settings, printer, &outcome),
            Err(failure) => {
                emit_failure(settings, printer, &failure);
                exit = exit.or(failure.exit());
            }
        }
        if matches!(command, Command::CallTool { ref name, .. } if name == "log") {
            // Log notifications travel on their own; give the last ones a moment to arrive.
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }
    pauses.wait(printer);
    heading(printer, number + 1, "Scripts and CI");
    let me = talaria_command();
    println!("The same commands run one-shot, with JSON output and documented exit codes:");
    println!("  {me} --json stdio -- {me} serve-demo ::: call-tool add a=2 b=40 ::: list-prompts");
    println!("  {me} --json stdio -- {me} serve-demo ::: snapshot > surface.json   (then: ... ::: diff surface.json)");
    println!("In another terminal, `{me} serve-demo --transport http --port 8765`, then:");
    println!("  {me} http://127.0.0.1:8765/mcp read-resource notes://7");
    println!(
        "Also: `wire on` in the session shows every frame; `{me} tap -- CMD` shows them between any host and server."
    );
    if pause {
        println!();
        println!("{}", style.bold("Try these first in the session:"));
        for (line, what) in YOUR_TURN {
            println!("  {}{}   {}", style.dim("talaria> "), style.bold(line), style.dim(what));
        }
    }
    exit
}

fn heading(printer: &Printer, number: usize, text: &str) {
    println!();
    println!("{}", printer.style.bold(&printer.style.yellow(&format!("── {number}. {text}"))));
}
