//! Python arguments checked into dspk's types: sample indices, channel lists, sample ranges,
//! durations. Every refusal is an `InvalidInputError` that names the argument.

use std::ops::Range;

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyString};

use dspk_types::{ChannelList, RationalTime, RecordingInfo, SampleRate, TimeSpec};

use crate::errors::{OrRaise, invalid};

/// A non-negative whole number (`int`, NumPy integers, anything with `__index__`).
pub(crate) fn index(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<u64> {
    if obj.is_instance_of::<PyBool>() || obj.is_instance_of::<PyFloat>() {
        return Err(invalid(format!(
            "{what} must be a whole number, not {}",
            type_name(obj)
        )));
    }
    let value: i128 = match obj.call_method0("__index__") {
        Ok(v) => v
            .extract()
            .map_err(|_| invalid(format!("{what} is too large")))?,
        Err(_) => {
            return Err(invalid(format!(
                "{what} must be a whole number, not {}",
                type_name(obj)
            )));
        }
    };
    u64::try_from(value).map_err(|_| {
        if value < 0 {
            invalid(format!("{what} must be at least 0, not {value}"))
        } else {
            invalid(format!(
                "{what} {value} is too large (at most {})",
                u64::MAX
            ))
        }
    })
}

/// An optional non-negative whole number.
pub(crate) fn opt_index(obj: Option<&Bound<'_, PyAny>>, what: &str) -> PyResult<Option<u64>> {
    match obj {
        Some(o) if !o.is_none() => index(o, what).map(Some),
        _ => Ok(None),
    }
}

/// A positive whole number.
pub(crate) fn positive(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<u64> {
    match index(obj, what)? {
        0 => Err(invalid(format!("{what} must be at least 1, not 0"))),
        n => Ok(n),
    }
}

/// The channels to read: `None` is every channel in order; otherwise a sequence of indices
/// (a list, a tuple, a range, a NumPy integer array), each below the channel count.
pub(crate) fn channels(
    obj: Option<&Bound<'_, PyAny>>,
    info: &RecordingInfo,
) -> PyResult<Vec<usize>> {
    let count = info.channel_count();
    let Some(obj) = obj.filter(|o| !o.is_none()) else {
        return Ok((0..count).collect());
    };
    if obj.is_instance_of::<PyString>() || obj.is_instance_of::<PyInt>() {
        return Err(invalid(format!(
            "channels must be a sequence of channel indices (e.g. [0, 5]), not {}",
            type_name(obj)
        )));
    }
    let items = obj.try_iter().map_err(|_| {
        invalid(format!(
            "channels must be a sequence of channel indices (e.g. [0, 5]), not {}",
            type_name(obj)
        ))
    })?;
    let mut out = Vec::new();
    for item in items {
        let i = index(&item?, "a channel index")?;
        let c = usize::try_from(i).unwrap_or(usize::MAX);
        if c >= count {
            return Err(crate::errors::from_dsp(
                dspk_types::DspError::InvalidChannel { index: c, count },
            ));
        }
        out.push(c);
    }
    if out.is_empty() {
        return Err(invalid(
            "channels is empty: give at least one channel index",
        ));
    }
    Ok(out)
}

/// A channel list as the program writes it (`"0:5,100"`: indices and inclusive ranges) or a
/// sequence of indices (a list, a tuple, a range, a NumPy integer array); `None` for every
/// channel. It is checked against the recording where it is used (after any channel map).
pub(crate) fn channel_list(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<ChannelList>> {
    let Some(obj) = obj.filter(|o| !o.is_none()) else {
        return Ok(None);
    };
    if let Ok(text) = obj.cast::<PyString>() {
        let text = text.to_str()?;
        return ChannelList::parse(text)
            .map(Some)
            .map_err(|e| invalid(format!("channels: {e}")));
    }
    let refuse = || {
        invalid(format!(
            "channels must be a sequence of channel indices (e.g. [0, 5]) or a channel list \
             (e.g. \"0:5,100\"), not {}",
            type_name(obj)
        ))
    };
    if obj.is_instance_of::<PyInt>() {
        return Err(refuse());
    }
    let mut out = Vec::new();
    for item in obj.try_iter().map_err(|_| refuse())? {
        let i = index(&item?, "a channel index")?;
        out.push(usize::try_from(i).unwrap_or(usize::MAX));
    }
    if out.is_empty() {
        return Err(invalid(
            "channels is empty: give at least one channel index",
        ));
    }
    ChannelList::from_indices(&out).map(Some).or_raise()
}

/// The sample range `start..stop` (`start` defaults to 0, `stop` to `total`). It is not
/// checked here: the library refuses a reversed or out-of-range one with its own message, the
/// program's.
pub(crate) fn sample_range(
    start: Option<&Bound<'_, PyAny>>,
    stop: Option<&Bound<'_, PyAny>>,
    total: u64,
    names: (&str, &str),
) -> PyResult<Range<u64>> {
    let start = opt_index(start, names.0)?.unwrap_or(0);
    let stop = opt_index(stop, names.1)?.unwrap_or(total);
    Ok(start..stop)
}

/// The sample range `start..end` of a pass (`scan`, `convert`), each end a sample index (an
/// `int`) or a time as the program writes it (`"12.5"`, `"1:02:03.5"`, `"375000smp"`: seconds
/// from the first sample at the recording's rate, exactly); defaults 0 and the end. Not checked
/// here, as [`sample_range`].
pub(crate) fn pass_range(
    start: Option<&Bound<'_, PyAny>>,
    end: Option<&Bound<'_, PyAny>>,
    info: &RecordingInfo,
    names: (&str, &str),
) -> PyResult<Range<u64>> {
    let point = |obj: Option<&Bound<'_, PyAny>>, name: &str| -> PyResult<Option<u64>> {
        match obj.filter(|o| !o.is_none()) {
            Some(o) => match o.cast::<PyString>() {
                Ok(text) => TimeSpec::parse(text.to_str()?)
                    .and_then(|t| t.to_sample_index(info.sample_rate))
                    .map(Some)
                    .map_err(|e| invalid(format!("{name}: {e}"))),
                Err(_) => index(o, name).map(Some),
            },
            None => Ok(None),
        }
    };
    let first = point(start, names.0)?.unwrap_or(0);
    let last = point(end, names.1)?.unwrap_or(info.samples);
    Ok(first..last)
}

/// A duration in seconds, exactly: an `int`, a `fractions.Fraction` or a `float` (its shortest
/// decimal form, as the program reads `12.5`).
pub(crate) fn seconds(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<RationalTime> {
    if obj.is_instance_of::<PyBool>() {
        return Err(invalid(format!(
            "{what} must be a number of seconds, not bool"
        )));
    }
    if obj.is_instance_of::<PyFloat>() {
        let s: f64 = obj.extract()?;
        return RationalTime::from_seconds_f64(s).map_err(|e| invalid(format!("{what}: {e}")));
    }
    let (n, d) = match (obj.getattr("numerator"), obj.getattr("denominator")) {
        (Ok(n), Ok(d)) => (n, d),
        _ => {
            return Err(invalid(format!(
                "{what} must be a number of seconds (int, float or Fraction), not {}",
                type_name(obj)
            )));
        }
    };
    let n: i128 = n
        .extract()
        .map_err(|_| invalid(format!("{what} is not a whole ratio")))?;
    let d: i128 = d
        .extract()
        .map_err(|_| invalid(format!("{what} is not a whole ratio")))?;
    if n < 0 || d <= 0 {
        return Err(invalid(format!("{what} must be at least 0 seconds")));
    }
    RationalTime::new(n as u128, d as u128).or_raise()
}

/// A sample rate in hertz: a number, or an exact `Fraction`.
pub(crate) fn rate(obj: &Bound<'_, PyAny>) -> PyResult<SampleRate> {
    if obj.is_instance_of::<PyFloat>() || obj.is_instance_of::<PyInt>() {
        let hz: f64 = obj.extract()?;
        return SampleRate::new(hz).or_raise();
    }
    let t = seconds(obj, "sample_rate")?;
    let (n, d) = t.as_ratio();
    match (u64::try_from(n), u64::try_from(d)) {
        (Ok(n), Ok(d)) => SampleRate::from_ratio(n, d).or_raise(),
        _ => Err(invalid("sample_rate: the ratio does not fit in 64 bits")),
    }
}

/// The type name of `obj`, for messages.
pub(crate) fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map_or_else(|_| "an unknown type".to_string(), |n| n.to_string())
}
