//! Fuzz target: see `talaria_core::fuzzing::session_ops`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    talaria_core::fuzzing::session_ops(data);
});
