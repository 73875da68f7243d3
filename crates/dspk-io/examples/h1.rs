//! BENCH.md H1: every channel of a page-cached int16 time-major file read into channel-major
//! f32 µV in 1 s windows through `WindowLoader`, against memcpy bandwidth measured in the same
//! run.
//!
//! `cargo run --release -p dspk-io --example h1 [-- SECONDS [PATH [THREADS,…]]]` (default 20 s
//! of 384 channels at 30 kHz, 460.8 MB, at /tmp/dspk-h1.bin, left in place with its sidecar for
//! `benches/spikeinterface_h2.sh`; read threads 1 and the default). Bytes counted: 2 B read + 4 B written per sample for the
//! reads, read + written for memcpy. Median of 7 passes after a warm-up pass, with min/max.

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use dspk_io::BinaryRecording;
use dspk_types::{ChunkSchedule, DspError, RecordingSource, WindowLoader};

const CHANNELS: usize = 384;
const RATE: usize = 30_000;
const REPEATS: usize = 7;

/// Nanoseconds the calling thread has run on a CPU (Linux; 0 elsewhere). On a shared machine
/// the on-CPU time of a pass is steadier than its wall time.
fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|v| v.parse().ok()))
        .unwrap_or(0)
}

/// (median, min, max).
fn stats(v: &[f64]) -> (f64, f64, f64) {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    (s[s.len() / 2], s[0], s[s.len() - 1])
}

/// Writes `samples` frames of xorshift noise (not zeros) and the sidecar.
fn write_file(path: &PathBuf, samples: usize) -> std::io::Result<()> {
    let mut f = std::io::BufWriter::with_capacity(1 << 22, std::fs::File::create(path)?);
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut frame = vec![0u8; CHANNELS * 2];
    for _ in 0..samples {
        for v in frame.chunks_exact_mut(2) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            v.copy_from_slice(&(((x >> 40) as i16) >> 6).to_le_bytes());
        }
        f.write_all(&frame)?;
    }
    f.flush()?;
    let channels: Vec<String> = (0..CHANNELS)
        .map(|c| {
            format!(
                r#"{{"gain": {}, "unit": "uV"}}"#,
                2.34375 + c as f64 * 0.001
            )
        })
        .collect();
    let sidecar = format!(
        r#"{{"sample_rate": {RATE}, "channel_count": {CHANNELS}, "format": "int16", "order": "time-major", "channels": [{}]}}"#,
        channels.join(",")
    );
    std::fs::write(dspk_io::sidecar_path(path), sidecar)
}

/// Wall times of passes through the loader, and wall and on-CPU times of direct reads.
struct Passes {
    loader: Vec<f64>,
    direct: Vec<f64>,
    direct_cpu: Vec<f64>,
}

/// One warm-up pass each, then `REPEATS` alternating passes.
fn passes(rec: &BinaryRecording, schedule: &ChunkSchedule) -> Result<Passes, DspError> {
    let loader = WindowLoader::new(rec);
    // Through the loader: the reads run on its background thread.
    let loader_pass = || -> Result<f64, DspError> {
        let t = Instant::now();
        let mut checksum = 0f64;
        loader.stream(schedule.windows(), |w, data| {
            checksum += f64::from(data[w.index % data.len()]);
            Ok(())
        })?;
        std::hint::black_box(checksum);
        Ok(t.elapsed().as_secs_f64())
    };
    // Direct reads on this thread into one reused buffer.
    let all: Vec<usize> = (0..CHANNELS).collect();
    let mut out = vec![0f32; CHANNELS * RATE];
    let mut direct_pass = || -> Result<(f64, f64), DspError> {
        let cpu = thread_cpu_ns();
        let t = Instant::now();
        for w in schedule.windows() {
            rec.read(&all, w.read_global.clone(), &mut out)?;
        }
        let dt = t.elapsed().as_secs_f64();
        std::hint::black_box(&out);
        Ok((dt, (thread_cpu_ns() - cpu) as f64 * 1e-9))
    };
    loader_pass()?;
    direct_pass()?;
    let mut p = Passes {
        loader: Vec::new(),
        direct: Vec::new(),
        direct_cpu: Vec::new(),
    };
    for _ in 0..REPEATS {
        p.loader.push(loader_pass()?);
        let (wall, cpu) = direct_pass()?;
        p.direct.push(wall);
        p.direct_cpu.push(cpu);
    }
    Ok(p)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let seconds: usize = args.get(1).map_or(Ok(20), |s| s.parse())?;
    let path = PathBuf::from(args.get(2).map_or("/tmp/dspk-h1.bin", String::as_str));
    let samples = seconds * RATE;
    let file_bytes = samples * CHANNELS * 2;
    write_file(&path, samples)?;

    let mut rec = BinaryRecording::open(&path)?;
    assert_eq!(rec.info().samples as usize, samples);
    let default_threads = rec.read_threads();
    let thread_counts: Vec<usize> = match args.get(3) {
        Some(list) => list.split(',').map(str::parse).collect::<Result<_, _>>()?,
        None if default_threads > 1 => vec![1, default_threads],
        None => vec![1],
    };
    let schedule = ChunkSchedule::full_recording(samples as u64, RATE as u64, 0, 0)?;

    // memcpy of a 256 MiB buffer into two alternating destinations (touched beforehand).
    let n = 256 << 20;
    let src: Vec<u8> = (0..n).map(|i| (i * 31 % 251) as u8).collect();
    let mut dst = [vec![0u8; n], vec![0u8; n]];
    for d in &mut dst {
        d.copy_from_slice(&src);
    }
    let mut copy_t = Vec::new();
    let mut copy_cpu = Vec::new();
    for i in 0..REPEATS {
        let cpu = thread_cpu_ns();
        let t = Instant::now();
        dst[i % 2].copy_from_slice(std::hint::black_box(&src));
        std::hint::black_box(&dst[i % 2]);
        copy_t.push(t.elapsed().as_secs_f64());
        copy_cpu.push((thread_cpu_ns() - cpu) as f64 * 1e-9);
    }
    drop(dst);
    drop(src);

    let moved = samples as f64 * CHANNELS as f64 * 6.0;
    let copied = 2.0 * n as f64;
    let (cm, cmin, cmax) = stats(&copy_t);
    let copy_bw = copied / cm / 1e9;
    let (cc, _, _) = stats(&copy_cpu);
    println!(
        "file: {} ({:.1} MB: {CHANNELS} ch × {samples} samples, int16 time-major, page cache); {} CPUs available",
        path.display(),
        file_bytes as f64 / 1e6,
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    println!(
        "memcpy 256 MiB (1 thread): median {:.1} ms (min {:.1}, max {:.1}) = {copy_bw:.2} GB/s (read + written)",
        cm * 1e3,
        cmin * 1e3,
        cmax * 1e3
    );
    let mut h1 = Vec::new();
    for &threads in &thread_counts {
        rec.set_read_threads(threads);
        let p = passes(&rec, &schedule)?;
        for (what, times) in [("WindowLoader", &p.loader), ("direct read", &p.direct)] {
            let (m, lo, hi) = stats(times);
            let bw = moved / m / 1e9;
            println!(
                "read threads {threads}, {what}, 1 s windows: median {:.1} ms (min {:.1}, max {:.1}) = {bw:.2} GB/s moved (2 B read + 4 B written per sample) = {:.2} GB/s of int16 = {:.2} × memcpy",
                m * 1e3,
                lo * 1e3,
                hi * 1e3,
                file_bytes as f64 / m / 1e9,
                bw / copy_bw
            );
        }
        let (rc, _, _) = stats(&p.direct_cpu);
        if threads == 1 && rc > 0.0 && cc > 0.0 {
            println!(
                "  on-CPU time (discounts other load on a shared machine): direct read {:.1} ms = {:.2} GB/s moved, memcpy {:.1} ms = {:.2} GB/s, ratio {:.2}",
                rc * 1e3,
                moved / rc / 1e9,
                cc * 1e3,
                copied / cc / 1e9,
                (moved / rc) / (copied / cc)
            );
        }
        let (lm, _, _) = stats(&p.loader);
        h1.push((
            threads,
            moved / lm / 1e9 / copy_bw,
            file_bytes as f64 / lm / 1e9,
        ));
    }
    for (threads, ratio, gbs) in h1 {
        println!(
            "H1 (WindowLoader, read threads {threads}) = {ratio:.2} × memcpy (target >= 0.30); {gbs:.3} GB/s of int16"
        );
    }
    Ok(())
}
