//! The command line as clap parses it: the commands, their flags and what every flag means
//! (`--help`'s text), and the small conversions of parsed flags into the libraries' values.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use dspk_types::{RateChoice, TimeSpec};

use crate::error::{CliError, CliResult, Context as _};
use crate::input::{Input, JoinOptions, RATE_FLAG, TimeOptions};

pub(crate) const EXAMPLES: &str = "\
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
  dspk plan a.ap.bin --preprocess kilosort4 --chunk 5:00 --out pre   fit once, jobs apply it
  dspk plan a.ap.bin --detect --pipeline kilosort4 --chunk 5:00 --out det   noise fitted once

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
pub(crate) struct Cli {
    /// Compute runtime: wgpu, cuda, hip or cpu [default: $DSPK_RUNTIME, else the first
    /// compiled in]
    #[arg(long, global = true, value_name = "RUNTIME")]
    pub(crate) runtime: Option<String>,

    /// Print machine-readable JSON on stdout instead of text
    #[arg(long, global = true)]
    pub(crate) json: bool,

    /// Devices to use, as `dspk devices` numbers them: `all` (every GPU) or `0,2` (a number
    /// twice: two devices on one adapter) [default: $DSPK_DEVICES, else the runtime's default
    /// device]
    #[arg(long, global = true, value_name = "LIST")]
    pub(crate) devices: Option<String>,

    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// List the runtimes compiled in, which found a device, and each device's limits
    Devices,
    /// Describe a recording: channels, exact rate, duration, format, gains, metadata
    Info(InfoArgs),
    /// The main job: per-channel statistics on the device; flag dead and noisy channels
    #[command(after_help = "The last line reports throughput: stored MB/s and × real time.")]
    Scan(ScanArgs),
    /// Decode a recording on the device to f32 µV and write raw binary + JSON sidecar
    Convert(ConvertArgs),
    /// Preprocess on the device (a preset's chain or your own spec: filters, reference, phase
    /// shift, whitening, int16) and write a sorter-ready raw binary + sidecar
    #[command(after_help = PREPROCESS_HELP)]
    Preprocess(PreprocessArgs),
    /// Detect spikes on the device (after an optional pipeline): threshold crossings of the
    /// noise, locally exclusive over the probe; a table of peaks (.npy, .jsonl or .csv)
    #[command(after_help = DETECT_HELP)]
    Detect(DetectArgs),
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
    /// Write a report a person opens in a browser: one self-contained HTML page with the probe
    /// and its dead and noisy channels, the noise along it, a few windows raw and after each
    /// stage of a pipeline as heat maps and traces, and the run
    Report(ReportArgs),
    /// Run one job of a plan (a Slurm array task: --job defaults to $SLURM_ARRAY_TASK_ID)
    Run(RunArgs),
    /// Merge a plan's results; list the jobs that failed or never ran
    Gather(GatherArgs),
}

#[derive(Debug, Args)]
pub(crate) struct ReportArgs {
    #[command(flatten)]
    pub(crate) recording: RecordingArg,

    /// The report (an HTML file)
    #[arg(short, long, value_name = "FILE.html")]
    pub(crate) output: PathBuf,

    /// The pipeline whose stages are drawn: a preset's name, a spec file, or `none` (the raw
    /// windows only)
    #[arg(long, value_name = "NAME|FILE", default_value = "none")]
    pub(crate) pipeline: String,

    /// Where the windows (a second each) start (a time; repeat for several) [default: three
    /// spread evenly over the recording]
    #[arg(long, value_name = "T")]
    pub(crate) at: Vec<String>,

    /// What the probe colours its contacts by: their class (dead, noisy, good) or a statistic
    #[arg(long, value_name = "WHAT", default_value = "class", value_parser = ["class", "std", "mad", "mean"])]
    pub(crate) colour_by: String,
}

#[derive(Debug, Args)]
pub(crate) struct PlanArgs {
    /// The recordings (each a SpikeGLX .bin, Open Ephys folder or raw binary + sidecar)
    #[arg(value_name = "REC")]
    pub(crate) recordings: Vec<PathBuf>,

    /// The plan's folder: plan.json, array.sbatch, results/ (outputs/ for convert, preprocess
    /// and detect; preprocess/ or detect/ for a plan's fitted parameters)
    #[arg(long, value_name = "DIR")]
    pub(crate) out: PathBuf,

    /// The folder the plan's paths are relative to [default: the current directory]
    #[arg(long, value_name = "DIR")]
    pub(crate) base: Option<PathBuf>,

    /// Cut each segment of each recording into chunks of this length, one job each (a time)
    /// [default: one job per segment]
    #[arg(long, value_name = "T")]
    pub(crate) chunk: Option<String>,

    /// Plan the built-in synthetic recording too, this long
    #[arg(long, value_name = "T")]
    pub(crate) synthetic_duration: Option<String>,

    /// The jobs convert (into DIR/outputs/job-N.bin) instead of scanning
    #[arg(long)]
    pub(crate) convert: bool,

    /// Convert jobs: the channels to keep, e.g. 0:5,100
    #[arg(long, value_name = "LIST", requires = "convert")]
    pub(crate) channels: Option<String>,

    /// Convert and preprocess jobs: the layout of the output files
    #[arg(long, value_name = "ORDER", value_parser = ["channel-major", "time-major"])]
    pub(crate) order: Option<String>,

    /// The jobs preprocess with this pipeline (a preset's name or a spec file), each a part of
    /// a recording into DIR/outputs/job-N.bin; fitted stages (whitening, centring) are fitted
    /// here, once per recording, and every job applies those parameters; `dspk gather`
    /// assembles each recording's output, DIR/outputs/rec-K.bin, the same bits as one
    /// `dspk preprocess`
    #[arg(long, value_name = "NAME|FILE", conflicts_with = "convert")]
    pub(crate) preprocess: Option<String>,

    /// Preprocess jobs: the output's sample type [default: the pipeline's]
    #[arg(long, value_name = "TYPE", requires = "preprocess",
          value_parser = ["int16", "float32"])]
    pub(crate) format: Option<String>,

    /// Preprocess jobs: multiply the output by G before it is stored [default: the pipeline's]
    #[arg(
        long,
        value_name = "G",
        requires = "preprocess",
        allow_hyphen_values = true
    )]
    pub(crate) gain: Option<f64>,

    /// The jobs detect spikes (as `dspk detect`), each in a part of a recording into
    /// DIR/outputs/job-N.npy; the pipeline's fitted stages and the noise levels are fitted
    /// here, once per recording; `dspk gather` concatenates each recording's table,
    /// DIR/outputs/rec-K.npy, the same bytes as one `dspk detect`
    #[arg(long, conflicts_with_all = ["convert", "preprocess"])]
    pub(crate) detect: bool,

    /// Detect jobs: the pipeline run first: a preset's name, a spec file, or `none`
    /// [default: none]
    #[arg(long, value_name = "NAME|FILE", requires = "detect")]
    pub(crate) pipeline: Option<String>,

    /// Detect jobs: the threshold in noise levels [default: 5]
    #[arg(
        long,
        value_name = "K",
        requires = "detect",
        allow_hyphen_values = true
    )]
    pub(crate) threshold: Option<f64>,

    /// Detect jobs: which crossings are peaks [default: neg]
    #[arg(long, value_name = "SIGN", requires = "detect", value_parser = ["neg", "pos", "both"])]
    pub(crate) sign: Option<String>,

    /// Detect jobs: a peak excludes smaller ones on channels within this distance (µm)
    /// [default: 50]
    #[arg(
        long,
        value_name = "UM",
        requires = "detect",
        allow_hyphen_values = true
    )]
    pub(crate) radius: Option<f64>,

    /// Detect jobs: ... and within this many ms [default: 0.1]
    #[arg(
        long,
        value_name = "MS",
        requires = "detect",
        allow_hyphen_values = true
    )]
    pub(crate) exclude_sweep: Option<f64>,

    /// The Open Ephys stream to plan, by folder name or stream_name [default: every stream of
    /// each recording, a job or jobs each]
    #[arg(long, value_name = "NAME")]
    pub(crate) stream: Option<String>,

    /// Read the recordings at this sample rate instead of the one their files state
    #[arg(long, value_name = "HZ", allow_hyphen_values = true)]
    pub(crate) rate: Option<String>,

    /// Samples per window sent to the device
    #[arg(long, value_name = "N")]
    pub(crate) window_samples: Option<u64>,

    /// Attach the probe geometry of FILE, a probeinterface JSON file, to every recording in
    /// every job (as `dspk scan --probe` does)
    #[arg(long, value_name = "FILE")]
    pub(crate) probe: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    /// The plan's folder
    #[arg(value_name = "DIR")]
    pub(crate) dir: PathBuf,

    /// The job to run [default: $SLURM_ARRAY_TASK_ID]
    #[arg(long, value_name = "N")]
    pub(crate) job: Option<usize>,

    /// Where the recordings are on this machine, instead of the plan's base
    #[arg(long, value_name = "DIR")]
    pub(crate) base: Option<PathBuf>,

    /// Run the job even if its result is there
    #[arg(long)]
    pub(crate) force: bool,
}

#[derive(Debug, Args)]
pub(crate) struct GatherArgs {
    /// The plan's folder
    #[arg(value_name = "DIR")]
    pub(crate) dir: PathBuf,
}

#[derive(Debug, Args)]
pub(crate) struct BenchArgs {
    /// A recording to read (best page-cached): a raw binary file with its sidecar, a SpikeGLX
    /// .bin or an Open Ephys recording folder; none: a synthetic file
    #[arg(value_name = "REC")]
    pub(crate) recording: Option<PathBuf>,

    /// The Open Ephys continuous stream of REC to read, by folder name or stream_name, or the
    /// NWB ElectricalSeries (its path or last part), where it has several
    #[arg(long, value_name = "NAME")]
    pub(crate) stream: Option<String>,

    /// Seconds of synthetic data to write when no REC is given
    #[arg(long, default_value_t = 20)]
    pub(crate) seconds: u64,

    /// Samples per window [default: one second, capped by the device's largest buffer]; the
    /// PyTorch baseline moves windows of the same size
    #[arg(long, value_name = "N")]
    pub(crate) window_samples: Option<u64>,

    /// Instead of the table: each preprocessing stage's device throughput on one second of 384
    /// channels already on the device, against a device copy of the same values
    #[arg(long)]
    pub(crate) stages: bool,
}

/// A recording, or none for the built-in synthetic one.
#[derive(Debug, Args)]
pub(crate) struct RecordingArg {
    /// The recording: a SpikeGLX .bin (with its .meta), an Open Ephys folder or a raw binary
    /// file with a JSON sidecar; several with --concat; none: the built-in synthetic recording
    #[arg(value_name = "REC")]
    pub(crate) recordings: Vec<PathBuf>,

    /// Length of the built-in synthetic recording when no REC is given [default: 60]
    #[arg(long, value_name = "T")]
    pub(crate) synthetic_duration: Option<String>,

    /// Read the recording at this sample rate instead of the one it is timed at: a rate (a
    /// measured one: 29997.17, 750003/25), `nominal` or `measured` (the format's); every time
    /// is computed from it
    #[arg(long, value_name = "HZ", allow_hyphen_values = true)]
    pub(crate) rate: Option<String>,

    /// Attach the probe geometry of FILE, a probeinterface JSON file (as `dspk info
    /// --probe-out` writes), in place of any the recording carries; it must give every channel
    /// a contact (a sync channel of the recording's own probe excepted)
    #[arg(long, value_name = "FILE")]
    pub(crate) probe: Option<PathBuf>,

    #[command(flatten)]
    pub(crate) join: JoinArgs,
}

/// How RECs are opened: `--stream`, and `--concat` and how it joins.
#[derive(Debug, Args)]
pub(crate) struct JoinArgs {
    /// The Open Ephys continuous stream to read, by folder name or stream_name
    /// (`Neuropix-PXI-100.ProbeA-AP`, `ProbeA-AP`): the way to choose a stream of a folder of
    /// one experiment's recordings; or an NWB file's ElectricalSeries, by its path in the file
    /// or its last part (`acquisition/ElectricalSeriesAP`, `ElectricalSeriesAP`) [default: the
    /// stream REC names, or its only one]
    #[arg(long, value_name = "NAME")]
    pub(crate) stream: Option<String>,

    /// Read the RECs as one recording, end to end by their clocks (SpikeGLX `_tN` files by
    /// firstSample; one trigger file alone brings its whole run): contiguous files are one
    /// segment, a gap starts another
    #[arg(long)]
    pub(crate) concat: bool,

    /// With --concat: fill the gaps between files with zeros (as CatGT does) instead of
    /// starting a new segment
    #[arg(long, requires = "concat")]
    pub(crate) zero_fill_gaps: bool,

    /// With --concat: accept files whose rates differ by up to PPM parts per million (with a
    /// warning stating the drift); without it the rates must be equal exactly
    #[arg(long, value_name = "PPM", requires = "concat")]
    pub(crate) rate_tolerance: Option<f64>,
}

impl JoinArgs {
    pub(crate) fn options(&self) -> CliResult<JoinOptions> {
        Ok(JoinOptions {
            zero_fill: self.zero_fill_gaps,
            tolerance_ppm: self.rate_tolerance,
            stream: self.stream.clone(),
        })
    }
}

#[derive(Debug, Args)]
pub(crate) struct InfoArgs {
    #[command(flatten)]
    pub(crate) recording: RecordingArg,

    /// Also write the recording's probe geometry to FILE as probeinterface JSON (an error
    /// where the format gives none)
    #[arg(long, value_name = "FILE")]
    pub(crate) probe_out: Option<PathBuf>,

    /// First check the checksums the file carries (an mtscomp .cbin's SHA-1s, decoding every
    /// chunk); a mismatch is an error
    #[arg(long)]
    pub(crate) verify: bool,
}

/// `--report` and `--at`, as written.
#[derive(Debug, Args)]
pub(crate) struct ReportFlags {
    /// Also write a report a person opens in a browser to this file: one self-contained HTML
    /// page (the probe with its dead and noisy channels, noise along the probe, windows as heat
    /// maps and traces, the run)
    #[arg(long, value_name = "FILE.html")]
    pub(crate) report: Option<PathBuf>,

    /// Where the report's windows (a second each) start (a time; repeat for several)
    /// [default: three spread evenly over the recording]
    #[arg(long, value_name = "T", requires = "report")]
    pub(crate) at: Vec<String>,

    /// What the report's probe colours its contacts by: their class (dead, noisy, good) or a
    /// statistic
    #[arg(long, value_name = "WHAT", default_value = "class", value_parser = ["class", "std", "mad", "mean"], requires = "report")]
    pub(crate) colour_by: String,
}

/// `--start`, `--end`, `--duration`, as written.
#[derive(Debug, Args)]
pub(crate) struct TimeArgs {
    /// First sample to use (a time, see below) [default: the first]
    #[arg(long, value_name = "T", allow_hyphen_values = true)]
    pub(crate) start: Option<String>,

    /// Where to stop, exclusive (a time) [default: the end]
    #[arg(long, value_name = "T", allow_hyphen_values = true)]
    pub(crate) end: Option<String>,

    /// How much to use from --start, at most (a time; instead of --end)
    #[arg(long, value_name = "T", allow_hyphen_values = true)]
    pub(crate) duration: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct ScanArgs {
    /// The recordings: each a SpikeGLX .bin (with its .meta), an Open Ephys folder or a raw
    /// binary file with a JSON sidecar; none: the built-in synthetic recording. Several are
    /// scanned one per device at a time
    #[arg(value_name = "REC")]
    pub(crate) recordings: Vec<PathBuf>,

    /// Length of the built-in synthetic recording when no REC is given [default: 60]
    #[arg(long, value_name = "T")]
    pub(crate) synthetic_duration: Option<String>,

    /// Read the recordings at this sample rate instead of the one they are timed at: a rate,
    /// `nominal` or `measured` (the format's); every time is computed from it
    #[arg(long, value_name = "HZ", allow_hyphen_values = true)]
    pub(crate) rate: Option<String>,

    /// Attach the probe geometry of FILE, a probeinterface JSON file (as `dspk info
    /// --probe-out` writes), in place of any each recording carries; it must give every channel
    /// a contact (a sync channel of the recording's own probe excepted)
    #[arg(long, value_name = "FILE")]
    pub(crate) probe: Option<PathBuf>,

    #[command(flatten)]
    pub(crate) join: JoinArgs,

    /// Only this segment of the recording (from 0; `dspk info` lists them) [default: all]
    #[arg(long, value_name = "N")]
    pub(crate) segment: Option<usize>,

    #[command(flatten)]
    pub(crate) time: TimeArgs,

    /// Write the channel mask (dead and noisy channels disabled) as JSON to this file
    #[arg(long, value_name = "OUT.json")]
    pub(crate) mask: Option<PathBuf>,

    /// Print every channel's statistics (min, max, mean, rms, std), not only the flagged
    /// channels (--json always has them)
    #[arg(long)]
    pub(crate) table: bool,

    #[command(flatten)]
    pub(crate) report: ReportFlags,

    /// Samples per window sent to the device [default: one second, capped by the device's
    /// largest buffer]
    #[arg(long, value_name = "N")]
    pub(crate) window_samples: Option<u64>,
}

#[derive(Debug, Args)]
pub(crate) struct ConvertArgs {
    /// The recording to convert (several with --concat); none: the built-in synthetic
    /// recording
    #[arg(value_name = "REC")]
    pub(crate) recordings: Vec<PathBuf>,

    /// Length of the built-in synthetic recording when no REC is given [default: 60; 384
    /// channels of float32: 46 MB a second]
    #[arg(long, value_name = "T")]
    pub(crate) synthetic_duration: Option<String>,

    #[command(flatten)]
    pub(crate) join: JoinArgs,

    /// Write only this segment (from 0; `dspk info` lists them) [default: every segment, kept
    /// as segments in the output's sidecar]
    #[arg(long, value_name = "N")]
    pub(crate) segment: Option<usize>,

    /// The output data file; its sidecar is OUT.json
    #[arg(short, long, value_name = "OUT")]
    pub(crate) output: PathBuf,

    /// Channels to keep, in this order (after --map): e.g. 0:5,100,383
    #[arg(long, value_name = "LIST")]
    pub(crate) channels: Option<String>,

    /// A channel map (TOML or JSON, a `remap` table) applied first
    #[arg(long, value_name = "MAP")]
    pub(crate) map: Option<PathBuf>,

    /// Attach the probe geometry of FILE, a probeinterface JSON file (as `dspk info
    /// --probe-out` writes), in place of any the recording carries, and write it into the
    /// output's sidecar; it must give every channel a contact (a sync channel of the
    /// recording's own probe excepted)
    #[arg(long, value_name = "FILE")]
    pub(crate) probe: Option<PathBuf>,

    /// Read the recording at this sample rate instead of the one it is timed at (a rate,
    /// `nominal` or `measured`); times and the output's sidecar use it
    #[arg(long, value_name = "HZ", allow_hyphen_values = true)]
    pub(crate) rate: Option<String>,

    #[command(flatten)]
    pub(crate) time: TimeArgs,

    /// Layout of the output file
    #[arg(long, value_name = "ORDER", default_value = "time-major",
          value_parser = ["channel-major", "time-major"])]
    pub(crate) order: String,

    /// Samples per window sent to the device [default: one second, capped by the device's
    /// largest buffer]
    #[arg(long, value_name = "N")]
    pub(crate) window_samples: Option<u64>,
}

/// `dspk preprocess --help`'s closing text: the presets.
const PREPROCESS_HELP: &str =
    "Presets (--pipeline NAME; `--print-pipeline NAME` prints one as TOML \
to start your own spec from):
  kilosort4       Kilosort4's chain: centring, median reference, high-pass 300 Hz, local \
whitening over 32 contacts, int16 x200
  spikeinterface  SpikeInterface's common chain: band-pass 300-6000 Hz, Neuropixels phase \
shift, global median reference
  ibl             IBL's destripe: high-pass 300 Hz, Neuropixels phase shift, spatial high-pass \
per shank after a 0.1 s gain control (add bad channels as an interpolate_bad stage)

Without REC, the built-in synthetic recording is preprocessed.";

const DETECT_HELP: &str = "The table is sorted by sample, then channel; a .npy file holds \
SpikeInterface's peak dtype (sample_index, channel_index, amplitude, segment_index; \
sample_index counted from its segment's start, as SpikeInterface counts). Noise levels \
are the median absolute deviation / 0.6745 of 20 chunks of 500 ms per segment, on the pipeline's \
output. Without REC, the built-in synthetic recording, and the peaks are scored against the \
spikes it planted: recall and precision within 0.4 ms of a trough on the same channel.";

#[derive(Debug, Args)]
pub(crate) struct DetectArgs {
    #[command(flatten)]
    pub(crate) recording: RecordingArg,

    /// The table of peaks (.npy, .jsonl or .csv)
    #[arg(short, long, value_name = "OUT")]
    pub(crate) output: PathBuf,

    /// The pipeline run first: a preset's name, a spec file, or `none` (the recording as it
    /// is, e.g. already preprocessed)
    #[arg(long, value_name = "NAME|FILE", default_value = "none")]
    pub(crate) pipeline: String,

    /// The threshold in noise levels
    #[arg(long, value_name = "K", default_value_t = 5.0)]
    pub(crate) threshold: f64,

    /// Which crossings are peaks
    #[arg(long, value_name = "SIGN", default_value = "neg", value_parser = ["neg", "pos", "both"])]
    pub(crate) sign: String,

    /// A peak excludes smaller ones on channels within this distance (µm)
    #[arg(long, value_name = "UM", default_value_t = 50.0)]
    pub(crate) radius: f64,

    /// ... and within this many ms
    #[arg(long, value_name = "MS", default_value_t = 0.1)]
    pub(crate) exclude_sweep: f64,

    /// Samples each window owns [default: two seconds, capped by the device's largest buffer]
    #[arg(long, value_name = "N")]
    pub(crate) window_samples: Option<u64>,
}

#[derive(Debug, Args)]
pub(crate) struct PreprocessArgs {
    /// The recording to preprocess (several with --concat); none: the built-in synthetic
    /// recording
    #[arg(value_name = "REC")]
    pub(crate) recordings: Vec<PathBuf>,

    /// Length of the built-in synthetic recording when no REC is given [default: 60]
    #[arg(long, value_name = "T")]
    pub(crate) synthetic_duration: Option<String>,

    #[command(flatten)]
    pub(crate) join: JoinArgs,

    /// Preprocess only this segment (from 0) [default: every segment, kept as segments]
    #[arg(long, value_name = "N")]
    pub(crate) segment: Option<usize>,

    /// The output data file; its sidecar is OUT.json (with the probe and the provenance)
    #[arg(short, long, value_name = "OUT",
          required_unless_present_any = ["print_pipeline", "dry_run", "on_device"])]
    pub(crate) output: Option<PathBuf>,

    /// The pipeline: a preset's name or a spec file (TOML or JSON)
    #[arg(long, value_name = "NAME|FILE", default_value = "kilosort4")]
    pub(crate) pipeline: String,

    /// Print the pipeline (a preset's name or a spec file) as TOML and stop
    #[arg(long, value_name = "NAME|FILE", conflicts_with_all = ["output", "dry_run"])]
    pub(crate) print_pipeline: Option<String>,

    /// The output's sample type [default: the pipeline's]
    #[arg(long, value_name = "TYPE", value_parser = ["int16", "float32"])]
    pub(crate) format: Option<String>,

    /// Multiply the output by G before it is stored [default: the pipeline's]
    #[arg(long, value_name = "G", allow_hyphen_values = true)]
    pub(crate) gain: Option<f64>,

    /// Apply the fitted parameters (whitening) recorded in FILE, a preprocessed file's
    /// sidecar, instead of fitting them again
    #[arg(long, value_name = "FILE")]
    pub(crate) fits: Option<PathBuf>,

    /// Print the plan (stages, halos, windows, device memory) and stop without reading
    #[arg(long)]
    pub(crate) dry_run: bool,

    /// Keep the preprocessed windows on the device and write nothing: how fast a consumer
    /// there (a sorter on the GPU) would get them, file → preprocessed windows
    #[arg(long, conflicts_with_all = ["output", "dry_run"])]
    pub(crate) on_device: bool,

    #[command(flatten)]
    pub(crate) report: ReportFlags,

    /// Attach the probe geometry of FILE, a probeinterface JSON file, in place of any the
    /// recording carries
    #[arg(long, value_name = "FILE")]
    pub(crate) probe: Option<PathBuf>,

    /// Read the recording at this sample rate instead of the one it is timed at (a rate,
    /// `nominal` or `measured`)
    #[arg(long, value_name = "HZ", allow_hyphen_values = true)]
    pub(crate) rate: Option<String>,

    /// Layout of the output file (sorters read time-major)
    #[arg(long, value_name = "ORDER", default_value = "time-major",
          value_parser = ["channel-major", "time-major"])]
    pub(crate) order: String,

    /// Samples each window owns [default: two seconds, capped by the device's largest buffer]
    #[arg(long, value_name = "N")]
    pub(crate) window_samples: Option<u64>,
}

/// A time option, parsed.
pub(crate) fn time_arg(flag: &str, text: Option<&String>) -> CliResult<Option<TimeSpec>> {
    text.map(|t| TimeSpec::parse(t).context(flag)).transpose()
}

impl TimeArgs {
    pub(crate) fn parse(&self) -> CliResult<TimeOptions> {
        Ok(TimeOptions {
            start: time_arg("--start", self.start.as_ref())?,
            end: time_arg("--end", self.end.as_ref())?,
            duration: time_arg("--duration", self.duration.as_ref())?,
        })
    }
}

impl RecordingArg {
    pub(crate) fn open(&self) -> CliResult<Input> {
        let length = time_arg("--synthetic-duration", self.synthetic_duration.as_ref())?;
        let rate = rate_arg(self.rate.as_ref())?;
        open_one(&self.recordings, length, &self.join)?
            .with_probe(self.probe.as_deref())?
            .with_rate(rate)
    }
}

/// The one recording `paths` name: a file, the files joined with `--concat` (one SpikeGLX
/// trigger file brings its run), or the synthetic recording when there are none.
pub(crate) fn open_one(
    paths: &[PathBuf],
    length: Option<TimeSpec>,
    join: &JoinArgs,
) -> CliResult<Input> {
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
pub(crate) fn rate_arg(text: Option<&String>) -> CliResult<Option<RateChoice>> {
    text.map(|t| RateChoice::parse(t).context(RATE_FLAG))
        .transpose()
}
