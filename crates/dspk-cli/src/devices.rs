//! `dspk devices`: the runtimes compiled in, which found a device, and each device with the
//! number `--devices` takes.

use std::fmt::Write as _;

use dspk_device::{Catalog, RuntimeEntry};

use crate::Ctx;
use crate::error::CliResult;

/// Runs `dspk devices`: every runtime (or only `--runtime`'s), its default device and every
/// other device it enumerates, each opened, described and numbered. The numbers are the same
/// with and without `--runtime`.
pub(crate) fn run(ctx: &Ctx) -> CliResult<String> {
    let only = match ctx.runtime_flag() {
        Some(_) => Some(ctx.target()?),
        None => None,
    };
    let catalog = Catalog::list();
    let reports: Vec<&RuntimeEntry> = catalog
        .runtimes
        .iter()
        .filter(|r| only.is_none_or(|t| r.runtime == t))
        .collect();
    if ctx.json {
        return Ok(
            serde_json::to_string_pretty(&reports).expect("device reports serialise") + "\n",
        );
    }
    let mut out = String::new();
    for r in &reports {
        if !r.compiled_in {
            let _ = writeln!(
                out,
                "{}: not compiled in (build with --features {})",
                r.runtime, r.runtime
            );
            continue;
        }
        match &r.error {
            Some(e) if r.devices.is_empty() => {
                let _ = writeln!(out, "{}: compiled in, no usable device: {e}", r.runtime);
            }
            _ => {
                let n = r.devices.len();
                let plural = if n == 1 { "" } else { "s" };
                let _ = writeln!(out, "{}: compiled in, {n} device{plural}", r.runtime);
                for d in &r.devices {
                    let mark = if d.default { "*" } else { " " };
                    for (i, line) in d.info.to_string().lines().enumerate() {
                        if i == 0 {
                            let _ = writeln!(out, "  {mark}{:>2}  {line}", d.index);
                        } else {
                            let _ = writeln!(out, "       {line}");
                        }
                    }
                }
                if let Some(e) = &r.error {
                    let _ = writeln!(out, "  (the default device did not open: {e})");
                }
            }
        }
    }
    if reports.iter().any(|r| r.devices.iter().any(|d| d.default)) {
        out.push_str(
            "* the runtime's default device, which scan and convert use without --devices\n",
        );
    }
    if reports.iter().any(|r| !r.devices.is_empty()) {
        out.push_str(
            "numbers: what --devices and DSPK_DEVICES take (`--devices 0,1`, `--devices all`)\n",
        );
    }
    Ok(out)
}
