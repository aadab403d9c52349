//! Fuzz target: see `talaria_core::fuzzing::line_decode`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    talaria_core::fuzzing::line_decode(data);
});
