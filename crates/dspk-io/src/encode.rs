//! [`OutputFormat`]: how a writer stores the `f32` values of a window — `float32` as they are,
//! or `int16` checked value by value — and the encoding to little-endian bytes.

use std::borrow::Cow;

use dspk_types::{DspError, DspResult, SampleFormat};

/// How scaled windows handed to a [`BinaryWriter`](crate::BinaryWriter) or a
/// [`BinarySink`](crate::BinarySink) are stored.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum OutputFormat {
    /// `float32`, the values as they are (gain 1, offset 0 in the sidecar).
    #[default]
    Float32,
    /// `int16`: each value is already a whole number within int16's range (a pipeline's last
    /// stage multiplied the signal by `gain`, rounded and saturated it); it is stored as it is,
    /// and the sidecar says gain `1 / gain`, offset 0, so that a reader gets the signal back in
    /// its unit (µV). A value that is not a whole number in range is an error, never wrapped.
    Int16 {
        /// What the signal was multiplied by before rounding (finite, not 0).
        gain: f64,
    },
}

impl OutputFormat {
    /// The stored format of the file.
    pub fn sample_format(self) -> SampleFormat {
        match self {
            Self::Float32 => SampleFormat::F32,
            Self::Int16 { .. } => SampleFormat::I16,
        }
    }

    /// The sidecar's gain of every channel: what a stored value is multiplied by to give the
    /// signal in its unit (checked: finite and not 0 both ways).
    pub fn stored_gain(self) -> DspResult<f32> {
        match self {
            Self::Float32 => Ok(1.0),
            Self::Int16 { gain } => {
                let stored = (1.0 / gain) as f32;
                if gain.is_finite() && gain != 0.0 && stored.is_finite() && stored != 0.0 {
                    Ok(stored)
                } else {
                    Err(DspError::config(format!(
                        "an int16 output's gain {gain} must be a finite number other than 0 whose inverse a float32 holds"
                    )))
                }
            }
        }
    }
}

/// A value of a window that the file's format cannot store.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Unstorable {
    /// Its position in the window (channel-major).
    pub(crate) index: usize,
    /// The value.
    pub(crate) value: f32,
}

/// `values` as little-endian `format` bytes in `out` (cleared first): `float32`, `float64`,
/// or `int16` where each value is a whole number in range (else the first that is not).
pub(crate) fn encode(
    values: &[f32],
    format: SampleFormat,
    out: &mut Vec<u8>,
) -> Result<(), Option<Unstorable>> {
    out.clear();
    match format {
        SampleFormat::F32 => out.extend_from_slice(&f32_bytes(values)),
        SampleFormat::F64 => {
            out.reserve(values.len() * 8);
            for v in values {
                out.extend_from_slice(&f64::from(*v).to_le_bytes());
            }
        }
        SampleFormat::I16 => {
            out.resize(values.len() * 2, 0);
            // Branch-free over the window (it vectorises); the first bad value is looked for
            // only when there is one.
            let mut all_fit = true;
            for (v, o) in values.iter().zip(out.chunks_exact_mut(2)) {
                all_fit &= fits_i16(*v);
                o.copy_from_slice(&(*v as i16).to_le_bytes());
            }
            if !all_fit {
                let index = values
                    .iter()
                    .position(|v| !fits_i16(*v))
                    .expect("a value that does not fit was seen");
                out.clear();
                return Err(Some(Unstorable {
                    index,
                    value: values[index],
                }));
            }
        }
        _ => return Err(None),
    }
    Ok(())
}

/// Whether `v` is a whole number int16 holds (NaN is not).
fn fits_i16(v: f32) -> bool {
    v.trunc() == v && (-32768.0..=32767.0).contains(&v)
}

/// `values`' little-endian bytes: the values themselves on a little-endian machine (no copy).
pub(crate) fn f32_bytes(values: &[f32]) -> Cow<'_, [u8]> {
    if cfg!(target_endian = "little") {
        Cow::Borrowed(bytemuck::cast_slice(values))
    } else {
        Cow::Owned(values.iter().flat_map(|v| v.to_le_bytes()).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int16_takes_whole_numbers_in_range_and_names_the_first_other() {
        let mut out = Vec::new();
        encode(
            &[-32768.0, 0.0, -0.0, 17.0, 32767.0],
            SampleFormat::I16,
            &mut out,
        )
        .expect("fits");
        let back: Vec<i16> = out
            .chunks_exact(2)
            .map(|b| i16::from_le_bytes([b[0], b[1]]))
            .collect();
        assert_eq!(back, [-32768, 0, 0, 17, 32767]);
        for bad in [32768.0, -32769.0, 1.5, f32::NAN, f32::INFINITY] {
            let e = encode(&[3.0, bad, 40_000.0], SampleFormat::I16, &mut out)
                .expect_err("does not fit");
            let e = e.expect("int16 is encoded");
            assert_eq!(e.index, 1);
            assert!(e.value.to_bits() == bad.to_bits(), "{bad} vs {}", e.value);
        }
    }

    #[test]
    fn float_bytes_are_the_values_little_endian() {
        let values = [1.5f32, -2.25, 3.0e-7];
        let mut out = Vec::new();
        encode(&values, SampleFormat::F32, &mut out).expect("f32");
        let want: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(out, want);
        encode(&values, SampleFormat::F64, &mut out).expect("f64");
        let want: Vec<u8> = values
            .iter()
            .flat_map(|v| f64::from(*v).to_le_bytes())
            .collect();
        assert_eq!(out, want);
        assert_eq!(encode(&values, SampleFormat::I32, &mut out), Err(None));
    }

    #[test]
    fn int16_gain_is_inverted_for_the_sidecar() {
        let stored = |f: OutputFormat| f.stored_gain().expect("a valid gain");
        assert_eq!(stored(OutputFormat::Int16 { gain: 200.0 }), 0.005);
        assert_eq!(stored(OutputFormat::Float32), 1.0);
        for bad in [0.0, f64::NAN, f64::INFINITY, 1e-300] {
            let e = OutputFormat::Int16 { gain: bad }
                .stored_gain()
                .expect_err("refused");
            assert!(e.to_string().contains(&bad.to_string()), "{e}");
        }
    }
}
