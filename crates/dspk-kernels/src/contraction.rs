//! Whether multiply-add is fused on the client's device, and proof that the decode kernel's
//! guard keeps it from changing results (see [`crate::decode`]'s module docs).

use cubecl::prelude::*;
use dspk_types::{DspResult, MemoryOrder, SampleFormat};

use crate::decode::Decoder;

/// What [`contraction_probe`] found: how many decoded values of the plain expression
/// `x * gain + offset` differ from the host's unfused and fused (`mul_add`) results, and how
/// many of the guarded kernel's differ from the host's unfused ones (should be 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContractionProbe {
    /// Values compared.
    pub values: usize,
    /// Plain kernel ≠ host `x * gain + offset` (nonzero: the device fuses).
    pub plain_vs_unfused: usize,
    /// Plain kernel ≠ host `x.mul_add(gain, offset)` (nonzero: the device does not fuse).
    pub plain_vs_fused: usize,
    /// Guarded kernel ≠ host `x * gain + offset` (must be 0).
    pub guarded_vs_unfused: usize,
}

/// Decodes `channels × samples` pseudo-random int16 values with pseudo-random gains and
/// offsets (from `seed`) with the guarded kernel and with the plain expression, and counts
/// differences from the host's unfused and fused arithmetic.
pub fn contraction_probe(
    client: &Client,
    channels: usize,
    samples: usize,
    seed: u64,
) -> DspResult<ContractionProbe> {
    let mut state = seed;
    let mut next = move || {
        // splitmix64
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let unit = |r: u64| (r >> 40) as f32 / (1u64 << 24) as f32;
    let gains: Vec<f32> = (0..channels).map(|_| 0.01 + 10.0 * unit(next())).collect();
    let offsets: Vec<f32> = (0..channels)
        .map(|_| 200.0 * unit(next()) - 100.0)
        .collect();
    let values: Vec<i16> = (0..channels * samples).map(|_| next() as i16).collect();
    let stored: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();

    let decode = |guard: bool| -> DspResult<Vec<f32>> {
        let mut d = Decoder::build(
            client,
            channels,
            samples,
            SampleFormat::I16,
            MemoryOrder::ChannelMajor,
            &gains,
            &offsets,
            guard,
        )?;
        d.decode(&stored, samples)?.to_vec()
    };
    let guarded = decode(true)?;
    let plain = decode(false)?;

    let mut probe = ContractionProbe {
        values: values.len(),
        plain_vs_unfused: 0,
        plain_vs_fused: 0,
        guarded_vs_unfused: 0,
    };
    for (i, &v) in values.iter().enumerate() {
        let c = i / samples;
        let x = f32::from(v);
        let unfused = x * gains[c] + offsets[c];
        let fused = x.mul_add(gains[c], offsets[c]);
        probe.plain_vs_unfused += usize::from(plain[i].to_bits() != unfused.to_bits());
        probe.plain_vs_fused += usize::from(plain[i].to_bits() != fused.to_bits());
        probe.guarded_vs_unfused += usize::from(guarded[i].to_bits() != unfused.to_bits());
    }
    Ok(probe)
}
