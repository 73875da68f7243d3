//! Where a pass's scaled windows go: a file writer, a buffer — whatever implements
//! [`WindowSink`]. The device pass knows the trait, not files.

use crate::{DspError, DspResult, OutputType, RecordingInfo, SignalUnit};

/// Receives a pass's windows of scaled `f32` values, in recording order.
pub trait WindowSink {
    /// Called once, before the first window: `info` describes the recording the windows come
    /// from (after any selection), `units` each channel's unit after scaling.
    fn begin(&mut self, info: &RecordingInfo, units: &[SignalUnit]) -> DspResult<()>;

    /// One window's values, channel-major (`channels × samples`), the windows in order
    /// and owned whole (no halo).
    fn write_window(&mut self, values: &[f32]) -> DspResult<()>;

    /// The type of the stored frames the sink also takes, whole windows at a time, through
    /// [`write_frames`](Self::write_frames): time-major little-endian values, as its file
    /// holds them (a pass that lays windows out on the device then sends only those bytes).
    /// `None`, the default: values only.
    fn frames(&self) -> Option<OutputType> {
        None
    }

    /// One window's stored frames (see [`frames`](Self::frames)), the windows in order and
    /// owned whole.
    fn write_frames(&mut self, bytes: &[u8]) -> DspResult<()> {
        Err(DspError::config(format!(
            "this sink takes values, not {} bytes of stored frames",
            bytes.len()
        )))
    }

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
