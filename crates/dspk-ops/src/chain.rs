//! [`build`]: the one place where a checked [`PipelineSpec`] becomes device stages and their
//! halos, and [`Chain`]: those stages run back to back on a window, between two buffers that
//! are sized once and reused, with no host round trip.

use std::collections::BTreeMap;
use std::ops::Range;
use std::time::Duration;

use cubecl::client::Client;
use cubecl::server::Handle;
use dspk_types::{
    DspResult, InterpolateSpec, PipelineError, PipelineSpec, RecordingInfo, StageSpec,
};
use serde::{Deserialize, Serialize};

use crate::center::CenterStage;
use crate::filter::FilterStage;
use crate::interpolate::InterpolateStage;
use crate::kfilt::SpatialHighpassStage;
use crate::reference::ReferenceStage;
use crate::scale::ScaleStage;
use crate::shift::PhaseShiftStage;
use crate::stage::{Halo, Span, Stage};
use crate::whiten::{WhitenStage, WhiteningMatrix};

/// What fitted stages were fitted to: each whitening stage's matrix and each centring stage's
/// channel means, by the stage's position in the spec. Plain data (serde; written with a
/// preprocessed recording's provenance and read back by the jobs that apply it), so that every
/// window, device and job applies the same.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fits {
    /// The whitening matrices, by stage position.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub whitening: BTreeMap<usize, WhiteningMatrix>,
    /// Each centring stage's channel means (µV, channel order), by stage position.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub centers: BTreeMap<usize, Vec<f64>>,
    /// Each detecting interpolation stage's bad channels (ascending; empty: none found), by
    /// stage position.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub bad_channels: BTreeMap<usize, Vec<usize>>,
}

/// The stages of a pipeline on one device, run back to back.
pub struct Chain {
    client: Client,
    stages: Vec<Box<dyn Stage>>,
    /// Each stage's position in the spec it was built from.
    positions: Vec<usize>,
    buffers: [Option<(Handle, usize)>; 2],
}

impl std::fmt::Debug for Chain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Chain")
            .field(
                "stages",
                &self.stages.iter().map(|s| s.kind()).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

/// The first `count` stages of `spec` on `client`'s device, for windows of `info` (`spec`
/// checked against `info` first); a whitening stage among them takes its matrix from `fits`,
/// a centring stage its means. An optional phase shift that does not apply to `info`
/// ([`PhaseShiftSpec::applies_to`](dspk_types::PhaseShiftSpec::applies_to)) is left out.
///
/// # Errors
/// A spec that does not pass [`PipelineSpec::check`], a whitening stage with no fitted matrix
/// (a centring stage without means), and what each stage's constructor refuses.
pub fn build(
    client: &Client,
    spec: &PipelineSpec,
    info: &RecordingInfo,
    fits: &Fits,
    count: usize,
) -> DspResult<Chain> {
    spec.check(info)?;
    let mut stages: Vec<Box<dyn Stage>> = Vec::new();
    let mut positions = Vec::new();
    for (index, stage) in spec.stages.iter().enumerate().take(count) {
        if let StageSpec::PhaseShift(p) = stage
            && !p.applies_to(info)
        {
            // An optional phase shift on a recording without ADC shifts: nothing to delay.
            continue;
        }
        stages.push(match stage {
            StageSpec::Center(_) => {
                let means = fits
                    .centers
                    .get(&index)
                    .ok_or_else(|| PipelineError::Stage {
                        index,
                        kind: stage.kind(),
                        reason: "no fitted channel means: fit them first".into(),
                    })?;
                Box::new(CenterStage::new(client, means)?)
            }
            StageSpec::Filter(f) => {
                Box::new(FilterStage::new(client, f, spec.block_samples, info)?)
            }
            StageSpec::CommonReference(r) => Box::new(ReferenceStage::new(client, r, info)?),
            StageSpec::PhaseShift(p) => Box::new(PhaseShiftStage::new(client, p, info)?),
            StageSpec::Whiten(_) => {
                let matrix = fits
                    .whitening
                    .get(&index)
                    .ok_or_else(|| PipelineError::Stage {
                        index,
                        kind: stage.kind(),
                        reason: "no fitted matrix: fit it first (or give one)".into(),
                    })?;
                Box::new(WhitenStage::new(client, matrix)?)
            }
            StageSpec::InterpolateBad(i) if i.detect => {
                let found = fits
                    .bad_channels
                    .get(&index)
                    .ok_or_else(|| PipelineError::Stage {
                        index,
                        kind: stage.kind(),
                        reason: "no detected bad channels: fit them first".into(),
                    })?;
                if found.is_empty() {
                    // No bad channel on this recording: nothing to replace.
                    continue;
                }
                let resolved = InterpolateSpec {
                    channels: found.clone(),
                    detect: false,
                    ..i.clone()
                };
                Box::new(InterpolateStage::new(client, &resolved, info)?)
            }
            StageSpec::InterpolateBad(i) => Box::new(InterpolateStage::new(client, i, info)?),
            StageSpec::SpatialHighpass(s) => Box::new(SpatialHighpassStage::new(client, s, info)?),
            StageSpec::Scale(s) => Box::new(ScaleStage::new(client, s, info.channel_count())?),
        });
        positions.push(index);
    }
    Ok(Chain {
        client: client.clone(),
        stages,
        positions,
        buffers: [None, None],
    })
}

/// The rows of a window as the chain sees them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rows {
    /// Channels.
    pub channels: usize,
    /// Values per row.
    pub stride: usize,
    /// The recording sample of local index 0.
    pub origin: u64,
    /// The segment the window lies in.
    pub segment: Range<u64>,
}

impl Chain {
    /// The context the whole chain reads around what it produces (the stages' halos added).
    pub fn halo(&self) -> Halo {
        self.stages
            .iter()
            .fold(Halo::NONE, |total, stage| total.then(stage.halo()))
    }

    /// The stages, first to last.
    pub fn stages(&self) -> &[Box<dyn Stage>] {
        &self.stages
    }

    /// Each stage's position in the spec it was built from, first to last (a stage left out of
    /// the recording, such as a phase shift with nothing to delay, has none).
    pub fn positions(&self) -> &[usize] {
        &self.positions
    }

    /// The stages, first to last, to ask a stage for its own figures.
    pub fn stages_mut(&mut self) -> &mut [Box<dyn Stage>] {
        &mut self.stages
    }

    /// Launches every stage on the window `input` (laid out as `rows`), so that the returned
    /// buffer holds the chain's output on local samples `valid` of every row (other samples of
    /// it are not the output). With no stages the input itself is returned.
    ///
    /// Each stage produces `valid` widened by the halos of the stages after it (clipped to the
    /// segment and the row); the window must hold `valid` widened by [`halo`](Self::halo).
    ///
    /// # Errors
    /// A window that does not hold the context the chain needs, and what a stage refuses.
    pub fn run(&mut self, input: &Handle, rows: &Rows, valid: Range<usize>) -> DspResult<Handle> {
        self.run_each(input, rows, valid, |stage, input, output, span| {
            stage.launch(input, output, span)
        })
    }

    /// As [`run`](Self::run), calling `after(k, output)` once stage `k` (of
    /// [`stages`](Self::stages)) is launched: `output` holds on `valid` what the chain cut
    /// after that stage would return, until the stage after next overwrites it (the buffers
    /// are reused), so `after` reads it back before returning. The values are the same bits as
    /// the cut chain's: a stage's output at a sample does not depend on how much it produces.
    ///
    /// # Errors
    /// As [`run`](Self::run), and what `after` returns.
    pub fn run_observed(
        &mut self,
        input: &Handle,
        rows: &Rows,
        valid: Range<usize>,
        mut after: impl FnMut(usize, &Handle) -> DspResult<()>,
    ) -> DspResult<Handle> {
        let mut k = 0;
        self.run_each(input, rows, valid, |stage, input, output, span| {
            stage.launch(input, output, span)?;
            after(k, output)?;
            k += 1;
            Ok(())
        })
    }

    /// The median device time of each stage on the window `input` (as [`run`](Self::run)
    /// takes it) over `runs` synchronised launches after a warm-up: what the stage costs on
    /// this device, not counting the others.
    ///
    /// # Errors
    /// As [`run`](Self::run), and what the device reports when synchronised.
    pub fn time_stages(
        &mut self,
        input: &Handle,
        rows: &Rows,
        valid: Range<usize>,
        runs: usize,
    ) -> DspResult<Vec<Duration>> {
        let client = self.client.clone();
        let mut times = Vec::with_capacity(self.stages.len());
        self.run_each(input, rows, valid, |stage, input, output, span| {
            times.push(dspk_kernels::time_device(&client, runs, || {
                stage.launch(input, output, span)
            })?);
            Ok(())
        })?;
        Ok(times)
    }

    /// Calls `launch` for each stage in order with its input, its output buffer and the span
    /// it produces; returns the last output (the input itself with no stages).
    fn run_each(
        &mut self,
        input: &Handle,
        rows: &Rows,
        valid: Range<usize>,
        mut launch: impl FnMut(&mut dyn Stage, &Handle, &Handle, &Span) -> DspResult<()>,
    ) -> DspResult<Handle> {
        let len = rows.channels * rows.stride;
        let mut after: Vec<Halo> = vec![Halo::NONE; self.stages.len()];
        for k in (0..self.stages.len().saturating_sub(1)).rev() {
            after[k] = after[k + 1].then(self.stages[k + 1].halo());
        }
        let mut current = input.clone();
        for (k, stage) in self.stages.iter_mut().enumerate() {
            let widen = after[k];
            let span = Span {
                channels: rows.channels,
                stride: rows.stride,
                origin: rows.origin,
                segment: rows.segment.clone(),
                produce: valid.clone(),
            };
            let produce = span.input_range(widen);
            let span = Span { produce, ..span };
            let out = match &self.buffers[k % 2] {
                Some((h, n)) if *n >= len => h.clone(),
                _ => {
                    dspk_kernels::device_elements("a preprocessing buffer", &[len])?;
                    let h = self.client.empty(len.max(1) * 4);
                    self.buffers[k % 2] = Some((h.clone(), len));
                    h
                }
            };
            launch(stage.as_mut(), &current, &out, &span)?;
            current = out;
        }
        Ok(current)
    }
}
