//! The preprocessing stages of `dspk-ops` on every runtime: each stage against its `f64` host
//! reference, and the chain's output the same bits for any windows and devices.

mod center;
mod chain;
mod detect;
mod detect_pass;
mod detect_truth;
mod filter;
mod frames;
mod interpolate;
mod interpolate_detect;
mod kfilt;
mod reference;
mod scale;
mod shift;
mod whiten;

use dspk_types::{Contact, Probe, ProbeParts};

/// Two columns 32 µm apart, rows 20 µm apart, one shank, no ADC slots: within 50 µm, a
/// channel's row and the two rows either side.
pub(crate) fn two_column_probe(channels: usize) -> Probe {
    let contacts = (0..channels)
        .map(|c| {
            Some(Contact::new(
                if c % 2 == 0 { 0.0 } else { 32.0 },
                20.0 * (c / 2) as f64,
                0,
                format!("e{c}"),
            ))
        })
        .collect();
    Probe::new(ProbeParts {
        channels: contacts,
        ..ProbeParts::default()
    })
    .expect("a valid probe")
}
