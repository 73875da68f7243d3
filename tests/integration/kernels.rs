//! dspk-kernels on every runtime: decode against the host reference, channel statistics
//! against an f64 reference, limits, the contraction guard, and G1.

use cubecl::client::Client;
use dspk_kernels::{
    ChannelStats, ChannelStatsKernel, Decoder, LaunchGeometry, MAX_DEVICE_ELEMENTS,
    check_window_fits, contraction_probe, decode_vs_copy, max_binding_bytes, max_window_samples,
    supports_f64,
};
use dspk_tests::{for_each_runtime, test_rng, visible};
use dspk_types::{ComputeTarget, DspError, MemoryOrder, SampleFormat};
use rand::rngs::StdRng;
use rand::{Rng as _, RngCore as _};

/// Decoded values larger than this are not asked of the near-limit test (host time and memory);
/// a larger binding is tested at this size and says so.
const NEAR_LIMIT_CAP_BYTES: u64 = 256 << 20;

/// Random stored bytes for `n` values of `format`: every bit pattern for integers, finite
/// normal values of a realistic range for floats.
pub(crate) fn random_stored(rng: &mut StdRng, format: SampleFormat, n: usize) -> Vec<u8> {
    match format {
        SampleFormat::F32 => (0..n)
            .flat_map(|_| rng.random_range(-1.0e4f32..1.0e4).to_le_bytes())
            .collect(),
        SampleFormat::F64 => (0..n)
            .flat_map(|_| rng.random_range(-1.0e4f64..1.0e4).to_le_bytes())
            .collect(),
        _ => {
            let mut bytes = vec![0u8; n * format.bytes()];
            rng.fill_bytes(&mut bytes);
            bytes
        }
    }
}

/// Random per-channel gains and offsets.
pub(crate) fn random_scaling(rng: &mut StdRng, channels: usize) -> (Vec<f32>, Vec<f32>) {
    let gains = (0..channels)
        .map(|_| rng.random_range(0.01f32..10.0))
        .collect();
    let offsets = (0..channels)
        .map(|_| rng.random_range(-100.0f32..100.0))
        .collect();
    (gains, offsets)
}

/// The host reference: `SampleFormat::decode` per channel, after gathering the channel's
/// stored bytes out of `order`, into channel-major `f32`.
pub(crate) fn host_decode(
    stored: &[u8],
    format: SampleFormat,
    order: MemoryOrder,
    channels: usize,
    samples: usize,
    gains: &[f32],
    offsets: &[f32],
) -> Vec<f32> {
    let b = format.bytes();
    let mut out = vec![0f32; channels * samples];
    let mut row = vec![0u8; samples * b];
    for c in 0..channels {
        match order {
            MemoryOrder::ChannelMajor => {
                row.copy_from_slice(&stored[c * samples * b..][..samples * b])
            }
            MemoryOrder::TimeMajor => {
                for s in 0..samples {
                    let e = (s * channels + c) * b;
                    row[s * b..][..b].copy_from_slice(&stored[e..e + b]);
                }
            }
        }
        format
            .decode(
                &row,
                &mut out[c * samples..][..samples],
                gains[c],
                offsets[c],
            )
            .expect("the row holds exactly the channel's bytes");
    }
    out
}

/// Distance in units in the last place between two finite `f32` of any sign.
fn ulps(a: f32, b: f32) -> u64 {
    let key = |x: f32| {
        let bits = x.to_bits() as i64;
        if bits < 0x8000_0000 {
            bits
        } else {
            0x8000_0000 - bits
        }
    };
    (key(a) - key(b)).unsigned_abs()
}

/// Asserts `device` equals `host`: bit for bit for integer formats, within 1 ulp for floats.
pub(crate) fn assert_decoded(device: &[f32], host: &[f32], format: SampleFormat, context: &str) {
    assert_eq!(device.len(), host.len(), "{context}: length");
    let tolerance = if format.is_float() { 1 } else { 0 };
    let mut worst = (0u64, 0usize);
    for (i, (d, h)) in device.iter().zip(host).enumerate() {
        let u = ulps(*d, *h);
        if u > worst.0 {
            worst = (u, i);
        }
    }
    assert!(
        worst.0 <= tolerance,
        "{context}: value {} is {} on the device, {} on the host ({} ulp, tolerance {tolerance})",
        worst.1,
        device[worst.1],
        host[worst.1],
        worst.0
    );
}

/// The decodable formats of this device, and a check that float64 is refused clearly where
/// the device has no f64.
fn decodable_formats(client: &Client) -> Vec<SampleFormat> {
    let mut formats = SampleFormat::ALL.to_vec();
    if !supports_f64(client) {
        formats.retain(|f| *f != SampleFormat::F64);
        let err = Decoder::new(
            client,
            3,
            7,
            SampleFormat::F64,
            MemoryOrder::TimeMajor,
            &[1.0; 3],
            &[0.0; 3],
        )
        .expect_err("float64 must be refused on a device without f64");
        assert!(
            matches!(&err, DspError::UnsupportedFormat(text) if text.contains("float64")),
            "{err}"
        );
    }
    formats
}

#[test]
fn decode_equals_the_host_reference_for_every_format_order_and_shape() {
    const NAME: &str = "decode_equals_the_host_reference_for_every_format_order_and_shape";
    for_each_runtime(NAME, |target, client| {
        let (seed, mut rng) = test_rng(NAME);
        let formats = decodable_formats(client);
        let names: Vec<&str> = formats.iter().map(|f| f.name()).collect();
        visible(&format!("{NAME} on {target}: formats {}", names.join(", ")));
        for format in formats {
            for order in [MemoryOrder::ChannelMajor, MemoryOrder::TimeMajor] {
                for channels in [1usize, 3, 384, 385] {
                    let (gains, offsets) = random_scaling(&mut rng, channels);
                    let mut decoder =
                        Decoder::new(client, channels, 30_000, format, order, &gains, &offsets)
                            .unwrap_or_else(|e| panic!("{target}: {e}"));
                    // Largest first, so a small window after it cannot pass on stale values.
                    for samples in [30_000usize, 1, 7] {
                        let context = format!(
                            "{target}, seed {seed}: {format} {order} {channels} ch × {samples}"
                        );
                        let stored = random_stored(&mut rng, format, channels * samples);
                        let device = decoder
                            .decode(&stored, samples)
                            .and_then(|w| w.to_vec())
                            .unwrap_or_else(|e| panic!("{context}: {e}"));
                        let host = host_decode(
                            &stored, format, order, channels, samples, &gains, &offsets,
                        );
                        assert_decoded(&device, &host, format, &context);
                    }
                }
            }
        }
    });
}

#[test]
fn decode_near_the_binding_limit_and_refusal_just_above_it() {
    const NAME: &str = "decode_near_the_binding_limit_and_refusal_just_above_it";
    for_each_runtime(NAME, |target, client| {
        let (seed, mut rng) = test_rng(NAME);
        let format = SampleFormat::I16;
        let channels = 3;
        let binding = max_binding_bytes(client);
        let fit = max_window_samples(client, channels, format) as usize;
        assert!(
            fit > 0,
            "{target}: no window fits a binding of {binding} bytes"
        );

        // One sample more than fits is refused before anything is allocated, saying what fits.
        let err = Decoder::new(
            client,
            channels,
            fit + 1,
            format,
            MemoryOrder::TimeMajor,
            &[1.0; 3],
            &[0.0; 3],
        )
        .expect_err("a window above the binding limit must be refused");
        let text = err.to_string();
        assert!(
            text.contains(&format!("at most {fit} samples per window fit")),
            "{target}: {text}"
        );
        assert!(check_window_fits(client, channels, fit, format).is_ok());

        let cap = (NEAR_LIMIT_CAP_BYTES / (4 * channels as u64)) as usize;
        let samples = fit.min(cap);
        visible(&format!(
            "{NAME} on {target}: largest binding {binding} B, {fit} samples × {channels} ch fit; \
             testing {samples}{}",
            if samples < fit { " (capped)" } else { "" }
        ));
        for order in [MemoryOrder::TimeMajor, MemoryOrder::ChannelMajor] {
            let (gains, offsets) = random_scaling(&mut rng, channels);
            let mut decoder =
                Decoder::new(client, channels, samples, format, order, &gains, &offsets)
                    .unwrap_or_else(|e| panic!("{target}: {e}"));
            let stored = random_stored(&mut rng, format, channels * samples);
            let context = format!("{target}, seed {seed}: {order} {channels} ch × {samples}");
            let device = decoder
                .decode(&stored, samples)
                .and_then(|w| w.to_vec())
                .unwrap_or_else(|e| panic!("{context}: {e}"));
            let host = host_decode(&stored, format, order, channels, samples, &gains, &offsets);
            assert_decoded(&device, &host, format, &context);
        }
    });
}

#[test]
fn decoder_refuses_bad_windows_and_scaling() {
    const NAME: &str = "decoder_refuses_bad_windows_and_scaling";
    for_each_runtime(NAME, |target, client| {
        let new = |channels, samples, gains: &[f32], offsets: &[f32]| {
            Decoder::new(
                client,
                channels,
                samples,
                SampleFormat::I16,
                MemoryOrder::ChannelMajor,
                gains,
                offsets,
            )
        };
        assert!(
            matches!(new(0, 10, &[], &[]), Err(DspError::InvalidConfig(_))),
            "{target}"
        );
        assert!(matches!(
            new(2, 0, &[1.0; 2], &[0.0; 2]),
            Err(DspError::InvalidConfig(_))
        ));
        assert!(matches!(
            new(2, 10, &[1.0; 3], &[0.0; 2]),
            Err(DspError::ShapeMismatch {
                expected: 2,
                actual: 3,
                ..
            })
        ));
        assert!(matches!(
            new(2, 10, &[1.0; 2], &[0.0; 1]),
            Err(DspError::ShapeMismatch {
                expected: 2,
                actual: 1,
                ..
            })
        ));
        let mut decoder = new(2, 10, &[1.0; 2], &[0.0; 2]).unwrap_or_else(|e| panic!("{e}"));
        assert!(matches!(
            decoder.decode(&[0u8; 44], 11),
            Err(DspError::BufferOverrun {
                capacity: 10,
                needed: 11,
                ..
            })
        ));
        assert!(matches!(
            decoder.decode(&[0u8; 39], 10),
            Err(DspError::ShapeMismatch {
                expected: 40,
                actual: 39,
                ..
            })
        ));
        // Rescaling takes effect on the next window.
        decoder
            .set_scaling(&[2.0, -1.0], &[0.5, 3.0])
            .unwrap_or_else(|e| panic!("{e}"));
        let stored: Vec<u8> = [7i16, -3].iter().flat_map(|v| v.to_le_bytes()).collect();
        let out = decoder
            .decode(&stored, 1)
            .and_then(|w| w.to_vec())
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(out, vec![7.0 * 2.0 + 0.5, -3.0 * -1.0 + 3.0], "{target}");
    });
}

#[test]
fn a_problem_larger_than_the_grid_or_32_bits_is_an_error() {
    const NAME: &str = "a_problem_larger_than_the_grid_or_32_bits_is_an_error";
    for_each_runtime(NAME, |target, client| {
        let err = LaunchGeometry::elementwise(client, MAX_DEVICE_ELEMENTS as usize + 1)
            .expect_err("more elements than 32 bits index");
        assert!(err.to_string().contains("32 bits"), "{target}: {err}");
        let (x, y, z) = client.properties().hardware.max_cube_count;
        match (x as usize)
            .checked_mul(y as usize)
            .and_then(|xy| xy.checked_mul(z as usize))
        {
            Some(cubes) => {
                let rows = cubes + 1;
                let err =
                    LaunchGeometry::per_row(client, rows, 0).expect_err("more cubes than the grid");
                assert!(err.to_string().contains("grid"), "{target}: {err}");
            }
            None => {
                // A grid past any 64-bit count (the cpu runtime's: 2^32 − 1 cubes along each
                // axis): it never limits a launch; the 2^32 positions a kernel indexes do.
                assert_eq!(target, ComputeTarget::Cpu, "{target}: {:?}", (x, y, z));
                let rows = x as usize + 1;
                let err = LaunchGeometry::per_row(client, rows, 0)
                    .expect_err("more positions than 32 bits");
                assert!(err.to_string().contains("32 bits"), "{target}: {err}");
            }
        }
        let ok =
            LaunchGeometry::elementwise(client, 450_000 * 256).unwrap_or_else(|e| panic!("{e}"));
        assert!(ok.launched_cubes() >= 450_000);
    });
}

#[test]
fn statistics_windows_over_the_largest_binding_are_refused_up_front() {
    const NAME: &str = "statistics_windows_over_the_largest_binding_are_refused_up_front";
    for_each_runtime(NAME, |target, client| {
        let binding = max_binding_bytes(client);
        for channels in [1usize, 384] {
            // f32 windows: 4 bytes per sample per channel in one binding (and 32-bit indexing).
            let fit = (binding / (4 * channels as u64)).min(MAX_DEVICE_ELEMENTS / channels as u64);
            assert_eq!(
                fit,
                max_window_samples(client, channels, SampleFormat::F32),
                "{target}"
            );
            let err = ChannelStatsKernel::new(client, channels, fit as usize + 1)
                .expect_err("one sample more than fits");
            let text = err.to_string();
            if binding / (4 * channels as u64) > fit {
                // The binding holds more than 32 bits index (the cpu runtime's binding is the
                // host's memory): the index is the limit, and the error names it.
                assert!(
                    text.contains("32 bits") && text.contains(&format!("{}", fit + 1)),
                    "{target}, {channels} channels: {text}"
                );
            } else {
                assert!(
                    text.contains(&format!("at most {fit} samples per window fit"))
                        && text.contains(&format!("{binding} bytes")),
                    "{target}, {channels} channels: {text}"
                );
            }
        }
        // The window that fits exactly is accepted, where it is at most 1 GiB (lavapipe's
        // 128 MiB binding); not where the binding is 32-bit-bound (the cpu runtime's host
        // memory, an H100's 17 GB for 384 channels: the kernel's partials alone would take
        // gigabytes).
        let fit = max_window_samples(client, 384, SampleFormat::F32) as usize;
        if fit * 384 * 4 <= 1 << 30 {
            ChannelStatsKernel::new(client, 384, fit).unwrap_or_else(|e| panic!("{target}: {e}"));
        }
    });
}

/// Asserts device statistics equal the f64 reference: count, min and max exactly; the mean to
/// 1e-5 of the standard deviation (exactly on a flat channel); the standard deviation and the
/// RMS to 1e-5 relative (the targets of issue 28, whatever the offset).
fn assert_stats(device: &ChannelStats, host: &ChannelStats, context: &str) {
    assert_eq!(device.count, host.count, "{context}: count");
    assert_eq!(device.min, host.min, "{context}: min");
    assert_eq!(device.max, host.max, "{context}: max");
    assert!(
        (device.mean() - host.mean()).abs() <= 1e-5 * host.std(),
        "{context}: mean {} vs {} (std {})",
        device.mean(),
        host.mean(),
        host.std()
    );
    assert!(
        (device.std() - host.std()).abs() <= 1e-5 * host.std(),
        "{context}: std {} vs {}",
        device.std(),
        host.std()
    );
    assert!(
        (device.rms() - host.rms()).abs() <= 1e-5 * host.rms(),
        "{context}: rms {} vs {}",
        device.rms(),
        host.rms()
    );
}

#[test]
fn channel_statistics_match_an_f64_reference_and_merge_across_windows() {
    const NAME: &str = "channel_statistics_match_an_f64_reference_and_merge_across_windows";
    for_each_runtime(NAME, |target, client| {
        let (seed, mut rng) = test_rng(NAME);
        for channels in [1usize, 3, 385] {
            let max_samples = 30_200;
            // µV-like data: int16 × ~0.195 µV, offsets of ±100 µV.
            let gains: Vec<f32> = (0..channels)
                .map(|_| rng.random_range(0.1f32..0.3))
                .collect();
            let offsets: Vec<f32> = (0..channels)
                .map(|_| rng.random_range(-100.0f32..100.0))
                .collect();
            let mut decoder = Decoder::new(
                client,
                channels,
                max_samples,
                SampleFormat::I16,
                MemoryOrder::TimeMajor,
                &gains,
                &offsets,
            )
            .unwrap_or_else(|e| panic!("{target}: {e}"));
            let mut kernel = ChannelStatsKernel::new(client, channels, max_samples)
                .unwrap_or_else(|e| panic!("{target}: {e}"));
            let mut totals = vec![ChannelStats::EMPTY; channels];
            let mut reference = vec![ChannelStats::EMPTY; channels];
            // Windows with halos: only `valid` is counted; the last is short and odd.
            for (samples, valid) in [
                (30_200usize, 100..30_100),
                (30_200, 100..30_100),
                (1_037, 100..1_037),
            ] {
                let context =
                    format!("{target}, seed {seed}: {channels} ch × {samples}, {valid:?}");
                let stored = random_stored(&mut rng, SampleFormat::I16, channels * samples);
                let window = decoder
                    .decode(&stored, samples)
                    .unwrap_or_else(|e| panic!("{context}: {e}"));
                let values = window.to_vec().unwrap_or_else(|e| panic!("{context}: {e}"));
                let single = kernel
                    .window_stats(&window, valid.clone())
                    .unwrap_or_else(|e| panic!("{context}: {e}"));
                kernel
                    .accumulate(&window, valid.clone(), &mut totals)
                    .unwrap_or_else(|e| panic!("{context}: {e}"));
                for c in 0..channels {
                    let part = &values[c * samples..][valid.clone()];
                    let host = ChannelStats::from_values(part);
                    assert_stats(&single[c], &host, &format!("{context}: channel {c}"));
                    reference[c].merge(&host);
                }
            }
            for c in 0..channels {
                let context = format!("{target}, seed {seed}: {channels} ch merged, channel {c}");
                assert_stats(&totals[c], &reference[c], &context);
                assert_eq!(totals[c].count, 2 * 30_000 + 937, "{context}");
            }
        }
        // An empty range adds nothing; a range past the window is refused.
        let mut decoder = Decoder::new(
            client,
            2,
            8,
            SampleFormat::I16,
            MemoryOrder::ChannelMajor,
            &[1.0; 2],
            &[0.0; 2],
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let mut kernel = ChannelStatsKernel::new(client, 2, 8).unwrap_or_else(|e| panic!("{e}"));
        let window = decoder
            .decode(&[1u8; 32], 8)
            .unwrap_or_else(|e| panic!("{e}"));
        let empty = kernel
            .window_stats(&window, 3..3)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(empty, vec![ChannelStats::EMPTY; 2]);
        assert!(matches!(
            kernel.window_stats(&window, 2..9),
            Err(DspError::SampleRange {
                start: 2,
                end: 9,
                total: 8
            })
        ));
    });
}

#[test]
fn deferred_statistics_equal_the_per_window_ones_over_many_windows() {
    const NAME: &str = "deferred_statistics_equal_the_per_window_ones_over_many_windows";
    for_each_runtime(NAME, |target, client| {
        let (seed, mut rng) = test_rng(NAME);
        let channels = 5;
        let max_samples = 3_000;
        let (gains, offsets) = random_scaling(&mut rng, channels);
        let mut decoder = Decoder::new(
            client,
            channels,
            max_samples,
            SampleFormat::I16,
            MemoryOrder::TimeMajor,
            &gains,
            &offsets,
        )
        .unwrap_or_else(|e| panic!("{target}: {e}"));
        let mut deferred = ChannelStatsKernel::new(client, channels, max_samples)
            .unwrap_or_else(|e| panic!("{target}: {e}"));
        let mut blocking = ChannelStatsKernel::new(client, channels, max_samples)
            .unwrap_or_else(|e| panic!("{target}: {e}"));
        let mut totals = vec![ChannelStats::EMPTY; channels];
        let mut reference = vec![ChannelStats::EMPTY; channels];
        // More windows than are kept in flight, of fresh lengths and owned ranges (some
        // empty): three batches are read back while the next fills, so both halves of the
        // ring are reused and windows of different shapes share them.
        let windows = 3 * dspk_kernels::STATS_IN_FLIGHT + 3;
        for k in 0..windows {
            let samples = rng.random_range(1..=max_samples);
            let start = rng.random_range(0..=samples);
            let end = if k % 7 == 3 {
                start
            } else {
                rng.random_range(start..=samples)
            };
            let context = format!("{target}, seed {seed}: window {k}, {samples} samples");
            let stored = random_stored(&mut rng, SampleFormat::I16, channels * samples);
            let window = decoder
                .decode(&stored, samples)
                .unwrap_or_else(|e| panic!("{context}: {e}"));
            let values = window.to_vec().unwrap_or_else(|e| panic!("{context}: {e}"));
            deferred
                .accumulate_deferred(&window, start..end)
                .unwrap_or_else(|e| panic!("{context}: {e}"));
            blocking
                .accumulate(&window, start..end, &mut totals)
                .unwrap_or_else(|e| panic!("{context}: {e}"));
            for c in 0..channels {
                let part = &values[c * samples..][start..end];
                reference[c].merge(&ChannelStats::from_values(part));
            }
        }
        let got = deferred
            .finish_deferred()
            .unwrap_or_else(|e| panic!("{target}: {e}"));
        for c in 0..channels {
            let context = format!("{target}, seed {seed}: channel {c}");
            // The same partials merged in the same order: equal to the per-window path.
            assert_eq!(got[c], totals[c], "{context}");
            assert_stats(&got[c], &reference[c], &context);
        }
        // Finishing starts afresh.
        let again = deferred
            .finish_deferred()
            .unwrap_or_else(|e| panic!("{target}: {e}"));
        assert_eq!(again, vec![ChannelStats::EMPTY; channels]);
        // Bad input is refused at once, as in the per-window path.
        let window = decoder
            .decode(
                &random_stored(&mut rng, SampleFormat::I16, channels * 10),
                10,
            )
            .unwrap_or_else(|e| panic!("{target}: {e}"));
        assert!(matches!(
            deferred.accumulate_deferred(&window, 4..11),
            Err(DspError::SampleRange {
                start: 4,
                end: 11,
                total: 10
            })
        ));
    });
}

#[test]
fn the_contraction_guard_keeps_the_device_equal_to_the_host() {
    const NAME: &str = "the_contraction_guard_keeps_the_device_equal_to_the_host";
    for_each_runtime(NAME, |target, client| {
        let (seed, _) = test_rng(NAME);
        let probe = contraction_probe(client, 64, 4096, seed).unwrap_or_else(|e| panic!("{e}"));
        visible(&format!(
            "{NAME} on {target} ({}): {} values; plain x*gain+offset differs from the host's \
             unfused result in {} and from mul_add in {}; guarded differs in {}",
            client.properties().identity.name,
            probe.values,
            probe.plain_vs_unfused,
            probe.plain_vs_fused,
            probe.guarded_vs_unfused
        ));
        assert_eq!(
            probe.guarded_vs_unfused, 0,
            "{target}, seed {seed}: {probe:?}"
        );
        assert_eq!(probe.values, 64 * 4096);
    });
}

#[test]
fn g1_decode_against_device_copy() {
    const NAME: &str = "g1_decode_against_device_copy";
    for_each_runtime(NAME, |target, client| {
        let channels = 384;
        let fit = max_window_samples(client, channels, SampleFormat::I16) as usize;
        // A software device (no physical card) is for correctness: keep it short there.
        let software = client.properties().identity.physical.is_none();
        let samples = if software { fit.min(8_192) } else { fit };
        let report =
            decode_vs_copy(client, channels, samples).unwrap_or_else(|e| panic!("{target}: {e}"));
        visible(&format!("{NAME} on {target}: {report}"));
        assert!(
            report.ratio().is_finite() && report.ratio() > 0.0,
            "{report:?}"
        );
        assert_eq!(report.decode_bytes, (channels * samples * 6) as u64);
    });
}
