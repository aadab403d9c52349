//! The Server-Sent Events encoder: [`encode_event`] and [`encode_comment`].

use crate::alloc_prelude::*;
use memchr::memchr2;

use crate::codec::sse::SseEvent;

/// Appends `event` to `out` in Server-Sent Events format.
///
/// The layout is fixed: `event: <type>\n` if the type is set, `id: <id>\n` if the id is set,
/// `retry: <ms>\n` if set, then one `data: <line>\n` per line of the data (split at CRLF, LF or
/// CR, so an empty data string gives one `data: \n`), then a blank line. CR and LF are removed
/// from the type and id so that they cannot break framing, and NUL is removed from the id since a
/// client would ignore the whole field otherwise. Decoding the output yields `event` back, with
/// CRLF and CR in its data turned into LF (and an empty type read back as `None`).
///
/// # Examples
///
/// ```
/// use talaria_core::codec::{encode_event, SseEvent};
///
/// let mut out = Vec::new();
/// encode_event(&SseEvent::message("a\nb").with_id("1"), &mut out);
/// assert_eq!(out, b"id: 1\ndata: a\ndata: b\n\n");
/// ```
pub fn encode_event(event: &SseEvent, out: &mut Vec<u8>) {
    if let Some(event_type) = &event.event {
        out.extend_from_slice(b"event: ");
        out.extend(event_type.bytes().filter(|byte| !matches!(byte, b'\r' | b'\n')));
        out.push(b'\n');
    }
    if let Some(id) = &event.id {
        out.extend_from_slice(b"id: ");
        out.extend(id.bytes().filter(|byte| !matches!(byte, b'\r' | b'\n' | b'\0')));
        out.push(b'\n');
    }
    if let Some(retry) = event.retry {
        out.extend_from_slice(b"retry: ");
        out.extend_from_slice(retry.to_string().as_bytes());
        out.push(b'\n');
    }
    write_lines(b"data: ", &event.data, out);
    out.push(b'\n');
}

/// Appends a comment to `out`, such as a keep-alive, followed by a blank line.
///
/// Each line of `text` (split at CRLF, LF or CR) becomes one `: <line>\n`; a blank line follows.
/// Clients ignore comments, so they serve to keep idle connections open; the blank line dispatches
/// nothing since no data is pending between events.
///
/// # Examples
///
/// ```
/// use talaria_core::codec::encode_comment;
///
/// let mut out = Vec::new();
/// encode_comment("keep-alive", &mut out);
/// assert_eq!(out, b": keep-alive\n\n");
/// ```
pub fn encode_comment(text: &str, out: &mut Vec<u8>) {
    write_lines(b": ", text, out);
    out.push(b'\n');
}

/// Writes `prefix` + line + `\n` for each line of `text`, split at CRLF, LF or CR.
fn write_lines(prefix: &[u8], text: &str, out: &mut Vec<u8>) {
    let mut rest = text.as_bytes();
    loop {
        out.extend_from_slice(prefix);
        let Some(end) = memchr2(b'\r', b'\n', rest) else {
            out.extend_from_slice(rest);
            out.push(b'\n');
            return;
        };
        let (line, ending) = rest.split_at(end);
        out.extend_from_slice(line);
        out.push(b'\n');
        let ending_len = if ending.starts_with(b"\r\n") { 2 } else { 1 };
        rest = ending.get(ending_len..).unwrap_or_default();
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::codec::sse::decode::tests::{chunked, run, Item};
    use crate::codec::DEFAULT_MAX_FRAME_LEN;

    #[test]
    fn encoder_layout_is_stable() {
        let mut out = Vec::new();
        let event = SseEvent::message("line one\r\nline two\rline three\n")
            .with_event("notification")
            .with_id("42")
            .with_retry(3000);
        encode_event(&event, &mut out);
        encode_event(&SseEvent::message(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#), &mut out);
        encode_event(&SseEvent::message("").with_id("priming-0"), &mut out);
        encode_comment("keep-alive", &mut out);
        // Line endings are made visible so that trailing spaces and blank lines show in the file.
        let visible = String::from_utf8(out).unwrap().replace('\n', "\\n\n");
        insta::assert_snapshot!("encoded_events", visible);
    }

    #[test]
    fn encoder_strips_line_breaks_from_type_and_id() {
        let mut out = Vec::new();
        let event = SseEvent::message("x").with_event("a\r\nb").with_id("1\n\0\r2");
        encode_event(&event, &mut out);
        assert_eq!(out, b"event: ab\nid: 12\ndata: x\n\n");
        let mut comment = Vec::new();
        encode_comment("a\nb", &mut comment);
        assert_eq!(comment, b": a\n: b\n\n");
    }

    fn arbitrary_event() -> impl Strategy<Value = SseEvent> {
        let field = "[^\r\n\0]{0,12}";
        (
            prop::option::of("[^\r\n\0]{1,12}"),
            "(\\PC|\r|\n|\r\n|\0){0,40}",
            prop::option::of(field),
            prop::option::of(any::<u64>()),
        )
            .prop_map(|(event, data, id, retry)| SseEvent { event, data, id, retry })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn encoded_events_decode_back(
            events in prop::collection::vec(arbitrary_event(), 1..6),
            cuts in prop::collection::vec(any::<usize>(), 0..10),
        ) {
            let mut stream = Vec::new();
            for event in &events {
                encode_event(event, &mut stream);
                encode_comment("keep-alive", &mut stream);
            }
            let expected: Vec<Item> = events
                .iter()
                .map(|event| {
                    let data = event.data.replace("\r\n", "\n").replace('\r', "\n");
                    Ok(SseEvent { data, ..event.clone() })
                })
                .collect();
            let max = DEFAULT_MAX_FRAME_LEN;
            prop_assert_eq!(&run(max, &[&stream]).items, &expected);
            prop_assert_eq!(&run(max, &chunked(&stream, &cuts)).items, &expected);
        }
    }
}
