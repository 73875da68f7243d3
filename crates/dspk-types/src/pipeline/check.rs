//! [`PipelineSpec::check`]: a spec validated against the recording it will run on.

use super::{
    CenterSpec, FilterBand, FilterSpec, FitSpec, InterpolateSpec, MAX_FILTER_ORDER, PhaseShiftSpec,
    PipelineError, PipelineSpec, ReferenceScope, ReferenceSpec, ScaleSpec, StageSpec, WhitenScope,
    WhitenSpec,
};
use crate::{Probe, RecordingInfo};

/// Smallest filter block a spec may ask for.
pub const MIN_BLOCK_SAMPLES: u32 = 64;
/// Largest filter block a spec may ask for.
pub const MAX_BLOCK_SAMPLES: u32 = 1 << 20;
/// Most taps on each side a phase shift may ask for.
pub const MAX_HALF_TAPS: u32 = 1024;
/// Most samples of context a filter may ask for on each side: more than any filter dspk builds
/// needs (the slowest it admits decays below 1e-9 in about 2,200), and longer spans per device
/// unit were seen to come back wrong on lavapipe (a 40 000-sample span; 20 000 was right).
pub const MAX_CONTEXT_SAMPLES: u64 = 8192;

impl PipelineSpec {
    /// Checks that every stage can run on `info` (the channels the pipeline will see, with
    /// their geometry in `info.probe`): cut-offs below Nyquist and in order, orders in range,
    /// geometry (and ADC shifts) present where a stage needs them, the channels named exist,
    /// finite positive numbers, and `scale` last.
    ///
    /// # Errors
    /// The first stage that cannot run, naming it, its position and the offending values.
    pub fn check(&self, info: &RecordingInfo) -> Result<(), PipelineError> {
        if !(MIN_BLOCK_SAMPLES..=MAX_BLOCK_SAMPLES).contains(&self.block_samples) {
            return Err(PipelineError::Spec(format!(
                "block_samples is {}, not within {MIN_BLOCK_SAMPLES}..={MAX_BLOCK_SAMPLES}",
                self.block_samples
            )));
        }
        for (index, stage) in self.stages.iter().enumerate() {
            let fail = |reason: String| PipelineError::Stage {
                index,
                kind: stage.kind(),
                reason,
            };
            let checked = match stage {
                StageSpec::Center(c) => center(c),
                StageSpec::Filter(f) => filter(f, info, self.block_samples),
                StageSpec::CommonReference(r) => reference(r, info),
                StageSpec::PhaseShift(p) => phase_shift(p, info),
                StageSpec::Whiten(w) => whiten(w, info),
                StageSpec::InterpolateBad(i) => interpolate(i, info),
                StageSpec::SpatialHighpass(s) => s.check(info),
                StageSpec::Scale(s) => scale(s, index + 1 == self.stages.len()),
            };
            checked.map_err(fail)?;
        }
        Ok(())
    }
}

fn filter(f: &FilterSpec, info: &RecordingInfo, block: u32) -> Result<(), String> {
    let nyquist = info.sample_rate.nyquist_hz();
    if f.cutoff_hz.len() != f.band.cutoffs() {
        return Err(format!(
            "a {:?} filter takes {} cut-off(s), got {} ({:?})",
            f.band,
            f.band.cutoffs(),
            f.cutoff_hz.len(),
            f.cutoff_hz
        )
        .to_lowercase());
    }
    for &hz in &f.cutoff_hz {
        if !(hz.is_finite() && hz > 0.0 && hz < nyquist) {
            return Err(format!(
                "cut-off {hz} Hz is not between 0 and Nyquist ({nyquist} Hz at {} Hz)",
                info.sample_rate.rate_hz()
            ));
        }
    }
    if matches!(f.band, FilterBand::Bandpass | FilterBand::Bandstop)
        && f.cutoff_hz[0] >= f.cutoff_hz[1]
    {
        return Err(format!(
            "the low cut-off ({} Hz) must be below the high one ({} Hz)",
            f.cutoff_hz[0], f.cutoff_hz[1]
        ));
    }
    if !(1..=MAX_FILTER_ORDER).contains(&f.order) {
        return Err(format!(
            "order {} is not within 1..={MAX_FILTER_ORDER}",
            f.order
        ));
    }
    if let Some(context) = f.context_samples
        && context < u64::from(block.min(1024))
    {
        return Err(format!(
            "context_samples {context} is too short: at least {} samples of real signal on \
             each side",
            block.min(1024)
        ));
    }
    if let Some(context) = f.context_samples
        && context > MAX_CONTEXT_SAMPLES
    {
        return Err(format!(
            "context_samples {context} is more than the {MAX_CONTEXT_SAMPLES} any filter dspk \
             builds needs"
        ));
    }
    Ok(())
}

fn probe_for<'a>(info: &'a RecordingInfo, what: &str) -> Result<&'a Probe, String> {
    let probe = info.probe.as_ref().ok_or_else(|| {
        format!(
            "{what} needs the probe's geometry, and {} has none (give one with a probe file)",
            info.name
        )
    })?;
    if let Some(missing) = (0..info.channel_count()).find(|&c| probe.contact(c).is_err()) {
        return Err(format!(
            "{what} needs a contact for every channel, and channel {missing} ({}) has none \
             (select the signal channels)",
            info.channels[missing].name
        ));
    }
    Ok(probe)
}

fn reference(r: &ReferenceSpec, info: &RecordingInfo) -> Result<(), String> {
    match r.scope {
        ReferenceScope::Global => Ok(()),
        ReferenceScope::Shank => probe_for(info, "a per-shank reference").map(|_| ()),
        ReferenceScope::Local => {
            let [inner, outer] = r.local_radius_um;
            if !(inner.is_finite() && outer.is_finite() && inner >= 0.0 && inner < outer) {
                return Err(format!(
                    "local_radius_um [{inner}, {outer}] is not an annulus (0 <= inner < outer)"
                ));
            }
            probe_for(info, "a local reference").map(|_| ())
        }
    }
}

impl PhaseShiftSpec {
    /// Whether the stage runs on `info`: always, unless it is
    /// [`optional`](Self::optional) and the recording has no probe or its probe states no
    /// channel's ADC sample shift (then the chain leaves it out). A probe stating the shifts
    /// of only some channels is refused by [`PipelineSpec::check`] either way.
    pub fn applies_to(&self, info: &RecordingInfo) -> bool {
        !self.optional
            || info.probe.as_ref().is_some_and(|probe| {
                (0..info.channel_count()).any(|c| probe.sample_shift(c).is_some())
            })
    }
}

fn fit(f: &FitSpec) -> Result<(), String> {
    if f.windows == 0 || f.window_samples == 0 {
        return Err(format!(
            "the fit needs at least one window of at least one sample, got {} of {}",
            f.windows, f.window_samples
        ));
    }
    if f.every == Some(0) {
        return Err("the fit's every must be at least 1 (every window)".into());
    }
    Ok(())
}

fn center(c: &CenterSpec) -> Result<(), String> {
    fit(&c.fit)
}

fn phase_shift(p: &PhaseShiftSpec, info: &RecordingInfo) -> Result<(), String> {
    if !(1..=MAX_HALF_TAPS).contains(&p.half_taps) {
        return Err(format!(
            "half_taps {} is not within 1..={MAX_HALF_TAPS}",
            p.half_taps
        ));
    }
    if !p.applies_to(info) {
        return Ok(());
    }
    let probe = probe_for(info, "a phase shift")?;
    if let Some(c) = (0..info.channel_count()).find(|&c| probe.sample_shift(c).is_none()) {
        return Err(format!(
            "a phase shift needs each channel's ADC sample shift, and channel {c} ({}) has none \
             (the probe states no ADC cycle or slot)",
            info.channels[c].name
        ));
    }
    Ok(())
}

fn whiten(w: &WhitenSpec, info: &RecordingInfo) -> Result<(), String> {
    if !(w.epsilon.is_finite() && w.epsilon >= 0.0) {
        return Err(format!("epsilon {} is not a finite number >= 0", w.epsilon));
    }
    fit(&w.fit)?;
    match (w.scope, w.neighbours, w.radius_um) {
        (WhitenScope::Global, None, None) => Ok(()),
        (WhitenScope::Global, _, _) => {
            Err("global whitening takes neither neighbours nor radius_um".into())
        }
        (WhitenScope::Local, Some(k), None) if k >= 1 => {
            probe_for(info, "local whitening").map(|_| ())
        }
        (WhitenScope::Local, None, Some(r)) if r.is_finite() && r > 0.0 => {
            probe_for(info, "local whitening").map(|_| ())
        }
        (WhitenScope::Local, k, r) => Err(format!(
            "local whitening takes exactly one of neighbours (>= 1) or radius_um (> 0), got \
             neighbours {k:?} and radius_um {r:?}"
        )),
    }
}

fn interpolate(i: &InterpolateSpec, info: &RecordingInfo) -> Result<(), String> {
    let n = info.channel_count();
    if let Some(&bad) = i.channels.iter().find(|&&c| c >= n) {
        return Err(format!(
            "channel {bad} does not exist: the recording has {n} channels"
        ));
    }
    if i.detect && !i.channels.is_empty() {
        return Err(format!(
            "channels {:?} are given and detect is set: give the channels or let dspk detect them, \
             not both",
            i.channels
        ));
    }
    if i.channels.is_empty() && !i.detect {
        return Err("no channels to interpolate (give channels, or set detect = true)".into());
    }
    let mut unique = i.channels.clone();
    unique.sort_unstable();
    unique.dedup();
    if unique.len() == n {
        return Err(format!(
            "every one of the {n} channels is marked bad: nothing to interpolate from"
        ));
    }
    if !(i.p.is_finite() && i.p > 0.0) {
        return Err(format!("p {} is not a finite number > 0", i.p));
    }
    if !(i.weight_floor.is_finite() && (0.0..1.0).contains(&i.weight_floor)) {
        return Err(format!(
            "weight_floor {} is not within 0 <= floor < 1",
            i.weight_floor
        ));
    }
    let probe = probe_for(info, "bad-channel interpolation")?;
    match i.sigma_um {
        Some(s) if !(s.is_finite() && s > 0.0) => {
            Err(format!("sigma_um {s} is not a finite number > 0"))
        }
        Some(_) => Ok(()),
        None => probe.row_pitch_um().map(|_| ()).ok_or_else(|| {
            "sigma_um defaults to the most common step between the probe's contact heights \
             (SpikeInterface's estimate), and the probe has no two rows: give sigma_um"
                .into()
        }),
    }
}

fn scale(s: &ScaleSpec, last: bool) -> Result<(), String> {
    if !last {
        return Err("scale sets the output's type and must be the last stage".into());
    }
    if !(s.gain.is_finite() && s.gain != 0.0) {
        return Err(format!(
            "gain {} is not a finite number other than 0",
            s.gain
        ));
    }
    Ok(())
}
