//! The window loader's overlap: reading window i+1 while a callback works on window i, against
//! reading and calling back in sequence, on a 384-channel recording held in memory.
//!
//! Run: `cargo bench -p dspk-types --bench loader -- --warm-up-time 1 --measurement-time 3`.
//! The callback's cost is calibrated at start to about one read's, so the ideal overlap halves
//! the sequential time; the figures are in BENCHMARKS.md ("Window loader").

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use dspk_types::{
    ChunkSchedule, HaloWindow, MemoryOrder, MemoryRecording, RecordingInfo, RecordingSource,
    SampleFormat, SampleRate, WindowLoader,
};

const CHANNELS: usize = 384;
/// Samples owned by a window (1 s at 30 kHz) and the halo on either side (10 ms).
const BATCH: u64 = 30_000;
const HALO: u64 = 300;
/// Windows in one iteration (the recording is `WINDOWS × BATCH` samples, 368 MB of f32).
const WINDOWS: u64 = 8;

/// A 384-channel recording of pseudo-random values (a seeded LCG), gain 0.195 µV per count.
fn recording() -> MemoryRecording {
    let samples = WINDOWS * BATCH;
    let rate = SampleRate::new(30_000.0).expect("30 kHz is a valid rate");
    let mut info = RecordingInfo::new(
        "bench",
        CHANNELS,
        samples,
        rate,
        SampleFormat::F32,
        MemoryOrder::ChannelMajor,
    );
    for ch in &mut info.channels {
        ch.gain = 0.195;
    }
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let data = (0..CHANNELS as u64 * samples)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((state >> 48) as i16) as f32
        })
        .collect();
    MemoryRecording::new(info, data).expect("the data match the description")
}

/// The callback's work: every value goes through `rounds` multiply-adds, 16 lanes at a time
/// (so the loop vectorises and the cost scales with `rounds`), then into 16 sums.
fn work(data: &[f32], rounds: u32) -> f32 {
    let mut acc = [0f32; 16];
    let chunks = data.chunks_exact(16);
    let tail: f32 = chunks.remainder().iter().sum();
    for chunk in chunks {
        let mut x = [0f32; 16];
        x.copy_from_slice(chunk);
        for _ in 0..rounds {
            for v in &mut x {
                *v = *v * 0.999_9 + 0.25;
            }
        }
        for (a, v) in acc.iter_mut().zip(x) {
            *a += v;
        }
    }
    acc.iter().sum::<f32>() + tail
}

/// The median of `runs` timings of `f`.
fn median(runs: usize, mut f: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    times.sort();
    times[runs / 2]
}

/// Rounds of work whose callback costs about as much as reading one window.
fn calibrate(source: &MemoryRecording, window: &HaloWindow, channels: &[usize]) -> u32 {
    let mut buffer = vec![0f32; CHANNELS * window.read_len()];
    let read = median(7, || {
        source
            .read(channels, window.read_global.clone(), &mut buffer)
            .expect("an in-range read");
    });
    let cost = |rounds: u32| {
        median(7, || {
            black_box(work(black_box(&buffer), rounds));
        })
    };
    let (low, high) = (cost(1), cost(33));
    let per_round = (high.as_secs_f64() - low.as_secs_f64()).max(1e-9) / 32.0;
    let rounds = 1.0 + (read.as_secs_f64() - low.as_secs_f64()) / per_round;
    let rounds = rounds.round().clamp(1.0, 1000.0) as u32;
    eprintln!(
        "calibration: read of one window {:.2} ms; callback {:.2} ms at 1 round, {:.3} ms per \
         extra round; chosen {rounds} rounds: {:.2} ms",
        read.as_secs_f64() * 1e3,
        low.as_secs_f64() * 1e3,
        per_round * 1e3,
        cost(rounds).as_secs_f64() * 1e3
    );
    rounds
}

fn bench_loader(c: &mut Criterion) {
    let source = recording();
    let total = source.info().samples;
    let schedule =
        ChunkSchedule::full_recording(total, BATCH, HALO, HALO).expect("a valid schedule");
    let windows = schedule.windows();
    let channels: Vec<usize> = (0..CHANNELS).collect();
    let rounds = calibrate(&source, &windows[1], &channels);
    let values: u64 = windows
        .iter()
        .map(|w| (w.read_len() * CHANNELS) as u64)
        .sum();

    let mut group = c.benchmark_group("window_loader_384ch");
    group.sample_size(10);
    // Bytes of f32 values delivered per iteration (all windows once).
    group.throughput(Throughput::Bytes(values * 4));

    let mut buffer = vec![0f32; CHANNELS * schedule.max_read_samples() as usize];
    group.bench_function("read_only", |b| {
        b.iter(|| {
            for w in windows {
                let out = &mut buffer[..CHANNELS * w.read_len()];
                source
                    .read(&channels, w.read_global.clone(), out)
                    .expect("an in-range read");
                black_box(&out[0]);
            }
        })
    });
    group.bench_function("callback_only", |b| {
        // The same amount of data as the windows, from one resident buffer.
        b.iter(|| {
            let mut sum = 0f32;
            for w in windows {
                sum += work(&buffer[..CHANNELS * w.read_len()], rounds);
            }
            black_box(sum)
        })
    });
    group.bench_function("sequential_read_then_callback", |b| {
        b.iter(|| {
            let mut sum = 0f32;
            for w in windows {
                let out = &mut buffer[..CHANNELS * w.read_len()];
                source
                    .read(&channels, w.read_global.clone(), out)
                    .expect("an in-range read");
                sum += work(out, rounds);
            }
            black_box(sum)
        })
    });
    // One loader for every iteration: its two buffers are reused, like `buffer` above.
    let loader = WindowLoader::new(&source);
    group.bench_function("window_loader", |b| {
        b.iter(|| {
            let mut sum = 0f32;
            loader
                .stream(windows, |_, data| {
                    sum += work(data, rounds);
                    Ok(())
                })
                .expect("the windows stream");
            black_box(sum)
        })
    });
    // A new loader per iteration: the first touch of two fresh buffers is paid every time.
    group.bench_function("window_loader_new_each_run", |b| {
        b.iter(|| {
            let mut sum = 0f32;
            WindowLoader::new(&source)
                .stream(windows, |_, data| {
                    sum += work(data, rounds);
                    Ok(())
                })
                .expect("the windows stream");
            black_box(sum)
        })
    });
    group.finish();
}

criterion_group!(benches, bench_loader);
criterion_main!(benches);
