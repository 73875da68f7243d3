//! Reports a person looks at: one self-contained HTML file (inline SVG and PNG, no network, no
//! script but its data) with the probe drawn to scale and its channels coloured by class, the
//! noise and mean along the probe's depth, a few windows as heat maps and traces raw and after
//! each stage of a pipeline, and the run's figures, pipeline, fitted parameters and warnings.
//!
//! [`scan_report`], [`preprocess_report`] and [`recording_report`] make the [`Report`] of each
//! kind (reading its windows on the devices, `collect`); [`render`] draws it (plotters, `draw`)
//! and [`write_report`] writes it. `dspk scan --report`, `dspk preprocess --report`,
//! `dspk report` and Python's `report(...)` methods call these and nothing else.

mod build;
mod collect;
mod colour;
mod draw;
mod html;
mod model;
mod parallel;
mod png;
mod values;

use std::path::Path;
use std::time::Instant;

use dspk_types::{DspError, DspResult};
use serde::Serialize;

pub use build::{
    DEFAULT_CONTACT_UM, UNSTATED_PITCH_UM, preprocess_report, recording_report, report_recording,
    scan_report,
};
pub use collect::{
    Collected, DEFAULT_WINDOWS, WindowRequest, collect, default_trace_channels, window_starts,
};
pub use colour::{DEAD, GOOD, NOISY};
pub use html::render;
pub use model::{
    ChannelRow, ColourBy, MatrixView, Panel, ProbeView, Report, ReportKind, RunFacts, SpikeMark,
    WindowView,
};
pub use values::{MAD_TO_STD, percentile};

/// A report written.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReportFile {
    /// Where.
    pub path: String,
    /// Its size in bytes.
    pub bytes: u64,
    /// Seconds spent drawing and writing it (the windows' reading is not counted here).
    pub render_s: f64,
}

/// Draws `report` and writes it to `path` (whole, or not at all: through a temporary file
/// renamed into place).
///
/// # Errors
/// A file that cannot be written, named with its path.
pub fn write_report(report: &Report, path: &Path) -> DspResult<ReportFile> {
    let start = Instant::now();
    let page = render(report)?;
    dspk_io::durable::write_file(path, page.as_bytes()).map_err(|e| {
        DspError::config(format!(
            "the report {} cannot be written: {e}",
            path.display()
        ))
    })?;
    Ok(ReportFile {
        path: path.display().to_string(),
        bytes: page.len() as u64,
        render_s: start.elapsed().as_secs_f64(),
    })
}
