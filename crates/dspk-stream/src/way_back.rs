//! The way back of a preprocessing pass: each window's chain output read back as values
//! (channel-major `f32`), or laid out on the device as the output file's stored frames so that
//! only those bytes cross the bus, or kept on the device (a consumer there; the measure of
//! file → preprocessed windows). Frames are read back while the device runs the next window's
//! chain: the read of window k is queued behind its chain and awaited after window k+1's is.

use std::collections::BTreeMap;
use std::future::Future;
use std::ops::Range;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use cubecl::bytes::Bytes;
use cubecl::client::Client;
use cubecl::future::reader::read_sync;
use cubecl::server::{Handle, ServerError};
use dspk_kernels::{DecodedWindow, read_f32};
use dspk_ops::frames::FramePacker;
use dspk_ops::{Chain, Fits, Rows, build};
use dspk_types::{
    DspError, DspResult, HaloWindow, OutputType, PipelineSpec, ProgressSink, RecordingInfo,
    RecordingSource, StageSpec, WindowSink,
};

use crate::fit::fit;
use crate::host::{HostValues, RowReader};
use crate::preprocess::{ChainPass, rows_of};
use crate::preprocess_plan::{PreprocessPlan, applies, plan};
use crate::{DecodeRoute, Flow, MultiPass, PassDevice, PreprocessOptions, WindowWorker};

/// What each device hands back of a window's chain output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Back {
    /// The owned samples' values, channel-major `f32`.
    Values,
    /// The owned samples as time-major stored frames of this type (an `int16` chain output
    /// must hold whole numbers in range: the output scaling's).
    Frames(OutputType),
    /// Nothing: the output stays on the device.
    Keep,
    /// The owned samples' values at each of these pipeline cuts (how many of the spec's stages
    /// have run: 0 is the decoded window), each channel-major `f32`, from one run of the chain.
    Cuts(Arc<[usize]>),
}

/// A window's output on the host, as [`Back`] asked.
pub(crate) enum Returned {
    /// Channel-major values.
    Values(HostValues),
    /// The first `len` bytes of `bytes` are the window's frames.
    Frames { bytes: Bytes, len: usize },
    /// Kept on the device.
    Nothing,
    /// Channel-major values at each cut asked for, in the order asked.
    Cuts(Vec<HostValues>),
}

/// Runs the chain of `spec` (fitted stages from `fits`) on `windows` of `source` over
/// `devices` and hands each window's output, as `back` says, to `on_window` in the order of
/// `windows` (on this thread, while the devices go on).
///
/// # Errors
/// What the pass, the chain and `on_window` refuse; a pass that hands over fewer windows.
#[allow(clippy::too_many_arguments)]
pub(crate) fn chain_pass(
    devices: &[PassDevice],
    source: Arc<dyn RecordingSource>,
    spec: &PipelineSpec,
    fits: &Fits,
    windows: Vec<HaloWindow>,
    route: DecodeRoute,
    progress: &dyn ProgressSink,
    back: Back,
    mut on_window: impl FnMut(&HaloWindow, Returned) -> DspResult<()>,
) -> DspResult<ChainPass> {
    let info = source.info().clone();
    let count = spec.stages.len();
    // Bounded: a writer slower than the devices holds them back (host memory stays flat).
    let (tx, rx) = mpsc::sync_channel::<(usize, Returned)>(2 * devices.len().max(1));
    let listed = windows.clone();
    std::thread::scope(|scope| -> DspResult<ChainPass> {
        let info_ref = &info;
        let pass = scope.spawn(move || {
            MultiPass::new(devices.to_vec(), source, windows)
                .route(route)
                .progress(progress)
                .run(|d, client| {
                    let packer = match &back {
                        Back::Frames(output) => {
                            Some(FramePacker::new(client, info_ref.channel_count(), *output)?)
                        }
                        _ => None,
                    };
                    let count = match &back {
                        // The stages after the last cut asked for need not run.
                        Back::Cuts(cuts) => cuts.iter().copied().max().unwrap_or(0).min(count),
                        _ => count,
                    };
                    let chain = build(client, spec, info_ref, fits, count)?;
                    let cut_stages = match &back {
                        Back::Cuts(cuts) => cuts
                            .iter()
                            .map(|&cut| chain.positions().iter().rposition(|&p| p < cut))
                            .collect(),
                        _ => Vec::new(),
                    };
                    Ok(ChainWorker {
                        chain,
                        // The pass's own copy of the device's client: a read back queued
                        // on it may outlive a window.
                        client: &devices[d].client,
                        info: info_ref,
                        tx: tx.clone(),
                        reader: RowReader::default(),
                        back: back.clone(),
                        cut_stages,
                        packer,
                        pending: None,
                    })
                })
        });
        // In order, whatever device finished a window first.
        let mut waiting = BTreeMap::new();
        let mut next = 0;
        let mut written = Ok(());
        let (mut handing, mut waited) = (Duration::ZERO, Duration::ZERO);
        let began = Instant::now();
        loop {
            let asked = Instant::now();
            let Ok((position, returned)) = rx.recv() else {
                break;
            };
            waited += asked.elapsed();
            waiting.insert(position, returned);
            while let Some(returned) = waiting.remove(&next) {
                let handed = Instant::now();
                written = on_window(&listed[next], returned);
                handing += handed.elapsed();
                if written.is_err() {
                    break;
                }
                next += 1;
            }
            if written.is_err() {
                break;
            }
        }
        let handed_over = Instant::now();
        // The devices see the receiver gone and stop.
        drop(rx);
        let multi = match pass.join() {
            Ok(outcome) => outcome,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        written?;
        let multi = multi?;
        let mut clipped: Option<Vec<u64>> = None;
        for share in &multi.devices {
            if let Some(counts) = &share.output {
                let total = clipped.get_or_insert_with(|| vec![0; counts.len()]);
                for (t, c) in total.iter_mut().zip(counts) {
                    *t += c;
                }
            }
        }
        if next != listed.len() {
            return Err(DspError::config(format!(
                "the preprocessing pass handed over {next} of {} windows",
                listed.len()
            )));
        }
        // The pass ends once its last window is handed over, not when the devices finish it,
        // and the wait for the first window counts from the devices' start, not their set-up.
        let mut report = multi.total;
        if let Some(started) = multi.started {
            report.wall = report
                .wall
                .max(handed_over.saturating_duration_since(started));
            waited = waited.saturating_sub(started.saturating_duration_since(began));
        }
        Ok(ChainPass {
            report,
            clipped,
            handing,
            waiting: waited,
        })
    })
}

/// Runs the chain on `windows` and writes each window's output to `sink`: as stored frames
/// laid out on the device where the sink takes them in the type the chain ends in, else as
/// values.
///
/// # Errors
/// As [`chain_pass`], and what the sink refuses.
#[allow(clippy::too_many_arguments)]
pub(crate) fn write_windows(
    devices: &[PassDevice],
    source: Arc<dyn RecordingSource>,
    spec: &PipelineSpec,
    fits: &Fits,
    windows: Vec<HaloWindow>,
    route: DecodeRoute,
    progress: &dyn ProgressSink,
    sink: &mut dyn WindowSink,
) -> DspResult<ChainPass> {
    let back = match sink.frames() {
        Some(output) if output == chain_output(spec, source.info()) => Back::Frames(output),
        _ => Back::Values,
    };
    chain_pass(
        devices,
        source,
        spec,
        fits,
        windows,
        route,
        progress,
        back,
        |_, returned| match returned {
            Returned::Values(values) => sink.write_window(&values),
            Returned::Frames { bytes, len } => sink.write_frames(&bytes[..len]),
            Returned::Nothing | Returned::Cuts(_) => Ok(()),
        },
    )
}

/// Runs the chain on `windows` and keeps each window's output on the device (nothing is read
/// back): what a consumer on the device would get, and how fast.
///
/// # Errors
/// What the pass, the source, the device and the chain refuse.
pub fn run_on_device(
    devices: &[PassDevice],
    source: Arc<dyn RecordingSource>,
    spec: &PipelineSpec,
    fits: &Fits,
    windows: Vec<HaloWindow>,
    route: DecodeRoute,
    progress: &dyn ProgressSink,
) -> DspResult<ChainPass> {
    chain_pass(
        devices,
        source,
        spec,
        fits,
        windows,
        route,
        progress,
        Back::Keep,
        |_, _| Ok(()),
    )
}

/// What preprocessing a recording into windows kept on the device took.
#[derive(Debug, Clone)]
pub struct OnDevice {
    /// The plan the windows followed.
    pub plan: PreprocessPlan,
    /// Seconds spent fitting (0 when every fitted stage's parameters were given).
    pub fit_s: f64,
    /// Seconds from the first window read to the device finishing the last chain.
    pub apply_s: f64,
    /// Seconds of recording per second of `apply_s`.
    pub realtime_factor: f64,
    /// The apply pass (all devices together).
    pub pass: ChainPass,
}

/// Preprocesses all of `source` with `spec` on `devices` as [`preprocess`](crate::preprocess)
/// does (fit, then every window through the chain), but keeps each window's output on the
/// device, as a consumer there (a sorter on the GPU) would take it: file → preprocessed
/// windows, nothing read back but the clip counts.
///
/// # Errors
/// As [`preprocess`](crate::preprocess).
pub fn preprocess_on_device(
    devices: &[PassDevice],
    source: Arc<dyn RecordingSource>,
    spec: &PipelineSpec,
    given: Fits,
    options: &PreprocessOptions,
    progress: &dyn ProgressSink,
) -> DspResult<OnDevice> {
    let info = source.info().clone();
    spec.check(&info)?;
    let first = devices
        .first()
        .ok_or_else(|| DspError::config("preprocessing needs at least one device"))?;
    let labels = devices.iter().map(|d| d.label.clone()).collect();
    let plan = plan(
        &first.client,
        labels,
        &info,
        spec,
        &given,
        options.window_samples,
    )?;
    let started = Instant::now();
    let fits = fit(devices, &source, spec, given, options.route)?;
    let fit_s = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let pass = run_on_device(
        devices,
        source,
        spec,
        &fits,
        plan.windows(&info)?,
        options.route,
        progress,
    )?;
    let apply_s = started.elapsed().as_secs_f64();
    let seconds = info.duration()?.as_seconds_f64();
    Ok(OnDevice {
        plan,
        fit_s,
        apply_s,
        realtime_factor: if apply_s > 0.0 {
            seconds / apply_s
        } else {
            0.0
        },
        pass,
    })
}

/// The type of the values the chain of `spec` ends with on `info`: an output scaling's, else
/// `float32`.
fn chain_output(spec: &PipelineSpec, info: &RecordingInfo) -> OutputType {
    match spec.stages.iter().rev().find(|s| applies(s, info)) {
        Some(StageSpec::Scale(scale)) => scale.output,
        _ => OutputType::Float32,
    }
}

/// A read back queued on the device: its position, the bytes it will bring, how many of them
/// are the window's.
type Pending<'a> = (
    usize,
    Pin<Box<dyn Future<Output = Result<Vec<Bytes>, ServerError>> + Send + 'a>>,
    usize,
);

/// One device's chain in a [`MultiPass`].
struct ChainWorker<'a> {
    chain: Chain,
    client: &'a Client,
    info: &'a RecordingInfo,
    tx: mpsc::SyncSender<(usize, Returned)>,
    reader: RowReader,
    back: Back,
    /// With [`Back::Cuts`], the chain stage whose output each cut is (`None`: the decoded
    /// window; a cut whose last stage is left out of the recording reads the stage before).
    cut_stages: Vec<Option<usize>>,
    packer: Option<FramePacker>,
    /// The frames of the previous window, on their way back.
    pending: Option<Pending<'a>>,
}

impl<'a> ChainWorker<'a> {
    /// Hands a window's output over; stops the pass when the receiver is gone (the caller
    /// failed, and its error is the one returned).
    fn send(&self, position: usize, returned: Returned) -> Flow {
        match self.tx.send((position, returned)) {
            Ok(()) => Flow::Continue,
            Err(_) => Flow::Stop,
        }
    }

    /// Runs the chain once on `decoded`, reading its valid samples back at each cut asked
    /// for (`cut_stages`).
    fn read_cuts(
        &mut self,
        decoded: &DecodedWindow<'_>,
        rows: &Rows,
        valid: Range<usize>,
    ) -> DspResult<Vec<HostValues>> {
        let Self {
            chain,
            client,
            reader,
            cut_stages,
            ..
        } = self;
        let client: &Client = client;
        let mut values: Vec<Option<HostValues>> = cut_stages.iter().map(|_| None).collect();
        let mut read =
            |stage: Option<usize>, handle: &Handle, values: &mut [Option<HostValues>]| {
                for (slot, _) in cut_stages.iter().enumerate().filter(|(_, s)| **s == stage) {
                    values[slot] = Some(reader.read_rows(
                        client,
                        handle,
                        rows.channels,
                        rows.stride,
                        valid.clone(),
                    )?);
                }
                DspResult::Ok(())
            };
        read(None, decoded.handle(), &mut values)?;
        chain.run_observed(decoded.handle(), rows, valid.clone(), |k, output| {
            read(Some(k), output, &mut values)
        })?;
        values
            .into_iter()
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| DspError::config("a pipeline cut asked for was not read back"))
    }

    /// Waits for the pending read back, if any, and hands it over.
    fn complete(&mut self) -> DspResult<Flow> {
        let Some((position, read, len)) = self.pending.take() else {
            return Ok(Flow::Continue);
        };
        let mut bytes = read_sync(read).map_err(|e| DspError::Io {
            message: format!("device error while reading a window's frames back: {e}"),
            path: None,
        })?;
        if bytes.len() != 1 || bytes[0].len() < len {
            return Err(DspError::BufferUnderrun {
                what: "a window's frames read back".into(),
                needed: len,
                available: bytes.first().map_or(0, |b| b.len()),
            });
        }
        Ok(self.send(
            position,
            Returned::Frames {
                bytes: bytes.remove(0),
                len,
            },
        ))
    }
}

impl<'a> WindowWorker for ChainWorker<'a> {
    /// The clip counts of the device's scaling stage, read back.
    type Output = Option<Vec<u64>>;

    fn window(
        &mut self,
        position: usize,
        window: &HaloWindow,
        decoded: &DecodedWindow<'_>,
    ) -> DspResult<Flow> {
        let rows = rows_of(self.info, window, decoded);
        let valid = window.valid_local.clone();
        if let Back::Cuts(_) = &self.back {
            let values = self.read_cuts(decoded, &rows, valid)?;
            return Ok(self.send(position, Returned::Cuts(values)));
        }
        let out = self.chain.run(decoded.handle(), &rows, valid.clone())?;
        match (&self.back, &self.packer) {
            (Back::Frames(_), Some(packer)) => {
                let len = packer.frame_bytes(valid.len());
                let packed = packer.pack(&out, rows.stride, valid)?;
                // Queued now, behind this window's chain; awaited after the next one's.
                let client: &'a Client = self.client;
                let read = Box::pin(client.read_async(vec![packed]));
                let previous = self.complete();
                self.pending = Some((position, read, len));
                previous
            }
            (Back::Keep, _) => Ok(self.send(position, Returned::Nothing)),
            _ => {
                let values =
                    self.reader
                        .read_rows(self.client, &out, rows.channels, rows.stride, valid)?;
                Ok(self.send(position, Returned::Values(values)))
            }
        }
    }

    fn finish(mut self) -> DspResult<Option<Vec<u64>>> {
        self.complete()?;
        let channels = self.info.channel_count();
        self.chain
            .stages()
            .iter()
            .find_map(|stage| stage.clipped())
            .map(|counts| {
                let values = read_f32(self.client, counts, channels)?;
                Ok(values.iter().map(|v| u64::from(v.to_bits())).collect())
            })
            .transpose()
    }
}
