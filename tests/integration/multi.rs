//! The multi-device pass with two devices opened on one adapter (lavapipe here, one GPU on a
//! GPU machine): a scan over two devices is the scan over one bit for bit; every window is
//! decoded once, equal to the host's read; a device that fails mid-pass or in its setup stops
//! the pass with an error naming it, without hanging or holding staging; several recordings
//! over two devices give each recording's one-device result; devices prepared while a pass
//! starts on them give the same scan.

use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use cubecl::client::Client;
use dspk_device::upload::staging_in_use;
use dspk_io::{WriteOptions, write_binary};
use dspk_kernels::{ChannelStats, DecodedWindow, read_f32};
use dspk_stream::{
    Flow, MultiPass, PassDevice, Prepared, ScanJob, ScanOptions, ScanResult, WindowWorker,
    is_prepared, prepare, scan_each, scan_on,
};
use dspk_tests::{TempDir, for_each_runtime, test_rng};
use dspk_types::{
    ChunkSchedule, ComputeTarget, DspError, DspResult, HaloWindow, MemoryOrder, NoProgress,
    RecordingSource, SampleFormat, SyntheticConfig, SyntheticRecording,
};
use rand::Rng as _;

/// The tests of this file share the second device (an adapter takes one): one at a time, so
/// that what one sees of its staging is its own (no other test file uses the second device).
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// The test's client and a second device on its adapter (on the cpu runtime, the one CPU
/// client twice: `dspk_tests::second_client`).
fn two_devices(target: ComputeTarget, client: &Client) -> Vec<PassDevice> {
    let second = dspk_tests::second_client(target, client);
    vec![
        PassDevice {
            client: client.clone(),
            label: "first".into(),
        },
        PassDevice {
            client: second,
            label: "second".into(),
        },
    ]
}

/// Bit-level equality of two scans' statistics.
fn same_bits(a: &[ChannelStats], b: &[ChannelStats]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.same_bits(y))
}

/// A synthetic recording of `samples` and a raw int16 file of another seed.
fn sources(dir: &TempDir, seed: u64, samples: u64) -> Vec<Arc<dyn RecordingSource>> {
    let a = SyntheticConfig::default()
        .with_samples(samples)
        .with_seed(seed);
    let synthetic: Arc<dyn RecordingSource> = Arc::new(SyntheticRecording::new(a).unwrap());
    let b = SyntheticConfig::default()
        .with_samples(samples / 2 + 7)
        .with_seed(seed ^ 0x5eed);
    let other = SyntheticRecording::new(b).unwrap();
    let path = dir.path().join(format!("multi-{seed}.bin"));
    let options = WriteOptions {
        format: Some(SampleFormat::I16),
        order: Some(MemoryOrder::TimeMajor),
        ..WriteOptions::default()
    };
    write_binary(&other, &path, &options, &NoProgress).expect("write the raw file");
    let raw = dspk_io::open(&path)
        .expect("open the raw file")
        .into_source();
    vec![synthetic, raw]
}

#[test]
fn a_scan_over_two_devices_is_the_scan_over_one_bit_for_bit() {
    const NAME: &str = "a_scan_over_two_devices_is_the_scan_over_one_bit_for_bit";
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let (seed, mut rng) = test_rng(NAME);
    let dir = TempDir::new(NAME);
    let samples = rng.random_range(60_000..90_000);
    let window = rng.random_range(2_000..5_000);
    let all = sources(&dir, seed, samples);
    for_each_runtime(NAME, |target, client| {
        let devices = two_devices(target, client);
        for source in &all {
            let options = ScanOptions {
                window_samples: Some(window),
                ..ScanOptions::default()
            };
            let one = scan_on(&devices[..1], source.clone(), &options).expect("one device");
            let two = scan_on(&devices, source.clone(), &options).expect("two devices");
            let ctx = format!(
                "{target}, seed {seed}, window {window}, {}",
                source.info().name
            );
            assert!(
                same_bits(&one.stats, &two.stats),
                "{ctx}: the statistics differ"
            );
            assert_eq!(one.mask, two.mask, "{ctx}");
            assert_eq!(two.devices.len(), 2, "{ctx}");
            let windows: usize = two.devices.iter().map(|d| d.report.windows).sum();
            assert_eq!(windows, two.report.windows, "{ctx}");
            assert_eq!(two.report.windows, one.report.windows, "{ctx}");
            assert_eq!(two.report.samples, source.info().samples, "{ctx}");
            // And both equal the host's statistics of the same values (to f64 rounding of a
            // different summation order).
            let info = source.info();
            let mut values = vec![0.0f32; info.samples as usize];
            for (c, got) in one.stats.iter().enumerate() {
                source.read(&[c], 0..info.samples, &mut values).unwrap();
                let host = ChannelStats::from_values(&values);
                assert_eq!(
                    (got.count, got.min, got.max),
                    (host.count, host.min, host.max)
                );
                assert!(
                    (got.mean() - host.mean()).abs() <= 1e-5 * host.std().max(1e-3),
                    "{ctx}: mean {} vs {}",
                    got.mean(),
                    host.mean()
                );
                assert!(
                    (got.std() - host.std()).abs() <= 1e-5 * host.std().max(1e-3),
                    "{ctx}: std {} vs {}",
                    got.std(),
                    host.std()
                );
            }
            assert_eq!(
                staging_in_use(&devices[1].client),
                0,
                "{ctx}: staging held after the scans"
            );
        }
    });
}

/// A worker that records which windows it got and checks each against the host's read.
struct Checker<'a> {
    client: Client,
    source: &'a dyn RecordingSource,
    seen: &'a Mutex<Vec<(usize, usize)>>,
    device: usize,
    /// Fail at this many windows (an injected device failure).
    fail_at: Option<usize>,
    /// Device 0 holds its first window until device 1 has one (so that device 1 gets windows
    /// however much faster device 0 sets up or decodes); device 1 says so here.
    hold: Option<&'a Hold>,
    done: usize,
}

/// Whether device 1 has had a window yet.
#[derive(Default)]
struct Hold {
    started: Mutex<bool>,
    changed: Condvar,
}

impl Hold {
    fn release(&self) {
        *self.started.lock().unwrap() = true;
        self.changed.notify_all();
    }

    /// Until device 1 has a window, or a minute (a failure then shows as device 1 doing none).
    fn wait(&self) {
        let started = self.started.lock().unwrap();
        let _ = self
            .changed
            .wait_timeout_while(started, Duration::from_secs(60), |s| !*s)
            .unwrap();
    }
}

impl WindowWorker for Checker<'_> {
    type Output = usize;

    fn window(
        &mut self,
        position: usize,
        window: &HaloWindow,
        decoded: &DecodedWindow<'_>,
    ) -> DspResult<Flow> {
        if let Some(hold) = self.hold {
            match self.device {
                0 if self.done == 0 => hold.wait(),
                1 => hold.release(),
                _ => {}
            }
        }
        if self.fail_at == Some(self.done) {
            return Err(DspError::config("injected failure"));
        }
        let channels = decoded.channels();
        let got = read_f32(&self.client, decoded.handle(), channels * window.read_len())?;
        let all: Vec<usize> = (0..channels).collect();
        let mut want = vec![0.0f32; got.len()];
        self.source
            .read(&all, window.read_global.clone(), &mut want)?;
        assert!(
            got.iter()
                .zip(&want)
                .all(|(a, b)| a.to_bits() == b.to_bits()),
            "window {position} on device {} differs from the host",
            self.device
        );
        self.seen.lock().unwrap().push((position, self.device));
        self.done += 1;
        Ok(Flow::Continue)
    }

    fn finish(self) -> DspResult<usize> {
        Ok(self.done)
    }
}

#[test]
fn every_window_is_decoded_once_and_a_failing_device_stops_the_pass() {
    const NAME: &str = "every_window_is_decoded_once_and_a_failing_device_stops_the_pass";
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let (seed, mut rng) = test_rng(NAME);
    let dir = TempDir::new(NAME);
    let all = sources(&dir, seed, 40_000);
    let batch = rng.random_range(1_500..3_000);
    for_each_runtime(NAME, |target, client| {
        let devices = two_devices(target, client);
        for source in &all {
            let total = source.info().samples;
            let windows = ChunkSchedule::full_recording(total, batch, 31, 17)
                .unwrap()
                .into_windows();
            let ctx = format!(
                "{target}, seed {seed}, batch {batch}, {}",
                source.info().name
            );
            let seen = Mutex::new(Vec::new());
            let report = MultiPass::new(devices.clone(), source.clone(), windows.clone())
                .run(|d, client| {
                    Ok(Checker {
                        client: client.clone(),
                        source: &**source,
                        seen: &seen,
                        device: d,
                        fail_at: None,
                        hold: None,
                        done: 0,
                    })
                })
                .expect("the pass");
            // The pass began when the first device started.
            let first_start = report.devices.iter().map(|d| d.started_after).min();
            assert_eq!(first_start, Some(Duration::ZERO), "{ctx}");
            let mut positions: Vec<usize> = seen.lock().unwrap().iter().map(|p| p.0).collect();
            positions.sort_unstable();
            assert_eq!(positions, (0..windows.len()).collect::<Vec<_>>(), "{ctx}");
            let outputs: usize = report.devices.iter().map(|d| d.output).sum();
            assert_eq!(outputs, windows.len(), "{ctx}");
            assert_eq!(report.total.samples, total, "{ctx}");

            // The second device fails at its second window (the first device holds its first
            // window until the second has one): the pass ends with its error, within the
            // watchdog's time, and holds no staging afterwards. Then the first device fails in
            // its setup: the pass ends with the first device's error.
            assert!(windows.len() >= 4, "{ctx}: {} windows", windows.len());
            for failing in ["mid-pass", "setup"] {
                let (sent, finished) = mpsc::channel();
                let (devs, src, wins) = (devices.clone(), source.clone(), windows.clone());
                let pass = std::thread::spawn(move || {
                    let seen = Mutex::new(Vec::new());
                    let hold = Hold::default();
                    let outcome = MultiPass::new(devs, src.clone(), wins).run(|d, client| {
                        if failing == "setup" && d == 0 {
                            return Err(DspError::config("injected setup failure"));
                        }
                        Ok(Checker {
                            client: client.clone(),
                            source: &*src,
                            seen: &seen,
                            device: d,
                            fail_at: (d == 1).then_some(1),
                            hold: Some(&hold),
                            done: 0,
                        })
                    });
                    let _ = sent.send(());
                    outcome.map(|r| r.total.windows)
                });
                finished
                    .recv_timeout(Duration::from_secs(180))
                    .unwrap_or_else(|_| {
                        panic!("{ctx}: the pass with a device failing {failing} hangs")
                    });
                let (who, what) = match failing {
                    "setup" => ("first", "injected setup failure"),
                    _ => ("second", "injected failure"),
                };
                match pass.join().expect("the pass thread") {
                    Err(DspError::OnDevice { device, error }) => {
                        assert_eq!(device, who, "{ctx}, failing {failing}");
                        assert!(error.to_string().contains(what), "{ctx}: {error}");
                    }
                    other => panic!("{ctx}: expected {who}'s error, got {other:?}"),
                }
                assert_eq!(
                    staging_in_use(&devices[1].client),
                    0,
                    "{ctx}: staging held after the pass failing {failing}"
                );
            }
        }
    });
}

#[test]
fn several_recordings_over_two_devices_give_each_ones_result() {
    const NAME: &str = "several_recordings_over_two_devices_give_each_ones_result";
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let (seed, mut rng) = test_rng(NAME);
    let dir = TempDir::new(NAME);
    let mut all = sources(&dir, seed, 30_000);
    for k in 0..3u64 {
        let config = SyntheticConfig::default()
            .with_samples(rng.random_range(10_000..25_000))
            .with_seed(seed.wrapping_add(k + 1));
        all.push(Arc::new(SyntheticRecording::new(config).unwrap()));
    }
    for_each_runtime(NAME, |target, client| {
        let devices = two_devices(target, client);
        let options = ScanOptions {
            window_samples: Some(4_000),
            ..ScanOptions::default()
        };
        let jobs: Vec<ScanJob<'_>> = all
            .iter()
            .map(|s| ScanJob {
                source: s.clone(),
                options: options.clone(),
            })
            .collect();
        let many = scan_each(&devices, &jobs);
        assert_eq!(many.len(), all.len());
        for (source, result) in all.iter().zip(many) {
            let ctx = format!("{target}, seed {seed}, {}", source.info().name);
            let result: ScanResult = result.expect("each recording scans");
            let alone = scan_on(&devices[..1], source.clone(), &options).expect("alone");
            assert!(same_bits(&result.stats, &alone.stats), "{ctx}");
            assert_eq!(result.report.samples, source.info().samples, "{ctx}");
            assert_eq!(result.devices.len(), 1, "{ctx}: one device per recording");
        }
    });
}

#[test]
fn devices_prepared_while_a_pass_starts_scan_as_one_device() {
    const NAME: &str = "devices_prepared_while_a_pass_starts_scan_as_one_device";
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let (seed, mut rng) = test_rng(NAME);
    let config = SyntheticConfig::default()
        .with_samples(rng.random_range(20_000..40_000))
        .with_seed(seed);
    let source: Arc<dyn RecordingSource> = Arc::new(SyntheticRecording::new(config).unwrap());
    let options = ScanOptions {
        window_samples: Some(rng.random_range(2_000..6_000)),
        ..ScanOptions::default()
    };
    for_each_runtime(NAME, |target, client| {
        let devices = two_devices(target, client);
        let ctx = format!("{target}, seed {seed}");
        // The preparing threads compile while the pass's own setups compile too: each waits
        // for the compile in flight and then takes the kernel kept.
        let prepared: Vec<Prepared> = devices.iter().map(|d| prepare(&d.client)).collect();
        let two = scan_on(&devices, source.clone(), &options).expect("two devices");
        for p in prepared {
            p.wait()
                .unwrap_or_else(|e| panic!("{ctx}: preparing failed: {e}"));
        }
        let one = scan_on(&devices[..1], source.clone(), &options).expect("one device");
        assert!(
            same_bits(&one.stats, &two.stats),
            "{ctx}: the statistics differ"
        );
        assert_eq!(two.report.samples, source.info().samples, "{ctx}");
        for d in &devices {
            // Only wgpu devices have staging kernels to prepare.
            assert_eq!(
                is_prepared(&d.client),
                target == ComputeTarget::Wgpu,
                "{ctx}: {}",
                d.label
            );
        }
        // Preparing a device whose kernels are kept compiles nothing and succeeds.
        prepare(&devices[1].client)
            .wait()
            .unwrap_or_else(|e| panic!("{ctx}: preparing again failed: {e}"));
    });
}
