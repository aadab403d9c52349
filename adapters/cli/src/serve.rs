//! `talaria serve-demo`: the demo server for other clients, on stdio, WebSocket or Streamable
//! HTTP (or legacy HTTP+SSE), over TLS with `--tls-cert` and `--tls-key`.

use super::args::{ServeArgs, ServeTransport};
use super::demo_server;
use super::exit::Exit;
use talaria::http::{HttpServer, HttpServerOptions};
use talaria::ws::{WsServer, WsServerOptions};

/// Serves the demo server until the transport ends (stdin closes) or forever (network
/// transports).
pub(crate) fn run(args: &ServeArgs) -> Exit {
    serve(&demo_server::server(), args, "the demo server")
}

/// Serves `server` (described as `what`) as `args` say.
pub(crate) fn serve<S: Send + 'static>(server: &talaria::server::Server<S>, args: &ServeArgs, what: &str) -> Exit {
    let tls = match (&args.tls_cert, &args.tls_key, args.transport) {
        (Some(_), _, ServeTransport::Stdio | ServeTransport::Ws) => {
            eprintln!("talaria: --tls-cert serves the http and sse transports only");
            return Exit::Usage;
        }
        (Some(cert), Some(key), _) => match tls_config(cert, key) {
            Ok(config) => Some(config),
            Err(e) => {
                eprintln!("talaria: {e}");
                return Exit::Usage;
            }
        },
        _ => None,
    };
    let scheme = if tls.is_some() { "https" } else { "http" };
    let listen = |path: &str| {
        let mut options = HttpServerOptions::default();
        if let Some(config) = tls.clone() {
            options = options.tls(config);
        }
        let bound = HttpServer::bind(server, (args.host.as_str(), args.port), options);
        serve_until_stopped(bound, args, |l| format!("{what} on {scheme}://{}{path}", l.local_addr()), HttpServer::wait)
    };
    match args.transport {
        ServeTransport::Stdio => match talaria::stdio::serve(server) {
            Ok(()) => Exit::Ok,
            Err(e) => {
                eprintln!("talaria: serving on stdio failed: {e}");
                Exit::Transport
            }
        },
        ServeTransport::Ws => {
            let bound = WsServer::bind(server, (args.host.as_str(), args.port), WsServerOptions::default());
            serve_until_stopped(bound, args, |l| format!("{what} on ws://{}/ws", l.local_addr()), WsServer::wait)
        }
        ServeTransport::Http => listen("/mcp"),
        ServeTransport::Sse => listen("/sse"),
    }
}

/// Says where `bound` serves (`serving` describes it) and serves until it stops; or says why
/// it could not listen.
fn serve_until_stopped<L>(
    bound: std::io::Result<L>,
    args: &ServeArgs,
    serving: impl FnOnce(&L) -> String,
    wait: impl FnOnce(L),
) -> Exit {
    match bound {
        Ok(listening) => {
            eprintln!("talaria: serving {}", serving(&listening));
            wait(listening);
            Exit::Ok
        }
        Err(e) => {
            eprintln!("talaria: cannot listen on {}:{}: {e}", args.host, args.port);
            Exit::Transport
        }
    }
}

/// The TLS configuration from the PEM files `cert` and `key`.
fn tls_config(cert: &std::path::Path, key: &std::path::Path) -> Result<std::sync::Arc<rustls::ServerConfig>, String> {
    let read = |path: &std::path::Path| std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()));
    talaria::tls::server_config(&read(cert)?, &read(key)?).map_err(|e| e.to_string())
}
