//! Test helpers: scratch directories, seeded random data, and a source of any stored format.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use dspk_types::conformance::SplitMix64;
use dspk_types::{
    ChannelInfo, DspResult, MemoryOrder, RecordingInfo, RecordingSource, SampleFormat, SampleRate,
    SignalUnit, check_read, check_read_stored,
};

/// A fresh directory under the system temp dir, removed on drop.
pub struct Scratch {
    pub dir: PathBuf,
}

impl Scratch {
    pub fn new(tag: &str) -> Self {
        static N: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "dspk-io-test-{tag}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create scratch dir");
        Self { dir }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// The names of the files in the directory, sorted.
    pub fn files(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(&self.dir)
            .expect("list scratch dir")
            .map(|e| {
                e.expect("dir entry")
                    .file_name()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        v.sort();
        v
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Little-endian bytes of `values` integers/floats, given as f64, in `format`.
pub fn encode(format: SampleFormat, v: f64) -> Vec<u8> {
    match format {
        SampleFormat::I8 => (v as i8).to_le_bytes().to_vec(),
        SampleFormat::I16 => (v as i16).to_le_bytes().to_vec(),
        SampleFormat::U16 => (v as u16).to_le_bytes().to_vec(),
        SampleFormat::I32 => (v as i32).to_le_bytes().to_vec(),
        SampleFormat::F32 => (v as f32).to_le_bytes().to_vec(),
        SampleFormat::F64 => v.to_le_bytes().to_vec(),
    }
}

/// A random stored value spanning much of `format`'s range.
pub fn random_value(format: SampleFormat, rng: &mut SplitMix64) -> f64 {
    let u = rng.unit_f64();
    match format {
        SampleFormat::I8 => (u * 255.0 - 128.0).round(),
        SampleFormat::I16 => (u * 65535.0 - 32768.0).round(),
        SampleFormat::U16 => (u * 65535.0).round(),
        SampleFormat::I32 => (u * 4.0e9 - 2.0e9).round(),
        SampleFormat::F32 => (u - 0.5) * 2.0e4,
        SampleFormat::F64 => (u - 0.5) * 1.0e6 + 1.0e-3 * u,
    }
}

/// Random stored bytes: `channels × samples` values of `format`, channel-major.
pub fn random_stored(format: SampleFormat, channels: usize, samples: usize, seed: u64) -> Vec<u8> {
    let mut rng = SplitMix64::new(seed);
    (0..channels * samples)
        .flat_map(|_| encode(format, random_value(format, &mut rng)))
        .collect()
}

/// Channel-major → time-major for elements of `width` bytes.
pub fn to_time_major(bytes: &[u8], channels: usize, samples: usize, width: usize) -> Vec<u8> {
    let mut out = vec![0u8; bytes.len()];
    for c in 0..channels {
        for s in 0..samples {
            let from = (c * samples + s) * width;
            let to = (s * channels + c) * width;
            out[to..to + width].copy_from_slice(&bytes[from..from + width]);
        }
    }
    out
}

/// An in-memory source of any stored format: channel-major stored bytes with per-channel gains
/// and offsets, decoded with `SampleFormat::decode` (the reference the files must match).
pub struct StoredSource {
    pub info: RecordingInfo,
    pub bytes: Vec<u8>,
}

impl StoredSource {
    pub fn new(format: SampleFormat, channels: usize, samples: usize, seed: u64) -> Self {
        let rate = SampleRate::new(29999.4325).expect("rate");
        let mut info = RecordingInfo::new(
            "stored",
            channels,
            samples as u64,
            rate,
            format,
            MemoryOrder::ChannelMajor,
        );
        let mut rng = SplitMix64::new(seed ^ 0xabc);
        for (i, c) in info.channels.iter_mut().enumerate() {
            *c = ChannelInfo {
                name: format!("S{i}"),
                gain: 0.25 + rng.unit_f64() as f32 * 3.0,
                offset: (rng.unit_f64() as f32 - 0.5) * 100.0,
                unit: SignalUnit::Microvolt,
                kind: dspk_types::ChannelKind::Signal,
            };
        }
        info.start_time = "12.5".parse().expect("time");
        info.metadata.insert("origin".into(), "test".into());
        Self {
            bytes: random_stored(format, channels, samples, seed),
            info,
        }
    }

    fn run(&self, c: usize, samples: &Range<u64>) -> &[u8] {
        let w = self.info.format.bytes();
        let base = c * self.info.samples as usize;
        &self.bytes[(base + samples.start as usize) * w..(base + samples.end as usize) * w]
    }
}

impl RecordingSource for StoredSource {
    fn info(&self) -> &RecordingInfo {
        &self.info
    }

    fn read(&self, channels: &[usize], samples: Range<u64>, out: &mut [f32]) -> DspResult<()> {
        let n = check_read(&self.info, channels, &samples, out.len())?;
        for (i, &c) in channels.iter().enumerate() {
            let ch = &self.info.channels[c];
            self.info.format.decode(
                self.run(c, &samples),
                &mut out[i * n..(i + 1) * n],
                ch.gain,
                ch.offset,
            )?;
        }
        Ok(())
    }

    fn read_stored(
        &self,
        channels: &[usize],
        samples: Range<u64>,
        out: &mut [u8],
    ) -> DspResult<()> {
        let n = check_read_stored(&self.info, channels, &samples, out.len())?;
        let w = self.info.format.bytes();
        for (i, &c) in channels.iter().enumerate() {
            out[i * n * w..(i + 1) * n * w].copy_from_slice(self.run(c, &samples));
        }
        Ok(())
    }
}

/// Every stored byte of `src`, channel-major.
pub fn all_stored(src: &dyn RecordingSource) -> Vec<u8> {
    let info = src.info();
    let all: Vec<usize> = (0..info.channel_count()).collect();
    let mut out = vec![0u8; info.channel_count() * info.samples as usize * info.format.bytes()];
    src.read_stored(&all, 0..info.samples, &mut out)
        .expect("read_stored");
    out
}

/// Every scaled value of `src`, channel-major.
pub fn all_values(src: &dyn RecordingSource) -> Vec<f32> {
    let info = src.info();
    let all: Vec<usize> = (0..info.channel_count()).collect();
    let mut out = vec![0f32; info.channel_count() * info.samples as usize];
    src.read(&all, 0..info.samples, &mut out).expect("read");
    out
}

/// Asserts bitwise equality of two value blocks, naming the first difference.
pub fn assert_same_values(got: &[f32], want: &[f32], ctx: &str) {
    assert_eq!(got.len(), want.len(), "{ctx}: lengths");
    if let Some(i) = (0..got.len()).find(|&i| got[i].to_bits() != want[i].to_bits()) {
        panic!(
            "{ctx}: value {i} differs: got {}, expected {}",
            got[i], want[i]
        );
    }
}

/// Writes `text` to `path`.
pub fn write_text(path: &Path, text: &str) {
    std::fs::write(path, text).expect("write text file");
}
