//! Frames as lines into a pipe: written by the connection's writer thread, and, where the
//! pipe can be written without waiting, first by the thread that produced them (see
//! `outbox.rs`), so that a quiet connection costs no thread hand-off per message.

use std::io::{self, Write};
#[cfg(unix)]
use std::os::fd::{AsFd, OwnedFd};

use crate::conn::{FrameSink, Outgoing};

/// The most bytes one write into a pipe shared with others may carry: a pipe with room
/// (`poll` says so) takes a write this small whole, without blocking (POSIX `PIPE_BUF`).
#[cfg(any(target_os = "linux", target_os = "android"))]
const PIPE_BUF: usize = rustix::pipe::PIPE_BUF;

/// Elsewhere (macOS, the BSDs) a pipe reports room from 512 bytes, POSIX's minimum.
#[cfg(all(unix, not(any(target_os = "linux", target_os = "android"))))]
const PIPE_BUF: usize = 512;

/// A buffer of lines written out is given back past this capacity, so that one burst does not
/// keep its memory for the connection's life.
const KEEP_CAPACITY: usize = 1 << 20;

/// How many such small writes a producer makes before leaving the rest to the writer thread.
#[cfg(unix)]
const POLLED_WRITES: usize = 4;

/// How a producing thread may write without waiting for the peer.
enum Tries {
    /// It may not: a writer we know nothing of.
    Never,
    /// Our own end of a pipe, set non-blocking: a write takes what fits and says
    /// `WouldBlock` (the writer thread then waits with `poll`).
    #[cfg(unix)]
    Nonblocking(OwnedFd),
    /// A pipe or socket we share with others (this process's stdout), left blocking: written
    /// with `RWF_NOWAIT` (Linux: what fits, without waiting), else a write of at most
    /// [`PIPE_BUF`] bytes when `poll` says there is room.
    #[cfg(unix)]
    Polled(OwnedFd),
}

/// Writes frames as lines (newline-delimited JSON) to a pipe.
pub(crate) struct LineSink<W: Write + Send> {
    writer: Option<W>,
    /// Lines not written yet: `out[sent..]`.
    out: Vec<u8>,
    sent: usize,
    tries: Tries,
    /// Whether a [`Tries::Polled`] descriptor may still be written with `RWF_NOWAIT` (a write
    /// that takes what fits without waiting, leaving the descriptor's own flags alone, so with
    /// no `poll` first); cleared for good when the kernel says it cannot.
    #[cfg_attr(not(unix), allow(dead_code))]
    no_wait: bool,
}

impl<W: Write + Send> LineSink<W> {
    /// A sink for any writer; only its writer thread writes. Writes are not buffered beyond
    /// one batch of frames, so give it an unbuffered writer.
    pub(crate) const fn new(writer: W) -> Self {
        Self { writer: Some(writer), out: Vec::new(), sent: 0, tries: Tries::Never, no_wait: true }
    }

    fn append(&mut self, frames: Vec<Outgoing>) {
        if self.sent == self.out.len() {
            self.out.clear();
            self.out.shrink_to(KEEP_CAPACITY);
            self.sent = 0;
        }
        for frame in frames {
            if let Outgoing::Frame(_, payload, _) = frame {
                self.out.extend_from_slice(&payload);
                self.out.push(b'\n');
            }
        }
    }

    fn pending(&self) -> &[u8] {
        &self.out[self.sent..]
    }
}

#[cfg(unix)]
impl<W: Write + Send + AsFd> LineSink<W> {
    /// A sink for our own end of a pipe (a child's stdin): it is made non-blocking, so a
    /// producing thread writes what fits.
    pub(crate) fn owned_pipe(writer: W) -> Self {
        use rustix::fs::{fcntl_getfl, fcntl_setfl, OFlags};
        let fd = writer
            .as_fd()
            .try_clone_to_owned()
            .ok()
            .filter(|fd| fcntl_getfl(fd).and_then(|flags| fcntl_setfl(fd, flags | OFlags::NONBLOCK)).is_ok());
        Self { tries: fd.map_or(Tries::Never, Tries::Nonblocking), ..Self::new(writer) }
    }

    /// A sink for a pipe or socket others may share (this process's stdout): left blocking,
    /// written by producers with `RWF_NOWAIT` where the kernel takes it (no `poll` first),
    /// else in small writes when `poll` says there is room.
    pub(crate) fn shared_pipe(writer: W) -> Self {
        use rustix::fs::{fstat, FileType};
        let fd = writer.as_fd().try_clone_to_owned().ok().filter(|fd| {
            fstat(fd)
                .is_ok_and(|stat| matches!(FileType::from_raw_mode(stat.st_mode), FileType::Fifo | FileType::Socket))
        });
        Self { tries: fd.map_or(Tries::Never, Tries::Polled), ..Self::new(writer) }
    }
}

impl<W: Write + Send> FrameSink for LineSink<W> {
    fn send(&mut self, frames: Vec<Outgoing>) -> io::Result<()> {
        self.append(frames);
        let Some(writer) = &mut self.writer else { return Err(io::ErrorKind::BrokenPipe.into()) };
        while self.sent < self.out.len() {
            match writer.write(&self.out[self.sent..]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => self.sent += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // Our own non-blocking pipe, or a descriptor someone handed us non-blocking.
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => match &self.tries {
                    #[cfg(unix)]
                    Tries::Nonblocking(fd) | Tries::Polled(fd) => {
                        crate::poll::wait_writable(fd, None)?;
                    }
                    Tries::Never => std::thread::sleep(std::time::Duration::from_millis(1)),
                },
                Err(e) => return Err(e),
            }
        }
        writer.flush()
    }

    fn tries(&self) -> bool {
        !matches!(self.tries, Tries::Never)
    }

    /// A producer that can write to the pipe itself writes its own request (one write each)
    /// rather than leaving it to the writer thread to gather with others: the hand-off costs
    /// more than the writes it saves (the `stdio` bench, 64 calls in flight: about 1.5x the
    /// calls/s). A writer we know nothing of is left to the writer thread either way.
    fn batches(&self) -> bool {
        matches!(self.tries, Tries::Never)
    }

    fn try_send(&mut self, frames: Vec<Outgoing>) -> io::Result<bool> {
        self.append(frames);
        let Some(writer) = &mut self.writer else { return Err(io::ErrorKind::BrokenPipe.into()) };
        match &self.tries {
            Tries::Never => {}
            #[cfg(unix)]
            Tries::Nonblocking(_) => {
                while self.sent < self.out.len() {
                    match writer.write(&self.out[self.sent..]) {
                        Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                        Ok(n) => self.sent += n,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                        Err(e) => return Err(e),
                    }
                }
            }
            #[cfg(unix)]
            Tries::Polled(fd) if self.no_wait => match write_no_wait(fd, &self.out[self.sent..]) {
                NoWait::Wrote(n) => self.sent += n,
                NoWait::Full => {}
                NoWait::Unsupported => {
                    // An older kernel, or a descriptor that cannot: `poll` first from now on.
                    self.no_wait = false;
                    return self.try_send(Vec::new());
                }
                NoWait::Failed(e) => return Err(e),
            },
            #[cfg(unix)]
            Tries::Polled(fd) => {
                for _ in 0..POLLED_WRITES {
                    if self.sent == self.out.len() || !crate::poll::wait_writable(fd, Some(std::time::Duration::ZERO))?
                    {
                        break;
                    }
                    let end = self.out.len().min(self.sent + PIPE_BUF);
                    match writer.write(&self.out[self.sent..end]) {
                        Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                        Ok(n) => self.sent += n,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        // Handed to us non-blocking after all: the writer thread goes on.
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                        Err(e) => return Err(e),
                    }
                }
            }
        }
        Ok(self.pending().is_empty())
    }

    fn close(&mut self) {
        if let Some(mut writer) = self.writer.take() {
            let _ = writer.flush();
        }
        // The duplicate descriptor kept for `poll` holds the pipe open too: the peer sees the
        // end of its input only once both are closed.
        self.tries = Tries::Never;
    }
}

/// What a write with `RWF_NOWAIT` did.
#[cfg(unix)]
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
enum NoWait {
    /// Took these bytes (all it could without waiting, at least one).
    Wrote(usize),
    /// Took nothing: the pipe is full.
    Full,
    /// This kernel or descriptor does not take such writes.
    Unsupported,
    /// The write failed.
    Failed(io::Error),
}

/// Writes what of `bytes` fits in the pipe or socket `fd` now, without waiting and without
/// changing the descriptor's flags (which others may share): `pwritev2` with `RWF_NOWAIT` at
/// the current position, in writes until one takes nothing or everything is written.
#[cfg(target_os = "linux")]
fn write_no_wait(fd: &OwnedFd, bytes: &[u8]) -> NoWait {
    use rustix::io::{pwritev2, Errno, ReadWriteFlags};
    let mut written = 0;
    while written < bytes.len() {
        // `u64::MAX`: at (and moving) the current position, as `write` does.
        match pwritev2(fd, &[io::IoSlice::new(&bytes[written..])], u64::MAX, ReadWriteFlags::NOWAIT) {
            Ok(0) if written == 0 => return NoWait::Failed(io::ErrorKind::WriteZero.into()),
            Ok(0) | Err(Errno::AGAIN) => break,
            Ok(n) => written += n,
            Err(Errno::INTR) => {}
            // EPERM: a sandbox (seccomp) that refuses the call rather than the write.
            Err(Errno::OPNOTSUPP | Errno::INVAL | Errno::NOSYS | Errno::SPIPE | Errno::PERM) if written == 0 => {
                return NoWait::Unsupported
            }
            Err(_) if written > 0 => break,
            Err(e) => return NoWait::Failed(e.into()),
        }
    }
    if written == 0 {
        NoWait::Full
    } else {
        NoWait::Wrote(written)
    }
}

/// Elsewhere there is no `RWF_NOWAIT`: producers `poll` first.
#[cfg(all(unix, not(target_os = "linux")))]
fn write_no_wait(_: &OwnedFd, _: &[u8]) -> NoWait {
    NoWait::Unsupported
}

#[cfg(all(test, unix))]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::io::Read;

    use talaria_core::session::Route;

    use super::*;

    fn frame(text: &str) -> Outgoing {
        Outgoing::text(Route::Connection, text)
    }

    fn pipe() -> (std::fs::File, std::fs::File) {
        let (read, write) = rustix::pipe::pipe().unwrap();
        (std::fs::File::from(read), std::fs::File::from(write))
    }

    /// The sinks to try: our own pipe, and a shared one written with `RWF_NOWAIT` or after
    /// `poll` (the fallback of a kernel without it).
    const SINKS: [(bool, bool); 3] = [(false, true), (true, true), (true, false)];

    fn sink_for(write: std::fs::File, (shared, no_wait): (bool, bool)) -> LineSink<std::fs::File> {
        let mut sink = if shared { LineSink::shared_pipe(write) } else { LineSink::owned_pipe(write) };
        sink.no_wait = no_wait;
        sink
    }

    #[test]
    fn a_try_on_a_full_pipe_keeps_the_rest_and_send_finishes_it_in_order() {
        for kind in SINKS {
            let shared = kind;
            let (mut read, write) = pipe();
            let mut sink = sink_for(write, kind);
            assert!(sink.tries());
            let big = "x".repeat(1 << 20);
            let start = std::time::Instant::now();
            assert!(!sink.try_send(vec![frame(&big)]).unwrap(), "a 1 MiB line does not fit a pipe");
            assert!(start.elapsed() < std::time::Duration::from_secs(1), "the try did not wait");
            let reader = std::thread::spawn(move || {
                let mut all = Vec::new();
                read.read_to_end(&mut all).unwrap();
                all
            });
            sink.send(vec![frame("after")]).unwrap();
            sink.close();
            drop(sink);
            let all = reader.join().unwrap();
            assert_eq!(all, format!("{big}\nafter\n").into_bytes(), "(shared, no wait): {shared:?}");
        }
    }

    #[test]
    fn closing_ends_the_peers_input() {
        for shared in [false, true] {
            let (mut read, write) = pipe();
            let mut sink = if shared { LineSink::shared_pipe(write) } else { LineSink::owned_pipe(write) };
            sink.send(vec![frame("bye")]).unwrap();
            sink.close();
            // The sink itself lives on (the connection holds it): the pipe must be closed anyway.
            let mut all = String::new();
            read.read_to_string(&mut all).unwrap();
            assert_eq!(all, "bye\n", "shared: {shared}");
            drop(sink);
        }
    }

    #[test]
    fn a_small_try_on_an_empty_pipe_writes_it_whole() {
        for kind in SINKS {
            let (mut read, write) = pipe();
            let mut sink = sink_for(write, kind);
            assert!(sink.try_send(vec![frame("one"), frame("two")]).unwrap());
            let mut got = [0u8; 8];
            read.read_exact(&mut got).unwrap();
            assert_eq!(&got, b"one\ntwo\n");
        }
    }

    #[test]
    fn a_shared_pipe_is_written_without_waiting_and_left_blocking() {
        use rustix::fs::{fcntl_getfl, OFlags};
        let (read, write) = pipe();
        let fd = write.try_clone().unwrap();
        let mut sink = LineSink::shared_pipe(write);
        // Far more than the pipe holds, in one try: it takes what fits and returns.
        let big = "y".repeat(4 << 20);
        let start = std::time::Instant::now();
        assert!(!sink.try_send(vec![frame(&big)]).unwrap());
        assert!(start.elapsed() < std::time::Duration::from_secs(1), "the try did not wait");
        assert!(sink.sent > 0, "the pipe took its share");
        assert!(!fcntl_getfl(&fd).unwrap().contains(OFlags::NONBLOCK), "others sharing it still block");
        drop(read);
    }

    #[test]
    fn a_writer_that_is_not_a_pipe_is_never_tried() {
        let file = tempfile_like();
        assert!(!LineSink::shared_pipe(file).tries());
        assert!(!LineSink::new(Vec::<u8>::new()).tries());
    }

    /// A regular file (not a pipe or socket).
    fn tempfile_like() -> std::fs::File {
        let path = std::env::temp_dir().join(format!("talaria-sink-test-{}", std::process::id()));
        let file = std::fs::File::create(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        file
    }
}
