//! Tests of the module above.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use proptest::prelude::*;

use super::*;

/// A decoder result as the tests collect it: error lengths depend on chunking, so are dropped.
pub(in crate::codec::sse) type Item = Result<SseEvent, ()>;

/// What a whole run observed: the results and the connection-wide state at the end.
#[derive(Debug, PartialEq, Eq)]
pub(in crate::codec::sse) struct Outcome {
    pub(in crate::codec::sse) items: Vec<Item>,
    last_event_id: String,
    reconnection_time: Option<u64>,
}

/// Decodes `chunks` in order then finishes, checking the bound after every call.
pub(in crate::codec::sse) fn run(max: usize, chunks: &[&[u8]]) -> Outcome {
    let mut decoder = SseDecoder::with_max_event_len(max);
    let mut items = Vec::new();
    let mut push = |result: Result<SseEvent, SseError>| items.push(result.map_err(|_| ()));
    for chunk in chunks {
        decoder.decode(chunk, &mut push);
        assert!(decoder.buffered_len() <= max, "{} > {max}", decoder.buffered_len());
    }
    decoder.finish(&mut push);
    assert_eq!(decoder.buffered_len(), 0);
    Outcome { items, last_event_id: decoder.last_event_id().to_owned(), reconnection_time: decoder.reconnection_time() }
}

fn events(stream: &[u8]) -> Vec<Item> {
    run(1024, &[stream]).items
}

fn bytewise(stream: &[u8]) -> Vec<&[u8]> {
    stream.chunks(1).collect()
}

fn message(data: &str) -> Item {
    Ok(SseEvent::message(data))
}

#[test]
fn multi_line_data_is_joined_with_lf() {
    assert_eq!(events(b"data: a\ndata: b\ndata:\n\n"), [message("a\nb\n")]);
}

#[test]
fn only_one_leading_space_is_removed() {
    assert_eq!(events(b"data:x\n\ndata:  y \n\n"), [message("x"), message(" y ")]);
}

#[test]
fn comments_and_unknown_fields_are_ignored() {
    let stream = b": hello\n:\nfoo: bar\nDATA: no\ndata: yes\n: between\n\n";
    assert_eq!(events(stream), [message("yes")]);
}

#[test]
fn line_without_colon_is_a_field_with_empty_value() {
    let stream = b"data\ndata\n\nevent\ndata: x\n\n";
    assert_eq!(events(stream), [message("\n"), message("x")]);
}

#[test]
fn cr_lf_and_crlf_all_end_lines() {
    let expected = [message("a\nb"), message("c")];
    assert_eq!(events(b"data: a\rdata: b\r\rdata: c\r\r"), expected);
    assert_eq!(events(b"data: a\ndata: b\n\ndata: c\n\n"), expected);
    assert_eq!(events(b"data: a\r\ndata: b\r\n\r\ndata: c\r\n\r\n"), expected);
    assert_eq!(events(b"data: a\r\ndata: b\r\n\ndata: c\r\r\n"), expected);
}

#[test]
fn cr_at_chunk_end_followed_by_lf_is_one_line_ending() {
    let expected = [message("a\nb")];
    let outcome = run(1024, &[b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n"]);
    assert_eq!(outcome.items, expected);
    let outcome = run(1024, &[b"data: a\r", b"", b"\n", b"data: b\r", b"", b"\r"]);
    assert_eq!(outcome.items, expected);
}

#[test]
fn leading_bom_is_stripped_once() {
    assert_eq!(events(b"\xEF\xBB\xBFdata: x\n\n"), [message("x")]);
    let outcome = run(1024, &[b"\xEF", b"\xBB", b"\xBFdata: x\n\n"]);
    assert_eq!(outcome.items, [message("x")]);
    // A second mark is part of the field name, which is then unknown.
    assert!(events(b"\xEF\xBB\xBF\xEF\xBB\xBFdata: x\n\n").is_empty());
    // A mark later in the stream is data.
    assert_eq!(events(b"data: \xEF\xBB\xBF\n\n"), [message("\u{FEFF}")]);
}

#[test]
fn partial_bom_prefix_is_ordinary_input() {
    let mut decoder = SseDecoder::new();
    decoder.decode(b"\xEF", |_| {});
    assert_eq!(decoder.buffered_len(), 0);
    decoder.decode(b"\xBBa", |_| {});
    assert_eq!(decoder.buffered_len(), 3);
    let mut results = Vec::new();
    decoder.decode(b": x\n\n", |result| results.push(result));
    assert!(results.is_empty(), "the line is an unknown field");
}

#[test]
fn invalid_utf8_is_replaced() {
    assert_eq!(events(b"data: a\xFFb\n\n"), [message("a\u{FFFD}b")]);
}

#[test]
fn event_type_and_id_and_retry_are_reported() {
    let stream = b"event: update\nid: 7\nretry: 250\ndata: {}\n\n";
    let expected = SseEvent::message("{}").with_event("update").with_id("7").with_retry(250);
    assert_eq!(events(stream), [Ok(expected)]);
}

#[test]
fn event_type_resets_after_each_dispatch() {
    let stream = b"event: a\n\ndata: 1\n\nevent: b\nevent:\ndata: 2\n\n";
    assert_eq!(events(stream), [message("1"), message("2")]);
}

#[test]
fn last_event_id_persists_across_events() {
    let mut decoder = SseDecoder::new();
    let mut results = Vec::new();
    decoder.decode(b"id: 1\ndata: a\n\ndata: b\n\n", |result| {
        results.push(result);
    });
    assert_eq!(decoder.last_event_id(), "1");
    assert_eq!(results[1], Ok(SseEvent::message("b")), "the block id is reported only on its own event");
    decoder.decode(b"id\ndata: c\n\n", |_| {});
    assert_eq!(decoder.last_event_id(), "", "an empty id resets it");
    decoder.decode(b"id: 9\n", |_| {});
    assert_eq!(decoder.last_event_id(), "", "it changes only at dispatch");
    decoder.finish(|_| {});
    assert_eq!(decoder.last_event_id(), "", "an undispatched id is dropped at end of stream");
}

#[test]
fn id_with_nul_is_ignored() {
    let outcome = run(1024, &[b"id: 1\n\nid: a\0b\ndata: x\n\n"]);
    assert_eq!(outcome.items, [message("x")]);
    assert_eq!(outcome.last_event_id, "1");
}

#[test]
fn retry_requires_only_ascii_digits() {
    let cases: [(&[u8], Option<u64>); 7] = [
        (b"retry: 1500\n", Some(1500)),
        (b"retry:0\n", Some(0)),
        (b"retry: 15s\n", None),
        (b"retry: -1\n", None),
        (b"retry: \n", None),
        (b"retry:  15\n", None),
        (b"retry: 99999999999999999999\n", None),
    ];
    for (stream, expected) in cases {
        assert_eq!(run(1024, &[stream]).reconnection_time, expected, "{stream:?}");
    }
    let outcome = run(1024, &[b"retry: 10\nretry: x\ndata: a\n\n"]);
    assert_eq!(outcome.reconnection_time, Some(10));
    assert_eq!(outcome.items, [Ok(SseEvent::message("a").with_retry(10))]);
}

#[test]
fn data_with_empty_value_dispatches_an_empty_event() {
    let outcome = run(1024, &[b"id: prime-1\ndata:\n\n"]);
    assert_eq!(outcome.items, [Ok(SseEvent::message("").with_id("prime-1"))]);
}

#[test]
fn no_dispatch_when_data_buffer_is_empty() {
    let outcome = run(1024, &[b"event: x\nid: 3\nretry: 5\n\n\n\n"]);
    assert!(outcome.items.is_empty());
    assert_eq!(outcome.last_event_id, "3");
    assert_eq!(outcome.reconnection_time, Some(5));
}

#[test]
fn incomplete_event_is_discarded_at_end_of_stream() {
    assert!(events(b"data: a\n").is_empty());
    assert_eq!(events(b"data: a\n\r"), [message("a")], "a lone CR ends the blank line");
    assert_eq!(events(b"data: a\n\ndata: b"), [message("a")]);
}

#[test]
fn too_long_event_is_reported_once_then_decoding_recovers() {
    let stream = b"id: 1\ndata: 0123456789\ndata: more\n\nid: 2\ndata: ok\n\n";
    let outcome = run(16, &[stream]);
    assert_eq!(outcome.items, [Err(()), Ok(SseEvent::message("ok").with_id("2"))]);
    assert_eq!(run(16, &bytewise(stream)), outcome);
    // The dropped event's id never becomes the last event id.
    assert_eq!(run(16, &[b"id: 1\ndata: 0123456789abcdef\n\n"]).last_event_id, "");
}

#[test]
fn huge_line_is_reported_once_with_bounded_buffer() {
    let max = 64 * 1024;
    let mut decoder = SseDecoder::with_max_event_len(max);
    let mut results = Vec::new();
    decoder.decode(b"data: ", |result| results.push(result));
    let chunk = vec![b'x'; 1024 * 1024];
    for _ in 0..8 {
        decoder.decode(&chunk, |result| results.push(result));
        assert!(decoder.buffered_len() <= max);
    }
    decoder.decode(b"\n\ndata: ok\n\n", |result| results.push(result));
    assert_eq!(results.len(), 2);
    assert_eq!(results[0], Err(SseError::EventTooLong { len: 6 + 1024 * 1024, max }));
    assert_eq!(results[1], Ok(SseEvent::message("ok")));
    assert!(decoder.line.capacity() <= max);
}

#[test]
fn error_message_names_the_limit() {
    let error = SseError::EventTooLong { len: 9, max: 8 };
    assert_eq!(error.to_string(), "event of at least 9 bytes exceeds the limit of 8 bytes");
}

#[test]
fn finish_resets_the_stream_but_keeps_reconnection_state() {
    let mut decoder = SseDecoder::with_max_event_len(8);
    decoder.decode(b"retry: 1\nid: 4\n\ndata: 0123456789", |_| {});
    decoder.finish(|_| panic!("finish never emits"));
    let mut results = Vec::new();
    decoder.decode(b"\xEF\xBB\xBFdata: a\n\n", |result| results.push(result));
    assert_eq!(results, [Ok(SseEvent::message("a"))]);
    assert_eq!(decoder.last_event_id(), "4");
    assert_eq!(decoder.reconnection_time(), Some(1));
}

#[test]
fn event_type_defaults_to_message() {
    assert_eq!(SseEvent::default().event_type(), "message");
    assert_eq!(SseEvent::message("").with_event("").event_type(), "message");
    assert_eq!(SseDecoder::default().max_event_len(), DEFAULT_MAX_FRAME_LEN);
}

/// Splits `stream` at the given cut points (taken modulo its length).
pub(in crate::codec::sse) fn chunked<'a>(stream: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
    let mut cuts: Vec<usize> = cuts.iter().map(|cut| cut % (stream.len() + 1)).collect();
    cuts.sort_unstable();
    let mut chunks = Vec::new();
    let mut start = 0;
    for cut in cuts {
        chunks.push(&stream[start..cut]);
        start = cut;
    }
    chunks.push(&stream[start..]);
    chunks
}

/// Streams of plausible lines joined with random line endings.
fn line_stream() -> impl Strategy<Value = Vec<u8>> {
    let line = prop_oneof![
        "data:( )?[ -~]{0,30}",
        "event: [a-z]{0,8}",
        "id:( )?[ -~]{0,8}",
        "retry: [0-9a]{0,4}",
        ": [ -~]{0,10}",
        "[a-z]{0,5}(:[ -~]{0,5})?",
        Just(String::new()),
        Just(String::new()),
        "\u{FEFF}?data: [\u{80}-\u{10FFFF}]{0,4}",
    ];
    let ending = prop_oneof![Just("\n"), Just("\r"), Just("\r\n")];
    prop::collection::vec((line, ending), 0..24).prop_map(|lines| {
        let mut stream = Vec::new();
        for (line, ending) in lines {
            stream.extend_from_slice(line.as_bytes());
            stream.extend_from_slice(ending.as_bytes());
        }
        stream
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_bytes_are_chunking_invariant(
        stream in prop::collection::vec(
            prop_oneof![
                Just(b'\n'), Just(b'\r'), Just(b':'), Just(b' '), Just(0xEF),
                prop::sample::select(b"dataeventidretry".to_vec()), any::<u8>(),
            ],
            0..400,
        ),
        cuts in prop::collection::vec(any::<usize>(), 0..20),
    ) {
        let whole = run(64, &[&stream]);
        prop_assert_eq!(&whole, &run(64, &chunked(&stream, &cuts)));
        prop_assert_eq!(&whole, &run(64, &bytewise(&stream)));
    }

    #[test]
    fn line_streams_are_chunking_invariant(
        stream in line_stream(),
        cuts in prop::collection::vec(any::<usize>(), 0..20),
    ) {
        let whole = run(64, &[&stream]);
        prop_assert_eq!(&whole, &run(64, &chunked(&stream, &cuts)));
        prop_assert_eq!(&whole, &run(64, &bytewise(&stream)));
    }
}
