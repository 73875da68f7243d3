//! `dspk-probe`: a small program that opens a device, runs a kernel and exits, for the device
//! and exit tests (run as a child process) and for the start-up and exit measurements
//! (BENCH.md S1 and S2).
//!
//! The runtime is `DSPK_RUNTIME`'s (default: the first compiled in). Modes:
//!
//! | mode | what it does |
//! |---|---|
//! | `run` | opens the device, runs the check kernel on seeded random input, verifies it, prints `result ok …`, then `done unix_ns=…` as its last line, and returns from `main` |
//! | `exit N` | as `run`, then `std::process::exit(N)` (exit handlers run) |
//! | `exit-held N` | as `exit N`, but with the client still held when the process exits |
//! | `exit-now N` | as `run`, then `dspk_exit::exit_now(N)` (no exit handlers) |
//! | `app-config DIR` | sets CubeCL's configuration itself first (caches in DIR, kernel cache off), as an embedding application would, then as `cache` |
//! | `describe` | prints the device description as JSON |
//! | `cache` | as `run`, printing `cache dir=… file=… kernel_cache=…` first |
//! | `threads` | counts `/proc/self/task` before opening, with the device open, after `shutdown_devices`, and checks a later client runs again |
//! | `s1` | prints `s1 open_ms=… first_result_ms=… total_ms=…` (times since `main` started) |
//! | `s1-bench [RUNS]` | S1: RUNS fresh `s1` processes with `DSPK_KERNEL_CACHE=0` (cold) and RUNS with the cache warm, medians and ratio |
//! | `stress [RUNS] [exit-now]` | S2: RUNS fresh `run` (or `exit-now 0`) processes in a row: crashes, hangs, and the time from the last output to process end |
//! | `staged-variants` | the decode in staging of one 384 × 30 000 int16 window: dspk-kernels' kernel and variants of its workgroup size, each checked bit for bit against it, timed against the copy of the same staging buffer |

use std::io::{Read as _, Write as _};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use cubecl::client::Client;
use dspk_device::{TargetExt as _, describe, run_check_kernel, shutdown_devices};
use dspk_types::ComputeTarget;
use rand::{Rng as _, SeedableRng as _};

/// How long a child of `stress`/`s1-bench` may run before it counts as hung.
const CHILD_LIMIT: Duration = Duration::from_secs(60);

fn main() -> ExitCode {
    let start = Instant::now();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mode = args.first().map_or("run", String::as_str);
    let number = |i: usize, default: u32| {
        args.get(i)
            .and_then(|a| a.parse::<u32>().ok())
            .unwrap_or(default)
    };
    let result = match mode {
        "run" => run_kernel(false).map(|()| done()),
        "exit" => run_kernel(false).map(|()| {
            done();
            std::process::exit(number(1, 0) as i32)
        }),
        "exit-held" => client().and_then(|client| {
            let n = check(&client)?;
            println!("result ok values={n} runtime={}", client.name());
            done();
            // The client is still alive when the process exits.
            std::process::exit(number(1, 0) as i32)
        }),
        "exit-now" => run_kernel(false).map(|()| {
            done();
            dspk_exit::exit_now(number(1, 0) as i32)
        }),
        "cache" => run_kernel(true).map(|()| done()),
        "app-config" => app_config(args.get(1).map(String::as_str)),
        "describe" => describe_device(),
        "threads" => threads(),
        "s1" => s1(start),
        "s1-bench" => s1_bench(number(1, 5)),
        "stress" => stress(number(1, 200), args.get(2).is_some_and(|a| a == "exit-now")),
        "staged-variants" => staged_variants(),
        other => Err(format!(
            "unknown mode {other:?}: run, exit N, exit-now N, cache, describe, threads, s1, \
             s1-bench [RUNS], stress [RUNS] [exit-now]"
        )),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("dspk-probe {mode}: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The client of the runtime the environment picks.
fn client() -> Result<Client, String> {
    let target = ComputeTarget::from_env().map_err(|e| e.to_string())?;
    target.client().map_err(|e| e.to_string())
}

/// Runs the check kernel on seeded random input and verifies it against the host.
fn check(client: &Client) -> Result<usize, String> {
    let seed = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64);
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let n = rng.random_range(100..5000);
    let input: Vec<f32> = (0..n).map(|_| rng.random_range(-1000.0..1000.0)).collect();
    let (scale, offset) = (rng.random_range(-4.0..4.0), rng.random_range(-10.0..10.0));
    let output = run_check_kernel(client, &input, scale, offset).map_err(|e| e.to_string())?;
    if output.len() != n {
        return Err(format!("{} values for {n} (seed {seed})", output.len()));
    }
    for (i, (x, y)) in input.iter().zip(&output).enumerate() {
        let expected = x * scale + offset;
        if (expected - y).abs() > 1e-4 * (1.0 + expected.abs()) {
            return Err(format!("value {i}: {y}, expected {expected} (seed {seed})"));
        }
    }
    Ok(n)
}

/// Opens the device and runs the check kernel, printing the result.
fn run_kernel(with_cache: bool) -> Result<(), String> {
    let client = client()?;
    let n = check(&client)?;
    if with_cache {
        // Read after the device opened, so that the configuration is the one opening it set.
        let settings = dspk_device::configure_runtime();
        println!(
            "cache dir={} file={} kernel_cache={} autotune_cache={} origin={:?}",
            settings.dir.display(),
            settings.file.display(),
            settings.kernel_cache,
            settings.autotune_cache,
            settings.origin
        );
    }
    println!("result ok values={n} runtime={}", client.name());
    Ok(())
}

/// Sets CubeCL's configuration as an embedding application would, then runs as `cache`.
fn app_config(dir: Option<&str>) -> Result<(), String> {
    use cubecl::config::{CubeClRuntimeConfig, RuntimeConfig as _, cache::CacheConfig};
    let dir = dir.ok_or("app-config needs a directory")?;
    let mut config = CubeClRuntimeConfig::default();
    config.environment.path = CacheConfig::Directory(dir.into());
    config.compilation.cache = false;
    CubeClRuntimeConfig::set(config);
    let origin = &dspk_device::configure_runtime().origin;
    println!("origin {origin:?}");
    run_kernel(true).map(|()| done())
}

/// Prints the last line, with the time it was written, and flushes it.
fn done() {
    let ns = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "done unix_ns={ns}");
    let _ = out.flush();
}

/// Prints the device description as JSON.
fn describe_device() -> Result<(), String> {
    let client = client()?;
    let info = describe(&client);
    let json = serde_json::to_string(&info).map_err(|e| e.to_string())?;
    println!("{json}");
    Ok(())
}

/// Threads of this process.
fn task_count() -> Result<usize, String> {
    std::fs::read_dir("/proc/self/task")
        .map(|d| d.count())
        .map_err(|e| format!("/proc/self/task: {e}"))
}

/// Names of this process's threads.
fn task_names() -> Vec<String> {
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    dir.flatten()
        .map(|t| {
            std::fs::read_to_string(t.path().join("comm"))
                .map(|s| s.trim().to_string())
                .unwrap_or_default()
        })
        .collect()
}

/// The thread count once it has stopped changing for 200 ms (threads of a released device
/// may take a moment to end), waiting at most two seconds.
fn settle_tasks() -> Result<usize, String> {
    let deadline = Instant::now() + Duration::from_secs(2);
    let mut count = task_count()?;
    let mut since = Instant::now();
    loop {
        std::thread::sleep(Duration::from_millis(10));
        let now = task_count()?;
        if now != count {
            count = now;
            since = Instant::now();
        }
        if since.elapsed() >= Duration::from_millis(200) || Instant::now() > deadline {
            return Ok(count);
        }
    }
}

/// Thread counts around opening and shutting down the device, twice.
fn threads() -> Result<(), String> {
    let before = task_count()?;
    let mut counts = Vec::new();
    let mut after_names = Vec::new();
    let mut open_names = Vec::new();
    for _ in 0..2 {
        let client = client()?;
        check(&client)?;
        let open = task_count()?;
        open_names = task_names();
        drop(client);
        let released = shutdown_devices();
        let after = settle_tasks()?;
        after_names = task_names();
        counts.push((open, released, after));
    }
    let client = client()?;
    let n = check(&client)?;
    let [(open1, released1, after1), (open2, released2, after2)] = counts[..] else {
        return Err("two cycles expected".to_string());
    };
    println!(
        "threads before={before} open1={open1} released1={released1} after1={after1} \
         open2={open2} released2={released2} after2={after2}"
    );
    println!("reopen ok values={n}");
    println!("names open: {}", open_names.join(","));
    println!("names after: {}", after_names.join(","));
    done();
    Ok(())
}

/// Milliseconds since `start`.
fn ms_since(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e3
}

/// S1, one process: the time to an open device and to the first kernel result.
fn s1(start: Instant) -> Result<(), String> {
    let client = client()?;
    let open_ms = ms_since(start);
    let before_kernel = Instant::now();
    check(&client)?;
    let kernel_ms = ms_since(before_kernel);
    let total_ms = ms_since(start);
    // The same kernel again, compiled: the part of the first result that is not compiling.
    let before_again = Instant::now();
    check(&client)?;
    let again_ms = ms_since(before_again);
    let settings = dspk_device::configure_runtime();
    println!(
        "s1 open_ms={open_ms:.1} first_result_ms={kernel_ms:.1} total_ms={total_ms:.1} \
         second_result_ms={again_ms:.1} kernel_cache={} runtime={}",
        settings.kernel_cache,
        client.name()
    );
    done();
    Ok(())
}

/// What a child process did.
struct ChildRun {
    /// Its exit status code, `None` when a signal ended it or it hung.
    code: Option<i32>,
    /// Whether it ran past [`CHILD_LIMIT`] and was killed.
    hung: bool,
    /// Its standard output.
    stdout: String,
    /// When it ended (or was killed).
    ended: SystemTime,
    /// Wall time from spawn to end.
    wall: Duration,
}

/// Runs this program again with `args` and extra environment, waiting at most [`CHILD_LIMIT`].
fn child(args: &[&str], envs: &[(&str, &str)]) -> Result<ChildRun, String> {
    let exe = std::env::current_exe().map_err(|e| format!("own path: {e}"))?;
    let spawned = Instant::now();
    let mut child = Command::new(exe)
        .args(args)
        .envs(envs.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("spawn: {e}"))?;
    let mut pipe = child.stdout.take().ok_or("no stdout pipe")?;
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = pipe.read_to_string(&mut text);
        text
    });
    let (status, hung) = loop {
        if let Some(status) = child.try_wait().map_err(|e| format!("wait: {e}"))? {
            break (Some(status), false);
        }
        if spawned.elapsed() > CHILD_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            break (None, true);
        }
        std::thread::sleep(Duration::from_micros(200));
    };
    let ended = SystemTime::now();
    let wall = spawned.elapsed();
    let stdout = reader.join().unwrap_or_default();
    Ok(ChildRun {
        code: status.and_then(|s| s.code()),
        hung,
        stdout,
        ended,
        wall,
    })
}

/// The median of `values` (sorted in place); NaN when empty.
fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

/// A `key=value` field of the line starting with `prefix`.
fn field(text: &str, prefix: &str, key: &str) -> Option<f64> {
    dspk_tests::field(text, prefix, key)?.parse().ok()
}

/// S1: fresh processes, cold (`DSPK_KERNEL_CACHE=0`) and warm.
fn s1_bench(runs: u32) -> Result<(), String> {
    let measure = |envs: &[(&str, &str)], label: &str| -> Result<[f64; 5], String> {
        let (mut open, mut first, mut total, mut wall) = (vec![], vec![], vec![], vec![]);
        let mut second = vec![];
        for _ in 0..runs {
            let run = child(&["s1"], envs)?;
            if run.code != Some(0) {
                return Err(format!(
                    "{label} child failed: {:?}\n{}",
                    run.code, run.stdout
                ));
            }
            let get =
                |key| field(&run.stdout, "s1", key).ok_or(format!("no {key} in {:?}", run.stdout));
            open.push(get("open_ms")?);
            first.push(get("first_result_ms")?);
            total.push(get("total_ms")?);
            second.push(get("second_result_ms")?);
            wall.push(run.wall.as_secs_f64() * 1e3);
        }
        let m = [
            median(&mut open),
            median(&mut first),
            median(&mut total),
            median(&mut wall),
            median(&mut second),
        ];
        println!(
            "s1 {label}: runs={runs} open_ms={:.1} first_result_ms={:.1} total_ms={:.1} \
             process_wall_ms={:.1} second_result_ms={:.1} (medians)",
            m[0], m[1], m[2], m[3], m[4]
        );
        Ok(m)
    };
    let cold = measure(&[(dspk_device::KERNEL_CACHE_ENV, "0")], "cold")?;
    // One run to fill the cache, then the warm runs.
    child(&["s1"], &[(dspk_device::KERNEL_CACHE_ENV, "1")])?;
    let warm = measure(&[(dspk_device::KERNEL_CACHE_ENV, "1")], "warm")?;
    println!(
        "s1 ratio warm/cold: total_ms={:.3} first_result_ms={:.3} process_wall_ms={:.3}",
        warm[2] / cold[2],
        warm[1] / cold[1],
        warm[3] / cold[3]
    );
    Ok(())
}

/// S2: `runs` fresh processes in a row that open the device, run a kernel and exit.
fn stress(runs: u32, exit_now: bool) -> Result<(), String> {
    let args: &[&str] = if exit_now {
        &["exit-now", "0"]
    } else {
        &["run"]
    };
    let (mut crashes, mut hangs, mut missing) = (0, 0, 0);
    let mut latencies = Vec::new();
    for i in 0..runs {
        let run = child(args, &[])?;
        if run.hung {
            hangs += 1;
            eprintln!("run {i}: hung (killed after {CHILD_LIMIT:?})");
            continue;
        }
        if run.code != Some(0) {
            crashes += 1;
            eprintln!("run {i}: exit {:?}", run.code);
        }
        let Some(ns) =
            dspk_tests::field(&run.stdout, "done", "unix_ns").and_then(|v| v.parse::<u128>().ok())
        else {
            missing += 1;
            eprintln!("run {i}: no final line in {:?}", run.stdout);
            continue;
        };
        let ended = run
            .ended
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        latencies.push(ended.saturating_sub(ns) as f64 / 1e6);
    }
    let mut sorted = latencies.clone();
    let med = median(&mut sorted);
    let p95 = sorted
        .get((sorted.len() * 95).div_ceil(100).saturating_sub(1))
        .copied()
        .unwrap_or(f64::NAN);
    let max = sorted.last().copied().unwrap_or(f64::NAN);
    println!(
        "s2 path={} runs={runs} crashes={crashes} hangs={hangs} missing_output={missing} \
         last_output_to_end_ms median={med:.1} p95={p95:.1} max={max:.1}",
        if exit_now { "exit_now" } else { "normal" }
    );
    if crashes + hangs + missing > 0 {
        return Err(format!(
            "{crashes} crashes, {hangs} hangs, {missing} without output"
        ));
    }
    Ok(())
}

/// The decode in staging with `group` invocations per workgroup instead of its own: dspk-kernels'
/// source with its workgroup size replaced (the kernel's grid stride follows it).
fn staged_variant_wgsl(group: u32) -> Result<String, String> {
    let source = dspk_kernels::STAGED_DECODE_WGSL;
    let (size, stride) = ("@workgroup_size(64)", "groups.x * 64u");
    if !source.contains(size) || !source.contains(stride) {
        return Err("the staged decode's workgroup size is no longer 64: update the probe".into());
    }
    Ok(source
        .replace(size, &format!("@workgroup_size({group})"))
        .replace(stride, &format!("groups.x * {group}u")))
}

/// `staged-variants`: see the module docs.
fn staged_variants() -> Result<(), String> {
    use dspk_device::upload::{Destination, StagingLaunch, Uploader};
    use dspk_kernels::{
        Decoder, STAGED_DECODE_BUFFERS, STAGED_DECODE_ENTRY, STAGED_DECODE_WGSL, read_f32,
    };
    use dspk_types::{MemoryOrder, SampleFormat};
    let client = client()?;
    let (channels, samples) = (384usize, 30_000usize);
    let mut rng = rand::rngs::StdRng::seed_from_u64(17);
    let gains: Vec<f32> = (0..channels).map(|_| rng.random_range(0.5..5.0)).collect();
    let offsets: Vec<f32> = (0..channels).map(|_| rng.random_range(-9.0..9.0)).collect();
    let stored: Vec<u8> = (0..channels * samples * 2).map(|_| rng.random()).collect();
    let decoder = Decoder::new(
        &client,
        channels,
        samples,
        SampleFormat::I16,
        MemoryOrder::TimeMajor,
        &gains,
        &offsets,
    )
    .map_err(|e| e.to_string())?;
    let len = stored.len();
    let mut uploader = Uploader::new(&client, len as u64, 16).map_err(|e| e.to_string())?;
    let launch = decoder
        .staged_decode(samples)
        .map_err(|e| e.to_string())?
        .ok_or("no staged decode")?;
    let gb = |t: Duration| len as f64 / t.as_secs_f64() / 1e9;
    let mut variants = vec![(
        "dspk-kernels (workgroups of 64)".to_string(),
        STAGED_DECODE_WGSL.to_string(),
        STAGED_DECODE_ENTRY,
        launch.workgroups,
    )];
    let quads = (channels * samples).div_ceil(8);
    for group in [32u32, 128, 256, 512] {
        let groups = quads.div_ceil(group as usize).min(65_535) as u32;
        variants.push((
            format!("workgroups of {group}"),
            staged_variant_wgsl(group)?,
            STAGED_DECODE_ENTRY,
            groups,
        ));
    }
    let mut reference: Option<Vec<f32>> = None;
    for round in 0..3 {
        for (name, wgsl, entry, workgroups) in &variants {
            let kernel = uploader
                .staging_kernel(name, wgsl, entry, STAGED_DECODE_BUFFERS)
                .map_err(|e| e.to_string())?
                .ok_or("staging kernels cannot run here")?;
            // dspk-stream's launch of the decode in staging, at this variant's workgroups.
            let launch = StagingLaunch {
                workgroups: *workgroups,
                ..dspk_stream::launch_of(&kernel, &launch)
            };
            uploader
                .upload(
                    Destination::Kernel(launch),
                    len,
                    channels * 2,
                    |o, piece| {
                        piece.copy_from_slice(&stored[o..o + piece.len()]);
                        Ok(())
                    },
                    || Ok(()),
                )
                .map_err(|e| e.to_string())?;
            let out = read_f32(&client, &launch.buffers[0], channels * samples)
                .map_err(|e| e.to_string())?;
            match &reference {
                None => reference = Some(out),
                Some(r) => {
                    if r.iter().zip(&out).any(|(a, b)| a.to_bits() != b.to_bits()) {
                        return Err(format!("variant {name} differs from the kernel"));
                    }
                }
            }
            let t = uploader
                .time(Destination::Kernel(launch), len, 9)
                .map_err(|e| e.to_string())?
                .ok_or("no timing")?;
            let copy = uploader
                .time(Destination::Copy(decoder.stored_handle()), len, 9)
                .map_err(|e| e.to_string())?
                .ok_or("no copy timing")?;
            println!(
                "round {round} variant {name:<24} {:7.2} GB/s   copy {:7.2} GB/s   ratio {:.3}",
                gb(t),
                gb(copy),
                gb(t) / gb(copy)
            );
        }
    }
    Ok(())
}
