//! A `.cbin`'s description from its `.ch` and the SpikeGLX `.meta` beside it (when there is
//! one), checked against each other, without reading chunks.

use std::path::{Path, PathBuf};

use dspk_types::{DspResult, MemoryOrder, RecordingInfo, SampleFormat};

use super::header::CbinHeader;
use crate::SpikeGlxMeta;
use crate::raw::file_error;

/// `(cbin, ch, meta)` for a path naming the `.cbin` or the `.ch`.
pub(crate) fn cbin_paths(path: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let cbin = if path.extension().is_some_and(|e| e == "ch") {
        path.with_extension("cbin")
    } else {
        path.to_path_buf()
    };
    (
        cbin.clone(),
        cbin.with_extension("ch"),
        cbin.with_extension("meta"),
    )
}

/// Whether `path` names an mtscomp file (`.cbin` or `.ch`).
pub(crate) fn is_cbin(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "cbin" || e == "ch")
}

/// Everything read from the `.ch` and the `.meta`, without mapping the `.cbin`.
#[derive(Debug, Clone)]
pub(crate) struct CbinLayout {
    pub(crate) cbin: PathBuf,
    pub(crate) header: CbinHeader,
    pub(crate) meta_path: Option<PathBuf>,
    pub(crate) info: RecordingInfo,
    pub(crate) warnings: Vec<String>,
}

impl CbinLayout {
    /// Reads the `.ch` (and `.meta`) of `path` and checks the `.cbin`'s size.
    pub(crate) fn read(path: &Path) -> DspResult<Self> {
        let (cbin, ch, meta_path) = cbin_paths(path);
        let header = CbinHeader::read(&ch)?;
        let len = std::fs::metadata(&cbin)
            .map_err(|e| {
                if e.kind() == std::io::ErrorKind::NotFound {
                    file_error(&cbin, "missing .cbin: the .ch has no data file beside it")
                } else {
                    dspk_types::DspError::io(&cbin, "cannot open", &e)
                }
            })?
            .len();
        let meta = if meta_path.is_file() {
            Some(SpikeGlxMeta::read(&meta_path)?)
        } else {
            None
        };
        Self::from_parts(cbin, header, meta.map(|m| (meta_path, m)), len)
    }

    /// The description of a `.cbin` of `len` bytes with `header` and an optional `.meta`.
    pub(crate) fn from_parts(
        cbin: PathBuf,
        header: CbinHeader,
        meta: Option<(PathBuf, SpikeGlxMeta)>,
        len: u64,
    ) -> DspResult<Self> {
        let need = header.compressed_bytes();
        if len != need {
            return Err(file_error(
                &cbin,
                format!(
                    "holds {len} bytes but the chunk_offsets of {} end at byte {need}: {}",
                    header.path().display(),
                    if len < need {
                        "the file is truncated"
                    } else {
                        "the offsets are wrong or the file has trailing bytes"
                    }
                ),
            ));
        }
        let samples = header.samples();
        let n_c = header.n_channels;
        let bin_bytes = samples * n_c as u64 * 2;
        let mut warnings = Vec::new();
        let name = cbin.file_name().map_or_else(
            || cbin.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        let (info, meta_path) = match meta {
            Some((meta_path, meta)) => {
                let chans = meta.get("nSavedChans").and_then(|v| v.parse::<u64>().ok());
                if chans != Some(n_c as u64) {
                    return Err(file_error(
                        header.path(),
                        format!(
                            "n_channels is {n_c} but {} has nSavedChans={}: the .ch and the .meta describe different recordings",
                            meta_path.display(),
                            meta.get("nSavedChans").unwrap_or("(none)")
                        ),
                    ));
                }
                if let Some(size) = meta.get("fileSizeBytes")
                    && size.parse::<u64>().ok() != Some(bin_bytes)
                {
                    return Err(file_error(
                        header.path(),
                        format!(
                            "{samples} samples of {n_c} int16 channels are {bin_bytes} bytes but {} has fileSizeBytes={size}: the .ch and the .meta describe different recordings",
                            meta_path.display()
                        ),
                    ));
                }
                let bin = cbin.with_extension("bin");
                let mut info = meta.recording_info(&bin, &meta_path, bin_bytes)?;
                let meta_hz = info.sample_rate.rate_hz();
                if ((header.sample_rate_hz - meta_hz) / meta_hz).abs() > 1e-6 {
                    warnings.push(format!(
                        "{}: sample_rate {} differs from the .meta's {meta_hz}; the .meta's is used",
                        header.path().display(),
                        header.sample_rate_hz
                    ));
                }
                info.name = name;
                (info, Some(meta_path))
            }
            None => {
                let info = RecordingInfo::new(
                    name,
                    n_c,
                    samples,
                    header.sample_rate()?,
                    SampleFormat::I16,
                    MemoryOrder::TimeMajor,
                );
                (info, None)
            }
        };
        let mut info = info;
        info.metadata.insert("format".into(), "cbin".into());
        info.metadata
            .insert("cbin_chunks".into(), header.chunk_count().to_string());
        Ok(Self {
            cbin,
            header,
            meta_path,
            info,
            warnings,
        })
    }
}
