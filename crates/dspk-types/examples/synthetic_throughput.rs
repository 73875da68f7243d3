//! Measures how fast the synthetic recording computes samples on one thread (run with `--release`).
//!
//! `cargo run --release -p dspk-types --example synthetic_throughput [-- ROUNDS [THREADS]]`
//!
//! Reads windows of 384 channels × 30 000 samples (one second) near the end of a ten-hour default
//! probe, through `read_stored` (int16) and `read` (f32) of every channel, `ROUNDS` times (default 7) of 10 windows each, rotating the
//! windows so no round reads what another did. Prints the best and the median round, by wall
//! time and by the thread's CPU time (from `/proc/thread-self/stat` on Linux, 10 ms ticks), so a
//! loaded machine still gives a fair single-thread figure. `read_stored` of every channel is the
//! path `dspk scan` takes (the native reads are the same reads: the source's native order is
//! channel-major).
//!
//! With `THREADS` above 1 it then times `read_stored` the way `dspk scan` calls it: each window
//! is split into 4 × `THREADS` ranges of whole channels, handed out in turn to `THREADS` threads
//! (started once per round), each reading into a buffer of its own; it prints the total rate and
//! its multiple of real time (384 channels at 30 kHz: 11.52 M samples/s).
//!
//! Measured 2026-11-30, `read_stored_native` when it was time-major (a transpose on the host),
//! best round (medians within ~15 %; both machines shared, so figures vary by up to 1.5×
//! between runs):
//!
//! | machine | hash-per-sample model (before) | table model (after) |
//! | --- | --- | --- |
//! | 2-core dev box, 1 thread | 130–156 M samples/s | 840–1000 M samples/s |
//! | H200 host, 1 thread | 143–192 M samples/s | 690–1260 M samples/s |
//! | H200 host, 16 threads | 88–112 M samples/s per thread, 120–156× real time | 540–650 per thread, 750–900× real time |

use std::time::Instant;

use dspk_types::{RecordingSource, SyntheticRecording};

const WINDOW: u64 = 30_000;
const WINDOWS_PER_ROUND: u64 = 10;

fn main() -> Result<(), dspk_types::DspError> {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(7)
        .max(1);
    let t_build = Instant::now();
    let rec = SyntheticRecording::neuropixels(10 * 3600 * 30_000);
    println!(
        "built the ten-hour default probe in {:.2} ms",
        t_build.elapsed().as_secs_f64() * 1e3
    );
    let channels: Vec<usize> = (0..384).collect();
    let values = 384 * WINDOW as usize;
    let mut f32_out = vec![0f32; values];
    let mut bytes = vec![0u8; 2 * values];
    let first = rec.info().samples - (rounds as u64 + 1) * WINDOWS_PER_ROUND * WINDOW;
    let mut checksum = 0f64;
    for (what, pass) in [
        ("read_stored (int16, channel-major)", 1),
        ("read (f32, channel-major)", 0),
    ] {
        let mut wall = Vec::new();
        let mut cpu = Vec::new();
        for round in 0..rounds {
            let (t0, c0) = (Instant::now(), cpu_seconds());
            let mut s = first + round as u64 * WINDOWS_PER_ROUND * WINDOW;
            for _ in 0..WINDOWS_PER_ROUND {
                let w = s..s + WINDOW;
                match pass {
                    0 => rec.read(&channels, w, &mut f32_out)?,
                    _ => rec.read_stored(&channels, w, &mut bytes)?,
                }
                checksum += f64::from(f32_out[values / 2]) + f64::from(bytes[values]);
                s += WINDOW;
            }
            wall.push(t0.elapsed().as_secs_f64());
            if let Some(c) = cpu_seconds().zip(c0).map(|(b, a)| b - a) {
                cpu.push(c);
            }
        }
        let samples = (WINDOWS_PER_ROUND as usize * values) as f64;
        let rate = |secs: &mut Vec<f64>| -> String {
            secs.sort_by(f64::total_cmp);
            match (secs.first(), secs.get(secs.len() / 2)) {
                (Some(&best), Some(&med)) if best > 0.0 => format!(
                    "best {:5.0}, median {:5.0}",
                    samples / best / 1e6,
                    samples / med / 1e6
                ),
                _ => "n/a".to_string(),
            }
        };
        println!(
            "{what:<40} M samples/s: wall {} | cpu {} ({rounds} rounds of {samples:.3e} samples)",
            rate(&mut wall),
            rate(&mut cpu)
        );
    }
    let threads: usize = std::env::args()
        .nth(2)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1);
    if threads > 1 {
        threaded(&rec, rounds, threads, first)?;
    }
    println!("checksum {checksum}");
    Ok(())
}

/// `read_stored` of whole windows by `threads` threads, in ranges of whole channels taken in
/// turn (as `dspk scan`'s fill threads take the parts of a window), each thread into a buffer
/// of its own; the threads start once per round.
fn threaded(
    rec: &SyntheticRecording,
    rounds: usize,
    threads: usize,
    first: u64,
) -> Result<(), dspk_types::DspError> {
    let count = rec.info().channel_count();
    let row = 2 * WINDOW as usize;
    let per_part = count.div_ceil(4 * threads);
    let parts = count.div_ceil(per_part);
    let mut wall = Vec::new();
    for round in 0..rounds {
        let t0 = Instant::now();
        let start = first + round as u64 * WINDOWS_PER_ROUND * WINDOW;
        let next = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads)
                .map(|_| {
                    scope.spawn(|| {
                        let mut part = vec![0u8; row * per_part];
                        loop {
                            let job = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            if job >= WINDOWS_PER_ROUND as usize * parts {
                                return Ok::<(), dspk_types::DspError>(());
                            }
                            let (w, k) = (job / parts, job % parts);
                            let chans: Vec<usize> =
                                (k * per_part..count.min((k + 1) * per_part)).collect();
                            let s = start + w as u64 * WINDOW;
                            rec.read_stored(&chans, s..s + WINDOW, &mut part[..row * chans.len()])?;
                        }
                    })
                })
                .collect();
            handles
                .into_iter()
                .try_for_each(|h| h.join().expect("a reader thread panicked"))
        })?;
        wall.push(t0.elapsed().as_secs_f64());
    }
    wall.sort_by(f64::total_cmp);
    let samples = (WINDOWS_PER_ROUND * WINDOW) as f64 * count as f64;
    let real_time = count as f64 * rec.info().sample_rate.rate_hz();
    for (what, secs) in [("best", wall[0]), ("median", wall[wall.len() / 2])] {
        let rate = samples / secs;
        println!(
            "read_stored on {threads} threads, {what}: {:.0} M samples/s ({:.0} per thread), \
             {:.1} GB/s, {:.0} x real time",
            rate / 1e6,
            rate / 1e6 / threads as f64,
            2.0 * rate / 1e9,
            rate / real_time
        );
    }
    Ok(())
}

/// This thread's user + system CPU time in seconds, where `/proc` offers it.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    // Fields after the command name (which is in parentheses and may hold spaces).
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}
