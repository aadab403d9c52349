//! Makes the authorization flow's HTTP requests with ureq: no redirects followed (a `3xx` is
//! an answer), bodies bounded, no bearer token ever attached.

use std::time::Duration;

use talaria_core::auth::client::{Method, Request, Response};

/// The largest metadata, registration or token response read (larger ones are refused).
pub const MAX_RESPONSE: u64 = 1 << 20;

/// An agent for authorization requests: statuses as answers, no redirects, bounded time,
/// trusting `roots` for `https://`.
pub(crate) fn agent(timeout: Duration, #[cfg(feature = "tls")] roots: &crate::tls::TlsRoots) -> ureq::Agent {
    let builder =
        ureq::Agent::config_builder().http_status_as_error(false).max_redirects(0).timeout_global(Some(timeout));
    #[cfg(feature = "tls")]
    let builder = builder.tls_config(roots.ureq_config());
    builder.build().new_agent()
}

/// [`agent`] with the default roots and a 30 s bound.
pub(crate) fn default_agent() -> ureq::Agent {
    agent(
        Duration::from_secs(30),
        #[cfg(feature = "tls")]
        &crate::tls::TlsRoots::new(),
    )
}

/// Makes `request`; `Err` describes a transport failure (or a body over `limit` bytes).
pub(crate) fn fetch(agent: &ureq::Agent, request: &Request, limit: u64) -> Result<Response, String> {
    let response = match request.method {
        Method::Get => {
            let mut builder = agent.get(&request.url);
            for (name, value) in &request.headers {
                builder = builder.header(*name, value);
            }
            builder.call()
        }
        Method::Post => {
            let mut builder = agent.post(&request.url);
            for (name, value) in &request.headers {
                builder = builder.header(*name, value);
            }
            builder.send(request.body.as_deref().unwrap_or_default())
        }
    };
    let mut response = response.map_err(|e| e.to_string())?;
    let status = response.status().as_u16();
    let body =
        response.body_mut().with_config().limit(limit).read_to_vec().map_err(|e| format!("reading the answer: {e}"))?;
    Ok(Response::new(status, body))
}

/// The `Location` a `GET` of `url` redirects to (for a user agent that signs in by itself).
pub(crate) fn location(agent: &ureq::Agent, url: &str) -> Result<String, String> {
    let response = agent.get(url).call().map_err(|e| e.to_string())?;
    let status = response.status().as_u16();
    response
        .headers()
        .get("Location")
        .and_then(|v| v.to_str().ok())
        .filter(|_| (300..400).contains(&status))
        .map(str::to_owned)
        .ok_or_else(|| format!("the authorization endpoint answered HTTP {status} without a redirect"))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::io::{Read, Write};
    use std::net::TcpListener;

    use super::*;

    /// Serves one canned answer per connection, `count` times.
    fn serve(answer: Vec<u8>, count: usize) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/x", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            for stream in listener.incoming().take(count) {
                let mut stream = stream.unwrap();
                let mut head = [0u8; 4096];
                let _ = stream.read(&mut head);
                let _ = stream.write_all(&answer);
            }
        });
        url
    }

    #[test]
    fn oversized_answers_are_refused_and_redirects_are_answers() {
        let big = vec![b'a'; 4096];
        let mut answer = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", big.len()).into_bytes();
        answer.extend_from_slice(&big);
        let url = serve(answer, 2);
        let request = Request { method: Method::Get, url, headers: Vec::new(), body: None };
        let agent = default_agent();
        assert!(fetch(&agent, &request, 1024).unwrap_err().contains("reading the answer"));
        assert_eq!(fetch(&agent, &request, 8192).unwrap().body.len(), 4096);

        // A 302 to another origin is handed back as it is, never followed.
        let moved = b"HTTP/1.1 302 Found\r\nLocation: https://evil.example.com/\r\nContent-Length: 0\r\n\r\n".to_vec();
        let url = serve(moved, 1);
        let request = Request { method: Method::Get, url, headers: Vec::new(), body: None };
        assert_eq!(fetch(&agent, &request, 1024).unwrap().status, 302);
    }
}
