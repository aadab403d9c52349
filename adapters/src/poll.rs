//! Waiting for a file descriptor to take writes, without writing.

use std::io;
use std::os::fd::AsFd;
use std::time::Duration;

/// Waits until `fd` can be written, for at most `limit` (`None`: as long as it takes);
/// whether it can. A descriptor whose peer is gone is an error.
pub(crate) fn wait_writable(fd: impl AsFd, limit: Option<Duration>) -> io::Result<bool> {
    use rustix::event::{poll, PollFd, PollFlags, Timespec};
    let timeout = limit.and_then(|limit| Timespec::try_from(limit).ok());
    let mut fds = [PollFd::new(&fd, PollFlags::OUT)];
    loop {
        match poll(&mut fds, timeout.as_ref()) {
            Ok(ready) => {
                if fds[0].revents().intersects(PollFlags::ERR | PollFlags::HUP) {
                    return Err(io::ErrorKind::BrokenPipe.into());
                }
                return Ok(ready > 0);
            }
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn an_empty_pipe_takes_writes_and_a_closed_one_is_an_error() {
        let (read, write) = rustix::pipe::pipe().unwrap();
        assert!(wait_writable(&write, Some(Duration::ZERO)).unwrap());
        drop(read);
        assert!(wait_writable(&write, Some(Duration::ZERO)).is_err());
    }
}
