//! probeinterface JSON: a [`Probe`] in the format of probeinterface's `write_probeinterface`.

use std::path::Path;

use dspk_types::{ContactShape, DspResult, Probe};
use serde_json::{Value, json};

use crate::durable;

mod read;

pub use read::*;

/// The probeinterface version whose JSON schema [`probeinterface_json`] follows (its
/// `write_probeinterface` and `Probe.to_dict`); written as the file's `version`.
pub const PROBEINTERFACE_VERSION: &str = "0.4.2";

/// `probe` as a probeinterface JSON document: a probe group of one 2-D probe in µm, one contact
/// per channel that has one, `device_channel_indices` the recording's channel numbers (a sync
/// channel has no contact and so no entry).
///
/// Annotations carry the model (`model_name`, `part_number`), manufacturer and description
/// where known and the ADC layout (`num_adcs`, `num_channels_per_adc`,
/// `adc_cycle_samples`); contact annotations carry each contact's `adc_group` and
/// `adc_sample_order` where every contact has an ADC slot. A probe whose contact shape is
/// unknown is written with probeinterface's own default (circles of radius 10 µm), as the
/// schema requires a shape.
pub fn probeinterface_json(probe: &Probe) -> Value {
    let parts = probe.parts();
    let contacts: Vec<_> = probe.contacts().collect();
    let n = contacts.len();
    let (shape, params) = match parts.contact_shape {
        Some(ContactShape::Square { width_um }) => ("square", json!({ "width": width_um })),
        Some(ContactShape::Circle { radius_um }) => ("circle", json!({ "radius": radius_um })),
        Some(ContactShape::Rect {
            width_um,
            height_um,
        }) => ("rect", json!({ "width": width_um, "height": height_um })),
        None => ("circle", json!({ "radius": 10.0 })),
    };

    let mut annotations = serde_json::Map::new();
    if let Some(model) = &parts.model {
        annotations.insert("model_name".into(), json!(model));
        annotations.insert("part_number".into(), json!(model));
    }
    if let Some(m) = &parts.manufacturer {
        annotations.insert("manufacturer".into(), json!(m));
    }
    if let Some(d) = &parts.description {
        annotations.insert("description".into(), json!(d));
    }
    if let Some(pitch) = parts.shank_pitch_um {
        annotations.insert("shank_pitch_um".into(), json!(pitch));
    }
    let mut contact_annotations = serde_json::Map::new();
    if let Some(cycle) = parts.adc_cycle {
        annotations.insert("num_adcs".into(), json!(cycle.adcs));
        annotations.insert("num_channels_per_adc".into(), json!(cycle.channels_per_adc));
        annotations.insert("adc_cycle_samples".into(), json!(cycle.cycle_samples));
        let slots: Option<Vec<_>> = contacts.iter().map(|(_, c)| c.adc).collect();
        if let Some(slots) = slots {
            let groups: Vec<_> = slots.iter().map(|s| s.adc).collect();
            let orders: Vec<_> = slots.iter().map(|s| s.order).collect();
            contact_annotations.insert("adc_group".into(), json!(groups));
            contact_annotations.insert("adc_sample_order".into(), json!(orders));
        }
    }

    let one = json!({
        "ndim": 2,
        "si_units": "um",
        "annotations": annotations,
        "contact_annotations": contact_annotations,
        "contact_positions": contacts.iter().map(|(_, c)| [c.x_um, c.y_um]).collect::<Vec<_>>(),
        "contact_plane_axes": vec![[[1.0, 0.0], [0.0, 1.0]]; n],
        "contact_shapes": vec![shape; n],
        "contact_shape_params": vec![params; n],
        "device_channel_indices": contacts.iter().map(|(ch, _)| *ch).collect::<Vec<_>>(),
        "contact_ids": contacts.iter().map(|(_, c)| c.id.as_str()).collect::<Vec<_>>(),
        "shank_ids": contacts.iter().map(|(_, c)| c.shank.to_string()).collect::<Vec<_>>(),
    });
    json!({
        "specification": "probeinterface",
        "version": PROBEINTERFACE_VERSION,
        "probes": [one],
        "probe_ids": ["0"],
    })
}

/// Writes `probe` to `path` as probeinterface JSON ([`probeinterface_json`]), durably: the
/// file appears whole or not at all.
pub fn write_probeinterface(path: impl AsRef<Path>, probe: &Probe) -> DspResult<()> {
    let text =
        serde_json::to_string_pretty(&probeinterface_json(probe)).expect("json values serialise");
    durable::write_file(path, (text + "\n").as_bytes())
}

#[cfg(test)]
mod tests {
    use dspk_types::{AdcCycle, AdcSlot, Contact, ProbeParts};

    use super::*;

    fn probe() -> Probe {
        let mut a = Contact::new(0.0, 0.0, 0, "s0e0");
        a.adc = Some(AdcSlot { adc: 0, order: 0 });
        let mut b = Contact::new(250.5, 15.25, 1, "s1e7");
        b.adc = Some(AdcSlot { adc: 1, order: 3 });
        Probe::new(ProbeParts {
            model: Some("NP2014".into()),
            contact_shape: Some(ContactShape::Square { width_um: 12.0 }),
            adc_cycle: Some(AdcCycle {
                adcs: 2,
                channels_per_adc: 4,
                cycle_samples: 4,
            }),
            channels: vec![Some(a), None, Some(b)],
            ..ProbeParts::default()
        })
        .unwrap()
    }

    #[test]
    fn contacts_are_listed_by_channel_without_the_sync_channel() {
        let v = probeinterface_json(&probe());
        assert_eq!(v["specification"], "probeinterface");
        let p = &v["probes"][0];
        assert_eq!(p["contact_positions"], json!([[0.0, 0.0], [250.5, 15.25]]));
        assert_eq!(p["device_channel_indices"], json!([0, 2]));
        assert_eq!(p["contact_ids"], json!(["s0e0", "s1e7"]));
        assert_eq!(p["shank_ids"], json!(["0", "1"]));
        assert_eq!(p["contact_shapes"], json!(["square", "square"]));
        assert_eq!(p["contact_shape_params"][1], json!({ "width": 12.0 }));
        assert_eq!(p["contact_annotations"]["adc_sample_order"], json!([0, 3]));
        assert_eq!(p["annotations"]["model_name"], "NP2014");
    }

    #[test]
    fn the_json_reads_back_as_the_same_probe() {
        let p = probe();
        let back = probe_from_probeinterface(&probeinterface_json(&p), 3, &[1]).unwrap();
        assert_eq!(back, p);
        // Without the exemption the middle channel lacks a contact.
        let err = probe_from_probeinterface(&probeinterface_json(&p), 3, &[]).unwrap_err();
        assert!(err.contains("too few contacts"), "{err}");
    }

    #[test]
    fn wrong_documents_are_refused_with_the_reason() {
        let good = probeinterface_json(&probe());
        let with = |f: &dyn Fn(&mut Value)| {
            let mut v = good.clone();
            f(&mut v);
            probe_from_probeinterface(&v, 3, &[1]).unwrap_err()
        };
        type Edit<'a> = &'a dyn Fn(&mut Value);
        let cases: [(Edit, &str); 6] = [
            (
                &|v| v["specification"] = json!("other"),
                "not a probeinterface",
            ),
            (
                &|v| v["probes"][0]["device_channel_indices"] = json!([0, 7]),
                "is 7",
            ),
            (
                &|v| v["probes"][0]["device_channel_indices"] = json!([2, 2]),
                "both wired",
            ),
            (
                &|v| v["probes"][0]["contact_ids"] = json!(["a"]),
                "1 entries for 2",
            ),
            (
                &|v| v["probes"][0]["si_units"] = json!("parsec"),
                "si_units",
            ),
            (&|v| v["probes"] = json!([]), "0 probes"),
        ];
        for (edit, want) in cases {
            let err = with(edit);
            assert!(err.contains(want), "{want}: {err}");
            assert_eq!(err.lines().count(), 1, "{err}");
        }
        assert!(probe_from_probeinterface(&good, 2, &[1]).is_err());
    }

    #[test]
    fn an_unwritable_path_is_one_error_naming_it() {
        let dir = std::env::temp_dir().join(format!("dspk-pi-{}", std::process::id()));
        let path = dir.join("no-such-folder").join("probe.json");
        let err = write_probeinterface(&path, &probe())
            .unwrap_err()
            .to_string();
        assert!(err.contains("no-such-folder"), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}
