//! A preprocessing pipeline as plain data: the stages a recording goes through on the device
//! (filters, common reference, phase shift, whitening, bad-channel interpolation, scaling), in
//! order, with every number that decides the output.
//!
//! It is GPU-free so that the program, Python, cluster plans and provenance read and check it
//! without a device; `dspk-ops` turns a checked spec into device stages. A spec is read from
//! TOML or JSON (the same fields), and [`PipelineSpec::check`] validates it against the
//! recording it will run on (cut-offs below Nyquist, geometry where a stage needs it).
//!
//! ```
//! use dspk_types::PipelineSpec;
//!
//! let spec = PipelineSpec::from_toml(r#"
//!     [[stages]]
//!     kind = "filter"
//!     band = "bandpass"
//!     cutoff_hz = [300.0, 6000.0]
//!     order = 5
//!
//!     [[stages]]
//!     kind = "common_reference"
//!     operator = "median"
//! "#).unwrap();
//! assert_eq!(spec.stages.len(), 2);
//! ```

mod check;
mod choice;
mod error;
mod presets;
mod spatial;
#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

pub use check::{MAX_BLOCK_SAMPLES, MAX_CONTEXT_SAMPLES, MAX_HALF_TAPS, MIN_BLOCK_SAMPLES};
pub use error::PipelineError;
pub use presets::{PRESET_BLOCK_SAMPLES, PRESETS, Preset};
pub use spatial::{MAX_AGC_WINDOW_SAMPLES, MAX_PAD_CHANNELS, SpatialHighpassSpec};

/// Samples per block of the filters' fixed grid by default.
pub const DEFAULT_BLOCK_SAMPLES: u32 = 4096;

/// A preprocessing pipeline: stages applied in order to the recording's channels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PipelineSpec {
    /// Samples per block of the fixed grid temporal filters compute on (blocks start at each
    /// segment's first sample): part of what decides the output bits, so it is in the spec.
    #[serde(default = "default_block_samples")]
    pub block_samples: u32,
    /// The stages, first to last.
    #[serde(default)]
    pub stages: Vec<StageSpec>,
}

fn default_block_samples() -> u32 {
    DEFAULT_BLOCK_SAMPLES
}

impl Default for PipelineSpec {
    fn default() -> Self {
        Self {
            block_samples: DEFAULT_BLOCK_SAMPLES,
            stages: Vec::new(),
        }
    }
}

impl PipelineSpec {
    /// A spec read from TOML text.
    ///
    /// # Errors
    /// Text that is not a pipeline spec ([`PipelineError::Parse`], naming the field).
    pub fn from_toml(text: &str) -> Result<Self, PipelineError> {
        toml::from_str(text).map_err(|e| PipelineError::Parse {
            format: "TOML",
            reason: e.to_string().trim().to_owned(),
        })
    }

    /// A spec read from JSON text.
    ///
    /// # Errors
    /// Text that is not a pipeline spec ([`PipelineError::Parse`], naming the field).
    pub fn from_json(text: &str) -> Result<Self, PipelineError> {
        serde_json::from_str(text).map_err(|e| PipelineError::Parse {
            format: "JSON",
            reason: e.to_string(),
        })
    }

    /// The spec as TOML text ([`from_toml`](Self::from_toml) reads it back equal).
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("a pipeline spec is plain data TOML can always write")
    }

    /// The spec as JSON text ([`from_json`](Self::from_json) reads it back equal).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a pipeline spec is plain data")
    }
}

/// One stage of a pipeline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum StageSpec {
    /// Subtract from each channel a constant fitted once per recording (its mean).
    Center(CenterSpec),
    /// A Butterworth filter in time.
    Filter(FilterSpec),
    /// Subtract, at each sample, the median or mean of a set of channels.
    CommonReference(ReferenceSpec),
    /// Delay each channel by its ADC sample shift (Neuropixels' multiplexed ADCs).
    PhaseShift(PhaseShiftSpec),
    /// ZCA whitening with a matrix fitted once per recording.
    Whiten(WhitenSpec),
    /// Replace bad channels by a distance-weighted sum of their good neighbours.
    InterpolateBad(InterpolateSpec),
    /// A high-pass across each shank's channels between an automatic gain control and its
    /// undoing (IBL's `kfilt`).
    SpatialHighpass(SpatialHighpassSpec),
    /// The output's type and gain.
    Scale(ScaleSpec),
}

impl StageSpec {
    /// The stage's name as written in specs (`kind`).
    pub fn kind(&self) -> &'static str {
        match self {
            StageSpec::Center(_) => "center",
            StageSpec::Filter(_) => "filter",
            StageSpec::CommonReference(_) => "common_reference",
            StageSpec::PhaseShift(_) => "phase_shift",
            StageSpec::Whiten(_) => "whiten",
            StageSpec::InterpolateBad(_) => "interpolate_bad",
            StageSpec::SpatialHighpass(_) => "spatial_highpass",
            StageSpec::Scale(_) => "scale",
        }
    }
}

/// The pass band of a Butterworth filter (`scipy.signal.butter`'s `btype`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FilterBand {
    /// Pass above `cutoff_hz[0]`.
    Highpass,
    /// Pass below `cutoff_hz[0]`.
    Lowpass,
    /// Pass between `cutoff_hz[0]` and `cutoff_hz[1]`.
    Bandpass,
    /// Stop between `cutoff_hz[0]` and `cutoff_hz[1]` (a notch when they are close).
    Bandstop,
}

impl FilterBand {
    /// How many cut-off frequencies the band takes.
    pub fn cutoffs(self) -> usize {
        match self {
            FilterBand::Highpass | FilterBand::Lowpass => 1,
            FilterBand::Bandpass | FilterBand::Bandstop => 2,
        }
    }
}

/// Which way a filter runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FilterDirection {
    /// Forward then backward (`scipy.signal.sosfiltfilt`): no phase distortion, the order's
    /// attenuation twice.
    #[default]
    ZeroPhase,
    /// Forward only (`scipy.signal.sosfilt` from the steady state of the first sample).
    Causal,
}

/// A Butterworth filter, designed as `scipy.signal.butter(order, cutoff_hz, band, fs=rate,
/// output="sos")`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FilterSpec {
    /// The pass band.
    pub band: FilterBand,
    /// One cut-off (high- and low-pass) or two (band-pass, band-stop), in Hz.
    pub cutoff_hz: Vec<f64>,
    /// The Butterworth order (1 to [`MAX_FILTER_ORDER`]).
    pub order: u32,
    /// Zero-phase (the default) or causal.
    #[serde(default)]
    pub direction: FilterDirection,
    /// Samples of real signal on each side of a block that its filtering starts from; `None`:
    /// enough for the filter's slowest pole to decay below 1e-9 of its start (stated in the
    /// stage's report).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_samples: Option<u64>,
}

/// Highest Butterworth order a spec may ask for.
pub const MAX_FILTER_ORDER: u32 = 12;

/// The statistic a common reference subtracts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReferenceOperator {
    /// The median across the reference channels.
    #[default]
    Median,
    /// The mean across the reference channels.
    Mean,
}

/// Which middle value a median of an even count takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MedianRule {
    /// The mean of the two middle values (NumPy, SpikeInterface).
    #[default]
    Numpy,
    /// The lower of the two middle values (PyTorch, Kilosort).
    Lower,
}

/// Which channels a channel's reference is taken over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReferenceScope {
    /// Every signal channel.
    #[default]
    Global,
    /// The signal channels of the same shank (needs geometry).
    Shank,
    /// The channels in an annulus around the channel (needs geometry).
    Local,
}

/// A common reference (SpikeInterface's `common_reference`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReferenceSpec {
    /// Median (default) or mean.
    #[serde(default)]
    pub operator: ReferenceOperator,
    /// Global (default), per shank, or local.
    #[serde(default)]
    pub scope: ReferenceScope,
    /// The median of an even count (NumPy's by default).
    #[serde(default)]
    pub median: MedianRule,
    /// The local annulus, `[inner, outer]` µm (`inner < d <= outer`; SpikeInterface's
    /// `local_radius`, default `[30, 55]`).
    #[serde(default = "default_local_radius")]
    pub local_radius_um: [f64; 2],
    /// Local: fewer channels than this in the annulus, and the reference takes this many
    /// nearest channels beyond the inner radius instead (SpikeInterface's
    /// `min_local_neighbors`, default 5); a channel with none beyond it is left unreferenced.
    #[serde(default = "default_min_local_neighbors")]
    pub min_local_neighbors: u32,
}

fn default_local_radius() -> [f64; 2] {
    [30.0, 55.0]
}

fn default_min_local_neighbors() -> u32 {
    5
}

impl Default for ReferenceSpec {
    fn default() -> Self {
        Self {
            operator: ReferenceOperator::default(),
            scope: ReferenceScope::default(),
            median: MedianRule::default(),
            local_radius_um: default_local_radius(),
            min_local_neighbors: default_min_local_neighbors(),
        }
    }
}

/// A fractional delay of each channel by its ADC sample shift, from the probe.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhaseShiftSpec {
    /// Taps on each side of the delayed sample (the stage's context; default 32).
    #[serde(default = "default_half_taps")]
    pub half_taps: u32,
    /// `true`: on a recording whose probe states no channel's ADC sample shift (or that has no
    /// probe) the stage is left out of the chain (the samples pass unchanged) instead of the
    /// spec being refused, so that one spec serves Neuropixels and other probes
    /// ([`applies_to`](Self::applies_to)). Default `false`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub optional: bool,
}

fn default_half_taps() -> u32 {
    32
}

impl Default for PhaseShiftSpec {
    fn default() -> Self {
        Self {
            half_taps: default_half_taps(),
            optional: false,
        }
    }
}

/// Which channels a whitening row mixes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WhitenScope {
    /// Every signal channel (a dense matrix).
    #[default]
    Global,
    /// Each channel's `neighbours` nearest contacts, itself included (Kilosort's
    /// `whitening_range`), or those within `radius_um` (SpikeInterface's local mode).
    Local,
}

/// Which windows a fitted stage's statistics come from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FitSpec {
    /// How many windows (fewer when the recording is short).
    #[serde(default = "default_fit_windows")]
    pub windows: u32,
    /// Samples per window.
    #[serde(default = "default_fit_window_samples")]
    pub window_samples: u64,
    /// The seed of the windows' choice (the same seed, the same windows, the same matrix).
    #[serde(default)]
    pub seed: u64,
    /// Instead of a seeded choice: every `every`-th window of `window_samples` from each
    /// segment's start (windows 0, `every`, 2 × `every`, …), leaving out each segment's last
    /// window, whole or not — Kilosort4's `get_whitening_matrix(..., nskip=25)` over its
    /// batches. At most `windows` of them; `seed` is not used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every: Option<u32>,
}

fn default_fit_windows() -> u32 {
    20
}

fn default_fit_window_samples() -> u64 {
    15_000
}

impl Default for FitSpec {
    fn default() -> Self {
        Self {
            windows: default_fit_windows(),
            window_samples: default_fit_window_samples(),
            seed: 0,
            every: None,
        }
    }
}

/// Each channel minus a constant: its mean over the fit windows, fitted once per recording
/// (Kilosort4 removes each channel's mean per 2 s batch before its median; a constant fitted
/// once keeps the output free of batch seams). A fit window as long as the recording (or
/// longer) makes it the recording's mean.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CenterSpec {
    /// Where the means are fitted.
    #[serde(default)]
    pub fit: FitSpec,
}

/// ZCA whitening, `W = E·diag(1/√(λ + ε))·Eᵀ` of the channels' covariance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WhitenSpec {
    /// Global (default) or local.
    #[serde(default)]
    pub scope: WhitenScope,
    /// Local: the nearest contacts a row mixes, itself included (Kilosort: 32).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub neighbours: Option<u32>,
    /// Local: the radius a row mixes within, in µm (SpikeInterface: 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub radius_um: Option<f64>,
    /// The regulariser added to each eigenvalue (µV²).
    #[serde(default = "default_epsilon")]
    pub epsilon: f64,
    /// Where the covariance is fitted.
    #[serde(default)]
    pub fit: FitSpec,
    /// A fitted matrix to apply instead of fitting one (a file written by an earlier fit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matrix: Option<String>,
}

fn default_epsilon() -> f64 {
    1e-8
}

impl Default for WhitenSpec {
    fn default() -> Self {
        Self {
            scope: WhitenScope::default(),
            neighbours: None,
            radius_um: None,
            epsilon: default_epsilon(),
            fit: FitSpec::default(),
            matrix: None,
        }
    }
}

/// Bad-channel interpolation (SpikeInterface's `interpolate_bad_channels`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InterpolateSpec {
    /// The channels to replace (indices into the recording's channels); empty with
    /// [`InterpolateSpec::detect`].
    #[serde(default)]
    pub channels: Vec<usize>,
    /// Replace the channels dspk's own bad-channel detection finds instead of `channels`: the
    /// channels a scan of the whole recording flags dead or noisy (`dspk scan`'s
    /// classification, on the raw values), found once per recording when the pipeline is
    /// fitted, so every window, device and job replaces the same ones. None found: the stage
    /// changes nothing.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub detect: bool,
    /// The distance scale σ of the weights `exp(-(d/σ)^p)` in µm (`None`: the most common
    /// step between the probe's distinct contact heights, SpikeInterface's
    /// `estimate_recommended_sigma_um`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sigma_um: Option<f64>,
    /// The exponent `p` (default 1.3).
    #[serde(default = "default_interp_p")]
    pub p: f64,
    /// Weights below this are 0, before and again after each bad channel's weights are
    /// normalised to sum 1 (SpikeInterface's fixed 0.005, the default).
    #[serde(default = "default_weight_floor")]
    pub weight_floor: f64,
}

fn default_interp_p() -> f64 {
    1.3
}

fn default_weight_floor() -> f64 {
    0.005
}

/// The output's sample type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutputType {
    /// `float32` µV (or the whitened unit), unchanged.
    #[default]
    Float32,
    /// `int16`: `round(x · gain)`, saturated at the type's range (clipped samples counted).
    Int16,
}

/// The output's type and gain.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScaleSpec {
    /// `float32` (default) or `int16`.
    #[serde(default)]
    pub output: OutputType,
    /// Multiplies every sample (Kilosort writes whitened data ×200 as int16).
    #[serde(default = "default_gain")]
    pub gain: f64,
}

fn default_gain() -> f64 {
    1.0
}

impl Default for ScaleSpec {
    fn default() -> Self {
        Self {
            output: OutputType::default(),
            gain: default_gain(),
        }
    }
}
