//! Measures how fast the synthetic recording computes samples (run with `--release`).
//!
//! `cargo run --release -p dspk-types --example synthetic_throughput`
//!
//! Prints rates by wall time and by the thread's CPU time (from `/proc/thread-self/stat` on
//! Linux), so that a loaded machine still gives a fair single-thread figure.

use std::time::Instant;

use dspk_types::{RecordingSource, SyntheticRecording};

fn main() -> Result<(), dspk_types::DspError> {
    let rec = SyntheticRecording::neuropixels(10 * 3600 * 30_000);
    let channels: Vec<usize> = (0..384).collect();
    let window = 30_000u64;
    let values = 384 * window as usize;
    let mut f32_out = vec![0f32; values];
    let mut bytes = vec![0u8; 2 * values];
    let start_sample = rec.info().samples - 20 * window;
    let mut checksum = 0f64;
    for (what, pass) in [
        ("read (f32, channel-major)", 0),
        ("read_stored (int16 bytes)", 1),
        ("read_native (f32, time-major)", 2),
    ] {
        let (t0, c0) = (Instant::now(), cpu_seconds());
        let mut s = start_sample;
        for _ in 0..10 {
            match pass {
                0 => rec.read(&channels, s..s + window, &mut f32_out)?,
                1 => rec.read_stored(&channels, s..s + window, &mut bytes)?,
                _ => rec.read_native(s..s + window, &mut f32_out).map(|_| ())?,
            }
            checksum += f64::from(f32_out[values / 2]) + f64::from(bytes[values]);
            s += window;
        }
        let secs = t0.elapsed().as_secs_f64();
        let samples = 10.0 * values as f64;
        let cpu = cpu_seconds().zip(c0).map(|(b, a)| b - a);
        let by_cpu = cpu.map_or("n/a".to_string(), |c| format!("{:.0}", samples / c / 1e6));
        println!(
            "{what}: {:.0} M samples/s by wall time, {by_cpu} M samples/s by CPU time ({samples:.3e} samples)",
            samples / secs / 1e6
        );
    }
    println!("checksum {checksum}");
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
