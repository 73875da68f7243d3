//! `dspk convert`: decode on the device to `f32` µV (channel map, channel subset and time range
//! applied) and write raw binary + JSON sidecar.

use std::path::PathBuf;
use std::sync::Arc;

use dspk_device::describe;
use dspk_io::BinaryWriter;
use dspk_stream::{DecodeRoute, DevicePass, Flow, window_samples};
use dspk_types::{
    ChannelMapFile, ChunkSchedule, MemoryOrder, RecordingSource, RemappedSource, Scaling,
    SlicedRecording,
};
use serde_json::json;

use crate::Ctx;
use crate::error::{CliError, CliResult, Context as _};
use crate::input::{Input, TimeOptions, window_option};
use crate::parse::ChannelList;
use crate::progress::Progress;
use crate::report::{exact_seconds, seconds_text};

/// The options of `dspk convert` after parsing.
#[derive(Debug, Clone)]
pub(crate) struct ConvertOptions {
    /// The part of the recording to convert.
    pub(crate) time: TimeOptions,
    /// Channels to keep (after the map).
    pub(crate) channels: Option<ChannelList>,
    /// A channel map applied first.
    pub(crate) map: Option<PathBuf>,
    /// The output data file.
    pub(crate) output: PathBuf,
    /// The output layout.
    pub(crate) order: MemoryOrder,
    /// Samples per window.
    pub(crate) window_samples: Option<u64>,
}

/// Runs `dspk convert`.
pub(crate) fn run(ctx: &Ctx, input: Input, opts: &ConvertOptions) -> CliResult<String> {
    let target = ctx.target()?;
    check_outputs(&input, opts)?;
    input.report_warnings();
    let mut source: Arc<dyn RecordingSource> = input.source.clone();
    if let Some(map) = &opts.map {
        let file = ChannelMapFile::load(map).context(format!("--map {}", map.display()))?;
        source = Arc::new(
            RemappedSource::new(source, &file.remap).context(format!("--map {}", map.display()))?,
        );
    }
    let channels = opts
        .channels
        .as_ref()
        .map(|list| list.resolve(source.info().channel_count()))
        .transpose()
        .context("--channels")?;
    let range = opts.time.range(source.info(), &input.label())?;
    if channels.is_some() || range != (0..source.info().samples) {
        source = Arc::new(SlicedRecording::new(source, range.clone(), channels)?);
    }
    let info = source.info().clone();
    let asked = window_option(opts.window_samples)?;
    let route = DecodeRoute::from_env()?;
    let (_, client) = ctx.client()?;
    let device = describe(&client);
    let channel_count = info.channel_count();
    let len = info.samples;
    let window = window_samples(&client, &info, asked)?.min(len);
    let schedule = ChunkSchedule::for_recording(&info, 0..len, window, 0, 0)?;
    let scaling = Scaling::microvolts(&info);

    let out_info = dspk_io::converted_info(&info, &scaling.units, &input.label());
    // A temporary file renamed into place at `finish`: a failure leaves no partial output.
    let mut writer = BinaryWriter::create(&opts.output, &out_info, opts.order)
        .map_err(|e| CliError::from(e).context(format!("-o {}", opts.output.display())))?;
    let progress = Progress::bytes("convert", len.saturating_mul(info.frame_bytes() as u64));
    // Halos are 0: every window is owned whole, and windows come in order.
    let report = DevicePass::new(&client, source, schedule.into_windows())
        .scaling(scaling)
        .route(route)
        .progress(&progress)
        .run_to_host(|_, values| {
            writer.write_window(values)?;
            Ok(Flow::Continue)
        })?;
    progress.finish();
    let sidecar = writer.finish()?.sidecar_path;

    let wall_s = report.wall.as_secs_f64();
    let duration = info.duration()?;
    let written = len * channel_count as u64 * 4;
    if ctx.json {
        let value = json!({
            "recording": input.label(),
            "warnings": input.warnings,
            "output": opts.output.display().to_string(),
            "sidecar": sidecar.display().to_string(),
            "runtime": target,
            "decode": report.route.name(),
            "device": device.adapter_name,
            "channel_count": channel_count,
            "sample_rate": info.sample_rate,
            "start_sample": range.start,
            "end_sample": range.end,
            "samples": len,
            "duration": exact_seconds(duration),
            "start_time": exact_seconds(out_info.start_time),
            "format": "float32",
            "order": opts.order.name(),
            "stored_bytes": report.stored_bytes,
            "written_bytes": written,
            "wall_s": wall_s,
            "throughput_mb_s": report.stored_bytes as f64 / 1e6 / wall_s,
            "realtime_factor": duration.as_seconds_f64() / wall_s,
        });
        return Ok(serde_json::to_string_pretty(&value).expect("json values serialise") + "\n");
    }
    Ok(format!(
        "wrote {} ({channel_count} channels × {len} samples, float32 {}, {:.2} MB) and {}\n\
         from {} ({} to {}) on {target}: {}\n\
         throughput: {:.2} MB read in {wall_s:.3} s: {:.1} MB/s, {:.1}× real time\n",
        opts.output.display(),
        opts.order.name(),
        written as f64 / 1e6,
        sidecar.display(),
        input.label(),
        seconds_text(info.sample_rate.duration_for_samples(range.start)?),
        seconds_text(info.sample_rate.duration_for_samples(range.end)?),
        device.adapter_name,
        report.stored_bytes as f64 / 1e6,
        report.stored_bytes as f64 / 1e6 / wall_s,
        duration.as_seconds_f64() / wall_s,
    ))
}

/// Refuses, before anything is read or written, an output (`-o` or its sidecar) that would
/// overwrite a file the recording consists of (its data file, sidecar or `.meta`: by the file
/// it resolves to, so another spelling, a symbolic link or a hard link is caught) or the
/// channel map.
fn check_outputs(input: &Input, opts: &ConvertOptions) -> CliResult<()> {
    let mut inputs = input.files()?;
    if let Some(map) = &opts.map {
        inputs.push((map.clone(), "the channel map --map".to_string()));
    }
    Ok(dspk_io::check_output(&inputs, "-o", &opts.output)?)
}
