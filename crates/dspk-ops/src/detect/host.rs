//! The host reference of detection, written as SpikeInterface's `locally_exclusive` detector
//! is (candidates listed in sample order, then each pair within the sweep compared), so that it
//! shares no structure with the device kernels it checks.

use super::{Neighbourhoods, Peak, PeakSign};

/// The peaks of one whole segment: `rows` holds `channels` rows of `len` values
/// (channel-major), local index `i` being recording sample `origin + i`; `thresholds` are the
/// per-channel thresholds (`k × noise`, rounded to `f32` as the device has them). Sorted by
/// sample, then channel.
#[allow(clippy::too_many_arguments)]
pub fn host_detect(
    rows: &[f32],
    channels: usize,
    origin: u64,
    thresholds: &[f32],
    neighbourhoods: &Neighbourhoods,
    sweep: usize,
    sign: PeakSign,
    segment: u32,
) -> Vec<Peak> {
    let len = rows.len().checked_div(channels).unwrap_or(0);
    let at = |c: usize, t: usize| f64::from(rows[c * len + t]);
    let (neg, pos) = sign.directions();
    // Candidates, in (sample, channel) order.
    let mut found: Vec<(usize, usize, f64)> = Vec::new();
    for t in 0..len {
        for (c, &thr32) in thresholds.iter().enumerate().take(channels) {
            let thr = f64::from(thr32);
            if thr <= 0.0 {
                continue;
            }
            let x = at(c, t);
            let prev = (t > 0).then(|| at(c, t - 1));
            let next = (t + 1 < len).then(|| at(c, t + 1));
            let is_min = prev.is_none_or(|p| x < p) && next.is_none_or(|n| x <= n);
            let is_max = prev.is_none_or(|p| x > p) && next.is_none_or(|n| x >= n);
            if (pos && x >= thr && is_max) || (neg && x <= -thr && is_min) {
                found.push((t, c, x.abs()));
            }
        }
    }
    let mut peaks = Vec::new();
    for (i, &(ti, ci, ai)) in found.iter().enumerate() {
        let near = neighbourhoods.of_channel(ci);
        let beaten = found.iter().enumerate().any(|(j, &(tj, cj, aj))| {
            if i == j || ti.abs_diff(tj) > sweep || !near.contains(&(cj as u32)) {
                return false;
            }
            // |x_j|/thr_j against |x_i|/thr_i as the device compares them: f32 products.
            let left = (aj as f32) * thresholds[ci];
            let right = (ai as f32) * thresholds[cj];
            left > right || (left == right && (tj, cj) < (ti, ci))
        });
        if !beaten {
            peaks.push(Peak {
                sample: origin + ti as u64,
                channel: ci as u32,
                amplitude: at(ci, ti) as f32,
                segment,
            });
        }
    }
    peaks
}
