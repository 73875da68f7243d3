//! Detection on every runtime: the device's peaks against the host reference bit for bit,
//! with windows of three sizes that each upload only their own samples and halo; planted
//! spikes on both sides of every seam and at segment ends found exactly once; the tie rule;
//! the noise levels against an independent median.

use std::ops::Range;

use cubecl::client::Client;
use cubecl::server::Handle;
use dspk_ops::Span;
use dspk_ops::detect::{
    DetectSpec, Detector, Neighbourhoods, NoiseLevels, Peak, PeakSign, host_detect,
};
use dspk_tests::{for_each_runtime, test_rng, visible};
use rand::Rng as _;
use rand::rngs::StdRng;

fn upload(client: &Client, values: &[f32]) -> Handle {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    client.create_from_slice(&bytes)
}

/// A Gaussian draw (Box–Muller) of standard deviation `sigma`.
fn gauss(rng: &mut StdRng, sigma: f64) -> f64 {
    let u: f64 = rng.random_range(f64::EPSILON..1.0);
    let v: f64 = rng.random_range(0.0..1.0);
    sigma * (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// A linear probe: each channel's neighbourhood is the channels within two of it.
fn linear(channels: usize) -> Neighbourhoods {
    let lists: Vec<Vec<usize>> = (0..channels)
        .map(|c| (c.saturating_sub(2)..(c + 3).min(channels)).collect())
        .collect();
    Neighbourhoods::from_lists(&lists)
}

/// Detects on `segments` (each channel-major rows of its own length, recording samples end to
/// end) window by window: each window's owned samples and the detector's halo (clipped to the
/// segment) uploaded alone, as a pass hands them over.
fn detect_windows(
    client: &Client,
    detector: &mut Detector,
    segments: &[(Vec<f32>, Range<u64>)],
    channels: usize,
    window: u64,
) -> Vec<Peak> {
    let halo = detector.halo().before;
    let mut peaks = Vec::new();
    for (index, (rows, range)) in segments.iter().enumerate() {
        let len = (range.end - range.start) as usize;
        let mut start = range.start;
        while start < range.end {
            let end = (start + window).min(range.end);
            let read = start.saturating_sub(halo).max(range.start)..(end + halo).min(range.end);
            let (a, b) = (
                (read.start - range.start) as usize,
                (read.end - range.start) as usize,
            );
            let slice: Vec<f32> = (0..channels)
                .flat_map(|c| rows[c * len + a..c * len + b].iter().copied())
                .collect();
            let span = Span {
                channels,
                stride: b - a,
                origin: read.start,
                segment: range.clone(),
                produce: (start - read.start) as usize..(end - read.start) as usize,
            };
            peaks.extend(
                detector
                    .detect(&upload(client, &slice), &span, index as u32)
                    .expect("detect"),
            );
            start = end;
        }
    }
    peaks
}

/// Noise of σ 10 µV with spikes planted on channel `c` at each listed sample: a trough of
/// `−A` (A from 150 to 300 µV) flanked by `−A/2`, and `−0.6·A` on the channels next to it.
fn planted(rng: &mut StdRng, channels: usize, len: usize, spikes: &[(usize, usize)]) -> Vec<f32> {
    let mut rows: Vec<f64> = (0..channels * len).map(|_| gauss(rng, 10.0)).collect();
    for &(c, t) in spikes {
        let a = rng.random_range(150.0..300.0);
        for (dc, scale) in [(0i64, 1.0), (-1, 0.6), (1, 0.6)] {
            let ch = c as i64 + dc;
            if ch < 0 || ch >= channels as i64 {
                continue;
            }
            let row = ch as usize * len;
            rows[row + t] -= a * scale;
            if t > 0 {
                rows[row + t - 1] -= a * scale / 2.0;
            }
            if t + 1 < len {
                rows[row + t + 1] -= a * scale / 2.0;
            }
        }
    }
    rows.into_iter().map(|v| v as f32).collect()
}

/// Spikes at both ends of each segment and on both sides of every seam of each window size,
/// at distances 0 to `sweep + 2` from it, on channels that take turns (spaced so no two
/// planted spikes share a neighbourhood within the sweep).
fn plant_positions(len: usize, windows: &[usize], sweep: usize) -> Vec<usize> {
    let mut at = vec![0, 1, len - 2, len - 1];
    for &w in windows {
        let mut seam = w;
        while seam < len {
            at.push(seam);
            at.push(seam - 1);
            at.push(seam.saturating_sub(sweep + 2));
            at.push((seam + sweep + 1).min(len - 1));
            seam += w;
        }
    }
    at.sort_unstable();
    at.dedup();
    // Keep positions far enough apart (two sweeps and the spike's flanks) to stay separate.
    let mut kept: Vec<usize> = Vec::new();
    for t in at {
        if kept.last().is_none_or(|&k| t > k + 2 * sweep + 4) || t == len - 1 {
            if kept.last().is_some_and(|&k| t <= k + 2 * sweep + 4) {
                kept.pop();
            }
            kept.push(t);
        }
    }
    kept
}

#[test]
fn planted_spikes_found_once_for_every_window_size() {
    const NAME: &str = "detect_planted_spikes_found_once_for_every_window_size";
    for_each_runtime(NAME, |target, client| {
        let (seed, mut rng) = test_rng(NAME);
        // 30 kHz: windows of 0.1 s, 1 s and 7.3 s (past the recording: one window).
        let rate = 30_000.0;
        let windows = [3_000usize, 30_000, 219_000];
        let spec = DetectSpec::default();
        let sweep = spec.sweep_samples(rate);
        assert_eq!(sweep, 3);
        let channels = 6;
        let lens = [40_000usize, 23_017];
        let mut segments = Vec::new();
        let mut truth = Vec::new();
        let mut origin = 0u64;
        for (index, &len) in lens.iter().enumerate() {
            let at = plant_positions(len, &windows, sweep);
            let spikes: Vec<(usize, usize)> = at
                .iter()
                .enumerate()
                .map(|(i, &t)| (i % channels, t))
                .collect();
            let rows = planted(&mut rng, channels, len, &spikes);
            truth.extend(
                spikes
                    .iter()
                    .map(|&(c, t)| (origin + t as u64, c as u32, index as u32)),
            );
            segments.push((rows, origin..origin + len as u64));
            origin += len as u64;
        }
        let mut noise = NoiseLevels::new(channels);
        for (rows, _) in &segments {
            noise.add(rows).unwrap();
        }
        let noise = noise.finish().unwrap();
        let thresholds = spec.thresholds(&noise);
        let near = linear(channels);
        let mut want = Vec::new();
        for (index, (rows, range)) in segments.iter().enumerate() {
            want.extend(host_detect(
                rows,
                channels,
                range.start,
                &thresholds,
                &near,
                sweep,
                spec.sign,
                index as u32,
            ));
        }
        for &(sample, channel, segment) in &truth {
            let hits = want
                .iter()
                .filter(|p| p.sample == sample && p.segment == segment)
                .collect::<Vec<_>>();
            assert!(
                hits.len() == 1 && hits[0].channel == channel,
                "seed {seed}: the spike planted at sample {sample} of channel {channel} is \
                 found as {hits:?} by the host reference"
            );
        }
        let mut detector = Detector::new(client, &thresholds, &near, sweep, spec.sign).unwrap();
        for &w in &windows {
            let got = detect_windows(client, &mut detector, &segments, channels, w as u64);
            let same = got.len() == want.len()
                && got.iter().zip(&want).all(|(g, h)| {
                    g.key() == h.key()
                        && g.segment == h.segment
                        && g.amplitude.to_bits() == h.amplitude.to_bits()
                });
            assert!(
                same,
                "seed {seed}: windows of {w} samples on {target}: {} peaks, the host {}: \
                 first difference {:?}",
                got.len(),
                want.len(),
                got.iter().zip(&want).find(|(g, h)| g != h)
            );
        }
        visible(&format!(
            "{NAME} on {target}: {} planted spikes and {} peaks in all, the same bits for \
             windows of {windows:?} samples",
            truth.len(),
            want.len()
        ));
    });
}

#[test]
fn every_sign_equals_the_host_and_ties_go_to_the_lower_sample_then_channel() {
    const NAME: &str = "detect_every_sign_equals_the_host_and_ties_go_to_the_lower";
    for_each_runtime(NAME, |target, client| {
        let (seed, mut rng) = test_rng(NAME);
        let channels = 5;
        let len = 20_000;
        // Heavy-tailed noise: crossings of both signs everywhere, clusters within the sweep.
        let mut rows: Vec<f32> = (0..channels * len)
            .map(|_| {
                let g = gauss(&mut rng, 10.0);
                (if rng.random_range(0.0..1.0) < 0.02 {
                    g * 8.0
                } else {
                    g
                }) as f32
            })
            .collect();
        // Exact ties (equal thresholds below): channels 1 and 2 at one sample (channel 1
        // kept), channel 3 at samples 5000 and 5002 (5000 kept).
        // Every other value at and around those samples is 0, so that no other channel holds
        // a peak there by chance (the heavy tail crosses 60 µV in ~0.5 % of samples).
        for c in 0..channels {
            for t in [999, 1000, 1001, 4999, 5000, 5001, 5002, 5003] {
                rows[c * len + t] = 0.0;
            }
        }
        for (c, t) in [(1, 1000), (2, 1000), (3, 5000), (3, 5002)] {
            rows[c * len + t] = -500.0;
        }
        let near = linear(channels);
        let thresholds = vec![60.0f32; channels];
        for sign in [PeakSign::Neg, PeakSign::Pos, PeakSign::Both] {
            for sweep in [0usize, 3, 10] {
                let want = host_detect(&rows, channels, 0, &thresholds, &near, sweep, sign, 0);
                let mut detector = Detector::new(client, &thresholds, &near, sweep, sign).unwrap();
                let segments = vec![(rows.clone(), 0..len as u64)];
                let got = detect_windows(client, &mut detector, &segments, channels, 1_777);
                assert_eq!(got, want, "seed {seed}: sign {sign}, sweep {sweep}");
                // A first read of 3 peaks: the first window (and any that keeps more than the reads
                // grew to) reads the rest of its list again.
                let mut short = Detector::new(client, &thresholds, &near, sweep, sign)
                    .unwrap()
                    .with_first_read(3);
                let again = detect_windows(client, &mut short, &segments, channels, 1_777);
                assert_eq!(
                    again, want,
                    "seed {seed}: sign {sign}, sweep {sweep}, short reads"
                );
                // A list of 3 slots: a window that keeps more is refused, saying why.
                let mut small = Detector::new(client, &thresholds, &near, sweep, sign)
                    .unwrap()
                    .with_most_slots(3);
                let whole = Span {
                    channels,
                    stride: len,
                    origin: 0,
                    segment: 0..len as u64,
                    produce: 0..len,
                };
                let err = small
                    .detect(&upload(client, &rows), &whole, 0)
                    .unwrap_err()
                    .to_string();
                assert!(
                    err.contains("more than the 3 one device buffer lists"),
                    "seed {seed}: {err}"
                );
                if sign != PeakSign::Pos && sweep >= 3 {
                    let at = |t: u64| {
                        want.iter()
                            .filter(|p| p.sample == t)
                            .map(|p| p.channel)
                            .collect::<Vec<_>>()
                    };
                    assert_eq!(at(1000), vec![1], "seed {seed}: the tie at one sample");
                    assert_eq!(at(5000), vec![3], "seed {seed}: the earlier of a tie");
                    assert!(at(5002).is_empty(), "seed {seed}: the later of a tie");
                }
            }
        }
        visible(&format!(
            "{NAME} on {target}: three signs × sweeps 0/3/10 equal the host, with first reads of \
             65,536 and of 3 peaks; a list of 3 slots refused"
        ));
    });
}

#[test]
fn noise_levels_are_the_mean_of_chunk_mads() {
    let (seed, mut rng) = test_rng("detect_noise_levels_are_the_mean_of_chunk_mads");
    let (channels, len) = (3, 4_001);
    let chunks: Vec<Vec<f32>> = (0..4)
        .map(|_| {
            (0..channels * len)
                .map(|i| gauss(&mut rng, 5.0 + (i / len) as f64) as f32)
                .collect()
        })
        .collect();
    let mut levels = NoiseLevels::new(channels);
    for chunk in &chunks {
        levels.add(chunk).unwrap();
    }
    let got = levels.finish().unwrap();
    // Independently: a full sort, the middle element (odd count).
    let sorted_median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    for c in 0..channels {
        let want: f64 = chunks
            .iter()
            .map(|chunk| {
                let row: Vec<f64> = chunk[c * len..(c + 1) * len]
                    .iter()
                    .map(|&v| f64::from(v))
                    .collect();
                let m = sorted_median(row.clone());
                sorted_median(row.iter().map(|v| (v - m).abs()).collect()) / 0.674_489_750_196_081_7
            })
            .sum::<f64>()
            / chunks.len() as f64;
        assert!(
            (got[c] - want).abs() <= 1e-12 * want,
            "seed {seed}: {got:?}"
        );
        let sigma = 5.0 + c as f64;
        assert!((got[c] / sigma - 1.0).abs() < 0.05, "seed {seed}: {got:?}");
    }
    assert!(NoiseLevels::new(channels).add(&[1.0; 7]).is_err());
    assert!(NoiseLevels::new(channels).finish().is_err());
}

#[test]
fn bad_parameters_are_refused_with_their_values() {
    let bad = DetectSpec {
        threshold: 0.0,
        ..DetectSpec::default()
    };
    let text = bad.check().unwrap_err().to_string();
    assert!(text.contains("threshold 0"), "{text}");
    let bad = DetectSpec {
        exclude_sweep_ms: f64::NAN,
        ..DetectSpec::default()
    };
    assert!(bad.check().unwrap_err().to_string().contains("NaN ms"));
    assert!(
        "up".parse::<PeakSign>()
            .unwrap_err()
            .to_string()
            .contains("\"up\"")
    );
    assert_eq!(
        "both".parse::<PeakSign>().unwrap().directions(),
        (true, true)
    );
}
