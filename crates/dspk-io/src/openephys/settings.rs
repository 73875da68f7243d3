//! A record node's `settings.xml`: the Neuropixels plugin's probes (`NP_PROBE`) and the record
//! node's saved channels, read as probeinterface 0.4.2's `read_openephys_neuropixels` reads them.
//!
//! The facts: `INFO/VERSION` is the GUI's version. Each `SIGNALCHAIN` holds `PROCESSOR`s by
//! `name`; the probes' processor is `Neuropix-PXI` (plugin `libraryVersion` 0.3.3 or later
//! writes electrode positions) or `OneBox` (the last one found; both at once are refused). Its
//! `STREAM` children name the probes (`ProbeA-AP` → `ProbeA`; ADC streams excepted; GUI 0.5
//! writes none and the probes are `{nodeId}.{k}`). Its `NP_PROBE`s are under `EDITOR` (GUI
//! before 0.9) or `EDITOR/CUSTOM_PARAMETERS`, those with `isEnabled` other than `1` left out:
//! `probe_part_number` / `probePartNumber`, `probe_serial_number` / `probeSerialNumber`,
//! `custom_probe_name` (the name where it differs from the serial number), `shank` (a quad-base
//! probe's, appended to its name as `-{shank + 1}`), and the electrodes: `SELECTED_ELECTRODES`
//! (catalogue indices, in attribute order) or `CHANNELS` (`CH{k}`, sorted by `k`; a value
//! `bank:shank` gives the shank) with `ELECTRODE_XPOS` / `ELECTRODE_YPOS` per `CH{k}`. The first
//! `Record Node`'s `CUSTOM_PARAMETERS/STREAM` `recording_state` (`ALL`, `NONE` or one digit per
//! channel, `1` saved) gives the saved channels. A `Channel Map` processor before the record
//! node in the probes' chain reorders channels; dspk does not read it and takes no geometry.
//! ONIX probes (`NEUROPIXELSV1E`, …) are not read either.

use roxmltree::{Document, Node};

use crate::neuropixels::Selection;

/// The elements that mark Neuropixels geometry in a processor (probeinterface's list).
const PROBE_TAGS: [&str; 4] = [
    "NP_PROBE",
    "NEUROPIXELSV1E",
    "NEUROPIXELSV1F",
    "NEUROPIXELSV2E",
];

/// The first plugin version that writes electrode positions.
const FIRST_POSITIONS_PLUGIN: (u32, u32, u32) = (0, 3, 3);

/// One enabled probe of `settings.xml`.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct SettingsProbe {
    /// `probe_part_number`.
    pub(super) part_number: String,
    /// `probe_serial_number`, where given.
    pub(super) serial_number: Option<String>,
    /// The name a stream is matched by (`ProbeA`, a custom name, `100.0`).
    pub(super) name: String,
    /// The electrodes, in readout-channel order.
    pub(super) selection: Selection,
}

/// A parsed `settings.xml`.
pub(super) struct Settings<'a> {
    doc: Document<'a>,
}

impl<'a> Settings<'a> {
    /// Parses the XML text (no checks beyond well-formedness).
    pub(super) fn parse(text: &'a str) -> Result<Self, String> {
        Document::parse(text)
            .map(|doc| Self { doc })
            .map_err(|e| format!("settings.xml is not well-formed XML: {e}"))
    }

    /// Whether a processor holding Neuropixels geometry has a (non-ADC) stream whose probe
    /// name is part of `stream` (the stream's folder name): probeinterface's
    /// `has_neuropixels_probes`, the test SpikeInterface makes before reading a probe.
    pub(super) fn has_probe_for(&self, stream: &str) -> bool {
        self.doc
            .descendants()
            .filter(|n| n.has_tag_name("PROCESSOR"))
            .filter(|p| {
                p.descendants()
                    .any(|n| PROBE_TAGS.iter().any(|t| n.has_tag_name(*t)))
            })
            .flat_map(|p| children(p, "STREAM"))
            .filter_map(|s| s.attribute("name"))
            .filter(|name| !name.contains("ADC"))
            .map(probe_name_of_stream)
            .any(|name| !name.is_empty() && stream.contains(&name))
    }

    /// The enabled probes, in `NP_PROBE` order. `Err` says in one line what is missing or
    /// malformed.
    pub(super) fn probes(&self) -> Result<Vec<SettingsProbe>, String> {
        let root = self.doc.root_element();
        let version_text = child(root, "INFO")
            .and_then(|i| child(i, "VERSION"))
            .and_then(|v| v.text())
            .ok_or("settings.xml has no INFO/VERSION")?;
        let version = version(version_text).ok_or_else(|| {
            format!("settings.xml's GUI version {version_text:?} is not a version")
        })?;
        let processor = probe_processor(root)?;
        let node_id = processor
            .attribute("NodeId")
            .or_else(|| processor.attribute("nodeId"));
        let mut names: Vec<String> = Vec::new();
        for s in children(processor, "STREAM") {
            let name = s
                .attribute("name")
                .ok_or("a STREAM of the probes' processor has no name")?;
            let probe = probe_name_of_stream(name);
            if !name.contains("ADC") && !names.contains(&probe) {
                names.push(probe);
            }
        }
        let has_streams = children(processor, "STREAM").next().is_some();
        let editor = child(processor, "EDITOR").ok_or("the probes' processor has no EDITOR")?;
        let holder = if version < (0, 9, 0) {
            Some(editor)
        } else {
            child(editor, "CUSTOM_PARAMETERS")
        };
        let np: Vec<Node> = holder
            .map(|h| children(h, "NP_PROBE").collect())
            .unwrap_or_default();
        if np.is_empty() {
            return Err("settings.xml has no NP_PROBE".into());
        }
        let np: Vec<Node> = np
            .into_iter()
            .filter(|p| p.attribute("isEnabled").unwrap_or("1") == "1")
            .collect();
        if np.is_empty() {
            return Err("settings.xml has no enabled NP_PROBE".into());
        }
        if !has_streams {
            let node = node_id.unwrap_or("None");
            names = (0..np.len()).map(|k| format!("{node}.{k}")).collect();
        } else if np.len() < names.len() {
            return Err(format!(
                "settings.xml has {} NP_PROBE for the probes {names:?}",
                np.len()
            ));
        }
        np.iter()
            .enumerate()
            .map(|(k, p)| {
                probe(*p, names.get(k).map(String::as_str), version < (0, 6, 0))
                    .map_err(|e| format!("NP_PROBE {k}: {e}"))
            })
            .collect()
    }

    /// The channels the first record node saves of `stream` (its folder name), by index among
    /// the probe's channels; `None`: all of them.
    pub(super) fn saved_channels(&self, stream: &str) -> Result<Option<Vec<usize>>, String> {
        let node = self
            .doc
            .root_element()
            .children()
            .filter(|c| c.has_tag_name("SIGNALCHAIN"))
            .flat_map(|c| children(c, "PROCESSOR"))
            .find(|p| {
                p.attribute("name")
                    .is_some_and(|n| n.contains("Record Node"))
            });
        let Some(params) = node.and_then(|n| child(n, "CUSTOM_PARAMETERS")) else {
            return Ok(None);
        };
        let streams: Vec<Node> = children(params, "STREAM").collect();
        let custom = |s: &Node| {
            s.attribute("recording_state")
                .is_some_and(|r| r != "ALL" && r != "NONE")
        };
        if !streams.iter().any(custom) {
            return Ok(None);
        }
        let chosen = match streams.as_slice() {
            [one] => *one,
            many => *many
                .iter()
                .find(|s| s.attribute("name").is_some_and(|n| stream.contains(n)))
                .ok_or_else(|| {
                    format!("the record node's saved-channel lists name no stream of {stream}")
                })?,
        };
        let Some(state) = chosen
            .attribute("recording_state")
            .filter(|_| custom(&chosen))
        else {
            return Ok(None);
        };
        state
            .chars()
            .enumerate()
            .filter_map(|(k, c)| match c.to_digit(10) {
                Some(1) => Some(Ok(k)),
                Some(_) => None,
                None => Some(Err(format!(
                    "the record node's recording_state has {c:?}, not a digit"
                ))),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }
}

/// The processor of the probes, checked: its plugin writes positions, and no Channel Map
/// reorders its channels before the record node.
fn probe_processor<'a, 'i>(root: Node<'a, 'i>) -> Result<Node<'a, 'i>, String> {
    let (mut pxi, mut onebox, mut onix) = (None, None, None);
    let (mut probe_chain, mut map_at, mut node_at) = (None, None, None);
    for (ci, chain) in children(root, "SIGNALCHAIN").enumerate() {
        for (pi, p) in children(chain, "PROCESSOR").enumerate() {
            let name = p.attribute("name").ok_or("a PROCESSOR has no name")?;
            if name.contains("Neuropix-PXI") {
                (pxi, probe_chain) = (Some(p), Some(ci));
            }
            if name.contains("OneBox") {
                (onebox, probe_chain) = (Some(p), Some(ci));
            }
            if name.contains("ONIX") {
                (onix, probe_chain) = (Some(p), Some(ci));
            }
            if name.contains("Channel Map") {
                map_at = Some((ci, pi));
            }
            if name.contains("Record Node") {
                node_at = Some((ci, pi));
            }
        }
    }
    if let (Some((mc, mp)), Some((nc, np))) = (map_at, node_at)
        && Some(mc) == probe_chain
        && mc == nc
        && mp < np
    {
        return Err(
            "a Channel Map processor before the Record Node reorders the channels, which dspk does not read"
                .into(),
        );
    }
    if onix.is_some() {
        return Err("ONIX Neuropixels probes are not read".into());
    }
    let processor = match (pxi, onebox) {
        (Some(_), Some(_)) => {
            return Err("settings.xml has both a Neuropix-PXI and a OneBox processor".into());
        }
        (Some(p), None) => {
            let text = p
                .attribute("libraryVersion")
                .ok_or("the Neuropix-PXI processor has no libraryVersion")?;
            let v = version(text).ok_or_else(|| {
                format!("the Neuropix-PXI libraryVersion {text:?} is not a version")
            })?;
            if v < FIRST_POSITIONS_PLUGIN {
                return Err(format!(
                    "Neuropix-PXI {text} writes no electrode positions (0.3.3 and later do)"
                ));
            }
            p
        }
        (None, Some(p)) => p,
        (None, None) => return Err("settings.xml has no Neuropix-PXI or OneBox processor".into()),
    };
    Ok(processor)
}

/// One `NP_PROBE`, named `stream_name` by its place among the streams.
fn probe(p: Node, stream_name: Option<&str>, before_0_6: bool) -> Result<SettingsProbe, String> {
    let attr = |a: &str, b: &str| {
        p.attribute(a)
            .filter(|v| !v.is_empty())
            .or_else(|| p.attribute(b).filter(|v| !v.is_empty()))
    };
    let part_number = attr("probe_part_number", "probePartNumber")
        .ok_or("no probe_part_number")?
        .to_string();
    let serial_number = attr("probe_serial_number", "probeSerialNumber").map(str::to_string);
    let mut name = match p.attribute("custom_probe_name") {
        Some(c) if Some(c) != serial_number.as_deref() => c.to_string(),
        _ => stream_name
            .ok_or("more NP_PROBE than probe streams")?
            .to_string(),
    };
    if let Some(shank) = p.attribute("shank") {
        let s: i64 = shank
            .trim()
            .parse()
            .map_err(|_| format!("shank {shank:?} is not a number"))?;
        let suffix = format!("-{}", s + 1);
        if !name.contains(&suffix) {
            name.push_str(&suffix);
        }
    }
    let selection = match child(p, "SELECTED_ELECTRODES") {
        Some(sel) => Selection::Indices(
            sel.attributes()
                .map(|a| integer(a.value(), "SELECTED_ELECTRODES", a.name()))
                .collect::<Result<_, _>>()?,
        ),
        None => positions(p, before_0_6)?,
    };
    Ok(SettingsProbe {
        part_number,
        serial_number,
        name,
        selection,
    })
}

/// `CHANNELS` with `ELECTRODE_XPOS` / `ELECTRODE_YPOS`, in channel-number order.
fn positions(p: Node, before_0_6: bool) -> Result<Selection, String> {
    let channels = child(p, "CHANNELS").ok_or("neither SELECTED_ELECTRODES nor CHANNELS")?;
    let mut keys: Vec<(i64, &str, &str)> = channels
        .attributes()
        .map(|a| {
            let n = a.name();
            // probeinterface takes the number after `CH`, underscores removed as Python's int does.
            let number = n
                .get(2..)
                .map(|t| t.replace('_', ""))
                .and_then(|t| t.parse().ok())
                .ok_or_else(|| format!("CHANNELS attribute {n} is not CH and a number"))?;
            Ok((number, n, a.value()))
        })
        .collect::<Result<_, String>>()?;
    keys.sort_by_key(|&(k, _, _)| k);
    let shanks = if keys.iter().all(|(_, _, v)| v.contains(':')) {
        Some(
            keys.iter()
                .map(|(_, n, v)| integer(v.split(':').nth(1).unwrap_or(""), "CHANNELS", n))
                .collect::<Result<Vec<_>, _>>()?,
        )
    } else if keys.iter().all(|(_, n, _)| n.contains('_')) {
        Some(
            keys.iter()
                .map(|(_, n, _)| integer(n.split('_').nth(1).unwrap_or(""), "CHANNELS", n))
                .collect::<Result<Vec<_>, _>>()?,
        )
    } else {
        None
    };
    let (Some(xs), Some(ys)) = (child(p, "ELECTRODE_XPOS"), child(p, "ELECTRODE_YPOS")) else {
        return Err("ELECTRODE_XPOS or ELECTRODE_YPOS is missing".into());
    };
    let read = |e: Node, what: &str| {
        keys.iter()
            .map(|(_, n, _)| {
                let v = e
                    .attribute(*n)
                    .ok_or_else(|| format!("{what} has no {n}"))?;
                v.trim()
                    .parse::<f64>()
                    .map_err(|_| format!("{what} {n}={v:?} is not a number"))
            })
            .collect::<Result<Vec<_>, _>>()
    };
    Ok(Selection::Positions {
        x_um: read(xs, "ELECTRODE_XPOS")?,
        y_um: read(ys, "ELECTRODE_YPOS")?,
        shanks,
        before_0_6,
    })
}

/// An integer attribute value, or a line naming it.
fn integer(value: &str, element: &str, name: &str) -> Result<i64, String> {
    value
        .trim()
        .parse()
        .map_err(|_| format!("{element} {name}={value:?} is not an integer"))
}

/// A stream's probe name: its name without `-AP` / `-LFP`.
fn probe_name_of_stream(name: &str) -> String {
    name.replace("-AP", "").replace("-LFP", "")
}

/// `(major, minor, patch)` of a dotted version (missing parts 0; text after a part's digits,
/// as in `0.6.0-dev`, ignored).
fn version(text: &str) -> Option<(u32, u32, u32)> {
    let mut parts = text.trim().split('.').map(|p| {
        let digits: String = p.chars().take_while(char::is_ascii_digit).collect();
        digits.parse::<u32>().ok()
    });
    let major = parts.next()??;
    let minor = parts.next().unwrap_or(Some(0))?;
    let patch = parts.next().unwrap_or(Some(0))?;
    Some((major, minor, patch))
}

/// The element children of `node` named `tag`.
fn children<'a, 'i>(node: Node<'a, 'i>, tag: &'static str) -> impl Iterator<Item = Node<'a, 'i>> {
    node.children().filter(move |c| c.has_tag_name(tag))
}

/// The first element child of `node` named `tag`.
fn child<'a, 'i>(node: Node<'a, 'i>, tag: &'static str) -> Option<Node<'a, 'i>> {
    children(node, tag).next()
}

#[cfg(test)]
mod tests;
