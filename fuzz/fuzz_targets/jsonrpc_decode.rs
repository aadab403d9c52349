//! Fuzz target: see `talaria_core::fuzzing::jsonrpc_decode`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    talaria_core::fuzzing::jsonrpc_decode(data);
});
