//! NWB files on HDF5: every `ElectricalSeries` of an `.nwb` file as a recording, read by
//! chunks through a pure-Rust HDF5 decoder (`hdf5-reader`: no libhdf5 needed where dspk runs).
//!
//! The facts used, from the NWB format specification (core schema: `TimeSeries`,
//! `ElectricalSeries`, `DynamicTable`) and the readers built on it (SpikeInterface's
//! `read_nwb_recording`, whose h5py path dspk follows):
//! - A series is a group whose attribute `neurodata_type` is `ElectricalSeries`, anywhere in
//!   the file (NWB puts them under `/acquisition` and `/processing/<module>`); it is named by
//!   its path without the leading `/` (`acquisition/ElectricalSeries`).
//! - `data` is `[time, channel]` (a 1-D `data` is one channel), in its stored dtype. Volts are
//!   `data × conversion × channel_conversion[ch] + offset` (`conversion`, default 1, and
//!   `offset`, default 0, are attributes of `data`; `channel_conversion` is an optional
//!   per-channel dataset of the series). dspk states µV: those × 10⁶. Where the series has no
//!   `offset`, an `offset` column of the electrodes table is used per channel (SpikeInterface's
//!   fallback).
//! - Time: `starting_time` (seconds) with its attribute `rate` (Hz), or `timestamps` (seconds,
//!   one per sample). From timestamps the rate is SpikeInterface's: 1 / the median difference
//!   of the first 1000; the rate measured over the whole series, `(n − 1) / (t_last − t_0)`, is
//!   the recording's measured rate (as for Open Ephys). Only those timestamps are read.
//! - `electrodes` is a `DynamicTableRegion`: row indices into the electrodes table
//!   (`/general/extracellular_ephys/electrodes`), one per channel. The table's columns used:
//!   `id`, `channel_name` (the channel names where present, else the ids, as SpikeInterface),
//!   `rel_x`, `rel_y` (the contact position, µm), `group_name` (the electrode group: a shank
//!   each, numbered in sorted name order, as SpikeInterface makes a probe per group).
//! - An Open Ephys GUI writer (0.6.x) stores the channels' bit-volts in both `conversion` and
//!   `channel_conversion`: by the specification the values are then scaled twice. dspk reads
//!   what the specification says (as SpikeInterface does) and warns.
//!
//! One concept per file: `h5.rs` (the HDF5 file, its errors and attribute reads), `series.rs`
//! (finding the series and choosing one by name), `electrodes.rs` (the electrodes table:
//! names, positions, groups), `timing.rs` (rate and start from `starting_time` or
//! `timestamps`), `scaling.rs` (µV gains and offsets), `recording.rs` (the description,
//! [`NwbRecording`] and its reads). Imports run one way: `recording` → `series`,
//! `electrodes`, `timing`, `scaling` → `h5`.

mod electrodes;
mod h5;
mod recording;
mod scaling;
mod series;
mod timing;

pub(crate) use h5::is_nwb;
pub(crate) use recording::NwbLayout;
pub use recording::NwbRecording;
pub use series::nwb_series;

/// Where NWB keeps the electrodes table.
pub const ELECTRODES_TABLE: &str = "general/extracellular_ephys/electrodes";
