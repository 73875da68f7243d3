//! Fuzz target `cli_time`: the bytes go to `dspk_fuzz_checks::cli_time`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| dspk_fuzz_checks::cli_time(data));
