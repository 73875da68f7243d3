"""`dspk.apply_pipeline`: a NumPy array through a preprocessing pipeline on the device."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from . import _dspk


def _spec_json(spec: Any) -> str:
    """The pipeline spec as JSON text: a dict, JSON text, or TOML text."""
    if isinstance(spec, dict):
        return json.dumps(spec)
    if isinstance(spec, str):
        text = spec.strip()
        if text.startswith("{"):
            return text
        import tomllib

        return json.dumps(tomllib.loads(text))
    raise TypeError(f"spec must be a dict, JSON text or TOML text, not {type(spec).__name__}")


def _probe_json(probe: Any) -> str | None:
    """A probeinterface `Probe` as probeinterface JSON text of one probe."""
    if probe is None:
        return None
    if isinstance(probe, str):
        return probe
    body = probe.to_dict(array_as_list=True)
    return json.dumps({"specification": "probeinterface", "version": "0.2.21", "probes": [body]})


def apply_pipeline(
    data: np.ndarray,
    rate: float,
    spec: Any,
    *,
    probe: Any = None,
    window_samples: int | None = None,
    runtime: str | None = None,
) -> np.ndarray:
    """Runs `data` (channels × samples, µV) recorded at `rate` Hz through the preprocessing
    pipeline `spec` (a dict, JSON or TOML text of dspk's pipeline spec) on the device, in
    windows owning `window_samples` samples (default: two seconds), and returns the output
    (channels × samples, float32). `probe` (a probeinterface `Probe` whose
    `device_channel_indices` name the rows) gives the geometry the spatial stages need."""
    values = np.ascontiguousarray(data, dtype=np.float32)
    if values.ndim != 2:
        raise ValueError(f"data must be 2-D (channels × samples), not {values.ndim}-D")
    return _dspk.apply_pipeline(
        values,
        float(rate),
        _spec_json(spec),
        probe_json=_probe_json(probe),
        window_samples=window_samples,
        runtime=runtime,
    )
