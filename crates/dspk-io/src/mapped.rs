//! Read-only memory maps of recording files: the one place dspk-io uses `unsafe`.

use std::fs::File;
use std::path::{Path, PathBuf};

use dspk_types::{DspError, DspResult};
use memmap2::Mmap;

/// A whole file mapped read-only (an empty file has no mapping and reads as no bytes).
pub(crate) struct MappedFile {
    path: PathBuf,
    map: Option<Mmap>,
}

impl MappedFile {
    /// Maps `path` read-only.
    #[expect(
        unsafe_code,
        reason = "memmap2::Mmap::map is unsafe because the mapping aliases a file that other \
                  processes may change; mapping is how recordings are read without copies"
    )]
    pub(crate) fn open(path: &Path) -> DspResult<Self> {
        let file = File::open(path).map_err(|e| DspError::io(path, "cannot open", &e))?;
        let len = file
            .metadata()
            .map_err(|e| DspError::io(path, "cannot read the size", &e))?
            .len();
        if len == 0 {
            return Ok(Self {
                path: path.to_path_buf(),
                map: None,
            });
        }
        // SAFETY: the mapping is read-only and every access goes through the `&[u8]` it yields,
        // bounds-checked against the length seen at open time. What Rust cannot promise is that
        // no other process writes or truncates the file while it is mapped: a concurrent write
        // changes the values read (no memory unsafety for plain bytes), and truncation would
        // raise SIGBUS on access. Recordings are input files that are not modified while they
        // are read; this is the documented contract of every reader in dspk-io.
        let map = unsafe { Mmap::map(&file) }.map_err(|e| DspError::io(path, "cannot map", &e))?;
        Ok(Self {
            path: path.to_path_buf(),
            map: Some(map),
        })
    }

    /// The mapped bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        self.map.as_deref().unwrap_or(&[])
    }

    /// The file that is mapped.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

impl std::fmt::Debug for MappedFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MappedFile")
            .field("path", &self.path)
            .field("len", &self.bytes().len())
            .finish()
    }
}
