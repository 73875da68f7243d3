//! `dspk`: scan and convert extracellular recordings on a GPU (or any CubeCL runtime).

mod bench;
mod cluster;
mod convert;
mod devices;
mod error;
mod info;
mod input;
mod output;
mod progress;
mod report;
mod scan;

use std::path::PathBuf;
use std::sync::Mutex;

use clap::{Args, Parser, Subcommand};
use cubecl::client::Client;
use dspk_device::{Catalog, DEVICES_ENV, DeviceChoice, TargetExt, describe};
use dspk_stream::{PassDevice, Prepared, prepare};
use dspk_types::{ComputeTarget, MemoryOrder, RUNTIME_ENV};

use crate::error::{CliError, CliResult, Context as _};
use crate::input::{Input, JoinOptions, RATE_FLAG, TimeOptions};
use dspk_types::{ChannelList, RateChoice, TimeSpec};

const EXAMPLES: &str = "\
Examples:
  dspk scan                              scan the built-in synthetic recording (60 s, 384 ch)
  dspk scan --duration 5 --mask m.json   scan its first 5 s, write the dead/noisy channel mask
  dspk scan data.bin --start 1:00 --end 2:30 --json
  dspk info data.ap.bin                  describe a recording (SpikeGLX or raw binary + sidecar)
  dspk convert data.ap.bin -o out.bin --channels 0:95,120 --start 10 --end 375000smp
  dspk --runtime cuda devices            the devices of one runtime
  dspk scan a.ap.bin b.ap.bin --devices all   two recordings, one per GPU at a time
  dspk plan *.ap.bin --chunk 10:00 --out jobs && sbatch jobs/array.sbatch
  dspk gather jobs                       the results of a Slurm job array, and what failed

Times (--start, --end, --duration, --synthetic-duration):
  12.5 or 12.5s or 1/3     exact seconds
  1:02:03.5 or 2:03.5      h:m:s or m:s
  375000smp                a sample index (or a number of samples)
  Times count from the recording's first sample (sample 0 is time 0, whatever the
  recording's own start time); seconds become samples exactly at the recording's rate,
  rounding down to the sample at or before the time. --end is exclusive.

Channel lists (--channels): 0-based indices and inclusive ranges, comma-separated,
  in the order wanted: 0:5,100,383

Environment:
  DSPK_RUNTIME       the runtime when --runtime is not given (wgpu, cuda, hip, cpu)
  DSPK_DEVICES       the devices when --devices is not given (all, or numbers: 0,2)
  DSPK_CACHE_DIR     where compiled kernels are cached; DSPK_KERNEL_CACHE=0 turns it off";

/// Scan and convert extracellular recordings on the GPU.
///
/// Without a recording, `info`, `scan` and `convert` use the built-in synthetic recording: a
/// seeded, Neuropixels-like probe (384 channels, 30 kHz, int16) with planted dead and noisy
/// channels.
#[derive(Debug, Parser)]
#[command(name = "dspk", version, after_help = EXAMPLES, max_term_width = 100)]
struct Cli {
    /// Compute runtime: wgpu, cuda, hip or cpu [default: $DSPK_RUNTIME, else the first
    /// compiled in]
    #[arg(long, global = true, value_name = "RUNTIME")]
    runtime: Option<String>,

    /// Print machine-readable JSON on stdout instead of text
    #[arg(long, global = true)]
    json: bool,

    /// Devices to use, as `dspk devices` numbers them: `all` (every GPU) or `0,2` (a number
    /// twice: two devices on one adapter) [default: $DSPK_DEVICES, else the runtime's default
    /// device]
    #[arg(long, global = true, value_name = "LIST")]
    devices: Option<String>,

    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List the runtimes compiled in, which found a device, and each device's limits
    Devices,
    /// Describe a recording: channels, exact rate, duration, format, gains, metadata
    Info(InfoArgs),
    /// The main job: per-channel statistics on the device; flag dead and noisy channels
    #[command(after_help = "The last line reports throughput: stored MB/s and × real time.")]
    Scan(ScanArgs),
    /// Decode a recording on the device to f32 µV and write raw binary + JSON sidecar
    Convert(ConvertArgs),
    /// The throughput table of the benchmark plan on this machine, each figure with its baseline
    /// measured in the same run
    #[command(
        after_help = "Without REC, a synthetic 384-channel int16 file of --seconds seconds is \
written to the temporary directory for the run and removed after."
    )]
    Bench(BenchArgs),
    /// Write a cluster run's job list (one job per recording segment, or per chunk) and its Slurm
    /// job array script
    Plan(PlanArgs),
    /// Run one job of a plan (a Slurm array task: --job defaults to $SLURM_ARRAY_TASK_ID)
    Run(RunArgs),
    /// Merge a plan's results; list the jobs that failed or never ran
    Gather(GatherArgs),
}

#[derive(Debug, Args)]
struct PlanArgs {
    /// The recordings (each a SpikeGLX .bin, Open Ephys folder or raw binary + sidecar)
    #[arg(value_name = "REC")]
    recordings: Vec<PathBuf>,

    /// The plan's folder: plan.json, array.sbatch, results/ (outputs/ for convert)
    #[arg(long, value_name = "DIR")]
    out: PathBuf,

    /// The folder the plan's paths are relative to [default: the current directory]
    #[arg(long, value_name = "DIR")]
    base: Option<PathBuf>,

    /// Cut each segment of each recording into chunks of this length, one job each (a time)
    /// [default: one job per segment]
    #[arg(long, value_name = "T")]
    chunk: Option<String>,

    /// Plan the built-in synthetic recording too, this long
    #[arg(long, value_name = "T")]
    synthetic_duration: Option<String>,

    /// The jobs convert (into DIR/outputs/job-N.bin) instead of scanning
    #[arg(long)]
    convert: bool,

    /// Convert jobs: the channels to keep, e.g. 0:5,100
    #[arg(long, value_name = "LIST", requires = "convert")]
    channels: Option<String>,

    /// Convert jobs: the layout of the output files
    #[arg(long, value_name = "ORDER", requires = "convert",
          value_parser = ["channel-major", "time-major"])]
    order: Option<String>,

    /// The Open Ephys stream to plan, by folder name or stream_name [default: every stream of
    /// each recording, a job or jobs each]
    #[arg(long, value_name = "NAME")]
    stream: Option<String>,

    /// Read the recordings at this sample rate instead of the one their files state
    #[arg(long, value_name = "HZ", allow_hyphen_values = true)]
    rate: Option<String>,

    /// Samples per window sent to the device
    #[arg(long, value_name = "N")]
    window_samples: Option<u64>,

    /// Attach the probe geometry of FILE, a probeinterface JSON file, to every recording in
    /// every job (as `dspk scan --probe` does)
    #[arg(long, value_name = "FILE")]
    probe: Option<PathBuf>,
}

#[derive(Debug, Args)]
struct RunArgs {
    /// The plan's folder
    #[arg(value_name = "DIR")]
    dir: PathBuf,

    /// The job to run [default: $SLURM_ARRAY_TASK_ID]
    #[arg(long, value_name = "N")]
    job: Option<usize>,

    /// Where the recordings are on this machine, instead of the plan's base
    #[arg(long, value_name = "DIR")]
    base: Option<PathBuf>,

    /// Run the job even if its result is there
    #[arg(long)]
    force: bool,
}

#[derive(Debug, Args)]
struct GatherArgs {
    /// The plan's folder
    #[arg(value_name = "DIR")]
    dir: PathBuf,
}

#[derive(Debug, Args)]
struct BenchArgs {
    /// A recording to read (best page-cached): a raw binary file with its sidecar, a SpikeGLX
    /// .bin or an Open Ephys recording folder; none: a synthetic file
    #[arg(value_name = "REC")]
    recording: Option<PathBuf>,

    /// The Open Ephys continuous stream of REC to read, by folder name or stream_name, where
    /// it has several
    #[arg(long, value_name = "NAME")]
    stream: Option<String>,

    /// Seconds of synthetic data to write when no REC is given
    #[arg(long, default_value_t = 20)]
    seconds: u64,

    /// Samples per window [default: one second, capped by the device's largest buffer]; the
    /// PyTorch baseline moves windows of the same size
    #[arg(long, value_name = "N")]
    window_samples: Option<u64>,
}

/// A recording, or none for the built-in synthetic one.
#[derive(Debug, Args)]
struct RecordingArg {
    /// The recording: a SpikeGLX .bin (with its .meta), an Open Ephys folder or a raw binary
    /// file with a JSON sidecar; several with --concat; none: the built-in synthetic recording
    #[arg(value_name = "REC")]
    recordings: Vec<PathBuf>,

    /// Length of the built-in synthetic recording when no REC is given [default: 60]
    #[arg(long, value_name = "T")]
    synthetic_duration: Option<String>,

    /// Read the recording at this sample rate instead of the one it is timed at: a rate (a
    /// measured one: 29997.17, 750003/25), `nominal` or `measured` (the format's); every time
    /// is computed from it
    #[arg(long, value_name = "HZ", allow_hyphen_values = true)]
    rate: Option<String>,

    /// Attach the probe geometry of FILE, a probeinterface JSON file (as `dspk info
    /// --probe-out` writes), in place of any the recording carries; it must give every channel
    /// a contact (a sync channel of the recording's own probe excepted)
    #[arg(long, value_name = "FILE")]
    probe: Option<PathBuf>,

    #[command(flatten)]
    join: JoinArgs,
}

/// How RECs are opened: `--stream`, and `--concat` and how it joins.
#[derive(Debug, Args)]
struct JoinArgs {
    /// The Open Ephys continuous stream to read, by folder name or stream_name
    /// (`Neuropix-PXI-100.ProbeA-AP`, `ProbeA-AP`): the way to choose a stream of a folder of
    /// one experiment's recordings [default: the stream REC names, or its only one]
    #[arg(long, value_name = "NAME")]
    stream: Option<String>,

    /// Read the RECs as one recording, end to end by their clocks (SpikeGLX `_tN` files by
    /// firstSample; one trigger file alone brings its whole run): contiguous files are one
    /// segment, a gap starts another
    #[arg(long)]
    concat: bool,

    /// With --concat: fill the gaps between files with zeros (as CatGT does) instead of
    /// starting a new segment
    #[arg(long, requires = "concat")]
    zero_fill_gaps: bool,

    /// With --concat: accept files whose rates differ by up to PPM parts per million (with a
    /// warning stating the drift); without it the rates must be equal exactly
    #[arg(long, value_name = "PPM", requires = "concat")]
    rate_tolerance: Option<f64>,
}

impl JoinArgs {
    fn options(&self) -> CliResult<JoinOptions> {
        Ok(JoinOptions {
            zero_fill: self.zero_fill_gaps,
            tolerance_ppm: self.rate_tolerance,
            stream: self.stream.clone(),
        })
    }
}

#[derive(Debug, Args)]
struct InfoArgs {
    #[command(flatten)]
    recording: RecordingArg,

    /// Also write the recording's probe geometry to FILE as probeinterface JSON (an error
    /// where the format gives none)
    #[arg(long, value_name = "FILE")]
    probe_out: Option<PathBuf>,
}

/// `--start`, `--end`, `--duration`, as written.
#[derive(Debug, Args)]
struct TimeArgs {
    /// First sample to use (a time, see below) [default: the first]
    #[arg(long, value_name = "T", allow_hyphen_values = true)]
    start: Option<String>,

    /// Where to stop, exclusive (a time) [default: the end]
    #[arg(long, value_name = "T", allow_hyphen_values = true)]
    end: Option<String>,

    /// How much to use from --start, at most (a time; instead of --end)
    #[arg(long, value_name = "T", allow_hyphen_values = true)]
    duration: Option<String>,
}

#[derive(Debug, Args)]
struct ScanArgs {
    /// The recordings: each a SpikeGLX .bin (with its .meta), an Open Ephys folder or a raw
    /// binary file with a JSON sidecar; none: the built-in synthetic recording. Several are
    /// scanned one per device at a time
    #[arg(value_name = "REC")]
    recordings: Vec<PathBuf>,

    /// Length of the built-in synthetic recording when no REC is given [default: 60]
    #[arg(long, value_name = "T")]
    synthetic_duration: Option<String>,

    /// Read the recordings at this sample rate instead of the one they are timed at: a rate,
    /// `nominal` or `measured` (the format's); every time is computed from it
    #[arg(long, value_name = "HZ", allow_hyphen_values = true)]
    rate: Option<String>,

    /// Attach the probe geometry of FILE, a probeinterface JSON file (as `dspk info
    /// --probe-out` writes), in place of any each recording carries; it must give every channel
    /// a contact (a sync channel of the recording's own probe excepted)
    #[arg(long, value_name = "FILE")]
    probe: Option<PathBuf>,

    #[command(flatten)]
    join: JoinArgs,

    /// Only this segment of the recording (from 0; `dspk info` lists them) [default: all]
    #[arg(long, value_name = "N")]
    segment: Option<usize>,

    #[command(flatten)]
    time: TimeArgs,

    /// Write the channel mask (dead and noisy channels disabled) as JSON to this file
    #[arg(long, value_name = "OUT.json")]
    mask: Option<PathBuf>,

    /// Print every channel's statistics (min, max, mean, rms, std), not only the flagged
    /// channels (--json always has them)
    #[arg(long)]
    table: bool,

    /// Samples per window sent to the device [default: one second, capped by the device's
    /// largest buffer]
    #[arg(long, value_name = "N")]
    window_samples: Option<u64>,
}

#[derive(Debug, Args)]
struct ConvertArgs {
    /// The recording to convert (several with --concat); none: the built-in synthetic
    /// recording
    #[arg(value_name = "REC")]
    recordings: Vec<PathBuf>,

    /// Length of the built-in synthetic recording when no REC is given [default: 60; 384
    /// channels of float32: 46 MB a second]
    #[arg(long, value_name = "T")]
    synthetic_duration: Option<String>,

    #[command(flatten)]
    join: JoinArgs,

    /// Write only this segment (from 0; `dspk info` lists them) [default: every segment, kept
    /// as segments in the output's sidecar]
    #[arg(long, value_name = "N")]
    segment: Option<usize>,

    /// The output data file; its sidecar is OUT.json
    #[arg(short, long, value_name = "OUT")]
    output: PathBuf,

    /// Channels to keep, in this order (after --map): e.g. 0:5,100,383
    #[arg(long, value_name = "LIST")]
    channels: Option<String>,

    /// A channel map (TOML or JSON, a `remap` table) applied first
    #[arg(long, value_name = "MAP")]
    map: Option<PathBuf>,

    /// Attach the probe geometry of FILE, a probeinterface JSON file (as `dspk info
    /// --probe-out` writes), in place of any the recording carries, and write it into the
    /// output's sidecar; it must give every channel a contact (a sync channel of the
    /// recording's own probe excepted)
    #[arg(long, value_name = "FILE")]
    probe: Option<PathBuf>,

    /// Read the recording at this sample rate instead of the one it is timed at (a rate,
    /// `nominal` or `measured`); times and the output's sidecar use it
    #[arg(long, value_name = "HZ", allow_hyphen_values = true)]
    rate: Option<String>,

    #[command(flatten)]
    time: TimeArgs,

    /// Layout of the output file
    #[arg(long, value_name = "ORDER", default_value = "time-major",
          value_parser = ["channel-major", "time-major"])]
    order: String,

    /// Samples per window sent to the device [default: one second, capped by the device's
    /// largest buffer]
    #[arg(long, value_name = "N")]
    window_samples: Option<u64>,
}

/// What every command shares: the global options.
#[derive(Debug)]
pub(crate) struct Ctx {
    /// `--json`.
    pub(crate) json: bool,
    runtime: Option<String>,
    devices: Option<String>,
}

impl Ctx {
    /// `--runtime` as given.
    pub(crate) fn runtime_flag(&self) -> Option<&str> {
        self.runtime.as_deref()
    }

    /// The runtime: `--runtime`, else `DSPK_RUNTIME`, else the first compiled in.
    pub(crate) fn target(&self) -> CliResult<ComputeTarget> {
        match &self.runtime {
            Some(name) => ComputeTarget::parse(name)
                .and_then(ComputeTarget::checked)
                .context("--runtime"),
            None => {
                let set = std::env::var_os(RUNTIME_ENV).is_some();
                ComputeTarget::from_env().map_err(|e| {
                    let e = CliError::from(e);
                    if set { e.context(RUNTIME_ENV) } else { e }
                })
            }
        }
    }

    /// The runtime and the client of its default device.
    pub(crate) fn client(&self) -> CliResult<(ComputeTarget, Client)> {
        let target = self.target()?;
        Ok((target, target.client()?))
    }

    /// The devices chosen by `--devices`, else `DSPK_DEVICES`; `None` when neither is given
    /// (the runtime's default device). With `--runtime` or `DSPK_RUNTIME`, only that
    /// runtime's devices can be chosen.
    pub(crate) fn chosen_devices(&self) -> CliResult<Option<Vec<PassDevice>>> {
        Ok(self.chosen_prepared()?.map(|(devices, _)| devices))
    }

    /// [`chosen_devices`](Self::chosen_devices), each device's pass kernels compiling from
    /// the moment it opened (while the next one opens).
    fn chosen_prepared(&self) -> CliResult<Option<(Vec<PassDevice>, Vec<Prepared>)>> {
        let choice = match &self.devices {
            Some(text) => text.parse::<DeviceChoice>().context("--devices")?,
            None => match DeviceChoice::from_env()? {
                Some(choice) => choice,
                None => return Ok(None),
            },
        };
        let flag = if self.devices.is_some() {
            "--devices".to_string()
        } else {
            DEVICES_ENV.to_string()
        };
        let runtime = (self.runtime.is_some() || std::env::var_os(RUNTIME_ENV).is_some())
            .then(|| self.target())
            .transpose()?;
        let mut prepared = Vec::new();
        let chosen = Catalog::list()
            .open_each(&choice, runtime, |d| prepared.push(prepare(&d.client)))
            .context(flag)?;
        let devices = chosen
            .into_iter()
            .map(|c| PassDevice {
                client: c.client,
                label: c.label,
            })
            .collect();
        Ok(Some((devices, prepared)))
    }

    /// The devices a pass runs on: [`chosen_devices`](Self::chosen_devices), else the
    /// runtime's default device; with the runtime, and each device's kernels compiling (the
    /// pass waits for them; keep the [`Prepared`] until it is done).
    pub(crate) fn pass_devices(
        &self,
    ) -> CliResult<(ComputeTarget, Vec<PassDevice>, Vec<Prepared>)> {
        if let Some((devices, prepared)) = self.chosen_prepared()? {
            let target = describe(&devices[0].client).runtime;
            return Ok((target, devices, prepared));
        }
        let (target, client) = self.client()?;
        let prepared = vec![prepare(&client)];
        let label = describe(&client).adapter_name;
        Ok((target, vec![PassDevice { client, label }], prepared))
    }
}

/// A time option, parsed.
fn time_arg(flag: &str, text: Option<&String>) -> CliResult<Option<TimeSpec>> {
    text.map(|t| TimeSpec::parse(t).context(flag)).transpose()
}

impl TimeArgs {
    fn parse(&self) -> CliResult<TimeOptions> {
        Ok(TimeOptions {
            start: time_arg("--start", self.start.as_ref())?,
            end: time_arg("--end", self.end.as_ref())?,
            duration: time_arg("--duration", self.duration.as_ref())?,
        })
    }
}

impl RecordingArg {
    fn open(&self) -> CliResult<Input> {
        let length = time_arg("--synthetic-duration", self.synthetic_duration.as_ref())?;
        let rate = rate_arg(self.rate.as_ref())?;
        open_one(&self.recordings, length, &self.join)?
            .with_probe(self.probe.as_deref())?
            .with_rate(rate)
    }
}

/// The one recording `paths` name: a file, the files joined with `--concat` (one SpikeGLX
/// trigger file brings its run), or the synthetic recording when there are none.
fn open_one(paths: &[PathBuf], length: Option<TimeSpec>, join: &JoinArgs) -> CliResult<Input> {
    let options = join.options()?;
    match paths {
        [] if join.concat => Err(CliError::new("--concat needs the recordings to join")),
        [one] if join.concat => {
            let run = dspk_io::spikeglx_run_files(one)?;
            if run.len() < 2 {
                return Input::open(Some(one), length, options.stream.as_deref());
            }
            Input::open_joined(&run, options)
        }
        [_, _, ..] if join.concat => Input::open_joined(paths, options),
        [] if options.stream.is_some() => Err(CliError::new(
            "--stream chooses a stream of an Open Ephys recording: give the REC",
        )),
        [] => Input::open(None, length, None),
        [one] => Input::open(Some(one), length, options.stream.as_deref()),
        _ => Err(CliError::new(format!(
            "{} recordings given: give one, or --concat to read them as one",
            paths.len()
        ))),
    }
}

/// `--rate`, parsed (`nominal`, `measured`, or exact: `30000.12`, `750003/25`).
fn rate_arg(text: Option<&String>) -> CliResult<Option<RateChoice>> {
    text.map(|t| RateChoice::parse(t).context(RATE_FLAG))
        .transpose()
}

/// Runs the command; returns what goes to stdout.
fn run(cli: Cli) -> CliResult<String> {
    let ctx = Ctx {
        json: cli.json,
        runtime: cli.runtime,
        devices: cli.devices,
    };
    // A bad --runtime or DSPK_RUNTIME is reported whatever the command.
    ctx.target()?;
    match cli.command {
        Command::Devices => devices::run(&ctx),
        Command::Info(args) => info::run(&ctx, &args.recording.open()?, args.probe_out.as_deref()),
        Command::Scan(args) => {
            let time = args.time.parse()?;
            let opts = scan::ScanOptions {
                time,
                window_samples: args.window_samples,
                mask: args.mask,
                table: args.table,
            };
            if args.recordings.len() > 1 && !args.join.concat {
                if args.segment.is_some() {
                    return Err(CliError::new(
                        "--segment chooses a segment of one recording: give one REC",
                    ));
                }
                if args.synthetic_duration.is_some() {
                    return Err(CliError::new(
                        "--synthetic-duration sets the length of the built-in recording, which \
                         is scanned only when no REC is given",
                    ));
                }
                let rate = rate_arg(args.rate.as_ref())?;
                let stream = args.join.stream.as_deref();
                let inputs = args
                    .recordings
                    .iter()
                    .map(|p| {
                        Input::open(Some(p), None, stream)?
                            .with_probe(args.probe.as_deref())?
                            .with_rate(rate)
                    })
                    .collect::<CliResult<Vec<Input>>>()?;
                return scan::run_each(&ctx, &inputs, &opts);
            }
            let recording = RecordingArg {
                recordings: args.recordings,
                synthetic_duration: args.synthetic_duration,
                rate: args.rate,
                probe: args.probe,
                join: args.join,
            };
            scan::run(&ctx, &recording.open()?.with_segment(args.segment)?, &opts)
        }
        Command::Convert(args) => {
            let opts = convert::ConvertOptions {
                time: args.time.parse()?,
                channels: args
                    .channels
                    .as_deref()
                    .map(ChannelList::parse)
                    .transpose()
                    .context("--channels")?,
                map: args.map,
                output: args.output,
                order: if args.order == "channel-major" {
                    MemoryOrder::ChannelMajor
                } else {
                    MemoryOrder::TimeMajor
                },
                window_samples: args.window_samples,
            };
            let length = time_arg("--synthetic-duration", args.synthetic_duration.as_ref())?;
            let input = open_one(&args.recordings, length, &args.join)?
                .with_probe(args.probe.as_deref())?
                .with_rate(rate_arg(args.rate.as_ref())?)?
                .with_segment(args.segment)?;
            convert::run(&ctx, input, &opts)
        }
        Command::Plan(args) => cluster::plan::run(
            &ctx,
            &cluster::plan::PlanOptions {
                recordings: args.recordings,
                out: args.out,
                base: args.base,
                chunk: time_arg("--chunk", args.chunk.as_ref())?,
                synthetic: time_arg("--synthetic-duration", args.synthetic_duration.as_ref())?,
                stream: args.stream,
                command: if args.convert {
                    cluster::plan_file::JobCommand::Convert
                } else {
                    cluster::plan_file::JobCommand::Scan
                },
                window_samples: args.window_samples,
                rate: args.rate,
                channels: args.channels,
                order: args.order,
                probe: args.probe,
            },
        ),
        Command::Run(args) => cluster::run::run(
            &ctx,
            &cluster::run::RunOptions {
                dir: args.dir,
                job: args.job,
                base: args.base,
                force: args.force,
            },
        ),
        Command::Gather(args) => cluster::gather::run(&ctx, &args.dir),
        Command::Bench(args) => bench::run(
            &ctx,
            &bench::BenchOptions {
                recording: args.recording,
                stream: args.stream,
                seconds: args.seconds,
                window_samples: args.window_samples,
            },
        ),
    }
}

/// The message of the last panic, for the one-line report of a panic that reaches `main`.
static LAST_PANIC: Mutex<Option<String>> = Mutex::new(None);

/// Records panics instead of printing them: a panic that a library catches (a runtime probing
/// for a device) must not print, and one that reaches `main` is reported as one line.
fn quiet_panics() {
    std::panic::set_hook(Box::new(|panic| {
        let message = panic
            .payload()
            .downcast_ref::<&str>()
            .map(|s| (*s).to_string())
            .or_else(|| panic.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_string());
        let location = panic
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let thread = std::thread::current();
        let name = thread.name().unwrap_or("unnamed");
        if let Ok(mut last) = LAST_PANIC.lock() {
            *last = Some(format!("{message} (thread '{name}'{location})"));
        }
    }));
}

/// Parses the command line; a usage error is one line (clap's first line, with where to find
/// help) and exit status 2; `--help` and `--version` print as clap prints them.
fn parse_args() -> Cli {
    use clap::error::ErrorKind;
    match Cli::try_parse() {
        Ok(cli) => match one_recording_misuse(&cli) {
            None => cli,
            Some(text) => {
                let line = usage_line(&text, std::env::args().skip(1));
                output::stderr_line("error", &line);
                dspk_exit::exit_now(2)
            }
        },
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            let _ = e.print();
            dspk_exit::exit_now(0)
        }
        Err(e) => {
            let text = if matches!(
                e.kind(),
                ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand | ErrorKind::MissingSubcommand
            ) {
                "a command is needed: devices, info, scan, convert, bench, plan, run or gather"
                    .to_string()
            } else {
                e.to_string()
            };
            let line = usage_line(&text, std::env::args().skip(1));
            output::stderr_line("error", &line);
            dspk_exit::exit_now(2)
        }
    }
}

/// The usage error of a command that reads one recording given several without `--concat`.
fn one_recording_misuse(cli: &Cli) -> Option<String> {
    let (paths, join) = match &cli.command {
        Command::Info(a) => (&a.recording.recordings, &a.recording.join),
        Command::Convert(a) => (&a.recordings, &a.join),
        _ => return None,
    };
    match paths.as_slice() {
        [_, extra, ..] if !join.concat => Some(format!(
            "unexpected argument '{}': give one recording, or --concat to read several as one",
            extra.display()
        )),
        _ => None,
    }
}

/// The one line of a usage error: clap's first line without its `error: `, and the `--help`
/// of the command given (or of `dspk`).
fn usage_line(clap_text: &str, args: impl Iterator<Item = String>) -> String {
    const COMMANDS: [&str; 8] = [
        "devices", "info", "scan", "convert", "bench", "plan", "run", "gather",
    ];
    let mut lines = clap_text
        .lines()
        .map(str::trim)
        .skip_while(|l| l.is_empty());
    let first = lines.next().unwrap_or("bad usage");
    let first = first.strip_prefix("error: ").unwrap_or(first);
    // `… were not provided:` lists them on the lines that follow, up to a blank line.
    let listed: Vec<&str> = if first.ends_with(':') {
        lines.take_while(|l| !l.is_empty()).collect()
    } else {
        Vec::new()
    };
    let first = if listed.is_empty() {
        first.to_string()
    } else {
        format!("{first} {}", listed.join(", "))
    };
    let command = args
        .into_iter()
        .find(|a| COMMANDS.contains(&a.as_str()))
        .map(|c| format!("dspk {c} --help"))
        .unwrap_or_else(|| "dspk --help".to_string());
    format!("{first} (see '{command}')")
}

/// Mesa's device-select Vulkan layer prints `error: XDG_RUNTIME_DIR is invalid or not set` on
/// every device command when that variable is unset (CI, cron, Slurm jobs, containers), even
/// when everything succeeds; without the variable there is no display session for it to pick
/// a device by, so it is turned off (`NODEVICE_SELECT=1`) unless the user set either.
fn quiet_device_select() {
    if std::env::var_os("XDG_RUNTIME_DIR").is_none()
        && std::env::var_os("NODEVICE_SELECT").is_none()
    {
        // SAFETY: called first in `main`, before any other thread exists, so nothing reads the
        // environment concurrently.
        #[allow(unsafe_code)]
        unsafe {
            std::env::set_var("NODEVICE_SELECT", "1");
        }
    }
}

fn main() {
    quiet_device_select();
    let cli = parse_args();
    quiet_panics();
    let json = cli.json;
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(cli)));
    let status = match outcome {
        Ok(Ok(text)) => match output::stdout(&text, json) {
            Ok(()) => 0,
            Err(e) => {
                output::stderr_line("error", &format!("cannot write the output: {e}"));
                1
            }
        },
        Ok(Err(e)) => {
            // What the command did compute (some scans, some jobs) comes first, whole.
            if let Some(text) = e.output()
                && let Err(w) = output::stdout(text, json)
            {
                output::stderr_line("error", &format!("cannot write the output: {w}"));
            }
            output::stderr_line("error", &e.to_string());
            1
        }
        Err(_) => {
            let message = LAST_PANIC
                .lock()
                .ok()
                .and_then(|mut m| m.take())
                .unwrap_or_else(|| "unknown panic".to_string());
            let line = CliError::new(message).one_line();
            output::stderr_line("error", &format!("internal error: {line}"));
            101
        }
    };
    dspk_exit::exit_now(status)
}
