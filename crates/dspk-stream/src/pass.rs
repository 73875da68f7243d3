//! The device pass: a recording's windows streamed onto one device, decoded there, and handed
//! to the caller one by one.

use std::sync::Arc;
use std::time::{Duration, Instant};

use cubecl::client::Client;
use dspk_device::upload::{StagingKernel, Uploader};
use dspk_kernels::{DecodedWindow, Decoder, EdgePadder, sync};
use dspk_types::{
    DspError, DspResult, HaloWindow, NoProgress, ProgressEvent, ProgressSink, RecordingSource,
    Scaling, SlicedRecording, StoredWindow,
};

use crate::route::DecodeRoute;
use crate::staged::{Target, compile_decode_in_staging};
use crate::window::fill_threads;

/// What the callback of [`DevicePass::run`] tells the pass after a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Go on with the next window.
    Continue,
    /// Stop after this window: the pass ends cleanly (the device is synchronised, the staging
    /// buffers are idle) and reports the windows done so far.
    Stop,
}

/// The progress stage a device pass reports (`done` and `total` in stored bytes).
pub const PASS_STAGE: &str = "device pass";

/// What a device pass did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PassReport {
    /// Windows decoded.
    pub windows: usize,
    /// Samples per channel owned by those windows (each counted once).
    pub samples: u64,
    /// Stored bytes read from the source and sent to the device (halos included).
    pub stored_bytes: u64,
    /// Wall time from the start of [`DevicePass::run`] to the device finishing the last window.
    pub wall: Duration,
    /// The part of `wall` spent before the first window was read: the decoder's device
    /// buffers, the staging buffers (pinned host memory on Vulkan), the fill threads, the
    /// decode kernel.
    pub setup: Duration,
    /// Where the windows were decoded.
    pub route: DecodeRoute,
    /// Whether the callback stopped the pass before its last window.
    pub stopped_early: bool,
}

impl PassReport {
    /// Stored bytes per second of wall time (0 for an instant pass).
    pub fn bytes_per_second(&self) -> f64 {
        let s = self.wall.as_secs_f64();
        if s > 0.0 {
            self.stored_bytes as f64 / s
        } else {
            0.0
        }
    }
}

/// A pass of a recording's windows onto one device: each window's stored bytes cross the bus
/// once, compact, in the source's own order, and are decoded there to `f32`, channel-major,
/// scaled per channel.
///
/// Built from a client, a source and any list of [`HaloWindow`]s (a whole
/// [`ChunkSchedule`](dspk_types::ChunkSchedule), every n-th window of one, a few); by default
/// every channel, scaled to µV ([`Scaling::microvolts`]), no progress, decoded where it is
/// fastest. [`run`](Self::run) does the work.
///
/// How: a staging buffer (pinned host memory on Vulkan) is filled in place by a pool of
/// threads ([`Uploader`]); an int16 window is then decoded where it was staged, by a kernel
/// that reads it across the bus ([`DecodeRoute::Staging`]); any other window is copied into a
/// device buffer and decoded there ([`DecodeRoute::Copy`]). Window i+1 is read while the device
/// decodes window i and the callback works on it.
pub struct DevicePass<'a> {
    client: Client,
    source: Arc<dyn RecordingSource>,
    windows: Vec<HaloWindow>,
    channels: Option<Vec<usize>>,
    scaling: Option<Scaling>,
    progress: &'a dyn ProgressSink,
    route: DecodeRoute,
    threads: usize,
}

impl<'a> DevicePass<'a> {
    /// A pass of `windows` of `source` on `client`'s device (every channel, µV, the fastest
    /// route).
    pub fn new(
        client: &Client,
        source: Arc<dyn RecordingSource>,
        windows: Vec<HaloWindow>,
    ) -> Self {
        Self {
            client: client.clone(),
            source,
            windows,
            channels: None,
            scaling: None,
            progress: &NoProgress,
            route: DecodeRoute::Staging,
            threads: fill_threads(),
        }
    }

    /// Only these channels of the source, in this order (indices into the source's channels);
    /// each decoded window holds them in this order.
    pub fn channels(mut self, channels: Vec<usize>) -> Self {
        self.channels = Some(channels);
        self
    }

    /// Scales each channel with `scaling` (one entry per channel of the *source*, before any
    /// [`channels`](Self::channels) selection) instead of µV.
    pub fn scaling(mut self, scaling: Scaling) -> Self {
        self.scaling = Some(scaling);
        self
    }

    /// Reports progress to `sink` ([`PASS_STAGE`], stored bytes done of the total).
    pub fn progress(mut self, sink: &'a dyn ProgressSink) -> Self {
        self.progress = sink;
        self
    }

    /// Where to decode when there is a choice (for measurements): [`DecodeRoute::Staging`],
    /// the default, is taken only where the window and the device allow it; otherwise and
    /// for [`DecodeRoute::Copy`] windows are copied, then decoded. The report says which ran.
    pub fn route(mut self, route: DecodeRoute) -> Self {
        self.route = route;
        self
    }

    /// Fills staging buffers from `threads` threads (at least one) instead of one per core.
    pub fn fill_threads(mut self, threads: usize) -> Self {
        self.threads = threads.max(1);
        self
    }

    /// Streams the windows, in order, handing each decoded window (channel-major, `channels ×
    /// window.padded_len()` values: the samples read, with the halo that reaches past the
    /// recording made up by the window's edge mode, padded on the device; the owned part is
    /// `window.valid_padded()`) to `on_window` on
    /// this thread, which may stop the pass ([`Flow::Stop`]). The decoded window is valid until
    /// `on_window` returns. The first error, of the source, the device or `on_window`, ends the
    /// pass and is returned.
    ///
    /// Refused before anything is allocated: a channel that does not exist, a scaling of the
    /// wrong length, a window outside the recording, and a window larger than one device
    /// buffer (the error says how many samples fit).
    pub fn run(
        self,
        mut on_window: impl FnMut(&HaloWindow, &DecodedWindow<'_>) -> DspResult<Flow>,
    ) -> DspResult<PassReport> {
        let started = Instant::now();
        let Some(plan) = Plan::new(
            &self.source,
            self.channels.as_deref(),
            self.scaling.as_ref(),
            &self.windows,
        )?
        else {
            return Ok(PassReport::empty(started));
        };
        let mut next = 0;
        let claim = || {
            next += 1;
            (next <= self.windows.len()).then_some(next - 1)
        };
        let mut done = 0;
        let progress = self.progress;
        progress.report(&ProgressEvent::new(
            PASS_STAGE,
            0,
            plan.total_bytes,
            "bytes",
        ));
        drive(
            &self.client,
            &plan,
            &self.windows,
            Settings {
                route: self.route,
                threads: self.threads,
                started,
                take_turns: false,
            },
            claim,
            |_, w, decoded| on_window(w, decoded),
            |bytes| {
                done += bytes;
                progress.report(&ProgressEvent::new(
                    PASS_STAGE,
                    done,
                    plan.total_bytes,
                    "bytes",
                ));
            },
        )
    }
}

impl PassReport {
    /// No windows, no time.
    pub(crate) fn empty(started: Instant) -> Self {
        Self {
            windows: 0,
            samples: 0,
            stored_bytes: 0,
            wall: started.elapsed(),
            setup: Duration::ZERO,
            route: DecodeRoute::Copy,
            stopped_early: false,
        }
    }
}

/// What every device of a pass shares, checked once: the source as the pass reads it (the
/// channel selection applied), its scaling, and the sizes of its windows.
pub(crate) struct Plan {
    pub(crate) source: Arc<dyn RecordingSource>,
    pub(crate) scaling: Scaling,
    /// The longest window read, in samples.
    pub(crate) max_samples: usize,
    /// The longest window once padded at the recording's edges (0 when no window is padded).
    pub(crate) max_padded: usize,
    /// Stored bytes of all windows (halos included).
    pub(crate) total_bytes: u64,
}

impl Plan {
    /// The plan of `windows` of `source` (only `channels`, scaled by `scaling`, default µV);
    /// `None` when there are no windows.
    pub(crate) fn new(
        source: &Arc<dyn RecordingSource>,
        channels: Option<&[usize]>,
        scaling: Option<&Scaling>,
        windows: &[HaloWindow],
    ) -> DspResult<Option<Self>> {
        let (source, scaling) = selected(source, channels, scaling)?;
        let info = source.info();
        let Some(max_samples) = windows.iter().map(HaloWindow::read_len).max() else {
            return Ok(None);
        };
        if let Some(w) = windows.iter().find(|w| w.read_global.end > info.samples) {
            return Err(DspError::SampleRange {
                start: w.read_global.start,
                end: w.read_global.end,
                total: info.samples,
            });
        }
        let max_padded = windows
            .iter()
            .filter(|w| w.pad_left + w.pad_right > 0)
            .map(HaloWindow::padded_len)
            .max()
            .unwrap_or(0);
        let frame_bytes = info.frame_bytes() as u64;
        let total_bytes = windows
            .iter()
            .map(|w| w.read_len() as u64 * frame_bytes)
            .sum();
        Ok(Some(Self {
            source,
            scaling,
            max_samples,
            max_padded,
            total_bytes,
        }))
    }
}

/// How one device's loop runs.
pub(crate) struct Settings {
    pub(crate) route: DecodeRoute,
    pub(crate) threads: usize,
    /// When the pass began (the report's `wall` and `setup` count from it).
    pub(crate) started: Instant,
    /// Whether the device's uploads take turns with other devices' (one staging buffer each:
    /// [`Uploader::new_taking_turns`]).
    pub(crate) take_turns: bool,
}

/// One device's loop: sets up the decoder and the uploader on `client`, then takes window
/// positions from `claim` (after the setup, and the next one while the device decodes the
/// current one, so a device that is ready sooner takes more) until it returns `None` or
/// `on_window` stops, handing each decoded window with its position to `on_window` and its
/// stored bytes to `done`.
pub(crate) fn drive(
    client: &Client,
    plan: &Plan,
    windows: &[HaloWindow],
    settings: Settings,
    mut claim: impl FnMut() -> Option<usize>,
    mut on_window: impl FnMut(usize, &HaloWindow, &DecodedWindow<'_>) -> DspResult<Flow>,
    mut done: impl FnMut(u64),
) -> DspResult<PassReport> {
    let Settings {
        route,
        threads,
        started,
        take_turns,
    } = settings;
    let source = &*plan.source;
    let info = source.info();
    let mut report = PassReport::empty(started);
    let frame_bytes = info.frame_bytes();
    let order = source.native_stored_order();
    let channels = info.channel_count();
    let max_samples = plan.max_samples;
    let capacity = (max_samples * frame_bytes) as u64;
    // Decoding in staging: its kernel compiles on a helper thread while the uploader pins
    // its staging memory, and the CubeCL decode kernel is not compiled ahead. The decoder
    // comes first: it refuses a window the device cannot hold before anything is pinned.
    let in_staging = route == DecodeRoute::Staging
        && Decoder::decodes_in_staging_for(info.format, order, channels, max_samples);
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
        &plan.scaling.gains,
        &plan.scaling.offsets,
    )?;
    let compiling = in_staging.then(|| {
        let client = client.clone();
        std::thread::Builder::new()
            .name("dspk-kernel".into())
            .spawn(move || compile_decode_in_staging(&client))
    });
    let mut uploader = if take_turns {
        Uploader::new_taking_turns(client, capacity, threads)?
    } else {
        Uploader::new(client, capacity, threads)?
    };
    let kernel: Option<StagingKernel> = match compiling {
        Some(Ok(thread)) => match thread.join() {
            Ok(compiled) => compiled?,
            Err(panic) => std::panic::resume_unwind(panic),
        },
        // No thread to be had: compile here.
        Some(Err(_)) => compile_decode_in_staging(client)?,
        None => None,
    }
    .filter(|_| uploader.runs_staging_kernels() && capacity <= uploader.staging_kernel_capacity());
    if kernel.is_some() {
        report.route = DecodeRoute::Staging;
    } else if in_staging {
        // The uploader cannot run it (no host staging here): the copy route after all.
        decoder.warm_up()?;
    }
    // Windows whose halos reach past the recording are padded on the device, after decoding.
    let mut padder = match plan.max_padded {
        0 => None,
        n => Some(EdgePadder::new(client, channels, n)?),
    };
    report.setup = started.elapsed();

    let Some(mut current) = claim() else {
        report.wall = started.elapsed();
        return Ok(report);
    };
    let first = Target::of(&decoder, kernel.as_ref(), &windows[current])?;
    upload_window(&mut uploader, &first, source, &windows[current], || Ok(()))?;
    loop {
        let window = &windows[current];
        let next = match claim() {
            Some(j) => Some((j, Target::of(&decoder, kernel.as_ref(), &windows[j])?)),
            None => None,
        };
        let decoded = match kernel {
            Some(_) => decoder.staged_window(window.read_len())?,
            None => decoder.decode_uploaded(window.read_len())?,
        };
        // The next window is read and queued while the device decodes this one; this
        // window's host work runs while the fill threads read.
        let mut flow = Flow::Continue;
        let mut this_window = || {
            flow = match padder.as_mut() {
                Some(padder) if window.pad_left + window.pad_right > 0 => {
                    let padded =
                        padder.pad(&decoded, window.pad_left, window.pad_right, window.edge)?;
                    on_window(current, window, &padded)?
                }
                _ => on_window(current, window, &decoded)?,
            };
            Ok(())
        };
        match &next {
            Some((j, to)) => {
                upload_window(&mut uploader, to, source, &windows[*j], &mut this_window)?;
            }
            None => this_window()?,
        }
        let bytes = window.read_len() as u64 * frame_bytes as u64;
        report.windows += 1;
        report.samples += window.valid_len() as u64;
        report.stored_bytes += bytes;
        done(bytes);
        if flow == Flow::Stop {
            report.stopped_early = next.is_some();
            break;
        }
        match next {
            Some((j, _)) => current = j,
            None => break,
        }
    }
    uploader.wait_idle()?;
    sync(client)?;
    report.wall = started.elapsed();
    Ok(report)
}

/// `source` with only `channels` (checked) and its scaling (`scaling`, default µV, checked
/// against the source's channels, then selected).
fn selected(
    source: &Arc<dyn RecordingSource>,
    channels: Option<&[usize]>,
    scaling: Option<&Scaling>,
) -> DspResult<(Arc<dyn RecordingSource>, Scaling)> {
    let info = source.info();
    let scaling = match scaling {
        Some(s) => s.clone(),
        None => Scaling::microvolts(info),
    };
    if scaling.channel_count() != info.channel_count()
        || scaling.offsets.len() != info.channel_count()
        || scaling.units.len() != info.channel_count()
    {
        return Err(DspError::shape(
            "scaling of the source's channels",
            info.channel_count(),
            scaling.channel_count(),
        ));
    }
    let Some(channels) = channels else {
        return Ok((source.clone(), scaling));
    };
    if let Some(&bad) = channels.iter().find(|&&c| c >= info.channel_count()) {
        return Err(DspError::InvalidChannel {
            index: bad,
            count: info.channel_count(),
        });
    }
    let picked = scaling
        .select(channels)
        .ok_or_else(|| DspError::config("the channel selection does not match the scaling"))?;
    let sliced = SlicedRecording::new(source.clone(), 0..info.samples, Some(channels.to_vec()))?;
    Ok((Arc::new(sliced), picked))
}

/// Fills `window`'s stored bytes of `source` into staging and queues them to `target`, running
/// `during` on this thread while the fill threads read.
fn upload_window(
    uploader: &mut Uploader,
    target: &Target<'_>,
    source: &dyn RecordingSource,
    window: &HaloWindow,
    during: impl FnOnce() -> DspResult<()>,
) -> DspResult<()> {
    let stored = StoredWindow::of(source, window);
    uploader.upload(
        target.destination(),
        stored.len(),
        stored.align(),
        |offset, piece| stored.fill(source, offset, piece),
        during,
    )
}
