//! The probe of a SpikeGLX imec file: its `~imroTbl` placed on the Neuropixels catalogue's grid
//! (`crate::neuropixels`), checked against `~snsShankMap` / `~snsGeomMap`.

use std::collections::HashMap;

use dspk_types::{Contact, Probe};

use super::meta::SpikeGlxMeta;
use crate::neuropixels::{Catalogue, Grid, catalogue};

/// Electrodes per bank of NP1.0-type IMRO tables (`bank × 384 + channel`).
const BANK_ELECTRODES: i64 = 384;

/// The probe of a SpikeGLX imec file whose channel `j` is readout channel `readout[j]`
/// (`None`: the sync channel, no contact). `Ok(None)` where the `.meta` has no `~imroTbl`;
/// `Err` says in one line why the geometry cannot be had (the recording still opens).
pub(crate) fn spikeglx_probe(
    meta: &SpikeGlxMeta,
    readout: &[Option<usize>],
) -> Result<Option<Probe>, String> {
    let Some(text) = meta.get("imroTbl") else {
        return Ok(None);
    };
    let cat = catalogue()?;
    let imro = Imro::parse(text, cat)?;
    let part = part_number(meta, &imro, cat)?;
    let spec = cat
        .probe(&part)
        .ok_or_else(|| format!("probe part number {part} is not in the Neuropixels catalogue"))?;
    let grid = Grid::of(spec)?;
    let by_readout = imro.electrodes(&grid)?;
    let adc = cat.adc_slots(spec, spec.count("num_readout_channels")?)?;
    let mut channels = Vec::with_capacity(readout.len());
    for r in readout {
        let Some(r) = *r else {
            channels.push(None);
            continue;
        };
        let &(electrode, shank) = by_readout
            .get(&r)
            .ok_or_else(|| format!("~imroTbl has no entry for readout channel {r}"))?;
        let mut contact = grid.contact(electrode, shank);
        contact.adc = adc
            .as_ref()
            .and_then(|(_, slots)| slots.get(r).copied().flatten());
        channels.push(Some(contact));
    }
    let probe = grid.probe(spec, adc.as_ref(), channels)?;
    check_shank_map(meta, &probe, &grid)?;
    check_geom_map(meta, &probe, &grid)?;
    Ok(Some(probe))
}

/// The part number: `imDatPrb_pn`, `NP1010` for Phase 3A, else the IMRO header's.
fn part_number(meta: &SpikeGlxMeta, imro: &Imro, cat: &Catalogue) -> Result<String, String> {
    if meta.get("imProbeOpt").is_some() {
        return Ok("NP1010".into());
    }
    if let Some(pn) = meta.get("imDatPrb_pn")
        && cat.probe(pn).is_some()
    {
        return Ok(pn.to_string());
    }
    if cat.probe(&imro.first).is_some() {
        return Ok(imro.first.clone());
    }
    let code = meta.get("imDatPrb_type").unwrap_or(&imro.first);
    cat.part_for_type(code)
        .map(str::to_string)
        .ok_or_else(|| match meta.get("imDatPrb_pn") {
            Some(pn) => format!("probe part number {pn} is not in the Neuropixels catalogue"),
            None => format!("probe type {code} is not in the Neuropixels catalogue"),
        })
}

/// A parsed `~imroTbl`: the header's first field, its named fields and the entries.
struct Imro {
    first: String,
    header: HashMap<String, i64>,
    fields: Vec<String>,
    entries: Vec<Vec<i64>>,
}

impl Imro {
    fn parse(text: &str, cat: &Catalogue) -> Result<Self, String> {
        let bad = |what: &str| format!("~imroTbl is malformed: {what}");
        let mut groups = text
            .split(')')
            .map(|g| g.trim().trim_start_matches('(').trim())
            .filter(|g| !g.is_empty());
        let head: Vec<&str> = groups
            .next()
            .ok_or_else(|| bad("no header"))?
            .split(',')
            .map(str::trim)
            .collect();
        let first = head[0].to_string();
        // Phase 3A's header has three fields (serial, type, channels) and NP1.0's format.
        let format = if head.len() == 3 {
            "imro_np1000"
        } else {
            cat.imro_format(&first).ok_or_else(|| {
                format!("~imroTbl header's first field {first} is neither a catalogue part number nor a known IMRO type")
            })?
        };
        let hdr_fields = cat
            .imro_fields(format, "hdr")
            .ok_or_else(|| format!("IMRO format {format} has no header fields in the catalogue"))?;
        let fields: Vec<String> = cat
            .imro_fields(format, "elm")
            .ok_or_else(|| format!("IMRO format {format} has no entry fields in the catalogue"))?
            .into_iter()
            .map(str::to_string)
            .collect();
        let mut header = HashMap::new();
        for (name, value) in hdr_fields.iter().zip(&head).skip(1) {
            let v = value
                .parse()
                .map_err(|_| bad(&format!("header field {name}={value} is not a number")))?;
            header.insert((*name).to_string(), v);
        }
        let entries = groups
            .map(|g| {
                g.split_whitespace()
                    .map(|v| v.parse::<i64>())
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|_| bad(&format!("entry ({g}) is not numbers")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            first,
            header,
            fields,
            entries,
        })
    }

    /// The column of field `name` in every entry, if the format has it.
    fn column(&self, name: &str) -> Result<Option<Vec<i64>>, String> {
        let Some(at) = self.fields.iter().position(|f| f == name) else {
            return Ok(None);
        };
        self.entries
            .iter()
            .map(|e| {
                e.get(at)
                    .copied()
                    .ok_or_else(|| format!("~imroTbl entry {e:?} has no {name}"))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }

    /// `(electrode, shank)` of each readout channel.
    fn electrodes(&self, grid: &Grid) -> Result<HashMap<usize, (i64, i64)>, String> {
        let channel = self.column("channel")?;
        let shank = self.column("shank")?;
        let (readout, electrode): (Vec<i64>, Vec<i64>) =
            if let Some(e) = self.column("electrode")? {
                let ch = channel.ok_or("~imroTbl has electrodes but no channels")?;
                (ch, e)
            } else if let Some(ch) = channel {
                let bank = match self.column("bank")? {
                    Some(b) => b,
                    None => self
                        .column("bank_mask")?
                        .ok_or("~imroTbl has channels but no banks")?,
                };
                let e = ch
                    .iter()
                    .zip(&bank)
                    .map(|(c, b)| b * BANK_ELECTRODES + c)
                    .collect();
                (ch, e)
            } else if let (Some(a), Some(b)) = (self.column("bankA")?, self.column("bankB")?) {
                let col_mode = *self
                    .header
                    .get("col_mode")
                    .ok_or("~imroTbl NP1110 header has no col_mode")?;
                uhd_electrodes(col_mode, &a, &b)?
            } else {
                return Err("~imroTbl entries name no channels or electrodes".into());
            };
        let mut out = HashMap::with_capacity(readout.len());
        for (i, (&r, &e)) in readout.iter().zip(&electrode).enumerate() {
            let s = shank.as_ref().map_or(0, |s| s[i]);
            if r < 0 || e < 0 || e >= grid.per_shank || s < 0 || s >= grid.shanks {
                return Err(format!(
                    "~imroTbl entry {i}: channel {r}, electrode {e}, shank {s} is outside the probe ({} electrodes on each of {} shanks)",
                    grid.per_shank, grid.shanks
                ));
            }
            if out.insert(r as usize, (e, s)).is_some() {
                return Err(format!("~imroTbl lists readout channel {r} twice"));
            }
        }
        Ok(out)
    }
}

/// NP1110 (UHD, 8 × 768 electrodes): 24 groups of 16 readout channels, each group's bank
/// chosen by `col_mode` (0 inner, 1 outer, 2 all) from its two banks; SpikeGLX's
/// `IMROTbl_T1110` rule.
fn uhd_electrodes(
    col_mode: i64,
    bank_a: &[i64],
    bank_b: &[i64],
) -> Result<(Vec<i64>, Vec<i64>), String> {
    const COL_TABLE: [i64; 8] = [0, 3, 1, 2, 1, 2, 0, 3];
    if bank_a.len() != 24 || bank_b.len() != 24 {
        return Err(format!(
            "~imroTbl of an NP1110 has {} groups, not 24",
            bank_a.len()
        ));
    }
    let group = |ch: i64| 2 * ((ch % 384) / 32) + ((ch % 384) & 1);
    let col = |ch: i64, bank: i64| {
        let group_col = COL_TABLE[(4 * (bank & 1) + group(ch) % 4) as usize];
        let crossed = (bank / 4) & 1;
        let in_group = ((((ch % 64) % 32) / 2) & 1) ^ crossed;
        if ch & 1 == 1 {
            2 * group_col + (1 - in_group)
        } else {
            2 * group_col + in_group
        }
    };
    let row = |ch: i64, bank: i64| {
        let group_row = group(ch) / 4;
        let in_group = ((ch % 64) % 32) / 4;
        let row0 = if ch & 1 == 1 {
            8 * group_row + (7 - in_group)
        } else {
            8 * group_row + in_group
        };
        48 * bank + row0
    };
    let mut channels = Vec::with_capacity(384);
    let mut electrodes = Vec::with_capacity(384);
    for ch in 0..384i64 {
        let g = group(ch) as usize;
        let (a, b) = (bank_a[g], bank_b[g]);
        if !(0..16).contains(&a) || !(0..16).contains(&b) {
            return Err(format!(
                "~imroTbl NP1110 group {g} has banks {a}, {b} outside 0..16"
            ));
        }
        let bank = if col_mode == 2 {
            a
        } else {
            let c = col(ch, a);
            let odd = c & 1 == 1;
            let outer = col_mode == 1;
            // Outer columns are the even ones on the left half and the odd ones on the right.
            let pick_a = if c <= 3 { odd != outer } else { odd == outer };
            if pick_a { a } else { b }
        };
        channels.push(ch);
        electrodes.push(8 * row(ch, bank) + col(ch, bank));
    }
    Ok((channels, electrodes))
}

/// The `(a:b:c:d)` entries of a SpikeGLX map after its header.
fn map_entries(text: &str) -> Vec<Vec<&str>> {
    text.split(')')
        .map(|g| g.trim().trim_start_matches('(').trim())
        .filter(|g| !g.is_empty())
        .skip(1)
        .map(|g| g.split(':').map(str::trim).collect())
        .collect()
}

/// The probe's contacts in file order, paired with a map's entries where the map has one per
/// contact; `None` where it does not (a map of another shape is not checked).
fn paired<'a>(
    probe: &'a Probe,
    entries: &'a [Vec<&'a str>],
) -> Option<Vec<(usize, &'a Contact, &'a [&'a str])>> {
    let contacts: Vec<(usize, &Contact)> = probe
        .channels()
        .iter()
        .enumerate()
        .filter_map(|(i, c)| c.as_ref().map(|c| (i, c)))
        .collect();
    (contacts.len() == entries.len()).then(|| {
        contacts
            .into_iter()
            .zip(entries)
            .map(|((i, c), e)| (i, c, e.as_slice()))
            .collect()
    })
}

/// `~snsShankMap` `(shank:col:row:used)`: shank, column and row of every contact.
fn check_shank_map(meta: &SpikeGlxMeta, probe: &Probe, grid: &Grid) -> Result<(), String> {
    let Some(text) = meta.get("snsShankMap") else {
        return Ok(());
    };
    let entries = map_entries(text);
    let Some(pairs) = paired(probe, &entries) else {
        return Ok(());
    };
    for (channel, contact, e) in pairs {
        let num = |i: usize| e.get(i).and_then(|v| v.parse::<i64>().ok());
        let electrode: i64 = contact
            .id
            .rsplit('e')
            .next()
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| format!("contact id {} has no electrode", contact.id))?;
        let (col, row) = grid.cell(electrode);
        if num(0) != Some(i64::from(contact.shank)) || num(1) != Some(col) || num(2) != Some(row) {
            return Err(format!(
                "~snsShankMap disagrees with ~imroTbl at channel {channel}: ({}) but the table gives shank {}, column {col}, row {row}",
                e.join(":"),
                contact.shank
            ));
        }
    }
    Ok(())
}

/// `~snsGeomMap` `(shank:x:y:used)`: y of every contact and x up to one offset per probe (the
/// map measures x from the shank's edge, the catalogue from the first column).
fn check_geom_map(meta: &SpikeGlxMeta, probe: &Probe, grid: &Grid) -> Result<(), String> {
    let Some(text) = meta.get("snsGeomMap") else {
        return Ok(());
    };
    let entries = map_entries(text);
    let Some(pairs) = paired(probe, &entries) else {
        return Ok(());
    };
    let mut offset = None;
    for (channel, contact, e) in pairs {
        let num = |i: usize| e.get(i).and_then(|v| v.parse::<f64>().ok());
        let (Some(shank), Some(x), Some(y)) = (num(0), num(1), num(2)) else {
            return Err(format!(
                "~snsGeomMap entry ({}) is not numbers",
                e.join(":")
            ));
        };
        let local_x = contact.x_um
            - if grid.multi_shank {
                f64::from(contact.shank) * grid.shank_pitch_um
            } else {
                0.0
            };
        let dx = local_x - x;
        let first = *offset.get_or_insert(dx);
        if shank != f64::from(contact.shank)
            || (y - contact.y_um).abs() > 1e-6
            || (dx - first).abs() > 1e-6
        {
            return Err(format!(
                "~snsGeomMap disagrees with ~imroTbl at channel {channel}: ({}) but the table gives shank {}, x {local_x} µm, y {} µm",
                e.join(":"),
                contact.shank,
                contact.y_um
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
