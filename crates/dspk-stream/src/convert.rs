//! Convert: a recording decoded on the device to scaled `f32` (µV for extracellular channels)
//! and handed, window by window in recording order, to a [`WindowSink`] — the pass behind
//! `dspk convert` and `dspk.convert`, and the one preprocessing will extend.

use std::sync::{Arc, mpsc};

use cubecl::client::Client;
use dspk_types::{
    ChunkSchedule, DspResult, ProgressSink, RecordingInfo, RecordingSource, Scaling, WindowSink,
};

use crate::host::{HostValues, RowReader};
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
    let report = write_behind(pass, sink)?;
    sink.finish()?;
    Ok(Converted { report, info })
}

/// Runs `pass` on a thread of its own and writes each window to `sink` on this one, in order:
/// the sink encodes, lays out and writes window i while the device decodes and reads back
/// window i+1 and the fill threads read window i+2. The first error, of the pass or of the
/// sink, is returned (the sink's stops the pass).
fn write_behind(pass: DevicePass<'_>, sink: &mut dyn WindowSink) -> DspResult<PassReport> {
    // One window waiting: at most three on the host (read back, waiting, being written).
    let (tx, rx) = mpsc::sync_channel::<HostValues>(1);
    std::thread::scope(|scope| {
        let running = scope.spawn(move || {
            let mut reader = RowReader::default();
            pass.run(|_, decoded| {
                let values = reader.read_decoded(decoded)?;
                // The receiver is gone only when the sink failed; its error is the one returned.
                Ok(match tx.send(values) {
                    Ok(()) => Flow::Continue,
                    Err(_) => Flow::Stop,
                })
            })
        });
        let written = rx.iter().try_for_each(|values| sink.write_window(&values));
        drop(rx);
        let report = match running.join() {
            Ok(report) => report,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        written?;
        report
    })
}
