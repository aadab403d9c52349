//! A smol TCP stream seen through tokio's I/O traits, which are the ones redis' connection
//! reads and writes through: so that the store can open a connection itself and run its task
//! on an executor of the caller's ([`AsyncLink::open_on`](crate::async_link::AsyncLink::open_on)),
//! where redis would spawn it on smol's global one.

use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use smol::io::{AsyncRead, AsyncWrite};
use smol::net::TcpStream;
use tokio::io::ReadBuf;

/// A connected smol [`TcpStream`] with tokio's `AsyncRead` and `AsyncWrite`.
#[derive(Debug)]
pub(crate) struct SmolTcp(pub(crate) TcpStream);

impl tokio::io::AsyncRead for SmolTcp {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let read = ready!(Pin::new(&mut self.0).poll_read(cx, buf.initialize_unfilled()))?;
        buf.advance(read);
        Poll::Ready(Ok(()))
    }
}

impl tokio::io::AsyncWrite for SmolTcp {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, data)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_close(cx)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    #[test]
    fn bytes_go_both_ways_through_the_tokio_traits() {
        smol::block_on(async {
            let listener = smol::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            let echo = smol::spawn(async move {
                let (mut peer, _) = listener.accept().await.unwrap();
                let mut got = vec![0; 5];
                smol::io::AsyncReadExt::read_exact(&mut peer, &mut got).await.unwrap();
                smol::io::AsyncWriteExt::write_all(&mut peer, &got).await.unwrap();
            });
            let mut ours = SmolTcp(TcpStream::connect(addr).await.unwrap());
            ours.write_all(b"hello").await.unwrap();
            ours.flush().await.unwrap();
            let mut back = vec![0; 5];
            ours.read_exact(&mut back).await.unwrap();
            assert_eq!(back, b"hello");
            echo.await;
            ours.shutdown().await.unwrap();
        });
    }
}
