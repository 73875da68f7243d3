//! The whitening stage on the device: `y = W·x` at each sample, a dense matrix for global
//! whitening and per-row neighbour lists for local whitening (applied as sparse).

use crate::upload::upload;
use cubecl::client::Client;
use cubecl::prelude::*;
use cubecl::server::Handle;
use dspk_kernels::{
    GridLimits, LaunchGeometry, channel_position, f32_arg, sample_position, u32_arg,
};
use dspk_types::{DspError, DspResult};

use super::matrix::WhiteningMatrix;
use crate::{Halo, Span, Stage};

/// The samples of run `q` of `per_unit` within `len`: `per_unit`, or fewer for the last run.
#[cube]
fn run_length(len: usize, q: usize, #[comptime] per_unit: usize) -> usize {
    let mut n = len - q * per_unit;
    if n > per_unit {
        n = per_unit;
    }
    n
}

/// A run's `per_unit` sums, all 0.
#[cube]
fn zeros(#[comptime] per_unit: usize) -> Array<f32> {
    let mut acc = Array::<f32>::new(per_unit);
    #[unroll]
    for i in 0..per_unit {
        acc[i] = 0.0;
    }
    acc
}

/// Adds `w · input[at + i]` to each of the run's first `n` sums.
#[cube]
fn add_run(
    acc: &mut Array<f32>,
    w: f32,
    input: &[f32],
    at: usize,
    n: usize,
    #[comptime] per_unit: usize,
) {
    #[unroll]
    for i in 0..per_unit {
        if i < n {
            acc[i] += w * input[at + i];
        }
    }
}

/// Writes the run's first `n` sums to `output[at..at + n]`.
#[cube]
fn store_run(
    output: &mut [f32],
    at: usize,
    acc: &Array<f32>,
    n: usize,
    #[comptime] per_unit: usize,
) {
    #[unroll]
    for i in 0..per_unit {
        if i < n {
            output[at + i] = acc[i];
        }
    }
}

/// One unit per (output channel, run of `per_unit` samples; `runs` of them cover `len`):
/// `Σ_j W[c][j]·x[j][t]` at each sample of the run, in `f32`, `j` ascending. A weight is
/// loaded once for the run's samples; each output's sum is the same whatever `per_unit`.
#[cube(launch)]
#[allow(clippy::too_many_arguments)]
fn whiten_dense(
    input: &[f32],
    output: &mut [f32],
    weights: &[f32],
    channels: usize,
    stride: usize,
    start: usize,
    len: usize,
    runs: usize,
    #[comptime] per_unit: usize,
) {
    let c = channel_position(runs);
    let q = sample_position(runs);
    if c < channels && q < runs {
        let t0 = start + q * per_unit;
        let n = run_length(len, q, per_unit);
        let row = c * channels;
        let mut acc = zeros(per_unit);
        let mut j = 0;
        while j < channels {
            add_run(
                &mut acc,
                weights[row + j],
                input,
                j * stride + t0,
                n,
                per_unit,
            );
            j += 1;
        }
        store_run(output, c * stride + t0, &acc, n, per_unit);
    }
}

/// One unit per (output channel, run of `per_unit` samples): the row's entries
/// `offsets[c]..offsets[c + 1]` of `columns` and `weights`, in order, at each sample of the run
/// (an entry loaded once for the run's samples).
#[cube(launch)]
#[allow(clippy::too_many_arguments)]
fn whiten_sparse(
    input: &[f32],
    output: &mut [f32],
    offsets: &[u32],
    columns: &[u32],
    weights: &[f32],
    channels: usize,
    stride: usize,
    start: usize,
    len: usize,
    runs: usize,
    #[comptime] per_unit: usize,
) {
    let c = channel_position(runs);
    let q = sample_position(runs);
    if c < channels && q < runs {
        let t0 = start + q * per_unit;
        let n = run_length(len, q, per_unit);
        let mut acc = zeros(per_unit);
        let mut k = usize::cast_from(offsets[c]);
        let end = usize::cast_from(offsets[c + 1]);
        while k < end {
            let at = usize::cast_from(columns[k]) * stride + t0;
            add_run(&mut acc, weights[k], input, at, n, per_unit);
            k += 1;
        }
        store_run(output, c * stride + t0, &acc, n, per_unit);
    }
}

/// Samples per unit on a GPU: one, for the most units.
const PER_UNIT_GPU: usize = 1;

/// Samples per unit on a CPU device (lavapipe), which loads each weight and column once for
/// the run instead of once per sample.
const PER_UNIT_CPU: usize = 8;

/// How the matrix sits on the device.
enum Layout {
    /// `channels × channels` weights, row-major.
    Dense { weights: Handle },
    /// Compressed rows: `channels + 1` offsets into the columns and weights.
    Sparse {
        offsets: Handle,
        columns: Handle,
        weights: Handle,
        entries: usize,
    },
}

/// Applies a fitted [`WhiteningMatrix`] (its weights rounded to `f32` once, when built):
/// pointwise in time ([`Halo::NONE`]), so its output is the same for any windows.
pub struct WhitenStage {
    client: Client,
    channels: usize,
    layout: Layout,
    limits: GridLimits,
    per_unit: usize,
}

impl std::fmt::Debug for WhitenStage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WhitenStage")
            .field("channels", &self.channels)
            .field("dense", &matches!(self.layout, Layout::Dense { .. }))
            .finish_non_exhaustive()
    }
}

impl WhitenStage {
    /// Uploads `matrix`: dense when every row mixes every channel, else as compressed rows.
    ///
    /// # Errors
    /// A matrix larger than a kernel can index.
    pub fn new(client: &Client, matrix: &WhiteningMatrix) -> DspResult<Self> {
        let n = matrix.channels();
        let layout = if matrix.is_dense() {
            dspk_kernels::device_elements("dense whitening matrix", &[n, n])?;
            let dense = matrix.to_dense();
            Layout::Dense {
                weights: upload(client, dense.iter().map(|&w| (w as f32).to_le_bytes())),
            }
        } else {
            let rows = matrix.rows();
            let entries: usize = rows.iter().map(|r| r.columns.len()).sum();
            dspk_kernels::device_elements("sparse whitening matrix", &[entries.max(1)])?;
            let mut offsets = Vec::with_capacity(n + 1);
            let mut at = 0u32;
            offsets.push(at);
            for r in rows {
                at += r.columns.len() as u32;
                offsets.push(at);
            }
            let columns = rows.iter().flat_map(|r| r.columns.iter().copied());
            let weights = rows
                .iter()
                .flat_map(|r| r.weights.iter().map(|&w| w as f32));
            // A buffer of at least one value, so that an all-empty matrix still binds.
            Layout::Sparse {
                offsets: upload(client, offsets.into_iter().map(u32::to_le_bytes)),
                columns: upload(
                    client,
                    columns.chain(std::iter::once(0)).map(u32::to_le_bytes),
                ),
                weights: upload(
                    client,
                    weights.chain(std::iter::once(0.0)).map(f32::to_le_bytes),
                ),
                entries,
            }
        };
        Ok(Self {
            client: client.clone(),
            channels: n,
            layout,
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

    /// Whether the matrix is applied dense.
    pub fn is_dense(&self) -> bool {
        matches!(self.layout, Layout::Dense { .. })
    }
}

impl Stage for WhitenStage {
    fn kind(&self) -> &'static str {
        "whiten"
    }

    fn halo(&self) -> Halo {
        Halo::NONE
    }

    fn launch(&mut self, input: &Handle, output: &Handle, span: &Span) -> DspResult<()> {
        span.check()?;
        if span.channels != self.channels {
            return Err(DspError::shape(
                "channels of a window to whiten",
                self.channels,
                span.channels,
            ));
        }
        let len = span.produce.len();
        if len == 0 {
            return Ok(());
        }
        let n = self.channels;
        let runs = len.div_ceil(self.per_unit);
        let g = LaunchGeometry::channels_samples_with(&self.limits, n, runs)?;
        let (input, output) = (f32_arg(input, span.len())?, f32_arg(output, span.len())?);
        match &self.layout {
            Layout::Dense { weights } => whiten_dense::launch(
                &self.client,
                g.cube_count(),
                g.cube_dim(),
                input,
                output,
                f32_arg(weights, n * n)?,
                n,
                span.stride,
                span.produce.start,
                len,
                runs,
                self.per_unit,
            ),
            Layout::Sparse {
                offsets,
                columns,
                weights,
                entries,
            } => whiten_sparse::launch(
                &self.client,
                g.cube_count(),
                g.cube_dim(),
                input,
                output,
                u32_arg(offsets, n + 1)?,
                u32_arg(columns, (*entries).max(1))?,
                f32_arg(weights, (*entries).max(1))?,
                n,
                span.stride,
                span.produce.start,
                len,
                runs,
                self.per_unit,
            ),
        }
        Ok(())
    }
}
