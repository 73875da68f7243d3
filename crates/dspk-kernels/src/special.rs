//! Special float values built from their bits (WGSL has no infinity literal).

/// Bits of `f32` positive infinity.
pub const POSITIVE_INFINITY_BITS: u32 = 0x7f80_0000;
/// Bits of `f32` negative infinity.
pub const NEGATIVE_INFINITY_BITS: u32 = 0xff80_0000;

pub use cube_fns::*;

#[expect(
    missing_docs,
    reason = "#[cube] puts an undocumented `mod <name>` of expansion code beside each function"
)]
mod cube_fns {
    use cubecl::prelude::*;

    use super::{NEGATIVE_INFINITY_BITS, POSITIVE_INFINITY_BITS};

    /// `+∞` as `f32`, reinterpreted from its bits inside the kernel.
    #[cube]
    pub fn positive_infinity() -> f32 {
        f32::reinterpret(POSITIVE_INFINITY_BITS)
    }

    /// `−∞` as `f32`, reinterpreted from its bits inside the kernel.
    #[cube]
    pub fn negative_infinity() -> f32 {
        f32::reinterpret(NEGATIVE_INFINITY_BITS)
    }
}
