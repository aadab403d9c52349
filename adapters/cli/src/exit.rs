//! Exit codes and failures: what went wrong, and how a script sees it.

use serde_json::{json, Value};
use talaria_core::session::{CallError, LocalError, SendError};

use talaria::client::ClientError;

/// The exit codes `talaria` documents (see `talaria --help`).
///
/// When several commands run in one invocation, the process exits with the code of the first
/// one that failed.
///
/// # Examples
///
/// ```
/// use talaria_cli::Exit;
///
/// assert_eq!(Exit::Protocol.code(), 3);
/// assert_eq!(Exit::Ok.code(), 0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Exit {
    /// 0: everything worked.
    Ok,
    /// 2: the command line or a command was wrong (bad arguments, arguments that do not fit the
    /// tool's schema, an unknown server name).
    Usage,
    /// 3: the server answered with a JSON-RPC error, or a tool result had `isError` set.
    Protocol,
    /// 4: the transport failed (cannot start or reach the server, connection lost) or a
    /// request timed out.
    Transport,
    /// 5: the server refused the credentials (HTTP 401 or 403).
    Authorization,
    /// 6: interrupted (Ctrl-C cancelled the running call).
    Interrupted,
}

impl Exit {
    /// The process exit code.
    #[must_use]
    pub const fn code(self) -> u8 {
        match self {
            Self::Ok => 0,
            Self::Usage => 2,
            Self::Protocol => 3,
            Self::Transport => 4,
            Self::Authorization => 5,
            Self::Interrupted => 6,
        }
    }

    /// `self`, unless it is `Ok` and `other` is not: keeps the first failure.
    #[must_use]
    pub(crate) const fn or(self, other: Self) -> Self {
        match self {
            Self::Ok => other,
            _ => self,
        }
    }
}

impl From<Exit> for std::process::ExitCode {
    fn from(exit: Exit) -> Self {
        Self::from(exit.code())
    }
}

/// The kind of a failure, as named in `--json` error objects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A bad command line or command.
    Usage,
    /// The server answered with an error.
    Protocol,
    /// The transport failed.
    Transport,
    /// A request or the handshake timed out.
    Timeout,
    /// Credentials refused.
    Authorization,
    /// Interrupted by the user.
    Interrupted,
}

impl Kind {
    /// The name used in `--json` output.
    pub(crate) const fn name(self) -> &'static str {
        match self {
            Self::Usage => "usage",
            Self::Protocol => "protocol",
            Self::Transport => "transport",
            Self::Timeout => "timeout",
            Self::Authorization => "authorization",
            Self::Interrupted => "interrupted",
        }
    }

    /// The exit code of a failure of this kind.
    pub(crate) const fn exit(self) -> Exit {
        match self {
            Self::Usage => Exit::Usage,
            Self::Protocol => Exit::Protocol,
            Self::Transport | Self::Timeout => Exit::Transport,
            Self::Authorization => Exit::Authorization,
            Self::Interrupted => Exit::Interrupted,
        }
    }

    /// Whether the session cannot go on after a failure of this kind.
    pub(crate) const fn is_fatal(self) -> bool {
        matches!(self, Self::Transport | Self::Interrupted | Self::Authorization)
    }
}

/// Why a command failed: a kind, the JSON-RPC code when the server sent one, a message, and
/// an optional hint (a corrected example, the server's stderr).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Failure {
    /// What kind of failure.
    pub(crate) kind: Kind,
    /// The server's JSON-RPC error code, if it sent one.
    pub(crate) code: Option<i64>,
    /// What went wrong.
    pub(crate) message: String,
    /// More lines for a person (not part of the JSON object's message).
    pub(crate) hint: Option<String>,
    /// A result that came back but failed a check (a tool's output schema): shown with the
    /// failure, and in its JSON object as `result`.
    pub(crate) result: Option<Value>,
}

impl Failure {
    /// A failure of `kind` saying `message`.
    pub(crate) fn new(kind: Kind, message: impl Into<String>) -> Self {
        Self { kind, code: None, message: message.into(), hint: None, result: None }
    }

    /// A usage failure.
    pub(crate) fn usage(message: impl Into<String>) -> Self {
        Self::new(Kind::Usage, message)
    }

    /// A transport failure.
    pub(crate) fn transport(message: impl Into<String>) -> Self {
        Self::new(Kind::Transport, message)
    }

    /// Adds a hint.
    #[must_use]
    pub(crate) fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// The exit code.
    pub(crate) const fn exit(&self) -> Exit {
        self.kind.exit()
    }

    /// The `--json` error object: `{"kind", "code", "message"}` (`code` is `null` unless the
    /// server sent a JSON-RPC error).
    pub(crate) fn to_json(&self) -> Value {
        let mut object = json!({"kind": self.kind.name(), "code": self.code, "message": self.message});
        if let Some(result) = &self.result {
            object["result"] = result.clone();
        }
        object
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.code {
            Some(code) => write!(f, "{} (code {code})", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl From<ClientError> for Failure {
    fn from(error: ClientError) -> Self {
        match error {
            ClientError::Send(SendError::Closed) => Self::transport("the connection is closed"),
            ClientError::Send(other) => Self::new(Kind::Protocol, format!("not sent: {other}")),
            ClientError::Call(CallError::Remote(remote)) => {
                let mut message = remote.message.clone();
                if let Some(data) = &remote.data {
                    message.push_str(&format!(" (data: {data})"));
                }
                Self { kind: Kind::Protocol, code: Some(remote.code.0), message, hint: None, result: None }
            }
            ClientError::Call(CallError::Local(local)) => from_local(&local),
            ClientError::Connect(why) => Self::transport(format!("cannot connect: {why}")),
            handshake @ ClientError::HandshakeTimedOut { .. } => Self::new(Kind::Timeout, handshake.to_string()),
            exited @ ClientError::ServerExited(_) => Self::transport(exited.to_string()),
            ClientError::HttpStatus { url, status, www_authenticate, detail } => {
                let kind = if matches!(status, 401 | 403) { Kind::Authorization } else { Kind::Transport };
                let detail = detail.map(|d| format!(": {d}")).unwrap_or_default();
                let failure = Self::new(kind, format!("cannot connect: {url}: HTTP {status}{detail}"));
                match www_authenticate {
                    Some(asked) => failure.with_hint(format!(
                        "the server asks for: WWW-Authenticate: {asked} (sign in with --oauth, or pass --header 'Authorization: Bearer ...')"
                    )),
                    None if kind == Kind::Authorization => failure
                        .with_hint("sign in with --oauth, or pass credentials with --header 'Authorization: Bearer ...'"),
                    None => failure,
                }
            }
            ClientError::Io(e) => Self::transport(e.to_string()),
            other => Self::transport(other.to_string()),
        }
    }
}

fn from_local(local: &LocalError) -> Failure {
    if let LocalError::OutputMismatch { result, .. } = local {
        // The result is shown all the same: the server sent it, the mismatch is the finding.
        let result = serde_json::from_str::<Value>(result).unwrap_or(Value::Null);
        let mut failure = Failure::new(Kind::Protocol, local.to_string());
        failure.hint = Some(format!("the result as received: {result}"));
        failure.result = Some(result);
        return failure;
    }
    if let LocalError::InputRefused { error, .. } = local {
        // The client's own refusal, with its code: a protocol failure, as a remote one is.
        let mut failure = Failure::new(Kind::Protocol, local.to_string());
        failure.code = Some(error.code.0);
        return failure;
    }
    let kind = match local {
        LocalError::TimedOut => Kind::Timeout,
        LocalError::Cancelled { .. } => Kind::Interrupted,
        LocalError::NotSent(_) | LocalError::MalformedResponse(_) => Kind::Protocol,
        _ => Kind::Transport,
    };
    Failure::new(kind, local.to_string())
}

#[cfg(test)]
mod tests {
    use talaria_core::jsonrpc::ErrorObject;

    use super::*;

    #[test]
    fn client_errors_map_to_the_documented_codes() {
        let remote = ClientError::Call(CallError::Remote(ErrorObject::invalid_params("Unknown tool: x")));
        let failure = Failure::from(remote);
        assert_eq!(failure.exit(), Exit::Protocol);
        assert_eq!(failure.to_json(), json!({"kind": "protocol", "code": -32602, "message": "Unknown tool: x"}));
        let timeout = Failure::from(ClientError::Call(CallError::Local(LocalError::TimedOut)));
        assert_eq!((timeout.kind, timeout.exit()), (Kind::Timeout, Exit::Transport));
        let refused = LocalError::InputRefused { key: "k".into(), error: ErrorObject::invalid_params("form only") };
        let refused = Failure::from(ClientError::Call(CallError::Local(refused)));
        assert_eq!((refused.kind, refused.code, refused.exit()), (Kind::Protocol, Some(-32602), Exit::Protocol));
        let cancelled = Failure::from(ClientError::Call(CallError::Local(LocalError::Cancelled { reason: None })));
        assert_eq!(cancelled.exit(), Exit::Interrupted);
        let denied =
            ClientError::HttpStatus { url: "ws://x".into(), status: 401, www_authenticate: None, detail: None };
        assert_eq!(Failure::from(denied).exit(), Exit::Authorization);
        assert_eq!(Failure::from(ClientError::Connect("connection closed".into())).exit(), Exit::Transport);
        // Exit codes come from the error's type, never its text.
        let refused = ClientError::Connect("127.0.0.1:4403: Connection refused (os error 111)".into());
        assert_eq!(Failure::from(refused).exit(), Exit::Transport);
        let slow = Failure::from(ClientError::HandshakeTimedOut { after: std::time::Duration::from_secs(1) });
        assert_eq!((slow.kind, slow.exit()), (Kind::Timeout, Exit::Transport));
    }

    #[test]
    fn a_result_that_breaks_its_output_schema_is_shown_with_the_mismatch() {
        let mismatch = LocalError::OutputMismatch {
            why: "\"sum\": expected an integer".into(),
            result: r#"{"structuredContent":{"sum":"x"}}"#.into(),
        };
        let failure = Failure::from(ClientError::Call(CallError::Local(mismatch)));
        assert_eq!(failure.exit(), Exit::Protocol);
        let shown = failure.to_json();
        assert!(shown["message"].as_str().is_some_and(|m| m.contains("expected an integer")), "{shown}");
        assert_eq!(shown["result"]["structuredContent"]["sum"], "x", "{shown}");
        assert!(failure.hint.is_some_and(|h| h.contains("\"sum\":\"x\"")));
    }

    #[test]
    fn the_first_failure_wins() {
        assert_eq!(Exit::Ok.or(Exit::Protocol).or(Exit::Transport), Exit::Protocol);
        assert_eq!(std::process::ExitCode::from(Exit::Interrupted), std::process::ExitCode::from(6));
    }
}
