//! probeinterface's Neuropixels catalogue, embedded as data and read with serde_json.

use std::collections::HashMap;
use std::sync::OnceLock;

use dspk_types::{AdcCycle, AdcSlot};
use serde::Deserialize;

/// The catalogue file, probeinterface 0.4.2's (MIT; licence beside it).
const CATALOGUE_JSON: &str = include_str!("neuropixels_probe_features.json");

/// The parts of the catalogue dspk reads; every value is text in the file.
#[derive(Debug, Deserialize)]
pub(crate) struct Catalogue {
    neuropixels_probes: HashMap<String, HashMap<String, String>>,
    z_imro_formats: HashMap<String, String>,
    z_mux_tables: HashMap<String, String>,
    z_imro_format_type_to_imro_format: HashMap<String, String>,
    z_imro_format_type_to_part_number: HashMap<String, String>,
}

/// The catalogue, parsed once; `Err` carries serde_json's message (a bug in the embedded
/// file, reported rather than panicking).
pub(crate) fn catalogue() -> Result<&'static Catalogue, String> {
    static PARSED: OnceLock<Result<Catalogue, String>> = OnceLock::new();
    PARSED
        .get_or_init(|| {
            serde_json::from_str(CATALOGUE_JSON)
                .map_err(|e| format!("the embedded Neuropixels catalogue does not parse: {e}"))
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// A probe's ADC cycle and the ADC slot of each readout channel (`None`: not in the table).
pub(crate) type AdcTable = (AdcCycle, Vec<Option<AdcSlot>>);

/// One probe of the catalogue, by part number.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Spec<'a> {
    pub(crate) part_number: &'a str,
    fields: &'a HashMap<String, String>,
}

impl Catalogue {
    /// The probe `part_number`, if the catalogue lists it.
    pub(crate) fn probe(&self, part_number: &str) -> Option<Spec<'_>> {
        self.neuropixels_probes
            .get_key_value(part_number)
            .map(|(k, fields)| Spec {
                part_number: k,
                fields,
            })
    }

    /// The part number SpikeGLX's older IMRO type code `code` stands for (`0` → `NP1000`).
    pub(crate) fn part_for_type(&self, code: &str) -> Option<&str> {
        self.z_imro_format_type_to_part_number
            .get(code)
            .map(String::as_str)
    }

    /// The IMRO format (`imro_np1000`) of an IMRO header's first field: a part number or a type
    /// code.
    pub(crate) fn imro_format(&self, first: &str) -> Option<&str> {
        match self.neuropixels_probes.get(first) {
            Some(p) => p.get("imro_table_format_type").map(String::as_str),
            None => self
                .z_imro_format_type_to_imro_format
                .get(first)
                .map(String::as_str),
        }
    }

    /// The field names of an IMRO format's header (`hdr`) or entries (`elm`).
    pub(crate) fn imro_fields(&self, format: &str, part: &str) -> Option<Vec<&str>> {
        let text = self.z_imro_formats.get(&format!("{format}_{part}_flds"))?;
        Some(
            text.trim_matches(|c| c == '(' || c == ')')
                .split([' ', ','])
                .filter(|f| !f.is_empty())
                .collect(),
        )
    }

    /// The ADC multiplexing of a probe: the cycle and, per readout channel, its ADC slot.
    ///
    /// The table reads `(adcs,channels_per_adc)(…)(…)…`: each group after the header is one
    /// slot of the cycle and lists, for each ADC in turn, the readout channel it samples then
    /// (numbers at or past `readout` are unused slots). The cycle is `channels_per_adc × (1 +
    /// lf_rate / ap_rate)` slots, as SpikeInterface's `phase_shift` counts them (13 on NP1.0,
    /// whose 13th slot samples the LF band; 16 on NP2.0).
    pub(crate) fn adc_slots(
        &self,
        spec: Spec<'_>,
        readout: usize,
    ) -> Result<Option<AdcTable>, String> {
        let Some(table) = self.z_mux_tables.get(spec.text("mux_table_format_type")?) else {
            return Ok(None);
        };
        let bad = || format!("mux table of {} is malformed", spec.part_number);
        let mut groups = table
            .split(')')
            .map(|g| g.trim().trim_start_matches('(').trim())
            .filter(|g| !g.is_empty());
        let header = groups.next().ok_or_else(bad)?;
        let (adcs, per_adc) = header.split_once(',').ok_or_else(bad)?;
        let adcs: u32 = adcs.trim().parse().map_err(|_| bad())?;
        let per_adc: u32 = per_adc.trim().parse().map_err(|_| bad())?;
        let mut slots = vec![None; readout];
        let mut taken = vec![0u32; adcs as usize];
        for group in groups {
            for (adc, channel) in group.split_whitespace().enumerate() {
                let channel: usize = channel.parse().map_err(|_| bad())?;
                let count = taken.get_mut(adc).ok_or_else(bad)?;
                if channel < readout {
                    slots[channel] = Some(AdcSlot {
                        adc: adc as u32,
                        order: *count,
                    });
                    *count += 1;
                }
            }
        }
        let ap = spec.number("ap_sample_frequency_hz")?;
        let lf = spec.number("lf_sample_frequency_hz")?;
        // The same float expression as SpikeInterface's, truncated as Python's `int` does.
        let cycle = (f64::from(per_adc) * (1.0 + lf / ap)) as u32;
        let cycle = AdcCycle {
            adcs,
            channels_per_adc: per_adc,
            cycle_samples: cycle,
        };
        Ok(Some((cycle, slots)))
    }
}

impl Spec<'_> {
    /// A field's text.
    pub(crate) fn text(&self, key: &str) -> Result<&str, String> {
        self.fields
            .get(key)
            .map(String::as_str)
            .ok_or_else(|| format!("catalogue entry {} has no {key}", self.part_number))
    }

    /// A field as a number.
    pub(crate) fn number(&self, key: &str) -> Result<f64, String> {
        let t = self.text(key)?;
        t.trim().parse().map_err(|_| {
            format!(
                "catalogue entry {}: {key}={t} is not a number",
                self.part_number
            )
        })
    }

    /// A field as a count.
    pub(crate) fn count(&self, key: &str) -> Result<usize, String> {
        let t = self.text(key)?;
        t.trim().parse().map_err(|_| {
            format!(
                "catalogue entry {}: {key}={t} is not a count",
                self.part_number
            )
        })
    }
}
