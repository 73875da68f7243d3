//! The probe of an Open Ephys Neuropixels stream: the plugin's electrode selection placed on the
//! catalogue's grid, as probeinterface's `read_openephys_neuropixels` builds it.
//!
//! The plugin lists a probe's electrodes in readout-channel order, either as indices into the
//! catalogue's electrodes (`SELECTED_ELECTRODES`, shank after shank) or as the positions it
//! drew them at (`ELECTRODE_XPOS` / `ELECTRODE_YPOS`, older plugins), which are turned back into
//! electrodes on the catalogue's grid. Positions and ids are then the catalogue's; contact `i`
//! is readout channel `i` for the ADC table; the record node's saved channels pick among them;
//! and the stream's probe channels take them in order (`device_channel_indices` 0, 1, …).

use dspk_types::{Contact, Probe};

use super::catalogue::catalogue;
use super::grid::Grid;

/// Which electrodes an Open Ephys `NP_PROBE` chose, in readout-channel order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Selection {
    /// `SELECTED_ELECTRODES`: indices into the catalogue's electrodes, shank after shank.
    Indices(Vec<i64>),
    /// `CHANNELS` with `ELECTRODE_XPOS` / `ELECTRODE_YPOS`: where the plugin drew each channel's
    /// electrode (µm), and its shank where `CHANNELS` gives one.
    Positions {
        /// x of each channel, µm, from the plugin's own origin.
        x_um: Vec<f64>,
        /// y of each channel, µm.
        y_um: Vec<f64>,
        /// The shank of each channel, where given.
        shanks: Option<Vec<i64>>,
        /// Written by a GUI before 0.6, whose plugin added the shank pitch to y.
        before_0_6: bool,
    },
}

/// The probe of a stream of part `part` whose `NP_PROBE` chose `selection`; `saved` the
/// record node's saved subset of those channels (`None`: all); `probe_channel[k]` whether
/// stream channel `k` is a probe channel (not ADC or sync). `Err` says in one line why not.
pub(crate) fn openephys_probe(
    part: &str,
    selection: &Selection,
    saved: Option<&[usize]>,
    probe_channel: &[bool],
) -> Result<Probe, String> {
    let cat = catalogue()?;
    let spec = cat
        .probe(part)
        .ok_or_else(|| format!("probe part number {part} is not in the Neuropixels catalogue"))?;
    let grid = Grid::of(spec)?;
    let electrodes = match selection {
        Selection::Indices(indices) => from_indices(&grid, indices)?,
        Selection::Positions {
            x_um,
            y_um,
            shanks,
            before_0_6,
        } => from_positions(&grid, part, x_um, y_um, shanks.as_deref(), *before_0_6)?,
    };
    let adc = cat.adc_slots(spec, electrodes.len())?;
    let mut contacts: Vec<Contact> = electrodes
        .iter()
        .enumerate()
        .map(|(i, &(electrode, shank))| {
            let mut c = grid.contact(electrode, shank);
            c.adc = adc.as_ref().and_then(|(_, slots)| slots[i]);
            c
        })
        .collect();
    if let Some(saved) = saved {
        contacts = saved
            .iter()
            .map(|&j| {
                contacts.get(j).cloned().ok_or_else(|| {
                    format!(
                        "the record node saves channel {j} of a probe of {} channels",
                        contacts.len()
                    )
                })
            })
            .collect::<Result<_, _>>()?;
    }
    let wanted = probe_channel.iter().filter(|&&p| p).count();
    if wanted != contacts.len() {
        return Err(format!(
            "the stream has {wanted} probe channels but settings.xml gives {} electrodes",
            contacts.len()
        ));
    }
    let mut next = contacts.into_iter();
    let channels = probe_channel
        .iter()
        .map(|&p| if p { next.next() } else { None })
        .collect();
    grid.probe(spec, adc.as_ref(), channels)
}

/// `(electrode, shank)` of catalogue indices (shank-major).
fn from_indices(grid: &Grid, indices: &[i64]) -> Result<Vec<(i64, i64)>, String> {
    let all = grid.per_shank * grid.shanks;
    indices
        .iter()
        .map(|&i| {
            if (0..all).contains(&i) {
                Ok((i % grid.per_shank, i / grid.per_shank))
            } else {
                Err(format!(
                    "SELECTED_ELECTRODES holds electrode {i}, outside the probe's {all}"
                ))
            }
        })
        .collect()
}

/// `(electrode, shank)` of the plugin's drawn positions: x shifted so the leftmost column of
/// the lowest shank is at 0, before-0.6 y less the shank pitch × shank, then the grid's inverse.
/// Each must name an electrode of the catalogue (a position between electrodes, or shanks given
/// on a single-shank probe, do not).
fn from_positions(
    grid: &Grid,
    part: &str,
    x_um: &[f64],
    y_um: &[f64],
    shanks: Option<&[i64]>,
    before_0_6: bool,
) -> Result<Vec<(i64, i64)>, String> {
    if x_um.is_empty() {
        return Err("CHANNELS lists no channels".into());
    }
    if let Some(bad) = x_um.iter().chain(y_um).find(|v| !v.is_finite()) {
        return Err(format!("electrode position {bad} is not a finite number"));
    }
    let shank_of = |i: usize| shanks.map_or(0, |s| s[i]);
    let y: Vec<f64> = (0..y_um.len())
        .map(|i| match (before_0_6, shanks) {
            (true, Some(_)) => y_um[i] - grid.shank_pitch_um * shank_of(i) as f64,
            _ => y_um[i],
        })
        .collect();
    let mut offset = x_um.iter().copied().fold(f64::INFINITY, f64::min);
    if let Some(s) = shanks {
        let lowest = s.iter().copied().min().unwrap_or(0);
        offset -= lowest as f64 * grid.shank_pitch_um;
    }
    if grid.multi_shank && shanks.is_none() {
        return Err(format!(
            "CHANNELS gives no shanks for {part}, a probe of {} shanks",
            grid.shanks
        ));
    }
    (0..x_um.len())
        .map(|i| {
            let shank = shank_of(i);
            let on_grid = if grid.multi_shank { shank } else { 0 };
            let electrode = grid.electrode_at(x_um[i] - offset, y[i], on_grid);
            // probeinterface names it s{shank}e{electrode} whenever CHANNELS gives shanks, so a
            // single-shank probe with shanks given matches no catalogue contact.
            if shanks.is_some() != grid.multi_shank || !grid.holds(electrode, shank) {
                let id = match shanks {
                    Some(_) => format!("s{shank}e{electrode}"),
                    None => format!("e{electrode}"),
                };
                return Err(format!(
                    "the electrode position ({} µm, {} µm) of channel {i} is contact {id}, not one of {part}'s",
                    x_um[i], y_um[i]
                ));
            }
            Ok((electrode, shank))
        })
        .collect()
}

#[cfg(test)]
mod tests;
