//! Fuzz target: see `talaria_core::fuzzing::typed_decode`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    talaria_core::fuzzing::typed_decode(data);
});
