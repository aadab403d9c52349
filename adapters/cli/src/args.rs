//! The command line (clap).

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};
use talaria_core::schema::LoggingLevel;
use talaria_core::version::ProtocolVersion;

/// What `--help` ends with: the layout, the JSON error shape and the exit codes.
const AFTER_HELP: &str = "\
One-shot commands follow the connection; `:::` separates several:
  talaria stdio -- npx -y @modelcontextprotocol/server-everything ::: list-tools
  talaria --json stdio --cmd 'my-server --flag' call-tool echo text=hi ::: ping
  talaria ws ws://127.0.0.1:8080/ws call-tool add a=1 b=2
  talaria --config .mcp.json files list-resources
Without one, commands are read from stdin (one per line) when it is not a terminal, and an
interactive session starts when it is. Commands: ping, list-tools, call-tool NAME [key=value |
key:=json | @file.json | {json}]..., list-prompts, get-prompt NAME [k=v]..., list-resources,
list-templates, read-resource URI, subscribe URI, complete REF ARG[=PARTIAL], set-log-level
LEVEL, roots list|add|remove, show-state, describe TOOL, snapshot, diff SNAPSHOT-FILE, task TOOL
[ARGS], watch [TASK-ID], task-status, cancel-task, replay RECORDING, rpc METHOD [JSON], notify
METHOD [JSON], batch JSON-ARRAY (`help` in the interactive session explains each). For CI:
`talaria --json URL snapshot > surface.json` once, then `talaria --json URL diff surface.json`
exits 3 when the server's surface changed; `--record session.jsonl` then `replay session.jsonl`
exits 3 when an answer changed, and `talaria mock session.jsonl` serves the recording.

--json prints one JSON value per command on stdout: the result, or for a failure
{\"kind\": \"usage|protocol|transport|timeout|authorization|interrupted\",
\"code\": <JSON-RPC code or null>, \"message\": \"...\"}. Diagnostics go to stderr.

Exit codes (the first failing command's): 0 ok, 2 usage, 3 protocol error, tool isError or
a changed surface (diff), 4 transport failure or timeout, 5 authorization, 6 interrupted (Ctrl-C).";

/// `talaria`: explore and test any MCP server from a terminal.
#[derive(Debug, Parser)]
#[command(
    name = "talaria",
    version,
    about = "Explore and test any MCP server from a terminal, script it from CI, or take the tour (talaria demo).",
    override_usage = "talaria [OPTIONS] stdio [--env K=V] [--cwd DIR] -- CMD [ARGS...] [::: COMMAND [ARGS...]]...\n       \
                      talaria [OPTIONS] stdio --cmd 'CMD ARGS' [COMMAND [ARGS...]] [::: COMMAND [ARGS...]]...\n       \
                      talaria [OPTIONS] ws|http|sse URL [COMMAND [ARGS...]] [::: COMMAND [ARGS...]]...\n       \
                      talaria [OPTIONS] URL [COMMAND [ARGS...]] [::: ...]   (http(s):// or ws(s)://)\n       \
                      talaria [OPTIONS] doctor URL   or   talaria [OPTIONS] <connection> doctor\n       \
                      talaria [OPTIONS] --config FILE NAME [COMMAND [ARGS...]] [::: ...]\n       \
                      talaria [OPTIONS] --server NAME [COMMAND [ARGS...]] [::: ...]\n       \
                      talaria demo [--no-interactive]\n       \
                      talaria serve-demo [--transport stdio|ws|http] [--port N]",
    after_help = AFTER_HELP
)]
pub(crate) struct Cli {
    /// Options for every mode.
    #[command(flatten)]
    pub(crate) global: Global,
    /// Connect to server NAME of config FILE (Claude Desktop's, .mcp.json, VS Code's mcp.json).
    #[arg(long, num_args = 2, value_names = ["FILE", "NAME"], conflicts_with = "server")]
    pub(crate) config: Option<Vec<String>>,
    /// Connect to server NAME found in the usual config files (./.mcp.json, ./.vscode/mcp.json,
    /// Claude Desktop's, Cursor's, VS Code's user mcp.json).
    #[arg(long, value_name = "NAME")]
    pub(crate) server: Option<String>,
    /// How to connect (or what else to do).
    #[command(subcommand)]
    pub(crate) mode: Option<Mode>,
    /// With --config or --server: one-shot commands (separated by `:::`).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "COMMAND")]
    pub(crate) commands: Vec<String>,
}

/// Options for every mode.
#[derive(Debug, Args)]
pub(crate) struct Global {
    /// Machine output: one JSON value per command on stdout.
    #[arg(long, global = true)]
    pub(crate) json: bool,
    /// Speak only this protocol revision (e.g. 2025-06-18, or 2026-07-28 for the stateless era).
    #[arg(long, global = true, value_name = "VERSION", value_parser = parse_version)]
    pub(crate) protocol_version: Option<ProtocolVersion>,
    /// A header for network transports, e.g. 'Authorization: Bearer ...' (repeatable).
    #[arg(long, short = 'H', global = true, value_name = "NAME: VALUE", value_parser = parse_header)]
    pub(crate) header: Vec<(String, String)>,
    /// Timeout of the handshake and of each request: 30s, 500ms, 2m (default 30s).
    #[arg(long, global = true, value_name = "DURATION", value_parser = parse_duration)]
    pub(crate) timeout: Option<Duration>,
    /// More output on stderr: -v server stderr live, logs and latency; -vv progress lines.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub(crate) verbose: u8,
    /// Sign in with OAuth when an HTTP server asks: the browser opens on the sign-in page
    /// (the URL is printed too), and tokens are kept for the next run (see --token-file).
    #[arg(long, global = true)]
    pub(crate) oauth: bool,
    /// Sign in on another device (OAuth device grant, RFC 8628), for machines without a
    /// browser: the CLI prints a URL and a code to enter there, and waits. Implies --oauth.
    #[arg(long, global = true)]
    pub(crate) device: bool,
    /// OAuth: a pre-registered client id (otherwise the CLI registers itself).
    #[arg(long, global = true, value_name = "ID")]
    pub(crate) client_id: Option<String>,
    /// With --client-id: its secret.
    #[arg(long, global = true, value_name = "SECRET", requires = "client_id")]
    pub(crate) client_secret: Option<String>,
    /// OAuth: keep tokens in FILE (default: the system keyring where there is one, else
    /// ~/.config/talaria/tokens.json); implies --oauth.
    #[arg(long, global = true, value_name = "FILE")]
    pub(crate) token_file: Option<PathBuf>,
    /// OAuth: print the sign-in URL without starting a browser.
    #[arg(long, global = true)]
    pub(crate) no_browser: bool,
    /// For https:// and wss://: also trust the certificate authorities in FILE (PEM), besides
    /// Mozilla's roots and the system's (a private CA, a test server's self-signed
    /// certificate). `SSL_CERT_FILE` works too.
    #[arg(long, global = true, value_name = "FILE")]
    pub(crate) cacert: Option<PathBuf>,
    /// Record every frame of the session, both ways, into FILE (JSON lines), for `replay`
    /// and `talaria mock`.
    #[arg(long, global = true, value_name = "FILE")]
    pub(crate) record: Option<PathBuf>,
    /// Print the frames both ways on stderr (secrets redacted).
    #[arg(long, global = true)]
    pub(crate) trace: bool,
    /// HTTP and SSE servers: connect with the async smol client instead of the blocking one
    /// (also: `TALARIA_HTTP_CLIENT=smol`).
    #[arg(long, global = true)]
    pub(crate) smol: bool,
    /// No colour (also: `NO_COLOR`, or when the output is not a terminal).
    #[arg(long, global = true)]
    pub(crate) no_color: bool,
    /// Send tool arguments as given, without checking them against the input schema.
    #[arg(long, global = true)]
    pub(crate) no_validate: bool,
    /// Save images, audio and blobs from results into DIR.
    #[arg(long, global = true, value_name = "DIR")]
    pub(crate) save: Option<PathBuf>,
    /// Ask the server for log messages at LEVEL and above (debug, info, warning, ...).
    #[arg(long, global = true, value_name = "LEVEL", value_parser = parse_level)]
    pub(crate) log_level: Option<LoggingLevel>,
    /// Non-interactive answer to the server's elicitation requests: decline (the default),
    /// cancel, or accept-defaults (accept forms filled with their fields' defaults).
    #[arg(long, global = true, value_name = "ANSWER", value_enum, default_value_t = ElicitAnswer::Decline)]
    pub(crate) elicitation: ElicitAnswer,
    /// Non-interactive answer to the server's sampling requests: reply with TEXT (model
    /// `talaria-cli`) instead of declining.
    #[arg(long, global = true, value_name = "TEXT")]
    pub(crate) sampling_reply: Option<String>,
}

/// What scripted mode answers to elicitation requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ElicitAnswer {
    /// Refuse explicitly.
    Decline,
    /// Dismiss without choosing.
    Cancel,
    /// Accept forms filled with their fields' defaults (declined when a required field has
    /// none, and for URL elicitations).
    AcceptDefaults,
}

/// The modes.
#[derive(Debug, Subcommand)]
pub(crate) enum Mode {
    /// Start a server as a child process and talk over its stdin/stdout.
    ///
    /// `talaria stdio -- CMD ARGS... [::: COMMAND...]...` or `talaria stdio --cmd 'CMD ARGS'
    /// [COMMAND...] [::: COMMAND...]...`.
    Stdio(StdioArgs),
    /// Connect to a WebSocket server: `talaria ws URL [COMMAND...] [::: COMMAND...]...`.
    Ws(UrlArgs),
    /// Connect to a Streamable HTTP server: `talaria http URL [COMMAND...] [::: COMMAND...]...`.
    Http(UrlArgs),
    /// Connect to a legacy HTTP+SSE server (2024-11-05).
    Sse(UrlArgs),
    /// A guided tour against the bundled demo server, then an interactive session.
    Demo(DemoArgs),
    /// Serve the bundled demo server for other clients (e.g. the MCP Inspector).
    ServeDemo(ServeArgs),
    /// Serve what a recording (--record FILE) shows, for testing a client without the real
    /// server: `talaria mock FILE [--transport stdio|ws|http|sse] [--port N]`.
    Mock(MockArgs),
    /// Sit between any host and a stdio server: `talaria tap -- CMD ARGS...` runs the server,
    /// passes the frames both ways unchanged, and prints each on stderr (secrets redacted).
    /// Put it in a host's server configuration in place of the server's command.
    Tap(ProxyArgs),
    /// Sign in to an OAuth-protected server ahead of time, sign out, or show the tokens kept:
    /// `talaria auth login URL [--device]`, `talaria auth logout URL`, `talaria auth status [URL]`.
    #[command(subcommand)]
    Auth(AuthAction),
    /// Print shell completions: `talaria completions bash|zsh|fish|elvish|powershell`.
    Completions(CompletionsArgs),
    /// Print the manual page (roff): `talaria man | man -l -`.
    Man,
    /// Internal: run a stdio server, copying and reporting its frames (for --trace).
    #[command(name = "__trace-proxy", hide = true)]
    TraceProxy(ProxyArgs),
}

/// `talaria auth ...`.
#[derive(Debug, Subcommand)]
pub(crate) enum AuthAction {
    /// Sign in to the server at URL now (in the browser, or with --device on another device)
    /// and keep the token.
    Login {
        /// The MCP server's URL.
        url: String,
    },
    /// Forget the token kept for the server at URL.
    Logout {
        /// The MCP server's URL.
        url: String,
    },
    /// The tokens kept (all, or the one for URL): scope, expiry, refresh; never the tokens.
    Status {
        /// The MCP server's URL.
        url: Option<String>,
    },
}

/// `talaria completions SHELL`.
#[derive(Debug, Args)]
pub(crate) struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub(crate) shell: clap_complete::Shell,
}

/// `talaria stdio`.
#[derive(Debug, Args)]
pub(crate) struct StdioArgs {
    /// An environment variable for the server (repeatable).
    #[arg(long = "env", short = 'e', value_name = "KEY=VALUE", value_parser = parse_env)]
    pub(crate) env: Vec<(String, String)>,
    /// The server's working directory.
    #[arg(long, value_name = "DIR")]
    pub(crate) cwd: Option<PathBuf>,
    /// The server's command line as one string (split like a shell would); the words after it
    /// are then one-shot commands.
    #[arg(long, value_name = "COMMAND LINE")]
    pub(crate) cmd: Option<String>,
    /// The server command and its arguments (after `--`), then `:::` and one-shot commands.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "ARGS")]
    pub(crate) rest: Vec<String>,
}

/// `talaria ws|http|sse URL`.
#[derive(Debug, Args)]
pub(crate) struct UrlArgs {
    /// The server's URL.
    pub(crate) url: String,
    /// One-shot commands, separated by `:::`.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "COMMAND")]
    pub(crate) commands: Vec<String>,
}

/// `talaria demo`.
#[derive(Debug, Args)]
pub(crate) struct DemoArgs {
    /// Run the tour and exit (no interactive session afterwards, no pauses).
    #[arg(long)]
    pub(crate) no_interactive: bool,
}

/// The transports `serve-demo` offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ServeTransport {
    /// This process's stdin/stdout.
    Stdio,
    /// WebSocket at /ws.
    Ws,
    /// Streamable HTTP at /mcp.
    Http,
    /// Legacy HTTP+SSE (2024-11-05) at /sse.
    Sse,
}

/// `talaria serve-demo`.
#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// How to serve.
    #[arg(long, value_enum, default_value = "stdio")]
    pub(crate) transport: ServeTransport,
    /// The address to listen on (network transports).
    #[arg(long, default_value = "127.0.0.1")]
    pub(crate) host: String,
    /// The port (0: any free port; the URL is printed on stderr).
    #[arg(long, default_value_t = 0)]
    pub(crate) port: u16,
    /// Serve https:// (http and sse transports) with the certificate chain in FILE (PEM, the
    /// server's certificate first).
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub(crate) tls_cert: Option<PathBuf>,
    /// The private key of --tls-cert (PEM).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub(crate) tls_key: Option<PathBuf>,
}

/// `talaria mock FILE`.
#[derive(Debug, Args)]
pub(crate) struct MockArgs {
    /// The recording.
    pub(crate) file: PathBuf,
    /// How to serve it.
    #[command(flatten)]
    pub(crate) serve: ServeArgs,
}

/// `talaria __trace-proxy -- CMD ARGS...`.
#[derive(Debug, Args)]
pub(crate) struct ProxyArgs {
    /// The server command.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true)]
    pub(crate) command: Vec<String>,
}

fn parse_version(text: &str) -> Result<ProtocolVersion, String> {
    ProtocolVersion::parse(text).ok_or_else(|| {
        let known: Vec<&str> = ProtocolVersion::ALL.iter().map(|v| v.as_str()).collect();
        format!("unknown revision (known: {})", known.join(", "))
    })
}

fn parse_header(text: &str) -> Result<(String, String), String> {
    let (name, value) = text.split_once(':').ok_or("expected 'Name: value'")?;
    let name = name.trim();
    if name.is_empty() {
        return Err("the header name is empty".into());
    }
    Ok((name.to_owned(), value.trim().to_owned()))
}

fn parse_env(text: &str) -> Result<(String, String), String> {
    let (key, value) = text.split_once('=').ok_or("expected KEY=VALUE")?;
    Ok((key.to_owned(), value.to_owned()))
}

fn parse_level(text: &str) -> Result<LoggingLevel, String> {
    serde_json::from_value(serde_json::Value::String(text.to_ascii_lowercase()))
        .map_err(|_| "expected debug, info, notice, warning, error, critical, alert or emergency".to_owned())
}

/// `30`, `30s`, `500ms`, `2m`, `1.5s`.
pub(crate) fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (number, unit) = match text.find(|c: char| c.is_ascii_alphabetic()) {
        Some(at) => (&text[..at], &text[at..]),
        None => (text, "s"),
    };
    let number: f64 = number.trim().parse().map_err(|_| format!("{text:?} is not a duration like 30s or 500ms"))?;
    let seconds = match unit {
        "ms" => number / 1000.0,
        "s" | "sec" => number,
        "m" | "min" => number * 60.0,
        "h" => number * 3600.0,
        _ => return Err(format!("unknown unit {unit:?} (ms, s, m, h)")),
    };
    Duration::try_from_secs_f64(seconds).map_err(|_| format!("{text:?} is not a usable duration"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]

    use clap::CommandFactory;

    use super::*;

    fn parse(line: &str) -> Cli {
        Cli::try_parse_from(line.split_whitespace()).unwrap()
    }

    #[test]
    fn the_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn stdio_with_a_command_and_one_shots() {
        let cli = parse("talaria --json stdio -e K=V -- server --flag ::: call-tool echo text=hi");
        assert!(cli.global.json);
        let Some(Mode::Stdio(args)) = cli.mode else { panic!() };
        assert_eq!(args.env, [("K".to_owned(), "V".to_owned())]);
        assert_eq!(args.rest, ["server", "--flag", ":::", "call-tool", "echo", "text=hi"]);
        let cli = Cli::try_parse_from(["talaria", "stdio", "--cmd", "server --flag", "list-tools", "-v"]).unwrap();
        let Some(Mode::Stdio(args)) = cli.mode else { panic!() };
        assert_eq!(args.cmd.as_deref(), Some("server --flag"));
        assert_eq!(args.rest, ["list-tools", "-v"]);
    }

    #[test]
    fn global_flags_go_anywhere_before_the_commands() {
        let cli = parse("talaria ws --timeout 2s -H Authorization:x ws://h/ws ping");
        assert_eq!(cli.global.timeout, Some(Duration::from_secs(2)));
        assert_eq!(cli.global.header, [("Authorization".to_owned(), "x".to_owned())]);
        let Some(Mode::Ws(args)) = cli.mode else { panic!() };
        assert_eq!((args.url.as_str(), args.commands.as_slice()), ("ws://h/ws", ["ping".to_owned()].as_slice()));
    }

    #[test]
    fn config_takes_a_file_and_a_name_then_commands() {
        let cli = parse("talaria --config mcp.json files list-tools");
        assert_eq!(cli.config.unwrap(), ["mcp.json", "files"]);
        assert!(cli.mode.is_none());
        assert_eq!(cli.commands, ["list-tools"]);
        let cli = parse("talaria --server files");
        assert_eq!(cli.server.as_deref(), Some("files"));
    }

    #[test]
    fn values_are_checked() {
        assert!(Cli::try_parse_from(["talaria", "--protocol-version", "1999-01-01", "demo"]).is_err());
        assert!(Cli::try_parse_from(["talaria", "--header", "nocolon", "demo"]).is_err());
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("3").unwrap(), Duration::from_secs(3));
        assert!(parse_duration("soon").is_err());
    }
}
