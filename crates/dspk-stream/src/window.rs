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

/// Threads that fill staging buffers at most.
const MAX_FILL_THREADS: usize = 16;

/// Threads that fill staging buffers by default: one per core, at most 16 (copies from the
/// page cache stop gaining before that; a computed source such as the synthetic recording
/// keeps gaining up to one per core).
pub fn fill_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_FILL_THREADS))
}
