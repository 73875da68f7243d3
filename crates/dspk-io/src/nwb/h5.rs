//! The HDF5 file under an NWB recording: opening it, errors that name the file and the object,
//! and the typed reads of attributes and small datasets that the NWB metadata needs.

use std::fmt::Display;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use dspk_types::{DspError, DspResult};
use hdf5_reader::error::{Error, Result as H5Result};
use hdf5_reader::group::Group;
use hdf5_reader::{Attribute, Dataset, Datatype, Hdf5File, SliceInfo, SliceInfoElem};

use crate::raw::file_error;

/// The 8 bytes every HDF5 file's superblock starts with (at offset 0 in NWB files).
const HDF5_SIGNATURE: [u8; 8] = *b"\x89HDF\r\n\x1a\n";

/// The most bytes one read of the decoder may allocate: a file whose metadata claims more is
/// refused before allocating, and sample reads are split into reads of at most this many.
pub(crate) const MAX_READ_BYTES: usize = 256 << 20;

/// Whether `path` is an NWB file: a regular file named `.nwb`, or one that starts with the HDF5
/// signature (an NWB file renamed `.h5`).
pub(crate) fn is_nwb(path: &Path) -> bool {
    if !path.is_file() {
        return false;
    }
    if path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("nwb"))
    {
        return true;
    }
    let mut head = [0u8; 8];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| head == HDF5_SIGNATURE)
}

/// The decoder's options: a chunk cache of `cache_bytes`, reads bounded by [`MAX_READ_BYTES`].
fn options(cache_bytes: usize) -> hdf5_reader::OpenOptions {
    hdf5_reader::OpenOptions::default()
        .with_chunk_cache_bytes(cache_bytes)
        .with_chunk_cache_slots(4099)
        .with_max_read_bytes(MAX_READ_BYTES)
}

/// An open HDF5 file and its path, for messages.
pub(crate) struct H5 {
    pub(crate) path: PathBuf,
    pub(crate) file: Hdf5File,
}

impl std::fmt::Debug for H5 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("H5").field("path", &self.path).finish()
    }
}

impl H5 {
    /// Opens `path` with a chunk cache of `cache_bytes`.
    pub(crate) fn open(path: &Path, cache_bytes: usize) -> DspResult<Self> {
        let file =
            Hdf5File::open_with_options(path, options(cache_bytes)).map_err(|e| match e {
                Error::Io(io) => DspError::io(path, "cannot open the NWB file", &io),
                other => file_error(path, format!("not a readable HDF5 file: {other}")),
            })?;
        Ok(Self {
            path: path.to_path_buf(),
            file,
        })
    }

    /// The NWB file held in `bytes`, called `label` in messages, with a chunk cache of
    /// `cache_bytes`.
    pub(crate) fn from_bytes(
        bytes: Arc<[u8]>,
        label: &Path,
        cache_bytes: usize,
    ) -> DspResult<Self> {
        let file = Hdf5File::from_shared_bytes_with_options(bytes, options(cache_bytes))
            .map_err(|e| file_error(label, format!("not a readable HDF5 file: {e}")))?;
        Ok(Self {
            path: label.to_path_buf(),
            file,
        })
    }

    /// An error about `object` (an HDF5 path) of this file.
    pub(crate) fn err(&self, object: &str, why: impl Display) -> DspError {
        file_error(&self.path, format!("/{object}: {why}"))
    }

    /// The group at `path`.
    pub(crate) fn group(&self, path: &str) -> DspResult<Group> {
        self.file
            .group(path)
            .map_err(|e| self.err(path, format!("cannot open the group: {e}")))
    }

    /// The dataset at `path`.
    pub(crate) fn dataset(&self, path: &str) -> DspResult<Dataset> {
        self.file
            .dataset(path)
            .map_err(|e| self.err(path, format!("cannot open the dataset: {e}")))
    }

    /// The names of `group`'s child groups and datasets (at `path`).
    pub(crate) fn members(
        &self,
        group: &Group,
        path: &str,
    ) -> DspResult<(Vec<String>, Vec<String>)> {
        group
            .member_names()
            .map_err(|e| self.err(path, format!("cannot list the group: {e}")))
    }

    /// Whether the group `parent` (at `path`) has a dataset `name`.
    pub(crate) fn has_dataset(&self, parent: &Group, path: &str, name: &str) -> DspResult<bool> {
        Ok(self.members(parent, path)?.1.iter().any(|n| n == name))
    }

    /// The 1-D dataset at `path` as `f64` (integers and floats of any width).
    pub(crate) fn floats(&self, path: &str) -> DspResult<Vec<f64>> {
        let ds = self.dataset(path)?;
        let n = one_dim(self, &ds, path)?;
        self.floats_of(&ds, path, 0..n)
    }

    /// Elements `range` of the 1-D dataset `ds` (at `path`) as `f64`.
    pub(crate) fn floats_of(
        &self,
        ds: &Dataset,
        path: &str,
        range: std::ops::Range<u64>,
    ) -> DspResult<Vec<f64>> {
        let sel = SliceInfo {
            selections: vec![SliceInfoElem::Slice {
                start: range.start,
                end: range.end,
                step: 1,
            }],
        };
        let bad = |e: Error| self.err(path, format!("cannot read it: {e}"));
        macro_rules! read_as {
            ($t:ty) => {
                ds.read_slice::<$t>(&sel)
                    .map_err(bad)?
                    .iter()
                    .map(|&v| v as f64)
                    .collect()
            };
        }
        Ok(match ds.dtype() {
            Datatype::FloatingPoint { size: 4, .. } => read_as!(f32),
            Datatype::FloatingPoint { size: 8, .. } => read_as!(f64),
            Datatype::FixedPoint {
                size: 1,
                signed: true,
                ..
            } => read_as!(i8),
            Datatype::FixedPoint {
                size: 1,
                signed: false,
                ..
            } => read_as!(u8),
            Datatype::FixedPoint {
                size: 2,
                signed: true,
                ..
            } => read_as!(i16),
            Datatype::FixedPoint {
                size: 2,
                signed: false,
                ..
            } => read_as!(u16),
            Datatype::FixedPoint {
                size: 4,
                signed: true,
                ..
            } => read_as!(i32),
            Datatype::FixedPoint {
                size: 4,
                signed: false,
                ..
            } => read_as!(u32),
            Datatype::FixedPoint {
                size: 8,
                signed: true,
                ..
            } => read_as!(i64),
            Datatype::FixedPoint {
                size: 8,
                signed: false,
                ..
            } => read_as!(u64),
            other => return Err(self.err(path, format!("is {}, not numbers", type_name(other)))),
        })
    }

    /// The 1-D dataset at `path` as integers (any integer width; floats are refused).
    pub(crate) fn integers(&self, path: &str) -> DspResult<Vec<i128>> {
        let ds = self.dataset(path)?;
        let n = one_dim(self, &ds, path)?;
        let sel = SliceInfo {
            selections: vec![SliceInfoElem::Slice {
                start: 0,
                end: n,
                step: 1,
            }],
        };
        let bad = |e: Error| self.err(path, format!("cannot read it: {e}"));
        macro_rules! read_as {
            ($t:ty) => {
                ds.read_slice::<$t>(&sel)
                    .map_err(bad)?
                    .iter()
                    .map(|&v| i128::from(v))
                    .collect()
            };
        }
        Ok(match ds.dtype() {
            Datatype::FixedPoint {
                size: 1,
                signed: true,
                ..
            } => read_as!(i8),
            Datatype::FixedPoint {
                size: 1,
                signed: false,
                ..
            } => read_as!(u8),
            Datatype::FixedPoint {
                size: 2,
                signed: true,
                ..
            } => read_as!(i16),
            Datatype::FixedPoint {
                size: 2,
                signed: false,
                ..
            } => read_as!(u16),
            Datatype::FixedPoint {
                size: 4,
                signed: true,
                ..
            } => read_as!(i32),
            Datatype::FixedPoint {
                size: 4,
                signed: false,
                ..
            } => read_as!(u32),
            Datatype::FixedPoint {
                size: 8,
                signed: true,
                ..
            } => read_as!(i64),
            Datatype::FixedPoint {
                size: 8,
                signed: false,
                ..
            } => read_as!(u64),
            other => return Err(self.err(path, format!("is {}, not integers", type_name(other)))),
        })
    }

    /// The 1-D string dataset at `path` (fixed-length or variable-length strings).
    pub(crate) fn strings(&self, path: &str) -> DspResult<Vec<String>> {
        let ds = self.dataset(path)?;
        one_dim(self, &ds, path)?;
        ds.read_strings()
            .map_err(|e| self.err(path, format!("cannot read its strings: {e}")))
    }

    /// The scalar (or one-element) numeric dataset at `path`.
    pub(crate) fn scalar(&self, path: &str) -> DspResult<f64> {
        let ds = self.dataset(path)?;
        let n: u64 = ds.shape().iter().product();
        if n != 1 {
            return Err(self.err(path, format!("holds {n} values, not one")));
        }
        let sel = SliceInfo::all(ds.ndim());
        let bad = |e: Error| self.err(path, format!("cannot read it: {e}"));
        match ds.dtype() {
            Datatype::FloatingPoint { size: 4, .. } => Ok(f64::from(
                ds.read_slice::<f32>(&sel)
                    .map_err(bad)?
                    .iter()
                    .next()
                    .copied()
                    .unwrap_or(f32::NAN),
            )),
            Datatype::FloatingPoint { .. } => Ok(ds
                .read_slice::<f64>(&sel)
                .map_err(bad)?
                .iter()
                .next()
                .copied()
                .unwrap_or(f64::NAN)),
            Datatype::FixedPoint { .. } => {
                drop(sel);
                Ok(self.floats_of(&ds, path, 0..1).map(|v| v[0])?)
            }
            other => Err(self.err(path, format!("is {}, not a number", type_name(other)))),
        }
    }
}

/// The length of the 1-D dataset `ds` (at `path`); other ranks are an error.
pub(crate) fn one_dim(h5: &H5, ds: &Dataset, path: &str) -> DspResult<u64> {
    match ds.shape() {
        [n] => Ok(*n),
        other => Err(h5.err(path, format!("has shape {other:?}, not one dimension"))),
    }
}

/// The value of a string attribute (fixed-length or variable-length), `None` where `attr` is
/// missing or not one string.
pub(crate) fn attr_string(attr: H5Result<Attribute>) -> Option<String> {
    let attr = attr.ok()?;
    attr.read_string()
        .ok()
        .or_else(|| attr.read_strings().ok()?.into_iter().next())
}

/// The value of a numeric attribute: `Ok(None)` where it is missing, `Err` (the reason) where
/// it is there but not one number.
pub(crate) fn attr_number(attr: H5Result<Attribute>) -> Result<Option<f64>, String> {
    match attr {
        Err(e) if is_not_found(&e) => Ok(None),
        Err(e) => Err(e.to_string()),
        Ok(a) => a.read_as_f64().map(Some).map_err(|e| e.to_string()),
    }
}

/// An HDF5 type in words, for messages.
pub(crate) fn type_name(t: &Datatype) -> String {
    match t {
        Datatype::FixedPoint { size, signed, .. } => {
            format!(
                "{}int{}",
                if *signed { "" } else { "u" },
                u32::from(*size) * 8
            )
        }
        Datatype::FloatingPoint { size, .. } => format!("float{}", u32::from(*size) * 8),
        Datatype::String { .. } => "strings".into(),
        Datatype::VarLen { .. } => "variable-length data".into(),
        Datatype::Compound { .. } => "a compound type".into(),
        Datatype::Reference { .. } => "references".into(),
        Datatype::Enum { .. } => "an enumeration".into(),
        Datatype::Array { .. } => "arrays".into(),
        Datatype::Opaque { .. } => "opaque data".into(),
        Datatype::Bitfield { .. } => "bit fields".into(),
    }
}

/// Whether `e` says an attribute, group or dataset is not there (possibly with context).
fn is_not_found(e: &Error) -> bool {
    match e {
        Error::AttributeNotFound(_) | Error::GroupNotFound(_) | Error::DatasetNotFound(_) => true,
        Error::Context { source, .. } => is_not_found(source),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::type_name;
    use hdf5_reader::{ByteOrder, Datatype};

    /// A file may state any width up to 255 bytes (the fuzzer's first find: `size * 8` in u8).
    #[test]
    fn type_names_of_any_width() {
        let wide = Datatype::FixedPoint {
            size: 255,
            signed: false,
            byte_order: ByteOrder::LittleEndian,
        };
        assert_eq!(type_name(&wide), "uint2040");
        let wide = Datatype::FloatingPoint {
            size: 32,
            byte_order: ByteOrder::BigEndian,
        };
        assert_eq!(type_name(&wide), "float256");
    }
}
