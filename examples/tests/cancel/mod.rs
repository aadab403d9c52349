//! How soon a server notices that a stateless (2026-07-28) client closed a call's stream: the
//! only cancellation that era has over HTTP.

use std::time::{Duration, Instant};

use serde_json::json;
use talaria::client::{Client, ClientError, ClientOptions};
use talaria::core::client::CallOptions;
use talaria::core::session::ClientMode;

/// The most time allowed between the client closing a silent call's stream and the tool
/// seeing its cancel flag (the `slow` tool looks every 5 ms here), as a median of a few calls.
pub(crate) const CANCEL_NOTICED_WITHIN: Duration = Duration::from_millis(100);

/// Calls the demo's `slow` tool at `url` statelessly with a short timeout, `rounds` times: each
/// time the client gives up and closes the stream, and the time until the server's tool stops
/// is measured. The keep-alive interval is left long, so no keep-alive write helps notice.
/// The times, sorted.
pub(crate) fn cancel_latencies(url: &str, rounds: usize) -> Vec<Duration> {
    let client = Client::http(url, &[], ClientOptions::new("stateless", "1").mode(ClientMode::Stateless)).unwrap();
    let mut latencies = Vec::new();
    for _ in 0..rounds {
        let before = talaria_cli::demo_tools::slow_calls();
        let options = CallOptions::default().with_timeout(Duration::from_millis(200));
        let outcome = client.call_tool_with("slow", json!({"steps": 1000, "step_ms": 5}), options);
        assert!(matches!(outcome, Err(ClientError::Call(ref e)) if e.to_string().contains("timed out")), "{outcome:?}");
        // The call has returned: its stream is closed.
        let closed = Instant::now();
        let deadline = closed + Duration::from_secs(5);
        while talaria_cli::demo_tools::slow_calls().cancelled == before.cancelled && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(talaria_cli::demo_tools::slow_calls().cancelled > before.cancelled, "the server stopped the work");
        latencies.push(closed.elapsed());
    }
    latencies.sort();
    latencies
}
