//! The eigen-decomposition of a small symmetric matrix in `f64`, by cyclic Jacobi rotations.
//!
//! Jacobi is slower than a tridiagonal QR for large matrices but short, dependency-free and
//! accurate to a few ulps of each eigenvalue relative to the matrix's norm; whitening solves
//! one matrix of the probe's channel count (global) or one of each neighbourhood (local, 32),
//! once per recording, where its `O(n³)` per sweep is far below a second.

use dspk_types::{DspError, DspResult};

/// Sweeps before giving up (Jacobi converges quadratically; a handful of sweeps is usual).
const MAX_SWEEPS: usize = 64;

/// The eigenvalues and eigenvectors of a symmetric matrix: `A = E·diag(values)·Eᵀ`.
#[derive(Debug, Clone, PartialEq)]
pub struct SymmetricEigen {
    /// The order of the matrix.
    pub n: usize,
    /// The eigenvalues, largest first.
    pub values: Vec<f64>,
    /// The eigenvectors as the columns of an `n × n` row-major matrix (`vectors[i·n + k]`
    /// is component `i` of the eigenvector of `values[k]`), orthonormal.
    pub vectors: Vec<f64>,
}

impl SymmetricEigen {
    /// Decomposes the symmetric `n × n` row-major matrix `a` (only its upper triangle is
    /// read: the lower is taken as its mirror).
    ///
    /// # Errors
    /// `a` not of `n²` values, a value that is not finite, or no convergence in
    /// `MAX_SWEEPS` sweeps.
    pub fn of(a: &[f64], n: usize) -> DspResult<Self> {
        if a.len() != n * n {
            return Err(DspError::shape(
                "values of a symmetric matrix to decompose",
                n * n,
                a.len(),
            ));
        }
        if let Some(i) = a.iter().position(|v| !v.is_finite()) {
            return Err(DspError::config(format!(
                "element ({}, {}) of a {n} × {n} matrix to decompose is {}, not a finite number",
                i / n,
                i % n,
                a[i]
            )));
        }
        let mut m = vec![0.0; n * n];
        for i in 0..n {
            for j in i..n {
                m[i * n + j] = a[i * n + j];
                m[j * n + i] = a[i * n + j];
            }
        }
        let mut v = vec![0.0; n * n];
        for i in 0..n {
            v[i * n + i] = 1.0;
        }
        // An absolute floor below which an off-diagonal element is zero whatever its diagonal
        // pair, so that rounding noise near a zero eigenvalue cannot keep the sweeps going.
        let floor = 1e-3 * f64::EPSILON * m.iter().map(|x| x * x).sum::<f64>().sqrt();
        let mut converged = n < 2;
        for _ in 0..MAX_SWEEPS {
            if converged {
                break;
            }
            converged = sweep(&mut m, &mut v, n, floor);
        }
        if !converged {
            return Err(DspError::config(format!(
                "the Jacobi eigen-solver did not converge on a {n} × {n} matrix in \
                 {MAX_SWEEPS} sweeps"
            )));
        }
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&x, &y| m[y * n + y].total_cmp(&m[x * n + x]).then(x.cmp(&y)));
        let values = order.iter().map(|&k| m[k * n + k]).collect();
        let mut vectors = vec![0.0; n * n];
        for (to, &from) in order.iter().enumerate() {
            for i in 0..n {
                vectors[i * n + to] = v[i * n + from];
            }
        }
        Ok(Self { n, values, vectors })
    }

    /// `E·diag(g(λ))·Eᵀ`: the matrix function `g` of the decomposed matrix.
    pub fn apply(&self, g: impl Fn(f64) -> f64) -> Vec<f64> {
        let n = self.n;
        let gains: Vec<f64> = self.values.iter().map(|&l| g(l)).collect();
        let mut out = vec![0.0; n * n];
        for i in 0..n {
            for j in i..n {
                let s: f64 = (0..n)
                    .map(|k| self.vectors[i * n + k] * gains[k] * self.vectors[j * n + k])
                    .sum();
                out[i * n + j] = s;
                out[j * n + i] = s;
            }
        }
        out
    }

    /// Row `i` of `E·diag(g(λ))·Eᵀ` (what local whitening keeps of each neighbourhood).
    pub fn apply_row(&self, i: usize, g: impl Fn(f64) -> f64) -> Vec<f64> {
        let n = self.n;
        let left: Vec<f64> = (0..n)
            .map(|k| self.vectors[i * n + k] * g(self.values[k]))
            .collect();
        (0..n)
            .map(|j| (0..n).map(|k| left[k] * self.vectors[j * n + k]).sum())
            .collect()
    }
}

/// One cyclic sweep over every pair `p < q`; true when no pair needed a rotation (every
/// off-diagonal element negligible next to its diagonal pair: `|a_pq| ≤ ε·√|a_pp·a_qq|`, the
/// criterion that keeps small eigenvalues' relative accuracy, or below `floor`).
fn sweep(m: &mut [f64], v: &mut [f64], n: usize, floor: f64) -> bool {
    let mut quiet = true;
    for p in 0..n {
        for q in p + 1..n {
            let apq = m[p * n + q];
            let (app, aqq) = (m[p * n + p], m[q * n + q]);
            if apq.abs() <= floor || apq.abs() <= f64::EPSILON * (app * aqq).abs().sqrt() {
                m[p * n + q] = 0.0;
                m[q * n + p] = 0.0;
                continue;
            }
            quiet = false;
            // tan φ of the rotation that zeroes a_pq: the smaller root of t² + 2θt − 1 = 0.
            let theta = (aqq - app) / (2.0 * apq);
            let t = theta.signum() / (theta.abs() + theta.hypot(1.0));
            let c = 1.0 / t.hypot(1.0);
            let s = t * c;
            for k in 0..n {
                let (akp, akq) = (m[k * n + p], m[k * n + q]);
                m[k * n + p] = c * akp - s * akq;
                m[k * n + q] = s * akp + c * akq;
            }
            for k in 0..n {
                let (apk, aqk) = (m[p * n + k], m[q * n + k]);
                m[p * n + k] = c * apk - s * aqk;
                m[q * n + k] = s * apk + c * aqk;
            }
            m[p * n + q] = 0.0;
            m[q * n + p] = 0.0;
            for k in 0..n {
                let (vkp, vkq) = (v[k * n + p], v[k * n + q]);
                v[k * n + p] = c * vkp - s * vkq;
                v[k * n + q] = s * vkp + c * vkq;
            }
        }
    }
    quiet
}
