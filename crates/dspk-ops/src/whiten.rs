//! ZCA whitening: the channels' covariance accumulated on the device over a seeded choice of
//! windows, the matrix fitted on the host in `f64` and kept as data, and the device stage that
//! applies it.
//!
//! Parts: `fit_windows` ([`fit_windows()`]: which windows, seeded), `covariance`
//! ([`Covariance`], the `f64` sums, and [`CovarianceKernel`], their accumulation on the
//! device), `eigen` ([`SymmetricEigen`], cyclic Jacobi in `f64`), `matrix`
//! ([`WhiteningMatrix`]: the fit, the JSON form, the `f64` host reference of applying it) and
//! `apply` ([`WhitenStage`], dense or sparse on the device).
//!
//! # What follows which anchor
//!
//! - **The matrix** is `W = E·diag(1/√(|λ| + ε))·Eᵀ` of the covariance `C = E·diag(λ)·Eᵀ`,
//!   as both Kilosort4 (`whitening_from_covariance`: `torch.linalg.svd`, `(E / (D+eps)**.5) @
//!   E.T`) and SpikeInterface (`compute_whitening_from_covariance`: `U @ diag(1/sqrt(S+eps))
//!   @ Ut`) compute it; their singular values are `|λ|`. We decompose with Jacobi in `f64`
//!   rather than an SVD in `float32` (Kilosort) — the same matrix to `f32` rounding on
//!   well-conditioned covariances.
//! - **Local, `neighbours = k`** follows Kilosort4's `whitening_local(CC, xc, yc, nrange)`:
//!   for each channel its `k` nearest contacts by Euclidean distance (itself included, first),
//!   the ZCA of that sub-covariance, and the centre channel's row of it placed at those
//!   columns; other columns are 0. Kilosort orders by `np.argsort` of squared distances, whose
//!   default sort is not stable: where the `k`-th and the `(k+1)`-th contacts are at the same
//!   distance its choice is NumPy's, ours is the lower channel index ([`Probe::nearest`]).
//!   Kilosort's default `nrange` (`whitening_range`) is 32.
//! - **Local, `radius_um = r`** follows SpikeInterface's local mode: the channel and every
//!   contact at distance `<= r` (SpikeInterface's default 100 µm), the centre's row.
//!   SpikeInterface writes that row as a *column* (`W[inds, c]`) because it computes
//!   `traces @ W`; ours is `y = W·x`, so our matrix is the transpose of its `W` (equal for
//!   global, where `W` is symmetric).
//! - **The covariance** is `Σ x·xᵀ / n`, not mean-centred: Kilosort4's `get_whitening_matrix`
//!   (the mean of `X·Xᵀ/NT` over batches of equal length — the same) and SpikeInterface's
//!   default (`apply_mean=False`). It is taken from `fit.windows` windows of
//!   `fit.window_samples` (default 20 × 15 000 samples, SpikeInterface's 20 chunks of
//!   500 ms at 30 kHz), drawn with a seed ([`fit_windows()`]) where SpikeInterface draws
//!   unseeded by default and Kilosort takes every 25th 2 s batch.
//! - **Epsilon**: the spec's `epsilon` in µV², default `1e-8`, SpikeInterface's documented
//!   default. Neither anchor has a better-founded one for µV data: SpikeInterface's code uses
//!   `1e-16` for data whose median square is ≥ 1 (its docstring says `1e-8`) and `1e-3 ×` that
//!   median below 1; Kilosort's `1e-6` is in its int16 units (≈ 4·10⁻⁸ µV² at Neuropixels
//!   1.0's 0.195 µV per unit). On recorded data the covariance's eigenvalues are 10–1000 µV²,
//!   where all of these are ≤ 10⁻⁹ relative; they matter only for a null direction (a mean
//!   reference removes one), whose gain they bound. Pass Kilosort's `1e-6` to match it.
//!
//! The fitted [`WhiteningMatrix`] is data: written as JSON ([`WhiteningMatrix::to_json`],
//! weights in `f64` read back bit for bit) so that every chunk, device and job applies the
//! same one; [`WhitenStage`] rounds its weights to `f32` once and sums each row in a fixed
//! order, so its output is a pure function of the sample and the matrix.

mod apply;
mod covariance;
mod eigen;
mod fit_windows;
mod matrix;

pub use apply::WhitenStage;
pub use covariance::{COVARIANCE_CHUNK, Covariance, CovarianceKernel};
pub use eigen::SymmetricEigen;
pub use fit_windows::fit_windows;
pub use matrix::{MATRIX_FORMAT_VERSION, WhiteningMatrix, WhiteningParts, WhiteningRow};

#[cfg(doc)]
use dspk_types::Probe;

#[cfg(test)]
mod tests;
