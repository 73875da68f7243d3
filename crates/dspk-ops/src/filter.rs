//! Butterworth filters in time: designed on the host in `f64` as second-order sections equal to
//! `scipy.signal.butter(..., output="sos")` ([`design`]), the `f64` host reference of
//! `sosfilt`/`sosfiltfilt` the tests hold the device to ([`host`]), and the device stage.

pub mod design;
pub mod host;
