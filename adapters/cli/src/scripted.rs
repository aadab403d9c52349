//! Scripted mode: commands from the command line (`:::`-separated) or from stdin (one per
//! line; blank lines and `#` comments skipped), run in order. Never prompts. Every command's
//! outcome is printed; the exit code is the first failure's; a transport failure or an
//! interrupt stops the run.

use std::io::BufRead as _;
use std::sync::Arc;

use super::catalog::Catalog;
use super::commands::{self, Command};
use super::connect::{Connector, Hooks, Session};
use super::exec::{Exec, Outcome};
use super::exit::{Exit, Failure, Kind};
use super::interrupt;
use super::printer::Printer;
use super::render::render;
use super::split::split_words;
use super::wait::Nobody;
use super::Settings;

/// Where the commands come from.
pub(crate) enum Source {
    /// One-shot commands from the command line.
    Args(Vec<Vec<String>>),
    /// One per line of stdin.
    Stdin,
}

/// Connects, runs the commands, closes.
pub(crate) fn run(connector: &Connector, settings: &Settings, printer: &Arc<Printer>, source: Source) -> Exit {
    let hooks = Hooks {
        printer: Arc::clone(printer),
        catalog: Arc::new(Catalog::default()),
        questions: None,
        waiting: || false,
    };
    let mut session = match connector.connect(&hooks) {
        Ok(session) => session,
        Err(failure) => {
            emit_failure(settings, printer, &failure);
            return failure.exit();
        }
    };
    announce(printer, &session);
    let lines: Box<dyn Iterator<Item = Result<Vec<String>, Failure>>> = match source {
        Source::Args(groups) => Box::new(groups.into_iter().map(Ok)),
        Source::Stdin => Box::new(std::io::stdin().lock().lines().filter_map(|line| match line {
            Err(e) => Some(Err(Failure::usage(format!("cannot read stdin: {e}")))),
            Ok(line) if line.trim().is_empty() || line.trim_start().starts_with('#') => None,
            Ok(line) => Some(split_words(&line).map_err(Failure::usage)),
        })),
    };
    let mut exit = Exit::Ok;
    for words in lines {
        let command = match words.and_then(|w| commands::parse(&w)) {
            Ok(command) => command,
            Err(failure) => {
                emit_failure(settings, printer, &failure);
                exit = exit.or(failure.exit());
                continue;
            }
        };
        match step(connector, &hooks, &mut session, settings, printer, &command) {
            Step::Continue(code) => exit = exit.or(code),
            Step::Stop(code) => {
                exit = exit.or(code);
                break;
            }
        }
    }
    session.client.close();
    exit
}

/// What the loop does after a command.
pub(crate) enum Step {
    /// Go on (with this command's exit code).
    Continue(Exit),
    /// Stop (`exit`, or the session cannot go on).
    Stop(Exit),
}

/// Runs one command, handling the session-level ones (help, wire, initialize, exit) here.
pub(crate) fn step(
    connector: &Connector,
    hooks: &Hooks,
    session: &mut Session,
    settings: &Settings,
    printer: &Arc<Printer>,
    command: &Command,
) -> Step {
    match command {
        Command::Exit => Step::Stop(Exit::Ok),
        Command::Clear => Step::Continue(Exit::Ok),
        Command::Help(name) => match commands::help(name.as_deref()) {
            Ok(text) if settings.json => {
                println!("{}", serde_json::json!({"help": text}));
                Step::Continue(Exit::Ok)
            }
            Ok(text) => {
                println!("{text}");
                Step::Continue(Exit::Ok)
            }
            Err(failure) => {
                emit_failure(settings, printer, &failure);
                Step::Continue(failure.exit())
            }
        },
        Command::Wire(on) => {
            printer.set_tracing(*on);
            let note = match (&session.target, connector.proxy) {
                // A stdio server's frames are seen through the proxy it was started with.
                (super::connect::Target::Stdio { .. }, false) => {
                    "a stdio server's frames can be printed when it was started with --trace (or interactively)"
                        .to_owned()
                }
                _ => format!("wire {}", if *on { "on" } else { "off" }),
            };
            emit_done(settings, printer, &note);
            Step::Continue(Exit::Ok)
        }
        Command::Initialize => {
            session.client.close();
            match connector.connect(hooks) {
                Ok(new) => {
                    *session = new;
                    announce(printer, session);
                    let info = session.client.server_info();
                    emit_done(settings, printer, &format!("reconnected to {} {}", info.name, info.version));
                    Step::Continue(Exit::Ok)
                }
                Err(failure) => {
                    emit_failure(settings, printer, &failure);
                    Step::Stop(failure.exit())
                }
            }
        }
        other => {
            let mut exec = Exec { session, printer, ui: &mut Nobody, validate: settings.validate };
            match exec.run(other) {
                Ok(outcome) => {
                    emit_outcome(settings, printer, &outcome);
                    Step::Continue(if outcome.tool_error { Exit::Protocol } else { Exit::Ok })
                }
                Err(failure) => {
                    emit_failure(settings, printer, &failure);
                    // A transport failure the connection survived (an HTTP session the server
                    // forgot, which the client re-initializes) does not end the script.
                    let gone = failure.kind != Kind::Transport || session.client.is_closed();
                    if failure.kind.is_fatal() && gone {
                        Step::Stop(failure.exit())
                    } else {
                        Step::Continue(failure.exit())
                    }
                }
            }
        }
    }
}

/// Says what was connected to (with `-v`).
pub(crate) fn announce(printer: &Printer, session: &Session) {
    let client = &session.client;
    let info = client.server_info();
    printer.verbose(
        1,
        &printer.style.dim(&format!(
            "connected to {} {} over {} (protocol {}) in {} ms",
            info.name,
            info.version,
            session.transport,
            client.protocol_version().as_str(),
            session.connect_time.as_millis()
        )),
    );
}

/// Prints a result: JSON on one line, or rendered for a person; latency with `-v`.
pub(crate) fn emit_outcome(settings: &Settings, printer: &Printer, outcome: &Outcome) {
    if settings.json {
        println!("{}", outcome.value);
    } else {
        println!("{}", render(outcome, settings.out, settings.save.as_deref()));
    }
    printer.verbose(1, &printer.style.dim(&format!("({} ms)", outcome.elapsed.as_millis())));
}

/// Prints a confirmation.
fn emit_done(settings: &Settings, printer: &Printer, message: &str) {
    if settings.json {
        println!("{}", serde_json::json!({"ok": true, "message": message}));
    } else {
        printer.line(message);
    }
}

/// Prints a failure: the JSON error object on stdout (hint on stderr), or a message for a
/// person on stderr.
pub(crate) fn emit_failure(settings: &Settings, printer: &Printer, failure: &Failure) {
    if settings.json {
        println!("{}", failure.to_json());
        if let Some(hint) = &failure.hint {
            printer.line(hint);
        }
    } else {
        printer.error(&failure.to_string(), failure.hint.as_deref());
    }
    if failure.exit() == Exit::Interrupted {
        interrupt::take();
    }
}
