//! dspk-stream through its public API only, as a tool builder uses it: a kernel of the test's
//! own (a per-window, per-channel threshold-crossing count) over a synthetic recording and a
//! raw file, a subset of channels, every third halo window, both decode routes; decoded values
//! against the host's reads; an early stop that ends the pass cleanly.

use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;

use cubecl::client::Client;
use cubecl::prelude::*;
use dspk_io::{WriteOptions, write_binary};
use dspk_kernels::{f32_arg, read_f32};
use dspk_stream::{DecodeRoute, DevicePass, Flow};
use dspk_tests::{TempDir, for_each_runtime, test_rng};
use dspk_types::{
    ChunkSchedule, HaloWindow, MemoryOrder, NoProgress, RecordingSource, SampleFormat,
    SyntheticConfig, SyntheticRecording,
};
use rand::Rng as _;
use rand::seq::SliceRandom as _;

/// `counts[c]` = samples `lo..hi` of row `c` of `x` (rows of `samples` values) beyond
/// ±`threshold`.
#[cube(launch)]
fn crossings(x: &[f32], counts: &mut [f32], samples: usize, lo: usize, hi: usize, threshold: f32) {
    let row = ABSOLUTE_POS;
    if row < counts.len() {
        let mut n = 0.0f32;
        let mut s = lo;
        while s < hi {
            let v = x[row * samples + s];
            if v > threshold || v < -threshold {
                n += 1.0;
            }
            s += 1;
        }
        counts[row] = n;
    }
}

/// The host's count for one window: the owned samples of each channel beyond ±`threshold`,
/// from the source's own scaled reads.
fn host_counts(
    source: &dyn RecordingSource,
    channels: &[usize],
    window: &HaloWindow,
    threshold: f32,
) -> Vec<u64> {
    let n = window.valid_len();
    let mut values = vec![0.0f32; channels.len() * n];
    source
        .read(channels, window.valid_global.clone(), &mut values)
        .expect("host read");
    values
        .chunks(n.max(1))
        .map(|row| row.iter().filter(|v| v.abs() > threshold).count() as u64)
        .collect()
}

/// Runs the crossing count over `windows` of `source` for `channels` on `client` through
/// `route`; returns the counts per window and the route the pass reports.
fn device_counts(
    client: &Client,
    source: &Arc<dyn RecordingSource>,
    channels: &[usize],
    windows: &[HaloWindow],
    threshold: f32,
    route: DecodeRoute,
) -> (Vec<Vec<u64>>, DecodeRoute) {
    let counts_buf = client.empty(channels.len() * 4);
    let mut per_window = Vec::new();
    let report = DevicePass::new(client, source.clone(), windows.to_vec())
        .channels(channels.to_vec())
        .route(route)
        .progress(&NoProgress)
        .run(|w, decoded| {
            assert_eq!(decoded.channels(), channels.len());
            assert_eq!(decoded.samples(), w.read_len());
            crossings::launch(
                client,
                CubeCount::Static(1, 1, 1),
                CubeDim::new_1d(64),
                decoded.arg()?,
                f32_arg(&counts_buf, channels.len())?,
                w.read_len(),
                w.valid_local.start,
                w.valid_local.end,
                threshold,
            );
            let counts = read_f32(client, &counts_buf, channels.len())?;
            per_window.push(counts.iter().map(|&c| c as u64).collect());
            Ok(Flow::Continue)
        })
        .expect("the pass runs");
    assert_eq!(report.windows, windows.len());
    assert!(!report.stopped_early);
    let owned: u64 = windows.iter().map(|w| w.valid_len() as u64).sum();
    assert_eq!(report.samples, owned);
    let frame = (channels.len() * source.info().format.bytes()) as u64;
    let read: u64 = windows.iter().map(|w| w.read_len() as u64 * frame).sum();
    assert_eq!(report.stored_bytes, read);
    (per_window, report.route)
}

/// The recordings of the test: the synthetic probe (computed, channel-major) and a raw int16
/// time-major file of it.
fn recordings(dir: &TempDir, seed: u64) -> Vec<(&'static str, Arc<dyn RecordingSource>)> {
    let config = SyntheticConfig::default()
        .with_samples(20_011)
        .with_seed(seed);
    let synthetic: Arc<dyn RecordingSource> =
        Arc::new(SyntheticRecording::new(config).expect("synthetic recording"));
    let path = dir.path().join("probe.bin");
    let options = WriteOptions {
        format: Some(SampleFormat::I16),
        order: Some(MemoryOrder::TimeMajor),
        ..WriteOptions::default()
    };
    write_binary(&*synthetic, &path, &options, &NoProgress).expect("write the raw file");
    let raw = dspk_io::open(&path)
        .expect("open the raw file")
        .into_source();
    assert_eq!(raw.native_stored_order(), MemoryOrder::TimeMajor);
    vec![("synthetic", synthetic), ("raw file", raw)]
}

#[test]
fn a_kernel_of_our_own_over_every_third_window_of_a_channel_subset() {
    const NAME: &str = "a_kernel_of_our_own_over_every_third_window_of_a_channel_subset";
    let (seed, rng) = test_rng(NAME);
    let rng = std::cell::RefCell::new(rng);
    let dir = TempDir::new(NAME);
    let sources = recordings(&dir, seed);
    for_each_runtime(NAME, |target, client| {
        let mut rng = rng.borrow_mut();
        let rng = &mut *rng;
        for (what, source) in &sources {
            let total = source.info().samples;
            let mut channels: Vec<usize> = (0..source.info().channel_count()).collect();
            channels.shuffle(rng);
            channels.truncate(rng.random_range(3..12));
            let batch = rng.random_range(1_500..4_000);
            let schedule = ChunkSchedule::full_recording(total, batch, 17, 9).expect("schedule");
            let offset = rng.random_range(0..3);
            let windows: Vec<HaloWindow> = schedule
                .windows()
                .iter()
                .skip(offset)
                .step_by(3)
                .cloned()
                .collect();
            let threshold = rng.random_range(20.0f32..80.0);
            let ctx = format!(
                "{target}, {what}, seed {seed}, channels {channels:?}, batch {batch}, threshold \
                 {threshold}"
            );
            let want: Vec<Vec<u64>> = windows
                .iter()
                .map(|w| host_counts(&**source, &channels, w, threshold))
                .collect();
            assert!(
                want.iter().flatten().any(|&c| c > 0),
                "{ctx}: nothing to count"
            );
            for route in DecodeRoute::ALL {
                let (got, ran) =
                    device_counts(client, source, &channels, &windows, threshold, route);
                assert_eq!(got, want, "{ctx}, {route}");
                if route == DecodeRoute::Copy {
                    assert_eq!(ran, DecodeRoute::Copy, "{ctx}");
                }
            }
            // The decoded windows themselves, back on the host, equal the host's scaled reads
            // of the padded ranges bit for bit.
            let mut seen = 0;
            DevicePass::new(client, source.clone(), windows.clone())
                .channels(channels.clone())
                .run_to_host(|w, values| {
                    let mut host = vec![0.0f32; channels.len() * w.read_len()];
                    source.read(&channels, w.read_global.clone(), &mut host)?;
                    let same = values
                        .iter()
                        .zip(&host)
                        .all(|(a, b)| a.to_bits() == b.to_bits());
                    assert!(same, "{ctx}: window {} differs from the host", w.index);
                    assert_eq!(w.index, windows[seen].index, "{ctx}: windows in order");
                    seen += 1;
                    Ok(Flow::Continue)
                })
                .expect("the pass to the host runs");
            assert_eq!(seen, windows.len(), "{ctx}");
        }
    });
}

#[test]
fn stopping_early_ends_the_pass_cleanly_and_the_next_pass_runs() {
    const NAME: &str = "stopping_early_ends_the_pass_cleanly_and_the_next_pass_runs";
    let (seed, _) = test_rng(NAME);
    let dir = TempDir::new(NAME);
    let sources = recordings(&dir, seed);
    for_each_runtime(NAME, |target, client| {
        for (what, source) in &sources {
            let total = source.info().samples;
            let windows = ChunkSchedule::full_recording(total, 2_000, 0, 0)
                .expect("schedule")
                .into_windows();
            // A watchdog: the pass must end (not hang) once the callback stops it.
            let (done, finished) = mpsc::channel();
            let (client2, source2, windows2) = (client.clone(), source.clone(), windows.clone());
            let pass = std::thread::spawn(move || {
                let mut calls = 0;
                let report = DevicePass::new(&client2, source2, windows2).run(|_, _| {
                    calls += 1;
                    Ok(if calls == 3 {
                        Flow::Stop
                    } else {
                        Flow::Continue
                    })
                });
                let _ = done.send(());
                (report, calls)
            });
            finished
                .recv_timeout(Duration::from_secs(120))
                .unwrap_or_else(|_| panic!("{target}, {what}: the stopped pass hangs"));
            let (report, calls) = pass.join().expect("the pass thread");
            let report = report.expect("a stopped pass is not an error");
            assert_eq!((calls, report.windows), (3, 3), "{target}, {what}");
            assert!(report.stopped_early, "{target}, {what}");
            assert_eq!(report.samples, 6_000, "{target}, {what}");
            // The staging the stopped pass held is free: a full pass on the same device runs.
            let again = DevicePass::new(client, source.clone(), windows.clone())
                .run(|_, _| Ok(Flow::Continue))
                .expect("the next pass");
            assert_eq!(again.windows, windows.len(), "{target}, {what}");
            assert_eq!(again.samples, total, "{target}, {what}");
            // An error from the callback ends the pass with that error.
            let err = DevicePass::new(client, source.clone(), windows.clone())
                .run(|w, _| {
                    if w.index == 1 {
                        Err(dspk_types::DspError::config("stop here"))
                    } else {
                        Ok(Flow::Continue)
                    }
                })
                .expect_err("the callback's error");
            assert!(
                err.to_string().contains("stop here"),
                "{target}, {what}: {err}"
            );
        }
    });
}

#[test]
fn bad_passes_are_refused_with_what_is_wrong() {
    const NAME: &str = "bad_passes_are_refused_with_what_is_wrong";
    for_each_runtime(NAME, |target, client| {
        let source: Arc<dyn RecordingSource> = Arc::new(
            SyntheticRecording::new(SyntheticConfig::default().with_samples(1_000)).unwrap(),
        );
        let windows = ChunkSchedule::full_recording(1_000, 400, 0, 0)
            .unwrap()
            .into_windows();
        let err = DevicePass::new(client, source.clone(), windows.clone())
            .channels(vec![0, 384])
            .run(|_, _| Ok(Flow::Continue))
            .expect_err("channel 384 of 384");
        assert!(err.to_string().contains("channel 384"), "{target}: {err}");
        let beyond = ChunkSchedule::full_recording(2_000, 400, 0, 0)
            .unwrap()
            .into_windows();
        let err = DevicePass::new(client, source.clone(), beyond)
            .run(|_, _| Ok(Flow::Continue))
            .expect_err("windows past the end");
        assert!(err.to_string().contains("1000 samples"), "{target}: {err}");
        let empty = DevicePass::new(client, source, Vec::new())
            .run(|_, _| panic!("no window to hand over"))
            .expect("an empty list of windows is an empty pass");
        assert_eq!(empty.windows, 0);
    });
}
