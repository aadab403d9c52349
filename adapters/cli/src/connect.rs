//! Connecting: which server (a child process, a URL, the bundled demo), how (era, version,
//! timeouts, headers), and what the connection reports along the way (logs, notifications,
//! the server's stderr).

use std::path::PathBuf;
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::{Duration, Instant};

use talaria_core::schema::logging::LoggingMessageNotificationParams;
use talaria_core::schema::LoggingLevel;
use talaria_core::session::ClientMode;
use talaria_core::version::{Era, ProtocolVersion};

use super::catalog::Catalog;
use super::demo_server;
use super::exit::{Failure, Kind};
use super::printer::Printer;
use super::server_requests::{self, Question};
use super::stderr::StderrLog;
use super::trace;
use talaria::auth::OAuthClient;
use talaria::client::{Client, ClientError, ClientOptions, TraceEvent};
use talaria::http::HttpTransport;
use talaria::stdio::{StderrMode, StdioCommand};

/// Which server to talk to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    /// A child process speaking over its stdin/stdout.
    Stdio {
        /// The program.
        program: String,
        /// Its arguments.
        args: Vec<String>,
        /// Extra environment variables.
        env: Vec<(String, String)>,
        /// Its working directory.
        cwd: Option<PathBuf>,
    },
    /// A WebSocket URL.
    WebSocket(String),
    /// A Streamable HTTP URL.
    Http(String),
    /// A legacy HTTP+SSE URL (not in this build yet).
    Sse(String),
    /// The bundled demo server, in this process.
    Demo,
}

impl Target {
    /// The transport's name, as asked for (the session's says what was reached).
    pub(crate) const fn transport(&self) -> &'static str {
        match self {
            Self::Stdio { .. } => "stdio",
            Self::WebSocket(_) => "websocket",
            Self::Http(_) => "streamable-http",
            Self::Sse(_) => "sse",
            Self::Demo => "memory",
        }
    }

    /// What was connected to: the command line or the URL.
    pub(crate) fn describe(&self) -> String {
        match self {
            Self::Stdio { program, args, .. } => {
                std::iter::once(program).chain(args).cloned().collect::<Vec<_>>().join(" ")
            }
            Self::WebSocket(url) | Self::Http(url) | Self::Sse(url) => url.clone(),
            Self::Demo => "the bundled demo server (in-process)".into(),
        }
    }
}

/// How to connect.
#[derive(Debug, Clone)]
pub(crate) struct Connector {
    /// The server.
    pub(crate) target: Target,
    /// Headers for network transports (`Name: value`).
    pub(crate) headers: Vec<(String, String)>,
    /// The one protocol revision to speak, if pinned.
    pub(crate) protocol: Option<ProtocolVersion>,
    /// The handshake and request timeout.
    pub(crate) timeout: Option<Duration>,
    /// The log level to ask for (stateless era: on every request; legacy: once connected).
    pub(crate) log_level: Option<LoggingLevel>,
    /// Start stdio servers through the trace proxy (frames can then be printed).
    pub(crate) proxy: bool,
    /// What scripted mode answers to the server's requests.
    pub(crate) scripted: server_requests::Scripted,
    /// Signs in to HTTP servers that ask (`--oauth`).
    pub(crate) oauth: Option<Arc<OAuthClient>>,
    /// Connects to HTTP and SSE servers with the smol client (`--smol`).
    pub(crate) smol: bool,
    /// The certificate authorities trusted for `https://` and `wss://` (`--cacert`).
    pub(crate) tls: talaria::tls::TlsRoots,
    /// Where the frames are recorded (`--record`).
    pub(crate) record: Option<Arc<super::recording::Recorder>>,
}

/// Connects to an HTTP server (Streamable HTTP with the spec's fallback probe, or legacy SSE
/// with `sse`), with the smol client if `smol` (waited on here), else the blocking one; says
/// which transport it reached the server over.
fn connect_http(
    url: &str,
    headers: &[(&str, &str)],
    options: ClientOptions,
    sse: bool,
    smol: bool,
) -> Result<(Client, HttpTransport), ClientError> {
    #[cfg(unix)]
    if smol {
        let connecting = async {
            if sse {
                talaria::smol::sse(url, headers, options).await.map(|client| (client, HttpTransport::LegacySse))
            } else {
                talaria::smol::probe_http(url, headers, options).await
            }
        };
        return smol::block_on(connecting).map(|(client, transport)| (client.to_blocking(), transport));
    }
    let _ = smol;
    if sse {
        Client::sse(url, headers, options).map(|client| (client, HttpTransport::LegacySse))
    } else {
        Client::probe_http(url, headers, options)
    }
}

/// What a connection reports to, and who answers the server's questions.
pub(crate) struct Hooks {
    /// Where lines for a person go.
    pub(crate) printer: Arc<Printer>,
    /// The lists, forgotten on `list_changed`.
    pub(crate) catalog: Arc<Catalog>,
    /// Where the server's questions go (interactive mode); declined when `None`.
    pub(crate) questions: Option<Sender<Question>>,
    /// Whether someone waits for questions right now.
    pub(crate) waiting: fn() -> bool,
}

/// A live connection and what the CLI keeps about it.
pub(crate) struct Session {
    /// The client.
    pub(crate) client: Client,
    /// How it was made.
    pub(crate) target: Target,
    /// The transport it reached the server over (`sse` when an `http` URL fell back).
    pub(crate) transport: &'static str,
    /// The server's stderr (stdio).
    pub(crate) stderr: Option<Arc<StderrLog>>,
    /// What the server offers.
    pub(crate) catalog: Arc<Catalog>,
    /// How long the connection and handshake took.
    pub(crate) connect_time: Duration,
    /// The task this session started last (what `task-status` and friends mean without an id).
    pub(crate) last_task: std::sync::Mutex<Option<String>>,
    /// 2026-07-28 subscriptions: a `subscriptions/listen` stream per resource URI, open while
    /// its call is kept (dropping it cancels the stream).
    pub(crate) listens: std::sync::Mutex<std::collections::BTreeMap<String, Listen>>,
}

/// An open `subscriptions/listen` call.
pub(crate) type Listen = talaria::client::CallFuture<talaria_core::schema::subscriptions::SubscriptionsListenResult>;

impl Session {
    /// A failure enriched with the server's stderr tail when the connection is gone.
    pub(crate) fn explain(&self, failure: Failure) -> Failure {
        if failure.kind != Kind::Transport {
            return failure;
        }
        let mut failure = failure;
        if let Some(status) = self.client.exit_status() {
            failure.message.push_str(&format!(" (server {status})"));
        }
        if failure.hint.is_some() {
            return failure;
        }
        match self.stderr.as_ref().and_then(|log| log.hint()) {
            Some(hint) => failure.with_hint(hint),
            None => failure,
        }
    }
}

impl Connector {
    /// Connects and waits for the handshake.
    ///
    /// # Errors
    ///
    /// A failure (kind transport, timeout or authorization) carrying the tail of
    /// the server's stderr when there is one.
    pub(crate) fn connect(&self, hooks: &Hooks) -> Result<Session, Failure> {
        let started = Instant::now();
        let options = self.options(hooks);
        hooks.catalog.clear();
        let mut reached = self.target.transport();
        let (client, stderr) = match &self.target {
            Target::Stdio { program, args, env, cwd } => {
                let log = StderrLog::new(&hooks.printer, hooks.printer.verbosity > 0);
                let command = self.stdio_command(program, args, env, cwd.as_ref(), &log);
                match Client::stdio(command, options) {
                    Ok(client) => (client, Some(log)),
                    Err(e) => return Err(self.connect_failure(e, Some(&log))),
                }
            }
            Target::WebSocket(url) => {
                let headers: Vec<(&str, &str)> = self.headers.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
                match Client::websocket(url, &headers, options) {
                    Ok(client) => (client, None),
                    Err(e) => return Err(self.connect_failure(e, None)),
                }
            }
            Target::Http(url) => {
                let headers: Vec<(&str, &str)> = self.headers.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
                // The spec's backwards-compatibility probe: legacy HTTP+SSE when the URL refuses
                // Streamable HTTP.
                match connect_http(url, &headers, options, false, self.smol) {
                    Ok((client, transport)) => {
                        reached = transport.name();
                        (client, None)
                    }
                    Err(e) => return Err(self.connect_failure(e, None)),
                }
            }
            Target::Sse(url) => {
                let headers: Vec<(&str, &str)> = self.headers.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
                match connect_http(url, &headers, options, true, self.smol) {
                    Ok((client, _)) => (client, None),
                    Err(e) => return Err(self.connect_failure(e, None)),
                }
            }
            Target::Demo => match talaria::memory::connect(&demo_server::server(), options) {
                Ok(client) => (client, None),
                Err(e) => return Err(self.connect_failure(e, None)),
            },
        };
        let session = Session {
            client,
            target: self.target.clone(),
            transport: reached,
            stderr,
            catalog: Arc::clone(&hooks.catalog),
            connect_time: started.elapsed(),
            last_task: std::sync::Mutex::new(None),
            listens: std::sync::Mutex::new(std::collections::BTreeMap::new()),
        };
        if let Some(level) = self.log_level.filter(|_| session.client.protocol_version().era() == Era::Legacy) {
            if let Err(e) = session.client.set_log_level(level) {
                hooks.printer.verbose(1, &format!("cannot set the log level: {e}"));
            }
        }
        Ok(session)
    }

    fn connect_failure(&self, error: ClientError, log: Option<&Arc<StderrLog>>) -> Failure {
        let mut failure = match (&error, &self.target) {
            (ClientError::Io(e), Target::Stdio { program, .. }) => {
                Failure::transport(format!("cannot start {program}: {e}"))
            }
            (ClientError::Io(e), target) => Failure::transport(format!("cannot connect to {}: {e}", target.describe())),
            _ => Failure::from(error),
        };
        if let Some(hint) = log.and_then(|log| log.hint()) {
            failure = failure.with_hint(hint);
        }
        failure
    }

    fn stdio_command(
        &self,
        program: &str,
        args: &[String],
        env: &[(String, String)],
        cwd: Option<&PathBuf>,
        log: &Arc<StderrLog>,
    ) -> StdioCommand {
        let sink = Arc::clone(log);
        let capture = StderrMode::Capture(Arc::new(move |line: &str| sink.push(line)));
        let exe = std::env::current_exe().ok().filter(|_| self.proxy);
        let mut command = match exe {
            Some(exe) => StdioCommand::new(exe.display().to_string())
                .arg(trace::PROXY_SUBCOMMAND)
                .arg("--")
                .arg(program)
                .args(args.iter().cloned()),
            None => StdioCommand::new(program).args(args.iter().cloned()),
        };
        command = command.stderr(capture).grace_period(Duration::from_millis(500));
        for (key, value) in env {
            command = command.env(key, value);
        }
        if let Some(dir) = cwd {
            command = command.current_dir(dir);
        }
        command
    }

    /// The client options: identity, era, timeouts, handlers and callbacks.
    fn options(&self, hooks: &Hooks) -> ClientOptions {
        let mut options = ClientOptions::new("talaria", env!("CARGO_PKG_VERSION"));
        // The CLI follows calls a server answers with a task (2026-07-28 tasks extension).
        let capabilities = std::mem::take(&mut options.config_mut().capabilities);
        options.config_mut().capabilities = capabilities
            .clone()
            .with_extension(talaria_core::schema::tasks::ext::EXTENSION_ID, talaria_core::schema::JsonObject::new())
            .unwrap_or(capabilities);
        if let Some(version) = self.protocol {
            let mode = if version.era() == Era::Legacy { ClientMode::Legacy } else { ClientMode::Stateless };
            options = options.mode(mode).versions(vec![version]);
        }
        if let Some(timeout) = self.timeout {
            options = options.request_timeout(timeout).connect_timeout(timeout);
        }
        options.config_mut().log_level = self.log_level;
        if let Some(oauth) = &self.oauth {
            options = options.authenticator(oauth.clone());
        }
        options = options.tls_roots(self.tls.clone());
        let handlers = match &hooks.questions {
            Some(questions) => server_requests::asking(questions.clone(), hooks.waiting),
            None => server_requests::scripted(&hooks.printer, &self.scripted),
        };
        // Stdio frames are printed by the trace proxy; everything else by the client.
        let print = !matches!(self.target, Target::Stdio { .. });
        if print || self.record.is_some() {
            let (printer, record) = (Arc::clone(&hooks.printer), self.record.clone());
            options = options.trace(move |event| {
                if let Some(record) = &record {
                    match event {
                        TraceEvent::Sent(frame) => record.frame(true, frame),
                        TraceEvent::Received(frame) => record.frame(false, frame),
                        _ => {}
                    }
                }
                if print {
                    trace::print_event(&printer, event);
                }
            });
        }
        let (log_printer, note_printer) = (Arc::clone(&hooks.printer), Arc::clone(&hooks.printer));
        let catalog = Arc::clone(&hooks.catalog);
        options
            .handlers(handlers)
            .on_log(move |log| {
                if log_printer.shows_logs() {
                    log_printer.line(&describe_log(&log_printer, log));
                }
            })
            .on_notification(move |method, params| {
                let forgot = catalog.forget(method);
                let params = params.map(|p| p.get().to_owned()).unwrap_or_default();
                let text = match method {
                    "notifications/resources/updated" => format!("resource updated {params}"),
                    _ if forgot => format!("{method} (the list will be fetched again)"),
                    _ => format!("{method} {params}"),
                };
                let shown = note_printer.shows_logs() || note_printer.verbosity > 0;
                if shown {
                    note_printer.line(&note_printer.style.yellow(&format!("notification: {text}")));
                }
            })
    }
}

/// A log message as printed: `[level] logger: data`.
pub(crate) fn describe_log(printer: &Printer, log: &LoggingMessageNotificationParams) -> String {
    let level = serde_json::to_value(log.level).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default();
    let tag = format!("[{level}]");
    let tag = match log.level {
        LoggingLevel::Debug | LoggingLevel::Info | LoggingLevel::Notice => printer.style.dim(&tag),
        LoggingLevel::Warning => printer.style.yellow(&tag),
        _ => printer.style.red(&tag),
    };
    let data = log.data.as_str().map_or_else(|| log.data.to_string(), str::to_owned);
    match &log.logger {
        Some(logger) => format!("{tag} {logger}: {data}"),
        None => format!("{tag} {data}"),
    }
}
