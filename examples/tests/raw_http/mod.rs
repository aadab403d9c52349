//! Reading HTTP/1.1 responses by hand, for tests that speak raw HTTP to a server.

use std::io::BufRead;

/// Reads one response with a `Content-Length` body (none: empty): its status line and body.
///
/// # Panics
///
/// If the connection fails or the head is cut short.
pub(crate) fn read_response(reader: &mut impl BufRead) -> (String, String) {
    let mut status = String::new();
    reader.read_line(&mut status).unwrap();
    let mut length = 0;
    loop {
        let mut field = String::new();
        reader.read_line(&mut field).unwrap();
        if field == "\r\n" || field.is_empty() {
            break;
        }
        if let Some(value) = field.to_ascii_lowercase().strip_prefix("content-length:") {
            length = value.trim().parse().unwrap();
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    (status.trim_end().to_owned(), String::from_utf8_lossy(&body).into_owned())
}
