//! Fuzz target `nwb`: the bytes go to `dspk_fuzz_checks::nwb`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| dspk_fuzz_checks::nwb(data));
