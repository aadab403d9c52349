//! Interactive mode: a line editor (rustyline) with history per user and tab completion;
//! results rendered and coloured; logs and notifications printed above the prompt; progress
//! bars; Ctrl-C cancelling the running call; missing required arguments prompted for; the
//! server's sampling and elicitation requests answered at the prompt.

mod helper;
mod history;

use std::sync::mpsc::{channel, Receiver};
use std::sync::{Arc, Mutex, PoisonError};

use rustyline::config::{CompletionType, Config};
use rustyline::error::ReadlineError;
use rustyline::{DefaultEditor, Editor, ExternalPrinter as _};

use super::catalog::Catalog;
use super::commands::{self, Command};
use super::connect::{Connector, Hooks, Session};
use super::exec::Exec;
use super::exit::{Exit, Failure, Kind};
use super::interrupt;
use super::printer::Printer;
use super::scripted::{emit_failure, emit_outcome, step, Step};
use super::server_requests::Question;
use super::split::split_words;
use super::wait::Ui;
use super::Settings;
use helper::ReplHelper;
use talaria::client::Client;

/// The prompt.
const PROMPT: &str = "talaria> ";

/// A connection ready for the REPL: its session, the hooks it was made with, and where the
/// server's questions arrive.
pub(crate) struct Live {
    /// The session.
    pub(crate) session: Session,
    /// The hooks (kept to reconnect).
    pub(crate) hooks: Hooks,
    /// The server's questions.
    pub(crate) questions: Receiver<Question>,
}

/// Connects for interactive use: logs shown, questions routed to the prompt.
///
/// # Errors
///
/// As [`Connector::connect`].
pub(crate) fn connect(connector: &Connector, printer: &Arc<Printer>) -> Result<Live, Failure> {
    printer.set_logs(true);
    let (tx, questions) = channel();
    let hooks = Hooks {
        printer: Arc::clone(printer),
        catalog: Arc::new(Catalog::default()),
        questions: Some(tx),
        waiting: interrupt::busy,
    };
    let session = connector.connect(&hooks)?;
    Ok(Live { session, hooks, questions })
}

/// The user, asked through a plain line editor (no completion, no history).
struct ReplUi<'a> {
    asker: &'a mut DefaultEditor,
    questions: &'a Receiver<Question>,
}

impl Ui for ReplUi<'_> {
    fn interactive(&self) -> bool {
        true
    }

    fn ask(&mut self, prompt: &str) -> Option<String> {
        self.asker.readline(prompt).ok()
    }

    fn next_question(&mut self) -> Option<Question> {
        self.questions.try_recv().ok()
    }
}

/// Runs the REPL (connecting first unless `live` is given) until `exit` or Ctrl-D.
pub(crate) fn run(connector: &Connector, settings: &Settings, printer: &Arc<Printer>, live: Option<Live>) -> Exit {
    // Ctrl-C while connecting ends the process (see `cli::run`); once connected, the line
    // editor reads it as a key and a running call is cancelled by it.
    let live = match live.map_or_else(|| connect(connector, printer), Ok) {
        Ok(live) => live,
        Err(failure) => {
            emit_failure(settings, printer, &failure);
            return failure.exit();
        }
    };
    interrupt::exit_when_idle(false);
    let Live { mut session, hooks, questions } = live;
    let shared = Arc::new(Mutex::new(Some(session.client.clone())));
    let (mut editor, mut asker) = match editors(&session.catalog, &shared) {
        Ok(editors) => editors,
        Err(e) => {
            printer.error(&format!("cannot start the line editor: {e}"), None);
            return Exit::Transport;
        }
    };
    let history = history::path();
    if let Some(path) = &history {
        let _ = editor.load_history(path);
    }
    if let Ok(mut external) = editor.create_external_printer() {
        printer.set_external(Some(Box::new(move |text| {
            let _ = external.print(text);
        })));
    }
    banner(printer, &session);
    prefetch(&session, printer, settings, &mut asker, &questions);
    loop {
        let line = match editor.readline(PROMPT) {
            Ok(line) => line,
            Err(ReadlineError::Interrupted) => continue,
            Err(ReadlineError::Eof) => break,
            Err(e) => {
                printer.error(&format!("cannot read a line: {e}"), None);
                break;
            }
        };
        let words = match split_words(&line) {
            Ok(words) if words.is_empty() => continue,
            Ok(words) => words,
            Err(e) => {
                printer.error(&e, None);
                continue;
            }
        };
        let command = match commands::parse(&words) {
            Ok(command) => command,
            Err(failure) => {
                emit_failure(settings, printer, &failure);
                continue;
            }
        };
        match command {
            Command::Exit => break,
            Command::Clear => {
                let _ = editor.clear_screen();
            }
            Command::Initialize | Command::Help(_) | Command::Wire(_) => {
                if let Step::Stop(_) = step(connector, &hooks, &mut session, settings, printer, &command) {
                    printer.line("not connected: `initialize` tries again, `exit` leaves");
                }
                *shared.lock().unwrap_or_else(PoisonError::into_inner) = Some(session.client.clone());
                if matches!(command, Command::Initialize) {
                    banner(printer, &session);
                }
            }
            other => run_one(&session, settings, printer, &mut asker, &questions, &other),
        }
    }
    if let Some(path) = &history {
        let _ = editor.save_history(path);
    }
    printer.set_external(None);
    session.client.close();
    Exit::Ok
}

/// Runs one command with the user at hand and shows its outcome and latency.
fn run_one(
    session: &Session,
    settings: &Settings,
    printer: &Arc<Printer>,
    asker: &mut DefaultEditor,
    questions: &Receiver<Question>,
    command: &Command,
) {
    let mut ui = ReplUi { asker, questions };
    let mut exec = Exec { session, printer, ui: &mut ui, validate: settings.validate };
    match exec.run(command) {
        Ok(outcome) => {
            emit_outcome(settings, printer, &outcome);
            let mark = if outcome.tool_error { printer.style.red("✗") } else { printer.style.green("✓") };
            printer.line(&format!("{mark} {}", printer.style.dim(&format!("{} ms", outcome.elapsed.as_millis()))));
        }
        Err(failure) => {
            emit_failure(settings, printer, &failure);
            if failure.kind == Kind::Transport && session.client.is_closed() {
                printer.line("the connection is gone: `initialize` reconnects, `exit` leaves");
            }
        }
    }
}

/// The main editor (history, completion) and a plain one for questions.
fn editors(
    catalog: &Arc<Catalog>,
    client: &Arc<Mutex<Option<Client>>>,
) -> rustyline::Result<(Editor<ReplHelper, rustyline::history::DefaultHistory>, DefaultEditor)> {
    let config = Config::builder()
        .auto_add_history(true)
        .history_ignore_dups(true)?
        .history_ignore_space(true)
        .completion_type(CompletionType::List)
        .max_history_size(5000)?
        .build();
    let mut editor = Editor::with_config(config)?;
    editor.set_helper(Some(ReplHelper { catalog: Arc::clone(catalog), client: Arc::clone(client) }));
    let asker = DefaultEditor::with_config(Config::builder().auto_add_history(false).build())?;
    Ok((editor, asker))
}

/// Says where we are and how to get around.
fn banner(printer: &Printer, session: &Session) {
    let client = &session.client;
    let info = client.server_info();
    let style = printer.style;
    printer.line(&format!(
        "{} {} {} over {} (protocol {}, {} ms)",
        style.bold("connected to"),
        style.cyan(&info.name),
        info.version,
        session.transport,
        client.protocol_version().as_str(),
        session.connect_time.as_millis()
    ));
    if let Some(instructions) = client.instructions() {
        printer.line(&style.dim(instructions));
    }
    printer.line(&style.dim("`help` lists the commands; Tab completes; Ctrl-C cancels a call; Ctrl-D leaves"));
}

/// Lists what the server offers (quietly) so the first Tab has something to complete.
fn prefetch(
    session: &Session,
    printer: &Arc<Printer>,
    settings: &Settings,
    asker: &mut DefaultEditor,
    questions: &Receiver<Question>,
) {
    let capabilities = session.client.server_capabilities().cloned().unwrap_or_default();
    let mut wanted = Vec::new();
    if capabilities.tools.is_some() {
        wanted.push(Command::ListTools);
    }
    if capabilities.prompts.is_some() {
        wanted.push(Command::ListPrompts);
    }
    if capabilities.resources.is_some() {
        wanted.push(Command::ListResources);
        wanted.push(Command::ListTemplates);
    }
    for command in wanted {
        let mut ui = ReplUi { asker, questions };
        let mut exec = Exec { session, printer, ui: &mut ui, validate: settings.validate };
        if let Err(failure) = exec.run(&command) {
            printer.verbose(1, &format!("could not list ({failure})"));
        }
    }
}
