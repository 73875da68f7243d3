//! The spatial questions preprocessing asks of a probe: neighbourhoods, nearest contacts, row
//! pitch.

use std::cmp::Ordering;

use crate::{Probe, ProbeError};

impl Probe {
    /// The distance between the contacts of channels `a` and `b`, in µm.
    pub fn distance_um(&self, a: usize, b: usize) -> Result<f64, ProbeError> {
        Ok(self.contact(a)?.distance_um(self.contact(b)?))
    }

    /// The other channels whose contacts lie within `radius_um` of `channel`'s (distance
    /// `<= radius_um`), nearest first, ties by channel index. Channels without a contact are
    /// never neighbours.
    pub fn within(&self, channel: usize, radius_um: f64) -> Result<Vec<usize>, ProbeError> {
        check_radii(0.0, radius_um, true)?;
        self.around(channel, |d| d <= radius_um)
    }

    /// The channels whose contacts lie in the annulus `inner_um < distance <= outer_um` around
    /// `channel`'s (SpikeInterface's local reference convention), nearest first, ties by
    /// channel index. The channel itself is never in it.
    pub fn annulus(
        &self,
        channel: usize,
        inner_um: f64,
        outer_um: f64,
    ) -> Result<Vec<usize>, ProbeError> {
        check_radii(inner_um, outer_um, false)?;
        self.around(channel, |d| d > inner_um && d <= outer_um)
    }

    /// `channel` and the `k - 1` channels whose contacts are nearest to its contact: `k`
    /// channels in all (fewer where the probe has fewer contacts), `channel` first, then by
    /// distance, ties by channel index (Kilosort's whitening neighbourhood).
    pub fn nearest(&self, channel: usize, k: usize) -> Result<Vec<usize>, ProbeError> {
        self.contact(channel)?;
        if k == 0 {
            return Ok(Vec::new());
        }
        let mut out = vec![channel];
        out.extend(self.around(channel, |_| true)?.into_iter().take(k - 1));
        Ok(out)
    }

    /// The vertical distance between neighbouring rows: the smallest positive difference of
    /// y between two contacts on the same shank; `None` with no two rows.
    pub fn row_pitch_um(&self) -> Option<f64> {
        let mut rows: Vec<(u32, f64)> = self
            .channels()
            .iter()
            .flatten()
            .map(|c| (c.shank, c.y_um))
            .collect();
        rows.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
        rows.windows(2)
            .filter(|w| w[0].0 == w[1].0)
            .map(|w| w[1].1 - w[0].1)
            .filter(|&d| d > 0.0)
            .min_by(f64::total_cmp)
    }

    /// The other channels with a contact whose distance to `channel`'s passes `keep`, nearest
    /// first, ties by channel index.
    fn around(&self, channel: usize, keep: impl Fn(f64) -> bool) -> Result<Vec<usize>, ProbeError> {
        let centre = self.contact(channel)?;
        let mut found: Vec<(f64, usize)> = self
            .channels()
            .iter()
            .enumerate()
            .filter(|&(c, _)| c != channel)
            .filter_map(|(c, contact)| contact.as_ref().map(|k| (centre.distance_um(k), c)))
            .filter(|&(d, _)| keep(d))
            .collect();
        found.sort_by(|a, b| match a.0.total_cmp(&b.0) {
            Ordering::Equal => a.1.cmp(&b.1),
            other => other,
        });
        Ok(found.into_iter().map(|(_, c)| c).collect())
    }
}

/// Finite, `0 <= inner`, and `inner < outer` (or `<=` where a zero-width ball is allowed).
fn check_radii(inner_um: f64, outer_um: f64, closed: bool) -> Result<(), ProbeError> {
    let ordered = if closed {
        inner_um <= outer_um
    } else {
        inner_um < outer_um
    };
    if inner_um.is_finite() && outer_um.is_finite() && inner_um >= 0.0 && ordered {
        Ok(())
    } else {
        Err(ProbeError::BadRadii { inner_um, outer_um })
    }
}
