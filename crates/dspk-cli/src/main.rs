//! `dspk`: scan and convert extracellular recordings on a GPU (or any CubeCL runtime).

mod args;
mod bench;
mod cluster;
mod context;
mod convert;
mod detect;
mod devices;
mod error;
mod info;
mod input;
mod output;
mod page;
mod preprocess;
mod progress;
mod report;
mod scan;
mod startup;

use dspk_types::{ChannelList, MemoryOrder};

use crate::args::{Cli, Command, RecordingArg, open_one, rate_arg, time_arg};
use crate::error::{CliError, CliResult, Context as _};
use crate::input::Input;
use crate::startup::{LAST_PANIC, parse_args, quiet_device_select, quiet_panics};

pub(crate) use crate::context::Ctx;

/// Runs the command; returns what goes to stdout.
fn run(cli: Cli) -> CliResult<String> {
    let ctx = Ctx::new(cli.json, cli.runtime, cli.devices);
    // A bad --runtime or DSPK_RUNTIME is reported whatever the command.
    ctx.target()?;
    match cli.command {
        Command::Devices => devices::run(&ctx),
        Command::Info(args) => {
            if args.verify {
                for path in &args.recording.recordings {
                    let checked = dspk_io::verify_checksums(path)?;
                    crate::output::stderr_line("verified", &checked);
                }
            }
            info::run(&ctx, &args.recording.open()?, args.probe_out.as_deref())
        }
        Command::Scan(args) => {
            let time = args.time.parse()?;
            let opts = scan::ScanOptions {
                time,
                window_samples: args.window_samples,
                mask: args.mask,
                table: args.table,
                page: page::PageOptions::parse(
                    args.report.report,
                    &args.report.at,
                    &args.report.colour_by,
                )?,
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
        Command::Preprocess(args) => {
            if let Some(choice) = &args.print_pipeline {
                return preprocess::print_pipeline(&ctx, choice);
            }
            let opts = preprocess::PreprocessOptions {
                pipeline: args.pipeline,
                format: args
                    .format
                    .as_deref()
                    .map(dspk_types::OutputType::parse)
                    .transpose()
                    .context("--format")?,
                gain: args.gain,
                fits: args.fits,
                output: args.output,
                order: if args.order == "channel-major" {
                    MemoryOrder::ChannelMajor
                } else {
                    MemoryOrder::TimeMajor
                },
                window_samples: args.window_samples,
                dry_run: args.dry_run,
                on_device: args.on_device,
                page: page::PageOptions::parse(
                    args.report.report,
                    &args.report.at,
                    &args.report.colour_by,
                )?,
            };
            let length = time_arg("--synthetic-duration", args.synthetic_duration.as_ref())?;
            let input = open_one(&args.recordings, length, &args.join)?
                .with_probe(args.probe.as_deref())?
                .with_rate(rate_arg(args.rate.as_ref())?)?
                .with_segment(args.segment)?;
            preprocess::run(&ctx, input, &opts)
        }
        Command::Report(args) => page::run(
            &ctx,
            args.recording.open()?,
            &args.output,
            &args.pipeline,
            &args.at,
            &args.colour_by,
        ),
        Command::Detect(args) => {
            let opts = detect::DetectOptions {
                pipeline: args.pipeline,
                output: args.output,
                detect: dspk_stream::DetectSpec {
                    threshold: args.threshold,
                    sign: args.sign.parse()?,
                    radius_um: args.radius,
                    exclude_sweep_ms: args.exclude_sweep,
                },
                window_samples: args.window_samples,
            };
            detect::run(&ctx, args.recording.open()?, &opts)
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
                } else if args.preprocess.is_some() {
                    cluster::plan_file::JobCommand::Preprocess
                } else if args.detect {
                    cluster::plan_file::JobCommand::Detect
                } else {
                    cluster::plan_file::JobCommand::Scan
                },
                window_samples: args.window_samples,
                rate: args.rate,
                channels: args.channels,
                order: args.order,
                probe: args.probe,
                pipeline: args.preprocess.or(args.pipeline),
                detect: args
                    .detect
                    .then(|| {
                        cluster::detect::spec_of_flags(
                            args.threshold,
                            args.sign.as_deref(),
                            args.radius,
                            args.exclude_sweep,
                        )
                    })
                    .transpose()?,
                format: args
                    .format
                    .as_deref()
                    .map(dspk_types::OutputType::parse)
                    .transpose()
                    .context("--format")?,
                gain: args.gain,
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
        Command::Bench(args) if args.stages => bench::stages(&ctx),
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
