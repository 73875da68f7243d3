//! [`BinarySink`]: a pass's windows written as a raw binary `float32` (or `int16`) file with its
//! JSON sidecar — dspk-io's [`WindowSink`].

use std::path::{Path, PathBuf};

use dspk_types::{
    DspError, DspResult, MemoryOrder, OutputType, RecordingInfo, ScaleSpec, SignalUnit, WindowSink,
};

use crate::{BinaryWriter, OutputFormat, WriteSummary, converted_info};

/// Writes scaled windows to a raw binary file and its sidecar (a temporary file renamed into
/// place at `finish`: a failed pass leaves no partial output), `float32` unless
/// [`format`](Self::format) says otherwise.
#[derive(Debug)]
pub struct BinarySink {
    path: PathBuf,
    order: MemoryOrder,
    from: String,
    format: OutputFormat,
    provenance: Option<serde_json::Value>,
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
            format: OutputFormat::Float32,
            provenance: None,
            writer: None,
            summary: None,
        }
    }

    /// Stores the windows as `format` says ([`OutputFormat::Int16`]: the windows hold whole
    /// numbers already multiplied by its gain; the sidecar's gains are `1 / gain`).
    pub fn format(mut self, format: OutputFormat) -> Self {
        self.format = format;
        self
    }

    /// Records how the file was made in the sidecar's `provenance` (any JSON); call it before
    /// the pass finishes the sink. A later call replaces an earlier one.
    pub fn set_provenance(&mut self, provenance: serde_json::Value) {
        self.provenance = Some(provenance);
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

/// How a pipeline's output (its last stage's type and gain) is stored.
pub fn output_format(output: &ScaleSpec) -> OutputFormat {
    match output.output {
        OutputType::Float32 => OutputFormat::Float32,
        OutputType::Int16 => OutputFormat::Int16 { gain: output.gain },
    }
}

impl WindowSink for BinarySink {
    fn begin(&mut self, info: &RecordingInfo, units: &[SignalUnit]) -> DspResult<()> {
        let out = converted_info(info, units, &self.from);
        self.writer = Some(BinaryWriter::create_as(
            &self.path,
            &out,
            self.order,
            self.format,
        )?);
        Ok(())
    }

    fn write_window(&mut self, values: &[f32]) -> DspResult<()> {
        match self.writer.as_mut() {
            Some(writer) => writer.write_window(values),
            None => Err(self.not_begun()),
        }
    }

    fn frames(&self) -> Option<OutputType> {
        if self.order != MemoryOrder::TimeMajor {
            return None;
        }
        Some(match self.format {
            OutputFormat::Float32 => OutputType::Float32,
            OutputFormat::Int16 { .. } => OutputType::Int16,
        })
    }

    fn write_frames(&mut self, bytes: &[u8]) -> DspResult<()> {
        match self.writer.as_mut() {
            Some(writer) => writer.write_frames(bytes),
            None => Err(self.not_begun()),
        }
    }

    fn provenance(&mut self, value: &serde_json::Value) -> DspResult<()> {
        self.set_provenance(value.clone());
        Ok(())
    }

    fn finish(&mut self) -> DspResult<()> {
        let mut writer = self.writer.take().ok_or_else(|| self.not_begun())?;
        if let Some(provenance) = self.provenance.take() {
            writer.set_provenance(provenance);
        }
        self.summary = Some(writer.finish()?);
        Ok(())
    }
}
