//! Fuzz target: see `talaria_core::fuzzing::auth_inputs`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    talaria_core::fuzzing::auth_inputs(data);
});
