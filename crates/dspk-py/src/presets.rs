//! `dspk.pipeline_preset` and `dspk.pipeline_presets`: dspk's named pipelines
//! (`dspk_types::PipelineSpec::preset`) as the dicts `dspk.apply_pipeline` takes.

use pyo3::prelude::*;
use pyo3::types::PyDict;

use dspk_types::PipelineSpec;

use crate::errors::from_dsp;

/// The preset `name` as a dict of dspk's pipeline spec (the same fields as its TOML and JSON).
#[pyfunction]
pub(crate) fn pipeline_preset<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    let spec = PipelineSpec::preset(name).map_err(|e| from_dsp(e.into()))?;
    py.import("json")?.call_method1("loads", (spec.to_json(),))
}

/// Every preset's name and its one-line description.
#[pyfunction]
pub(crate) fn pipeline_presets(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let out = PyDict::new(py);
    for preset in PipelineSpec::presets() {
        out.set_item(preset.name, preset.description)?;
    }
    Ok(out)
}
