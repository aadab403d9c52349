//! `talaria serve-demo`: the demo server for other clients, on stdio, WebSocket or Streamable
//! HTTP.

use super::args::{ServeArgs, ServeTransport};
use super::demo_server;
use super::exit::Exit;
use crate::http::{HttpServer, HttpServerOptions};
use crate::ws::{WsServer, WsServerOptions};

/// Serves until the transport ends (stdin closes) or forever (WebSocket).
pub(crate) fn run(args: &ServeArgs) -> Exit {
    let server = demo_server::server();
    match args.transport {
        ServeTransport::Stdio => match crate::stdio::serve(&server) {
            Ok(()) => Exit::Ok,
            Err(e) => {
                eprintln!("talaria: serving on stdio failed: {e}");
                Exit::Transport
            }
        },
        ServeTransport::Ws => {
            match WsServer::bind(&server, (args.host.as_str(), args.port), WsServerOptions::default()) {
                Ok(listening) => {
                    eprintln!("talaria: serving the demo server on ws://{}/ws", listening.local_addr());
                    listening.wait();
                    Exit::Ok
                }
                Err(e) => {
                    eprintln!("talaria: cannot listen on {}:{}: {e}", args.host, args.port);
                    Exit::Transport
                }
            }
        }
        ServeTransport::Http => {
            match HttpServer::bind(&server, (args.host.as_str(), args.port), HttpServerOptions::default()) {
                Ok(listening) => {
                    eprintln!("talaria: serving the demo server on http://{}/mcp", listening.local_addr());
                    listening.wait();
                    Exit::Ok
                }
                Err(e) => {
                    eprintln!("talaria: cannot listen on {}:{}: {e}", args.host, args.port);
                    Exit::Transport
                }
            }
        }
        ServeTransport::Sse => {
            match HttpServer::bind(&server, (args.host.as_str(), args.port), HttpServerOptions::default()) {
                Ok(listening) => {
                    eprintln!("talaria: serving the demo server on http://{}/sse", listening.local_addr());
                    listening.wait();
                    Exit::Ok
                }
                Err(e) => {
                    eprintln!("talaria: cannot listen on {}:{}: {e}", args.host, args.port);
                    Exit::Transport
                }
            }
        }
    }
}
