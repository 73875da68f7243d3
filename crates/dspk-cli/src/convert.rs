//! `dspk convert`: decode on the device to `f32` µV (channel map, channel subset and time range
//! applied) and write raw binary + JSON sidecar.

use std::path::{Path, PathBuf};

use cubecl::client::Client;
use dspk_device::describe;
use dspk_io::BinarySink;
use dspk_stream::DecodeRoute;
use dspk_types::{
    ChannelList, ChannelMapFile, ComputeTarget, MemoryOrder, Selection, SelectionPart,
};
use serde_json::json;

use crate::Ctx;
use crate::error::{CliError, CliResult, Context as _};
use crate::input::{Input, TIME_FLAGS, TimeOptions, window_option};
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

/// Runs `dspk convert` on the runtime's default device.
pub(crate) fn run(ctx: &Ctx, input: Input, opts: &ConvertOptions) -> CliResult<String> {
    run_on(ctx, input, opts, || ctx.client())
}

/// Runs `dspk convert` on the device `open` opens (once the arguments are checked): a
/// scheduler job's own device.
pub(crate) fn run_on(
    ctx: &Ctx,
    input: Input,
    opts: &ConvertOptions,
    open: impl FnOnce() -> CliResult<(ComputeTarget, Client)>,
) -> CliResult<String> {
    ctx.target()?;
    check_outputs(&input, opts)?;
    input.report_warnings();
    let map = opts
        .map
        .as_ref()
        .map(|path| {
            ChannelMapFile::load(path)
                .map(|file| file.remap)
                .context(format!("--map {}", path.display()))
        })
        .transpose()?;
    let range = opts.time.range(input.info(), &input.label(), TIME_FLAGS)?;
    let selection = Selection {
        map: map.as_ref(),
        channels: opts.channels.as_ref(),
        range: Some(range.clone()),
    };
    let source = selection.apply(input.source.clone()).map_err(|e| {
        let flag = match e.part {
            SelectionPart::Map => format!(
                "--map {}",
                opts.map.as_deref().unwrap_or(Path::new("")).display()
            ),
            SelectionPart::Channels => "--channels".to_string(),
            SelectionPart::Range => "--start/--end".to_string(),
        };
        CliError::from(e.error).context(flag)
    })?;
    let options = dspk_stream::ConvertOptions {
        window_samples: window_option(opts.window_samples)?,
        route: DecodeRoute::from_env()?,
    };
    let (target, client) = open()?;
    let device = describe(&client);
    let stored = source
        .info()
        .samples
        .saturating_mul(source.info().frame_bytes() as u64);
    let progress = Progress::bytes("convert", stored);
    let mut sink = BinarySink::new(&opts.output, opts.order, input.label());
    let converted = dspk_stream::convert(&client, source, &options, &progress, &mut sink)?;
    progress.finish();
    let (report, info) = (converted.report, converted.info);
    let sidecar = sink
        .summary()
        .map(|s| s.sidecar_path.clone())
        .unwrap_or_default();
    let channel_count = info.channel_count();
    let len = info.samples;
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
            "start_time": exact_seconds(info.start_time),
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
