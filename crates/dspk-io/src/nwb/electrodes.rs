//! The electrodes of a series: its `electrodes` region into the file's electrodes table, and
//! the table's names, positions and groups, as the channels' names and the probe.

use dspk_types::{Contact, DspResult, Probe, ProbeParts};

use super::ELECTRODES_TABLE;
use super::h5::H5;

/// What the electrodes table says about a series' channels, in channel order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Electrodes {
    /// The channels' names: `channel_name`, else the electrode ids, else `ch{i}`.
    pub(crate) names: Vec<String>,
    /// The probe from `rel_x`, `rel_y` and `group_name`, where the table has positions.
    pub(crate) probe: Option<Probe>,
    /// The `offset` column (volts), where the table has one.
    pub(crate) offsets_v: Option<Vec<f64>>,
    /// The electrode groups' names, where the table has them.
    pub(crate) groups: Option<Vec<String>>,
}

/// The electrodes of the series at `series`, which has `channels` channels.
pub(crate) fn electrodes(
    h5: &H5,
    series: &str,
    channels: usize,
    warnings: &mut Vec<String>,
) -> DspResult<Electrodes> {
    let fallback = || Electrodes {
        names: (0..channels).map(|i| format!("ch{i}")).collect(),
        probe: None,
        offsets_v: None,
        groups: None,
    };
    let group = h5.group(series)?;
    if !h5.has_dataset(&group, series, "electrodes")? {
        warnings.push(format!(
            "{}: /{series} has no electrodes region: its channels are named ch0… and have no positions",
            h5.path.display()
        ));
        return Ok(fallback());
    }
    let region_path = format!("{series}/electrodes");
    let region = h5.integers(&region_path)?;
    if region.len() != channels {
        return Err(h5.err(
            &region_path,
            format!(
                "lists {} electrodes for {channels} channels of data",
                region.len()
            ),
        ));
    }
    let table = h5.group(ELECTRODES_TABLE)?;
    let (_, columns) = h5.members(&table, ELECTRODES_TABLE)?;
    let has = |c: &str| columns.iter().any(|n| n == c);
    let col = |c: &str| format!("{ELECTRODES_TABLE}/{c}");
    let ids = h5.integers(&col("id"))?;
    let rows: Vec<usize> = region
        .iter()
        .enumerate()
        .map(|(ch, &r)| {
            usize::try_from(r)
                .ok()
                .filter(|&r| r < ids.len())
                .ok_or_else(|| {
                    h5.err(
                        &region_path,
                        format!(
                            "channel {ch} names row {r} of the electrodes table, which has {} rows",
                            ids.len()
                        ),
                    )
                })
        })
        .collect::<DspResult<_>>()?;
    let pick_strings = |c: &str| -> DspResult<Option<Vec<String>>> {
        if !has(c) {
            return Ok(None);
        }
        let all = h5.strings(&col(c))?;
        column_rows(h5, &col(c), all, &rows).map(Some)
    };
    let pick_floats = |c: &str| -> DspResult<Option<Vec<f64>>> {
        if !has(c) {
            return Ok(None);
        }
        let all = h5.floats(&col(c))?;
        column_rows(h5, &col(c), all, &rows).map(Some)
    };
    let names = match pick_strings("channel_name")? {
        Some(n) => n,
        None => rows.iter().map(|&r| ids[r].to_string()).collect(),
    };
    let groups = pick_strings("group_name")?;
    let offsets_v = pick_floats("offset")?;
    let probe = match (pick_floats("rel_x")?, pick_floats("rel_y")?) {
        (Some(x), Some(y)) => {
            let contact_ids: Vec<String> = rows.iter().map(|&r| format!("e{}", ids[r])).collect();
            probe_from(&x, &y, groups.as_deref(), &contact_ids).unwrap_or_else(|why| {
                warnings.push(format!(
                    "{}: /{ELECTRODES_TABLE}: no probe for /{series}: {why}",
                    h5.path.display()
                ));
                None
            })
        }
        _ => None,
    };
    Ok(Electrodes {
        names,
        probe,
        offsets_v,
        groups,
    })
}

/// `all[rows]`, where the column `path` must have a value for every row of the table.
fn column_rows<T: Clone>(h5: &H5, path: &str, all: Vec<T>, rows: &[usize]) -> DspResult<Vec<T>> {
    rows.iter()
        .map(|&r| {
            all.get(r).cloned().ok_or_else(|| {
                h5.err(
                    path,
                    format!("has {} values; the series uses row {r}", all.len()),
                )
            })
        })
        .collect()
}

/// A probe of one contact per channel at (`x`, `y`) µm, with a shank per electrode group
/// (numbered in sorted group-name order).
fn probe_from(
    x: &[f64],
    y: &[f64],
    groups: Option<&[String]>,
    ids: &[String],
) -> Result<Option<Probe>, String> {
    let mut names: Vec<&str> =
        groups.map_or_else(Vec::new, |g| g.iter().map(String::as_str).collect());
    names.sort_unstable();
    names.dedup();
    let shank = |i: usize| -> u32 {
        groups.map_or(0, |g| {
            names
                .binary_search(&g[i].as_str())
                .map_or(0, |k| u32::try_from(k).unwrap_or(u32::MAX))
        })
    };
    let channels = (0..x.len())
        .map(|i| Some(Contact::new(x[i], y[i], shank(i), ids[i].clone())))
        .collect();
    Probe::new(ProbeParts {
        channels,
        ..ProbeParts::default()
    })
    .map(Some)
    .map_err(|e| e.to_string())
}
