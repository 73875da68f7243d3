//! One part of a chunked preprocessing run (a cluster job): a sample range of the recording
//! through the chain with the fitted parameters given, its windows reading the chain's halo
//! from outside the range, so that the parts laid end to end are the whole run's output bit
//! for bit.

use std::ops::Range;
use std::sync::Arc;
use std::time::Instant;

use dspk_ops::Fits;
use dspk_types::{
    DspError, DspResult, PipelineSpec, ProgressSink, RecordingSource, Scaling, Selection,
    StageSpec, WindowSink,
};

use crate::preprocess::{run_windows, summarise};
use crate::preprocess_plan::{ClipSummary, PreprocessReport, Provenance, plan};
use crate::{PassDevice, PreprocessOptions, Preprocessed};

/// Preprocesses samples `range` of `source` with `spec` on `devices`, applying `fits` (every
/// fitted stage's parameters, fitted once for the whole recording: [`fit`](crate::fit)), and
/// writes that part's output to `sink` as a recording of its own (the samples of `range`,
/// their clock and segments), with the part's [`Provenance`]. Nothing is fitted and no stage
/// is timed here (the report's `stage_times` is empty).
///
/// Windows own samples of `range` only and read the chain's context around them from the
/// whole recording, clamped at its segments' ends as the whole run's are: the part's output
/// is the whole run's output of those samples, whatever the window size or the device count.
///
/// # Errors
/// A range that is empty or past the recording's end, a fitted stage whose parameters `fits`
/// lacks, and what [`preprocess`](crate::preprocess) refuses.
#[allow(clippy::too_many_arguments)]
pub fn preprocess_part(
    devices: &[PassDevice],
    source: Arc<dyn RecordingSource>,
    spec: &PipelineSpec,
    fits: Fits,
    options: &PreprocessOptions,
    range: Range<u64>,
    progress: &dyn ProgressSink,
    sink: &mut dyn WindowSink,
) -> DspResult<Preprocessed> {
    let info = source.info().clone();
    spec.check(&info)?;
    check_complete(spec, &fits)?;
    let first = devices
        .first()
        .ok_or_else(|| DspError::config("preprocessing needs at least one device"))?;
    let labels = devices.iter().map(|d| d.label.clone()).collect();
    let whole = plan(
        &first.client,
        labels,
        &info,
        spec,
        &fits,
        options.window_samples,
    )?;
    let part_plan = whole.part(&info, range.clone())?;
    let windows = whole.windows_in(&info, range.clone())?;
    let part = Selection {
        range: Some(range.clone()),
        ..Selection::default()
    }
    .apply(source.clone())
    .map_err(|e| e.error)?;
    let part_info = part.info().clone();
    let fitted = summarise(spec, &whole, &fits, &fits);
    let scaling = Scaling::microvolts(&info);
    sink.begin(&part_info, &scaling.units)?;
    let pass = run_windows(
        devices,
        source,
        spec,
        &fits,
        windows,
        options.route,
        progress,
        |_, values| sink.write_window(values),
    )?;
    let apply_s = pass.report.wall.as_secs_f64();
    let seconds = part_info.duration()?.as_seconds_f64();
    let report = PreprocessReport {
        dspk_version: env!("CARGO_PKG_VERSION").to_string(),
        pipeline: spec.clone(),
        decode: pass.report.route.name().to_string(),
        fit_s: 0.0,
        apply_s,
        realtime_factor: if apply_s > 0.0 {
            seconds / apply_s
        } else {
            0.0
        },
        write_s: pass.handing.as_secs_f64(),
        wait_s: pass.waiting.as_secs_f64(),
        read_bytes: pass.report.stored_bytes,
        stage_times: Vec::new(),
        fitted,
        clipped: pass.clipped.map(ClipSummary::of),
        plan: part_plan,
    };
    let provenance = Provenance {
        report: report.clone(),
        inputs: options.inputs.clone(),
        fits: fits.clone(),
    };
    let value = serde_json::to_value(&provenance)
        .map_err(|e| DspError::config(format!("the provenance does not encode: {e}")))?;
    let finishing = Instant::now();
    sink.provenance(&value)?;
    sink.finish()?;
    let finish_s = finishing.elapsed().as_secs_f64();
    Ok(Preprocessed {
        finish_s,
        pass: pass.report,
        info: part_info,
        fits,
        report,
    })
}

/// Refuses `fits` that lack a fitted stage of `spec`: a part must not fit on its own samples
/// (its parameters would differ from the other parts').
pub(crate) fn check_complete(spec: &PipelineSpec, fits: &Fits) -> DspResult<()> {
    for (index, stage) in spec.stages.iter().enumerate() {
        let given = match stage {
            StageSpec::Whiten(_) => fits.whitening.contains_key(&index),
            StageSpec::Center(_) => fits.centers.contains_key(&index),
            StageSpec::InterpolateBad(i) if i.detect => fits.bad_channels.contains_key(&index),
            _ => true,
        };
        if !given {
            return Err(DspError::config(format!(
                "stage {index} ({}) is fitted to the whole recording and its parameters were \
                 not given: a part applies the parameters fitted once for every part",
                stage.kind()
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_part_refuses_fits_that_lack_a_fitted_stage() {
        let spec = PipelineSpec::preset("kilosort4").unwrap();
        let fitted: Vec<usize> = (0..spec.stages.len())
            .filter(|&i| spec.is_fitted(i))
            .collect();
        assert!(fitted.len() >= 2, "{fitted:?}");
        let err = check_complete(&spec, &Fits::default()).unwrap_err();
        let first = fitted[0];
        let kind = spec.stages[first].kind();
        assert!(
            err.to_string().contains(&format!(
                "stage {first} ({kind}) is fitted to the whole recording"
            )),
            "{err}"
        );
    }
}
