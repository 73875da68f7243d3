//! `dspk.whitening_matrix`: the whitening matrix dspk fits, from a given covariance (what the
//! oracles hold against SpikeInterface's and Kilosort's).

use numpy::ndarray::Array2;
use numpy::prelude::*;
use numpy::{PyArray2, PyReadonlyArray2};
use pyo3::prelude::*;

use dspk_ops::whiten::{Covariance, WhiteningMatrix};
use dspk_types::{Contact, Probe, ProbeParts, WhitenScope, WhitenSpec};

use crate::errors::{from_dsp, invalid};

/// The ZCA whitening matrix of the covariance `cov` (`n × n` float64), as `y = W @ x`:
/// `scope` "global", or "local" with `neighbours` (Kilosort's `whitening_range`) or
/// `radius_um` (SpikeInterface's local mode) over the contacts at `positions` (`n × 2` µm).
#[pyfunction]
#[pyo3(signature = (cov, positions=None, scope="global", neighbours=None, radius_um=None, epsilon=1e-8))]
pub(crate) fn whitening_matrix<'py>(
    py: Python<'py>,
    cov: PyReadonlyArray2<'py, f64>,
    positions: Option<PyReadonlyArray2<'py, f64>>,
    scope: &str,
    neighbours: Option<u32>,
    radius_um: Option<f64>,
    epsilon: f64,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let cov = cov.as_array();
    let n = cov.nrows();
    if cov.ncols() != n {
        return Err(invalid(format!(
            "a covariance must be square, got {} × {}",
            n,
            cov.ncols()
        )));
    }
    let scope = match scope {
        "global" => WhitenScope::Global,
        "local" => WhitenScope::Local,
        other => {
            return Err(invalid(format!(
                "scope {other:?} is neither \"global\" nor \"local\""
            )));
        }
    };
    let probe = match positions {
        None => None,
        Some(p) => {
            let p = p.as_array();
            if p.nrows() != n || p.ncols() != 2 {
                return Err(invalid(format!(
                    "positions must be {n} × 2 (x, y in µm), got {} × {}",
                    p.nrows(),
                    p.ncols()
                )));
            }
            let channels = (0..n)
                .map(|c| Some(Contact::new(p[[c, 0]], p[[c, 1]], 0, format!("c{c}"))))
                .collect();
            let parts = ProbeParts {
                channels,
                ..ProbeParts::default()
            };
            Some(Probe::new(parts).map_err(|e| invalid(e.to_string()))?)
        }
    };
    let values: Vec<f64> = cov.iter().copied().collect();
    let spec = WhitenSpec {
        scope,
        neighbours,
        radius_um,
        epsilon,
        ..WhitenSpec::default()
    };
    let dense = py
        .detach(|| {
            let cov = Covariance::from_matrix(n, &values, 1)?;
            WhiteningMatrix::fit(&cov, &spec, probe.as_ref()).map(|m| m.to_dense())
        })
        .map_err(from_dsp)?;
    let array =
        Array2::from_shape_vec((n, n), dense).map_err(|e| invalid(format!("matrix shape: {e}")))?;
    Ok(array.into_pyarray(py))
}
