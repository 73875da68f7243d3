//! Tests of the window loader: order and data, errors, panics, early stop, buffer reuse,
//! progress; every run under a watchdog.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use proptest::prelude::*;

use super::*;
use crate::{
    ChunkSchedule, MemoryOrder, RecordingInfo, SampleFormat, SampleRate, SyntheticConfig,
    SyntheticRecording,
};

/// Runs `body` on its own thread and fails with "hung" when it takes longer than 30 s; a panic
/// of the body is resumed here.
fn watchdog<T: Send + 'static>(body: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    let handle = std::thread::spawn(move || {
        let _ = tx.send(body());
    });
    match rx.recv_timeout(Duration::from_secs(30)) {
        Ok(v) => v,
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            panic!("hung: the loader did not finish in 30 s")
        }
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => match handle.join() {
            Err(payload) => std::panic::resume_unwind(payload),
            Ok(()) => panic!("the watched body ended without a result"),
        },
    }
}

/// The text of a panic payload.
fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// A source wrapping another, counting reads (of either kind), and failing or panicking at
/// read number `fail_at` / `panic_at` (counted from 0; reads happen in window order).
struct Probe<S> {
    inner: S,
    reads: AtomicUsize,
    fail_at: Option<usize>,
    panic_at: Option<usize>,
    /// Addresses of the buffers reads wrote into.
    buffers: Mutex<Vec<usize>>,
}

impl<S: RecordingSource> Probe<S> {
    fn new(inner: S) -> Self {
        Self {
            inner,
            reads: AtomicUsize::new(0),
            fail_at: None,
            panic_at: None,
            buffers: Mutex::new(Vec::with_capacity(4096)),
        }
    }

    fn reads(&self) -> usize {
        self.reads.load(Ordering::SeqCst)
    }

    fn injected(n: usize) -> DspError {
        DspError::Io {
            message: format!("injected failure at read {n}"),
            path: None,
        }
    }

    /// Counts the read, records its buffer and fails or panics where asked.
    fn enter(&self, address: usize) -> DspResult<()> {
        let n = self.reads.fetch_add(1, Ordering::SeqCst);
        self.buffers.lock().unwrap().push(address);
        if self.panic_at == Some(n) {
            panic!("source panic at read {n}");
        }
        if self.fail_at == Some(n) {
            return Err(Self::injected(n));
        }
        Ok(())
    }
}

impl<S: RecordingSource> RecordingSource for Probe<S> {
    fn info(&self) -> &RecordingInfo {
        self.inner.info()
    }

    fn read(&self, channels: &[usize], samples: Range<u64>, out: &mut [f32]) -> DspResult<()> {
        self.enter(out.as_ptr() as usize)?;
        self.inner.read(channels, samples, out)
    }

    fn read_stored(
        &self,
        channels: &[usize],
        samples: Range<u64>,
        out: &mut [u8],
    ) -> DspResult<()> {
        self.enter(out.as_ptr() as usize)?;
        self.inner.read_stored(channels, samples, out)
    }
}

/// A cheap test source: the value of channel `c` at sample `s` is `value(c, s)`, exact in f32.
struct Ramp(RecordingInfo);

fn value(c: usize, s: u64) -> f32 {
    ((c as u64 * 7919 + s * 31) % 65_521) as f32
}

impl Ramp {
    fn new(channels: usize, samples: u64) -> Self {
        let rate = SampleRate::new(30_000.0).unwrap();
        Self(RecordingInfo::new(
            "ramp",
            channels,
            samples,
            rate,
            SampleFormat::F32,
            MemoryOrder::ChannelMajor,
        ))
    }
}

impl RecordingSource for Ramp {
    fn info(&self) -> &RecordingInfo {
        &self.0
    }

    fn read(&self, channels: &[usize], samples: Range<u64>, out: &mut [f32]) -> DspResult<()> {
        let n = crate::check_read(&self.0, channels, &samples, out.len())?;
        for (&c, dst) in channels.iter().zip(out.chunks_exact_mut(n.max(1))) {
            for (k, o) in dst.iter_mut().enumerate() {
                *o = value(c, samples.start + k as u64);
            }
        }
        Ok(())
    }
}

/// A small synthetic recording (int16 stored, gain 0.195) with `channels` channels.
fn synthetic(channels: usize, samples: u64, seed: u64) -> SyntheticRecording {
    let config = SyntheticConfig::neuropixels()
        .with_samples(samples)
        .with_seed(seed)
        .with_channels(channels, vec![], vec![]);
    SyntheticRecording::new(config).unwrap()
}

/// Ten windows of 100 samples over a 1000-sample ramp of 3 channels.
fn ten_windows() -> Vec<HaloWindow> {
    ChunkSchedule::full_recording(1000, 100, 5, 7)
        .unwrap()
        .into_windows()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Windows (a whole schedule or every n-th) arrive in order with the data of direct reads
    /// of a synthetic recording, scaled and stored, for any channel selection.
    #[test]
    fn windows_arrive_in_order_with_the_right_data(
        seed in any::<u64>(),
        n_channels in 1usize..6,
        total in 1u64..5000,
        batch in 1u64..700,
        left in 0u64..300,
        right in 0u64..300,
        step in 1usize..4,
        picks in proptest::collection::vec(0usize..6, 1..8),
    ) {
        let result = watchdog(move || -> Result<(), TestCaseError> {
            let source = synthetic(n_channels, total, seed);
            let channels: Vec<usize> = picks.iter().map(|&p| p % n_channels).collect();
            let schedule = ChunkSchedule::full_recording(total, batch, left, right).unwrap();
            let windows: Vec<HaloWindow> = schedule.windows().iter().step_by(step).cloned().collect();
            let loader = WindowLoader::with_channels(&source, channels.clone()).unwrap();

            let mut seen = Vec::new();
            let mut mismatch = None;
            loader.stream(&windows, |w, data| {
                let mut direct = vec![0f32; channels.len() * w.read_len()];
                source.read(&channels, w.read_global.clone(), &mut direct)?;
                if data != direct.as_slice() && mismatch.is_none() {
                    mismatch = Some(w.index);
                }
                seen.push(w.index);
                Ok(())
            }).unwrap();
            let want: Vec<usize> = windows.iter().map(|w| w.index).collect();
            prop_assert_eq!(&seen, &want);
            prop_assert_eq!(mismatch, None, "scaled data differ from a direct read");

            let mut seen = Vec::new();
            loader.stream_stored(&windows, |w, bytes| {
                let mut direct = vec![0u8; channels.len() * w.read_len() * 2];
                source.read_stored(&channels, w.read_global.clone(), &mut direct)?;
                if bytes != direct.as_slice() && mismatch.is_none() {
                    mismatch = Some(w.index);
                }
                seen.push(w.index);
                Ok(())
            }).unwrap();
            prop_assert_eq!(&seen, &want);
            prop_assert_eq!(mismatch, None, "stored bytes differ from a direct read");
            Ok(())
        });
        result?;
    }
}

#[test]
fn all_channels_of_a_ramp_arrive_channel_major() {
    watchdog(|| {
        let source = Ramp::new(3, 1000);
        let windows = ten_windows();
        let mut calls = 0;
        WindowLoader::new(&source)
            .stream(&windows, |w, data| {
                let n = w.read_len();
                assert_eq!(data.len(), 3 * n);
                for c in 0..3 {
                    for k in 0..n {
                        assert_eq!(data[c * n + k], value(c, w.read_global.start + k as u64));
                    }
                }
                calls += 1;
                Ok(())
            })
            .unwrap();
        assert_eq!(calls, 10);
    });
}

#[test]
fn a_read_error_stops_the_run_and_is_returned() {
    for k in [0, 1, 4, 9] {
        watchdog(move || {
            let mut probe = Probe::new(Ramp::new(3, 1000));
            probe.fail_at = Some(k);
            let windows = ten_windows();
            let mut calls = Vec::new();
            let err = WindowLoader::new(&probe)
                .stream(&windows, |w, _| {
                    calls.push(w.index);
                    Ok(())
                })
                .unwrap_err();
            assert_eq!(err, Probe::<Ramp>::injected(k));
            assert_eq!(
                calls,
                (0..k).collect::<Vec<_>>(),
                "windows before the failure are delivered"
            );
            assert_eq!(probe.reads(), k + 1, "no read after the failing one");
        });
    }
}

#[test]
fn a_read_error_stops_a_stored_run_too() {
    watchdog(|| {
        let mut probe = Probe::new(synthetic(2, 1000, 7));
        probe.fail_at = Some(3);
        let mut calls = 0;
        let err = WindowLoader::new(&probe)
            .stream_stored(&ten_windows(), |_, _| {
                calls += 1;
                Ok(())
            })
            .unwrap_err();
        assert_eq!(err, Probe::<Ramp>::injected(3));
        assert_eq!(calls, 3);
        assert_eq!(probe.reads(), 4);
    });
}

#[test]
fn a_callback_error_stops_reading_and_is_returned() {
    for k in [0, 3, 9] {
        watchdog(move || {
            let probe = Probe::new(Ramp::new(3, 1000));
            let windows = ten_windows();
            let mut calls = 0;
            let err = WindowLoader::new(&probe)
                .stream(&windows, |w, _| {
                    calls += 1;
                    if w.index == k {
                        return Err(DspError::config(format!("callback refuses window {k}")));
                    }
                    Ok(())
                })
                .unwrap_err();
            assert_eq!(
                err,
                DspError::config(format!("callback refuses window {k}"))
            );
            assert_eq!(calls, k + 1);
            assert!(
                probe.reads() <= (k + 2).min(10),
                "{} reads after an error at {k}",
                probe.reads()
            );
        });
    }
}

#[test]
fn a_panic_in_the_callback_reaches_the_caller() {
    for k in [0, 2, 9] {
        watchdog(move || {
            let probe = Probe::new(Ramp::new(3, 1000));
            let windows = ten_windows();
            let caller = std::thread::current().id();
            let outcome = catch_unwind(AssertUnwindSafe(|| {
                WindowLoader::new(&probe).stream(&windows, |w, _| {
                    assert_eq!(
                        std::thread::current().id(),
                        caller,
                        "the callback runs on the caller's thread"
                    );
                    if w.index == k {
                        panic!("callback panic at window {k}");
                    }
                    Ok(())
                })
            }));
            let payload = outcome.expect_err("the panic must surface");
            assert_eq!(
                panic_text(&*payload),
                format!("callback panic at window {k}")
            );
            assert!(probe.reads() <= (k + 2).min(10));
        });
    }
}

#[test]
fn a_panic_in_the_source_reaches_the_caller() {
    for k in [0, 5, 9] {
        watchdog(move || {
            let mut probe = Probe::new(Ramp::new(3, 1000));
            probe.panic_at = Some(k);
            let windows = ten_windows();
            let mut calls = 0;
            let outcome = catch_unwind(AssertUnwindSafe(|| {
                WindowLoader::new(&probe).stream_stored(&windows, |_, _| {
                    calls += 1;
                    Ok(())
                })
            }));
            let payload = outcome.expect_err("the panic must surface");
            assert_eq!(panic_text(&*payload), format!("source panic at read {k}"));
            assert_eq!(calls, k);
            assert_eq!(probe.reads(), k + 1);
        });
    }
}

#[test]
fn an_early_stop_reads_at_most_one_window_past_it() {
    for k in [0, 1, 5, 8, 9] {
        watchdog(move || {
            let probe = Probe::new(synthetic(4, 1000, 3));
            let windows = ten_windows();
            let mut calls = 0;
            let done = WindowLoader::new(&probe)
                .stream_while(&windows, |w, _| {
                    calls += 1;
                    if w.index == k {
                        // Give the reader every chance to run ahead.
                        std::thread::sleep(Duration::from_millis(30));
                        return Ok(false);
                    }
                    Ok(true)
                })
                .unwrap();
            assert!(!done);
            assert_eq!(calls, k + 1);
            assert!(
                probe.reads() <= (k + 2).min(10),
                "{} reads for a stop at {k}",
                probe.reads()
            );
            assert!(probe.reads() > k);

            let probe = Probe::new(synthetic(4, 1000, 3));
            let done = WindowLoader::new(&probe)
                .stream_stored_while(&windows, |w, _| {
                    std::thread::sleep(Duration::from_millis(2));
                    Ok(w.index != k)
                })
                .unwrap();
            assert!(!done);
            assert!(probe.reads() <= (k + 2).min(10));
        });
    }
}

#[test]
fn the_next_window_is_read_while_the_callback_works() {
    watchdog(|| {
        let probe = Probe::new(Ramp::new(3, 1000));
        let windows = ten_windows();
        WindowLoader::new(&probe)
            .stream(&windows, |w, _| {
                if w.index + 1 < windows.len() {
                    // Window i+1 is read while this callback still runs.
                    let deadline = Instant::now() + Duration::from_secs(20);
                    while probe.reads() < w.index + 2 {
                        assert!(
                            Instant::now() < deadline,
                            "window {} was not read ahead",
                            w.index + 1
                        );
                        std::thread::yield_now();
                    }
                }
                Ok(())
            })
            .unwrap();
        assert_eq!(probe.reads(), 10);
    });
}

#[test]
fn two_buffers_are_reused_for_every_window() {
    watchdog(|| {
        let probe = Probe::new(Ramp::new(3, 10_000));
        let schedule = ChunkSchedule::full_recording(10_000, 97, 10, 10).unwrap();
        let mut seen = Vec::with_capacity(schedule.len());
        WindowLoader::new(&probe)
            .stream(schedule.windows(), |_, data| {
                seen.push(data.as_ptr() as usize);
                Ok(())
            })
            .unwrap();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), 2, "callback buffers: {seen:?}");
        let mut written = probe.buffers.lock().unwrap().clone();
        assert_eq!(written.len(), schedule.len());
        written.sort_unstable();
        written.dedup();
        assert_eq!(
            written, seen,
            "reads write into the buffers handed to the callback"
        );
    });
}

#[test]
fn a_later_run_reuses_the_buffers_of_the_last() {
    watchdog(|| {
        let probe = Probe::new(Ramp::new(2, 5000));
        let loader = WindowLoader::new(&probe);
        let long = ChunkSchedule::full_recording(5000, 500, 20, 20)
            .unwrap()
            .into_windows();
        let short = ChunkSchedule::full_recording(3000, 100, 0, 0)
            .unwrap()
            .into_windows();
        let runs: [(&[HaloWindow], bool); 4] = [
            (&long, true),
            (&short, true),
            (&long[3..], true),
            (&long, false),
        ];
        let mut per_run = Vec::new();
        for (windows, to_end) in runs {
            let mut seen = Vec::new();
            let done = loader
                .stream_while(windows, |w, data| {
                    seen.push(data.as_ptr() as usize);
                    Ok(to_end || w.index < 4)
                })
                .unwrap();
            assert_eq!(done, to_end);
            seen.sort_unstable();
            seen.dedup();
            per_run.push(seen);
        }
        assert_eq!(per_run[0].len(), 2);
        for run in &per_run[1..] {
            assert_eq!(run, &per_run[0], "a later run allocated new buffers");
        }
        // Stored runs keep buffers of their own, reused the same way.
        let mut bytes_at = Vec::new();
        for _ in 0..2 {
            loader
                .stream_stored(&long, |_, b| {
                    bytes_at.push(b.as_ptr() as usize);
                    Ok(())
                })
                .unwrap();
        }
        bytes_at.sort_unstable();
        bytes_at.dedup();
        assert_eq!(bytes_at.len(), 2);
        let mut again = Vec::new();
        loader
            .stream(&long, |_, d| {
                again.push(d.as_ptr() as usize);
                Ok(())
            })
            .unwrap();
        again.sort_unstable();
        again.dedup();
        assert_eq!(
            again, per_run[0],
            "the f32 buffers survived the stored runs"
        );
    });
}

#[test]
fn an_empty_window_list_calls_nothing() {
    watchdog(|| {
        let probe = Probe::new(Ramp::new(3, 100));
        let events = Mutex::new(0);
        let sink = |_: &ProgressEvent| *events.lock().unwrap() += 1;
        let loader = WindowLoader::new(&probe).with_progress(&sink);
        let mut calls = 0;
        loader
            .stream(&[], |_, _| {
                calls += 1;
                Ok(())
            })
            .unwrap();
        assert!(loader.stream_while(&[], |_, _| Ok(false)).unwrap());
        loader.stream_stored(&[], |_, _| Ok(())).unwrap();
        assert!(loader.stream_stored_while(&[], |_, _| Ok(true)).unwrap());
        assert_eq!(calls, 0);
        assert_eq!(probe.reads(), 0);
        assert_eq!(*events.lock().unwrap(), 0);
    });
}

#[test]
fn progress_counts_windows() {
    watchdog(|| {
        let source = Ramp::new(2, 1000);
        let events = Mutex::new(Vec::new());
        let sink = |e: &ProgressEvent| events.lock().unwrap().push(e.clone());
        let windows = ten_windows();
        let picked: Vec<HaloWindow> = windows.iter().step_by(3).cloned().collect();
        let loader = WindowLoader::new(&source).with_progress(&sink);
        assert!(loader.stream_while(&picked, |_, _| Ok(true)).unwrap());
        let events = events.into_inner().unwrap();
        let want: Vec<ProgressEvent> = (0..=4)
            .map(|d| ProgressEvent::new("windows", d, 4, "windows"))
            .collect();
        assert_eq!(events, want);
    });
}

#[test]
fn bad_channels_and_windows_are_refused_before_reading() {
    let probe = Probe::new(Ramp::new(3, 1000));
    assert_eq!(
        WindowLoader::with_channels(&probe, vec![0, 3]).unwrap_err(),
        DspError::InvalidChannel { index: 3, count: 3 }
    );
    let e = WindowLoader::with_channels(&probe, vec![]).unwrap_err();
    assert!(
        matches!(e, DspError::InvalidConfig(_)) && e.to_string().contains("at least one channel"),
        "{e}"
    );

    // Windows of a longer recording: the one past the end is refused before any read.
    let mut windows = ten_windows();
    windows.extend(
        ChunkSchedule::full_recording(1200, 100, 0, 0)
            .unwrap()
            .into_windows()
            .into_iter()
            .skip(10),
    );
    let mut calls = 0;
    let err = watchdog(move || {
        let e = WindowLoader::new(&probe).stream(&windows, |_, _| {
            calls += 1;
            Ok(())
        });
        assert_eq!((calls, probe.reads()), (0, 0));
        e
    })
    .unwrap_err();
    assert_eq!(
        err,
        DspError::SampleRange {
            start: 1000,
            end: 1100,
            total: 1000
        }
    );
}

#[test]
fn a_loader_can_be_shared_and_reused() {
    watchdog(|| {
        let source: Arc<dyn RecordingSource> = Arc::new(Ramp::new(2, 500));
        let loader = WindowLoader::with_channels(&*source, vec![1]).unwrap();
        assert_eq!(loader.channels(), &[1]);
        assert_eq!(loader.source().info().name, "ramp");
        assert!(format!("{loader:?}").contains("ramp"));
        let windows = ChunkSchedule::full_recording(500, 64, 3, 3)
            .unwrap()
            .into_windows();
        let mut sums = Vec::new();
        for _ in 0..2 {
            let mut sum = 0f64;
            loader
                .clone()
                .stream(&windows, |w, data| {
                    sum += w
                        .valid_local
                        .clone()
                        .map(|k| f64::from(data[k]))
                        .sum::<f64>();
                    Ok(())
                })
                .unwrap();
            sums.push(sum);
        }
        let want: f64 = (0..500).map(|s| f64::from(value(1, s))).sum();
        assert_eq!(sums, vec![want, want]);
    });
}
