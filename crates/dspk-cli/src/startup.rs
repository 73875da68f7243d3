//! The process's start: clap's parse with dspk's one-line usage errors, panics reported as
//! one line, and Mesa's device-select layer kept quiet.

use std::sync::Mutex;

use clap::Parser;

use crate::args::{Cli, Command};
use crate::output;

/// The message of the last panic, for the one-line report of a panic that reaches `main`.
pub(crate) static LAST_PANIC: Mutex<Option<String>> = Mutex::new(None);

/// Records panics instead of printing them: a panic that a library catches (a runtime probing
/// for a device) must not print, and one that reaches `main` is reported as one line.
pub(crate) fn quiet_panics() {
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
pub(crate) fn parse_args() -> Cli {
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
pub(crate) fn one_recording_misuse(cli: &Cli) -> Option<String> {
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
pub(crate) fn usage_line(clap_text: &str, args: impl Iterator<Item = String>) -> String {
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
pub(crate) fn quiet_device_select() {
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
