//! How large a device pass's windows are by default, and how many threads fill them.

use cubecl::client::Client;
use dspk_kernels::max_window_samples;
use dspk_types::{DspError, DspResult, RationalTime, RecordingInfo};

/// The samples of one second of `info` (at least one).
pub fn one_second(info: &RecordingInfo) -> DspResult<u64> {
    let second = RationalTime::new(1, 1)?;
    Ok(info.sample_rate.samples_for_duration(second)?.max(1))
}

/// Samples per window of a pass of `info` on `client`'s device: `asked` (at least 1), else one
/// second within what one device buffer holds.
pub fn window_samples(client: &Client, info: &RecordingInfo, asked: Option<u64>) -> DspResult<u64> {
    match asked {
        Some(0) => Err(DspError::config("a window needs at least 1 sample")),
        Some(n) => Ok(n),
        None => Ok(one_second(info)?
            .min(max_window_samples(
                client,
                info.channel_count(),
                info.format,
            ))
            .max(1)),
    }
}

/// Seconds a preprocessing window owns by default: Kilosort's batch (60,000 samples at
/// 30 kHz). A chain's launches and halos cost per window, so longer windows run faster until
/// the device is full: on the H200 (BENCHMARKS.md, issue 32), K1a of 300 s took 0.553–0.560 s
/// in 2 s windows against 0.731–0.733 s in 1 s and 0.63–0.83 s in 4 s. The output is the same
/// bits for any window.
pub const PREPROCESS_WINDOW_SECONDS: u64 = 2;

/// Samples each window of a preprocessing pass of `info` on `client`'s device owns: `asked`
/// (at least 1), else [`PREPROCESS_WINDOW_SECONDS`], within what one device buffer holds with
/// the chain's halos (`halo` samples in all) read beside it.
pub fn preprocess_window_samples(
    client: &Client,
    info: &RecordingInfo,
    asked: Option<u64>,
    halo: u64,
) -> DspResult<u64> {
    match asked {
        Some(0) => Err(DspError::config("a window needs at least 1 sample")),
        Some(n) => Ok(n),
        None => Ok(default_preprocess_window(
            one_second(info)?,
            max_window_samples(client, info.channel_count(), info.format),
            halo,
        )),
    }
}

/// [`PREPROCESS_WINDOW_SECONDS`] of `second` samples, with `halo` samples beside it, within
/// `fits` samples (one device buffer); at least 1.
fn default_preprocess_window(second: u64, fits: u64, halo: u64) -> u64 {
    second
        .saturating_mul(PREPROCESS_WINDOW_SECONDS)
        .min(fits.saturating_sub(halo))
        .max(1)
}

/// Threads that fill staging buffers at most.
const MAX_FILL_THREADS: usize = 16;

/// Threads that fill staging buffers by default: one per core, at most 16 (copies from the
/// page cache stop gaining before that; a computed source such as the synthetic recording
/// keeps gaining up to one per core).
pub fn fill_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_FILL_THREADS))
}

#[cfg(test)]
mod tests {
    use super::default_preprocess_window;
    use dspk_kernels::max_window_samples_with;
    use dspk_types::SampleFormat;

    #[test]
    fn a_preprocessing_window_is_two_seconds_where_it_fits_with_its_halos() {
        // 384 int16 channels at 30 kHz, the kilosort4 preset's halos (1,849 a side): two
        // seconds fit lavapipe's 128 MiB binding (87,381 samples of f32).
        let lavapipe = max_window_samples_with(128 << 20, 384, SampleFormat::I16);
        assert_eq!(lavapipe, 87_381);
        assert_eq!(default_preprocess_window(30_000, lavapipe, 3_698), 60_000);
        // 1,024 channels: 32,768 samples a buffer, the halos taken from it.
        let wide = max_window_samples_with(128 << 20, 1024, SampleFormat::I16);
        assert_eq!(
            default_preprocess_window(30_000, wide, 3_698),
            32_768 - 3_698
        );
        // Halos past the buffer: one sample (the pass then refuses the window it cannot hold).
        assert_eq!(default_preprocess_window(30_000, 1_000, 3_698), 1);
        // A slow rate: two of its seconds.
        assert_eq!(default_preprocess_window(1_000, lavapipe, 0), 2_000);
    }
}
