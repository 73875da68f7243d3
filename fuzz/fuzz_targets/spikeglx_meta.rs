//! Fuzz target `spikeglx_meta`: the bytes go to `dspk_fuzz_checks::spikeglx_meta`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| dspk_fuzz_checks::spikeglx_meta(data));
