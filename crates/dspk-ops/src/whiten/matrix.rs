//! The fitted whitening matrix as data: one row per output channel, each a list of the input
//! channels it mixes and their weights, fitted on the host in `f64` and saved as JSON so that
//! every chunk, device and job applies the same one.

use dspk_types::{DspError, DspResult, Probe, WhitenScope, WhitenSpec};
use serde::{Deserialize, Serialize};

use super::covariance::Covariance;
use super::eigen::SymmetricEigen;

/// The version of the JSON form [`WhiteningMatrix::to_json`] writes.
pub const MATRIX_FORMAT_VERSION: u32 = 1;

/// One output channel of a whitening matrix: `y = Σ weights[k] · x[columns[k]]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WhiteningRow {
    /// The input channels mixed, ascending.
    pub columns: Vec<u32>,
    /// Their weights.
    pub weights: Vec<f64>,
}

/// The fields of a [`WhiteningMatrix`], unchecked: its serde form, checked by
/// [`WhiteningMatrix::from_parts`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WhiteningParts {
    /// [`MATRIX_FORMAT_VERSION`].
    pub version: u32,
    /// Input and output channels.
    pub channels: usize,
    /// How it was fitted: global (every row mixes every channel) or local.
    pub scope: WhitenScope,
    /// The regulariser added to each eigenvalue, µV².
    pub epsilon: f64,
    /// The samples the covariance was taken over (0: not from data).
    pub samples: u64,
    /// One row per output channel.
    pub rows: Vec<WhiteningRow>,
}

/// A whitening matrix, checked: `channels` rows, columns below `channels`, strictly
/// ascending, as many weights as columns, every weight finite.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "WhiteningParts", into = "WhiteningParts")]
pub struct WhiteningMatrix {
    parts: WhiteningParts,
}

impl TryFrom<WhiteningParts> for WhiteningMatrix {
    type Error = DspError;

    fn try_from(parts: WhiteningParts) -> DspResult<Self> {
        Self::from_parts(parts)
    }
}

impl From<WhiteningMatrix> for WhiteningParts {
    fn from(m: WhiteningMatrix) -> Self {
        m.parts
    }
}

/// `1 / √(|λ| + ε)`: the gain of an eigen-direction. `|λ|` as the anchors' SVD gives it (a
/// covariance's eigenvalues are ≥ 0 but for rounding).
fn zca_gain(epsilon: f64) -> impl Fn(f64) -> f64 {
    move |l: f64| 1.0 / (l.abs() + epsilon).sqrt()
}

impl WhiteningMatrix {
    /// Checks `parts` (see [`WhiteningMatrix`]).
    ///
    /// # Errors
    /// The first row that breaks a rule, naming it and the offending values.
    pub fn from_parts(parts: WhiteningParts) -> DspResult<Self> {
        if parts.version != MATRIX_FORMAT_VERSION {
            return Err(DspError::config(format!(
                "a whitening matrix of format version {}, and this dspk reads version \
                 {MATRIX_FORMAT_VERSION}",
                parts.version
            )));
        }
        let n = parts.channels;
        if n == 0 || parts.rows.len() != n {
            return Err(DspError::config(format!(
                "a whitening matrix of {n} channels has {} rows (needs as many, at least one)",
                parts.rows.len()
            )));
        }
        for (r, row) in parts.rows.iter().enumerate() {
            if row.columns.len() != row.weights.len() {
                return Err(DspError::config(format!(
                    "row {r} of a whitening matrix has {} columns and {} weights",
                    row.columns.len(),
                    row.weights.len()
                )));
            }
            if let Some(&c) = row.columns.iter().find(|&&c| c as usize >= n) {
                return Err(DspError::config(format!(
                    "row {r} of a whitening matrix of {n} channels mixes channel {c}"
                )));
            }
            if row.columns.windows(2).any(|w| w[0] >= w[1]) {
                return Err(DspError::config(format!(
                    "row {r} of a whitening matrix has columns {:?}, not strictly ascending",
                    row.columns
                )));
            }
            if let Some(w) = row.weights.iter().find(|w| !w.is_finite()) {
                return Err(DspError::config(format!(
                    "row {r} of a whitening matrix has the weight {w}, not a finite number"
                )));
            }
        }
        if !(parts.epsilon.is_finite() && parts.epsilon >= 0.0) {
            return Err(DspError::config(format!(
                "a whitening matrix's epsilon is {}, not a finite number >= 0",
                parts.epsilon
            )));
        }
        Ok(Self { parts })
    }

    /// The ZCA matrix of `cov` as `spec` says (scope, neighbourhood, epsilon), in `f64`.
    ///
    /// Global: `W = E·diag(1/√(|λ|+ε))·Eᵀ` of the whole covariance. Local: for each channel,
    /// the same of the covariance restricted to its neighbourhood (its `neighbours` nearest
    /// contacts, itself first, ties by channel index: [`Probe::nearest`]; or itself and the
    /// contacts within `radius_um`: [`Probe::within`]), of which the channel's own row is kept.
    ///
    /// # Errors
    /// A covariance with no samples or not finite, a local scope without a probe, a probe of
    /// another channel count or without a contact for a channel, a spec that names neither or
    /// both neighbourhoods for a local scope, no convergence of the eigen-solver.
    pub fn fit(cov: &Covariance, spec: &WhitenSpec, probe: Option<&Probe>) -> DspResult<Self> {
        let n = cov.channels;
        let c = cov.matrix()?;
        if !(spec.epsilon.is_finite() && spec.epsilon >= 0.0) {
            return Err(DspError::config(format!(
                "whitening's epsilon {} is not a finite number >= 0",
                spec.epsilon
            )));
        }
        if n == 0 {
            return Err(DspError::config(
                "a whitening matrix needs at least one channel".to_string(),
            ));
        }
        let gain = zca_gain(spec.epsilon);
        let rows = match spec.scope {
            WhitenScope::Global => {
                let w = SymmetricEigen::of(&c, n)?.apply(&gain);
                let columns: Vec<u32> = (0..n as u32).collect();
                (0..n)
                    .map(|i| WhiteningRow {
                        columns: columns.clone(),
                        weights: w[i * n..(i + 1) * n].to_vec(),
                    })
                    .collect()
            }
            WhitenScope::Local => {
                let probe = probe.ok_or_else(|| {
                    DspError::config(
                        "local whitening needs the probe's geometry, and none was given"
                            .to_string(),
                    )
                })?;
                probe
                    .check_channel_count(n)
                    .map_err(|e| DspError::config(e.to_string()))?;
                let mut rows = Vec::with_capacity(n);
                for centre in 0..n {
                    let hood = neighbourhood(probe, centre, spec)?;
                    rows.push(local_row(&c, n, &hood, &gain)?);
                }
                rows
            }
        };
        Self::from_parts(WhiteningParts {
            version: MATRIX_FORMAT_VERSION,
            channels: n,
            scope: spec.scope,
            epsilon: spec.epsilon,
            samples: cov.samples,
            rows,
        })
    }

    /// A matrix read from [`to_json`](Self::to_json)'s text, checked.
    ///
    /// # Errors
    /// Text that is not a whitening matrix, or one that breaks a rule of [`WhiteningMatrix`].
    pub fn from_json(text: &str) -> DspResult<Self> {
        serde_json::from_str(text)
            .map_err(|e| DspError::config(format!("not a whitening matrix: {e}")))
    }

    /// The matrix as JSON (weights written so that [`from_json`](Self::from_json) reads back
    /// the same bits).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a whitening matrix is plain data")
    }

    /// Input and output channels.
    pub fn channels(&self) -> usize {
        self.parts.channels
    }

    /// Global or local.
    pub fn scope(&self) -> WhitenScope {
        self.parts.scope
    }

    /// The regulariser it was fitted with, µV².
    pub fn epsilon(&self) -> f64 {
        self.parts.epsilon
    }

    /// The samples its covariance was taken over.
    pub fn samples(&self) -> u64 {
        self.parts.samples
    }

    /// The rows, one per output channel.
    pub fn rows(&self) -> &[WhiteningRow] {
        &self.parts.rows
    }

    /// The fields.
    pub fn parts(&self) -> &WhiteningParts {
        &self.parts
    }

    /// Whether every row mixes every channel (applied as a dense matrix).
    pub fn is_dense(&self) -> bool {
        let n = self.parts.channels;
        self.parts.rows.iter().all(|r| r.columns.len() == n)
    }

    /// The matrix as `channels × channels` row-major values (zeros where a row mixes nothing).
    pub fn to_dense(&self) -> Vec<f64> {
        let n = self.parts.channels;
        let mut out = vec![0.0; n * n];
        for (i, row) in self.parts.rows.iter().enumerate() {
            for (&c, &w) in row.columns.iter().zip(&row.weights) {
                out[i * n + c as usize] = w;
            }
        }
        out
    }

    /// The host reference in `f64`: `y = W·x` of `input` (`channels` rows of `stride`) over
    /// the local samples `range`, written to the same places of the returned rows (zero
    /// elsewhere).
    ///
    /// # Errors
    /// `input` shorter than `channels × stride`, a range past the row.
    pub fn apply_host(
        &self,
        input: &[f32],
        stride: usize,
        range: std::ops::Range<usize>,
    ) -> DspResult<Vec<f64>> {
        let n = self.parts.channels;
        if input.len() < n * stride {
            return Err(DspError::shape(
                "values of a window to whiten",
                n * stride,
                input.len(),
            ));
        }
        if range.start > range.end || range.end > stride {
            return Err(DspError::config(format!(
                "samples {range:?} of a row of {stride} to whiten"
            )));
        }
        let mut out = vec![0.0; n * stride];
        for (i, row) in self.parts.rows.iter().enumerate() {
            for t in range.clone() {
                out[i * stride + t] = row
                    .columns
                    .iter()
                    .zip(&row.weights)
                    .map(|(&c, &w)| w * f64::from(input[c as usize * stride + t]))
                    .sum();
            }
        }
        Ok(out)
    }
}

/// The channels whose covariance `centre`'s row is fitted on, `centre` first.
fn neighbourhood(probe: &Probe, centre: usize, spec: &WhitenSpec) -> DspResult<Vec<usize>> {
    let geometry = |e: dspk_types::ProbeError| {
        DspError::config(format!(
            "local whitening of channel {centre} needs its contact: {e}"
        ))
    };
    match (spec.neighbours, spec.radius_um) {
        (Some(k), None) if k >= 1 => probe.nearest(centre, k as usize).map_err(geometry),
        (None, Some(r)) if r.is_finite() && r > 0.0 => {
            let mut hood = vec![centre];
            hood.extend(probe.within(centre, r).map_err(geometry)?);
            Ok(hood)
        }
        (k, r) => Err(DspError::config(format!(
            "local whitening takes exactly one of neighbours (>= 1) or radius_um (> 0), got \
             neighbours {k:?} and radius_um {r:?}"
        ))),
    }
}

/// The row of `hood[0]`: ZCA of the covariance restricted to `hood`, its first row, placed at
/// the channels' columns in ascending order.
fn local_row(
    c: &[f64],
    n: usize,
    hood: &[usize],
    gain: &impl Fn(f64) -> f64,
) -> DspResult<WhiteningRow> {
    let m = hood.len();
    let mut sub = vec![0.0; m * m];
    for (a, &i) in hood.iter().enumerate() {
        for (b, &j) in hood.iter().enumerate() {
            sub[a * m + b] = c[i * n + j];
        }
    }
    let row = SymmetricEigen::of(&sub, m)?.apply_row(0, gain);
    let mut pairs: Vec<(u32, f64)> = hood.iter().map(|&j| j as u32).zip(row).collect();
    pairs.sort_by_key(|p| p.0);
    Ok(WhiteningRow {
        columns: pairs.iter().map(|p| p.0).collect(),
        weights: pairs.iter().map(|p| p.1).collect(),
    })
}
