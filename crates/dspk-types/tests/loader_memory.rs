//! Host memory of the window loader stays at two windows, whatever the recording's length.
//!
//! Measured as the process's peak resident set (`VmHWM`, reset through `/proc/self/clear_refs`)
//! rather than with a counting global allocator: that would need `unsafe impl GlobalAlloc`,
//! which the workspace denies outside dspk-exit and dspk-device. Its own test binary with a
//! single test, so nothing else allocates meanwhile.

#![cfg(target_os = "linux")]

use std::fmt::Write as _;

use dspk_types::{
    ChunkSchedule, HaloWindow, RecordingSource, SyntheticConfig, SyntheticRecording, WindowLoader,
};

const CHANNELS: usize = 4;
/// Samples owned by a window (a window of 4 channels is 4 MiB of f32).
const BATCH: u64 = 1 << 18;
const HALO: u64 = 64;
const MIB: u64 = 1 << 20;

/// A field of `/proc/self/status`, in bytes.
fn status_bytes(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status")
        .expect("/proc/self/status is readable on Linux");
    let line = status
        .lines()
        .find(|l| l.starts_with(field))
        .unwrap_or_else(|| panic!("{field} missing from /proc/self/status"));
    let kb: u64 = line[field.len()..]
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .unwrap_or_else(|e| panic!("bad {field} line {line:?}: {e}"));
    kb * 1024
}

/// Resets the peak resident set to the current one.
fn reset_peak() {
    std::fs::write("/proc/self/clear_refs", "5")
        .expect("writing 5 to /proc/self/clear_refs resets VmHWM");
}

/// Streams `windows` of `source` with a callback that reads every value; returns the peak
/// resident set during the run and the sum (so nothing is optimised away).
fn peak_of_run(source: &SyntheticRecording, windows: &[HaloWindow]) -> (u64, f64) {
    reset_peak();
    let mut sum = 0f64;
    WindowLoader::new(source)
        .stream(windows, |_, data| {
            sum += data.iter().map(|&v| f64::from(v)).sum::<f64>();
            Ok(())
        })
        .expect("the synthetic recording streams");
    (status_bytes("VmHWM:"), sum)
}

fn recording(samples: u64) -> SyntheticRecording {
    let config = SyntheticConfig::neuropixels()
        .with_samples(samples)
        .with_seed(0x5eed)
        .with_channels(CHANNELS, vec![], vec![]);
    SyntheticRecording::new(config).expect("a valid synthetic configuration")
}

#[test]
fn peak_host_memory_is_two_windows_whatever_the_length() {
    let n = 4u64;
    // Recordings of N windows and 10 N windows, streamed whole, and one of over 10^9 samples
    // (about 10 hours at 30 kHz) streamed every 400-th window.
    let short = recording(n * BATCH);
    let long = recording(10 * n * BATCH);
    let huge = recording(1_100_000_000);
    let short_windows =
        ChunkSchedule::full_recording(short.info().samples, BATCH, HALO, HALO).unwrap();
    let long_windows =
        ChunkSchedule::full_recording(long.info().samples, BATCH, HALO, HALO).unwrap();
    let huge_windows: Vec<HaloWindow> =
        ChunkSchedule::full_recording(huge.info().samples, BATCH, HALO, HALO)
            .unwrap()
            .into_windows()
            .into_iter()
            .step_by(400)
            .collect();
    assert_eq!(short_windows.len() as u64, n);
    assert_eq!(long_windows.len() as u64, 10 * n);
    let window_bytes = (BATCH + 2 * HALO) * CHANNELS as u64 * 4;

    // Warm up once with a tiny run (thread start, lazy statics), then take the baseline.
    let tiny = ChunkSchedule::full_recording(1000, 100, 1, 1).unwrap();
    WindowLoader::new(&short)
        .stream(tiny.windows(), |_, _| Ok(()))
        .unwrap();
    let baseline = status_bytes("VmRSS:");

    // Nothing allocates between the runs but the runs: the report is written into room taken
    // now and printed at the end (printing under the test harness's capture allocates, and the
    // allocator could keep a freed window's pages resident behind such a block).
    let mut peaks = Vec::with_capacity(4);
    let mut report = String::with_capacity(4096);
    for (name, source, windows) in [
        ("short", &short, short_windows.windows()),
        ("long", &long, long_windows.windows()),
        ("huge, every 400th", &huge, &huge_windows[..]),
        ("short again", &short, short_windows.windows()),
    ] {
        let (peak, sum) = peak_of_run(source, windows);
        assert!(
            sum.is_finite() && sum != 0.0,
            "{name}: the callback saw real data"
        );
        let grown = peak.saturating_sub(baseline);
        writeln!(
            report,
            "{name}: {} windows of {} samples, recording {} samples: peak {:.1} MiB above baseline",
            windows.len(),
            BATCH,
            source.info().samples,
            grown as f64 / MIB as f64
        )
        .expect("writing to a String cannot fail");
        peaks.push((name, grown));
    }
    print!("{report}");
    // The buffers show up in the measure: the first run grows by about two windows.
    assert!(
        peaks[0].1 >= window_bytes,
        "the measure missed the buffers: {peaks:?}"
    );
    for &(name, grown) in &peaks {
        assert!(
            grown <= 2 * window_bytes + 2 * MIB,
            "{name}: {grown} bytes is more than two windows ({window_bytes} each) + 2 MiB"
        );
        assert!(
            grown.abs_diff(peaks[0].1) <= MIB,
            "{name}: peak {grown} bytes differs from the short run's {} bytes",
            peaks[0].1
        );
    }
}
