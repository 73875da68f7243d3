//! Tests of the synthetic recording: size without storage, determinism, planted channels,
//! noise statistics, saturation, validation.

use crate::conformance::SplitMix64;
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
