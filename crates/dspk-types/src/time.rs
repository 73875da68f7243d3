//! Exact sample rates, times and time ranges (rational numbers, never floats that drift).

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use num_rational::Ratio;
use num_traits::{CheckedAdd, CheckedMul, CheckedSub};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::{DspError, DspResult};

/// The exact rational `(numerator, denominator)` of the shortest decimal that reads back as `x`.
///
/// `x` must be finite and non-negative. Rust prints an `f64` as the shortest decimal that parses
/// back to the same number, so `30000.12` gives `750003/25`, not the binary fraction nearest it.
fn exact_decimal(x: f64, what: &str) -> DspResult<Ratio<u128>> {
    let text = format!("{x}");
    parse_decimal(&text).ok_or_else(|| DspError::Overflow(format!("{what} {text}")))
}

/// Parses `123`, `123.456` or `.5` exactly; `None` when it does not fit or is not a decimal.
fn parse_decimal(text: &str) -> Option<Ratio<u128>> {
    let (int, frac) = text.split_once('.').unwrap_or((text, ""));
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    if !int.bytes().all(|b| b.is_ascii_digit()) || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let frac = frac.trim_end_matches('0');
    let mut num: u128 = 0;
    for b in int.bytes().chain(frac.bytes()) {
        num = num.checked_mul(10)?.checked_add(u128::from(b - b'0'))?;
    }
    let den = 10u128.checked_pow(u32::try_from(frac.len()).ok()?)?;
    Some(Ratio::new(num, den))
}

/// Parses `n/d`, or a decimal, exactly.
fn parse_ratio(text: &str) -> Option<Ratio<u128>> {
    match text.split_once('/') {
        Some((n, d)) => {
            let n: u128 = n.trim().parse().ok()?;
            let d: u128 = d.trim().parse().ok()?;
            (d != 0).then(|| Ratio::new(n, d))
        }
        None => parse_decimal(text.trim()),
    }
}

/// Writes `r` as an exact decimal where one exists (denominator of only 2s and 5s), else `n/d`.
fn fmt_ratio(f: &mut fmt::Formatter<'_>, num: u128, den: u128) -> fmt::Result {
    let mut d = den;
    let (mut twos, mut fives) = (0u32, 0u32);
    while d.is_multiple_of(2) {
        d /= 2;
        twos += 1;
    }
    while d.is_multiple_of(5) {
        d /= 5;
        fives += 1;
    }
    if d != 1 {
        return write!(f, "{num}/{den}");
    }
    let digits = twos.max(fives);
    // Scale to a power-of-ten denominator: num * (10^digits / den).
    let scaled = 10u128
        .checked_pow(digits)
        .and_then(|p| num.checked_mul(p / den));
    match scaled {
        Some(s) if digits > 0 => {
            let p = 10u128.pow(digits);
            write!(f, "{}.{:0width$}", s / p, s % p, width = digits as usize)
        }
        Some(s) => write!(f, "{s}"),
        None => write!(f, "{num}/{den}"),
    }
}

/// `floor(rest * 10^digits / den)` for `rest < den`, exactly and without overflow (decimal long
/// division whose `10 * x mod den` steps never exceed `den`).
fn floor_scaled_fraction(rest: u128, den: u128, digits: u32) -> u128 {
    let mut x = rest;
    let mut out = 0u128;
    for _ in 0..digits {
        // 10 * x = digit * den + x', found by adding x ten times modulo den.
        let (mut acc, mut digit) = (0u128, 0u128);
        for _ in 0..10 {
            if acc >= den - x {
                acc -= den - x;
                digit += 1;
            } else {
                acc += x;
            }
        }
        out = out * 10 + digit;
        x = acc;
    }
    out
}

/// An exact, positive sample rate in hertz: a reduced fraction of two `u64`.
///
/// ```
/// use dspk_types::SampleRate;
/// let r = SampleRate::new(24414.0625).unwrap();
/// assert_eq!(r.as_ratio(), (390625, 16));
/// assert_eq!(r.to_string(), "24414.0625 Hz");
/// assert_eq!("750003/25".parse::<SampleRate>().unwrap(), SampleRate::new(30000.12).unwrap());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SampleRate {
    num: u64,
    den: u64,
}

impl SampleRate {
    /// The rate of the shortest decimal that reads back as `hz`, exactly: what the user typed.
    ///
    /// Zero, negative, NaN and infinite rates are [`DspError::InvalidSampleRate`].
    pub fn new(hz: f64) -> DspResult<Self> {
        if !hz.is_finite() || hz <= 0.0 {
            return Err(DspError::InvalidSampleRate {
                value: format!("{hz}"),
            });
        }
        let r = exact_decimal(hz, "sample rate").map_err(|_| DspError::InvalidSampleRate {
            value: format!("{hz}"),
        })?;
        Self::from_u128(*r.numer(), *r.denom(), || format!("{hz}"))
    }

    /// The rate `numerator / denominator` hertz, reduced.
    pub fn from_ratio(numerator: u64, denominator: u64) -> DspResult<Self> {
        Self::from_u128(u128::from(numerator), u128::from(denominator), || {
            format!("{numerator}/{denominator}")
        })
    }

    fn from_u128(num: u128, den: u128, text: impl Fn() -> String) -> DspResult<Self> {
        if num == 0 || den == 0 {
            return Err(DspError::InvalidSampleRate { value: text() });
        }
        let r = Ratio::new(num, den);
        let num =
            u64::try_from(*r.numer()).map_err(|_| DspError::InvalidSampleRate { value: text() })?;
        let den =
            u64::try_from(*r.denom()).map_err(|_| DspError::InvalidSampleRate { value: text() })?;
        Ok(Self { num, den })
    }

    /// The rate in hertz as a float (for display and float maths; not exact).
    pub fn rate_hz(&self) -> f64 {
        self.num as f64 / self.den as f64
    }

    /// The reduced `(numerator, denominator)` in hertz.
    pub fn as_ratio(&self) -> (u64, u64) {
        (self.num, self.den)
    }

    /// Half the rate, in hertz.
    pub fn nyquist_hz(&self) -> f64 {
        self.rate_hz() / 2.0
    }

    /// The time between two samples, in seconds (a float).
    pub fn period_seconds(&self) -> f64 {
        self.den as f64 / self.num as f64
    }

    /// The exact duration of `samples` samples.
    pub fn duration_for_samples(&self, samples: u64) -> DspResult<RationalTime> {
        RationalTime::from_samples(samples, *self)
    }

    /// How many whole samples fit in `duration` (rounded down).
    pub fn samples_for_duration(&self, duration: RationalTime) -> DspResult<u64> {
        duration.to_sample_index(*self)
    }

    fn as_ratio_u128(&self) -> Ratio<u128> {
        Ratio::new_raw(u128::from(self.num), u128::from(self.den))
    }
}

impl fmt::Display for SampleRate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_ratio(f, u128::from(self.num), u128::from(self.den))?;
        f.write_str(" Hz")
    }
}

impl FromStr for SampleRate {
    type Err = DspError;

    /// Accepts `30000`, `30000.12`, `750003/25`, each optionally followed by `Hz`.
    fn from_str(s: &str) -> DspResult<Self> {
        let t = s.trim();
        let t = t
            .strip_suffix("Hz")
            .or_else(|| t.strip_suffix("hz"))
            .unwrap_or(t)
            .trim();
        let invalid = || DspError::InvalidSampleRate {
            value: s.to_string(),
        };
        let r = parse_ratio(t).ok_or_else(invalid)?;
        Self::from_u128(*r.numer(), *r.denom(), || s.to_string())
    }
}

/// Serialised as its exact text without the unit (`"30000"`, `"30000.12"`, `"750003/25"`);
/// read from that text or from a JSON/TOML number (taken as the decimal it prints as).
impl Serialize for SampleRate {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let text = self.to_string();
        s.serialize_str(text.trim_end_matches(" Hz"))
    }
}

impl<'de> Deserialize<'de> for SampleRate {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match NumberOrText::read(d, "a sample rate in hertz: a number or exact text (\"30000\", \"30000.12\", \"750003/25\")")? {
            NumberOrText::Int(n) => SampleRate::from_ratio(n, 1),
            NumberOrText::Float(x) => SampleRate::new(x),
            NumberOrText::Text(t) => t.parse(),
        }
        .map_err(serde::de::Error::custom)
    }
}

/// A number or a text, as a sidecar or a TOML file writes rates and times.
enum NumberOrText {
    Int(u64),
    Float(f64),
    Text(String),
}

impl NumberOrText {
    /// Reads one; anything else is an error that says what was `expecting` (no internal type
    /// name reaches the user).
    fn read<'de, D: Deserializer<'de>>(d: D, expecting: &'static str) -> Result<Self, D::Error> {
        d.deserialize_any(NumberOrTextVisitor(expecting))
    }
}

struct NumberOrTextVisitor(&'static str);

impl serde::de::Visitor<'_> for NumberOrTextVisitor {
    type Value = NumberOrText;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<NumberOrText, E> {
        Ok(NumberOrText::Int(v))
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<NumberOrText, E> {
        Ok(match u64::try_from(v) {
            Ok(v) => NumberOrText::Int(v),
            // Negative: the readers refuse it with their own message.
            Err(_) => NumberOrText::Float(v as f64),
        })
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<NumberOrText, E> {
        Ok(NumberOrText::Float(v))
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<NumberOrText, E> {
        Ok(NumberOrText::Text(v.to_owned()))
    }
}

/// An exact, non-negative time in seconds: a reduced fraction of two `u128`.
///
/// Arithmetic is exact; anything that would overflow is an error, never a wrap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RationalTime(Ratio<u128>);

impl RationalTime {
    /// Time zero.
    pub const ZERO: RationalTime = RationalTime(Ratio::new_raw(0, 1));

    /// `numerator / denominator` seconds; a zero denominator is an error.
    pub fn new(numerator: u128, denominator: u128) -> DspResult<Self> {
        if denominator == 0 {
            return Err(DspError::config(format!(
                "time {numerator}/{denominator} has a zero denominator"
            )));
        }
        Ok(Self(Ratio::new(numerator, denominator)))
    }

    /// The shortest decimal that reads back as `seconds`, exactly; negative, NaN and infinite
    /// values are errors.
    pub fn from_seconds_f64(seconds: f64) -> DspResult<Self> {
        if !seconds.is_finite() || seconds < 0.0 {
            return Err(DspError::config(format!(
                "time {seconds} s is not a finite, non-negative number of seconds"
            )));
        }
        if seconds == 0.0 {
            // -0.0 is zero too; its text "-0" is not a decimal the parser accepts.
            return Ok(Self::ZERO);
        }
        exact_decimal(seconds, "time").map(Self)
    }

    /// The time of sample `index` at `rate` (sample 0 at time 0): `index / rate`.
    pub fn from_samples(index: u64, rate: SampleRate) -> DspResult<Self> {
        let (n, d) = rate.as_ratio();
        // index * d / n, reduced before multiplying so that results that fit never overflow.
        let r = Ratio::new(u128::from(index), u128::from(n))
            .checked_mul(&Ratio::from_integer(u128::from(d)))
            .ok_or_else(|| DspError::Overflow(format!("time of sample {index} at {rate}")))?;
        Ok(Self(r))
    }

    /// The index of the sample at or before this time at `rate` (rounded down).
    pub fn to_sample_index(&self, rate: SampleRate) -> DspResult<u64> {
        let samples = self
            .0
            .checked_mul(&rate.as_ratio_u128())
            .ok_or_else(|| DspError::Overflow(format!("sample index of {self} at {rate}")))?;
        u64::try_from(samples.to_integer())
            .map_err(|_| DspError::Overflow(format!("sample index of {self} at {rate}")))
    }

    /// `self + other`, or an overflow error.
    pub fn checked_add(&self, other: RationalTime) -> DspResult<Self> {
        self.0
            .checked_add(&other.0)
            .map(Self)
            .ok_or_else(|| DspError::Overflow(format!("{self} + {other}")))
    }

    /// `self - other`; an error when `other` is later (times are never negative) or on overflow.
    pub fn checked_sub(&self, other: RationalTime) -> DspResult<Self> {
        if other > *self {
            return Err(DspError::config(format!(
                "time {self} minus {other} would be negative"
            )));
        }
        self.0
            .checked_sub(&other.0)
            .map(Self)
            .ok_or_else(|| DspError::Overflow(format!("{self} - {other}")))
    }

    /// The reduced `(numerator, denominator)` in seconds.
    pub fn as_ratio(&self) -> (u128, u128) {
        (*self.0.numer(), *self.0.denom())
    }

    /// The time in seconds as a float (not exact).
    pub fn as_seconds_f64(&self) -> f64 {
        let whole = self.0.numer() / self.0.denom();
        let rest = self.0.numer() % self.0.denom();
        whole as f64 + rest as f64 / *self.0.denom() as f64
    }

    /// The time as a [`Duration`], rounded down to whole nanoseconds; a time past
    /// [`Duration::MAX`] saturates to it.
    pub fn as_duration(&self) -> Duration {
        let (n, d) = self.as_ratio();
        let Ok(secs) = u64::try_from(n / d) else {
            return Duration::MAX;
        };
        let nanos = floor_scaled_fraction(n % d, d, 9);
        Duration::new(
            secs,
            u32::try_from(nanos).expect("a fraction below 1 has fewer than 10^9 nanoseconds"),
        )
    }
}

impl Default for RationalTime {
    fn default() -> Self {
        Self::ZERO
    }
}

impl fmt::Display for RationalTime {
    /// Exact decimal seconds where one exists (`12.5 s`), else the fraction (`1/3 s`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_ratio(f, *self.0.numer(), *self.0.denom())?;
        f.write_str(" s")
    }
}

impl FromStr for RationalTime {
    type Err = DspError;

    /// Accepts `12.5`, `1/3`, optionally followed by `s`.
    fn from_str(s: &str) -> DspResult<Self> {
        let t = s.trim();
        let t = t.strip_suffix('s').unwrap_or(t).trim();
        parse_ratio(t).map(Self).ok_or_else(|| {
            DspError::config(format!(
                "'{s}' is not a time in seconds (write 12.5 or 1/3)"
            ))
        })
    }
}

/// Serialised as its exact text in seconds without the unit (`"12.5"`, `"1/3"`); read from that
/// text or from a number of seconds.
impl Serialize for RationalTime {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let text = self.to_string();
        s.serialize_str(text.trim_end_matches(" s"))
    }
}

impl<'de> Deserialize<'de> for RationalTime {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match NumberOrText::read(
            d,
            "a time in seconds: a number or exact text (\"12.5\", \"1/3\")",
        )? {
            NumberOrText::Int(n) => Ok(RationalTime(Ratio::from_integer(u128::from(n)))),
            NumberOrText::Float(x) => RationalTime::from_seconds_f64(x),
            NumberOrText::Text(t) => t.parse(),
        }
        .map_err(serde::de::Error::custom)
    }
}

/// A closed interval of time `[start, end]`, `start <= end`.
///
/// Serialised as `{"start": …, "end": …}` (each as [`RationalTime`]); reading refuses unknown
/// fields and a start after the end, as [`TimeRange::new`] does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "RawTimeRange")]
pub struct TimeRange {
    /// The first instant.
    pub start: RationalTime,
    /// The last instant.
    pub end: RationalTime,
}

impl TimeRange {
    /// The range `[start, end]`; `start > end` is an error.
    pub fn new(start: RationalTime, end: RationalTime) -> DspResult<Self> {
        if start > end {
            return Err(DspError::config(format!(
                "time range starts at {start}, after its end at {end}"
            )));
        }
        Ok(Self { start, end })
    }

    /// Whether `t` lies in the range, both ends included.
    pub fn contains(&self, t: RationalTime) -> bool {
        self.start <= t && t <= self.end
    }

    /// `end - start`; an error for a range built by hand with its start after its end, or when
    /// the exact difference does not fit.
    pub fn duration(&self) -> DspResult<RationalTime> {
        self.end.checked_sub(self.start)
    }
}

/// A [`TimeRange`] as read, before its order is checked.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTimeRange {
    start: RationalTime,
    end: RationalTime,
}

impl TryFrom<RawTimeRange> for TimeRange {
    type Error = DspError;

    fn try_from(raw: RawTimeRange) -> DspResult<Self> {
        TimeRange::new(raw.start, raw.end)
    }
}

#[cfg(test)]
#[path = "tests/time.rs"]
mod tests;
