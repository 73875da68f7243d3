//! A SpikeGLX file's description from its `.meta` and the `.bin`'s size, without mapping it.

use std::path::{Path, PathBuf};

use dspk_types::{
    Clock, DspError, DspResult, MemoryOrder, RationalTime, RecordingInfo, SampleFormat, SampleRate,
};

use super::channels::{
    SavedChannels, SpikeGlxChannelKind, SpikeGlxStream, imec_channels, imec_nominal_rate,
    nidq_channels,
};
use super::meta::{MetaReader, SpikeGlxMeta};
use crate::raw::{MAX_CHANNELS, file_error};

/// Everything read from the `.meta` and the `.bin`'s size, without mapping the data.
#[derive(Debug, Clone)]
pub(crate) struct SpikeGlxLayout {
    pub(crate) bin: PathBuf,
    pub(crate) meta_path: PathBuf,
    pub(crate) meta: SpikeGlxMeta,
    pub(crate) stream: SpikeGlxStream,
    pub(crate) info: RecordingInfo,
    pub(crate) kinds: Vec<SpikeGlxChannelKind>,
    pub(crate) saved: Vec<usize>,
    pub(crate) warnings: Vec<String>,
}

/// `(bin, meta)` for a path naming either file.
pub(crate) fn spikeglx_paths(path: &Path) -> (PathBuf, PathBuf) {
    if path.extension().is_some_and(|e| e == "meta") {
        (path.with_extension("bin"), path.to_path_buf())
    } else {
        (path.to_path_buf(), path.with_extension("meta"))
    }
}

impl SpikeGlxLayout {
    /// Reads the `.meta` of `path` and the `.bin`'s size from the file system.
    pub(crate) fn read(path: &Path) -> DspResult<Self> {
        let (bin, meta_path, meta) = Self::read_meta(path)?;
        let len = std::fs::metadata(&bin)
            .map_err(|e| DspError::io(&bin, "cannot open", &e))?
            .len();
        Self::from_parts(bin, meta_path, meta, len)
    }

    pub(super) fn read_meta(path: &Path) -> DspResult<(PathBuf, PathBuf, SpikeGlxMeta)> {
        let (bin, meta_path) = spikeglx_paths(path);
        let meta = SpikeGlxMeta::read(&meta_path)?;
        let m = std::fs::metadata(&bin).map_err(|e| DspError::io(&bin, "cannot open", &e))?;
        if !m.is_file() {
            return Err(file_error(&bin, "not a regular file"));
        }
        Ok((bin, meta_path, meta))
    }

    pub(super) fn from_parts(
        bin: PathBuf,
        meta_path: PathBuf,
        meta: SpikeGlxMeta,
        len: u64,
    ) -> DspResult<Self> {
        let p = MetaReader {
            meta: &meta,
            path: &meta_path,
        };
        let stream = match meta.get("typeThis") {
            Some("imec") => SpikeGlxStream::Imec,
            Some("nidq") => SpikeGlxStream::Nidq,
            Some(other) => {
                return Err(DspError::UnsupportedFormat(format!(
                    "{}: SpikeGLX stream type '{other}' (supported: imec, nidq)",
                    meta_path.display()
                )));
            }
            None if meta.get("imSampRate").is_some() => SpikeGlxStream::Imec,
            None if meta.get("niSampRate").is_some() => SpikeGlxStream::Nidq,
            None => {
                return Err(file_error(
                    &meta_path,
                    "no typeThis, imSampRate or niSampRate: not a SpikeGLX .meta",
                ));
            }
        };
        let rate_key = match stream {
            SpikeGlxStream::Imec => "imSampRate",
            SpikeGlxStream::Nidq => "niSampRate",
        };
        let rate_text = p.required(rate_key)?;
        let sample_rate: SampleRate = rate_text
            .parse()
            .map_err(|_| p.bad(rate_key, rate_text, "a sample rate in hertz"))?;
        let saved_count: usize = p.parse_required("nSavedChans")?;
        if saved_count == 0 || saved_count > MAX_CHANNELS {
            return Err(p.bad(
                "nSavedChans",
                &saved_count.to_string(),
                &format!("a channel count from 1 to {MAX_CHANNELS}"),
            ));
        }
        let chan_map = p.chan_map()?;

        let SavedChannels {
            kinds,
            saved,
            channels,
            readout,
        } = match stream {
            SpikeGlxStream::Imec => imec_channels(&p, saved_count, &chan_map)?,
            SpikeGlxStream::Nidq => nidq_channels(&p, saved_count, &chan_map)?,
        };

        if let Some(text) = meta.get("fileSizeBytes") {
            let stated: u64 = text
                .parse()
                .map_err(|_| p.bad("fileSizeBytes", text, "a byte count"))?;
            if stated != len {
                return Err(file_error(
                    &bin,
                    format!(
                        "fileSizeBytes in {} is {stated} but the file holds {len} bytes (truncated or not the file the .meta describes)",
                        meta_path.display()
                    ),
                ));
            }
        }
        let frame = saved_count as u64 * 2;
        let samples = len / frame;
        let rest = len % frame;
        let mut warnings = Vec::new();
        if rest != 0 {
            warnings.push(format!(
                "{}: {rest} trailing bytes are not a whole frame ({saved_count} int16 channels); the partial last frame is dropped",
                bin.display()
            ));
        }
        let probe = match stream {
            SpikeGlxStream::Imec => {
                super::probe::spikeglx_probe(&meta, &readout).unwrap_or_else(|e| {
                    warnings.push(format!("{}: no probe geometry: {e}", meta_path.display()));
                    None
                })
            }
            SpikeGlxStream::Nidq => None,
        };
        let first_sample: u64 = match meta.get("firstSample") {
            Some(t) => t
                .parse()
                .map_err(|_| p.bad("firstSample", t, "a sample index"))?,
            None => 0,
        };
        let start_time = RationalTime::from_samples(first_sample, sample_rate)?;
        let name = bin.file_name().map_or_else(
            || bin.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        let nominal = imec_nominal_rate(&kinds);
        let info = RecordingInfo {
            name,
            channels,
            samples,
            sample_rate,
            format: SampleFormat::I16,
            order: MemoryOrder::TimeMajor,
            start_time,
            clock: Clock::Stated,
            segments: None,
            nominal_rate: nominal.filter(|&n| n != sample_rate),
            measured_rate: nominal.map(|_| sample_rate),
            probe,
            metadata: meta.entries().clone(),
        };
        Ok(Self {
            bin,
            meta_path,
            meta,
            stream,
            info,
            kinds,
            saved,
            warnings,
        })
    }
}

// Beside the layout it returns, so that `meta.rs` needs nothing above it.
impl SpikeGlxMeta {
    /// The description this `.meta` gives of a `.bin` of `bin_len` bytes at `bin`, with the
    /// checks of [`SpikeGlxRecording::open`](crate::SpikeGlxRecording::open), without the
    /// file system: `meta_path` names the `.meta` in errors. For checking a `.meta` on its own
    /// (the fuzz checks use it).
    pub fn recording_info(
        &self,
        bin: &Path,
        meta_path: &Path,
        bin_len: u64,
    ) -> DspResult<RecordingInfo> {
        SpikeGlxLayout::from_parts(
            bin.to_path_buf(),
            meta_path.to_path_buf(),
            self.clone(),
            bin_len,
        )
        .map(|layout| layout.info)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by the `spikeglx_meta` fuzz target: a gain of 2.2e55 is finite and above 0, but
    /// the f32 µV per count it gives is 0.
    #[test]
    fn scales_that_are_not_finite_f32_above_0_are_refused() {
        let nidq = "typeThis=nidq\nniSampRate=25000\nniAiRangeMax=5\nniMaxInt=32768\n\
                    niMNGain=200\nniMAGain=2\nsnsMnMaXaDw=2,1,2,1\nnSavedChans=6\n";
        let info = |text: &str| {
            SpikeGlxMeta::parse(text, Path::new("t.nidq.meta"))
                .expect("key=value text")
                .recording_info(Path::new("t.nidq.bin"), Path::new("t.nidq.meta"), 1200)
        };
        assert_eq!(info(nidq).expect("valid meta").channels.len(), 6);
        for (from, to) in [
            ("niMAGain=2", "niMAGain=2.2e55"),
            ("niAiRangeMax=5", "niAiRangeMax=inf"),
            ("niAiRangeMax=5", "niAiRangeMax=1e300"),
            ("niMaxInt=32768", "niMaxInt=inf"),
        ] {
            let e = info(&nidq.replace(from, to)).expect_err(to);
            assert!(
                matches!(e, DspError::Io { .. })
                    && e.to_string().contains("not a finite scale above 0"),
                "{to}: {e}"
            );
        }
        let imec = "typeThis=imec\nimSampRate=30000\nnSavedChans=1\nacqApLfSy=1,0,0\n\
                    imAiRangeMax=inf\nimChan0apGain=80\nimDatPrb_type=21\n";
        let e = SpikeGlxMeta::parse(imec, Path::new("t.ap.meta"))
            .expect("key=value text")
            .recording_info(Path::new("t.ap.bin"), Path::new("t.ap.meta"), 200)
            .expect_err("infinite range");
        assert!(e.to_string().contains("AP0"), "{e}");
    }
}
