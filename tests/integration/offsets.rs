//! Channel statistics under DC offsets (issue 28): int16 files whose channels sit anywhere in
//! the format's range, with a few counts of noise, at random gains, offsets, lengths and window
//! sizes, scanned through `dspk_stream::scan` and compared with the `f64` statistics of the
//! host's decode of the same file. Sums of squares in `f32` (`E[x²] − mean²`) called a 10 µV
//! channel at 56 mV flat; the standard deviation and the RMS must now hold to 1e-5 relative,
//! the mean to 1e-5 of the standard deviation, the extremes exactly, and no channel with noise
//! may be called dead.

use std::sync::Arc;

use dspk_kernels::ChannelStats;
use dspk_stream::{ScanOptions, scan};
use dspk_tests::{TempDir, for_each_runtime, test_rng};
use rand::Rng as _;
use rand::rngs::StdRng;

/// One standard normal value (Box–Muller).
fn normal(rng: &mut StdRng) -> f64 {
    let u: f64 = rng.random_range(f64::MIN_POSITIVE..1.0);
    let v: f64 = rng.random_range(0.0..1.0);
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// Writes `frames` (time-major int16, `channels` per frame) and its JSON sidecar.
fn write_raw(path: &std::path::Path, frames: &[i16], gains: &[f32], offsets: &[f32]) {
    let bytes: Vec<u8> = frames.iter().flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(path, bytes).expect("write the raw file");
    let channels: Vec<serde_json::Value> = gains
        .iter()
        .zip(offsets)
        .enumerate()
        .map(|(c, (g, o))| {
            serde_json::json!({"name": format!("E{c}"), "gain": g, "offset": o, "unit": "uV"})
        })
        .collect();
    let sidecar = serde_json::json!({
        "sample_rate": "30000",
        "channel_count": gains.len(),
        "format": "int16",
        "order": "time-major",
        "channels": channels,
    });
    let mut name = path.as_os_str().to_owned();
    name.push(".json");
    std::fs::write(name, sidecar.to_string()).expect("write the sidecar");
}

#[test]
fn scan_statistics_hold_under_any_dc_offset() {
    const NAME: &str = "scan_statistics_hold_under_any_dc_offset";
    let dir = TempDir::new(NAME);
    for_each_runtime(NAME, |target, client| {
        let (seed, mut rng) = test_rng(NAME);
        for round in 0..4 {
            let channels = rng.random_range(1..=8usize);
            let samples = rng.random_range(1..=200_000usize);
            let window = rng.random_range(1_000..=40_000u64);
            // Levels anywhere in int16's range (the extremes included), noise of 0 to 40
            // counts (0: a flat channel, which must stay flat).
            let levels: Vec<f64> = (0..channels)
                .map(|c| match c {
                    0 => 32_000.0,
                    1 => -32_000.0,
                    _ => rng.random_range(-32_768.0..32_767.0),
                })
                .collect();
            let noise: Vec<f64> = (0..channels)
                .map(|c| {
                    if c == 2 {
                        0.0
                    } else {
                        rng.random_range(0.5..40.0)
                    }
                })
                .collect();
            let gains: Vec<f32> = (0..channels)
                .map(|c| {
                    if c % 2 == 0 {
                        2.343_75
                    } else {
                        rng.random_range(0.1..5.0)
                    }
                })
                .collect();
            let offsets: Vec<f32> = (0..channels)
                .map(|_| rng.random_range(-1_000.0..1_000.0))
                .collect();
            let mut frames = vec![0i16; samples * channels];
            for (s, frame) in frames.chunks_exact_mut(channels).enumerate() {
                for (c, v) in frame.iter_mut().enumerate() {
                    let x = levels[c] + noise[c] * normal(&mut rng);
                    // A slow drift of a few counts on odd channels, as a wideband channel has.
                    let drift = if c % 2 == 1 {
                        5.0 * (s as f64 / 7_000.0).sin()
                    } else {
                        0.0
                    };
                    *v = (x + drift).round().clamp(-32_768.0, 32_767.0) as i16;
                }
            }
            let path = dir.path().join(format!("offsets-{target}-{round}.bin"));
            write_raw(&path, &frames, &gains, &offsets);
            let source: Arc<dyn dspk_types::RecordingSource> = dspk_io::open(&path)
                .expect("open the raw file")
                .into_source();
            let options = ScanOptions {
                window_samples: Some(window),
                ..ScanOptions::default()
            };
            let result = scan(client, source.clone(), &options)
                .unwrap_or_else(|e| panic!("{target}, seed {seed}: {e}"));
            let mut values = vec![0f32; samples];
            for (c, got) in result.stats.iter().enumerate() {
                source
                    .read(&[c], 0..samples as u64, &mut values)
                    .expect("the host's read");
                let host = ChannelStats::from_values(&values);
                let ctx = format!(
                    "{target}, seed {seed}, round {round}: channel {c} of {channels}, {samples} \
                     samples, windows of {window}, level {} counts ± {:.2}, gain {}, offset {}",
                    levels[c], noise[c], gains[c], offsets[c]
                );
                assert_eq!(
                    (got.count, got.min, got.max),
                    (host.count, host.min, host.max),
                    "{ctx}"
                );
                let std = host.std();
                assert!(
                    (got.mean() - host.mean()).abs() <= 1e-5 * std,
                    "{ctx}: mean {} vs {} (std {std})",
                    got.mean(),
                    host.mean()
                );
                assert!(
                    (got.std() - std).abs() <= 1e-5 * std,
                    "{ctx}: std {} vs {std}",
                    got.std()
                );
                assert!(
                    (got.rms() - host.rms()).abs() <= 1e-5 * host.rms(),
                    "{ctx}: rms {} vs {}",
                    got.rms(),
                    host.rms()
                );
                if std > 0.0 {
                    assert!(!result.dead().contains(&c), "{ctx}: called dead");
                }
            }
        }
    });
}
