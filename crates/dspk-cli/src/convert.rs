//! `dspk convert`: decode on the device to `f32` µV (channel map, channel subset and time range
//! applied) and write raw binary + JSON sidecar.

use std::fs::File;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use dspk_device::describe;
use dspk_kernels::max_window_samples;
use dspk_types::{
    ChannelInfo, ChannelMapFile, ChunkSchedule, DspError, DspResult, MemoryOrder, RationalTime,
    RecordingInfo, RecordingSource, RemappedSource, SampleFormat, SlicedRecording,
};
use serde_json::json;

use crate::error::{CliError, CliResult, Context as _};
use crate::input::{Input, TimeOptions};
use crate::parse::ChannelList;
use crate::pass::{Scaling, device_pass};
use crate::progress::Progress;
use crate::report::{exact_seconds, seconds_text};
use crate::{Ctx, temporary_sibling};

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
pub(crate) fn run(ctx: &Ctx, recording: &Path, opts: &ConvertOptions) -> CliResult<String> {
    let target = ctx.target()?;
    let input = Input::open(Some(recording), None)?;
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
    let range = opts.time.range(source.info())?;
    if channels.is_some() || range != (0..source.info().samples) {
        source = Arc::new(SlicedRecording::new(source, range.clone(), channels)?);
    }
    check_not_input(recording, &opts.output)?;

    let info = source.info().clone();
    let (_, client) = ctx.client()?;
    let device = describe(&client);
    let channel_count = info.channel_count();
    let len = info.samples;
    let window = match opts.window_samples {
        Some(0) => return Err(CliError::new("--window-samples must be at least 1")),
        Some(n) => n,
        None => {
            let second = RationalTime::new(1, 1).expect("1/1 is a valid time");
            info.sample_rate
                .samples_for_duration(second)?
                .min(max_window_samples(&client, channel_count, info.format))
                .max(1)
        }
    }
    .min(len);
    let schedule = ChunkSchedule::full_recording(len, window, 0, 0)?;
    let scaling = Scaling::microvolts(&info);

    let out_info = output_info(&info, &scaling, recording);
    let mut writer = OutputFile::create(&opts.output, &out_info, opts.order)?;
    let progress = Progress::bytes("convert", len.saturating_mul(info.frame_bytes() as u64));
    let report = device_pass(
        &client,
        &*source,
        &schedule,
        &scaling,
        &progress,
        |w, decoded| {
            let values = decoded.to_vec()?;
            writer.write_window(w.valid_global.start, w.read_len(), &values)
        },
    )?;
    progress.finish();
    let sidecar = writer.finish()?;

    let wall_s = report.wall.as_secs_f64();
    let duration = info.duration()?;
    let written = len * channel_count as u64 * 4;
    if ctx.json {
        let value = json!({
            "recording": input.label(),
            "output": opts.output.display().to_string(),
            "sidecar": sidecar.display().to_string(),
            "runtime": target,
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

/// Refuses to write over the recording being read (it is memory-mapped while it is read).
fn check_not_input(recording: &Path, output: &Path) -> CliResult<()> {
    let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    let sidecar = dspk_io::sidecar_path(output);
    if same(recording, output) || same(recording, &sidecar) {
        return Err(CliError::new(format!(
            "-o {}: the output would overwrite the recording being converted",
            output.display()
        )));
    }
    Ok(())
}

/// What the output holds: `info`'s channels and time, as `f32` in the scaled unit (gain 1,
/// offset 0), with where it came from in the metadata.
fn output_info(info: &RecordingInfo, scaling: &Scaling, recording: &Path) -> RecordingInfo {
    let mut out = info.clone();
    out.format = SampleFormat::F32;
    out.channels = info
        .channels
        .iter()
        .zip(&scaling.units)
        .map(|(ch, unit)| ChannelInfo {
            name: ch.name.clone(),
            gain: 1.0,
            offset: 0.0,
            unit: unit.clone(),
        })
        .collect();
    out.metadata.insert(
        "dspk_converted_from".to_string(),
        recording.display().to_string(),
    );
    out.metadata.insert(
        "dspk_source_format".to_string(),
        info.format.name().to_string(),
    );
    out
}

/// The output being written: data and sidecar in temporary files next to their final names,
/// renamed into place by [`OutputFile::finish`]; dropped unfinished, both are removed, so a
/// failure leaves no partial output.
struct OutputFile {
    data_path: PathBuf,
    sidecar_path: PathBuf,
    data_tmp: PathBuf,
    sidecar_tmp: PathBuf,
    file: Option<BufWriter<File>>,
    info: RecordingInfo,
    order: MemoryOrder,
    /// Samples per channel written so far (time-major: the next frame to append).
    written: u64,
    /// A reused frame buffer for the time-major transpose.
    frames: Vec<u8>,
    finished: bool,
}

impl OutputFile {
    /// Starts writing `info.samples` samples of `info`'s channels in `order` to `path`.
    fn create(path: &Path, info: &RecordingInfo, order: MemoryOrder) -> CliResult<Self> {
        let sidecar_path = dspk_io::sidecar_path(path);
        let data_tmp = temporary_sibling(path);
        let sidecar_tmp = temporary_sibling(&sidecar_path);
        let file = File::create(&data_tmp)
            .map_err(|e| CliError::new(format!("-o {}: cannot create: {e}", path.display())))?;
        let mut out = Self {
            data_path: path.to_path_buf(),
            sidecar_path,
            data_tmp,
            sidecar_tmp,
            file: Some(BufWriter::with_capacity(1 << 20, file)),
            info: info.clone(),
            order,
            written: 0,
            frames: Vec::new(),
            finished: false,
        };
        if order == MemoryOrder::ChannelMajor {
            let bytes = info.samples * info.channel_count() as u64 * 4;
            out.file_mut()?
                .get_ref()
                .set_len(bytes)
                .map_err(|e| out.io_error("cannot size", &e))?;
        }
        Ok(out)
    }

    fn file_mut(&mut self) -> DspResult<&mut BufWriter<File>> {
        self.file
            .as_mut()
            .ok_or_else(|| DspError::config("the output file is already closed"))
    }

    fn io_error(&self, what: &str, e: &std::io::Error) -> DspError {
        DspError::io(&self.data_path, what, e)
    }

    /// Writes one window: `values` channel-major, `samples` per channel, starting at sample
    /// `start` of the output. Time-major windows must come in order.
    fn write_window(&mut self, start: u64, samples: usize, values: &[f32]) -> DspResult<()> {
        let c = self.info.channel_count();
        if values.len() != c * samples {
            return Err(DspError::shape("decoded window", c * samples, values.len()));
        }
        match self.order {
            MemoryOrder::TimeMajor => {
                if start != self.written {
                    return Err(DspError::config(format!(
                        "time-major output written out of order: sample {start} after {}",
                        self.written
                    )));
                }
                let mut frames = std::mem::take(&mut self.frames);
                frames.clear();
                frames.resize(c * samples * 4, 0);
                for (ch, row) in values.chunks_exact(samples).enumerate() {
                    for (s, v) in row.iter().enumerate() {
                        let at = (s * c + ch) * 4;
                        frames[at..at + 4].copy_from_slice(&v.to_le_bytes());
                    }
                }
                let result = self.file_mut()?.write_all(&frames);
                self.frames = frames;
                result.map_err(|e| self.io_error("cannot write", &e))?;
            }
            MemoryOrder::ChannelMajor => {
                let total = self.info.samples;
                let mut row_bytes = std::mem::take(&mut self.frames);
                for (ch, row) in values.chunks_exact(samples).enumerate() {
                    row_bytes.clear();
                    row_bytes.extend(row.iter().flat_map(|v| v.to_le_bytes()));
                    let at = (ch as u64 * total + start) * 4;
                    let file = self.file_mut()?;
                    let result = file
                        .seek(SeekFrom::Start(at))
                        .and_then(|_| file.write_all(&row_bytes));
                    if let Err(e) = result {
                        self.frames = row_bytes;
                        return Err(self.io_error("cannot write", &e));
                    }
                }
                self.frames = row_bytes;
            }
        }
        self.written = self.written.max(start + samples as u64);
        Ok(())
    }

    /// Flushes the data, writes the sidecar, and renames both into place; returns the
    /// sidecar's path.
    fn finish(mut self) -> CliResult<PathBuf> {
        if self.written != self.info.samples {
            return Err(CliError::new(format!(
                "internal error: {} of {} samples written",
                self.written, self.info.samples
            )));
        }
        let file = self
            .file
            .take()
            .ok_or_else(|| CliError::new("the output file is already closed"))?;
        let file = file
            .into_inner()
            .map_err(|e| self.io_error("cannot write", e.error()))?;
        file.sync_all()
            .map_err(|e| self.io_error("cannot write", &e))?;
        drop(file);
        let sidecar = dspk_io::BinarySidecar::from_info(&self.info, self.order);
        let text = serde_json::to_string_pretty(&sidecar)
            .map_err(|e| CliError::new(format!("cannot write the sidecar: {e}")))?;
        std::fs::write(&self.sidecar_tmp, text + "\n")
            .map_err(|e| DspError::io(&self.sidecar_path, "cannot write", &e))?;
        std::fs::rename(&self.sidecar_tmp, &self.sidecar_path)
            .map_err(|e| DspError::io(&self.sidecar_path, "cannot write", &e))?;
        if let Err(e) = std::fs::rename(&self.data_tmp, &self.data_path) {
            let _ = std::fs::remove_file(&self.sidecar_path);
            return Err(self.io_error("cannot write", &e).into());
        }
        self.finished = true;
        Ok(self.sidecar_path.clone())
    }
}

impl Drop for OutputFile {
    fn drop(&mut self) {
        if !self.finished {
            drop(self.file.take());
            let _ = std::fs::remove_file(&self.data_tmp);
            let _ = std::fs::remove_file(&self.sidecar_tmp);
        }
    }
}
