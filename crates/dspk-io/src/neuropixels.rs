//! Neuropixels probe geometry from probeinterface's catalogue, for the readers: `catalogue`
//! (the embedded catalogue: geometry per part number, IMRO formats, ADC multiplexing tables),
//! `grid` (a part's electrode grid: positions, ids, the probe of a list of contacts) and
//! `openephys` (an Open Ephys plugin's electrode selection on the grid). SpikeGLX's `~imroTbl`
//! is read in `spikeglx/probe.rs`, which uses this module (never the other way round). The facts follow
//! probeinterface's `read_spikeglx`: the part number is `imDatPrb_pn` (Phase 3A, with
//! `imProbeOpt`, is `NP1010`; without either, the IMRO type code's part); an IMRO header's first
//! field is a type code (older SpikeGLX) or the part number (SpikeGLX 20260115 on); electrode =
//! `bank × 384 + channel` on NP1.0-type tables, the table's own `electrode` on NP2.0 and later,
//! the UHD group rule on NP1110; positions are the catalogue's grid (even rows shifted by the
//! stagger, shanks by the shank pitch), contact ids `e{electrode}` or `s{shank}e{electrode}` on
//! multi-shank probes.

mod catalogue;
mod grid;
mod openephys;

pub(crate) use catalogue::{Catalogue, catalogue};
pub(crate) use grid::Grid;
pub(crate) use openephys::{Selection, openephys_probe};
