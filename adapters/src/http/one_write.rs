//! One write per request: `ureq` hands its transport a request's head and then its body as
//! two separate sends, which with `TCP_NODELAY` leave as two packets, and the server reads
//! the head, finds no body yet and waits again. This transport layer holds a small output
//! back until the next one joins it, or until the response is awaited, so an MCP POST (head
//! and a JSON body of a few hundred bytes) leaves in one `send`.
//!
//! It sits on `ureq`'s transport API (`ureq::unversioned`), outside `ureq`'s semver promise:
//! the workspace pins `ureq` to the minor version this was written against.

use ureq::unversioned::resolver::DefaultResolver;
use ureq::unversioned::transport::{Buffers, ConnectionDetails, Connector, DefaultConnector, NextTimeout, Transport};

/// Outputs up to this size are held back for the next one (a request head is well below it);
/// a larger one is sent at once, with whatever was held.
const HOLD_MAX: usize = 8 * 1024;

/// An agent with `config` whose connections send a request's head and body together.
pub(super) fn agent(config: ureq::config::Config) -> ureq::Agent {
    ureq::Agent::with_parts(config, DefaultConnector::new().chain(OneWrite), DefaultResolver::default())
}

/// Wraps each connection the default connector makes (TCP, or TLS over it) in [`Held`].
#[derive(Debug, Clone, Copy)]
struct OneWrite;

impl<In: Transport> Connector<In> for OneWrite {
    type Out = Held<In>;

    fn connect(&self, _: &ConnectionDetails<'_>, chained: Option<In>) -> Result<Option<Held<In>>, ureq::Error> {
        Ok(chained.map(|inner| Held { inner, held: Vec::new() }))
    }
}

/// A transport that sends small outputs late: joined to the next output, or before input is
/// awaited (a request is always wholly sent before its response is read).
#[derive(Debug)]
struct Held<T> {
    inner: T,
    /// Output handed to us and not yet sent.
    held: Vec<u8>,
}

impl<T: Transport> Held<T> {
    /// Sends everything held, through the inner transport's output buffer.
    fn flush(&mut self, timeout: NextTimeout) -> Result<(), ureq::Error> {
        let mut sent = 0;
        while sent < self.held.len() {
            let out = self.inner.buffers().output();
            let n = (self.held.len() - sent).min(out.len());
            out[..n].copy_from_slice(&self.held[sent..sent + n]);
            self.inner.transmit_output(n, timeout)?;
            sent += n;
        }
        self.held.clear();
        Ok(())
    }
}

impl<T: Transport> Transport for Held<T> {
    fn buffers(&mut self) -> &mut dyn Buffers {
        self.inner.buffers()
    }

    fn transmit_output(&mut self, amount: usize, timeout: NextTimeout) -> Result<(), ureq::Error> {
        let held = self.held.len();
        let out = self.inner.buffers().output();
        if held == 0 && amount <= HOLD_MAX {
            self.held.extend_from_slice(&out[..amount]);
            return Ok(());
        }
        if held + amount <= out.len() {
            // What was held goes in front of this output, in the buffer: one send.
            out.copy_within(..amount, held);
            out[..held].copy_from_slice(&self.held);
            self.held.clear();
            return self.inner.transmit_output(held + amount, timeout);
        }
        self.held.extend_from_slice(&out[..amount]);
        self.flush(timeout)
    }

    fn maybe_await_input(&mut self, timeout: NextTimeout) -> Result<bool, ureq::Error> {
        self.flush(timeout)?;
        self.inner.maybe_await_input(timeout)
    }

    fn await_input(&mut self, timeout: NextTimeout) -> Result<bool, ureq::Error> {
        self.flush(timeout)?;
        self.inner.await_input(timeout)
    }

    fn is_open(&mut self) -> bool {
        self.inner.is_open()
    }

    fn is_tls(&self) -> bool {
        self.inner.is_tls()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use ureq::unversioned::transport::time::Duration;
    use ureq::unversioned::transport::LazyBuffers;

    use super::*;

    /// A transport that records each send and each wait for input.
    #[derive(Debug)]
    struct Recorder {
        buffers: LazyBuffers,
        log: Vec<String>,
    }

    impl Transport for Recorder {
        fn buffers(&mut self) -> &mut dyn Buffers {
            &mut self.buffers
        }

        fn transmit_output(&mut self, amount: usize, _: NextTimeout) -> Result<(), ureq::Error> {
            let sent = String::from_utf8_lossy(&self.buffers.output()[..amount]).into_owned();
            self.log.push(format!("send {sent}"));
            Ok(())
        }

        fn await_input(&mut self, _: NextTimeout) -> Result<bool, ureq::Error> {
            self.log.push("await".to_owned());
            Ok(false)
        }

        fn is_open(&mut self) -> bool {
            true
        }
    }

    fn held(output_size: usize) -> Held<Recorder> {
        Held { inner: Recorder { buffers: LazyBuffers::new(1024, output_size), log: Vec::new() }, held: Vec::new() }
    }

    const TIMEOUT: NextTimeout = NextTimeout {
        after: Duration::Exact(std::time::Duration::from_secs(1)),
        reason: ureq::Timeout::Global,
        per_read: None,
        per_write: None,
    };

    /// Hands `bytes` to the transport the way ureq does: written into its output buffer, then
    /// transmitted.
    fn output(transport: &mut Held<Recorder>, bytes: &[u8]) {
        transport.buffers().output()[..bytes.len()].copy_from_slice(bytes);
        transport.transmit_output(bytes.len(), TIMEOUT).unwrap();
    }

    #[test]
    fn a_head_and_its_body_leave_in_one_send() {
        let mut t = held(4096);
        output(&mut t, b"POST /mcp HTTP/1.1\r\n\r\n");
        assert!(t.inner.log.is_empty(), "the head waits for its body");
        output(&mut t, b"{\"jsonrpc\":\"2.0\"}");
        t.await_input(TIMEOUT).unwrap();
        assert_eq!(t.inner.log, ["send POST /mcp HTTP/1.1\r\n\r\n{\"jsonrpc\":\"2.0\"}", "await"]);
    }

    #[test]
    fn a_request_without_body_is_sent_before_the_response_is_awaited() {
        let mut t = held(4096);
        output(&mut t, b"GET /mcp HTTP/1.1\r\n\r\n");
        assert!(t.maybe_await_input(TIMEOUT).is_ok());
        assert_eq!(t.inner.log, ["send GET /mcp HTTP/1.1\r\n\r\n", "await"]);
        t.await_input(TIMEOUT).unwrap();
        assert_eq!(t.inner.log.len(), 3, "nothing is sent twice");
    }

    #[test]
    fn outputs_that_do_not_fit_together_are_sent_in_order() {
        // An output buffer of 16 bytes: the held head and the next output cannot share it.
        let mut t = held(16);
        output(&mut t, b"head-12345");
        output(&mut t, b"body-0123456789");
        assert_eq!(t.inner.log, ["send head-12345body-0", "send 123456789"]);
        assert!(t.held.is_empty());
    }

    #[test]
    fn a_large_output_is_not_held() {
        let big = vec![b'x'; HOLD_MAX + 1];
        let mut t = held(2 * HOLD_MAX);
        output(&mut t, &big);
        assert_eq!(t.inner.log.len(), 1, "sent at once");
        output(&mut t, b"chunk");
        output(&mut t, &big);
        assert_eq!(t.inner.log.len(), 2, "the held chunk leaves in front of the large one");
        assert!(t.inner.log[1].starts_with("send chunkxxx"));
    }
}
