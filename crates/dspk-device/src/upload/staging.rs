//! What an upload stages through: the kinds of staging memory ([`Staging`]), the
//! `DSPK_UPLOAD` choice among them, and the alignment that pieces and copies keep.

use dspk_types::{DspError, DspResult};

/// Copy alignment of device buffers, in bytes.
pub(super) const COPY_ALIGN: u64 = 4;

/// The environment variable that picks the upload path (for measurements):
/// `host`, `host-uncached`, `mapped` or `write` (see [`Staging`]). Unset: the fastest available.
pub const UPLOAD_ENV: &str = "DSPK_UPLOAD";

/// Where an [`Uploader`](super::Uploader)'s bytes wait before the device takes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Staging {
    /// A buffer in host-cached system memory that dspk allocated on the Vulkan device, mapped
    /// once; the device's copy pulls it across the bus (like a pinned host buffer). The default
    /// on Vulkan.
    HostCached,
    /// The same in uncached (write-combined) system memory.
    HostUncached,
    /// wgpu's own `MAP_WRITE` buffers, re-mapped after every copy. wgpu puts them in
    /// device-local, host-visible memory where the device has it (a discrete GPU's BAR), so
    /// the CPU's stores are what cross the bus. The default on wgpu devices that are not Vulkan.
    Mapped,
    /// CubeCL's `Client::write` in pieces: other runtimes, and devices dspk did not open.
    Write,
}

impl Staging {
    /// The name `DSPK_UPLOAD` takes for this path.
    pub fn name(self) -> &'static str {
        match self {
            Staging::HostCached => "host",
            Staging::HostUncached => "host-uncached",
            Staging::Mapped => "mapped",
            Staging::Write => "write",
        }
    }

    /// The path `name` names (as in [`Staging::name`]).
    pub fn from_name(name: &str) -> DspResult<Self> {
        [
            Staging::HostCached,
            Staging::HostUncached,
            Staging::Mapped,
            Staging::Write,
        ]
        .into_iter()
        .find(|s| s.name() == name)
        .ok_or_else(|| {
            DspError::config(format!(
                "{UPLOAD_ENV}={name:?} is not an upload path (host, host-uncached, mapped, write)"
            ))
        })
    }

    /// The path asked for by `DSPK_UPLOAD`, if set.
    pub fn from_env() -> DspResult<Option<Self>> {
        match std::env::var(UPLOAD_ENV) {
            Ok(v) if !v.trim().is_empty() => Self::from_name(v.trim()).map(Some),
            _ => Ok(None),
        }
    }

    /// Whether this is dspk's own host memory, which a staging kernel can read in place.
    pub(super) fn is_host(self) -> bool {
        matches!(self, Staging::HostCached | Staging::HostUncached)
    }
}

/// The least common multiple of `a` and `b` (the unit of pieces that are whole multiples of
/// both a frame and an alignment).
pub(super) fn lcm(a: usize, b: usize) -> usize {
    fn gcd(a: usize, b: usize) -> usize {
        if b == 0 { a } else { gcd(b, a % b) }
    }
    a / gcd(a, b) * b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_a_wrong_name_is_refused() {
        for s in [
            Staging::HostCached,
            Staging::HostUncached,
            Staging::Mapped,
            Staging::Write,
        ] {
            assert_eq!(Staging::from_name(s.name()), Ok(s));
        }
        let err = Staging::from_name("pinned").expect_err("not a path");
        assert!(err.to_string().contains("DSPK_UPLOAD=\"pinned\""), "{err}");
    }

    #[test]
    fn lcm_of_frames_and_alignments() {
        assert_eq!(lcm(768, 4), 768);
        assert_eq!(lcm(2310, 4), 4620);
        assert_eq!(lcm(1, 16), 16);
        assert_eq!(lcm(6, 4), 12);
    }
}
