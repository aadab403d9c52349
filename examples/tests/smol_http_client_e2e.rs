//! End to end on 127.0.0.1 with the smol HTTP client (`talaria::smol::http`, `sse`,
//! `http_or_sse`) against the blocking and the smol servers: both eras and reply modes,
//! 200 sessions driven from one thread, session expiry, stream resumption, stateless
//! cancellation, server requests, the legacy transport and the probe, refusals and traces.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;
use talaria::client::{AsyncClient, ClientError, ClientOptions};
use talaria::core::client::CallOptions;
use talaria::core::http::exchange::{EndpointConfig, Refusal};
use talaria::core::http::reply::ReplyMode;
use talaria::core::schema::tools::CallToolResult;
use talaria::core::server::Headers;
use talaria::core::session::ClientMode;
use talaria::core::version::ProtocolVersion;
use talaria::http::{HttpServer, HttpServerOptions, SmolHttpServer};

fn text_of(result: &CallToolResult) -> String {
    result.content.iter().filter_map(|c| c.as_text()).collect::<Vec<_>>().join("")
}

fn legacy(version: ProtocolVersion) -> ClientOptions {
    ClientOptions::new("smol-client-e2e", "1").mode(ClientMode::Legacy).versions(vec![version])
}

fn stateless() -> ClientOptions {
    ClientOptions::new("smol-client-e2e", "1").mode(ClientMode::Stateless)
}

/// Either server, serving the everything server.
enum Listening {
    Blocking(HttpServer),
    Smol(SmolHttpServer),
}

impl Listening {
    fn start(smol: bool, options: HttpServerOptions) -> (Self, String) {
        let server = talaria_examples::everything::server();
        let listening = if smol {
            Self::Smol(SmolHttpServer::bind(&server, "127.0.0.1:0", options).unwrap())
        } else {
            Self::Blocking(HttpServer::bind(&server, "127.0.0.1:0", options).unwrap())
        };
        let addr = match &listening {
            Self::Blocking(s) => s.local_addr(),
            Self::Smol(s) => s.local_addr(),
        };
        (listening, format!("http://{addr}/mcp"))
    }

    fn sessions(&self) -> usize {
        match self {
            Self::Blocking(s) => s.sessions(),
            Self::Smol(s) => s.sessions(),
        }
    }

    fn wait_for_sessions(&self, count: usize) {
        let deadline = Instant::now() + Duration::from_secs(3);
        while self.sessions() != count && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(self.sessions(), count);
    }
}

/// A call's progress reports, and the options that collect them.
fn progress() -> (Arc<Mutex<Vec<f64>>>, CallOptions) {
    let reports = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&reports);
    (reports, CallOptions::default().with_progress(move |p| seen.lock().unwrap().push(p.progress)))
}

async fn echo(client: &AsyncClient, text: &str) -> String {
    text_of(&client.call_tool("echo", json!({ "text": text })).await.unwrap())
}

#[test]
fn both_eras_and_reply_modes_against_both_servers() {
    for smol_server in [false, true] {
        for mode in [ReplyMode::Json, ReplyMode::Sse] {
            let (listening, url) = Listening::start(smol_server, HttpServerOptions::default().reply_mode(mode));
            for version in [ProtocolVersion::V2025_03_26, ProtocolVersion::V2025_06_18, ProtocolVersion::V2025_11_25] {
                let case = format!("smol server {smol_server}, {mode:?}, {version}");
                smol::block_on(async {
                    let client = talaria::smol::http(&url, &[], legacy(version)).await.unwrap();
                    assert_eq!(client.protocol_version(), version, "{case}");
                    assert_eq!(client.to_blocking().session_id().map(|id| id.len()), Some(32), "{case}");
                    client.ping().await.unwrap();
                    assert_eq!(echo(&client, "over smol").await, "over smol", "{case}");
                    assert_eq!(client.list_all_tools().await.unwrap().len(), 12, "{case}");
                    let (reports, options) = progress();
                    let slow = client.call_tool_with("slow", json!({"steps": 3, "step_ms": 1}), options).await.unwrap();
                    assert_eq!(text_of(&slow), "done after 3 steps", "{case}");
                    assert_eq!(*reports.lock().unwrap(), vec![1.0, 2.0, 3.0], "{case}: progress");
                    let calls = client.call_tool("calls", json!({})).await.unwrap();
                    assert_eq!(text_of(&calls), "1", "{case}: per-session state");
                    assert_eq!(listening.sessions(), 1, "{case}");
                });
                // Dropping the last handle sent DELETE.
                listening.wait_for_sessions(0);
            }
            smol::block_on(async {
                let client = talaria::smol::http(&url, &[], stateless()).await.unwrap();
                assert_eq!(client.protocol_version(), ProtocolVersion::V2026_07_28);
                assert_eq!(client.to_blocking().session_id(), None);
                assert_eq!(echo(&client, "no session").await, "no session");
                let note = client.read_resource("notes://9").await;
                assert!(serde_json::to_string(&note.unwrap()).unwrap().contains("note 9"));
                let auto = talaria::smol::http(&url, &[], ClientOptions::new("auto", "1")).await.unwrap();
                assert_eq!(auto.protocol_version(), ProtocolVersion::V2026_07_28, "auto finds the newest era");
            });
            assert_eq!(listening.sessions(), 0, "no sessions in the stateless era");
        }
    }
}

/// The process's thread count.
fn threads() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status.lines().find_map(|l| l.strip_prefix("Threads:")).unwrap().trim().parse().unwrap()
}

#[test]
fn two_hundred_sessions_of_a_hundred_calls_from_one_thread() {
    let (listening, url) = Listening::start(true, HttpServerOptions::default());
    let before = threads();
    let peak = Arc::new(Mutex::new(0));
    smol::block_on(async {
        let sessions = (0..200).map(|c| {
            let (url, peak) = (url.clone(), Arc::clone(&peak));
            async move {
                let client = talaria::smol::http(&url, &[], legacy(ProtocolVersion::V2025_06_18)).await.unwrap();
                for i in 0..100 {
                    let text = format!("{c}:{i}");
                    assert_eq!(echo(&client, &text).await, text);
                }
                let now = threads();
                peak.lock().map(|mut peak| *peak = (*peak).max(now)).unwrap();
                text_of(&client.call_tool("calls", json!({})).await.unwrap())
            }
        });
        let counts = futures_join_all(sessions.collect()).await;
        assert!(counts.iter().all(|c| c == "100"), "every answer once, to its own session: {counts:?}");
    });
    let peak = *peak.lock().unwrap();
    eprintln!("threads: {before} before, {peak} at peak with 200 sessions open");
    // No thread per session or per request (the blocking client keeps one GET thread per
    // session): what grew is the server's and the runtime's few, plus what the tests running
    // beside this one start and end meanwhile (a dropped client closes on a thread of its own).
    assert!(peak < before + 60, "threads: {before} before, {peak} at peak with 200 sessions open");
    listening.wait_for_sessions(0);
}

/// Awaits every future (a tiny `join_all` on smol's executor).
async fn futures_join_all<T: Send + 'static>(
    futures: Vec<impl std::future::Future<Output = T> + Send + 'static>,
) -> Vec<T> {
    let tasks: Vec<_> = futures.into_iter().map(smol::spawn).collect();
    let mut out = Vec::with_capacity(tasks.len());
    for task in tasks {
        out.push(task.await);
    }
    out
}

#[test]
fn an_expired_session_fails_the_call_in_flight_and_the_client_starts_a_new_one() {
    let mut endpoint = EndpointConfig::default();
    endpoint.idle_timeout = Duration::from_millis(150);
    let (listening, url) = Listening::start(true, HttpServerOptions::default().endpoint(endpoint));
    smol::block_on(async {
        let client = talaria::smol::http(&url, &[], legacy(ProtocolVersion::V2025_06_18)).await.unwrap();
        client.ping().await.unwrap();
        smol::Timer::after(Duration::from_millis(400)).await;
        assert_eq!(listening.sessions(), 0, "expired");
        let start = Instant::now();
        let outcome = client.ping().await;
        assert!(matches!(outcome, Err(ClientError::Call(_))), "the call on the lost session is reported: {outcome:?}");
        assert!(start.elapsed() < Duration::from_secs(2), "no hang");
        client.ping().await.unwrap();
        assert_eq!(echo(&client, "again").await, "again");
        assert_eq!(listening.sessions(), 1, "a fresh session");
    });
}

#[test]
fn a_stream_the_server_ended_early_is_resumed_after_its_retry_delay() {
    use talaria::core::schema::tools::Tool;
    use talaria::core::server::{Router, ToolError};
    let router = Router::<()>::builder()
        .blocking_tool(Tool::new("poll_me", Default::default()), |job, _: serde_json::Value| {
            assert!(job.close_sse_stream());
            std::thread::sleep(Duration::from_millis(20));
            Ok::<_, ToolError>(CallToolResult::text("polled"))
        })
        .build();
    let server = talaria::server::Server::new("polling", "1", router);
    for mode in [ReplyMode::Json, ReplyMode::Sse] {
        let options = HttpServerOptions::default().reply_mode(mode).sse_retry(Duration::from_millis(300));
        let listening = SmolHttpServer::bind(&server, "127.0.0.1:0", options).unwrap();
        let url = format!("http://{}/mcp", listening.local_addr());
        smol::block_on(async {
            let client = talaria::smol::http(&url, &[], legacy(ProtocolVersion::V2025_11_25)).await.unwrap();
            let started = Instant::now();
            let result = client.call_tool("poll_me", json!({})).await.unwrap();
            assert_eq!(text_of(&result), "polled", "{mode:?}");
            assert!(started.elapsed() >= Duration::from_millis(300), "waited for retry: {:?}", started.elapsed());
            client.ping().await.unwrap();
        });
    }
}

#[test]
fn a_stateless_call_that_times_out_is_cancelled_by_closing_its_stream() {
    let (_listening, url) =
        Listening::start(true, HttpServerOptions::default().sse_keepalive(Duration::from_millis(50)));
    smol::block_on(async {
        let client = talaria::smol::http(&url, &[], stateless()).await.unwrap();
        let before = talaria_cli::demo_tools::slow_calls();
        let options = CallOptions::default().with_timeout(Duration::from_millis(300));
        let outcome = client.call_tool_with("slow", json!({"steps": 100, "step_ms": 50}), options).await;
        assert!(matches!(outcome, Err(ClientError::Call(ref e)) if e.to_string().contains("timed out")), "{outcome:?}");
        let deadline = Instant::now() + Duration::from_secs(5);
        while talaria_cli::demo_tools::slow_calls().cancelled == before.cancelled && Instant::now() < deadline {
            smol::Timer::after(Duration::from_millis(10)).await;
        }
        assert!(talaria_cli::demo_tools::slow_calls().cancelled > before.cancelled, "the server stopped the work");
        assert_eq!(echo(&client, "still here").await, "still here");
    });
}

#[test]
fn server_requests_are_answered_in_both_eras() {
    use talaria::core::client::Handlers;
    use talaria::core::schema::sampling::CreateMessageResult;

    let (_listening, url) = Listening::start(true, HttpServerOptions::default());
    let handlers = || {
        Handlers::default().with_sampling(|params| {
            let asked = serde_json::to_value(&params.messages).unwrap();
            let text = format!("echo of {}", asked[0]["content"]["text"].as_str().unwrap_or_default());
            Ok(serde_json::from_value::<CreateMessageResult>(json!({
                "role": "assistant", "content": {"type": "text", "text": text}, "model": "test"
            }))
            .unwrap())
        })
    };
    smol::block_on(async {
        for options in [stateless(), legacy(ProtocolVersion::V2025_11_25)] {
            let client = talaria::smol::http(&url, &[], options.handlers(handlers())).await.unwrap();
            let answer = client.call_tool("sample", json!({"question": "why"})).await.unwrap();
            assert!(text_of(&answer).contains("echo of why"), "{}", text_of(&answer));
        }
    });
}

#[test]
fn the_legacy_transport_and_the_probe() {
    let (listening, url) = Listening::start(true, HttpServerOptions::default());
    let sse = url.replace("/mcp", "/sse");
    smol::block_on(async {
        let client = talaria::smol::sse(&sse, &[], legacy(ProtocolVersion::V2024_11_05)).await.unwrap();
        assert_eq!(client.protocol_version(), ProtocolVersion::V2024_11_05);
        assert_eq!(client.to_blocking().session_id().map(|id| id.len()), Some(32), "the endpoint's sessionId");
        for i in 0..20 {
            let text = format!("legacy {i}");
            assert_eq!(echo(&client, &text).await, text);
        }
        let (reports, options) = progress();
        let slow = client.call_tool_with("slow", json!({"steps": 2, "step_ms": 1}), options).await.unwrap();
        assert_eq!(text_of(&slow), "done after 2 steps");
        assert_eq!(*reports.lock().unwrap(), vec![1.0, 2.0], "progress travels on the stream");
        assert_eq!(text_of(&client.call_tool("calls", json!({})).await.unwrap()), "20");
        drop(client);
        listening.wait_for_sessions(0);

        let modern = talaria::smol::http_or_sse(&url, &[], legacy(ProtocolVersion::V2025_06_18)).await.unwrap();
        assert_eq!(echo(&modern, "modern").await, "modern");
        assert_eq!(listening.sessions(), 1, "one Streamable HTTP session");
        let old = talaria::smol::http_or_sse(&sse, &[], legacy(ProtocolVersion::V2024_11_05)).await.unwrap();
        assert_eq!(old.protocol_version(), ProtocolVersion::V2024_11_05, "fell back to the legacy transport");
        assert_eq!(echo(&old, "old").await, "old");
        assert_eq!(listening.sessions(), 2);
    });
}

#[test]
fn refusals_report_their_status_and_traces_see_every_exchange() {
    let hook = |headers: &Headers| match headers.get("authorization") {
        Some("Bearer let-me-in") => Ok(Some("tester".to_owned())),
        _ => Err(Refusal::unauthorized("Bearer resource_metadata=\"http://x/.well-known\"")),
    };
    let (_listening, url) =
        Listening::start(true, HttpServerOptions::default().authorize(hook).reply_mode(ReplyMode::Sse));
    smol::block_on(async {
        for mode in [ClientMode::Auto, ClientMode::Legacy, ClientMode::Stateless] {
            let refused = talaria::smol::http(&url, &[], ClientOptions::new("anon", "1").mode(mode)).await.unwrap_err();
            match refused {
                ClientError::HttpStatus { status, www_authenticate, .. } => {
                    assert_eq!(status, 401, "{mode:?}");
                    assert_eq!(www_authenticate.as_deref(), Some("Bearer resource_metadata=\"http://x/.well-known\""));
                }
                other => panic!("{mode:?}: {other:?}"),
            }
        }
        let sse = url.replace("/mcp", "/sse");
        let refused = talaria::smol::sse(&sse, &[], ClientOptions::new("anon", "1")).await.unwrap_err();
        assert!(
            matches!(refused, ClientError::HttpStatus { status: 401, www_authenticate: Some(_), .. }),
            "{refused:?}"
        );
        assert!(matches!(
            talaria::smol::http("https://127.0.0.1:1/mcp", &[], ClientOptions::new("tls", "1")).await,
            Err(ClientError::Connect(_))
        ));

        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&seen);
        let options = legacy(ProtocolVersion::V2025_11_25).trace(move |event| {
            use talaria::client::TraceEvent;
            let line = match event {
                TraceEvent::Sent(frame) => format!("sent {}", String::from_utf8_lossy(frame)),
                TraceEvent::Received(frame) => format!("received {}", String::from_utf8_lossy(frame)),
                TraceEvent::HttpRequest { method, headers, .. } => {
                    format!(
                        "{method} {}",
                        headers.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ")
                    )
                }
                TraceEvent::HttpResponse { status, .. } => format!("status {status}"),
                TraceEvent::SseEvent { id, .. } => format!("sse id {}", id.unwrap_or("-")),
                _ => "other".into(),
            };
            log.lock().unwrap().push(line);
        });
        let client = talaria::smol::http(&url, &[("Authorization", "Bearer let-me-in")], options).await.unwrap();
        client.ping().await.unwrap();
        client.to_blocking().close();
        // The DELETE goes from a task: closing does not block the executor.
        let deadline = Instant::now() + Duration::from_secs(2);
        while !seen.lock().unwrap().iter().any(|line| line.starts_with("DELETE ")) && Instant::now() < deadline {
            smol::Timer::after(Duration::from_millis(5)).await;
        }
        let seen = seen.lock().unwrap().clone();
        let has = |prefix: &str| seen.iter().any(|line| line.starts_with(prefix));
        assert!(has("sent {\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\""), "{seen:#?}");
        assert!(has("received {\"jsonrpc\":\"2.0\",\"id\":0,\"result\""), "{seen:#?}");
        assert!(
            seen.iter().any(|l| l.starts_with("POST ") && l.contains("Authorization=Bearer let-me-in")),
            "{seen:#?}"
        );
        assert!(
            seen.iter().any(|l| l.starts_with("GET ") && l.contains("Mcp-Session-Id=")),
            "the GET stream: {seen:#?}"
        );
        assert!(has("status 200") && has("status 202"), "{seen:#?}");
        assert!(has("sse id "), "2025-11-25 SSE replies carry event ids: {seen:#?}");
        assert!(has("DELETE "), "{seen:#?}");
    });
}
