//! Reading probeinterface JSON back into a [`Probe`] and attaching it to a recording.

use std::collections::HashMap;
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use dspk_types::{
    AdcCycle, AdcSlot, Contact, ContactShape, DspError, DspResult, MemoryOrder, Probe, ProbeParts,
    RecordingInfo, RecordingSource,
};
use serde_json::Value;

use crate::raw::file_error;

/// The probe a probeinterface JSON document describes, for a recording of `channels`
/// channels: contact `k` is channel `device_channel_indices[k]` (`-1`: not wired, skipped).
///
/// Read: one 2-D probe in `um` or `mm`, its positions, contact ids (an empty id becomes the
/// contact's index), numeric shank ids, one shape shared by every contact (else none), and
/// what [`probeinterface_json`](super::probeinterface_json) writes in the annotations
/// (model, manufacturer, description, shank pitch, ADC cycle and slots). `exempt` lists the
/// channels that may stay without a contact (a sync channel of the recording's own probe);
/// every other channel needs one.
///
/// Refused, with the reason: another schema, not one probe, ragged or non-numeric arrays, no
/// `device_channel_indices`, an index past the recording's channels or given twice, a channel
/// left without a contact, and whatever [`Probe::new`] refuses.
pub fn probe_from_probeinterface(
    doc: &Value,
    channels: usize,
    exempt: &[usize],
) -> Result<Probe, String> {
    if doc.get("specification").and_then(Value::as_str) != Some("probeinterface") {
        return Err(
            "not a probeinterface file (it lacks \"specification\": \"probeinterface\")".into(),
        );
    }
    let probes = doc
        .get("probes")
        .and_then(Value::as_array)
        .ok_or("\"probes\" is not a list")?;
    let probe = match probes.as_slice() {
        [one] => one,
        other => {
            return Err(format!(
                "holds {} probes: dspk attaches one probe per recording",
                other.len()
            ));
        }
    };
    let ndim = probe.get("ndim").and_then(Value::as_u64).unwrap_or(2);
    if ndim != 2 {
        return Err(format!("a {ndim}-D probe: dspk reads 2-D probes"));
    }
    let scale = match probe
        .get("si_units")
        .and_then(Value::as_str)
        .unwrap_or("um")
    {
        "um" => 1.0,
        "mm" => 1000.0,
        other => return Err(format!("si_units \"{other}\": dspk reads \"um\" or \"mm\"")),
    };
    let positions = list(probe, "contact_positions")?.ok_or("no \"contact_positions\"")?;
    let n = positions.len();
    let xy = positions
        .iter()
        .enumerate()
        .map(|(k, p)| match p.as_array().map(Vec::as_slice) {
            Some([x, y]) => match (x.as_f64(), y.as_f64()) {
                (Some(x), Some(y)) => Ok((x * scale, y * scale)),
                _ => Err(format!("contact_positions[{k}] is not two numbers")),
            },
            _ => Err(format!("contact_positions[{k}] is not an [x, y] pair")),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let wired = list(probe, "device_channel_indices")?.ok_or(
        "no \"device_channel_indices\": nothing says which recording channel each contact is",
    )?;
    same_length("device_channel_indices", wired, n)?;
    let ids = optional_strings(probe, "contact_ids", n)?;
    let shank_ids = optional_strings(probe, "shank_ids", n)?;

    let annotations = probe.get("annotations");
    let text = |key: &str| {
        annotations
            .and_then(|a| a.get(key))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let number = |key: &str| annotations.and_then(|a| a.get(key)).and_then(Value::as_u64);
    let adc_cycle = match (
        number("num_adcs"),
        number("num_channels_per_adc"),
        number("adc_cycle_samples"),
    ) {
        (Some(a), Some(c), Some(s)) => Some(AdcCycle {
            adcs: to_u32(a, "num_adcs")?,
            channels_per_adc: to_u32(c, "num_channels_per_adc")?,
            cycle_samples: to_u32(s, "adc_cycle_samples")?,
        }),
        _ => None,
    };
    let contact_annotations = probe.get("contact_annotations");
    let slots = match (
        adc_cycle,
        contact_annotations.and_then(|a| a.get("adc_group")),
        contact_annotations.and_then(|a| a.get("adc_sample_order")),
    ) {
        (Some(_), Some(g), Some(o)) => Some((
            numbers(g, "adc_group", n)?,
            numbers(o, "adc_sample_order", n)?,
        )),
        _ => None,
    };

    let mut contacts: Vec<Option<Contact>> = vec![None; channels];
    let mut first: HashMap<usize, usize> = HashMap::new();
    for (k, index) in wired.iter().enumerate() {
        let index = index
            .as_i64()
            .ok_or_else(|| format!("device_channel_indices[{k}] is not an integer"))?;
        if index == -1 {
            continue;
        }
        let channel = usize::try_from(index)
            .ok()
            .filter(|&c| c < channels)
            .ok_or_else(|| {
                format!(
                    "device_channel_indices[{k}] is {index}: the recording has {channels} \
                     channels (0 to {})",
                    channels.saturating_sub(1)
                )
            })?;
        if let Some(j) = first.insert(channel, k) {
            return Err(format!(
                "contacts {j} and {k} are both wired to channel {channel}"
            ));
        }
        let id = match ids.as_ref().map(|ids| ids[k].as_str()) {
            Some(id) if !id.is_empty() => id.to_string(),
            _ => k.to_string(),
        };
        let shank = match shank_ids.as_ref().map(|s| s[k].as_str()) {
            None | Some("") => 0,
            Some(s) => s
                .parse()
                .map_err(|_| format!("shank_ids[{k}] is \"{s}\": dspk reads numeric shank ids"))?,
        };
        let mut contact = Contact::new(xy[k].0, xy[k].1, shank, id);
        if let Some((groups, orders)) = &slots {
            contact.adc = Some(AdcSlot {
                adc: groups[k],
                order: orders[k],
            });
        }
        contacts[channel] = Some(contact);
    }
    let missing: Vec<usize> = (0..channels)
        .filter(|c| contacts[*c].is_none() && !exempt.contains(c))
        .collect();
    if let Some(&c) = missing.first() {
        return Err(format!(
            "too few contacts: {} of the recording's {channels} channels lack one (the first: \
             channel {c})",
            missing.len()
        ));
    }
    Probe::new(ProbeParts {
        model: text("model_name").or_else(|| text("part_number")),
        manufacturer: text("manufacturer"),
        description: text("description"),
        shank_pitch_um: annotations
            .and_then(|a| a.get("shank_pitch_um"))
            .and_then(Value::as_f64),
        contact_shape: shared_shape(probe, n, scale),
        adc_cycle,
        channels: contacts,
    })
    .map_err(|e| e.to_string())
}

/// Reads the probeinterface JSON file `path` ([`probe_from_probeinterface`]) as the probe of
/// `info`'s recording; the channels `info`'s own probe gives no contact may stay without one.
/// Every error is one line naming `path`.
pub fn read_probeinterface(path: impl AsRef<Path>, info: &RecordingInfo) -> DspResult<Probe> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            file_error(path, "no such probe file")
        } else {
            DspError::io(path, "cannot read the probe file", &e)
        }
    })?;
    let doc: Value = serde_json::from_slice(&bytes)
        .map_err(|e| file_error(path, format!("not a probeinterface JSON file: {e}")))?;
    let exempt: Vec<usize> = match &info.probe {
        Some(p) => (0..p.channel_count())
            .filter(|&c| p.channels()[c].is_none())
            .collect(),
        None => Vec::new(),
    };
    probe_from_probeinterface(&doc, info.channel_count(), &exempt)
        .map_err(|why| file_error(path, format!("probe: {why}")))
}

/// `source` with the probe of the probeinterface JSON file `path` in its info, in place of
/// any it had ([`read_probeinterface`]).
pub fn attach_probe_file(
    source: Arc<dyn RecordingSource>,
    path: impl AsRef<Path>,
) -> DspResult<Arc<dyn RecordingSource>> {
    let probe = read_probeinterface(path, source.info())?;
    Ok(Arc::new(ProbedRecording::new(source, probe)?))
}

/// A recording with a probe of the caller's in its info; reads are its parent's.
#[derive(Clone)]
pub struct ProbedRecording {
    parent: Arc<dyn RecordingSource>,
    info: RecordingInfo,
}

impl std::fmt::Debug for ProbedRecording {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProbedRecording")
            .field("parent", &self.parent.info().name)
            .field("probe", &self.info.probe.as_ref().map(Probe::model))
            .finish()
    }
}

impl ProbedRecording {
    /// `parent` with `probe`; refused where the probe describes another channel count.
    pub fn new(parent: Arc<dyn RecordingSource>, probe: Probe) -> DspResult<Self> {
        let mut info = parent.info().clone();
        probe.check_channel_count(info.channel_count())?;
        info.probe = Some(probe);
        Ok(Self { parent, info })
    }
}

impl RecordingSource for ProbedRecording {
    fn info(&self) -> &RecordingInfo {
        &self.info
    }

    fn read(&self, channels: &[usize], samples: Range<u64>, out: &mut [f32]) -> DspResult<()> {
        self.parent.read(channels, samples, out)
    }

    fn read_stored(
        &self,
        channels: &[usize],
        samples: Range<u64>,
        out: &mut [u8],
    ) -> DspResult<()> {
        self.parent.read_stored(channels, samples, out)
    }

    fn read_native(&self, samples: Range<u64>, out: &mut [f32]) -> DspResult<MemoryOrder> {
        self.parent.read_native(samples, out)
    }

    fn read_stored_native(&self, samples: Range<u64>, out: &mut [u8]) -> DspResult<MemoryOrder> {
        self.parent.read_stored_native(samples, out)
    }

    fn native_stored_order(&self) -> MemoryOrder {
        self.parent.native_stored_order()
    }

    fn chunk_samples(&self) -> Option<u64> {
        self.parent.chunk_samples()
    }
}

/// `probe[key]` as a list, `None` where absent.
fn list<'a>(probe: &'a Value, key: &str) -> Result<Option<&'a Vec<Value>>, String> {
    match probe.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(a)) => Ok(Some(a)),
        Some(_) => Err(format!("\"{key}\" is not a list")),
    }
}

fn same_length(key: &str, values: &[Value], n: usize) -> Result<(), String> {
    if values.len() != n {
        return Err(format!(
            "\"{key}\" has {} entries for {n} contact positions",
            values.len()
        ));
    }
    Ok(())
}

/// `probe[key]` as `n` strings (numbers accepted as their text), `None` where absent.
fn optional_strings(probe: &Value, key: &str, n: usize) -> Result<Option<Vec<String>>, String> {
    let Some(values) = list(probe, key)? else {
        return Ok(None);
    };
    same_length(key, values, n)?;
    values
        .iter()
        .enumerate()
        .map(|(k, v)| match v {
            Value::String(s) => Ok(s.clone()),
            Value::Number(x) => Ok(x.to_string()),
            _ => Err(format!("{key}[{k}] is not a string")),
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

fn numbers(value: &Value, key: &str, n: usize) -> Result<Vec<u32>, String> {
    let values = value
        .as_array()
        .ok_or_else(|| format!("\"{key}\" is not a list"))?;
    same_length(key, values, n)?;
    values
        .iter()
        .enumerate()
        .map(|(k, v)| {
            v.as_u64()
                .ok_or_else(|| format!("{key}[{k}] is not a whole number"))
                .and_then(|x| to_u32(x, key))
        })
        .collect()
}

fn to_u32(value: u64, key: &str) -> Result<u32, String> {
    u32::try_from(value).map_err(|_| format!("{key} {value} is too large"))
}

/// The one shape every contact has, in µm; `None` where they differ or one is not read.
fn shared_shape(probe: &Value, n: usize, scale: f64) -> Option<ContactShape> {
    let shapes = probe.get("contact_shapes")?.as_array()?;
    let params = probe.get("contact_shape_params")?.as_array()?;
    if shapes.len() != n || params.len() != n || n == 0 {
        return None;
    }
    let one = |k: usize| -> Option<ContactShape> {
        let p = &params[k];
        let get = |key: &str| p.get(key).and_then(Value::as_f64).map(|v| v * scale);
        match shapes[k].as_str()? {
            "square" => Some(ContactShape::Square {
                width_um: get("width")?,
            }),
            "circle" => Some(ContactShape::Circle {
                radius_um: get("radius")?,
            }),
            "rect" => Some(ContactShape::Rect {
                width_um: get("width")?,
                height_um: get("height")?,
            }),
            _ => None,
        }
    };
    let first = one(0)?;
    (1..n).all(|k| one(k) == Some(first)).then_some(first)
}
