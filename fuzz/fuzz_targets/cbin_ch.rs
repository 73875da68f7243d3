//! Fuzz target `cbin_ch`: the bytes go to `dspk_fuzz_checks::cbin_ch`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| dspk_fuzz_checks::cbin_ch(data));
