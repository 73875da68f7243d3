//! The throughput table of the benchmark plan (`../shared/BENCH.md`), each figure with its
//! baseline measured in the same run: what `dspk bench` prints. The program parses its flags,
//! opens the device and formats the [`BenchTable`]; the measuring is here.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use cubecl::client::Client;
use dspk_device::upload::{Destination, Staging, Uploader};
use dspk_device::{DeviceKind, describe};
use dspk_kernels::{ChannelStatsKernel, Decoder, bench::decode_vs_copy, sync};
use dspk_stream::{
    DecodeRoute, DevicePass, Flow, PassDevice, ScanOptions, compile_decode_in_staging,
    fill_threads, launch_of, one_second, scan_on,
};
use dspk_types::{
    ChunkSchedule, DspError, DspResult, MemoryOrder, NoProgress, RecordingSource, Scaling,
    StoredWindow, SyntheticRecording, WindowLoader,
};
use serde::Serialize;

mod baseline;
mod stages;

pub use stages::{StageFigure, measure_stages};

use baseline::{REPEATS, TempDir, gbs, median, memcpy_gbs, pytorch_gbs, staging_name};

/// One row of the table.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// The figure's id in the benchmark plan (H1, G2, …).
    pub id: &'static str,
    /// What was measured.
    pub figure: String,
    /// The figure.
    pub value: f64,
    /// Its unit.
    pub unit: &'static str,
    /// The baseline measured in the same run.
    pub baseline: String,
    /// The baseline's value, in the same unit.
    pub baseline_value: f64,
    /// `value / baseline_value`.
    pub ratio: f64,
    /// The target ratio.
    pub target: f64,
    /// Devices the figure ran on.
    pub devices: usize,
}

/// What to measure.
#[derive(Debug, Clone)]
pub struct BenchOptions {
    /// A recording to read instead of a synthetic file written for the run.
    pub recording: Option<PathBuf>,
    /// The Open Ephys stream of the recording to read.
    pub stream: Option<String>,
    /// Seconds of synthetic data to write when no recording is given.
    pub seconds: u64,
    /// Samples per window (default: one second).
    pub window_samples: Option<u64>,
}

/// The measured table: a line on the machine, the rows, and what the reader noticed of the
/// recording without refusing it.
#[derive(Debug, Clone, Serialize)]
pub struct BenchTable {
    /// The device, runtime, host threads and the file measured, on one line.
    pub machine: String,
    /// The figures, in the benchmark plan's order.
    pub rows: Vec<Row>,
    /// The reader's warnings about the recording (not part of the JSON table).
    #[serde(skip)]
    pub warnings: Vec<String>,
}

/// Measures the table on `client`'s device (and, where `devices` lists several, the M2 rows
/// over them against the first alone).
pub fn measure(
    client: &Client,
    devices: Option<&[PassDevice]>,
    opts: &BenchOptions,
) -> DspResult<BenchTable> {
    if opts.window_samples == Some(0) {
        return Err(DspError::config("a window needs at least 1 sample"));
    }
    if opts.stream.is_some() && opts.recording.is_none() {
        return Err(DspError::config(
            "a stream names a stream of a recording: give the Open Ephys recording to read",
        ));
    }
    let mut rows = Vec::new();
    let memcpy = memcpy_gbs();

    // The file: the user's, or a synthetic Neuropixels-like one written for the run.
    let _temp;
    let path: PathBuf = match &opts.recording {
        Some(p) => p.clone(),
        None => {
            let dir = std::env::temp_dir().join(format!("dspk-bench-{}", std::process::id()));
            std::fs::create_dir_all(&dir).map_err(|e| DspError::Io {
                message: format!("cannot create the bench folder: {e}"),
                path: Some(dir.clone()),
            })?;
            _temp = TempDir(dir.clone());
            let synthetic = SyntheticRecording::neuropixels(opts.seconds.max(1) * 30_000);
            let path = dir.join("synthetic.bin");
            let options = dspk_io::WriteOptions {
                format: None,
                order: Some(MemoryOrder::TimeMajor),
                channels: None,
                samples: None,
                window_samples: 30_000,
            };
            dspk_io::write_binary(&synthetic, &path, &options, &NoProgress)?;
            path
        }
    };
    let opened = dspk_io::open_with(
        &path,
        &dspk_io::OpenOptions {
            stream: opts.stream.clone(),
        },
    )?;
    let warnings = opened.warnings().to_vec();
    let file: Arc<dyn RecordingSource> = opened.into_source();
    let info = file.info().clone();
    let channels = info.channel_count();
    let second = match opts.window_samples {
        Some(n) => n,
        None => one_second(&info)?,
    };
    let stored_total = info.samples as f64 * info.frame_bytes() as f64;
    let values_total = info.samples as f64 * channels as f64;

    // H1: every channel, channel-major f32 µV, through the window loader, page-cached file.
    let schedule = ChunkSchedule::for_recording(&info, 0..info.samples, second.max(1), 0, 0)?;
    let loader = WindowLoader::new(&*file);
    let mut times = Vec::new();
    for _ in 0..=REPEATS {
        let started = Instant::now();
        loader.stream(schedule.windows(), |_, values| {
            std::hint::black_box(values);
            Ok(())
        })?;
        times.push(started.elapsed());
    }
    times.remove(0);
    let h1 = gbs(
        values_total * (info.format.bytes() as f64 + 4.0),
        median(times),
    );
    rows.push(Row {
        devices: 1,
        id: "H1",
        figure: format!("read all {channels} channels to f32 channel-major (window loader)"),
        value: h1,
        unit: "GB/s",
        baseline: "host memcpy (read + write)".into(),
        baseline_value: memcpy,
        ratio: h1 / memcpy,
        target: 0.30,
    });

    // The device.
    let client = client.clone();
    let device = describe(&client);
    let window = second
        .min(dspk_kernels::max_window_samples(
            &client,
            channels,
            info.format,
        ))
        .max(1);
    let g1 = decode_vs_copy(&client, channels, window as usize)?;
    rows.push(Row {
        devices: 1,
        id: "G1",
        figure: format!("decode kernel, {channels} × {window} int16 → f32 (2 B + 4 B per sample)"),
        value: g1.decode_bytes_per_s() / 1e9,
        unit: "GB/s",
        baseline: "device copy kernel (4 B + 4 B)".into(),
        baseline_value: g1.copy_bytes_per_s() / 1e9,
        ratio: g1.ratio(),
        target: 0.6,
    });

    // G2: stored windows from the page-cached file into the device buffer, vs the copy of a
    // filled staging buffer (the host→device ceiling of this path).
    let schedule = ChunkSchedule::for_recording(&info, 0..info.samples, window, 0, 0)?;
    let scaling = Scaling::microvolts(&info);
    let order = file.native_stored_order();
    let decoder = Decoder::new(
        &client,
        channels,
        window as usize,
        info.format,
        order,
        &scaling.gains,
        &scaling.offsets,
    )?;
    let stored = decoder.stored_handle().clone();
    let frame = info.frame_bytes();
    let threads = fill_threads();
    // The default path, then (on Vulkan) wgpu's own mapped buffers for comparison.
    let default_path = Staging::from_env()?.unwrap_or(Staging::HostCached);
    let mut paths = vec![default_path];
    for alternative in [Staging::Mapped] {
        if !paths.contains(&alternative) {
            paths.push(alternative);
        }
    }
    let mut measured = Vec::new();
    for (k, wanted) in paths.into_iter().enumerate() {
        let mut uploader = Uploader::with_staging(&client, window * frame as u64, threads, wanted);
        if k > 0 && measured.contains(&uploader.staging()) {
            continue; // fell back to a path already measured
        }
        measured.push(uploader.staging());
        let copy = uploader.time(Destination::Copy(&stored), window as usize * frame, 5)?;
        let mut times = Vec::new();
        for _ in 0..=REPEATS {
            sync(&client)?;
            let started = Instant::now();
            for w in schedule.windows() {
                let window = StoredWindow::of(&*file, w);
                let fill = |offset: usize, piece: &mut [u8]| window.fill(&*file, offset, piece);
                let to = Destination::Copy(&stored);
                uploader.upload(to, window.len(), window.align(), fill, || Ok(()))?;
            }
            uploader.wait_idle()?;
            sync(&client)?;
            times.push(started.elapsed());
        }
        times.remove(0);
        let g2 = gbs(stored_total, median(times));
        let (copy_gbs, copy_name) = match copy {
            Some(t) => (
                gbs(window as f64 * frame as f64, t),
                "copy of a filled staging buffer to the device",
            ),
            None => (f64::NAN, "no staging path on this runtime"),
        };
        // The staged decode of one filled window alone, against the same copy.
        let kernel =
            compile_decode_in_staging(&client)?.filter(|_| uploader.runs_staging_kernels());
        let staged = match (&kernel, decoder.staged_decode(window as usize)?) {
            (Some(kernel), Some(launch)) => {
                let to = Destination::Kernel(launch_of(kernel, &launch));
                uploader.time(to, window as usize * frame, 5)?
            }
            _ => None,
        };
        rows.push(Row {
            devices: 1,
            id: if k == 0 { "G2" } else { "G2*" },
            figure: format!(
                "upload of compact stored windows, file → device ({} staging, {threads} threads)",
                staging_name(uploader.staging())
            ),
            value: g2,
            unit: "GB/s",
            baseline: copy_name.into(),
            baseline_value: copy_gbs,
            ratio: g2 / copy_gbs,
            target: 0.5,
        });
        if let Some(t) = staged {
            let value = gbs(window as f64 * frame as f64, t);
            rows.push(Row {
                devices: 1,
                id: "G2k",
                figure: "decode in staging of one filled window (submit + wait; int16 input)"
                    .into(),
                value,
                unit: "GB/s",
                baseline: copy_name.into(),
                baseline_value: copy_gbs,
                ratio: value / copy_gbs,
                target: f64::NAN,
            });
        }
    }
    drop(decoder);

    // G3: file → windows → device → decoded channel-major, end to end: decoded where staged
    // (the default), then copied and decoded on the device, for comparison.
    let torch = pytorch_gbs(channels, window as usize);
    let (torch_name, torch_gbs) = match torch {
        Some(t) => ("PyTorch pinned int16 upload + decode", t),
        None => ("PyTorch (not available here)", f64::NAN),
    };
    let mut taken = Vec::new();
    for decode in DecodeRoute::ALL {
        let mut times = Vec::new();
        let mut streaming = Vec::new();
        let mut path = decode;
        for _ in 0..=REPEATS {
            let report = DevicePass::new(&client, file.clone(), schedule.windows().to_vec())
                .scaling(scaling.clone())
                .route(decode)
                .run(|_, _| Ok(Flow::Continue))?;
            times.push(report.wall);
            streaming.push(report.wall - report.setup);
            path = report.route;
        }
        if taken.contains(&path) {
            continue; // fell back to the path already measured
        }
        taken.push(path);
        times.remove(0);
        streaming.remove(0);
        let (wall, stream) = (median(times), median(streaming));
        let g3 = gbs(stored_total, wall);
        let g3_streaming = gbs(stored_total, stream);
        let (id, ids, how) = match path {
            DecodeRoute::Staging => ("G3", "G3s", "decoded in pinned staging"),
            DecodeRoute::Copy => ("G3c", "G3cs", "copied, then decoded"),
        };
        rows.push(Row {
            devices: 1,
            id,
            figure: format!(
                "end to end: file → device, decoded channel-major ({how}; {:.1} ms setup incl.)",
                (wall.saturating_sub(stream)).as_secs_f64() * 1e3
            ),
            value: g3,
            unit: "GB/s",
            baseline: torch_name.into(),
            baseline_value: torch_gbs,
            ratio: g3 / torch_gbs,
            target: 1.0,
        });
        rows.push(Row {
            devices: 1,
            id: ids,
            figure: format!("the same, streaming ({how}): setup excluded"),
            value: g3_streaming,
            unit: "GB/s",
            baseline: torch_name.into(),
            baseline_value: torch_gbs,
            ratio: g3_streaming / torch_gbs,
            target: 1.0,
        });
    }

    // G4: the scan pipeline (decode + statistics) on the synthetic default and on the file.
    for (label, source) in [
        (
            "synthetic default",
            Arc::new(SyntheticRecording::default_probe()) as Arc<dyn RecordingSource>,
        ),
        ("raw file", file.clone()),
    ] {
        let sinfo = source.info().clone();
        let schedule = ChunkSchedule::for_recording(&sinfo, 0..sinfo.samples, window, 0, 0)?;
        let scaling = Scaling::microvolts(&sinfo);
        let mut kernel = ChannelStatsKernel::new(&client, sinfo.channel_count(), window as usize)?;
        // Warmed up (the first pass compiles the statistics kernels), then the median pass.
        let mut passes = Vec::new();
        for _ in 0..=REPEATS {
            let report = DevicePass::new(&client, source.clone(), schedule.windows().to_vec())
                .scaling(scaling.clone())
                .run(|w, d| {
                    kernel.accumulate_deferred(d, w.valid_local.clone())?;
                    Ok(Flow::Continue)
                })?;
            let totals = kernel.finish_deferred()?;
            if totals.iter().any(|t| t.count != sinfo.samples) {
                return Err(DspError::config(format!(
                    "the {label} scan counted {} samples of a channel, not {}",
                    totals[0].count, sinfo.samples
                )));
            }
            passes.push((report.wall, report.setup));
        }
        passes.remove(0);
        passes.sort();
        let (wall, setup) = passes[passes.len() / 2];
        let duration = sinfo.duration()?.as_seconds_f64();
        let realtime = duration / wall.as_secs_f64();
        rows.push(Row {
            devices: 1,
            id: "G4",
            figure: format!(
                "scan of the {label} ({:.0} s, {} ch; {:.1} ms setup incl.)",
                duration,
                sinfo.channel_count(),
                setup.as_secs_f64() * 1e3
            ),
            value: realtime,
            unit: "× real time",
            baseline: "real time".into(),
            baseline_value: 1.0,
            ratio: realtime,
            // BENCH.md: 500 × on a GPU, 20 × on a CPU-only machine (a software device).
            target: if device.kind == DeviceKind::Software {
                20.0
            } else {
                500.0
            },
        });
    }

    // M2: the same scans over the devices of --devices (or DSPK_DEVICES), against the first
    // of them alone, alternating, in the same run.
    if let Some(devices) = devices {
        for (label, source) in [
            (
                "synthetic default",
                Arc::new(SyntheticRecording::default_probe()) as Arc<dyn RecordingSource>,
            ),
            ("raw file", file.clone()),
        ] {
            rows.push(multi_row(label, &source, devices, window)?);
        }
    }

    let header = format!(
        "dspk bench on {} ({}, {} host threads); file {} ({} ch, {} samples)",
        device.adapter_name,
        device.runtime,
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        path.display(),
        channels,
        info.samples
    );
    Ok(BenchTable {
        machine: header,
        rows,
        warnings,
    })
}

/// M2: the scan of `source` over `devices` against the first of them alone, alternating,
/// each the median of [`REPEATS`] after one warm-up; the statistics of both must be identical.
fn multi_row(
    label: &str,
    source: &Arc<dyn RecordingSource>,
    devices: &[PassDevice],
    window: u64,
) -> DspResult<Row> {
    let options = ScanOptions {
        window_samples: Some(window),
        ..ScanOptions::default()
    };
    let (mut one, mut all) = (Vec::new(), Vec::new());
    for _ in 0..=REPEATS {
        let a = scan_on(&devices[..1], source.clone(), &options)?;
        let b = scan_on(devices, source.clone(), &options)?;
        let same = a.stats.len() == b.stats.len()
            && a.stats.iter().zip(&b.stats).all(|(x, y)| x.same_bits(y));
        if !same {
            return Err(DspError::config(format!(
                "the {label} scan on {} devices differs from the scan on one",
                devices.len()
            )));
        }
        one.push(a.report.wall);
        all.push(b.report.wall);
    }
    one.remove(0);
    all.remove(0);
    let duration = source.info().duration()?.as_seconds_f64();
    let (one, all) = (
        duration / median(one).as_secs_f64(),
        duration / median(all).as_secs_f64(),
    );
    let names: Vec<&str> = devices.iter().map(|d| d.label.as_str()).collect();
    Ok(Row {
        id: "M2",
        figure: format!("scan of the {label} on {}", names.join(" + ")),
        value: all,
        unit: "× real time",
        baseline: format!("the same scan on {} alone", devices[0].label),
        baseline_value: one,
        ratio: all / one,
        // BENCH.md's M2 (issue 19): several devices on one GPU cost nothing.
        target: 0.95,
        devices: devices.len(),
    })
}
