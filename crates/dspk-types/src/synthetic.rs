//! A deterministic, seeded, Neuropixels-like recording computed on demand: any length, no storage.

use std::collections::BTreeMap;
use std::ops::Range;

use crate::{
    ChannelInfo, DspError, DspResult, MemoryOrder, RecordingInfo, RecordingSource, SampleFormat,
    SampleRate, SignalUnit, check_read, check_read_stored, memory::check_read_native,
};

/// Samples summed by the noise's moving sum (its band limit: first zero at `rate / NOISE_TAPS`).
pub const NOISE_TAPS: usize = 4;

/// The largest amplitude, in stored counts, any component may have (keeps the fixed-point
/// arithmetic inside `i64`).
pub const MAX_COMPONENT_COUNTS: f64 = 1_048_576.0;

/// Samples of the default probe: 60 s at 30 kHz.
pub const DEFAULT_SYNTHETIC_SAMPLES: u64 = 1_800_000;

/// The default probe's dead channels.
pub const DEFAULT_DEAD_CHANNELS: [usize; 2] = [3, 190];

/// The default probe's noisy channels.
pub const DEFAULT_NOISY_CHANNELS: [usize; 2] = [77, 301];

const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;
const STREAM_NOISE: u64 = 0x6E6F_6973_6500_0001;
const STREAM_SPIKE: u64 = 0x7370_696B_6500_0002;
const STREAM_SINE: u64 = 0x7369_6E65_0000_0003;
const SINE_TABLE_BITS: u32 = 10;
const SINE_TABLE_LEN: usize = 1 << SINE_TABLE_BITS;
const Q15: f64 = 32767.0;
const LINE_HZ: f64 = 60.0;
/// Samples per time block of a time-major read (keeps one block of every channel in cache).
const NATIVE_BLOCK: usize = 256;
/// Samples computed per call of the generator in channel-major reads (a stack buffer).
const GEN_BLOCK: usize = 2048;

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
    noise_key: u64,
    /// Q32 multiplier from the moving sum to counts.
    noise_scale: i64,
    spike_key: u64,
    sine_step: u32,
    sine_phase: u32,
    line_phase: u32,
}

/// A deterministic, seeded, Neuropixels-like recording computed on demand.
///
/// # The model
///
/// Every stored value is an `int16` computed from `(seed, channel, sample)` alone, so any window
/// of any length is computed independently of every other (a read split anywhere equals one
/// read, bit for bit) and the recording holds no state proportional to its length: ten hours of
/// 384 channels are described and read at their end in the memory of the window asked for.
///
/// A normal channel's stored value at sample `t` is the sum, in stored units (counts), rounded
/// and saturated to the `int16` range, of:
/// - **band-limited noise**: a counter-based hash (SplitMix64's finaliser) of
///   `(seed, channel, t)` gives four uniform 16-bit values; their sum, summed again over the
///   [`NOISE_TAPS`] samples `t-3..=t` (a moving sum: a low-pass whose first zero is at a quarter
///   of the sample rate, 7.5 kHz at 30 kHz), is scaled in fixed point to
///   [`SyntheticConfig::noise_rms_uv`] (RMS over a long window);
/// - **two sinusoids** of amplitude [`SyntheticConfig::sine_amplitude_uv`] each: a per-channel
///   one whose frequency is hashed between 1 % and 10 % of the sample rate (300 Hz–3 kHz at
///   30 kHz), and a 60 Hz "line" component shared by every channel (with a per-channel phase;
///   left out when 60 Hz is above 45 % of the rate). Both use an exact 32-bit phase accumulator
///   and a 1024-entry sine table: integer arithmetic only, no trigonometry per sample;
/// - **spikes**: time is cut into bins of `round(rate / spike_rate_hz)` samples; each bin of
///   each channel holds one spike at a hashed position, with a fixed 2 ms waveform (a negative
///   trough 0.6 ms in, then a smaller positive repolarisation) whose trough depth is hashed
///   between [`SyntheticConfig::spike_min_uv`] and [`SyntheticConfig::spike_max_uv`].
///
/// A **dead** channel holds [`SyntheticConfig::dead_level`] at every sample (zero variance). A
/// **noisy** channel is a normal channel whose noise is [`SyntheticConfig::noisy_factor`] times
/// larger (8× by default, so its RMS is about 7× the median's).
///
/// Scaled values are `stored * gain + offset` in µV, computed exactly like
/// [`SampleFormat::decode`] (`f32::from(stored) * gain + offset`), so `read` and a decoded
/// `read_stored` agree bit for bit. The native order is time-major, like SpikeGLX's `.bin`.
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
    sine_table: Box<[i32; SINE_TABLE_LEN]>,
    sine_amp: i64,
    line_step: u32,
    line_amp: i64,
    /// Spike bin length in samples; 0 when there are no spikes.
    spike_bin: u64,
    /// The waveform in Q15, trough at -32767.
    waveform: Vec<i32>,
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

        // Standard deviation of the moving sum: NOISE_TAPS × 4 uniform 16-bit values.
        let uniform_var = (65536.0f64 * 65536.0 - 1.0) / 12.0;
        let sum_std = ((NOISE_TAPS * 4) as f64 * uniform_var).sqrt();
        let q32 = 4_294_967_296.0f64;
        let step_for = |hz: f64| -> u32 { (hz / rate_hz * q32).round() as u32 };
        let line_step = if LINE_HZ <= 0.45 * rate_hz {
            step_for(LINE_HZ)
        } else {
            0
        };
        let line_amp = if line_step == 0 {
            0
        } else {
            sine_counts.round() as i64
        };

        let gens = (0..n)
            .map(|c| {
                let ckey = mix64(config.seed ^ mix64(c as u64 ^ 0xC4A7_0000_0000_0000));
                let sine_h = mix64(ckey ^ STREAM_SINE);
                let frac = 0.01 + 0.09 * ((sine_h >> 11) as f64 / (1u64 << 53) as f64);
                let factor = if config.noisy.contains(&c) {
                    f64::from(config.noisy_factor)
                } else {
                    1.0
                };
                ChannelGen {
                    dead: config.dead.contains(&c),
                    noise_key: mix64(ckey ^ STREAM_NOISE),
                    noise_scale: (noise_counts * factor / sum_std * q32).round() as i64,
                    spike_key: mix64(ckey ^ STREAM_SPIKE),
                    sine_step: step_for(frac * rate_hz),
                    sine_phase: sine_h as u32,
                    line_phase: (sine_h >> 32) as u32,
                }
            })
            .collect();

        let mut sine_table = Box::new([0i32; SINE_TABLE_LEN]);
        for (i, v) in sine_table.iter_mut().enumerate() {
            *v = ((i as f64 / SINE_TABLE_LEN as f64 * std::f64::consts::TAU).sin() * Q15).round()
                as i32;
        }

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
            sine_table,
            sine_amp: sine_counts.round() as i64,
            line_step,
            line_amp,
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
        let key = g.noise_key;
        // The moving sum's history: u(t-1), u(t-2), u(t-3).
        let mut u1 = noise_u(key, start.wrapping_sub(1));
        let mut u2 = noise_u(key, start.wrapping_sub(2));
        let mut u3 = noise_u(key, start.wrapping_sub(3));
        let table = &*self.sine_table;
        let shift = 32 - SINE_TABLE_BITS;
        let wave = &self.waveform[..];
        let (sine_amp, line_amp, line_step) = (self.sine_amp, self.line_amp, self.line_step);
        let mut t = start;
        let mut rest = out;
        while !rest.is_empty() {
            // One spike bin (or everything, without spikes) at a time.
            let (seg_len, spike_start, spike_amp, wlen) = match t.checked_div(self.spike_bin) {
                Some(bin) => {
                    let bin_start = bin * self.spike_bin;
                    let h = mix64(g.spike_key.wrapping_add(bin.wrapping_mul(GOLDEN)));
                    let off = (h & 0xFFFF_FFFF) % (self.spike_bin - wave.len() as u64);
                    let amp = self.spike_min + ((h >> 32) % self.spike_span) as i64;
                    let left = bin_start.saturating_add(self.spike_bin) - t;
                    let len = usize::try_from(left).unwrap_or(usize::MAX).min(rest.len());
                    (len, bin_start + off, amp, wave.len() as u64)
                }
                None => (rest.len(), 0, 0, 0),
            };
            let (seg, tail) = rest.split_at_mut(seg_len);
            for o in seg {
                let u0 = noise_u(key, t);
                let sum = u0 + u1 + u2 + u3;
                (u3, u2, u1) = (u2, u1, u0);
                let mut v = (sum * g.noise_scale + (1 << 31)) >> 32;
                let tl = t as u32;
                let ps = tl.wrapping_mul(g.sine_step).wrapping_add(g.sine_phase) >> shift;
                let pl = tl.wrapping_mul(line_step).wrapping_add(g.line_phase) >> shift;
                v += (i64::from(table[ps as usize]) * sine_amp
                    + i64::from(table[pl as usize]) * line_amp)
                    >> 15;
                let w = t.wrapping_sub(spike_start);
                if w < wlen {
                    v += (i64::from(wave[w as usize]) * spike_amp) >> 15;
                }
                *o = v.clamp(i64::from(i16::MIN), i64::from(i16::MAX)) as i16;
                t += 1;
            }
            rest = tail;
        }
    }
}

/// The fixed spike waveform at `rate_hz`, 2 ms long (at least 1 sample), in Q15 with its
/// deepest sample at -32767.
fn spike_waveform(rate_hz: f64) -> Vec<i32> {
    let len = ((0.002 * rate_hz).round() as usize).max(1);
    let raw: Vec<f64> = (0..len)
        .map(|k| {
            let ms = k as f64 * 1000.0 / rate_hz;
            -(-((ms - 0.6) / 0.15).powi(2)).exp() + 0.35 * (-((ms - 1.1) / 0.3).powi(2)).exp()
        })
        .collect();
    let depth = raw.iter().fold(0.0f64, |m, &v| m.min(v));
    if depth >= 0.0 {
        return vec![-32767; len];
    }
    raw.iter()
        .map(|&v| (v / -depth * Q15).round() as i32)
        .collect()
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

    fn read_stored_native(&self, samples: Range<u64>, out: &mut [u8]) -> DspResult<MemoryOrder> {
        let count = self.info.channel_count();
        let all: Vec<usize> = (0..count).collect();
        let n = check_read_stored(&self.info, &all, &samples, out.len())?;
        if n == 0 {
            return Ok(MemoryOrder::TimeMajor);
        }
        // Time blocks, as in `read_native`: one block of every channel stays in cache.
        let mut block = [0i16; NATIVE_BLOCK];
        let mut t = samples.start;
        for frames in out.chunks_mut(NATIVE_BLOCK * count * 2) {
            let len = frames.len() / (2 * count);
            let values = &mut block[..len];
            for c in 0..count {
                self.generate(c, t, values);
                for (i, v) in values.iter().enumerate() {
                    let at = 2 * (i * count + c);
                    frames[at..at + 2].copy_from_slice(&v.to_le_bytes());
                }
            }
            t += len as u64;
        }
        Ok(MemoryOrder::TimeMajor)
    }

    fn native_stored_order(&self) -> MemoryOrder {
        MemoryOrder::TimeMajor
    }

    fn read_native(&self, samples: Range<u64>, out: &mut [f32]) -> DspResult<MemoryOrder> {
        let n = check_read_native(&self.info, &samples, out.len())?;
        let count = self.info.channel_count();
        if n == 0 {
            return Ok(MemoryOrder::TimeMajor);
        }
        // Time blocks keep one block of every channel in cache while channels are filled in.
        let mut block = [0i16; NATIVE_BLOCK];
        let mut t = samples.start;
        for frames in out.chunks_mut(NATIVE_BLOCK * count) {
            let values = &mut block[..frames.len() / count];
            for (c, ch) in self.info.channels.iter().enumerate() {
                let (gain, offset) = (ch.gain, ch.offset);
                self.generate(c, t, values);
                for (frame, &s) in frames.chunks_exact_mut(count).zip(values.iter()) {
                    frame[c] = f32::from(s) * gain + offset;
                }
            }
            t += values.len() as u64;
        }
        Ok(MemoryOrder::TimeMajor)
    }
}

#[cfg(test)]
#[path = "tests/synthetic.rs"]
mod tests;
