//! Where a device pass decodes its windows.

use std::fmt;
use std::str::FromStr;

use dspk_types::{DspError, DspResult};

/// The environment variable programs read to pick a [`DecodeRoute`] for measurements
/// (`staging` or `copy`); a pass never reads it itself. (The uploaders a pass makes read
/// dspk-device's `DSPK_UPLOAD`, `Uploader::new`.)
pub const DECODE_ENV: &str = "DSPK_DECODE";

/// Where a device pass decodes its windows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DecodeRoute {
    /// The decode kernel reads each window where it was staged, in pinned host memory, across
    /// the bus: int16 windows on devices with dspk's host staging (Vulkan). Asked for where it
    /// is not possible, the pass takes [`Copy`](Self::Copy) and reports that.
    Staging,
    /// Each window is copied into a device buffer, then decoded there by a CubeCL kernel.
    Copy,
}

impl DecodeRoute {
    /// Both routes.
    pub const ALL: [DecodeRoute; 2] = [DecodeRoute::Staging, DecodeRoute::Copy];

    /// `staging` or `copy`.
    pub fn name(self) -> &'static str {
        match self {
            DecodeRoute::Staging => "staging",
            DecodeRoute::Copy => "copy",
        }
    }

    /// The route [`DECODE_ENV`] names; [`Staging`](Self::Staging) when it is unset or empty.
    /// A value that names no route is an error that names the variable.
    pub fn from_env() -> DspResult<Self> {
        match std::env::var(DECODE_ENV) {
            Ok(v) if v.is_empty() => Ok(DecodeRoute::Staging),
            Ok(v) => v
                .parse()
                .map_err(|e: DspError| DspError::config(format!("{DECODE_ENV}: {e}"))),
            Err(std::env::VarError::NotPresent) => Ok(DecodeRoute::Staging),
            Err(std::env::VarError::NotUnicode(v)) => Err(DspError::config(format!(
                "{DECODE_ENV}={v:?} is not valid UTF-8; use \"staging\" or \"copy\""
            ))),
        }
    }
}

impl FromStr for DecodeRoute {
    type Err = DspError;

    fn from_str(s: &str) -> DspResult<Self> {
        Self::ALL
            .into_iter()
            .find(|r| r.name() == s.trim())
            .ok_or_else(|| {
                DspError::config(format!(
                    "{s:?} names no decode route; use \"staging\" or \"copy\""
                ))
            })
    }
}

impl fmt::Display for DecodeRoute {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_bad_names_are_errors() {
        for r in DecodeRoute::ALL {
            assert_eq!(r.name().parse::<DecodeRoute>().unwrap(), r);
            assert_eq!(r.to_string(), r.name());
        }
        let e = "fast".parse::<DecodeRoute>().unwrap_err().to_string();
        assert!(e.contains("\"fast\" names no decode route"), "{e}");
    }
}
