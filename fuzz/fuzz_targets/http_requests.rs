//! Fuzz target: see `talaria_core::fuzzing::http_requests`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    talaria_core::fuzzing::http_requests(data);
});
