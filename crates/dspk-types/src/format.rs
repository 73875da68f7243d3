//! Stored sample formats, physical units, and the description of a recording and its channels.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::{DspError, DspResult, MemoryOrder, Probe, RationalTime, SampleRate, Segments};

/// Microvolts in one volt.
pub const MICROVOLTS_PER_VOLT: f64 = 1e6;

/// How one stored sample is written on disk: little-endian, in one of six types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SampleFormat {
    /// Signed 8-bit integer (`int8`).
    I8,
    /// Signed 16-bit integer (`int16`), what Neuropixels probes write.
    I16,
    /// Unsigned 16-bit integer (`uint16`).
    U16,
    /// Signed 32-bit integer (`int32`).
    I32,
    /// 32-bit float (`float32`).
    F32,
    /// 64-bit float (`float64`).
    F64,
}

impl SampleFormat {
    /// Every format.
    pub const ALL: [SampleFormat; 6] = [
        SampleFormat::I8,
        SampleFormat::I16,
        SampleFormat::U16,
        SampleFormat::I32,
        SampleFormat::F32,
        SampleFormat::F64,
    ];

    /// Bytes per stored sample.
    pub const fn bytes(&self) -> usize {
        match self {
            SampleFormat::I8 => 1,
            SampleFormat::I16 | SampleFormat::U16 => 2,
            SampleFormat::I32 | SampleFormat::F32 => 4,
            SampleFormat::F64 => 8,
        }
    }

    /// The NumPy name (`int8`, `int16`, `uint16`, `int32`, `float32`, `float64`).
    pub const fn name(&self) -> &'static str {
        match self {
            SampleFormat::I8 => "int8",
            SampleFormat::I16 => "int16",
            SampleFormat::U16 => "uint16",
            SampleFormat::I32 => "int32",
            SampleFormat::F32 => "float32",
            SampleFormat::F64 => "float64",
        }
    }

    /// Whether the format is a float type.
    pub const fn is_float(&self) -> bool {
        matches!(self, SampleFormat::F32 | SampleFormat::F64)
    }

    /// Decodes `out.len()` samples from `bytes` as `stored * gain + offset`.
    ///
    /// `bytes` must hold at least `out.len() * self.bytes()` bytes; fewer is a
    /// [`DspError::BufferUnderrun`]. The stored value is converted to `f32` (exact for 8- and
    /// 16-bit integers, rounded for `int32` and `float64`), then multiplied and added in `f32`:
    /// the same rule as the device decode kernel's.
    pub fn decode(&self, bytes: &[u8], out: &mut [f32], gain: f32, offset: f32) -> DspResult<()> {
        let needed = out
            .len()
            .checked_mul(self.bytes())
            .ok_or_else(|| DspError::Overflow(format!("{} samples of {self}", out.len())))?;
        if bytes.len() < needed {
            return Err(DspError::BufferUnderrun {
                what: format!("{self} input"),
                needed,
                available: bytes.len(),
            });
        }
        let bytes = &bytes[..needed];
        match self {
            SampleFormat::I8 => decode_with(
                bytes,
                out,
                |b: [u8; 1]| f32::from(i8::from_le_bytes(b)),
                gain,
                offset,
            ),
            SampleFormat::I16 => decode_with(
                bytes,
                out,
                |b: [u8; 2]| f32::from(i16::from_le_bytes(b)),
                gain,
                offset,
            ),
            SampleFormat::U16 => decode_with(
                bytes,
                out,
                |b: [u8; 2]| f32::from(u16::from_le_bytes(b)),
                gain,
                offset,
            ),
            SampleFormat::I32 => decode_with(
                bytes,
                out,
                |b: [u8; 4]| i32::from_le_bytes(b) as f32,
                gain,
                offset,
            ),
            SampleFormat::F32 => decode_with(bytes, out, f32::from_le_bytes, gain, offset),
            SampleFormat::F64 => decode_with(
                bytes,
                out,
                |b: [u8; 8]| f64::from_le_bytes(b) as f32,
                gain,
                offset,
            ),
        }
        Ok(())
    }
}

/// Decodes fixed-width little-endian values: `convert(stored) * gain + offset`, in `f32`.
///
/// One rule for every format, the same as the device kernel's: convert the stored value to
/// `f32` (exact for 8/16-bit integers, rounded for `int32` and `float64`), then one multiply and
/// one add in `f32`.
#[inline]
fn decode_with<const N: usize>(
    bytes: &[u8],
    out: &mut [f32],
    convert: impl Fn([u8; N]) -> f32,
    gain: f32,
    offset: f32,
) {
    for (o, chunk) in out.iter_mut().zip(bytes.chunks_exact(N)) {
        let mut b = [0u8; N];
        b.copy_from_slice(chunk);
        *o = convert(b) * gain + offset;
    }
}

impl fmt::Display for SampleFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for SampleFormat {
    type Err = DspError;

    /// Accepts the NumPy name (`int16`), the short name (`i16`) or NumPy's dtype code (`<i2`).
    fn from_str(s: &str) -> DspResult<Self> {
        let t = s.trim().to_ascii_lowercase();
        let f = match t.as_str() {
            "int8" | "i8" | "<i1" | "i1" => SampleFormat::I8,
            "int16" | "i16" | "<i2" | "i2" => SampleFormat::I16,
            "uint16" | "u16" | "<u2" | "u2" => SampleFormat::U16,
            "int32" | "i32" | "<i4" | "i4" => SampleFormat::I32,
            "float32" | "f32" | "<f4" | "f4" => SampleFormat::F32,
            "float64" | "f64" | "<f8" | "f8" => SampleFormat::F64,
            _ => {
                return Err(DspError::UnsupportedFormat(format!(
                    "sample format '{s}' (supported: int8, int16, uint16, int32, float32, float64)"
                )));
            }
        };
        Ok(f)
    }
}

/// The physical unit of a channel's scaled values.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum SignalUnit {
    /// Volts.
    #[serde(rename = "V")]
    Volt,
    /// Millivolts.
    #[serde(rename = "mV")]
    Millivolt,
    /// Microvolts, the unit of extracellular recordings.
    #[serde(rename = "uV", alias = "µV")]
    Microvolt,
    /// Amperes.
    #[serde(rename = "A")]
    Ampere,
    /// Milliamperes.
    #[serde(rename = "mA")]
    Milliampere,
    /// Microamperes.
    #[serde(rename = "uA", alias = "µA")]
    Microampere,
    /// No unit (counts, digital lines, raw ADC values).
    #[default]
    #[serde(rename = "dimensionless")]
    Dimensionless,
    /// Any other unit, by its symbol.
    #[serde(rename = "other")]
    Other(String),
}

impl SignalUnit {
    /// How many µV one of this unit is: 10⁶ for volts, 10³ for millivolts, 1 for microvolts;
    /// `None` for a unit that is not a voltage.
    pub fn microvolts_per_unit(&self) -> Option<f64> {
        match self {
            SignalUnit::Volt => Some(MICROVOLTS_PER_VOLT),
            SignalUnit::Millivolt => Some(MICROVOLTS_PER_VOLT / 1e3),
            SignalUnit::Microvolt => Some(1.0),
            _ => None,
        }
    }

    /// The symbol (`µV`, `mV`, …; empty for dimensionless).
    pub fn symbol(&self) -> &str {
        match self {
            SignalUnit::Volt => "V",
            SignalUnit::Millivolt => "mV",
            SignalUnit::Microvolt => "µV",
            SignalUnit::Ampere => "A",
            SignalUnit::Milliampere => "mA",
            SignalUnit::Microampere => "µA",
            SignalUnit::Dimensionless => "",
            SignalUnit::Other(s) => s,
        }
    }
}

impl fmt::Display for SignalUnit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SignalUnit::Dimensionless => f.write_str("dimensionless"),
            other => f.write_str(other.symbol()),
        }
    }
}

/// What a channel's values are: a sampled signal, or bits the acquisition system packs into a
/// channel of its own. The reader knows (SpikeGLX's `.meta` says which saved channels are its
/// sync word and NI digital words); a face asks instead of guessing from names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChannelKind {
    /// A sampled signal: an electrode, an analog input.
    #[default]
    Signal,
    /// A sync word: the bits of the acquisition system's sync input (SpikeGLX imec's SY
    /// channel). SpikeInterface and Neo read it as a stream of its own.
    Sync,
    /// Digital lines packed in a word (SpikeGLX's NI digital words, `XD…`).
    Digital,
}

impl ChannelKind {
    /// Its name, as in JSON: `signal`, `sync`, `digital`.
    pub fn name(&self) -> &'static str {
        match self {
            ChannelKind::Signal => "signal",
            ChannelKind::Sync => "sync",
            ChannelKind::Digital => "digital",
        }
    }

    /// Whether it is [`ChannelKind::Signal`].
    pub fn is_signal(&self) -> bool {
        *self == ChannelKind::Signal
    }
}

/// One channel: its name and how stored values become physical ones
/// (`value = stored * gain + offset`, in `unit`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChannelInfo {
    /// The channel's name.
    pub name: String,
    /// Multiplier from stored value to `unit`.
    pub gain: f32,
    /// Added after the gain, in `unit`.
    #[serde(default)]
    pub offset: f32,
    /// The unit of the scaled value.
    #[serde(default)]
    pub unit: SignalUnit,
    /// Whether its values are a sampled signal or packed bits (sync, digital lines).
    #[serde(default, skip_serializing_if = "ChannelKind::is_signal")]
    pub kind: ChannelKind,
}

impl ChannelInfo {
    /// A signal channel with gain 1, offset 0, dimensionless.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            gain: 1.0,
            offset: 0.0,
            unit: SignalUnit::Dimensionless,
            kind: ChannelKind::Signal,
        }
    }
}

/// Whether a recording's files state when it starts: what a join places it by.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Clock {
    /// Its files state its clock (a SpikeGLX `firstSample`, Open Ephys sample numbers, a
    /// sidecar's `start_time` or `segments`): a join places it by its clock numbers.
    #[default]
    Stated,
    /// Nothing states when it starts (a raw file whose sidecar gives neither `start_time` nor
    /// `segments`): it starts at 0 by default, and a join places it where the part before it
    /// ends.
    Unstated,
}

impl Clock {
    /// Whether it is [`Clock::Stated`].
    pub fn is_stated(&self) -> bool {
        *self == Clock::Stated
    }
}

/// What a recording is: its channels, length, rate, stored format and order, and start time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordingInfo {
    /// A name for messages and listings (often the file name).
    pub name: String,
    /// One entry per channel, in storage order.
    pub channels: Vec<ChannelInfo>,
    /// Samples (time points) per channel.
    pub samples: u64,
    /// The exact sample rate.
    pub sample_rate: SampleRate,
    /// How one stored sample is written.
    pub format: SampleFormat,
    /// How samples are laid out in storage.
    pub order: MemoryOrder,
    /// The time of sample 0 (e.g. SpikeGLX's `firstSample`).
    pub start_time: RationalTime,
    /// Whether the files state `start_time` and the segments' clock numbers, or they are
    /// defaults (see [`Clock`]).
    #[serde(default, skip_serializing_if = "Clock::is_stated")]
    pub clock: Clock,
    /// The segments, where the recording has more than one run of the clock (`None`: one
    /// segment of every sample, from `start_time`). See [`RecordingInfo::segments`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segments: Option<Segments>,
    /// The rate the format states as nominal (an Open Ephys `.oebin`'s `sample_rate`, a
    /// probe's 30 kHz), where it differs from `sample_rate`; `None`: `sample_rate` is it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nominal_rate: Option<SampleRate>,
    /// The rate the clock was measured to run at, where the format tells (Open Ephys sample
    /// numbers over timestamps, SpikeGLX's calibrated `imSampRate`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_rate: Option<SampleRate>,
    /// Where each channel sits on the probe, where the format tells (`None`: no geometry).
    /// It describes exactly `channels`, in their order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<Probe>,
    /// Free-form key/value metadata from the source.
    pub metadata: BTreeMap<String, String>,
}

impl RecordingInfo {
    /// A recording of `n_channels` channels named `ch0…`, gain 1, offset 0, starting at 0.
    pub fn new(
        name: impl Into<String>,
        n_channels: usize,
        samples: u64,
        sample_rate: SampleRate,
        format: SampleFormat,
        order: MemoryOrder,
    ) -> Self {
        Self {
            name: name.into(),
            channels: (0..n_channels)
                .map(|i| ChannelInfo::new(format!("ch{i}")))
                .collect(),
            samples,
            sample_rate,
            format,
            order,
            start_time: RationalTime::ZERO,
            clock: Clock::Stated,
            segments: None,
            nominal_rate: None,
            measured_rate: None,
            probe: None,
            metadata: BTreeMap::new(),
        }
    }

    /// The segments: those set, or one of every sample starting at `start_time` (its clock
    /// number is `start_time` at `sample_rate`, rounded down).
    pub fn segments(&self) -> Segments {
        self.segments.clone().unwrap_or_else(|| {
            let first = self
                .start_time
                .to_sample_index(self.sample_rate)
                .unwrap_or(0);
            Segments::single(self.samples, first, self.start_time)
        })
    }

    /// The nominal rate: [`RecordingInfo::nominal_rate`] where set, else `sample_rate`.
    pub fn nominal(&self) -> SampleRate {
        self.nominal_rate.unwrap_or(self.sample_rate)
    }

    /// The number of channels.
    pub fn channel_count(&self) -> usize {
        self.channels.len()
    }

    /// The exact duration of all samples.
    pub fn duration(&self) -> DspResult<RationalTime> {
        RationalTime::from_samples(self.samples, self.sample_rate)
    }

    /// Bytes of one stored frame (one sample of every channel).
    pub fn frame_bytes(&self) -> usize {
        self.channels.len() * self.format.bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn voltages_say_their_microvolts_per_unit() {
        assert_eq!(SignalUnit::Volt.microvolts_per_unit(), Some(1_000_000.0));
        assert_eq!(SignalUnit::Millivolt.microvolts_per_unit(), Some(1_000.0));
        assert_eq!(SignalUnit::Microvolt.microvolts_per_unit(), Some(1.0));
        for other in [
            SignalUnit::Ampere,
            SignalUnit::Microampere,
            SignalUnit::Dimensionless,
            SignalUnit::Other("mV/2".into()),
        ] {
            assert_eq!(other.microvolts_per_unit(), None, "{other}");
        }
    }

    /// A signal channel's JSON is what it was before channels had a kind; a sync or digital
    /// channel says so, and JSON without a kind reads as a signal.
    #[test]
    fn a_channel_kind_is_written_only_where_it_is_not_a_signal() {
        let signal = ChannelInfo::new("AP0");
        let sync = ChannelInfo {
            kind: ChannelKind::Sync,
            ..ChannelInfo::new("SY0")
        };
        let text = |c: &ChannelInfo| serde_json::to_string(c).expect("a channel serialises");
        assert_eq!(
            text(&signal),
            r#"{"name":"AP0","gain":1.0,"offset":0.0,"unit":"dimensionless"}"#
        );
        assert_eq!(
            text(&sync),
            r#"{"name":"SY0","gain":1.0,"offset":0.0,"unit":"dimensionless","kind":"sync"}"#
        );
        let read = |t: &str| serde_json::from_str::<ChannelInfo>(t).expect("a channel parses");
        assert_eq!(read(&text(&sync)), sync);
        assert_eq!(read(r#"{"name":"AP0","gain":1.0}"#), signal);
        assert_eq!(
            read(r#"{"name":"XD0","gain":1.0,"kind":"digital"}"#).kind,
            ChannelKind::Digital
        );
        assert!(!ChannelKind::Digital.is_signal() && ChannelKind::default().is_signal());
        for kind in [ChannelKind::Signal, ChannelKind::Sync, ChannelKind::Digital] {
            let json = serde_json::to_string(&kind).expect("a kind serialises");
            assert_eq!(json, format!("\"{}\"", kind.name()));
        }
    }
}
