//! A deterministic, seeded, Neuropixels-like recording computed on demand: any length, no storage.

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::Arc;

mod truth;

pub use truth::PlantedSpike;

use crate::{
    ChannelInfo, DspError, DspResult, MemoryOrder, RecordingInfo, RecordingSource, SampleFormat,
    SampleRate, SignalUnit, check_read, check_read_stored,
};

/// Samples summed by the noise's moving sum (its band limit: first zero at `rate / NOISE_TAPS`).
pub const NOISE_TAPS: usize = 4;

/// Period, in samples, of the first noise table (2^16).
pub const NOISE_PERIOD_A: usize = 65_536;

/// Period, in samples, of the second noise table (65 521, the largest prime below 2^16): coprime
/// to [`NOISE_PERIOD_A`], so their sum repeats only every `NOISE_PERIOD_A * NOISE_PERIOD_B`
/// samples (about 39.8 hours at 30 kHz).
pub const NOISE_PERIOD_B: usize = 65_521;

/// The shortest per-channel sinusoid period, in samples (its frequency: 10 % of the rate).
pub const SINE_PERIOD_MIN: usize = 10;

/// The longest per-channel sinusoid period, in samples (its frequency: 1 % of the rate).
pub const SINE_PERIOD_MAX: usize = 100;

/// The largest amplitude, in stored counts, any component may have (keeps every sum far below
/// 2^24 counts, where `f32` still resolves a single count).
pub const MAX_COMPONENT_COUNTS: f64 = 1_048_576.0;

/// Samples of the default probe: 60 s at 30 kHz.
pub const DEFAULT_SYNTHETIC_SAMPLES: u64 = 1_800_000;

/// The default probe's dead channels.
pub const DEFAULT_DEAD_CHANNELS: [usize; 2] = [3, 190];

/// The default probe's noisy channels.
pub const DEFAULT_NOISY_CHANNELS: [usize; 2] = [77, 301];

const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;
const STREAM_NOISE_A: u64 = 0x6E6F_6973_6500_0001;
const STREAM_NOISE_B: u64 = 0x6E6F_6973_6500_0004;
const STREAM_SPIKE: u64 = 0x7370_696B_6500_0002;
const STREAM_SINE: u64 = 0x7369_6E65_0000_0003;
const LINE_HZ: f64 = 60.0;
/// Channel-to-channel step of the offsets into the first table: near `NOISE_PERIOD_A` over the
/// golden ratio, odd (coprime to the period), chosen so that the offsets of the first 64, 128,
/// 256, 384, 512 or 1024 channels are all at least 63 samples apart (around the circle).
const NOISE_STEP_A: u64 = 40_325;
/// The same for the second table (coprime to its prime period).
const NOISE_STEP_B: u64 = 40_467;
/// Samples the generator computes per pass (an `f32` stack block); every table is extended by
/// this many samples past its period so that one pass reads each table contiguously.
const GEN: usize = 256;
/// Samples computed per call of the generator in reads (a stack buffer).
const GEN_BLOCK: usize = 2048;
/// `1.5 × 2^23`: adding it to an `f32` of magnitude below 2^22 rounds it to an integer (ties to
/// even) held in the low mantissa bits.
const ROUND_MAGIC: f32 = 12_582_912.0;
/// Bit pattern of [`ROUND_MAGIC`].
const ROUND_MAGIC_BITS: i32 = 0x4B40_0000;

/// SplitMix64's finaliser: a bijective 64-bit mix, the counter-based hash behind every value.
#[inline(always)]
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The sum of the four signed 16-bit values of `hash(key, t)`.
#[inline(always)]
fn noise_u(key: u64, t: u64) -> i64 {
    let h = mix64(key.wrapping_add(t.wrapping_mul(GOLDEN)));
    i64::from(h as i16)
        + i64::from((h >> 16) as i16)
        + i64::from((h >> 32) as i16)
        + i64::from((h >> 48) as i16)
}

/// `v` rounded to the nearest integer (ties to even) and saturated to the `int16` range,
/// branch-free so that loops of it vectorise.
#[inline(always)]
fn round_to_i16(v: f32) -> i16 {
    let lo = f32::from(i16::MIN);
    let hi = f32::from(i16::MAX);
    // Not `f32::clamp`: plain compares keep the loop branch-free (the values are never NaN),
    // and in this operand order they map onto SSE's `maxps`/`minps` without register copies.
    let c = if v > lo { v } else { lo };
    let c = if c < hi { c } else { hi };
    let i = (c + ROUND_MAGIC).to_bits() as i32 - ROUND_MAGIC_BITS;
    // Already in range; saying so in integers lets the compiler pack with one saturating
    // instruction (`packssdw`) instead of shuffles.
    i.clamp(i32::from(i16::MIN), i32::from(i16::MAX)) as i16
}

/// `x` reduced into `0..period`, for `x` below `2 * period`.
#[inline(always)]
fn wrap(x: u64, period: u64) -> u64 {
    if x >= period { x - period } else { x }
}

/// A number in `0..range` from the low 32 bits of `h` (multiply-shift: no division).
#[inline(always)]
fn below(h: u64, range: u64) -> u64 {
    ((u128::from(h & 0xFFFF_FFFF) * u128::from(range)) >> 32) as u64
}

/// Where sample `t` falls in each period the generator reads (all below their period).
#[derive(Debug, Clone, Copy)]
struct Phase {
    /// The sample.
    t: u64,
    /// `t mod NOISE_PERIOD_A`.
    a: u64,
    /// `t mod NOISE_PERIOD_B`.
    b: u64,
    /// `t mod line_period`.
    line: u64,
    /// `t mod` the channel's sinusoid period.
    sine: u64,
    /// `t / spike_bin` (0 without spikes).
    bin: u64,
}

/// One noise table: `period` samples of band-limited noise (a circular moving sum of
/// [`NOISE_TAPS`] hashed values) with mean 0 and RMS 1 over the period, followed by its first
/// [`GEN`] samples again.
fn noise_table(key: u64, period: usize) -> Vec<f32> {
    let u: Vec<i64> = (0..period as u64).map(|i| noise_u(key, i)).collect();
    let w: Vec<i64> = (0..period)
        .map(|i| (0..NOISE_TAPS).map(|k| u[(i + period - k) % period]).sum())
        .collect();
    // Mean and variance exactly, in integers, then one correctly rounded division each.
    let s1: i128 = w.iter().map(|&v| i128::from(v)).sum();
    let s2: i128 = w.iter().map(|&v| i128::from(v) * i128::from(v)).sum();
    let p = period as i128;
    let mean = s1 as f64 / p as f64;
    let std = (((p * s2 - s1 * s1) as f64) / (p * p) as f64).sqrt();
    (0..period + GEN)
        .map(|i| ((w[i % period] as f64 - mean) / std) as f32)
        .collect()
}

/// `amplitude · sin(2π k / period)` for `k` in `0..period + GEN`.
fn sine_table(period: usize, amplitude: f64) -> impl Iterator<Item = f32> {
    (0..period + GEN).map(move |k| {
        let phase = (k % period) as f64 / period as f64 * std::f64::consts::TAU;
        (phase.sin() * amplitude) as f32
    })
}

/// The tables every channel reads (built once per recording; nothing proportional to the
/// recording's length).
struct Tables {
    /// Noise table of period [`NOISE_PERIOD_A`].
    noise_a: Vec<f32>,
    /// Noise table of period [`NOISE_PERIOD_B`].
    noise_b: Vec<f32>,
    /// The sinusoids in counts, one table per period `SINE_PERIOD_MIN..=SINE_PERIOD_MAX`, each
    /// `period + GEN` long, back to back.
    sines: Vec<f32>,
    /// Where the table of period `SINE_PERIOD_MIN + i` starts in `sines`.
    sine_at: Vec<usize>,
    /// The line component in counts: `line_period + GEN` samples (zeros when it is left out).
    line: Vec<f32>,
    /// The line component's period in samples (1 when it is left out).
    line_period: usize,
}

impl std::fmt::Debug for Tables {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tables")
            .field("noise_a", &self.noise_a.len())
            .field("noise_b", &self.noise_b.len())
            .field("sines", &self.sines.len())
            .field("line_period", &self.line_period)
            .finish_non_exhaustive()
    }
}

/// How to build a [`SyntheticRecording`]. Public fields; [`SyntheticRecording::new`] validates.
#[derive(Debug, Clone, PartialEq)]
pub struct SyntheticConfig {
    /// The recording's name.
    pub name: String,
    /// Number of channels (at least 1).
    pub channels: usize,
    /// The sample rate.
    pub sample_rate: SampleRate,
    /// Samples per channel (any `u64`: nothing is stored).
    pub samples: u64,
    /// The seed every value derives from.
    pub seed: u64,
    /// Microvolts per stored count (every channel's gain).
    pub gain_uv: f32,
    /// Microvolts added after the gain (every channel's offset).
    pub offset_uv: f32,
    /// RMS of a normal channel's band-limited noise, in µV.
    pub noise_rms_uv: f32,
    /// Amplitude of each of the two sinusoids, in µV.
    pub sine_amplitude_uv: f32,
    /// Spikes per second on every non-dead channel (0: none).
    pub spike_rate_hz: f64,
    /// The smallest spike trough depth, in µV.
    pub spike_min_uv: f32,
    /// The largest spike trough depth, in µV.
    pub spike_max_uv: f32,
    /// Channels planted flat (constant [`SyntheticConfig::dead_level`]).
    pub dead: Vec<usize>,
    /// The stored value of every sample of a dead channel.
    pub dead_level: i16,
    /// Channels planted noisy (noise × [`SyntheticConfig::noisy_factor`]).
    pub noisy: Vec<usize>,
    /// How much larger a noisy channel's noise is (at least 1).
    pub noisy_factor: f32,
}

impl SyntheticConfig {
    /// The Neuropixels-like default probe (see [`SyntheticRecording`]).
    pub fn neuropixels() -> Self {
        Self {
            name: "synthetic".to_string(),
            channels: 384,
            sample_rate: SampleRate::from_ratio(30_000, 1).expect("30000/1 is a valid rate"),
            samples: DEFAULT_SYNTHETIC_SAMPLES,
            seed: 0,
            gain_uv: 0.195,
            offset_uv: 0.0,
            noise_rms_uv: 10.0,
            sine_amplitude_uv: 3.0,
            spike_rate_hz: 5.0,
            spike_min_uv: 50.0,
            spike_max_uv: 150.0,
            dead: DEFAULT_DEAD_CHANNELS.to_vec(),
            dead_level: 0,
            noisy: DEFAULT_NOISY_CHANNELS.to_vec(),
            noisy_factor: 8.0,
        }
    }

    /// This configuration with `samples` samples per channel.
    pub fn with_samples(mut self, samples: u64) -> Self {
        self.samples = samples;
        self
    }

    /// This configuration with another seed.
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// This configuration with `channels` channels and the given planted channels.
    pub fn with_channels(mut self, channels: usize, dead: Vec<usize>, noisy: Vec<usize>) -> Self {
        self.channels = channels;
        self.dead = dead;
        self.noisy = noisy;
        self
    }
}

impl Default for SyntheticConfig {
    fn default() -> Self {
        Self::neuropixels()
    }
}

/// Per-channel generator constants (nothing proportional to the length).
#[derive(Debug, Clone)]
struct ChannelGen {
    dead: bool,
    /// Counts per unit of the two noise tables' sum.
    noise_scale: f32,
    /// Offset of the channel's reading of the first noise table, in `0..NOISE_PERIOD_A`.
    noise_a: u64,
    /// Offset of the channel's reading of the second noise table, in `0..NOISE_PERIOD_B`.
    noise_b: u64,
    spike_key: u64,
    /// The sinusoid's period in samples.
    sine_period: u64,
    /// Where the table of that period starts in `Tables::sines`.
    sine_at: usize,
    /// The sinusoid's phase, in samples of its period.
    sine_phase: u64,
    /// The line component's phase, in samples of its period.
    line_phase: u64,
}

/// A deterministic, seeded, Neuropixels-like recording computed on demand.
///
/// # The model
///
/// Every stored value is an `int16` computed from `(seed, channel, sample)` alone, so any window
/// of any length is computed independently of every other (a read split anywhere equals one
/// read, bit for bit) and the recording holds no state proportional to its length: ten hours of
/// 384 channels are described and read at their end in the memory of the window asked for, plus
/// about 0.65 MB of tables built once from the seed (shared by clones). The sinusoid
/// tables and the spike waveform come from `f64` `sin` and `exp`, so a platform whose maths
/// library rounds those differently may differ in the last count of a few values; within one
/// build every value is fixed.
///
/// A normal channel's stored value at sample `t` is the sum, computed in `f32` in the order
/// listed, then rounded (ties to even) and saturated to the `int16` range, of:
/// - **band-limited noise**: two noise tables are built once per recording from the seed, of
///   periods [`NOISE_PERIOD_A`] (2^16) and [`NOISE_PERIOD_B`] (65 521, prime) samples. Each holds
///   a circular moving sum over [`NOISE_TAPS`] samples of hashed white noise (a counter-based
///   hash, SplitMix64's finaliser, of `(seed, table, index)` gives four uniform 16-bit values
///   per index, summed), normalised to mean 0 and RMS 1 over its period: a low-pass whose first
///   zero is at a quarter of the sample rate, 7.5 kHz at 30 kHz, with autocorrelation
///   `(4 - lag) / 4` up to lag 4 and 0 beyond. A channel reads both tables from its own offsets:
///   `noise(t) = (A[(t + a_c) mod P_A] + B[(t + b_c) mod P_B]) × scale_c`, where `scale_c` is
///   [`SyntheticConfig::noise_rms_uv`] in counts over √2. The offsets step by about the period
///   over the golden ratio from channel to channel (from a seeded start), so no two of the
///   default probe's channels read either table within 63 samples of each other: channels are
///   uncorrelated at lag 0. **Honest limits:** each table repeats every 2.18 s at 30 kHz
///   (so a channel's noise has autocorrelation about 0.5 at lags of multiples of 65 536 and of
///   65 521 samples), two channels share one table at one lag each (correlation about 0.5
///   there), and the sum repeats only every `P_A × P_B` samples, about 39.8 hours at 30 kHz.
///   Over one full joint period the noise's RMS is exactly `noise_rms_uv`;
/// - **two sinusoids** of amplitude [`SyntheticConfig::sine_amplitude_uv`] each: a per-channel
///   one whose period is a hashed whole number of samples in
///   [`SINE_PERIOD_MIN`]`..=`[`SINE_PERIOD_MAX`] (10 % to 1 % of the sample rate, 300 Hz–3 kHz
///   at 30 kHz) with a hashed phase, and a "line" component shared by every channel (with a
///   per-channel hashed phase) whose period is `rate / 60 Hz` rounded to whole samples (exactly
///   60 Hz at 30 kHz; left out when 60 Hz is above 45 % of the rate). Both are read from tables
///   of one period each, built once with `f64` `sin`: no trigonometry per sample;
/// - **spikes**: time is cut into bins of `round(rate / spike_rate_hz)` samples; each bin of
///   each channel holds one spike at a hashed position, with a fixed 2 ms waveform (a negative
///   trough 0.6 ms in, then a smaller positive repolarisation) whose trough depth is a hashed
///   whole number of counts between [`SyntheticConfig::spike_min_uv`] and
///   [`SyntheticConfig::spike_max_uv`].
///
/// A **dead** channel holds [`SyntheticConfig::dead_level`] at every sample (zero variance). A
/// **noisy** channel is a normal channel whose noise is [`SyntheticConfig::noisy_factor`] times
/// larger (8× by default, so its RMS is about 7× the median's).
///
/// Scaled values are `stored * gain + offset` in µV, computed exactly like
/// [`SampleFormat::decode`] (`f32::from(stored) * gain + offset`), so `read` and a decoded
/// `read_stored` agree bit for bit.
///
/// The recording describes itself as time-major, like SpikeGLX's `.bin` it imitates, but it is
/// computed channel by channel, so its native reads ([`RecordingSource::read_native`],
/// [`RecordingSource::read_stored_native`]) are channel-major: interleaving the channels would
/// only add a transpose on the host, which a device pass's decode kernel does not need.
///
/// # The default probe
///
/// [`SyntheticConfig::default`] (= [`SyntheticConfig::neuropixels`]): 384 channels, 30 kHz,
/// 60 s (1 800 000 samples), seed 0, gain 0.195 µV per count (the step commonly quoted for
/// Neuropixels 2.0-like probes; documented here rather than derived from a particular probe's
/// gain table), offset 0, noise 10 µV RMS, sinusoids 3 µV, 5 spikes/s per channel of 50–150 µV,
/// dead channels {3, 190} (flat at 0), noisy channels {77, 301}. The planted channels are fixed,
/// not derived from the seed, so tests can name them.
///
/// # Example
///
/// ```
/// use dspk_types::{RecordingSource, SyntheticConfig, SyntheticRecording};
///
/// let rec = SyntheticRecording::new(SyntheticConfig::default().with_samples(30_000)).unwrap();
/// assert_eq!(rec.info().channel_count(), 384);
/// assert_eq!(rec.dead_channels(), &[3, 190]);
/// let mut out = vec![0f32; 2 * 100];
/// rec.read(&[0, 3], 1000..1100, &mut out).unwrap();
/// assert!(out[100..].iter().all(|&v| v == 0.0)); // channel 3 is dead
/// ```
#[derive(Debug, Clone)]
pub struct SyntheticRecording {
    config: SyntheticConfig,
    info: RecordingInfo,
    dead: Vec<usize>,
    noisy: Vec<usize>,
    gens: Vec<ChannelGen>,
    /// Shared by clones: built once from the seed, read-only.
    tables: Arc<Tables>,
    /// Spike bin length in samples; 0 when there are no spikes.
    spike_bin: u64,
    /// The waveform, its trough at -1.
    waveform: Vec<f32>,
    spike_min: i64,
    spike_span: u64,
}

impl SyntheticRecording {
    /// A synthetic recording described by `config`.
    ///
    /// Refused: no channels ([`DspError::InvalidConfig`]); a planted channel past the end
    /// ([`DspError::InvalidChannel`]); a channel planted both dead and noisy; a gain that is not
    /// finite and above 0; a non-finite offset; a negative or non-finite amplitude or rate; a
    /// spike range with min above max; a noisy factor below 1; any component larger than
    /// [`MAX_COMPONENT_COUNTS`] counts; spikes so frequent that a 2 ms waveform does not fit
    /// twice in a bin.
    pub fn new(config: SyntheticConfig) -> DspResult<Self> {
        let n = config.channels;
        if n == 0 {
            return Err(DspError::config(
                "a synthetic recording needs at least one channel",
            ));
        }
        for &c in config.dead.iter().chain(&config.noisy) {
            if c >= n {
                return Err(DspError::InvalidChannel { index: c, count: n });
            }
        }
        if let Some(c) = config.dead.iter().find(|c| config.noisy.contains(c)) {
            return Err(DspError::config(format!(
                "synthetic channel {c} is planted both dead and noisy"
            )));
        }
        let gain = config.gain_uv;
        if !gain.is_finite() || gain <= 0.0 {
            return Err(DspError::config(format!(
                "synthetic gain {gain} µV per count must be finite and above 0"
            )));
        }
        if !config.offset_uv.is_finite() {
            return Err(DspError::config(format!(
                "synthetic offset {} µV must be finite",
                config.offset_uv
            )));
        }
        if !config.noisy_factor.is_finite() || config.noisy_factor < 1.0 {
            return Err(DspError::config(format!(
                "synthetic noisy factor {} must be finite and at least 1",
                config.noisy_factor
            )));
        }
        if !config.spike_rate_hz.is_finite() || config.spike_rate_hz < 0.0 {
            return Err(DspError::config(format!(
                "synthetic spike rate {} Hz must be finite and not negative",
                config.spike_rate_hz
            )));
        }
        if config.spike_min_uv > config.spike_max_uv {
            return Err(DspError::config(format!(
                "synthetic spike range {}..={} µV has its minimum above its maximum",
                config.spike_min_uv, config.spike_max_uv
            )));
        }
        let counts = |what: &str, uv: f32| -> DspResult<f64> {
            let c = f64::from(uv) / f64::from(gain);
            if !uv.is_finite() || uv < 0.0 || c > MAX_COMPONENT_COUNTS {
                return Err(DspError::config(format!(
                    "synthetic {what} {uv} µV must be finite, not negative and at most \
                     {MAX_COMPONENT_COUNTS} counts of {gain} µV"
                )));
            }
            Ok(c)
        };
        let noise_counts = counts("noise rms", config.noise_rms_uv)?;
        if !config.noisy.is_empty() {
            counts(
                "noisy-channel noise rms",
                config.noise_rms_uv * config.noisy_factor,
            )?;
        }
        let sine_counts = counts("sine amplitude", config.sine_amplitude_uv)?;
        let spike_min = counts("minimum spike depth", config.spike_min_uv)?.round() as i64;
        let spike_max = counts("maximum spike depth", config.spike_max_uv)?.round() as i64;

        let rate_hz = config.sample_rate.rate_hz();
        let (spike_bin, waveform) = if config.spike_rate_hz > 0.0 {
            let waveform = spike_waveform(rate_hz);
            let bin = (rate_hz / config.spike_rate_hz).round();
            if bin < 2.0 * waveform.len() as f64 || bin > u64::MAX as f64 {
                return Err(DspError::config(format!(
                    "synthetic spike rate {} Hz is too high for {}: a 2 ms spike needs a bin of \
                     at least {} samples",
                    config.spike_rate_hz,
                    config.sample_rate,
                    2 * waveform.len()
                )));
            }
            (bin as u64, waveform)
        } else {
            (0, Vec::new())
        };

        let line_period = if LINE_HZ <= 0.45 * rate_hz {
            (rate_hz / LINE_HZ).round() as usize
        } else {
            1
        };
        let line_amp = if line_period > 1 { sine_counts } else { 0.0 };
        let mut sines = Vec::new();
        let mut sine_at = Vec::new();
        for period in SINE_PERIOD_MIN..=SINE_PERIOD_MAX {
            sine_at.push(sines.len());
            sines.extend(sine_table(period, sine_counts));
        }
        let seed_key = mix64(config.seed ^ 0x7461_626C_6573_0005);
        let tables = Tables {
            noise_a: noise_table(mix64(seed_key ^ STREAM_NOISE_A), NOISE_PERIOD_A),
            noise_b: noise_table(mix64(seed_key ^ STREAM_NOISE_B), NOISE_PERIOD_B),
            sines,
            sine_at,
            line: sine_table(line_period, line_amp).collect(),
            line_period,
        };

        // Golden-ratio steps: consecutive channels' offsets spread evenly over each period.
        let start_a = mix64(seed_key ^ STREAM_NOISE_A ^ GOLDEN) % NOISE_PERIOD_A as u64;
        let start_b = mix64(seed_key ^ STREAM_NOISE_B ^ GOLDEN) % NOISE_PERIOD_B as u64;
        let gens = (0..n)
            .map(|c| {
                let ckey = mix64(config.seed ^ mix64(c as u64 ^ 0xC4A7_0000_0000_0000));
                let sine_h = mix64(ckey ^ STREAM_SINE);
                let periods = (SINE_PERIOD_MAX - SINE_PERIOD_MIN + 1) as u64;
                let slot = (sine_h % periods) as usize;
                let sine_period = (SINE_PERIOD_MIN + slot) as u64;
                let factor = if config.noisy.contains(&c) {
                    f64::from(config.noisy_factor)
                } else {
                    1.0
                };
                let c64 = c as u64;
                ChannelGen {
                    dead: config.dead.contains(&c),
                    noise_scale: (noise_counts * factor / std::f64::consts::SQRT_2) as f32,
                    noise_a: (start_a + (c64 % NOISE_PERIOD_A as u64) * NOISE_STEP_A)
                        % NOISE_PERIOD_A as u64,
                    noise_b: (start_b + (c64 % NOISE_PERIOD_B as u64) * NOISE_STEP_B)
                        % NOISE_PERIOD_B as u64,
                    spike_key: mix64(ckey ^ STREAM_SPIKE),
                    sine_period,
                    sine_at: tables.sine_at[slot],
                    sine_phase: (sine_h >> 16) % sine_period,
                    line_phase: (sine_h >> 32) % line_period as u64,
                }
            })
            .collect();

        let mut dead = config.dead.clone();
        dead.sort_unstable();
        dead.dedup();
        let mut noisy = config.noisy.clone();
        noisy.sort_unstable();
        noisy.dedup();

        let mut info = RecordingInfo::new(
            config.name.clone(),
            n,
            config.samples,
            config.sample_rate,
            SampleFormat::I16,
            MemoryOrder::TimeMajor,
        );
        for ch in &mut info.channels {
            *ch = ChannelInfo {
                name: ch.name.clone(),
                gain,
                offset: config.offset_uv,
                unit: SignalUnit::Microvolt,
                kind: crate::ChannelKind::Signal,
            };
        }
        let list = |v: &[usize]| {
            v.iter()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(",")
        };
        info.metadata = BTreeMap::from([
            ("generator".to_string(), "dspk synthetic".to_string()),
            ("seed".to_string(), config.seed.to_string()),
            ("dead_channels".to_string(), list(&dead)),
            ("noisy_channels".to_string(), list(&noisy)),
        ]);

        Ok(Self {
            info,
            dead,
            noisy,
            gens,
            tables: Arc::new(tables),
            spike_bin,
            waveform,
            spike_min,
            spike_span: (spike_max - spike_min) as u64 + 1,
            config,
        })
    }

    /// The default probe (384 channels, 30 kHz, 60 s; see [`SyntheticRecording`]).
    pub fn default_probe() -> Self {
        Self::neuropixels(DEFAULT_SYNTHETIC_SAMPLES)
    }

    /// The default probe with `samples` samples per channel (any length: nothing is stored).
    pub fn neuropixels(samples: u64) -> Self {
        Self::new(SyntheticConfig::neuropixels().with_samples(samples))
            .expect("the default synthetic configuration is valid")
    }

    /// The configuration it was built from.
    pub fn config(&self) -> &SyntheticConfig {
        &self.config
    }

    /// The planted dead (flat) channels, ascending.
    pub fn dead_channels(&self) -> &[usize] {
        &self.dead
    }

    /// The planted noisy channels, ascending.
    pub fn noisy_channels(&self) -> &[usize] {
        &self.noisy
    }

    /// The stored value of one sample (the slow path, for tests and spot checks).
    pub fn stored_value(&self, channel: usize, sample: u64) -> DspResult<i16> {
        let range = sample..sample.saturating_add(1);
        check_read(&self.info, &[channel], &range, 1)?;
        let mut v = [0i16];
        self.generate(channel, sample, &mut v);
        Ok(v[0])
    }

    /// Computes the stored values of channel `c` at samples `start..start + out.len()` (already
    /// checked) into `out`. A pure function of `(seed, c, t)`: any split gives the same values.
    fn generate(&self, c: usize, start: u64, out: &mut [i16]) {
        let g = &self.gens[c];
        if g.dead {
            out.fill(self.config.dead_level);
            return;
        }
        let mut block = [0f32; GEN];
        let mut t = start;
        for chunk in out.chunks_mut(GEN) {
            let phase = Phase {
                t,
                a: t % NOISE_PERIOD_A as u64,
                b: t % NOISE_PERIOD_B as u64,
                line: t % self.tables.line_period as u64,
                sine: t % g.sine_period,
                bin: t.checked_div(self.spike_bin).unwrap_or(0),
            };
            self.stored(g, phase, chunk, &mut block);
            t += chunk.len() as u64;
        }
    }

    /// The stored values of channel `g` at samples `p.t..p.t + out.len()` (at most [`GEN`],
    /// already checked; `scratch` at least as long). Noise and sinusoids are one branch-free
    /// pass over contiguous table slices; where a spike overlaps the block, that pass goes to
    /// `scratch` in `f32`, each spike is added on top, and a second pass rounds. Both routes
    /// compute every sample with the same `f32` operations, so their values agree bit for bit.
    #[inline]
    fn stored(&self, g: &ChannelGen, p: Phase, out: &mut [i16], scratch: &mut [f32]) {
        let n = out.len();
        let tables = &*self.tables;
        // Each table holds GEN samples past its period, so these slices never wrap.
        let ia = wrap(p.a + g.noise_a, NOISE_PERIOD_A as u64) as usize;
        let ib = wrap(p.b + g.noise_b, NOISE_PERIOD_B as u64) as usize;
        let is = g.sine_at + wrap(p.sine + g.sine_phase, g.sine_period) as usize;
        let il = wrap(p.line + g.line_phase, tables.line_period as u64) as usize;
        let a = &tables.noise_a[ia..ia + n];
        let b = &tables.noise_b[ib..ib + n];
        let sine = &tables.sines[is..is + n];
        let line = &tables.line[il..il + n];
        let scale = g.noise_scale;
        let mut spiked = false;
        self.spikes(g, p, n, |_, _, _| spiked = true);
        if !spiked {
            for ((((o, &a), &b), &s), &l) in out.iter_mut().zip(a).zip(b).zip(sine).zip(line) {
                *o = round_to_i16((a + b) * scale + s + l);
            }
            return;
        }
        let values = &mut scratch[..n];
        for ((((o, &a), &b), &s), &l) in values.iter_mut().zip(a).zip(b).zip(sine).zip(line) {
            *o = (a + b) * scale + s + l;
        }
        self.spikes(g, p, n, |at, wave, depth| {
            for (o, &w) in values[at..].iter_mut().zip(wave) {
                *o += w * depth;
            }
        });
        for (o, &v) in out.iter_mut().zip(values.iter()) {
            *o = round_to_i16(v);
        }
    }

    /// Calls `add(at, wave, depth)` for each spike of channel `g` that overlaps samples
    /// `p.t..p.t + n`: the part `wave` of the waveform that falls in the block starts at `at`
    /// in it, scaled by `depth` counts.
    #[inline]
    fn spikes(&self, g: &ChannelGen, p: Phase, n: usize, mut add: impl FnMut(usize, &[f32], f32)) {
        let bin_len = self.spike_bin;
        if bin_len == 0 {
            return;
        }
        let wave = &self.waveform[..];
        let wlen = wave.len() as u64;
        let t = p.t;
        let end = t + n as u64;
        let mut bin = p.bin;
        // One spike per bin, wholly inside its bin: only the bins overlapping the block matter.
        while let Some(bin_start) = bin.checked_mul(bin_len).filter(|&s| s < end) {
            let h = mix64(g.spike_key.wrapping_add(bin.wrapping_mul(GOLDEN)));
            let spike = bin_start + below(h, bin_len - wlen);
            let (lo, hi) = (spike.max(t), spike.saturating_add(wlen).min(end));
            if lo < hi {
                let depth = (self.spike_min + below(h >> 32, self.spike_span) as i64) as f32;
                let part = &wave[(lo - spike) as usize..(hi - spike) as usize];
                add((lo - t) as usize, part, depth);
            }
            bin += 1;
        }
    }
}

/// The fixed spike waveform at `rate_hz`, 2 ms long (at least 1 sample), with its deepest
/// sample at exactly -1.
fn spike_waveform(rate_hz: f64) -> Vec<f32> {
    let len = ((0.002 * rate_hz).round() as usize).max(1);
    let raw: Vec<f64> = (0..len)
        .map(|k| {
            let ms = k as f64 * 1000.0 / rate_hz;
            -(-((ms - 0.6) / 0.15).powi(2)).exp() + 0.35 * (-((ms - 1.1) / 0.3).powi(2)).exp()
        })
        .collect();
    let depth = raw.iter().fold(0.0f64, |m, &v| m.min(v));
    if depth >= 0.0 {
        return vec![-1.0; len];
    }
    raw.iter().map(|&v| (v / -depth) as f32).collect()
}

impl RecordingSource for SyntheticRecording {
    fn info(&self) -> &RecordingInfo {
        &self.info
    }

    fn read(&self, channels: &[usize], samples: Range<u64>, out: &mut [f32]) -> DspResult<()> {
        let n = check_read(&self.info, channels, &samples, out.len())?;
        if n == 0 {
            return Ok(());
        }
        let mut block = [0i16; GEN_BLOCK];
        for (&c, dst) in channels.iter().zip(out.chunks_exact_mut(n)) {
            let ch = &self.info.channels[c];
            let (gain, offset) = (ch.gain, ch.offset);
            let mut t = samples.start;
            for chunk in dst.chunks_mut(GEN_BLOCK) {
                let values = &mut block[..chunk.len()];
                self.generate(c, t, values);
                for (o, &s) in chunk.iter_mut().zip(values.iter()) {
                    *o = f32::from(s) * gain + offset;
                }
                t += chunk.len() as u64;
            }
        }
        Ok(())
    }

    fn read_stored(
        &self,
        channels: &[usize],
        samples: Range<u64>,
        out: &mut [u8],
    ) -> DspResult<()> {
        let n = check_read_stored(&self.info, channels, &samples, out.len())?;
        if n == 0 {
            return Ok(());
        }
        let mut block = [0i16; GEN_BLOCK];
        for (&c, dst) in channels.iter().zip(out.chunks_exact_mut(2 * n)) {
            let mut t = samples.start;
            for chunk in dst.chunks_mut(2 * GEN_BLOCK) {
                let values = &mut block[..chunk.len() / 2];
                self.generate(c, t, values);
                for (o, &s) in chunk.chunks_exact_mut(2).zip(values.iter()) {
                    o.copy_from_slice(&s.to_le_bytes());
                }
                t += values.len() as u64;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "tests/synthetic.rs"]
mod tests;
