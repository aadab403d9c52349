//! The `talaria` command-line tool: explore and test any MCP server from a terminal, script
//! it from CI, and tour the SDK with `talaria demo`. A crate of its own, on the public API of
//! the `talaria` SDK; [`demo_tools`] are the demo server's tools that show off the SDK's
//! long-running and server-to-client parts (the `everything-server` example serves them too).
//!
//! The binary is a thin `main` around [`run`]. Modes:
//!
//! - **Scripted**: `talaria [--json] stdio -- CMD ARGS... ::: call-tool echo text=hi ::: ping`
//!   (or `stdio --cmd 'CMD ARGS' call-tool ...`, `ws URL call-tool ...`, `--config FILE NAME
//!   call-tool ...`); without one-shot commands and with stdin not a terminal, one command per
//!   line of stdin. Never prompts: server requests (sampling, elicitation) are declined, or
//!   answered as `--sampling-reply TEXT` and `--elicitation accept-defaults|cancel` say.
//!   `--json` prints one JSON value per command on stdout; failures as
//!   `{"kind", "code", "message"}`. Exit codes: see [`Exit`].
//! - **Interactive** (stdin is a terminal): a REPL with history, completion of commands, names
//!   and arguments, typed arguments, prompts for missing ones, progress bars, Ctrl-C cancelling
//!   the running call, and the server's sampling and elicitation requests answered at the prompt.
//! - `talaria demo [--no-interactive]`, `talaria serve-demo --transport stdio|ws`: the bundled
//!   [`demo_server`].
//!
//! `--trace` prints what the client's trace hook reports (frames, HTTP heads, SSE fields) for
//! network transports; a stdio server is started through a tracing proxy process instead, so
//! that its frames are seen exactly as the pipe carries them (see `trace`).
//!
//! A seam this module would use if the client had it: handlers that may answer later
//! (sampling and elicitation block the connection's reader while the user types).
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod args;
mod auth;
mod catalog;
mod coerce;
mod commands;
mod config;
mod connect;
mod demo;
mod demo_server;
pub mod demo_tools;
mod doctor;
mod doctor_net;
mod exec;
mod exit;
mod interrupt;
mod mock;
mod neutral;
mod oauth;
mod printer;
mod progress;
mod recording;
mod render;
mod repl;
mod replay;
mod scripted;
mod serve;
mod server_requests;
mod split;
mod stderr;
mod style;
mod suggest;
mod surface;
mod tasks;
mod trace;
mod wait;

use std::ffi::OsString;
use std::io::IsTerminal as _;
use std::path::PathBuf;
use std::sync::Arc;

use clap::{CommandFactory as _, Parser as _};

pub use demo_server::{server as demo_server, DemoState};
pub use exit::Exit;

use args::{Cli, Mode};
use connect::{Connector, Target};
use exit::Failure;
use printer::Printer;
use style::{color_wanted, Style};

/// How results are shown, for every mode.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    /// `--json`.
    pub(crate) json: bool,
    /// Check tool arguments before sending (not `--no-validate`).
    pub(crate) validate: bool,
    /// `--save DIR`.
    pub(crate) save: Option<PathBuf>,
    /// The style of stdout.
    pub(crate) out: Style,
}

/// Runs the `talaria` command line `args` (program name first) and returns its exit code.
///
/// # Examples
///
/// ```no_run
/// let exit = talaria_cli::run(["talaria", "demo", "--no-interactive"]);
/// std::process::exit(i32::from(exit.code()));
/// ```
pub fn run<I, T>(args: I) -> Exit
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { Exit::Usage } else { Exit::Ok };
        }
    };
    let global = &cli.global;
    let printer = Arc::new(Printer::new(
        Style::new(color_wanted(global.no_color, std::io::stderr().is_terminal())),
        global.verbose,
        global.trace,
    ));
    // Asking for logs at a level means showing them, `-v` or not.
    if global.log_level.is_some() {
        printer.set_logs(true);
    }
    let settings = Settings {
        json: global.json,
        validate: !global.no_validate,
        save: global.save.clone(),
        out: Style::new(color_wanted(global.no_color, std::io::stdout().is_terminal())),
    };
    let tls = match trusted_roots(global.cacert.as_deref()) {
        Ok(roots) => roots,
        Err(failure) => {
            scripted::emit_failure(&settings, &printer, &failure);
            return failure.exit();
        }
    };
    match &cli.mode {
        Some(Mode::TraceProxy(proxy) | Mode::Tap(proxy)) => return trace::proxy(&proxy.command),
        Some(Mode::Completions(shell)) => {
            clap_complete::generate(shell.shell, &mut Cli::command(), "talaria", &mut std::io::stdout());
            return Exit::Ok;
        }
        Some(Mode::Man) => {
            return match clap_mangen::Man::new(Cli::command()).render(&mut std::io::stdout()) {
                Ok(()) => Exit::Ok,
                Err(e) => {
                    printer.error(&format!("cannot write the manual page: {e}"), None);
                    Exit::Transport
                }
            };
        }
        Some(Mode::ServeDemo(serve)) => return serve::run(serve),
        Some(Mode::Mock(mock)) => {
            let served = recording::Recording::read(&mock.file).and_then(|r| mock::server(&r));
            return match served {
                Ok(server) => serve::serve(&server, &mock.serve, &format!("a mock of {}", mock.file.display())),
                Err(e) => {
                    let failure = Failure::usage(e);
                    scripted::emit_failure(&settings, &printer, &failure);
                    failure.exit()
                }
            };
        }
        Some(Mode::Auth(action)) => return auth::run(action, &oauth_args(global, &tls), &settings, &printer),
        Some(Mode::Demo(demo)) => {
            interrupt::install();
            return demo::run(demo, &settings, &printer);
        }
        _ => {}
    }
    let (target, extra_headers, words) = match resolve(&cli) {
        Ok(resolved) => resolved,
        Err(failure) => {
            scripted::emit_failure(&settings, &printer, &failure);
            return failure.exit();
        }
    };
    let groups = split_groups(words);
    let interactive = groups.is_empty() && std::io::stdin().is_terminal();
    interrupt::install();
    // Until the REPL has connected (and its line editor reads Ctrl-C as a key), Ctrl-C ends
    // the process: a connect that hangs can be left.
    interrupt::exit_when_idle(true);
    let is_stdio = matches!(target, Target::Stdio { .. });
    let record = match &global.record {
        Some(path) => match recording::Recorder::create(path, &target.describe(), target.transport()) {
            Ok(recorder) => Some(Arc::new(recorder)),
            Err(e) => {
                let failure = Failure::usage(format!("--record: cannot write {}: {e}", path.display()));
                scripted::emit_failure(&settings, &printer, &failure);
                return failure.exit();
            }
        },
        None => None,
    };
    let oauth = if global.oauth || global.device || global.token_file.is_some() {
        match oauth::client(&oauth_args(global, &tls)) {
            Ok(client) => Some(client),
            Err(failure) => {
                scripted::emit_failure(&settings, &printer, &failure);
                return failure.exit();
            }
        }
    } else {
        None
    };
    let connector = Connector {
        target,
        headers: global.header.iter().cloned().chain(extra_headers).collect(),
        protocol: global.protocol_version,
        timeout: global.timeout,
        log_level: global.log_level,
        proxy: is_stdio && (global.trace || interactive),
        scripted: server_requests::Scripted {
            elicitation: global.elicitation,
            sampling_reply: global.sampling_reply.clone(),
        },
        oauth,
        smol: global.smol || std::env::var("TALARIA_HTTP_CLIENT").is_ok_and(|client| client == "smol"),
        tls,
        record,
    };
    if groups.len() == 1 && groups[0].len() == 1 && groups[0][0] == "doctor" {
        return doctor::run(&connector, &settings, &printer);
    }
    if interactive {
        repl::run(&connector, &settings, &printer, None)
    } else if groups.is_empty() {
        scripted::run(&connector, &settings, &printer, scripted::Source::Stdin)
    } else {
        scripted::run(&connector, &settings, &printer, scripted::Source::Args(groups))
    }
}

/// The OAuth settings from the command line.
fn oauth_args(global: &args::Global, tls: &talaria::tls::TlsRoots) -> oauth::OAuthArgs {
    oauth::OAuthArgs {
        client_id: global.client_id.clone(),
        client_secret: global.client_secret.clone(),
        token_file: global.token_file.clone(),
        no_browser: global.no_browser,
        device: global.device,
        verbose: global.verbose > 0,
        tls: tls.clone(),
    }
}

/// The usual roots, and the certificate authorities in `cacert` (PEM) if given.
fn trusted_roots(cacert: Option<&std::path::Path>) -> Result<talaria::tls::TlsRoots, Failure> {
    let Some(path) = cacert else { return Ok(talaria::tls::TlsRoots::new()) };
    let pem =
        std::fs::read(path).map_err(|e| Failure::usage(format!("--cacert: cannot read {}: {e}", path.display())))?;
    talaria::tls::TlsRoots::new().add_pem(&pem).map_err(|e| Failure::usage(format!("--cacert {}: {e}", path.display())))
}

/// The modes a command line may start with.
const MODES: [&str; 12] =
    ["stdio", "ws", "http", "sse", "demo", "serve-demo", "mock", "tap", "auth", "completions", "man", "doctor"];

/// A command line naming no mode: a URL picks its transport (`talaria URL [COMMAND...]`);
/// anything else is a mistyped mode or option, answered with the closest one.
fn bare_words(words: &[String]) -> Result<Resolved, Failure> {
    // `talaria doctor URL`: the same as `talaria URL doctor`.
    if let [doctor, url] = words {
        if doctor == "doctor" && url.contains("://") {
            return bare_words(&[url.clone(), doctor.clone()]);
        }
    }
    let Some((first, rest)) = words.split_first() else {
        return Err(Failure::usage(
            "say how to connect: stdio, ws, http, sse, a URL, --config FILE NAME or --server NAME",
        )
        .with_hint("talaria --help shows the modes; talaria demo takes a tour"));
    };
    let scheme = first.split_once("://").map(|(scheme, _)| scheme.to_ascii_lowercase());
    match scheme.as_deref() {
        Some("http" | "https") => return Ok((Target::Http(first.clone()), Vec::new(), rest.to_vec())),
        Some("ws" | "wss") => return Ok((Target::WebSocket(first.clone()), Vec::new(), rest.to_vec())),
        _ => {}
    }
    let (what, candidates): (&str, Vec<String>) = if first.starts_with('-') {
        let options = Cli::command();
        ("option", options.get_arguments().filter_map(|a| a.get_long()).map(|long| format!("--{long}")).collect())
    } else {
        ("mode", MODES.iter().map(|m| (*m).to_owned()).collect())
    };
    let failure = Failure::usage(format!("unknown {what} {first}"));
    Err(match suggest::closest(first, candidates.iter().map(String::as_str)) {
        Some(meant) => failure.with_hint(format!("did you mean {meant}? (talaria --help lists them)")),
        None => failure.with_hint("talaria --help shows the modes and options; talaria demo takes a tour"),
    })
}

/// What the command line names: the server, headers from its config entry, the one-shot words.
type Resolved = (Target, Vec<(String, String)>, Vec<String>);

/// The server to connect to, headers from its config entry, and the one-shot words.
fn resolve(cli: &Cli) -> Result<Resolved, Failure> {
    match &cli.mode {
        Some(Mode::Stdio(stdio)) => {
            let (server, words) = match &stdio.cmd {
                Some(line) => {
                    (split::split_words(line).map_err(|e| Failure::usage(format!("--cmd: {e}")))?, stdio.rest.clone())
                }
                None => {
                    let at = stdio.rest.iter().position(|w| w == ":::").unwrap_or(stdio.rest.len());
                    (stdio.rest[..at].to_vec(), stdio.rest[at..].to_vec())
                }
            };
            if let Some(flag) = server.first().filter(|w| w.starts_with('-') && stdio.cmd.is_none()) {
                // An option clap could not place (it went into the server's command line).
                return bare_words(std::slice::from_ref(flag));
            }
            let Some((program, args)) = server.split_first() else {
                return Err(Failure::usage("talaria stdio needs the server's command")
                    .with_hint("talaria stdio -- CMD ARGS...   or   talaria stdio --cmd 'CMD ARGS' [COMMAND...]"));
            };
            let target = Target::Stdio {
                program: program.clone(),
                args: args.to_vec(),
                env: stdio.env.clone(),
                cwd: stdio.cwd.clone(),
            };
            Ok((target, Vec::new(), words))
        }
        Some(Mode::Ws(url)) => Ok((Target::WebSocket(url.url.clone()), Vec::new(), url.commands.clone())),
        Some(Mode::Http(url)) => Ok((Target::Http(url.url.clone()), Vec::new(), url.commands.clone())),
        Some(Mode::Sse(url)) => Ok((Target::Sse(url.url.clone()), Vec::new(), url.commands.clone())),
        _ => {
            let entry = match (&cli.config, &cli.server) {
                (Some(pair), _) => match pair.as_slice() {
                    [file, name] => config::find(&[PathBuf::from(file)], name)?,
                    _ => return Err(Failure::usage("--config takes FILE NAME")),
                },
                (None, Some(name)) => {
                    if config::looks_like_file(name) {
                        return Err(Failure::usage(format!(
                            "--server takes a server name; for a file use --config {name} NAME"
                        )));
                    }
                    config::find(&config::default_files(), name)?
                }
                (None, None) => return bare_words(&cli.commands),
            };
            Ok(match entry {
                config::Entry::Stdio { command, args, env, cwd } => {
                    (Target::Stdio { program: command, args, env, cwd }, Vec::new(), cli.commands.clone())
                }
                config::Entry::Url { kind, url, headers } => {
                    let target = match kind.as_str() {
                        "ws" => Target::WebSocket(url),
                        "sse" => Target::Sse(url),
                        _ => Target::Http(url),
                    };
                    (target, headers, cli.commands.clone())
                }
            })
        }
    }
}

/// One-shot words split into commands at `:::` (empty commands dropped).
fn split_groups(words: Vec<String>) -> Vec<Vec<String>> {
    let mut groups = vec![Vec::new()];
    for word in words {
        if word == ":::" {
            groups.push(Vec::new());
        } else if let Some(last) = groups.last_mut() {
            last.push(word);
        }
    }
    groups.retain(|g| !g.is_empty());
    groups
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]

    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn groups_split_at_triple_colons() {
        assert_eq!(
            split_groups(words("::: ping ::: call-tool echo text=hi :::")),
            [words("ping"), words("call-tool echo text=hi")]
        );
        assert!(split_groups(Vec::new()).is_empty());
    }

    #[test]
    fn stdio_targets_from_either_layout() {
        let cli = Cli::try_parse_from(words("talaria stdio -e A=1 -- srv --x ::: ping")).unwrap();
        let (target, _, rest) = resolve(&cli).unwrap();
        let Target::Stdio { program, args, env, .. } = target else { panic!() };
        assert_eq!((program.as_str(), args, env), ("srv", words("--x"), vec![("A".into(), "1".into())]));
        assert_eq!(rest, words("::: ping"));
        let cli = Cli::try_parse_from(["talaria", "stdio", "--cmd", "srv 'a b'", "ping"]).unwrap();
        let (Target::Stdio { args, .. }, _, rest) = resolve(&cli).unwrap() else { panic!() };
        assert_eq!((args, rest), (vec!["a b".to_owned()], words("ping")));
        let cli = Cli::try_parse_from(words("talaria stdio")).unwrap();
        assert_eq!(resolve(&cli).unwrap_err().exit(), Exit::Usage);
    }
}
