//! Finding a file's `ElectricalSeries` and choosing one by name (`--stream`).

use std::path::Path;

use dspk_types::{DspError, DspResult};

use super::h5::{H5, attr_string};

/// The deepest group level searched for series (NWB nests them at most a few levels down:
/// `processing/<module>/<container>/<series>`).
const MAX_DEPTH: usize = 8;
/// The most groups visited in one search, so that a malformed file cannot make it endless.
const MAX_GROUPS: usize = 100_000;

/// The paths of every `ElectricalSeries` of the NWB file `path` (`acquisition/…`,
/// `processing/<module>/…`), in the file's order, opening only the groups' headers.
pub fn nwb_series(path: impl AsRef<Path>) -> DspResult<Vec<String>> {
    let h5 = H5::open(path.as_ref(), 1 << 20)?;
    find_series(&h5)
}

/// [`nwb_series`] of an open file.
pub(crate) fn find_series(h5: &H5) -> DspResult<Vec<String>> {
    let mut found = Vec::new();
    let mut visited = 0usize;
    let root = h5
        .file
        .root_group()
        .map_err(|e| h5.err("", format!("cannot open the root group: {e}")))?;
    walk(h5, &root, "", 0, &mut visited, &mut found)?;
    Ok(found)
}

fn walk(
    h5: &H5,
    group: &hdf5_reader::group::Group,
    path: &str,
    depth: usize,
    visited: &mut usize,
    found: &mut Vec<String>,
) -> DspResult<()> {
    if depth >= MAX_DEPTH {
        return Ok(());
    }
    let (groups, _) = h5.members(group, path)?;
    for name in groups {
        *visited += 1;
        if *visited > MAX_GROUPS {
            return Err(h5.err(
                path,
                format!("more than {MAX_GROUPS} groups; not searched for ElectricalSeries"),
            ));
        }
        let child_path = if path.is_empty() {
            name.clone()
        } else {
            format!("{path}/{name}")
        };
        let child = group
            .group(&name)
            .map_err(|e| h5.err(&child_path, format!("cannot open the group: {e}")))?;
        if attr_string(child.attribute("neurodata_type")).as_deref() == Some("ElectricalSeries") {
            found.push(child_path.clone());
        }
        walk(h5, &child, &child_path, depth + 1, visited, found)?;
    }
    Ok(())
}

/// The series `stream` names among `series`: its path (with or without the leading `/`) or,
/// where unique, its last part (`ElectricalSeriesAP`). `None`: the only series. No series, an
/// unknown name, or several series and no name are errors listing them.
pub(crate) fn choose(h5: &H5, series: &[String], stream: Option<&str>) -> DspResult<String> {
    let listed = || {
        series
            .iter()
            .map(|s| format!("'{s}'"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if series.is_empty() {
        return Err(DspError::UnsupportedFormat(format!(
            "{}: an NWB file with no ElectricalSeries (no group whose neurodata_type is \
             ElectricalSeries): nothing to read as a recording",
            h5.path.display()
        )));
    }
    let Some(name) = stream else {
        return match series {
            [one] => Ok(one.clone()),
            _ => Err(DspError::config(format!(
                "{}: the NWB file has {} ElectricalSeries: choose one with --stream NAME (in \
                 Python stream=NAME): {}",
                h5.path.display(),
                series.len(),
                listed()
            ))),
        };
    };
    let wanted = name.trim_start_matches('/');
    if let Some(s) = series.iter().find(|s| s.as_str() == wanted) {
        return Ok(s.clone());
    }
    let by_last: Vec<&String> = series
        .iter()
        .filter(|s| s.rsplit('/').next() == Some(wanted))
        .collect();
    match by_last.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(DspError::config(format!(
            "{}: no ElectricalSeries '{name}' in the NWB file; it has {}",
            h5.path.display(),
            listed()
        ))),
        _ => Err(DspError::config(format!(
            "{}: '{name}' names several ElectricalSeries of the NWB file: give the path, one of {}",
            h5.path.display(),
            listed()
        ))),
    }
}
