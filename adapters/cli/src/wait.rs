//! Waiting for a call while staying responsive: Ctrl-C cancels it (the cancellation goes to
//! the server), and the server's questions are answered meanwhile.

use std::sync::mpsc::{channel, RecvTimeoutError};
use std::time::Duration;

use talaria_core::jsonrpc::RequestId;
use talaria_core::session::{CallError, LocalError};

use super::exit::{Failure, Kind};
use super::interrupt::{self, Busy};
use super::printer::Printer;
use super::server_requests::{self, Question};
use talaria::client::{CallFuture, Client, ClientError};

/// How often the waiter looks at Ctrl-C and questions.
const TICK: Duration = Duration::from_millis(20);

/// The person at the terminal, if any.
pub(crate) trait Ui {
    /// Whether there is someone to ask (interactive mode).
    fn interactive(&self) -> bool;
    /// Asks one line; `None` on Ctrl-C, Ctrl-D or when nobody can be asked.
    fn ask(&mut self, prompt: &str) -> Option<String>;
    /// The next question from the server, if one waits.
    fn next_question(&mut self) -> Option<Question>;
}

/// Nobody: scripted mode.
pub(crate) struct Nobody;

impl Ui for Nobody {
    fn interactive(&self) -> bool {
        false
    }

    fn ask(&mut self, _prompt: &str) -> Option<String> {
        None
    }

    fn next_question(&mut self) -> Option<Question> {
        None
    }
}

/// Sends the call `send` makes and waits for it, cancelling it on Ctrl-C.
///
/// The call counts as running from before it is sent: the server may ask its questions
/// (sampling, elicitation) before the future is even returned, and they are only put to the
/// user while a call runs.
///
/// # Errors
///
/// The call's failure; [`Kind::Interrupted`] when Ctrl-C cancelled it.
pub(crate) fn call<T: Send + 'static>(
    client: &Client,
    send: impl FnOnce() -> CallFuture<T>,
    ui: &mut dyn Ui,
    printer: &Printer,
) -> Result<T, Failure> {
    let _busy = Busy::start();
    let future = send();
    let id = future.id().cloned();
    run(client, id.as_ref(), move || smol::block_on(future), ui, printer)
}

/// Runs `job` (a blocking call) on its own thread and waits for it; on Ctrl-C, cancels the
/// request `id` if known, else stops waiting.
///
/// # Errors
///
/// As [`call`].
pub(crate) fn run<T: Send + 'static>(
    client: &Client,
    id: Option<&RequestId>,
    job: impl FnOnce() -> Result<T, ClientError> + Send + 'static,
    ui: &mut dyn Ui,
    printer: &Printer,
) -> Result<T, Failure> {
    let _busy = Busy::start();
    let (tx, rx) = channel();
    std::thread::Builder::new()
        .name("talaria-call".into())
        .spawn(move || {
            let _ = tx.send(job());
        })
        .map_err(|e| Failure::transport(format!("cannot start the call: {e}")))?;
    let mut cancelled = false;
    loop {
        match rx.recv_timeout(TICK) {
            Ok(Ok(value)) => return Ok(value),
            Ok(Err(e)) if cancelled => {
                let failure = Failure::from(e);
                let message = format!("interrupted: the call was cancelled ({})", failure.message);
                return Err(Failure::new(Kind::Interrupted, message));
            }
            // Cancelled, but not from here: a task someone cancelled, say. The server's doing.
            Ok(Err(ClientError::Call(CallError::Local(LocalError::Cancelled { reason })))) => {
                let why = reason.unwrap_or_else(|| "no reason given".into());
                return Err(Failure::new(Kind::Protocol, format!("the call ended cancelled ({why})")));
            }
            Ok(Err(e)) => return Err(Failure::from(e)),
            Err(RecvTimeoutError::Disconnected) => return Err(Failure::transport("the call ended without an outcome")),
            Err(RecvTimeoutError::Timeout) => {}
        }
        if interrupt::take() && !cancelled {
            cancelled = true;
            match id {
                Some(id) => {
                    printer.verbose(1, &format!("cancelling request {id}"));
                    if client.cancel(id, Some("interrupted by the user")).is_err() {
                        return Err(Failure::new(Kind::Interrupted, "interrupted"));
                    }
                }
                None => return Err(Failure::new(Kind::Interrupted, "interrupted (the request was left running)")),
            }
        }
        while let Some(question) = ui.next_question() {
            printer.suspend_bar(|| server_requests::answer(question, printer, &mut |prompt| ui.ask(prompt)));
        }
    }
}
