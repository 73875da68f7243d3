//! A series' clock: `starting_time` + `rate`, or `timestamps` (the rate as SpikeInterface
//! estimates it, and the rate measured over the whole series).

use std::collections::BTreeMap;

use dspk_types::{DspResult, RationalTime, SampleRate};

use super::h5::{H5, attr_number, one_dim};

/// How many timestamps the rate is estimated from (SpikeInterface's
/// `samples_for_rate_estimation` default).
pub(crate) const RATE_ESTIMATION_SAMPLES: u64 = 1000;

/// A series' clock.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Timing {
    /// The sample rate.
    pub(crate) rate: SampleRate,
    /// The time of sample 0, in seconds, as the file states it.
    pub(crate) start_s: f64,
    /// From timestamps: `(n − 1) / (t_last − t_0)`.
    pub(crate) measured: Option<SampleRate>,
}

/// The clock of the series at `series` (whose `data` has `samples` rows), with what it read
/// put into `metadata` and what it doubts into `warnings`.
pub(crate) fn timing(
    h5: &H5,
    series: &str,
    samples: u64,
    metadata: &mut BTreeMap<String, String>,
    warnings: &mut Vec<String>,
) -> DspResult<Timing> {
    let group = h5.group(series)?;
    let (_, datasets) = h5.members(&group, series)?;
    let has = |n: &str| datasets.iter().any(|d| d == n);
    if has("starting_time") {
        let path = format!("{series}/starting_time");
        let start_s = h5.scalar(&path)?;
        let ds = h5.dataset(&path)?;
        let hz = attr_number(ds.attribute("rate"))
            .map_err(|e| h5.err(&path, format!("attribute rate: {e}")))?
            .ok_or_else(|| h5.err(&path, "has no attribute rate (the series' sample rate)"))?;
        let rate = SampleRate::new(hz)
            .map_err(|_| h5.err(&path, format!("rate {hz} is not a rate above 0 Hz")))?;
        metadata.insert("time_source".into(), "starting_time".into());
        metadata.insert("starting_time_s".into(), format!("{start_s}"));
        return Ok(Timing {
            rate,
            start_s,
            measured: None,
        });
    }
    if !has("timestamps") {
        return Err(h5.err(
            series,
            "has neither starting_time nor timestamps: its samples have no clock",
        ));
    }
    let path = format!("{series}/timestamps");
    let ds = h5.dataset(&path)?;
    let n = one_dim(h5, &ds, &path)?;
    if n != samples {
        return Err(h5.err(
            &path,
            format!("holds {n} timestamps for {samples} samples of data"),
        ));
    }
    if n < 2 {
        return Err(h5.err(
            &path,
            format!("holds {n} timestamp(s): a rate needs at least two"),
        ));
    }
    let head = h5.floats_of(&ds, &path, 0..n.min(RATE_ESTIMATION_SAMPLES))?;
    let last = h5.floats_of(&ds, &path, n - 1..n)?[0];
    let first = head[0];
    let mut diffs: Vec<f64> = head.windows(2).map(|w| w[1] - w[0]).collect();
    let period = median(&mut diffs);
    let hz = 1.0 / period;
    let rate = SampleRate::new(hz).map_err(|_| {
        h5.err(
            &path,
            format!(
                "the median step of the first {} timestamps, {period} s, is no sample period",
                head.len()
            ),
        )
    })?;
    if !(first.is_finite() && last.is_finite()) {
        return Err(h5.err(
            &path,
            format!("timestamps {first} … {last} are not finite seconds"),
        ));
    }
    metadata.insert("time_source".into(), "timestamps".into());
    metadata.insert("first_timestamp_s".into(), format!("{first}"));
    metadata.insert("last_timestamp_s".into(), format!("{last}"));
    let mut measured = None;
    if last > first {
        let m = (n - 1) as f64 / (last - first);
        if let Ok(r) = SampleRate::new(m) {
            metadata.insert("measured_sample_rate".into(), format!("{m}"));
            metadata.insert(
                "measured_rate_ppm".into(),
                format!("{:.3}", (m / hz - 1.0) * 1e6),
            );
            measured = Some(r);
        }
    } else {
        warnings.push(format!(
            "{}: /{path}: timestamps do not increase ({first} s to {last} s); no measured rate",
            h5.path.display()
        ));
    }
    Ok(Timing {
        rate,
        start_s: first,
        measured,
    })
}

/// NumPy's median: the middle value, or the mean of the two middle values.
fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => values[n / 2],
        _ => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

/// The recording's start time from the file's seconds: a negative or unrepresentable start is
/// taken as 0, with a warning.
pub(crate) fn start_time(
    h5: &H5,
    series: &str,
    seconds: f64,
    warnings: &mut Vec<String>,
) -> RationalTime {
    RationalTime::from_seconds_f64(seconds).unwrap_or_else(|_| {
        warnings.push(format!(
            "{}: /{series} starts at {seconds} s, which dspk cannot state as a time (it must be \
             0 or later); its samples are timed from 0",
            h5.path.display()
        ));
        RationalTime::ZERO
    })
}

#[cfg(test)]
mod tests {
    use super::median;

    #[test]
    fn median_is_numpys() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&mut []).is_nan());
    }
}
