//! Named pipelines that follow a tool users trust ([`PipelineSpec::preset`]), each parameter
//! with the place in that tool's code it comes from: Kilosort 4.1.7, SpikeInterface 0.105.3 and
//! ibl-neuropixel 1.14.0.

use super::{
    CenterSpec, FilterBand, FilterDirection, FilterSpec, FitSpec, InterpolateSpec, MedianRule,
    OutputType, PhaseShiftSpec, PipelineError, PipelineSpec, ReferenceOperator, ReferenceScope,
    ReferenceSpec, ScaleSpec, SpatialHighpassSpec, StageSpec, WhitenScope, WhitenSpec,
};

/// A named pipeline and what it is, in a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Preset {
    /// The name [`PipelineSpec::preset`] takes.
    pub name: &'static str,
    /// What it follows, in a line.
    pub description: &'static str,
}

/// Every preset, by name.
pub const PRESETS: &[Preset] = &[
    Preset {
        name: "kilosort4",
        description: "Kilosort 4's preprocessing: channel means, lower-median reference, \
                      high-pass 300 Hz order 3, local whitening over 32 contacts, int16 ×200",
    },
    Preset {
        name: "spikeinterface",
        description: "SpikeInterface's common chain: bandpass 300–6000 Hz order 5, Neuropixels \
                      phase shift where the probe states ADC shifts, global median reference",
    },
    Preset {
        name: "ibl",
        description: "IBL's destripe: high-pass 300 Hz order 3, Neuropixels phase shift where the \
                      probe states ADC shifts, spatial high-pass per shank after a 0.1 s gain \
                      control",
    },
];

/// Kilosort4's batch: `NT = 60000` samples (`kilosort/parameters.py`, `batch_size`; 2 s at
/// 30 kHz), the span of the whitening covariance and of each channel-mean removal.
const KILOSORT_BATCH_SAMPLES: u64 = 60_000;

/// The fitted stages' windows in the `kilosort4` preset: Kilosort's own, every 25th batch of
/// [`KILOSORT_BATCH_SAMPLES`] from the start, the last batch left out
/// (`get_whitening_matrix(..., nskip=25)`: `range(0, n_batches - 1, 25)`), with no cap, as
/// Kilosort has none: 6 batches on 5 minutes, 72 on an hour, the whole recording on one batch
/// or less. The fit reads 1/25 of the recording.
const KILOSORT_FIT: FitSpec = FitSpec {
    windows: u32::MAX,
    window_samples: KILOSORT_BATCH_SAMPLES,
    seed: 0,
    every: Some(25),
};

/// The filters' block in every preset (`block_samples`): 1024 samples. The presets' filters
/// (300 Hz high-pass or band-pass) need ~800–1 450 samples of context, so a block of 1024 keeps
/// each window's halo small (the kilosort4 high-pass: 1 849 samples a side against 4 921 at the
/// pipeline default of 4096) and gives the device four times the units to run at once, at about
/// 1.7 times the filter's arithmetic. Measured (BENCHMARKS.md, issue 32): K1a of 300 s on the
/// H200 0.72 s against 0.94–1.01 s at 4096, the same time on lavapipe. A filter of a low cut-off
/// (a context of many blocks) is better served by a larger block: the pipeline default stays
/// 4096 for specs that name none.
pub const PRESET_BLOCK_SAMPLES: u32 = 1024;

impl PipelineSpec {
    /// The preset named `name` (see [`PRESETS`]).
    ///
    /// # Errors
    /// No preset of that name ([`PipelineError::UnknownPreset`], listing the presets).
    pub fn preset(name: &str) -> Result<PipelineSpec, PipelineError> {
        match name {
            "kilosort4" => Ok(kilosort4()),
            "spikeinterface" => Ok(spikeinterface()),
            "ibl" => Ok(ibl()),
            _ => Err(PipelineError::UnknownPreset {
                name: name.to_owned(),
                known: PRESETS.iter().map(|p| p.name).collect(),
            }),
        }
    }

    /// Every preset's name and description.
    pub fn presets() -> &'static [Preset] {
        PRESETS
    }
}

/// `kilosort4`: Kilosort 4.1.7's preprocessing (`kilosort/io.py`, `BinaryFiltered.filter`;
/// `kilosort/preprocessing.py`; defaults of `kilosort/parameters.py`), seam-free.
///
/// 1. **`center`**, fitted on Kilosort's whitening batches (`KILOSORT_FIT`): Kilosort removes
///    each channel's mean over its batch (`X = X - X.mean(1).unsqueeze(1)`) before its median.
///    That mean changes from one 2 s batch to the next, so the reference (and everything
///    after it) depends on where the batches fall; here the mean is one constant per channel,
///    fitted once per recording. On a recording of at most one batch (60 000 samples) the fit
///    window is the whole recording, and the stage equals Kilosort's mean removal on that
///    recording run as one batch. Past that, only the median sees the difference (the
///    high-pass removes any constant).
/// 2. **`common_reference`**, median, global, `median = "lower"`: `X = X - torch.median(X,
///    0)[0]` when `do_CAR` (`run_kilosort`'s argument, default `True`); torch's median of an even count is the lower of
///    the two middle values.
/// 3. **`filter`**, high-pass 300 Hz, Butterworth order 3, zero-phase: `get_highpass_filter(fs,
///    cutoff=highpass_cutoff (300))` designs `butter(3, 300, fs=fs, btype="high")` and applies
///    the impulse response of `scipy.signal.filtfilt` (30 122 taps) by circular FFT over each
///    batch (`fft_highpass`). dspk runs the same sections forward and backward
///    (`sosfiltfilt`) on a fixed grid with enough real context that the output does not
///    depend on the windows; the two differ at a batch's ends (Kilosort's circular wrap, 61
///    samples of context) and by `float32` FFT rounding elsewhere.
/// 4. **`whiten`**, local, `neighbours = 32` (`whitening_range`), `epsilon = 1e-6`
///    (`whitening_from_covariance`'s `eps`), covariance `Σ x·xᵀ / n` of the data after the
///    high-pass over `KILOSORT_FIT` (`get_whitening_matrix`: the mean of `X·Xᵀ/NT` over every
///    25th batch), each row the centre's row of the ZCA of its 32 nearest contacts
///    (`whitening_local`). Kilosort's `eps` is in its int16 units, dspk's in µV²; both are
///    below 10⁻⁶ of a recorded covariance's eigenvalues, so they change nothing measurable.
///    Ties at the 32nd distance: Kilosort's are `np.argsort`'s, dspk's by channel index.
/// 5. **`scale`**, int16, gain 200: `save_preprocessing` writes `(y * 200).astype("int16")`.
///    NumPy's cast truncates toward zero and wraps values out of range; dspk rounds half to
///    even and saturates (counting each clipped sample), so an int16 sample differs from
///    Kilosort's by at most 1 where it is in range.
///
/// Not part of it: Kilosort's drift correction (`dshift`, a later stage of the sorter) and its
/// artifact threshold (default off, `artifact_threshold = inf`). Kilosort works on the
/// stored integers; dspk on µV. Whitening makes the output unit-free, so the int16 output is
/// the same.
fn kilosort4() -> PipelineSpec {
    PipelineSpec {
        stages: vec![
            StageSpec::Center(CenterSpec { fit: KILOSORT_FIT }),
            StageSpec::CommonReference(ReferenceSpec {
                operator: ReferenceOperator::Median,
                scope: ReferenceScope::Global,
                median: MedianRule::Lower,
                ..ReferenceSpec::default()
            }),
            StageSpec::Filter(FilterSpec {
                band: FilterBand::Highpass,
                cutoff_hz: vec![300.0],
                order: 3,
                direction: FilterDirection::ZeroPhase,
                context_samples: None,
            }),
            StageSpec::Whiten(WhitenSpec {
                scope: WhitenScope::Local,
                neighbours: Some(32),
                radius_um: None,
                epsilon: 1e-6,
                fit: KILOSORT_FIT,
                matrix: None,
            }),
            StageSpec::Scale(ScaleSpec {
                output: OutputType::Int16,
                gain: 200.0,
            }),
        ],
        block_samples: PRESET_BLOCK_SAMPLES,
    }
}

/// `spikeinterface`: SpikeInterface 0.105.3's common chain for Neuropixels
/// (`spikeinterface/preprocessing/`), float32 µV out.
///
/// 1. **`filter`**, band-pass 300–6000 Hz, Butterworth order 5, zero-phase:
///    `bandpass_filter(recording, freq_min=300.0, freq_max=6000.0)` (`filter.py`,
///    `BandpassFilterRecording`) with `FilterRecording`'s defaults `filter_order=5,
///    ftype="butter", filter_mode="sos", direction="forward-backward"`: `sosfiltfilt` over each
///    chunk with a margin of `5 / freq_min` s (`margin_ms="auto"`, 500 samples at 30 kHz).
///    dspk's context (default: the slowest pole decayed below 1e-9, over 1000 samples) makes
///    the output independent of the windows and equal to a margin large enough to be exact.
/// 2. **`phase_shift`**, 32 taps each side, `optional`: `phase_shift(recording,
///    margin_ms=40.0)` (`phase_shift.py`) delays each channel by its `inter_sample_shift` by
///    FFT; dspk by a windowed sinc within 1.8e-9 of that delay up to 10 kHz at 30 kHz
///    (`dspk_ops::shift`), which the band-pass before it makes the whole band. SpikeInterface
///    asserts the `inter_sample_shift` property and users add the step for Neuropixels only;
///    here the stage runs where the probe states each channel's ADC shift and is left out
///    (data unchanged) on a recording whose probe states none
///    ([`PhaseShiftSpec::applies_to`]).
/// 3. **`common_reference`**, median, global, NumPy's median (the mean of the two middle
///    values): `common_reference(recording, reference="global", operator="median")`
///    (`common_reference.py`).
///
/// SpikeInterface keeps the input's dtype by default (`dtype=None`: int16 in, each step
/// rounded to int16); this preset keeps float32 µV, and a `scale` stage added last gives int16.
fn spikeinterface() -> PipelineSpec {
    PipelineSpec {
        stages: vec![
            StageSpec::Filter(FilterSpec {
                band: FilterBand::Bandpass,
                cutoff_hz: vec![300.0, 6000.0],
                order: 5,
                direction: FilterDirection::ZeroPhase,
                context_samples: None,
            }),
            StageSpec::PhaseShift(PhaseShiftSpec {
                optional: true,
                ..PhaseShiftSpec::default()
            }),
            StageSpec::CommonReference(ReferenceSpec {
                operator: ReferenceOperator::Median,
                scope: ReferenceScope::Global,
                median: MedianRule::Numpy,
                ..ReferenceSpec::default()
            }),
        ],
        block_samples: PRESET_BLOCK_SAMPLES,
    }
}

/// `ibl`: the International Brain Laboratory's `destripe` (ibl-neuropixel 1.14.0,
/// `ibldsp/voltage.py`, defaults of `_get_destripe_parameters`), float32 µV out.
///
/// 1. **`filter`**, high-pass 300 Hz, Butterworth order 3, zero-phase: `butter_kwargs = {"N":
///    3, "Wn": 300 / fs * 2, "btype": "highpass"}`, `scipy.signal.sosfiltfilt` over the whole
///    array; dspk's context makes the output independent of the windows and equal to that.
/// 2. **`phase_shift`**, 32 taps each side, `optional`: `fourier.fshift(x,
///    h["sample_shift"])`, an FFT delay of each channel by its ADC sample shift (the probe's
///    `sample_shift`, or Neuropixels 1.0's when `neuropixel_version` is given); dspk by a
///    windowed sinc (`dspk_ops::shift`), where the probe states each channel's ADC shift, and
///    left out on a recording whose probe states none. IBL's FFT shift of the whole array is
///    circular: near its ends it wraps the other end in, which dspk does not.
/// 3. **`interpolate_bad`** with `detect = true`: `interpolate_bad_channels` of the channels
///    labelled dead or noisy, weights `exp(-(d / 20 µm)^1.3)` floored at 0.005
///    (`kriging_distance_um = 20`, `p = 1.3`). IBL labels them with its own
///    `detect_bad_channels` (coherence with neighbours and high-frequency power); dspk with its
///    own detection: the channels a scan of the whole raw recording flags dead or noisy (`dspk
///    scan`'s classification), found once when the pipeline is fitted. The two detections can
///    disagree on a channel; `python/tests/test_presets_ibl.py` holds the preset to `destripe`
///    given dspk's channels as its labels. A recording without bad channels skips the stage.
/// 4. **`spatial_highpass`**, the "k-filter" (`kfilt`, `k_filter=True`), per shank
///    (`collection = h["shank"]`): `destripe` passes `k_kwargs` to `kfilt`, which, called
///    with a collection, calls itself per shank with only `ntr_pad`, `ntr_tap` and
///    `butter_kwargs`, so each shank runs on `kfilt`'s own defaults for the rest:
///    `agc_window_samples = 3000` (`lagc=3000`: a Hann window of 3 001 points, 0.1 s at 30 kHz,
///    the same samples at any rate), `order = 3`, `cutoff = 0.01` (`{"N": 3, "Wn": 0.01,
///    "btype": "highpass"}`), `pad_channels = 60` (`ntr_pad=60`, `ntr_tap=0`). Its gain floor
///    (`epsilon=None`: `0.003 ×` the standard deviation of the shank's array) depends on the
///    array's extent; dspk's is the constant `agc_floor_uv = 0.01` µV, and the two differ only
///    where the 0.1 s mean of `|x|` falls below them (flat stretches), see `dspk_ops::kfilt`.
///
/// Not part of it: the channels IBL labels "outside the brain" (label 3), which `destripe`
/// leaves out of the k-filter; dspk detects no such channels.
fn ibl() -> PipelineSpec {
    PipelineSpec {
        stages: vec![
            StageSpec::Filter(FilterSpec {
                band: FilterBand::Highpass,
                cutoff_hz: vec![300.0],
                order: 3,
                direction: FilterDirection::ZeroPhase,
                context_samples: None,
            }),
            StageSpec::PhaseShift(PhaseShiftSpec {
                optional: true,
                ..PhaseShiftSpec::default()
            }),
            StageSpec::InterpolateBad(InterpolateSpec {
                channels: Vec::new(),
                detect: true,
                sigma_um: Some(20.0),
                p: 1.3,
                weight_floor: 0.005,
            }),
            StageSpec::SpatialHighpass(SpatialHighpassSpec {
                agc_window_samples: 3000,
                agc_floor_uv: 0.01,
                order: 3,
                cutoff: 0.01,
                pad_channels: 60,
            }),
        ],
        block_samples: PRESET_BLOCK_SAMPLES,
    }
}
