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

/// One unit per (output channel, sample): `Σ_j W[c][j]·x[j][t]` in `f32`, `j` ascending.
#[cube(launch)]
fn whiten_dense(
    input: &[f32],
    output: &mut [f32],
    weights: &[f32],
    channels: usize,
    stride: usize,
    start: usize,
    len: usize,
) {
    let c = channel_position(len);
    let p = sample_position(len);
    if c < channels && p < len {
        let t = start + p;
        let row = c * channels;
        let mut acc = 0.0f32;
        let mut j = 0;
        while j < channels {
            acc += weights[row + j] * input[j * stride + t];
            j += 1;
        }
        output[c * stride + t] = acc;
    }
}

/// One unit per (output channel, sample): the row's entries `offsets[c]..offsets[c + 1]` of
/// `columns` and `weights`, in order.
#[cube(launch)]
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
) {
    let c = channel_position(len);
    let p = sample_position(len);
    if c < channels && p < len {
        let t = start + p;
        let mut acc = 0.0f32;
        let mut k = usize::cast_from(offsets[c]);
        let end = usize::cast_from(offsets[c + 1]);
        while k < end {
            acc += weights[k] * input[usize::cast_from(columns[k]) * stride + t];
            k += 1;
        }
        output[c * stride + t] = acc;
    }
}

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
        })
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
        let g = LaunchGeometry::channels_samples_with(&self.limits, n, len)?;
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
            ),
        }
        Ok(())
    }
}
