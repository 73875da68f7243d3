//! Fuzz target `legacy_header`: the bytes go to `dspk_fuzz_checks::legacy_header`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| dspk_fuzz_checks::legacy_header(data));
