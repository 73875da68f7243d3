//! Edge modes: what a window's halo holds where it reaches past an end of the recording.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::{DspError, DspResult, HaloWindow};

/// What a window's halo holds where it reaches past an end of the recording.
///
/// [`Clamp`](EdgeMode::Clamp) reads only what the recording has: windows at the ends are
/// shorter. Every other mode gives full-width windows: the missing halo samples
/// ([`HaloWindow::pad_left`], [`HaloWindow::pad_right`]) are made up from the data read, exactly
/// as `numpy.pad` does it (or scipy.signal's `odd_ext` for [`Odd`](EdgeMode::Odd)). For data
/// `x` of `n` samples and a left pad of `p`, padded index `p - 1 - i` (`i` in `0..p`) holds:
///
/// | mode | numpy | left pad | `[a b c]`, 2 a side |
/// |---|---|---|---|
/// | `zeros` | `constant` (0) | `0` | `0 0 a b c 0 0` |
/// | `reflect` | `reflect` | `x[i + 1]` | `c b a b c b a` |
/// | `odd` | odd_ext, `reflect` with `reflect_type="odd"` | `2 x[0] - x[i + 1]` | `2a-c 2a-b a b c 2c-b 2c-a` |
/// | `nearest` | `edge` | `x[0]` | `a a a b c c c` |
///
/// and the right pad is the mirror image. Pads longer than the data allows are refused, never
/// wrapped: `reflect` and `odd` need at least `pad + 1` samples on each padded side (scipy's
/// `odd_ext` rule; numpy would reflect again, periodically, which no filter wants), `nearest`
/// needs one sample, `zeros` needs none, `clamp` pads nothing.
///
/// ```
/// use dspk_types::EdgeMode;
/// let mut out = [0.0; 7];
/// EdgeMode::Reflect.pad_into(&[1.0, 2.0, 3.0], 2, 2, &mut out).unwrap();
/// assert_eq!(out, [3.0, 2.0, 1.0, 2.0, 3.0, 2.0, 1.0]);
/// assert_eq!("odd".parse::<EdgeMode>().unwrap(), EdgeMode::Odd);
/// assert!(EdgeMode::Reflect.pad_into(&[1.0, 2.0, 3.0], 3, 0, &mut [0.0; 6]).is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EdgeMode {
    /// No padding: the read is clamped to the recording and windows at the ends are shorter.
    #[default]
    Clamp,
    /// Zeros (numpy `constant` with 0).
    Zeros,
    /// Mirror about the edge sample, without repeating it (numpy `reflect`).
    Reflect,
    /// Point reflection about the edge sample, `2 × edge − reflect` (scipy.signal `odd_ext`):
    /// keeps the value and the slope at the edge, what `filtfilt` pads with.
    Odd,
    /// The edge sample repeated (numpy `edge`).
    Nearest,
}

impl EdgeMode {
    /// Every mode, in the order of the names in error messages.
    pub const ALL: [EdgeMode; 5] = [
        EdgeMode::Clamp,
        EdgeMode::Zeros,
        EdgeMode::Reflect,
        EdgeMode::Odd,
        EdgeMode::Nearest,
    ];

    /// The mode's name, as [`FromStr`], [`Display`](fmt::Display) and serde spell it.
    pub const fn name(self) -> &'static str {
        match self {
            EdgeMode::Clamp => "clamp",
            EdgeMode::Zeros => "zeros",
            EdgeMode::Reflect => "reflect",
            EdgeMode::Odd => "odd",
            EdgeMode::Nearest => "nearest",
        }
    }

    /// Whether the mode fills the halo past the recording (every mode but `Clamp`).
    pub const fn pads(self) -> bool {
        !matches!(self, EdgeMode::Clamp)
    }

    /// Checks that `len` samples of data can be padded with `pad_left` and `pad_right`
    /// samples in this mode (see the rules on [`EdgeMode`]); the error names the mode, the
    /// side, the pad and the length.
    pub fn check_pad(self, len: usize, pad_left: usize, pad_right: usize) -> DspResult<()> {
        match self.pad_problem(len, pad_left, pad_right) {
            Some(problem) => Err(DspError::config(problem)),
            None => Ok(()),
        }
    }

    /// Why `len` samples cannot be padded so, or `None` when they can.
    pub(crate) fn pad_problem(
        self,
        len: usize,
        pad_left: usize,
        pad_right: usize,
    ) -> Option<String> {
        let (side, pad) = if pad_left >= pad_right {
            ("left", pad_left)
        } else {
            ("right", pad_right)
        };
        if pad == 0 {
            return None;
        }
        let need = match self {
            EdgeMode::Clamp => {
                return Some(format!(
                    "the clamp edge mode pads nothing, got a pad of {pad} samples on the {side}"
                ));
            }
            EdgeMode::Zeros => 0,
            EdgeMode::Nearest => 1,
            EdgeMode::Reflect | EdgeMode::Odd => pad.saturating_add(1),
        };
        (len < need).then(|| {
            format!(
                "the {self} edge mode needs at least {need} samples of data to pad {pad} on the {side}, got {len}"
            )
        })
    }

    /// Pads `row` with `pad_left` samples before and `pad_right` after into `out`, which must
    /// hold exactly `pad_left + row.len() + pad_right` values.
    pub fn pad_into(
        self,
        row: &[f32],
        pad_left: usize,
        pad_right: usize,
        out: &mut [f32],
    ) -> DspResult<()> {
        self.check_pad(row.len(), pad_left, pad_right)?;
        let padded = padded_len("padded row", pad_left, row.len(), pad_right)?;
        if out.len() != padded {
            return Err(DspError::shape("padded row", padded, out.len()));
        }
        out[pad_left..pad_left + row.len()].copy_from_slice(row);
        self.fill(out, 1, 0, pad_left, row.len(), pad_right);
        Ok(())
    }

    /// Fills the pads of one channel of `buf`, whose value at padded index `j` is at
    /// `buf[j * stride + offset]` and whose data (`len` values) are already at padded indices
    /// `pad_left..pad_left + len`. The pads must have been checked.
    fn fill(
        self,
        buf: &mut [f32],
        stride: usize,
        offset: usize,
        pad_left: usize,
        len: usize,
        pad_right: usize,
    ) {
        let at = |j: usize| j * stride + offset;
        if matches!(self, EdgeMode::Clamp | EdgeMode::Zeros) {
            // No edge sample needed: the data may be empty.
            for j in (0..pad_left).chain(pad_left + len..pad_left + len + pad_right) {
                buf[at(j)] = 0.0;
            }
            return;
        }
        let (first, last) = (pad_left, pad_left + len);
        // Padded index `first - d` and `last - 1 + d`, `d` from 1: the distance from the edge.
        for d in 1..=pad_left {
            buf[at(first - d)] = match self {
                EdgeMode::Clamp | EdgeMode::Zeros => 0.0,
                EdgeMode::Reflect => buf[at(first + d)],
                EdgeMode::Odd => 2.0 * buf[at(first)] - buf[at(first + d)],
                EdgeMode::Nearest => buf[at(first)],
            };
        }
        for d in 1..=pad_right {
            let edge = last - 1;
            buf[at(edge + d)] = match self {
                EdgeMode::Clamp | EdgeMode::Zeros => 0.0,
                EdgeMode::Reflect => buf[at(edge - d)],
                EdgeMode::Odd => 2.0 * buf[at(edge)] - buf[at(edge - d)],
                EdgeMode::Nearest => buf[at(edge)],
            };
        }
    }
}

impl fmt::Display for EdgeMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for EdgeMode {
    type Err = DspError;

    /// One of the names `clamp`, `zeros`, `reflect`, `odd`, `nearest` (surrounding space and
    /// case ignored); anything else is a [`DspError::InvalidConfig`] naming it.
    fn from_str(s: &str) -> DspResult<Self> {
        let t = s.trim().to_ascii_lowercase();
        EdgeMode::ALL
            .into_iter()
            .find(|m| m.name() == t)
            .ok_or_else(|| {
                let names: Vec<&str> = EdgeMode::ALL.iter().map(|m| m.name()).collect();
                DspError::config(format!(
                    "unknown edge mode '{s}': expected one of {}",
                    names.join(", ")
                ))
            })
    }
}

/// `pad_left + len + pad_right`, or an overflow error about `what`.
fn padded_len(what: &str, pad_left: usize, len: usize, pad_right: usize) -> DspResult<usize> {
    pad_left
        .checked_add(len)
        .and_then(|n| n.checked_add(pad_right))
        .ok_or_else(|| {
            DspError::Overflow(format!(
                "{what} of {pad_left} + {len} + {pad_right} samples"
            ))
        })
}

/// The sizes of a window's data: `(read_len, padded_len, channels × read_len,
/// channels × padded_len)`, after checking the window's pads against its mode.
fn window_sizes(window: &HaloWindow, channels: usize) -> DspResult<(usize, usize, usize, usize)> {
    let n = usize::try_from(
        window
            .read_global
            .end
            .saturating_sub(window.read_global.start),
    )
    .map_err(|_| DspError::Overflow(format!("a window read of {:?}", window.read_global)))?;
    if window.read_global.start > window.read_global.end {
        return Err(DspError::config(format!(
            "window {} reads a reversed range {}..{}",
            window.index, window.read_global.start, window.read_global.end
        )));
    }
    if let Some(problem) = window
        .edge
        .pad_problem(n, window.pad_left, window.pad_right)
    {
        return Err(DspError::config(format!(
            "window {}: {problem}",
            window.index
        )));
    }
    let p = padded_len("a padded window", window.pad_left, n, window.pad_right)?;
    let mul = |len: usize| {
        len.checked_mul(channels).ok_or_else(|| {
            DspError::Overflow(format!(
                "a window buffer of {channels} channels × {len} samples"
            ))
        })
    };
    Ok((n, p, mul(n)?, mul(p)?))
}

/// Pads a window's channel-major data (`channels × read_len`, as
/// [`RecordingSource::read`](crate::RecordingSource::read) writes it) into `out`
/// (`channels × padded_len`), as the window's [`edge`](HaloWindow::edge) mode says; under
/// `Clamp` it copies. Wrong sizes and pads the mode cannot make are typed errors.
pub fn pad_channel_major(
    window: &HaloWindow,
    channels: usize,
    data: &[f32],
    out: &mut [f32],
) -> DspResult<()> {
    let (n, p, read, padded) = window_sizes(window, channels)?;
    if data.len() != read {
        return Err(DspError::shape(
            "window data (channels × read_len)",
            read,
            data.len(),
        ));
    }
    if out.len() != padded {
        return Err(DspError::shape(
            "padded window buffer (channels × padded_len)",
            padded,
            out.len(),
        ));
    }
    if n == 0 || p == 0 {
        // No data to copy; with zeros there may still be pads (all 0).
        out.fill(0.0);
        return Ok(());
    }
    for (src, dst) in data.chunks_exact(n).zip(out.chunks_exact_mut(p)) {
        dst[window.pad_left..window.pad_left + n].copy_from_slice(src);
        window
            .edge
            .fill(dst, 1, 0, window.pad_left, n, window.pad_right);
    }
    Ok(())
}

/// [`pad_channel_major`] into a new buffer.
pub fn padded_channel_major(
    window: &HaloWindow,
    channels: usize,
    data: &[f32],
) -> DspResult<Vec<f32>> {
    let (_, _, _, padded) = window_sizes(window, channels)?;
    let mut out = vec![0.0; padded];
    pad_channel_major(window, channels, data, &mut out)?;
    Ok(out)
}

/// Pads a window's channel-major data in place: `buffer` holds `channels × padded_len` values
/// of which the first `channels × read_len` are the data as read; afterwards it holds the
/// padded rows. This is how the [`WindowLoader`](crate::WindowLoader) pads without a second
/// buffer. Under `Clamp` (no pads) it changes nothing.
pub fn pad_channel_major_in_place(
    window: &HaloWindow,
    channels: usize,
    buffer: &mut [f32],
) -> DspResult<()> {
    let (n, p, _, padded) = window_sizes(window, channels)?;
    if buffer.len() != padded {
        return Err(DspError::shape(
            "padded window buffer (channels × padded_len)",
            padded,
            buffer.len(),
        ));
    }
    if n == p {
        return Ok(());
    }
    if n == 0 {
        buffer.fill(0.0);
        return Ok(());
    }
    // Last row first: row c moves from c × n to c × p + pad_left, at or past where it was and
    // past the rows before it (c × p ≥ c × n), which are still to move.
    for c in (0..channels).rev() {
        let dst = c * p + window.pad_left;
        buffer.copy_within(c * n..(c + 1) * n, dst);
        window.edge.fill(
            &mut buffer[c * p..(c + 1) * p],
            1,
            0,
            window.pad_left,
            n,
            window.pad_right,
        );
    }
    Ok(())
}

/// Pads a window's time-major data (`read_len × channels`, sample by sample) into `out`
/// (`padded_len × channels`), as [`pad_channel_major`] does for channel-major data.
pub fn pad_time_major(
    window: &HaloWindow,
    channels: usize,
    data: &[f32],
    out: &mut [f32],
) -> DspResult<()> {
    let (n, _, read, padded) = window_sizes(window, channels)?;
    if data.len() != read {
        return Err(DspError::shape(
            "window data (read_len × channels)",
            read,
            data.len(),
        ));
    }
    if out.len() != padded {
        return Err(DspError::shape(
            "padded window buffer (padded_len × channels)",
            padded,
            out.len(),
        ));
    }
    if n == 0 {
        out.fill(0.0);
        return Ok(());
    }
    let start = window.pad_left * channels;
    out[start..start + read].copy_from_slice(data);
    for c in 0..channels {
        window
            .edge
            .fill(out, channels, c, window.pad_left, n, window.pad_right);
    }
    Ok(())
}

#[cfg(test)]
mod tests;
