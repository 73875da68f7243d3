//! Where a pass's scaled windows go: a file writer, a buffer — whatever implements
//! [`WindowSink`]. The device pass knows the trait, not files.

use crate::{DspResult, RecordingInfo, SignalUnit};

/// Receives a pass's windows of scaled `f32` values, in recording order.
pub trait WindowSink {
    /// Called once, before the first window: `info` describes the recording the windows come
    /// from (after any selection), `units` each channel's unit after scaling.
    fn begin(&mut self, info: &RecordingInfo, units: &[SignalUnit]) -> DspResult<()>;

    /// One window's values, channel-major (`channels × samples`), the windows in order
    /// and owned whole (no halo).
    fn write_window(&mut self, values: &[f32]) -> DspResult<()>;

    /// Called once after the last window of a pass that succeeded: makes what was written
    /// complete (a file renamed into place). A sink dropped without it leaves nothing behind.
    fn finish(&mut self) -> DspResult<()>;

    /// How the windows were made (a preprocessing run's provenance, as JSON), handed over
    /// after the last window and before [`finish`](Self::finish); a sink that keeps no record
    /// ignores it.
    fn provenance(&mut self, value: &serde_json::Value) -> DspResult<()> {
        let _ = value;
        Ok(())
    }
}
