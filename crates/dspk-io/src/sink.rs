//! [`BinarySink`]: a convert's windows written as a raw binary `float32` file with its JSON
//! sidecar — dspk-io's [`WindowSink`].

use std::path::{Path, PathBuf};

use dspk_types::{DspError, DspResult, MemoryOrder, RecordingInfo, SignalUnit, WindowSink};

use crate::{BinaryWriter, WriteSummary, converted_info};

/// Writes scaled windows to a raw binary file and its sidecar (a temporary file renamed into
/// place at `finish`: a failed pass leaves no partial output).
#[derive(Debug)]
pub struct BinarySink {
    path: PathBuf,
    order: MemoryOrder,
    from: String,
    writer: Option<BinaryWriter>,
    summary: Option<WriteSummary>,
}

impl BinarySink {
    /// A sink writing `path` in `order`; the sidecar says it was converted from `from` (the
    /// recording's label).
    pub fn new(path: impl AsRef<Path>, order: MemoryOrder, from: impl Into<String>) -> Self {
        Self {
            path: path.as_ref().to_path_buf(),
            order,
            from: from.into(),
            writer: None,
            summary: None,
        }
    }

    /// What was written, once the pass has finished the sink.
    pub fn summary(&self) -> Option<&WriteSummary> {
        self.summary.as_ref()
    }

    fn not_begun(&self) -> DspError {
        DspError::config(format!(
            "{}: a window came before the writer began (a pass calls begin first)",
            self.path.display()
        ))
    }
}

impl WindowSink for BinarySink {
    fn begin(&mut self, info: &RecordingInfo, units: &[SignalUnit]) -> DspResult<()> {
        let out = converted_info(info, units, &self.from);
        self.writer = Some(BinaryWriter::create(&self.path, &out, self.order)?);
        Ok(())
    }

    fn write_window(&mut self, values: &[f32]) -> DspResult<()> {
        match self.writer.as_mut() {
            Some(writer) => writer.write_window(values),
            None => Err(self.not_begun()),
        }
    }

    fn finish(&mut self) -> DspResult<()> {
        let writer = self.writer.take().ok_or_else(|| self.not_begun())?;
        self.summary = Some(writer.finish()?);
        Ok(())
    }
}
