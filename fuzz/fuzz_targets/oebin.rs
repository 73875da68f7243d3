//! Fuzz target `oebin`: the bytes go to `dspk_fuzz_checks::oebin`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| dspk_fuzz_checks::oebin(data));
