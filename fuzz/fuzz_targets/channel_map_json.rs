//! Fuzz target `channel_map_json`: the bytes go to `dspk_fuzz_checks::channel_map_json`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| dspk_fuzz_checks::channel_map_json(data));
