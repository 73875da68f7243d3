//! The native module of dspk's Python package, `dspk._dspk`: recordings as NumPy arrays, halo
//! windows, the device pass (`scan`, `convert`), devices, and recordings backed by Python
//! objects (SpikeInterface), over the same library crates as the `dspk` program.
//!
//! What it deliberately is not: no logic of its own. Reads are `dspk-io`'s and `dspk-types`'
//! `RecordingSource` reads, windows are `dspk_types::WindowLoader`'s, scans and conversions
//! are `dspk-stream`'s device pass, output protection is `dspk-io`'s. This crate converts
//! arguments and results, releases the GIL around every read and device pass, and turns
//! `DspError`s into Python exceptions under `dspk.DspkError`. The Python side
//! (`python/dspk`) adds the SpikeInterface classes and progress bars.
//!
//! ```python
//! import dspk
//! rec = dspk.synthetic(seconds=2)
//! uv = rec.read(channels=[0, 5], start=0, stop=30_000)   # float32 (2, 30000), µV
//! result = dspk.scan(rec)
//! print(result.dead, result.noisy, result.throughput_mb_s)
//! ```
//!
//! Built by maturin from the repository's `pyproject.toml` into one abi3 wheel (CPython ≥ 3.10);
//! `cargo build` builds only the rlib (no libpython is linked), and the tests are pytest's
//! (`python/tests`), run by `cargo xtask ci` against the installed wheel.
//!
//! # Features
//! `wgpu` (default), `cuda`, `hip`, `cpu`: the runtimes compiled in, forwarded to
//! `dspk-device` and `dspk-stream`.

use pyo3::prelude::*;

mod args;
mod design;
mod detect;
mod detect_parts;
mod device;
mod errors;
mod ops;
mod parts;
mod preprocess;
mod presets;
mod progress;
mod pysource;
mod recording;
mod report;
mod results;
mod stored;
mod time;
mod truth;
mod whitening;
mod windows;
mod worker;

/// The native module `dspk._dspk`.
#[pymodule]
fn _dspk(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    m.add_class::<recording::Recording>()?;
    m.add_class::<windows::WindowIterator>()?;
    m.add_class::<windows::Window>()?;
    m.add_class::<results::ScanResult>()?;
    m.add_class::<results::ConvertResult>()?;
    m.add_class::<progress::ProgressEvent>()?;
    m.add_function(wrap_pyfunction!(recording::open, m)?)?;
    m.add_function(wrap_pyfunction!(recording::concat, m)?)?;
    m.add_function(wrap_pyfunction!(recording::synthetic, m)?)?;
    m.add_function(wrap_pyfunction!(pysource::from_python_source, m)?)?;
    m.add_function(wrap_pyfunction!(device::devices, m)?)?;
    m.add_function(wrap_pyfunction!(device::scan, m)?)?;
    m.add_function(wrap_pyfunction!(device::convert, m)?)?;
    m.add_function(wrap_pyfunction!(preprocess::preprocess, m)?)?;
    m.add_function(wrap_pyfunction!(parts::preprocess_fit, m)?)?;
    m.add_function(wrap_pyfunction!(parts::preprocess_part, m)?)?;
    m.add_function(wrap_pyfunction!(parts::assemble_preprocessed, m)?)?;
    m.add_function(wrap_pyfunction!(detect::detect, m)?)?;
    m.add_function(wrap_pyfunction!(detect_parts::detect_fit, m)?)?;
    m.add_function(wrap_pyfunction!(detect_parts::detect_part, m)?)?;
    m.add_function(wrap_pyfunction!(truth::synthetic_truth, m)?)?;
    m.add_function(wrap_pyfunction!(recording::check_conformance, m)?)?;
    m.add_function(wrap_pyfunction!(worker::worker_device, m)?)?;
    m.add_function(wrap_pyfunction!(whitening::whitening_matrix, m)?)?;
    m.add_function(wrap_pyfunction!(design::butter_sos, m)?)?;
    m.add_function(wrap_pyfunction!(design::sosfiltfilt_f64, m)?)?;
    m.add_function(wrap_pyfunction!(ops::apply_pipeline, m)?)?;
    m.add_function(wrap_pyfunction!(presets::pipeline_preset, m)?)?;
    m.add_function(wrap_pyfunction!(presets::pipeline_presets, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
