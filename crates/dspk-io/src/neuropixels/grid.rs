//! A probe's electrode grid from its catalogue entry: positions and ids of electrodes, the
//! electrode at a position, and the [`Probe`] of a list of contacts.

use dspk_types::{Contact, ContactShape, Probe, ProbeParts};

use super::catalogue::{AdcTable, Spec};

/// A probe's electrode grid from its catalogue entry.
pub(crate) struct Grid {
    pub(crate) cols: i64,
    pub(crate) per_shank: i64,
    pub(crate) shanks: i64,
    x_pitch_um: f64,
    y_pitch_um: f64,
    stagger_um: f64,
    pub(crate) shank_pitch_um: f64,
    pub(crate) multi_shank: bool,
}

impl Grid {
    pub(crate) fn of(spec: Spec<'_>) -> Result<Self, String> {
        let cols = spec.count("cols_per_shank")? as i64;
        let rows = spec.count("rows_per_shank")? as i64;
        let shanks = spec.count("num_shanks")? as i64;
        if cols == 0 || rows == 0 || shanks == 0 {
            return Err(format!(
                "catalogue entry {} has an empty grid",
                spec.part_number
            ));
        }
        Ok(Self {
            cols,
            per_shank: cols * rows,
            shanks,
            x_pitch_um: spec.number("electrode_pitch_horz_um")?,
            y_pitch_um: spec.number("electrode_pitch_vert_um")?,
            stagger_um: spec
                .number("even_row_horz_offset_left_edge_to_leftmost_electrode_center_um")?
                - spec.number("odd_row_horz_offset_left_edge_to_leftmost_electrode_center_um")?,
            shank_pitch_um: spec.number("shank_pitch_um")?,
            multi_shank: shanks > 1,
        })
    }

    /// `(col, row)` of an electrode on its shank.
    pub(crate) fn cell(&self, electrode: i64) -> (i64, i64) {
        (electrode % self.cols, electrode / self.cols)
    }

    /// The contact of `electrode` on `shank` (checked in range by the caller).
    pub(crate) fn contact(&self, electrode: i64, shank: i64) -> Contact {
        let (col, row) = self.cell(electrode);
        // Even rows (0, 2, …) carry the stagger.
        let stagger = if row % 2 == 0 { self.stagger_um } else { 0.0 };
        let mut x = col as f64 * self.x_pitch_um + stagger;
        if self.multi_shank {
            x += shank as f64 * self.shank_pitch_um;
        }
        let id = if self.multi_shank {
            format!("s{shank}e{electrode}")
        } else {
            format!("e{electrode}")
        };
        Contact::new(x, row as f64 * self.y_pitch_um, shank as u32, id)
    }

    /// The electrode at (`x_um`, `y_um`) on `shank`, positions measured as [`Grid::contact`]
    /// gives them (x with the shank's offset): the inverse of `contact`, truncated toward zero
    /// as probeinterface's `read_openephys` turns the plugin's positions back into electrodes.
    pub(crate) fn electrode_at(&self, x_um: f64, y_um: f64, shank: i64) -> i64 {
        let rows = y_um / self.y_pitch_um;
        let staggered = (rows + 1.0).rem_euclid(2.0) == 1.0;
        let stagger = if staggered { self.stagger_um } else { 0.0 };
        let cols = self.cols as f64;
        let index = if self.x_pitch_um == 0.0 {
            cols * rows
        } else {
            (x_um - stagger - self.shank_pitch_um * shank as f64) / self.x_pitch_um + cols * rows
        };
        index as i64
    }

    /// Whether `electrode` on `shank` is on the probe.
    pub(crate) fn holds(&self, electrode: i64, shank: i64) -> bool {
        (0..self.per_shank).contains(&electrode) && (0..self.shanks).contains(&shank)
    }

    /// The probe of part `spec` whose channels have `channels` (`None`: no contact), with the
    /// catalogue's model facts and the ADC cycle of `adc`.
    pub(crate) fn probe(
        &self,
        spec: Spec<'_>,
        adc: Option<&AdcTable>,
        channels: Vec<Option<Contact>>,
    ) -> Result<Probe, String> {
        Probe::new(ProbeParts {
            model: Some(spec.part_number.to_string()),
            manufacturer: Some("imec".into()),
            description: spec.text("description").ok().map(str::to_string),
            shank_pitch_um: self.multi_shank.then_some(self.shank_pitch_um),
            contact_shape: Some(ContactShape::Square {
                width_um: spec.number("electrode_size_horz_direction_um")?,
            }),
            adc_cycle: adc.map(|(cycle, _)| *cycle),
            channels,
        })
        .map_err(|e| e.to_string())
    }
}
