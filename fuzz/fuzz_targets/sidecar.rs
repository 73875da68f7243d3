//! Fuzz target `sidecar`: the bytes go to `dspk_fuzz_checks::sidecar`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| dspk_fuzz_checks::sidecar(data));
