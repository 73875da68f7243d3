//! Fuzz target `channel_map_toml`: the bytes go to `dspk_fuzz_checks::channel_map_toml`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| dspk_fuzz_checks::channel_map_toml(data));
