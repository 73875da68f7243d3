//! BENCH.md H1: `read` of every channel of a page-cached int16 time-major file into
//! channel-major f32 µV, against memcpy bandwidth measured in the same run.
//!
//! `cargo run --release -p dspk-io --example h1 [-- SECONDS [PATH]]` (default 20 s of 384
//! channels at 30 kHz, 460.8 MB, in /tmp). Prints bytes, times and the ratio.

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use dspk_io::BinaryRecording;
use dspk_types::RecordingSource;

const CHANNELS: usize = 384;
const RATE: usize = 30_000;
const REPEATS: usize = 7;

/// Nanoseconds this thread has run on a CPU (Linux; 0 elsewhere): on a shared machine the
/// on-CPU time of a compute-bound pass is steadier than its wall time.
fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|v| v.parse().ok()))
        .unwrap_or(0)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn spread(v: &[f64]) -> (f64, f64) {
    let min = v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = v.iter().copied().fold(0.0, f64::max);
    (min, max)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let seconds: usize = args.get(1).map_or(Ok(20), |s| s.parse())?;
    let path = PathBuf::from(args.get(2).map_or("/tmp/dspk-h1.bin", String::as_str));
    let samples = seconds * RATE;

    // Write the file once (xorshift noise, not zeros), then read it once so it is page-cached.
    let bytes = samples * CHANNELS * 2;
    {
        let mut f = std::io::BufWriter::with_capacity(1 << 22, std::fs::File::create(&path)?);
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut frame = vec![0u8; CHANNELS * 2];
        for _ in 0..samples {
            for v in frame.chunks_exact_mut(2) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                v.copy_from_slice(&((x >> 40) as i16 >> 6).to_le_bytes());
            }
            f.write_all(&frame)?;
        }
        f.flush()?;
    }
    let sidecar = format!(
        r#"{{"sample_rate": {RATE}, "channel_count": {CHANNELS}, "format": "int16", "order": "time-major",
            "channels": [{}]}}"#,
        (0..CHANNELS)
            .map(|c| format!(
                r#"{{"gain": {}, "unit": "uV"}}"#,
                2.34375 + c as f64 * 0.001
            ))
            .collect::<Vec<_>>()
            .join(",")
    );
    std::fs::write(dspk_io::sidecar_path(&path), sidecar)?;
    let rec = BinaryRecording::open(&path)?;
    assert_eq!(rec.info().samples as usize, samples);
    let all: Vec<usize> = (0..CHANNELS).collect();
    let window = RATE;
    let mut out = vec![0f32; CHANNELS * window];

    let mut cpu_times = Vec::new();
    let mut pass = || -> Result<f64, dspk_types::DspError> {
        let cpu = thread_cpu_ns();
        let t = Instant::now();
        let mut checksum = 0f64;
        for w in 0..seconds {
            let s = (w * window) as u64;
            rec.read(&all, s..s + window as u64, &mut out)?;
            checksum += f64::from(out[w % out.len()]);
        }
        let dt = t.elapsed().as_secs_f64();
        cpu_times.push((thread_cpu_ns() - cpu) as f64 * 1e-9);
        std::hint::black_box(checksum);
        Ok(dt)
    };
    pass()?; // warm: page cache and mapping
    let read_times: Vec<f64> = (0..REPEATS).map(|_| pass()).collect::<Result<_, _>>()?;

    // memcpy of a 256 MB buffer, rotating between two destinations.
    let n = 256 << 20;
    let src = vec![1u8; n];
    let mut dst = [vec![0u8; n], vec![0u8; n]];
    for d in &mut dst {
        d.copy_from_slice(&src);
    }
    let mut copy_cpu = Vec::new();
    let copy_times: Vec<f64> = (0..REPEATS)
        .map(|i| {
            let cpu = thread_cpu_ns();
            let t = Instant::now();
            dst[i % 2].copy_from_slice(std::hint::black_box(&src));
            std::hint::black_box(&dst[i % 2]);
            let dt = t.elapsed().as_secs_f64();
            copy_cpu.push((thread_cpu_ns() - cpu) as f64 * 1e-9);
            dt
        })
        .collect();

    let (rmin, rmax) = spread(&read_times);
    let (cmin, cmax) = spread(&copy_times);
    let read_t = median(read_times);
    let copy_t = median(copy_times);
    let moved = samples as f64 * CHANNELS as f64 * 6.0; // 2 B read + 4 B written per sample
    let read_bw = moved / read_t / 1e9;
    let copy_bw = 2.0 * n as f64 / copy_t / 1e9; // read + written
    println!(
        "file: {} ({:.1} MB, {CHANNELS} ch × {samples} samples int16 time-major)",
        path.display(),
        bytes as f64 / 1e6
    );
    println!(
        "read (1 s windows, all channels, channel-major f32 µV): median {:.1} ms (min {:.1}, max {:.1}) → {:.2} GB/s moved (2 B read + 4 B written per sample), {:.2} GB/s of int16",
        read_t * 1e3,
        rmin * 1e3,
        rmax * 1e3,
        read_bw,
        bytes as f64 / read_t / 1e9
    );
    println!(
        "memcpy 256 MiB: median {:.1} ms (min {:.1}, max {:.1}) → {:.2} GB/s moved (read + write)",
        copy_t * 1e3,
        cmin * 1e3,
        cmax * 1e3,
        copy_bw
    );
    println!(
        "H1 ratio: {:.2} × memcpy (target ≥ 0.30)",
        read_bw / copy_bw
    );
    let (read_cpu, copy_cpu) = (median(cpu_times), median(copy_cpu));
    if read_cpu > 0.0 && copy_cpu > 0.0 {
        println!(
            "on-CPU time (discounts other load on a shared machine): read {:.1} ms → {:.2} GB/s, memcpy {:.1} ms → {:.2} GB/s, ratio {:.2}",
            read_cpu * 1e3,
            moved / read_cpu / 1e9,
            copy_cpu * 1e3,
            2.0 * n as f64 / copy_cpu / 1e9,
            (moved / read_cpu) / (2.0 * n as f64 / copy_cpu)
        );
    }
    Ok(())
}
