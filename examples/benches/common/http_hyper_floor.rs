//! The http bench's floor: hyper's HTTP/1.1 server on smol with no SDK, run the way Talaria's
//! `HttpServer` runs hyper (`adapters/src/http/server.rs`): an executor run by as many threads
//! as the machine has cores (2 to 8), the accept loop on async-io and a task per connection on
//! it, each `TCP_NODELAY`, served by `http1::Builder::serve_connection` over
//! `smol_hyper::rt::FuturesIo` with `SmolTimer` (so hyper's default 30 s header read timeout,
//! Talaria's default too, is on). Its service collects the whole body, parses the JSON-RPC
//! request as a `serde_json::Value` and answers `200` `application/json` with the `echo`
//! tool's result (`202` to a notification). No MCP, no sessions, none of Talaria's limits: no
//! connection admission, and hyper's default head size, header count and buffer size.

use std::convert::Infallible;
use std::net::TcpListener;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::CONTENT_TYPE;
use hyper::server::conn::http1;
use hyper::{Request, Response, StatusCode};
use smol::Async;
use smol_hyper::rt::{FuturesIo, SmolTimer};

use super::floor::answer;

/// Serves until killed, having said where on stderr.
pub(crate) fn serve() {
    let listener = Async::<TcpListener>::bind(([127, 0, 0, 1], 0)).unwrap();
    eprintln!("http bench hyper floor: listening on http://{}/mcp", listener.get_ref().local_addr().unwrap());
    let cores = std::thread::available_parallelism().map_or(2, std::num::NonZeroUsize::get);
    let executor = Arc::new(smol::Executor::new());
    for n in 0..cores.clamp(2, 8) {
        let running = Arc::clone(&executor);
        std::thread::Builder::new()
            .name(format!("floor-http-{n}"))
            .spawn(move || smol::block_on(running.run(smol::future::pending::<()>())))
            .unwrap();
    }
    let mut http = http1::Builder::new();
    http.timer(SmolTimer::new());
    let http = Arc::new(http);
    let spawning = Arc::clone(&executor);
    let accept = executor.spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                smol::Timer::after(Duration::from_millis(10)).await;
                continue;
            };
            let _ = stream.get_ref().set_nodelay(true);
            let http = Arc::clone(&http);
            let service = hyper::service::service_fn(echo);
            spawning
                .spawn(async move {
                    let _ = http.serve_connection(FuturesIo::new(stream), service).await;
                })
                .detach();
        }
    });
    // As `HttpServer::wait`: this thread only waits.
    smol::block_on(accept);
}

/// One request: its whole body, and the echo's answer.
async fn echo(request: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let Ok(body) = request.into_body().collect().await else {
        return Ok(reply(StatusCode::BAD_REQUEST, None));
    };
    Ok(match answer(&body.to_bytes()) {
        Some(answer) => reply(StatusCode::OK, Some(serde_json::to_vec(&answer).unwrap())),
        None => reply(StatusCode::ACCEPTED, None),
    })
}

fn reply(status: StatusCode, json: Option<Vec<u8>>) -> Response<Full<Bytes>> {
    let mut response = Response::builder().status(status);
    if json.is_some() {
        response = response.header(CONTENT_TYPE, "application/json");
    }
    response.body(Full::new(json.map_or_else(Bytes::new, Bytes::from))).unwrap()
}
