//! The interpolation weights ([`InterpolationWeights`]), on the host in `f64`, as
//! SpikeInterface's `get_kriging_channel_weights` computes them.

use dspk_types::{DspError, DspResult, InterpolateSpec, Probe, RecordingInfo};

/// For each bad channel, the good channels it is interpolated from and their weights.
///
/// For bad channel `b` and every good channel `g` (the channels not marked bad), `w =
/// exp(-(d(b, g)/σ)^p)`; weights below the floor become 0; the rest are divided by their sum;
/// weights then below the floor (or NaN, where every weight was 0) become 0 again, without a
/// second normalisation (SpikeInterface's `get_kriging_channel_weights`, floor 0.005). A bad
/// channel with no good channel near enough is therefore written as 0. σ is the spec's, or
/// the most common step between the probe's distinct contact heights
/// ([`recommended_sigma_um`]).
#[derive(Debug, Clone, PartialEq)]
pub struct InterpolationWeights {
    channels: usize,
    sigma_um: f64,
    bad: Vec<usize>,
    rows: Vec<Vec<(usize, f64)>>,
}

impl InterpolationWeights {
    /// The weights `spec` gives over the channels of `info` (geometry in `info.probe`).
    ///
    /// # Errors
    /// A bad channel past the last, none marked, every channel marked, no probe or a channel
    /// without a contact, σ not a positive number and none to be had from the probe
    /// (`PipelineSpec::check` refuses each first).
    pub fn of(spec: &InterpolateSpec, info: &RecordingInfo) -> DspResult<Self> {
        let channels = info.channel_count();
        let fail =
            |reason: String| DspError::config(format!("bad-channel interpolation: {reason}"));
        let probe = info.probe.as_ref().ok_or_else(|| {
            fail(format!(
                "it needs the probe's geometry, and {} has none",
                info.name
            ))
        })?;
        let mut bad = spec.channels.clone();
        bad.sort_unstable();
        bad.dedup();
        if let Some(&c) = bad.iter().find(|&&c| c >= channels) {
            return Err(fail(format!(
                "channel {c} does not exist: the recording has {channels} channels"
            )));
        }
        if bad.is_empty() || bad.len() == channels {
            return Err(fail(format!(
                "{} of the {channels} channels are marked bad: it needs at least one bad and one \
                 good channel",
                bad.len()
            )));
        }
        let sigma_um = match spec.sigma_um {
            Some(s) => s,
            None => recommended_sigma_um(probe).ok_or_else(|| {
                fail(
                    "σ defaults to the probe's contact height step, and its contacts are all \
                      at one height: give sigma_um"
                        .into(),
                )
            })?,
        };
        if !(sigma_um.is_finite() && sigma_um > 0.0) {
            return Err(fail(format!(
                "sigma_um {sigma_um} is not a finite number > 0"
            )));
        }
        let good: Vec<usize> = (0..channels)
            .filter(|c| bad.binary_search(c).is_err())
            .collect();
        let floor = spec.weight_floor;
        let mut rows = Vec::with_capacity(bad.len());
        for &b in &bad {
            let mut w = Vec::with_capacity(good.len());
            for &g in &good {
                let d = probe.distance_um(b, g).map_err(|e| {
                    fail(format!("it needs a contact for channels {b} and {g}: {e}"))
                })?;
                let k = (-(d / sigma_um).powf(spec.p)).exp();
                w.push(if k < floor { 0.0 } else { k });
            }
            let sum: f64 = w.iter().sum();
            let row = good
                .iter()
                .zip(&w)
                .map(|(&g, &k)| (g, k / sum))
                .filter(|&(_, k)| k >= floor && k > 0.0)
                .collect();
            rows.push(row);
        }
        Ok(Self {
            channels,
            sigma_um,
            bad,
            rows,
        })
    }

    /// The channels described.
    pub fn channel_count(&self) -> usize {
        self.channels
    }

    /// The σ the weights were computed with, in µm.
    pub fn sigma_um(&self) -> f64 {
        self.sigma_um
    }

    /// The bad channels, ascending.
    pub fn bad(&self) -> &[usize] {
        &self.bad
    }

    /// For each bad channel (in [`bad`](Self::bad)'s order), its good channels with a non-zero
    /// weight, ascending, and the weights.
    pub fn rows(&self) -> &[Vec<(usize, f64)>] {
        &self.rows
    }

    /// The weights as the device takes them: `starts` (one more than the bad channels), the
    /// good channels and their `f32` weights one bad channel after another, and each channel's
    /// bad-channel index plus one (0: a good channel, copied).
    pub(crate) fn device_lists(&self) -> (Vec<u32>, Vec<u32>, Vec<f32>, Vec<u32>) {
        let mut starts = vec![0u32];
        let mut sources = Vec::new();
        let mut weights = Vec::new();
        for row in &self.rows {
            for &(g, w) in row {
                sources.push(g as u32);
                weights.push(w as f32);
            }
            starts.push(sources.len() as u32);
        }
        let mut bad_of = vec![0u32; self.channels];
        for (k, &b) in self.bad.iter().enumerate() {
            bad_of[b] = k as u32 + 1;
        }
        (starts, sources, weights, bad_of)
    }
}

/// SpikeInterface's `estimate_recommended_sigma_um`: the most common difference between
/// neighbouring distinct contact heights (y) over all contacts, the smallest of equally common
/// ones (`scipy.stats.mode`); `None` with all contacts at one height.
pub fn recommended_sigma_um(probe: &Probe) -> Option<f64> {
    let mut ys: Vec<f64> = probe.contacts().map(|(_, c)| c.y_um).collect();
    ys.sort_by(f64::total_cmp);
    ys.dedup();
    let mut steps: Vec<f64> = ys.windows(2).map(|w| w[1] - w[0]).collect();
    steps.sort_by(f64::total_cmp);
    let mut best: Option<(f64, usize)> = None;
    for run in steps.chunk_by(|a, b| a == b) {
        if best.is_none_or(|(_, n)| run.len() > n) {
            best = Some((run[0], run.len()));
        }
    }
    best.map(|(step, _)| step)
}
