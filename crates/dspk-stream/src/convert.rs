//! Convert: a recording decoded on the device to scaled `f32` (µV for extracellular channels)
//! and handed, window by window in recording order, to a [`WindowSink`] — the pass behind
//! `dspk convert` and `dspk.convert`, and the one preprocessing will extend.

use std::sync::{Arc, mpsc};

use cubecl::bytes::Bytes;
use cubecl::client::Client;
use cubecl::future::reader::read_sync;
use cubecl::server::ServerError;
use dspk_ops::frames::FramePacker;
use dspk_types::{
    ChunkSchedule, DspError, DspResult, OutputType, ProgressSink, RecordingInfo, RecordingSource,
    Scaling, WindowSink,
};

use crate::host::RowReader;
use crate::way_back::Returned;
use crate::{DecodeRoute, DevicePass, Flow, PassReport, window_samples};

/// How to convert.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConvertOptions {
    /// Samples per window (`None`: about a second, as many as fit a device buffer).
    pub window_samples: Option<u64>,
    /// How windows reach the device.
    pub route: DecodeRoute,
}

/// What a convert did.
#[derive(Debug, Clone)]
pub struct Converted {
    /// The pass's figures (wall time, bytes read, the route taken).
    pub report: PassReport,
    /// The recording converted (as the sink was told at `begin`).
    pub info: RecordingInfo,
}

/// Converts all of `source` on `client`'s device: windows of `options.window_samples` (or the
/// default), scaled to each channel's unit ([`Scaling::microvolts`]), written to `sink` in
/// order; `sink.finish()` is called once the last window is written. On an error the sink is
/// not finished (a file sink then leaves nothing).
pub fn convert(
    client: &Client,
    source: Arc<dyn RecordingSource>,
    options: &ConvertOptions,
    progress: &dyn ProgressSink,
    sink: &mut dyn WindowSink,
) -> DspResult<Converted> {
    let info = source.info().clone();
    let window = window_samples(client, &info, options.window_samples)?.min(info.samples);
    let schedule = ChunkSchedule::for_recording(&info, 0..info.samples, window, 0, 0)?;
    let scaling = Scaling::microvolts(&info);
    sink.begin(&info, &scaling.units)?;
    // Halos are 0: every window is owned whole, and windows come in order.
    let pass = DevicePass::new(client, source, schedule.into_windows())
        .scaling(scaling)
        .route(options.route)
        .progress(progress);
    let report = write_behind(client, info.channel_count(), pass, sink)?;
    sink.finish()?;
    Ok(Converted { report, info })
}

/// Runs `pass` on a thread of its own and writes each window to `sink` on this one, in order:
/// the sink writes window i while the device decodes and reads back window i+1 and the fill
/// threads read window i+2. A sink that takes `float32` frames gets each window transposed on
/// the device, its read back queued there and awaited after the next window is decoded; any
/// other gets values. The first error, of the pass or of the sink, is returned (the sink's
/// stops the pass).
fn write_behind(
    client: &Client,
    channels: usize,
    pass: DevicePass<'_>,
    sink: &mut dyn WindowSink,
) -> DspResult<PassReport> {
    let packer = match sink.frames() {
        Some(OutputType::Float32) => Some(FramePacker::new(client, channels, OutputType::Float32)?),
        _ => None,
    };
    // One window waiting: at most three on the host (read back, waiting, being written).
    let (tx, rx) = mpsc::sync_channel::<Returned>(1);
    std::thread::scope(|scope| {
        let running = scope.spawn(move || {
            let mut reader = RowReader::default();
            let mut pending = None;
            // The receiver is gone only when the sink failed; its error is the one returned.
            let send = |returned| match tx.send(returned) {
                Ok(()) => Flow::Continue,
                Err(_) => Flow::Stop,
            };
            let report = pass.run(|_, decoded| {
                let Some(packer) = &packer else {
                    return Ok(send(Returned::Values(reader.read_decoded(decoded)?)));
                };
                let samples = decoded.samples();
                let packed = packer.pack(decoded.handle(), samples, 0..samples)?;
                let read = client.read_async(vec![packed]);
                let flow = match pending.replace((read, packer.frame_bytes(samples))) {
                    Some((read, len)) => send(frames(read, len)?),
                    None => Flow::Continue,
                };
                Ok(flow)
            })?;
            if let Some((read, len)) = pending {
                send(frames(read, len)?);
            }
            Ok(report)
        });
        let written = rx.iter().try_for_each(|returned| match returned {
            Returned::Values(values) => sink.write_window(&values),
            Returned::Frames { bytes, len } => sink.write_frames(&bytes[..len]),
            Returned::Nothing | Returned::Cuts(_) => Ok(()),
        });
        drop(rx);
        let report = match running.join() {
            Ok(report) => report,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        written?;
        report
    })
}

/// The frames a queued read back brings, the first `len` bytes of its one buffer.
fn frames(
    read: impl std::future::Future<Output = Result<Vec<Bytes>, ServerError>>,
    len: usize,
) -> DspResult<Returned> {
    let mut bytes = read_sync(read).map_err(|e| DspError::Io {
        message: format!("device error while reading a window's frames back: {e}"),
        path: None,
    })?;
    match bytes.len() {
        1 if bytes[0].len() >= len => Ok(Returned::Frames {
            bytes: bytes.remove(0),
            len,
        }),
        _ => Err(DspError::BufferUnderrun {
            what: "a window's frames read back".into(),
            needed: len,
            available: bytes.first().map_or(0, |b| b.len()),
        }),
    }
}
