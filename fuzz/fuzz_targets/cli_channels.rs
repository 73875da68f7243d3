//! Fuzz target `cli_channels`: the bytes go to `dspk_fuzz_checks::cli_channels`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| dspk_fuzz_checks::cli_channels(data));
