//! The Neuropixels phase shift: each channel delayed by its ADC sample shift with a fixed
//! windowed-sinc filter, so that the channels a multiplexed ADC sampled one after another line
//! up in time again.
//!
//! A Neuropixels ADC samples its channels in turn within each sample period, so channel `c`
//! lags the first of its ADC by `order / cycle` of a sample ([`Probe::sample_shift`](dspk_types::Probe::sample_shift): NP1 13
//! cycles, NP2 16). SpikeInterface's `phase_shift` (from IBL's `fshift`) multiplies each
//! channel's spectrum by `e^{−iω·shift}`, i.e. `y[n] = x(n − shift)` — a positive shift
//! **delays** the channel — over each chunk plus a 40 ms margin, zero-padded at a segment's
//! ends with a cosine taper over the margin, by FFT. This stage gives the same delay with
//! `2·half_taps` taps per channel ([`taps`]: a Kaiser-windowed sinc designed on the host in
//! `f64` once, uploaded as `f32`), summed in a fixed order, so each output sample depends on
//! `half_taps` samples before it and `half_taps − 1` after, never on where the window falls:
//! [`Halo::both`]`(half_taps)`.
//!
//! **Error.** The filter's response is within 1.8e-9 of `e^{−iω·shift}` for frequencies up to
//! 2/3 of Nyquist (10 kHz at 30 kHz) at the default 32 half-taps ([`taps`] lists other
//! lengths); the device adds `f32` rounding. Against an FFT shift of the whole signal in `f64`
//! (band-limited to 10 kHz at 30 kHz, NP1 shifts) the tests measure ≤ 1e-8 of the RMS for the
//! `f64` host filter and ≤ 1.3e-6 for the device on lavapipe, from `half_taps` samples in from
//! a segment's ends (the bound asked for is 1e-3); content between 2/3 of Nyquist and
//! Nyquist is delayed less exactly (the design's transition band), as any finite filter.
//!
//! **Segment ends.** Past a segment's first and last samples the filter reads the odd
//! extension of the segment (`x[−d] = 2·x[0] − x[d]`, as scipy's filters pad): a DC offset or
//! a slow LFP continues without a step, so the first and last `half_taps` samples carry no
//! ringing. SpikeInterface zero-pads there instead (and its FFT wraps around), so the two
//! differ near the ends by design: with a 200 µV DC offset, 1.4 µV at 32 samples from an end,
//! 0.03 µV at 1200, 0.01 µV at 3000 (SpikeInterface's zero padding rings as 1/distance). Away
//! from the ends, on band-limited data, dspk and SpikeInterface differ by 2e-6 of the RMS
//! (float32 rounding; `python/tests/test_ops_shift.py`).
//!
//! [`host`] is the reference in `f64` (one channel's segment, the same extension).

mod design;
mod host;
mod kernel;

use cubecl::client::Client;
use cubecl::server::Handle;
use dspk_kernels::{GridLimits, LaunchGeometry, f32_arg};
use dspk_types::{DspError, DspResult, PhaseShiftSpec, RecordingInfo};

pub use design::{ACCURATE_FRACTION_OF_NYQUIST, taps};
pub use host::host;

use crate::stage::{Halo, Span, Stage};

/// The phase shift on one device: each channel's taps, uploaded once.
pub struct PhaseShiftStage {
    client: Client,
    shifts: Vec<f64>,
    half_taps: u32,
    taps: Handle,
    limits: GridLimits,
    /// Output samples a unit computes (its device's choice, see [`PER_UNIT_CPU`]).
    per_unit: usize,
}

/// Output samples one unit computes on a CPU device (lavapipe), where each load is a gather
/// over the SIMD lanes: a run of 16 loads 79 inputs for its 1,024 products (32 taps a side)
/// instead of 1,024. Measured on lavapipe (2 cores), 384 channels × 1 s, 32 taps a side: 1
/// sample a unit 1,235 ms, 4 669–743 ms, 8 370–410 ms, 16 189–259 ms.
const PER_UNIT_CPU: usize = 16;

/// The same on a GPU: one, its loads coalesced with its neighbours'.
const PER_UNIT_GPU: usize = 1;

impl std::fmt::Debug for PhaseShiftStage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PhaseShiftStage")
            .field("channels", &self.shifts.len())
            .field("half_taps", &self.half_taps)
            .finish_non_exhaustive()
    }
}

impl PhaseShiftStage {
    /// The stage for `info`'s channels, each delayed by its probe's ADC sample shift
    /// ([`Probe::sample_shift`](dspk_types::Probe::sample_shift)).
    ///
    /// # Errors
    /// A recording without a probe, a channel without an ADC sample shift, and what
    /// [`with_shifts`](Self::with_shifts) refuses.
    pub fn new(client: &Client, spec: &PhaseShiftSpec, info: &RecordingInfo) -> DspResult<Self> {
        let probe = info.probe.as_ref().ok_or_else(|| {
            DspError::config(format!(
                "a phase shift needs the probe's ADC sample shifts, and {} has no probe",
                info.name
            ))
        })?;
        let shifts = (0..info.channel_count())
            .map(|c| {
                probe.sample_shift(c).ok_or_else(|| {
                    DspError::config(format!(
                        "a phase shift needs each channel's ADC sample shift, and channel {c} \
                         ({}) has none",
                        info.channels[c].name
                    ))
                })
            })
            .collect::<DspResult<Vec<f64>>>()?;
        Self::with_shifts(client, &shifts, spec.half_taps)
    }

    /// The stage delaying channel `c` by `shifts[c]` samples with `2·half_taps` taps.
    ///
    /// # Errors
    /// No channels, `half_taps` outside `1..=MAX_HALF_TAPS`, a shift outside `[0, 1)`.
    pub fn with_shifts(client: &Client, shifts: &[f64], half_taps: u32) -> DspResult<Self> {
        if shifts.is_empty() {
            return Err(DspError::config("a phase shift needs at least one channel"));
        }
        let max = dspk_types::MAX_HALF_TAPS;
        if !(1..=max).contains(&half_taps) {
            return Err(DspError::config(format!(
                "a phase shift's half_taps is {half_taps}, not within 1..={max}"
            )));
        }
        if let Some((c, s)) = shifts
            .iter()
            .enumerate()
            .find(|(_, s)| !(0.0..1.0).contains(*s))
        {
            return Err(DspError::config(format!(
                "channel {c}'s sample shift is {s}, not a fraction of a sample in [0, 1)"
            )));
        }
        let values: Vec<u8> = shifts
            .iter()
            .flat_map(|&s| taps(s, half_taps))
            .flat_map(|t| (t as f32).to_le_bytes())
            .collect();
        Ok(Self {
            client: client.clone(),
            shifts: shifts.to_vec(),
            half_taps,
            taps: client.create_from_slice(&values),
            limits: GridLimits::of(client),
            per_unit: if dspk_kernels::runs_on_cpu(client) {
                PER_UNIT_CPU
            } else {
                PER_UNIT_GPU
            },
        })
    }

    /// The same stage with `samples` (1 to 16; outside, the nearest) per unit instead of its
    /// device's choice: each output's sum is unchanged, so the same bits (for tests of both).
    #[must_use]
    pub fn with_samples_per_unit(mut self, samples: usize) -> Self {
        self.per_unit = samples.clamp(1, 16);
        self
    }

    /// Each channel's shift in samples (positive: delayed).
    pub fn shifts(&self) -> &[f64] {
        &self.shifts
    }

    /// Taps on each side of a delayed sample.
    pub fn half_taps(&self) -> u32 {
        self.half_taps
    }
}

impl Stage for PhaseShiftStage {
    fn kind(&self) -> &'static str {
        "phase_shift"
    }

    fn halo(&self) -> Halo {
        Halo::both(u64::from(self.half_taps))
    }

    fn launch(&mut self, input: &Handle, output: &Handle, span: &Span) -> DspResult<()> {
        span.check()?;
        let channels = self.shifts.len();
        if span.channels != channels {
            return Err(DspError::shape(
                "channels of a phase shift's span",
                channels,
                span.channels,
            ));
        }
        if span.is_empty() {
            return Ok(());
        }
        let halo = self.halo();
        let valid = span.input_range(halo);
        // The samples the filter reads must be in the row wherever the segment has them: a
        // row that cuts the context short would make the output depend on the window.
        let want_start = span
            .global(span.produce.start)
            .saturating_sub(halo.before)
            .max(span.segment.start);
        let want_end = (span.global(span.produce.end) + halo.after).min(span.segment.end);
        if want_start < span.global(valid.start) || want_end > span.global(valid.end) {
            return Err(DspError::config(format!(
                "a phase shift producing recording samples {}..{} needs samples {want_start}..\
                 {want_end} of its segment, and the window's rows hold {}..{}",
                span.global(span.produce.start),
                span.global(span.produce.end),
                span.origin,
                span.global(span.stride)
            )));
        }
        let count = span.produce.len();
        let runs = count.div_ceil(self.per_unit);
        let g = LaunchGeometry::channels_samples_with(&self.limits, channels, runs)?;
        let width = 2 * self.half_taps as usize;
        kernel::shift_rows::launch(
            &self.client,
            g.cube_count(),
            g.cube_dim(),
            f32_arg(input, span.len())?,
            f32_arg(output, span.len())?,
            f32_arg(&self.taps, channels * width)?,
            channels,
            span.stride,
            span.produce.start,
            count,
            runs,
            valid.start,
            valid.end,
            self.half_taps as usize,
            self.per_unit,
        );
        Ok(())
    }
}
