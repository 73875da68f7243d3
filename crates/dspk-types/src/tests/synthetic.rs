//! Tests of the synthetic recording: size without storage, determinism, planted channels,
//! noise statistics, saturation, validation.

use crate::conformance::SplitMix64;
use crate::test_support::fresh_seed;
use crate::{DspError, MemoryOrder, RecordingSource, SampleFormat, SampleRate, SignalUnit};

use super::*;

const TEN_HOURS: u64 = 10 * 3600 * 30_000;

fn read_all(rec: &SyntheticRecording, samples: std::ops::Range<u64>) -> Vec<f32> {
    let channels: Vec<usize> = (0..rec.info().channel_count()).collect();
    let mut out = vec![0f32; channels.len() * (samples.end - samples.start) as usize];
    rec.read(&channels, samples, &mut out)
        .expect("in-range read");
    out
}

/// Population RMS about the mean.
fn rms_about_mean(x: &[f32]) -> f64 {
    let n = x.len() as f64;
    let mean = x.iter().map(|&v| f64::from(v)).sum::<f64>() / n;
    (x.iter()
        .map(|&v| (f64::from(v) - mean).powi(2))
        .sum::<f64>()
        / n)
        .sqrt()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len().is_multiple_of(2) {
        (v[m - 1] + v[m]) / 2.0
    } else {
        v[m]
    }
}

#[test]
fn default_probe_is_neuropixels_like() {
    let rec = SyntheticRecording::default_probe();
    let info = rec.info();
    assert_eq!(info.channel_count(), 384);
    assert_eq!(info.sample_rate, SampleRate::from_ratio(30_000, 1).unwrap());
    assert_eq!(info.samples, 1_800_000);
    assert_eq!(info.format, SampleFormat::I16);
    assert_eq!(info.order, MemoryOrder::TimeMajor);
    assert_eq!(info.duration().unwrap().as_seconds_f64(), 60.0);
    for ch in &info.channels {
        assert_eq!(ch.gain, 0.195f32);
        assert_eq!(ch.offset, 0.0);
        assert_eq!(ch.unit, SignalUnit::Microvolt);
    }
    assert_eq!(rec.dead_channels(), &[3, 190]);
    assert_eq!(rec.noisy_channels(), &[77, 301]);
    assert_eq!(info.metadata["dead_channels"], "3,190");
    assert_eq!(info.metadata["noisy_channels"], "77,301");
}

#[test]
fn ten_hours_are_described_and_read_at_their_end() {
    let rec = SyntheticRecording::neuropixels(TEN_HOURS);
    assert_eq!(rec.info().samples, 1_080_000_000);
    assert_eq!(rec.info().duration().unwrap().as_seconds_f64(), 36_000.0);
    // The generator's state does not grow with the length (no per-sample storage).
    let short = SyntheticRecording::neuropixels(1000);
    assert_eq!(rec.gens.len(), short.gens.len());
    assert_eq!(rec.waveform.len(), short.waveform.len());
    let sizes = |r: &SyntheticRecording| {
        let t = &r.tables;
        [
            t.noise_a.len(),
            t.noise_b.len(),
            t.sines.len(),
            t.line.len(),
        ]
    };
    assert_eq!(sizes(&rec), sizes(&short));
    assert_eq!(
        sizes(&rec),
        [
            NOISE_PERIOD_A + GEN,
            NOISE_PERIOD_B + GEN,
            28_301,
            500 + GEN
        ]
    );
    // Debug names the tables' sizes, not their 130 000 values.
    assert!(format!("{rec:?}").len() < 150_000);

    let end = rec.info().samples;
    let w = end - 3000..end;
    let a = read_all(&rec, w.clone());
    let b = read_all(&SyntheticRecording::neuropixels(TEN_HOURS), w.clone());
    assert_eq!(a, b, "two instances with the same seed differ");
    // The same samples in a recording that only just reaches them: values depend on the
    // sample index, not on the recording's length.
    let c = read_all(&SyntheticRecording::neuropixels(end), w.clone());
    assert_eq!(a, c);
    // Real signal, not zeros, at the end.
    let normal = &a[0..3000];
    assert!(
        rms_about_mean(normal) > 5.0,
        "rms {}",
        rms_about_mean(normal)
    );
    // Past the end is refused.
    let mut out = vec![0f32; 1];
    assert_eq!(
        rec.read(&[0], end..end + 1, &mut out),
        Err(DspError::SampleRange {
            start: end,
            end: end + 1,
            total: end
        })
    );
}

#[test]
fn different_seeds_differ() {
    let a = SyntheticRecording::new(SyntheticConfig::default().with_samples(10_000).with_seed(1))
        .unwrap();
    let b = SyntheticRecording::new(SyntheticConfig::default().with_samples(10_000).with_seed(2))
        .unwrap();
    let (x, y) = (read_all(&a, 5000..5500), read_all(&b, 5000..5500));
    let n = x.len() / 384;
    for c in (0..384).filter(|c| !a.dead_channels().contains(c)) {
        let same = (0..n).filter(|&i| x[c * n + i] == y[c * n + i]).count();
        assert!(
            same < n / 4,
            "channel {c}: {same} of {n} samples equal across seeds"
        );
    }
}

#[test]
fn channels_differ_from_each_other() {
    let rec = SyntheticRecording::neuropixels(10_000);
    let x = read_all(&rec, 0..1000);
    for c in [0usize, 1, 100, 383] {
        let d = c + 1;
        if d >= 384 || rec.dead_channels().contains(&d) {
            continue;
        }
        let same = (0..1000)
            .filter(|&i| x[c * 1000 + i] == x[d * 1000 + i])
            .count();
        assert!(
            same < 250,
            "channels {c} and {d} share {same} of 1000 samples"
        );
    }
}

#[test]
fn planted_channels_have_the_planted_statistics() {
    let rec = SyntheticRecording::neuropixels(60_000);
    let n = 30_000usize; // one second
    let x = read_all(&rec, 10_000..10_000 + n as u64);
    let rms: Vec<f64> = (0..384)
        .map(|c| rms_about_mean(&x[c * n..(c + 1) * n]))
        .collect();
    for &c in rec.dead_channels() {
        assert_eq!(rms[c], 0.0, "dead channel {c}");
        assert!(x[c * n..(c + 1) * n].iter().all(|&v| v == 0.0));
    }
    let normal: Vec<f64> = (0..384)
        .filter(|c| !rec.dead_channels().contains(c) && !rec.noisy_channels().contains(c))
        .map(|c| rms[c])
        .collect();
    let med = median(normal.clone());
    // Noise 10 µV, two 3 µV sinusoids (2.1 µV RMS each), 5 spikes/s of 50–150 µV: about 11 µV.
    assert!((9.5..13.0).contains(&med), "median normal rms {med} µV");
    for &c in rec.noisy_channels() {
        assert!(
            rms[c] > 5.0 * med,
            "noisy channel {c}: rms {} vs median {med}",
            rms[c]
        );
    }
    // No normal channel looks noisy or dead.
    for &r in &normal {
        assert!(
            r > 0.7 * med && r < 1.5 * med,
            "normal rms {r} vs median {med}"
        );
    }
}

#[test]
fn dead_level_and_offset_are_applied() {
    let mut cfg = SyntheticConfig::default().with_samples(1000);
    cfg.dead_level = -123;
    cfg.offset_uv = 7.5;
    let rec = SyntheticRecording::new(cfg).unwrap();
    assert_eq!(rec.stored_value(3, 17).unwrap(), -123);
    let mut out = vec![0f32; 10];
    rec.read(&[190], 990..1000, &mut out).unwrap();
    let want = -123f32 * 0.195 + 7.5;
    assert!(out.iter().all(|&v| v == want), "{out:?} vs {want}");
}

#[test]
fn spikes_appear_at_their_rate_and_depth() {
    let mut cfg = SyntheticConfig::default()
        .with_channels(4, vec![], vec![])
        .with_samples(300_000);
    cfg.noise_rms_uv = 0.0;
    cfg.sine_amplitude_uv = 0.0;
    let rec = SyntheticRecording::new(cfg).unwrap();
    let x = read_all(&rec, 0..300_000);
    // Noise and sinusoids off: the signal is spikes alone. Count troughs below -25 µV that are
    // local minima: 5 spikes/s × 10 s per channel, each 50–150 µV deep.
    for c in 0..4 {
        let ch = &x[c * 300_000..(c + 1) * 300_000];
        let mut troughs = Vec::new();
        for i in 1..ch.len() - 1 {
            if ch[i] < -25.0 && ch[i] <= ch[i - 1] && ch[i] < ch[i + 1] {
                troughs.push(ch[i]);
            }
        }
        assert_eq!(troughs.len(), 50, "channel {c}: {} spikes", troughs.len());
        for t in troughs {
            // Depth within the configured range, up to one count of rounding.
            assert!((-150.2..=-49.8).contains(&t), "channel {c}: trough {t} µV");
        }
    }
}

#[test]
fn noise_is_band_limited_with_the_moving_sum_autocorrelation() {
    let mut cfg = SyntheticConfig::default()
        .with_channels(3, vec![], vec![])
        .with_samples(400_000);
    cfg.sine_amplitude_uv = 0.0;
    cfg.spike_rate_hz = 0.0;
    cfg.noise_rms_uv = 50.0; // large against the 0.195 µV step, so rounding barely matters
    let rec = SyntheticRecording::new(cfg).unwrap();
    let x = read_all(&rec, 0..400_000);
    for c in 0..3 {
        let ch: Vec<f64> = x[c * 400_000..(c + 1) * 400_000]
            .iter()
            .map(|&v| f64::from(v))
            .collect();
        let mean = ch.iter().sum::<f64>() / ch.len() as f64;
        let var = ch.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / ch.len() as f64;
        let r = |lag: usize| {
            (0..ch.len() - lag)
                .map(|i| (ch[i] - mean) * (ch[i + lag] - mean))
                .sum::<f64>()
                / (ch.len() - lag) as f64
                / var
        };
        // A moving sum of 4 white values: autocorrelation (4 - lag) / 4, zero from lag 4.
        assert!(
            (var.sqrt() - 50.0).abs() < 1.0,
            "channel {c}: rms {}",
            var.sqrt()
        );
        assert!(mean.abs() < 1.0, "channel {c}: mean {mean}");
        for (lag, want) in [(1, 0.75), (2, 0.5), (3, 0.25), (4, 0.0), (7, 0.0)] {
            assert!(
                (r(lag) - want).abs() < 0.02,
                "channel {c} lag {lag}: {} vs {want}",
                r(lag)
            );
        }
    }
}

#[test]
fn stored_values_saturate_at_the_int16_range() {
    let stored = |noise_rms_uv: f32| -> Vec<i16> {
        let mut cfg = SyntheticConfig::default()
            .with_channels(2, vec![], vec![])
            .with_samples(20_000);
        cfg.noise_rms_uv = noise_rms_uv;
        cfg.sine_amplitude_uv = 0.0;
        cfg.spike_rate_hz = 0.0;
        let rec = SyntheticRecording::new(cfg).unwrap();
        let mut bytes = vec![0u8; 2 * 2 * 20_000];
        rec.read_stored(&[0, 1], 0..20_000, &mut bytes).unwrap();
        bytes
            .chunks_exact(2)
            .map(|b| i16::from_le_bytes([b[0], b[1]]))
            .collect()
    };
    // The same noise 1000 times smaller (about 770 counts RMS) fits the range: it gives the
    // sign and size of the large noise (about 770 000 counts RMS), which must sit on the rail
    // of its sign, never wrap.
    let big = stored(150_000.0);
    let small = stored(150.0);
    let mut on_rails = 0;
    for (i, (&b, &s)) in big.iter().zip(&small).enumerate() {
        if s >= 50 {
            assert_eq!(b, i16::MAX, "value {i}: small noise {s}");
            on_rails += 1;
        } else if s <= -50 {
            assert_eq!(b, i16::MIN, "value {i}: small noise {s}");
            on_rails += 1;
        }
    }
    // |z| > 50 / 770 = 0.065 σ: about 95 % of the samples.
    assert!(
        on_rails > big.len() * 9 / 10,
        "{on_rails} of {} on the rails",
        big.len()
    );
    assert!(small.iter().any(|&v| v > 1500) && small.iter().any(|&v| v < -1500));
}

#[test]
fn stored_value_matches_reads() {
    let rec = SyntheticRecording::new(
        SyntheticConfig::default()
            .with_samples(50_000)
            .with_seed(99),
    )
    .unwrap();
    let mut rng = SplitMix64::new(0x5eed);
    for _ in 0..200 {
        let c = rng.below(384) as usize;
        let t = rng.below(50_000);
        let s = rec.stored_value(c, t).unwrap();
        let mut out = [0f32];
        rec.read(&[c], t..t + 1, &mut out).unwrap();
        assert_eq!(out[0], f32::from(s) * 0.195, "channel {c} sample {t}");
    }
    assert_eq!(
        rec.stored_value(384, 0),
        Err(DspError::InvalidChannel {
            index: 384,
            count: 384
        })
    );
    assert_eq!(
        rec.stored_value(0, 50_000),
        Err(DspError::SampleRange {
            start: 50_000,
            end: 50_001,
            total: 50_000
        })
    );
}

#[test]
fn bad_configurations_are_refused() {
    let base = || SyntheticConfig::default().with_samples(100);
    let cases: Vec<(SyntheticConfig, &str)> = vec![
        (
            base().with_channels(0, vec![], vec![]),
            "at least one channel",
        ),
        (
            SyntheticConfig {
                gain_uv: 0.0,
                ..base()
            },
            "gain 0",
        ),
        (
            SyntheticConfig {
                gain_uv: f32::NAN,
                ..base()
            },
            "gain NaN",
        ),
        (
            SyntheticConfig {
                offset_uv: f32::INFINITY,
                ..base()
            },
            "offset inf",
        ),
        (
            SyntheticConfig {
                noise_rms_uv: -1.0,
                ..base()
            },
            "noise rms -1",
        ),
        (
            SyntheticConfig {
                noise_rms_uv: 1e9,
                ..base()
            },
            "noise rms 1000000000",
        ),
        (
            SyntheticConfig {
                noisy_factor: 0.5,
                ..base()
            },
            "noisy factor 0.5",
        ),
        (
            SyntheticConfig {
                spike_min_uv: 200.0,
                ..base()
            },
            "spike range 200..=150",
        ),
        (
            SyntheticConfig {
                spike_rate_hz: 1000.0,
                ..base()
            },
            "spike rate 1000 Hz is too high",
        ),
        (
            SyntheticConfig {
                spike_rate_hz: f64::NAN,
                ..base()
            },
            "spike rate NaN",
        ),
        (
            base().with_channels(8, vec![2], vec![2]),
            "channel 2 is planted both dead and noisy",
        ),
    ];
    for (cfg, needle) in cases {
        match SyntheticRecording::new(cfg) {
            Err(DspError::InvalidConfig(msg)) => {
                assert!(msg.contains(needle), "`{msg}` lacks `{needle}`")
            }
            other => panic!("expected an invalid configuration naming `{needle}`, got {other:?}"),
        }
    }
    assert_eq!(
        SyntheticRecording::new(base().with_channels(8, vec![8], vec![])).unwrap_err(),
        DspError::InvalidChannel { index: 8, count: 8 }
    );
    assert_eq!(
        SyntheticRecording::new(base().with_channels(8, vec![], vec![1, 20])).unwrap_err(),
        DspError::InvalidChannel {
            index: 20,
            count: 8
        }
    );
}

#[test]
fn other_rates_and_odd_shapes_work() {
    for (rate, channels) in [(24_414.062_5, 7usize), (2_500.0, 1), (1_000.0, 3)] {
        let cfg = SyntheticConfig {
            sample_rate: SampleRate::new(rate).unwrap(),
            spike_rate_hz: 2.0,
            ..SyntheticConfig::default().with_channels(channels, vec![0], vec![])
        };
        let rec = SyntheticRecording::new(cfg).unwrap();
        assert_eq!(rec.info().channel_count(), channels);
        let x = read_all(&rec, 1000..3000);
        assert!(
            x[..2000].iter().all(|&v| v == 0.0),
            "dead channel 0 at {rate} Hz"
        );
        if channels > 1 {
            assert!(
                rms_about_mean(&x[2000..4000]) > 5.0,
                "channel 1 at {rate} Hz"
            );
        }
    }
}

/// The documented model, one sample at a time, written independently of the generator's fast
/// path: modular indexing into each table's first period (never the extension), no shared
/// block phases, no fused pass, a per-sample spike test, `round_ties_even` for the rounding.
/// It reads the recording's per-channel constants and the tables' first periods (checked
/// against their own definition in `noise_tables_follow_their_definition`).
fn oracle(rec: &SyntheticRecording, c: usize, t: u64) -> i16 {
    let g = &rec.gens[c];
    if g.dead {
        return rec.config.dead_level;
    }
    let tb = &rec.tables;
    let pa = NOISE_PERIOD_A as u64;
    let pb = NOISE_PERIOD_B as u64;
    let a = tb.noise_a[((t + g.noise_a) % pa) as usize];
    let b = tb.noise_b[((t + g.noise_b) % pb) as usize];
    let n = g.sine_period;
    let k = (t + g.sine_phase) % n;
    let amp = f64::from(rec.config.sine_amplitude_uv) / f64::from(rec.config.gain_uv);
    let sine = ((k as f64 / n as f64 * std::f64::consts::TAU).sin() * amp) as f32;
    let lp = tb.line_period as u64;
    let line = if lp > 1 {
        let k = (t + g.line_phase) % lp;
        ((k as f64 / lp as f64 * std::f64::consts::TAU).sin() * amp) as f32
    } else {
        0.0
    };
    let mut v = (a + b) * g.noise_scale + sine + line;
    if let Some(bin) = t.checked_div(rec.spike_bin) {
        let h = mix64(g.spike_key.wrapping_add(bin.wrapping_mul(GOLDEN)));
        let wlen = rec.waveform.len() as u64;
        let room = rec.spike_bin - wlen;
        let start = bin * rec.spike_bin + (((h & 0xFFFF_FFFF) as u128 * room as u128) >> 32) as u64;
        let depth = rec.spike_min as f64
            + ((((h >> 32) & 0xFFFF_FFFF) as u128 * rec.spike_span as u128) >> 32) as f64;
        if (start..start + wlen).contains(&t) {
            v += rec.waveform[(t - start) as usize] * depth as f32;
        }
    }
    v.clamp(-32768.0, 32767.0).round_ties_even() as i16
}

/// Windows that cross the places where the fast path changes how it reads: each table's
/// wrap-around (for some channel), block edges, the recording's end.
fn tricky_starts(rec: &SyntheticRecording, c: usize, rng: &mut SplitMix64) -> Vec<u64> {
    let g = &rec.gens[c];
    let total = rec.info().samples;
    let pa = NOISE_PERIOD_A as u64;
    let pb = NOISE_PERIOD_B as u64;
    let mut starts = vec![
        0,
        total.saturating_sub(700),
        // Sample t reads index 0 of a table when t + offset is a multiple of its period.
        (pa - g.noise_a) % pa + 3 * pa,
        (pb - g.noise_b) % pb + 5 * pb,
        pa * pb - 1,
    ];
    for _ in 0..4 {
        starts.push(rng.below(total));
    }
    starts
        .into_iter()
        .map(|s| {
            s.saturating_sub(rng.below(300))
                .min(total.saturating_sub(600))
        })
        .collect()
}

#[test]
fn every_read_path_matches_the_independent_oracle() {
    let seed = fresh_seed("every_read_path_matches_the_independent_oracle");
    let mut rng = SplitMix64::new(seed);
    let recs = [
        SyntheticRecording::new(
            SyntheticConfig::default()
                .with_samples(10 * 3600 * 30_000)
                .with_seed(seed),
        )
        .unwrap(),
        // Samples past the joint noise period, another rate, a dead level and an offset.
        SyntheticRecording::new(SyntheticConfig {
            sample_rate: SampleRate::new(24_414.062_5).unwrap(),
            spike_rate_hz: 40.0,
            dead_level: -7,
            offset_uv: -3.25,
            ..SyntheticConfig::default()
                .with_channels(5, vec![1], vec![3])
                .with_samples(u64::MAX / 2)
                .with_seed(seed ^ 1)
        })
        .unwrap(),
    ];
    for rec in &recs {
        let count = rec.info().channel_count();
        let all: Vec<usize> = (0..count).collect();
        for _ in 0..3 {
            let c = rng.below(count as u64) as usize;
            for s in tricky_starts(rec, c, &mut rng) {
                let len = 1 + rng.below(600) as usize;
                let want: Vec<i16> = (0..len as u64).map(|i| oracle(rec, c, s + i)).collect();
                // stored_value, read_stored, read.
                for i in [0, len / 2, len - 1] {
                    assert_eq!(
                        rec.stored_value(c, s + i as u64).unwrap(),
                        want[i],
                        "seed {seed}: stored_value of channel {c} at {}",
                        s + i as u64
                    );
                }
                let mut bytes = vec![0u8; 2 * len];
                rec.read_stored(&[c], s..s + len as u64, &mut bytes)
                    .unwrap();
                let got: Vec<i16> = bytes
                    .chunks_exact(2)
                    .map(|b| i16::from_le_bytes([b[0], b[1]]))
                    .collect();
                assert_eq!(got, want, "seed {seed}: read_stored of channel {c} at {s}");
                let mut f = vec![0f32; len];
                rec.read(&[c], s..s + len as u64, &mut f).unwrap();
                let ch = &rec.info().channels[c];
                for (i, (&x, &w)) in f.iter().zip(&want).enumerate() {
                    assert_eq!(x, f32::from(w) * ch.gain + ch.offset, "seed {seed}: {i}");
                }
                // The native paths, all channels: channel-major, as they say.
                let frames = len.min(300);
                let w = s..s + frames as u64;
                let mut native = vec![0u8; 2 * count * frames];
                let order = rec.read_stored_native(w.clone(), &mut native).unwrap();
                assert_eq!(order, MemoryOrder::ChannelMajor);
                assert_eq!(rec.native_stored_order(), MemoryOrder::ChannelMajor);
                let mut native_f = vec![0f32; count * frames];
                let order = rec.read_native(w.clone(), &mut native_f).unwrap();
                assert_eq!(order, MemoryOrder::ChannelMajor);
                for (i, &wi) in want.iter().enumerate().take(frames) {
                    let at = c * frames + i;
                    let v = i16::from_le_bytes([native[2 * at], native[2 * at + 1]]);
                    assert_eq!(v, wi, "seed {seed}: native channel {c} sample {i}");
                    assert_eq!(native_f[at], f32::from(v) * ch.gain + ch.offset);
                }
                // Every channel at once equals the channels read one by one (above).
                let mut cm = vec![0u8; 2 * count * frames];
                rec.read_stored(&all, w, &mut cm).unwrap();
                assert!(native == cm, "seed {seed}: native vs read_stored");
            }
        }
    }
}

#[test]
fn random_splits_equal_one_read_bit_for_bit() {
    let seed = fresh_seed("random_splits_equal_one_read_bit_for_bit");
    let mut rng = SplitMix64::new(seed);
    let rec = SyntheticRecording::new(
        SyntheticConfig::default()
            .with_samples(10 * 3600 * 30_000)
            .with_seed(seed),
    )
    .unwrap();
    let count = 384;
    for _ in 0..4 {
        let len = 1 + rng.below(1500) as usize;
        let s = rng.below(rec.info().samples - len as u64);
        let mut whole = vec![0u8; 2 * count * len];
        rec.read_stored_native(s..s + len as u64, &mut whole)
            .unwrap();
        // The same window in random pieces of time, every channel (channel-major pieces).
        let mut at = 0usize;
        while at < len {
            let step = (1 + rng.below(400) as usize).min(len - at);
            let w = s + at as u64..s + (at + step) as u64;
            let mut piece = vec![0u8; 2 * count * step];
            rec.read_stored_native(w, &mut piece).unwrap();
            for (c, row) in piece.chunks_exact(2 * step).enumerate() {
                let o = 2 * (c * len + at);
                assert!(
                    row == &whole[o..o + 2 * step],
                    "seed {seed}: channel {c}, piece at {s}+{at} of {step}"
                );
            }
            at += step;
        }
        // And channel by channel, each in its own random pieces.
        for c in (0..count).step_by(1 + rng.below(40) as usize) {
            let mut at = 0usize;
            while at < len {
                let step = (1 + rng.below(700) as usize).min(len - at);
                let mut part = vec![0u8; 2 * step];
                rec.read_stored(&[c], s + at as u64..s + (at + step) as u64, &mut part)
                    .unwrap();
                let o = 2 * (c * len + at);
                assert!(part == whole[o..o + 2 * step], "seed {seed}: channel {c}");
                at += step;
            }
        }
    }
}

#[test]
fn noise_tables_follow_their_definition() {
    let rec = SyntheticRecording::neuropixels(1000);
    let seed_key = mix64(0x7461_626C_6573_0005); // seed 0
    for (table, period, stream) in [
        (&rec.tables.noise_a, NOISE_PERIOD_A, STREAM_NOISE_A),
        (&rec.tables.noise_b, NOISE_PERIOD_B, STREAM_NOISE_B),
    ] {
        // Mean 0, RMS 1 over the period; the extension repeats the start.
        let (sum, sq) = table[..period].iter().fold((0f64, 0f64), |(s, q), &v| {
            (s + f64::from(v), q + f64::from(v).powi(2))
        });
        assert!(
            (sum / period as f64).abs() < 1e-6,
            "mean {}",
            sum / period as f64
        );
        assert!(
            (sq / period as f64 - 1.0).abs() < 1e-5,
            "ms {}",
            sq / period as f64
        );
        assert_eq!(table[..GEN], table[period..period + GEN]);
        // Each value is the standardised circular moving sum of the hashed sums, recomputed
        // here from the hash's definition.
        let key = mix64(seed_key ^ stream);
        let u = |i: u64| -> f64 {
            let h = mix64(key.wrapping_add(i.wrapping_mul(GOLDEN)));
            (0..4).map(|k| f64::from((h >> (16 * k)) as i16)).sum()
        };
        let w: Vec<f64> = (0..period)
            .map(|i| {
                (0..NOISE_TAPS)
                    .map(|k| u(((i + period - k) % period) as u64))
                    .sum()
            })
            .collect();
        let mean = w.iter().sum::<f64>() / period as f64;
        let std = (w.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / period as f64).sqrt();
        for i in (0..period).step_by(97) {
            let want = (w[i] - mean) / std;
            assert!(
                (f64::from(table[i]) - want).abs() < 1e-5,
                "index {i}: {} vs {want}",
                table[i]
            );
        }
    }
}

/// Noise only (no sinusoids, no spikes), so its RMS and correlations can be checked.
fn noise_only(channels: usize, samples: u64, seed: u64) -> SyntheticRecording {
    let mut cfg = SyntheticConfig::default()
        .with_channels(channels, vec![], vec![])
        .with_samples(samples)
        .with_seed(seed);
    cfg.sine_amplitude_uv = 0.0;
    cfg.spike_rate_hz = 0.0;
    SyntheticRecording::new(cfg).unwrap()
}

fn channel(rec: &SyntheticRecording, c: usize, w: std::ops::Range<u64>) -> Vec<f64> {
    let mut out = vec![0f32; (w.end - w.start) as usize];
    rec.read(&[c], w, &mut out).unwrap();
    out.into_iter().map(f64::from).collect()
}

fn correlation(x: &[f64], y: &[f64]) -> f64 {
    let n = x.len() as f64;
    let (mx, my) = (x.iter().sum::<f64>() / n, y.iter().sum::<f64>() / n);
    let sxy: f64 = x.iter().zip(y).map(|(a, b)| (a - mx) * (b - my)).sum();
    let sxx: f64 = x.iter().map(|a| (a - mx).powi(2)).sum();
    let syy: f64 = y.iter().map(|b| (b - my).powi(2)).sum();
    sxy / (sxx * syy).sqrt()
}

#[test]
fn noise_rms_is_the_configured_rms_and_channels_are_uncorrelated() {
    let seed = fresh_seed("noise_rms_is_the_configured_rms_and_channels_are_uncorrelated");
    let mut rng = SplitMix64::new(seed);
    let rec = noise_only(384, 10 * 3600 * 30_000, seed);
    let start = rng.below(rec.info().samples - 30_000);
    let w = start..start + 30_000;
    let chans: Vec<usize> = (0..12).map(|_| rng.below(384) as usize).collect();
    let data: Vec<Vec<f64>> = chans.iter().map(|&c| channel(&rec, c, w.clone())).collect();
    for (c, x) in chans.iter().zip(&data) {
        let r = rms_about_mean(&x.iter().map(|&v| v as f32).collect::<Vec<_>>());
        // One second: the RMS of 30 000 samples of 10 µV noise, within 5 %.
        assert!(
            (r - 10.0).abs() < 0.5,
            "seed {seed}: channel {c} rms {r} µV"
        );
    }
    for i in 0..chans.len() {
        for j in i + 1..chans.len() {
            if chans[i] == chans[j] {
                continue;
            }
            let r = correlation(&data[i], &data[j]);
            // Independent noise: |r| about 1 / sqrt(30 000) = 0.006.
            assert!(
                r.abs() < 0.05,
                "seed {seed}: channels {} and {} correlate {r} at lag 0",
                chans[i],
                chans[j]
            );
        }
    }
}

#[test]
fn noise_repeats_as_documented() {
    // Each table repeats every its period: the noise correlates about 0.5 with itself one
    // period later (the doc comment's honest limit), and not at other long lags.
    let rec = noise_only(2, 400_000, 3);
    let x = channel(&rec, 0, 0..20_000);
    for (lag, want) in [
        (NOISE_PERIOD_A as u64, 0.5),
        (NOISE_PERIOD_B as u64, 0.5),
        (100_000, 0.0),
    ] {
        let y = channel(&rec, 0, lag..lag + 20_000);
        let r = correlation(&x, &y);
        assert!((r - want).abs() < 0.05, "lag {lag}: r {r} vs {want}");
    }
}

#[test]
fn noisy_channels_are_noisy_factor_times_the_median() {
    let seed = fresh_seed("noisy_channels_are_noisy_factor_times_the_median");
    let rec = SyntheticRecording::new(
        SyntheticConfig::default()
            .with_samples(3_000_000)
            .with_seed(seed),
    )
    .unwrap();
    let w = 1_000_000..1_060_000;
    let rms = |c: usize| {
        rms_about_mean(
            &channel(&rec, c, w.clone())
                .iter()
                .map(|&v| v as f32)
                .collect::<Vec<_>>(),
        )
    };
    let normal: Vec<f64> = (0..384)
        .step_by(7)
        .filter(|c| !rec.dead_channels().contains(c) && !rec.noisy_channels().contains(c))
        .map(rms)
        .collect();
    let med = median(normal);
    // Everything but the noise adds the same power to both: noisy² = med² + (8² - 1) × 10².
    let rest = med * med - 100.0;
    let want = (rest + 6400.0).sqrt();
    for &c in rec.noisy_channels() {
        let r = rms(c);
        assert!(
            (r / want - 1.0).abs() < 0.05,
            "seed {seed}: noisy channel {c} rms {r} µV, want {want} (median {med})"
        );
        assert!(
            (6.0..8.0).contains(&(r / med)),
            "seed {seed}: ratio {}",
            r / med
        );
    }
    for &c in rec.dead_channels() {
        assert!(channel(&rec, c, w.clone()).iter().all(|&v| v == 0.0));
    }
}

#[test]
fn channels_read_the_noise_tables_far_apart() {
    // The doc comment's promise: no two channels of a probe of up to 1024 read either table
    // within 63 samples of each other, whatever the seed (the seed only rotates the offsets).
    for (channels, seed) in [(384usize, 0u64), (384, 12345), (1024, 7), (64, 99)] {
        let rec = noise_only(channels, 1000, seed);
        for (period, offsets) in [
            (
                NOISE_PERIOD_A as u64,
                rec.gens.iter().map(|g| g.noise_a).collect::<Vec<_>>(),
            ),
            (
                NOISE_PERIOD_B as u64,
                rec.gens.iter().map(|g| g.noise_b).collect::<Vec<_>>(),
            ),
        ] {
            let mut sorted = offsets.clone();
            sorted.sort_unstable();
            let gaps = sorted
                .windows(2)
                .map(|w| w[1] - w[0])
                .chain([sorted[0] + period - sorted[channels - 1]]);
            let min = gaps.min().unwrap();
            assert!(
                min >= 63,
                "{channels} channels, seed {seed}: offsets {min} apart in period {period}"
            );
        }
    }
}

#[test]
fn rounding_to_int16_is_ties_to_even_then_saturation() {
    // The reference: the standard library's rounding, then a clamp in f64 (exact for f32).
    let reference = |v: f32| f64::from(v.round_ties_even()).clamp(-32768.0, 32767.0) as i16;
    let seed = fresh_seed("rounding_to_int16_is_ties_to_even_then_saturation");
    let mut rng = SplitMix64::new(seed);
    let mut edges = vec![
        0.0f32,
        -0.0,
        0.5,
        1.5,
        2.5,
        -0.5,
        -1.5,
        -2.5,
        32766.5,
        32767.0,
        32767.49,
        32767.5,
        32768.0,
        -32767.5,
        -32768.0,
        -32768.5,
        -32769.0,
        1e6,
        -1e6,
        4_194_303.0,
        -4_194_303.0,
        f32::MAX,
        f32::MIN,
    ];
    // Fresh values: every scale the generator's sums can reach, ties included.
    for _ in 0..200_000 {
        let magnitude = 2f32.powi(rng.below(24) as i32);
        let unit = (rng.below(1 << 24) as f32) / (1u32 << 24) as f32;
        let v = (unit * 2.0 - 1.0) * magnitude;
        edges.push(v);
        edges.push((v * 2.0).round() / 2.0);
    }
    for v in edges {
        assert_eq!(round_to_i16(v), reference(v), "seed {seed}: {v:?}");
    }
}
