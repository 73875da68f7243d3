//! What a report shows, as data: the page is drawn from these values, embedded in it as JSON
//! (`<script type="application/json" id="dspk-report">`), and `--json` prints them. The
//! pictures' pixels (the reduced windows) are not in the JSON: they are in the page's images.

use serde::Serialize;

/// The kind of report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ReportKind {
    /// `dspk scan --report`: the scan's statistics, the raw windows.
    Scan,
    /// `dspk preprocess --report`: the windows raw and after each stage.
    Preprocess,
    /// `dspk report`: a scan, and each stage of a pipeline where one is given.
    Report,
}

impl ReportKind {
    /// `scan`, `preprocess` or `report`.
    pub fn name(self) -> &'static str {
        match self {
            ReportKind::Scan => "scan",
            ReportKind::Preprocess => "preprocess",
            ReportKind::Report => "report",
        }
    }
}

/// One report.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// What made it.
    pub kind: ReportKind,
    /// The run: recording, device, figures, pipeline, warnings.
    pub run: RunFacts,
    /// Where the per-channel statistics come from, in words.
    pub statistics_from: String,
    /// Every channel, in the recording's order.
    pub channels: Vec<ChannelRow>,
    /// The median standard deviation of the live channels (µV).
    pub median_std: f64,
    /// The standard deviation above which a channel is noisy (µV).
    pub noisy_threshold: f64,
    /// Below this standard deviation a channel is dead (µV).
    pub dead_threshold: f64,
    /// The probe drawing's geometry and its placement on the page.
    pub probe: ProbeView,
    /// The windows drawn.
    pub windows: Vec<WindowView>,
    /// The fitted whitening matrices drawn.
    pub whitening: Vec<MatrixView>,
    /// What the probe's contacts are coloured by.
    pub colour_by: ColourBy,
}

/// What the probe's contacts are coloured by.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ColourBy {
    /// Their class: dead, noisy or good.
    #[default]
    Class,
    /// Their standard deviation.
    Std,
    /// Their MAD noise (1.4826 × MAD).
    Mad,
    /// Their mean.
    Mean,
}

impl ColourBy {
    /// Every choice's name, in order.
    pub const NAMES: [&'static str; 4] = ["class", "std", "mad", "mean"];

    /// The choice named `name` (`class`, `std`, `mad`, `mean`).
    ///
    /// # Errors
    /// Any other name, with the choices.
    pub fn parse(name: &str) -> dspk_types::DspResult<Self> {
        match name {
            "class" => Ok(Self::Class),
            "std" => Ok(Self::Std),
            "mad" => Ok(Self::Mad),
            "mean" => Ok(Self::Mean),
            other => Err(dspk_types::DspError::config(format!(
                "contacts can be coloured by {}, not {other:?}",
                Self::NAMES.join(", ")
            ))),
        }
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    /// A channel's value of it (`None` for `Class`).
    pub fn value(self, row: &ChannelRow) -> Option<f64> {
        match self {
            Self::Class => None,
            Self::Std => Some(row.std),
            Self::Mad => Some(row.mad_std),
            Self::Mean => Some(row.mean),
        }
    }
}

impl Report {
    /// The channels of class `class` (`dead`, `noisy`, `good`), comma-separated, or `none`.
    pub fn class_list(&self, class: &str) -> String {
        let ids: Vec<String> = self
            .channels
            .iter()
            .filter(|r| r.class == class)
            .map(|r| r.index.to_string())
            .collect();
        if ids.is_empty() {
            "none".to_string()
        } else {
            ids.join(", ")
        }
    }

    /// The report's first line: the dead and noisy channels, and the noise.
    pub fn answer(&self) -> String {
        let good = self.channels.iter().filter(|r| r.class == "good").count();
        format!(
            "dead: {} · noisy: {} · {good} good of {} · median std {:.2} µV, noisy above {:.2} µV",
            self.class_list("dead"),
            self.class_list("noisy"),
            self.channels.len(),
            self.median_std,
            self.noisy_threshold
        )
    }
}

/// The run behind a report.
#[derive(Debug, Clone, Serialize)]
pub struct RunFacts {
    /// How the recording was named (its path, or the synthetic one's description).
    pub recording: String,
    /// Its format (`SpikeGLX`, `raw binary`, …).
    pub format: String,
    /// Its exact sample rate, as text (`30000 Hz`, `750003/25 Hz`).
    pub sample_rate: String,
    /// The rate in Hz, for arithmetic.
    pub sample_rate_hz: f64,
    /// Channels.
    pub channel_count: usize,
    /// Seconds of recording.
    pub duration_s: f64,
    /// The runtime the pass ran on.
    pub runtime: String,
    /// The device it ran on.
    pub device: String,
    /// What the pass did, one line each (`scanned 60 s in 1.2 s: 1100 MB/s, 50× real time`).
    pub figures: Vec<String>,
    /// The pipeline as TOML (`None`: no pipeline).
    pub pipeline: Option<String>,
    /// The fitted parameters, one line each.
    pub fitted: Vec<String>,
    /// What the reader and the pass warned of, one sentence each.
    pub warnings: Vec<String>,
    /// Seconds each step of making a report of a recording took (`scan`, `fit`, `windows`;
    /// empty where the report came with a pass of its own: scan's, preprocess's).
    pub steps_s: Vec<(String, f64)>,
}

/// One channel's row.
#[derive(Debug, Clone, Serialize)]
pub struct ChannelRow {
    /// Its index in the recording.
    pub index: usize,
    /// Its name.
    pub name: String,
    /// Its contact's id (`None`: no geometry).
    pub contact: Option<String>,
    /// Where it is drawn, µm across (the probe's x, or 0 without geometry).
    pub x_um: f64,
    /// Where it is drawn, µm along the shank (the probe's y, or 20 µm × its index without
    /// geometry).
    pub y_um: f64,
    /// Its shank.
    pub shank: u32,
    /// Whether it is drawn on the probe (a channel without a contact, a sync word, is not).
    pub on_probe: bool,
    /// `dead`, `noisy` or `good`.
    pub class: String,
    /// Its standard deviation (µV).
    pub std: f64,
    /// 1.4826 × its median absolute deviation over the report's raw windows (µV): the noise
    /// SpikeInterface's `get_noise_levels` estimates.
    pub mad_std: f64,
    /// Its mean (µV).
    pub mean: f64,
}

/// The probe drawing's geometry and placement.
#[derive(Debug, Clone, Serialize)]
pub struct ProbeView {
    /// Whether the recording states its geometry (without it channels are drawn in one
    /// column, in their order, 20 µm apart).
    pub stated: bool,
    /// The probe's model, where stated.
    pub model: Option<String>,
    /// Pixels per µm, the same across and along (the drawing is to scale).
    pub px_per_um: f64,
    /// The pixel, from the drawing's top left corner, of the point x = 0 µm, y = 0 µm.
    pub origin_px: (f64, f64),
    /// The drawing's size in pixels.
    pub size_px: (u32, u32),
    /// The contacts' drawn size, µm across and along.
    pub contact_um: (f64, f64),
}

/// One window of the recording, raw and after each stage.
#[derive(Debug, Clone, Serialize)]
pub struct WindowView {
    /// Its first sample.
    pub start_sample: u64,
    /// One past its last.
    pub end_sample: u64,
    /// Its start, seconds from the recording's start.
    pub start_s: f64,
    /// Raw, then after each stage that runs.
    pub panels: Vec<Panel>,
    /// The channels whose traces are drawn.
    pub trace_channels: Vec<usize>,
    /// Spikes known in the window (the synthetic recording's planted ones) on the traced
    /// channels.
    pub spikes: Vec<SpikeMark>,
}

/// The window at one point of the pipeline.
#[derive(Debug, Clone, Serialize)]
pub struct Panel {
    /// `raw`, or `after N: kind` (the stage's position in the pipeline, from 1).
    pub title: String,
    /// What its values are: `µV`, or `whitened` after a whitening stage (an output scaling's
    /// gain is divided out to draw them).
    pub unit: String,
    /// The heat map's colour range, low end: the 0.5th percentile of the window's values.
    pub vmin: f64,
    /// The colour range's high end: the 99.5th percentile.
    pub vmax: f64,
    /// The smallest and largest value in the window.
    pub min: f64,
    /// The largest value.
    pub max: f64,
    /// The heat map: `channels × columns` values, each the sample of its column farthest
    /// from its channel's median.
    #[serde(skip)]
    pub heat: Vec<f32>,
    /// Columns of [`Self::heat`].
    pub columns: usize,
    /// Each traced channel's (minimum, maximum) per column.
    #[serde(skip)]
    pub traces: Vec<Vec<(f32, f32)>>,
}

/// A spike marked on the traces.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SpikeMark {
    /// Its channel.
    pub channel: usize,
    /// Its sample (the trough), in the recording.
    pub sample: u64,
}

/// A fitted whitening matrix, drawn as an image.
#[derive(Debug, Clone, Serialize)]
pub struct MatrixView {
    /// The stage's position in the pipeline (from 0).
    pub stage: usize,
    /// Channels (rows and columns).
    pub channels: usize,
    /// The colour range is ± this (the largest magnitude off the diagonal).
    pub limit: f64,
    /// Row-major weights, `channels × channels` (0 where a row does not mix a channel).
    #[serde(skip)]
    pub weights: Vec<f32>,
}
