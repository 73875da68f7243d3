//! The probe of one Open Ephys stream, from its record node's `settings.xml`, as
//! SpikeInterface's `read_openephys` attaches one.
//!
//! The settings file of experiment `K` is `settings.xml` (`K` = 1) or `settings_K.xml` in the
//! folder above `experimentK` (Neo's rule). SpikeInterface looks for a probe only for streams
//! that are neither sync (`SYNC` in the folder name) nor NI-DAQmx, and only where a processor
//! with Neuropixels geometry has a stream whose probe name is in the stream's folder name; the
//! probe is then the `NP_PROBE` whose name (else serial number) is in the folder name. The
//! stream's channels named `SYNC` or `ADC` carry no contact; the others take the probe's
//! contacts in order.

use std::path::PathBuf;

use dspk_types::Probe;

use super::oebin::{OpenEphysRecordingEntry, OpenEphysStream};
use super::settings::{Settings, SettingsProbe};
use crate::neuropixels::openephys_probe;

/// The probe of `stream` of the recording `entry`, whose channels are named `channel_names`.
/// `Ok(None)` where the folder gives no geometry for it (no settings file, a stream that is not
/// a Neuropixels probe's); `Err` says in one line, naming the settings file, why geometry that
/// is there cannot be had (the stream still opens).
pub(super) fn stream_probe(
    entry: &OpenEphysRecordingEntry,
    stream: &OpenEphysStream,
    channel_names: &[String],
) -> Result<Option<Probe>, String> {
    let name = stream.name.as_str();
    if name.contains("SYNC") || name.contains("NI-DAQmx") {
        return Ok(None);
    }
    let Some(path) = settings_path(entry).filter(|p| p.is_file()) else {
        return Ok(None);
    };
    let fail = |why: String| {
        format!(
            "{}: no probe geometry for stream {name}: {why}",
            path.display()
        )
    };
    let text = std::fs::read_to_string(&path).map_err(|e| fail(format!("cannot read it: {e}")))?;
    let settings = Settings::parse(&text).map_err(fail)?;
    if !settings.has_probe_for(name) {
        return Ok(None);
    }
    let probes = settings.probes().map_err(fail)?;
    let chosen = select(&probes, name).map_err(fail)?;
    let saved = settings.saved_channels(name).map_err(fail)?;
    let probe_channel: Vec<bool> = channel_names
        .iter()
        .map(|c| !(c.contains("SYNC") || c.contains("ADC")))
        .collect();
    openephys_probe(
        &chosen.part_number,
        &chosen.selection,
        saved.as_deref(),
        &probe_channel,
    )
    .map(Some)
    .map_err(|e| {
        fail(format!(
            "probe {} ({}): {e}",
            chosen.name, chosen.part_number
        ))
    })
}

/// The settings file of the recording's experiment: `settings.xml` or `settings_K.xml` beside
/// the `experimentK` folder. `None` where the folder is not named `experimentK`.
fn settings_path(entry: &OpenEphysRecordingEntry) -> Option<PathBuf> {
    let k = entry.experiment?;
    let node = entry.dir.parent()?.parent()?;
    Some(node.join(if k == 1 {
        "settings.xml".to_string()
    } else {
        format!("settings_{k}.xml")
    }))
}

/// The probe of the stream `stream` (its folder name): the one whose name is in it, else the
/// one whose serial number is in it; a single probe must have its name in it.
fn select<'p>(probes: &'p [SettingsProbe], stream: &str) -> Result<&'p SettingsProbe, String> {
    let names = || {
        probes
            .iter()
            .map(|p| p.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    match probes {
        [one] if stream.contains(&one.name) => Ok(one),
        [one] => Err(format!(
            "the stream is not probe {}'s, the only one",
            one.name
        )),
        many => many
            .iter()
            .find(|p| stream.contains(&p.name))
            .or_else(|| {
                many.iter().find(|p| {
                    p.serial_number
                        .as_deref()
                        .is_some_and(|s| stream.contains(s))
                })
            })
            .ok_or_else(|| {
                format!(
                    "no probe's name or serial number is in it (probes: {})",
                    names()
                )
            }),
    }
}
