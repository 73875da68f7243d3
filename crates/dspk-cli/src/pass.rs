//! The device pass shared by `scan` and `convert`: stored windows stream from the source,
//! cross to the device once, compact, and are decoded there.
//!
//! [`device_pass`] is how the program streams a recording's bytes to the device, through
//! dspk-device's `Uploader`; its callers only see decoded windows.

use std::time::{Duration, Instant};

use cubecl::client::Client;
use cubecl::server::Handle;
use dspk_device::upload::{
    Destination, StagingKernel, StagingLaunch, Uploader, compile_staging_kernel_for,
};
use dspk_kernels::max_window_samples;
use dspk_kernels::{
    DecodedWindow, Decoder, STAGED_DECODE_BUFFERS, STAGED_DECODE_ENTRY, STAGED_DECODE_WGSL,
    StagedDecode, sync,
};
use dspk_types::{
    ChunkSchedule, DspResult, HaloWindow, MemoryOrder, RationalTime, RecordingInfo,
    RecordingSource, SignalUnit,
};

use crate::error::{CliError, CliResult};
use crate::progress::Progress;

/// How stored values become the values a pass works on: per channel `stored × gain + offset`,
/// in `unit`. Voltages are brought to µV; other units are kept.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Scaling {
    /// Per-channel gain.
    pub(crate) gains: Vec<f32>,
    /// Per-channel offset.
    pub(crate) offsets: Vec<f32>,
    /// Per-channel unit of the scaled values.
    pub(crate) units: Vec<SignalUnit>,
}

impl Scaling {
    /// The scaling of `info`'s channels to µV (V and mV channels are converted; every other
    /// unit is left as the recording states it).
    pub(crate) fn microvolts(info: &RecordingInfo) -> Self {
        let mut s = Scaling {
            gains: Vec::with_capacity(info.channel_count()),
            offsets: Vec::with_capacity(info.channel_count()),
            units: Vec::with_capacity(info.channel_count()),
        };
        for ch in &info.channels {
            let (factor, unit) = match ch.unit {
                SignalUnit::Volt => (1e6, SignalUnit::Microvolt),
                SignalUnit::Millivolt => (1e3, SignalUnit::Microvolt),
                ref other => (1.0, other.clone()),
            };
            s.gains.push((f64::from(ch.gain) * factor) as f32);
            s.offsets.push((f64::from(ch.offset) * factor) as f32);
            s.units.push(unit);
        }
        s
    }

    /// The unit every channel shares, if they all share one.
    pub(crate) fn common_unit(&self) -> Option<&SignalUnit> {
        let first = self.units.first()?;
        self.units.iter().all(|u| u == first).then_some(first)
    }
}

/// The environment variable that picks where a device pass decodes (for measurements):
/// `staging` (the default) or `copy` (see [`DecodePath`]).
pub(crate) const DECODE_ENV: &str = "DSPK_DECODE";

/// Where a device pass decodes its windows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DecodePath {
    /// The decode kernel reads each window where it was staged, in pinned host memory, across
    /// the bus (int16 windows on Vulkan; every other case takes
    /// [`AfterCopy`](Self::AfterCopy)).
    InStaging,
    /// Each window is copied into a device buffer, then decoded there.
    AfterCopy,
}

impl DecodePath {
    /// The name [`DECODE_ENV`] takes for this path.
    pub(crate) fn name(self) -> &'static str {
        match self {
            DecodePath::InStaging => "staging",
            DecodePath::AfterCopy => "copy",
        }
    }

    /// The path [`DECODE_ENV`] names; [`InStaging`](Self::InStaging) when it is unset or empty.
    pub(crate) fn from_env() -> CliResult<Self> {
        match std::env::var(DECODE_ENV) {
            Ok(v) if v.is_empty() => Ok(DecodePath::InStaging),
            Ok(v) => [DecodePath::InStaging, DecodePath::AfterCopy]
                .into_iter()
                .find(|p| p.name() == v)
                .ok_or_else(|| {
                    CliError::new(format!(
                        "{DECODE_ENV}={v:?} names no decode path; use \"staging\" or \"copy\""
                    ))
                }),
            Err(std::env::VarError::NotPresent) => Ok(DecodePath::InStaging),
            Err(std::env::VarError::NotUnicode(v)) => Err(CliError::new(format!(
                "{DECODE_ENV}={v:?} is not valid UTF-8; use \"staging\" or \"copy\""
            ))),
        }
    }
}

/// What a device pass did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct PassReport {
    /// Windows decoded.
    pub(crate) windows: usize,
    /// Samples per channel owned by the windows (each counted once).
    pub(crate) samples: u64,
    /// Stored bytes read from the source and sent to the device (halos included).
    pub(crate) stored_bytes: u64,
    /// Wall time from setting up the decoder to the device finishing the last window.
    pub(crate) wall: Duration,
    /// The part of `wall` spent before the first window was read: device buffers, staging
    /// buffers (pinned host memory on Vulkan), fill threads.
    pub(crate) setup: Duration,
    /// Where the windows were decoded.
    pub(crate) decode: DecodePath,
}

/// Streams `schedule`'s windows of every channel of `source` to the device, decodes each
/// there to `f32` channel-major with `scaling`, and hands it to `on_window` with its window
/// (the owned part is `window.valid_local`). `progress` advances by each window's stored
/// bytes.
///
/// Each window crosses to the device once, compact, in the source's own stored order
/// ([`RecordingSource::native_stored_order`]; the decode kernel transposes a time-major window):
/// [`Uploader`] fills a staging buffer (pinned host memory on Vulkan) in place from a pool of
/// threads. With [`DecodePath::InStaging`] (asked by `decode`, and possible: int16 windows in
/// host staging) the decode kernel then reads the window there, across the bus;
/// otherwise the uploader queues a copy into the [`Decoder`]'s input buffer, sized once for
/// the schedule's longest window, and the decoder's kernel runs on that. The stored bytes of
/// window i+1 are read while the device decodes window i, and `on_window(i)` runs on this
/// thread meanwhile.
pub(crate) fn device_pass(
    client: &Client,
    source: &dyn RecordingSource,
    schedule: &ChunkSchedule,
    scaling: &Scaling,
    decode: DecodePath,
    progress: &Progress,
    mut on_window: impl FnMut(&HaloWindow, &DecodedWindow<'_>) -> DspResult<()>,
) -> DspResult<PassReport> {
    let started = Instant::now();
    let info = source.info();
    let mut report = PassReport {
        windows: 0,
        samples: 0,
        stored_bytes: 0,
        wall: Duration::ZERO,
        setup: Duration::ZERO,
        decode: DecodePath::AfterCopy,
    };
    let windows = schedule.windows();
    if windows.is_empty() {
        return Ok(report);
    }
    let channels = info.channel_count();
    let order = source.native_stored_order();
    let max_samples = schedule.max_read_samples() as usize;
    let frame_bytes = info.frame_bytes();
    let capacity = (max_samples * frame_bytes) as u64;
    // Decoding in staging: its kernel compiles on a helper thread while the uploader pins its
    // staging memory, and the CubeCL decode kernel is not compiled ahead.
    let in_staging = decode == DecodePath::InStaging
        && Decoder::decodes_in_staging_for(info.format, order, channels, max_samples);
    // The decoder first: it refuses a window the device cannot hold before anything is pinned.
    let new_decoder = if in_staging {
        Decoder::new_for_staging
    } else {
        Decoder::new
    };
    let mut decoder = new_decoder(
        client,
        channels,
        max_samples,
        info.format,
        order,
        &scaling.gains,
        &scaling.offsets,
    )?;
    let compiling = in_staging.then(|| {
        let client = client.clone();
        std::thread::Builder::new()
            .name("dspk-kernel".into())
            .spawn(move || compile_decode_in_staging(&client))
    });
    let mut uploader = Uploader::new(client, capacity, fill_threads())?;
    let kernel = match compiling {
        Some(Ok(thread)) => match thread.join() {
            Ok(compiled) => compiled?,
            Err(panic) => std::panic::resume_unwind(panic),
        },
        // No thread to be had: compile here.
        Some(Err(_)) => compile_decode_in_staging(client)?,
        None => None,
    }
    .filter(|_| uploader.runs_staging_kernels() && capacity <= uploader.staging_kernel_capacity());
    let stored = decoder.stored_handle().clone();
    if kernel.is_some() {
        report.decode = DecodePath::InStaging;
    } else if in_staging {
        // The uploader cannot run it (no host staging here): the copy path after all.
        decoder.warm_up()?;
    }
    report.setup = started.elapsed();
    let target =
        |decoder: &Decoder, window: &HaloWindow| Target::of(decoder, &kernel, &stored, window);
    let first = target(&decoder, &windows[0])?;
    upload_window(&mut uploader, &first, source, order, &windows[0], || Ok(()))?;
    for (i, window) in windows.iter().enumerate() {
        let next = match windows.get(i + 1) {
            Some(w) => Some((w, target(&decoder, w)?)),
            None => None,
        };
        let decoded = match kernel {
            Some(_) => decoder.staged_window(window.read_len())?,
            None => decoder.decode_uploaded(window.read_len())?,
        };
        // Read and queue the next window while the device decodes this one; this window's
        // host work runs while the fill threads read.
        let mut this_window = || on_window(window, &decoded);
        match next {
            Some((next, to)) => {
                upload_window(&mut uploader, &to, source, order, next, this_window)?
            }
            None => this_window()?,
        }
        let bytes = window.read_len() as u64 * frame_bytes as u64;
        report.windows += 1;
        report.samples += window.valid_len() as u64;
        report.stored_bytes += bytes;
        progress.advance(bytes);
    }
    sync(client)?;
    report.wall = started.elapsed();
    Ok(report)
}

/// The samples of one second of `info` (at least one).
pub(crate) fn one_second(info: &RecordingInfo) -> DspResult<u64> {
    let second = RationalTime::new(1, 1)?;
    Ok(info.sample_rate.samples_for_duration(second)?.max(1))
}

/// The window of a device pass: `asked` (`--window-samples`, at least 1), else one second of
/// `info` within what one device buffer of `client` holds.
pub(crate) fn window_samples(
    client: &Client,
    info: &RecordingInfo,
    asked: Option<u64>,
) -> CliResult<u64> {
    match asked {
        Some(0) => Err(CliError::new("--window-samples must be at least 1")),
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

/// Threads that fill staging buffers: one per core, at most [`MAX_FILL_THREADS`] (copies from
/// the page cache stop gaining before that; a computed source such as the synthetic recording
/// keeps gaining up to one per core).
pub(crate) fn fill_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_FILL_THREADS))
}

/// dspk-kernels' decode in staging, compiled for `client`'s device (`None` where it has no
/// staging kernels).
fn compile_decode_in_staging(client: &Client) -> DspResult<Option<StagingKernel>> {
    compile_staging_kernel_for(
        client,
        "dspk decode in staging",
        STAGED_DECODE_WGSL,
        STAGED_DECODE_ENTRY,
        STAGED_DECODE_BUFFERS,
    )
}

/// Where a window's stored bytes go once staged.
enum Target<'k> {
    /// Copied into the decoder's input buffer.
    Copy(Handle),
    /// Decoded where they are staged.
    Kernel(&'k StagingKernel, Box<StagedDecode>),
}

impl<'k> Target<'k> {
    /// Where `window` goes: decoded in staging by `kernel` where there is one, else copied to
    /// `stored`.
    fn of(
        decoder: &Decoder,
        kernel: &'k Option<StagingKernel>,
        stored: &Handle,
        window: &HaloWindow,
    ) -> DspResult<Self> {
        if let Some(kernel) = kernel
            && let Some(launch) = decoder.staged_decode(window.read_len())?
        {
            return Ok(Target::Kernel(kernel, Box::new(launch)));
        }
        Ok(Target::Copy(stored.clone()))
    }
}

/// Queues `window`'s stored bytes, in `order`, to `target`, running `during` on this thread
/// while the fill threads read.
fn upload_window(
    uploader: &mut Uploader,
    target: &Target<'_>,
    source: &dyn RecordingSource,
    order: MemoryOrder,
    window: &HaloWindow,
    during: impl FnOnce() -> DspResult<()>,
) -> DspResult<()> {
    let info = source.info();
    let n = window.read_len();
    let frame_bytes = info.frame_bytes();
    let start = window.read_global.start;
    let len = n * frame_bytes;
    match order {
        // A run of frames: any whole-frame piece is a sample range.
        MemoryOrder::TimeMajor => {
            let fill = |offset: usize, piece: &mut [u8]| {
                let first = start + (offset / frame_bytes) as u64;
                let last = first + (piece.len() / frame_bytes) as u64;
                source.read_stored_native(first..last, piece).map(drop)
            };
            queue(uploader, target, len, frame_bytes, fill, during)
        }
        // Channel runs: any whole-run piece is a range of channels.
        MemoryOrder::ChannelMajor => {
            let run = n * info.format.bytes();
            let fill = |offset: usize, piece: &mut [u8]| {
                let first = offset / run;
                let chans: Vec<usize> = (first..first + piece.len() / run).collect();
                source.read_stored(&chans, window.read_global.clone(), piece)
            };
            queue(uploader, target, len, run, fill, during)
        }
    }
}

/// Fills `len` bytes through `fill` in pieces of whole `align` units and queues them to
/// `target`, running `during` meanwhile.
fn queue(
    uploader: &mut Uploader,
    target: &Target<'_>,
    len: usize,
    align: usize,
    fill: impl Fn(usize, &mut [u8]) -> DspResult<()> + Sync,
    during: impl FnOnce() -> DspResult<()>,
) -> DspResult<()> {
    let to = match target {
        Target::Copy(stored) => Destination::Copy(stored),
        Target::Kernel(kernel, launch) => Destination::Kernel(StagingLaunch {
            kernel,
            buffers: &launch.buffers,
            params: &launch.params,
            workgroups: launch.workgroups,
        }),
    };
    uploader.upload(to, len, align, fill, during)
}

#[cfg(test)]
mod tests {
    use super::*;
    use dspk_types::{ChannelInfo, SampleFormat, SampleRate};

    #[test]
    fn voltages_become_microvolts() {
        let rate = SampleRate::from_ratio(1000, 1).unwrap();
        let mut info =
            RecordingInfo::new("r", 4, 10, rate, SampleFormat::I16, MemoryOrder::TimeMajor);
        let unit = |u| ChannelInfo {
            name: "c".into(),
            gain: 0.5,
            offset: -0.25,
            unit: u,
        };
        info.channels = vec![
            unit(SignalUnit::Volt),
            unit(SignalUnit::Millivolt),
            unit(SignalUnit::Microvolt),
            unit(SignalUnit::Dimensionless),
        ];
        let s = Scaling::microvolts(&info);
        assert_eq!(s.gains, vec![5e5, 500.0, 0.5, 0.5]);
        assert_eq!(s.offsets, vec![-2.5e5, -250.0, -0.25, -0.25]);
        assert_eq!(s.units[0], SignalUnit::Microvolt);
        assert_eq!(s.units[1], SignalUnit::Microvolt);
        assert_eq!(s.units[3], SignalUnit::Dimensionless);
        assert_eq!(s.common_unit(), None);
        info.channels.truncate(3);
        assert_eq!(
            Scaling::microvolts(&info).common_unit(),
            Some(&SignalUnit::Microvolt)
        );
    }
}
