//! A recording read at a sample rate its user chose rather than the one its file states (a
//! measured rate, a calibration): the samples are the same, every time is computed from the
//! chosen rate exactly.

use std::ops::Range;
use std::sync::Arc;

use crate::{DspResult, MemoryOrder, RecordingInfo, RecordingSource, SampleRate};

/// The metadata key under which a [`RatedRecording`] keeps the rate its source states.
pub const STATED_RATE_KEY: &str = "stated_sample_rate";

/// `parent` with `info().sample_rate` set to a rate of the caller's; the rate `parent` states
/// is kept in the metadata ([`STATED_RATE_KEY`]). Reads are `parent`'s, unchanged.
///
/// ```
/// use std::sync::Arc;
/// use dspk_types::{RatedRecording, RecordingSource, SampleRate, SyntheticRecording};
///
/// let probe = Arc::new(SyntheticRecording::neuropixels(30_000));
/// let rated = RatedRecording::new(probe, "29997.17".parse().unwrap());
/// assert_eq!(rated.info().sample_rate.as_ratio(), (2_999_717, 100));
/// assert_eq!(rated.stated_rate().as_ratio(), (30_000, 1));
/// // 30 000 samples at 29 997.17 Hz last 3 000 000/2 999 717 s.
/// assert_eq!(rated.info().duration().unwrap().as_ratio(), (3_000_000, 2_999_717));
/// ```
#[derive(Clone)]
pub struct RatedRecording {
    parent: Arc<dyn RecordingSource>,
    stated: SampleRate,
    info: RecordingInfo,
}

impl std::fmt::Debug for RatedRecording {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RatedRecording")
            .field("parent", &self.parent.info().name)
            .field("stated", &self.stated)
            .field("rate", &self.info.sample_rate)
            .finish()
    }
}

impl RatedRecording {
    /// `parent` read at `rate`.
    pub fn new(parent: Arc<dyn RecordingSource>, rate: SampleRate) -> Self {
        let mut info = parent.info().clone();
        let stated = info.sample_rate;
        info.metadata
            .insert(STATED_RATE_KEY.to_string(), exact_text(stated));
        // The nominal rate stays the source's: its own `nominal_rate`, else its rate.
        let nominal = info.nominal();
        info.sample_rate = rate;
        info.nominal_rate = (nominal != rate).then_some(nominal);
        Self {
            parent,
            stated,
            info,
        }
    }

    /// The rate the source states.
    pub fn stated_rate(&self) -> SampleRate {
        self.stated
    }

    /// How far the chosen rate is from the stated one, in parts per million of the stated
    /// rate (positive: the chosen clock runs faster).
    pub fn difference_ppm(&self) -> f64 {
        rate_difference_ppm(self.info.sample_rate, self.stated)
    }
}

/// A rate as exact text without its unit (`30000`, `30000.12`, `750003/25`).
fn exact_text(rate: SampleRate) -> String {
    let text = rate.to_string();
    text.strip_suffix(" Hz").unwrap_or(&text).to_string()
}

/// `(rate − reference) / reference × 10⁶`, from the exact ratios.
pub fn rate_difference_ppm(rate: SampleRate, reference: SampleRate) -> f64 {
    let (a, b) = rate.as_ratio();
    let (c, d) = reference.as_ratio();
    // a/b − c/d over c/d = (a·d − c·b) / (c·b), in i128 exactly, then one division.
    let num = i128::from(a) * i128::from(d) - i128::from(c) * i128::from(b);
    let den = i128::from(c) * i128::from(b);
    num as f64 / den as f64 * 1e6
}

impl RecordingSource for RatedRecording {
    fn info(&self) -> &RecordingInfo {
        &self.info
    }

    fn read(&self, channels: &[usize], samples: Range<u64>, out: &mut [f32]) -> DspResult<()> {
        self.parent.read(channels, samples, out)
    }

    fn read_stored(
        &self,
        channels: &[usize],
        samples: Range<u64>,
        out: &mut [u8],
    ) -> DspResult<()> {
        self.parent.read_stored(channels, samples, out)
    }

    fn read_native(&self, samples: Range<u64>, out: &mut [f32]) -> DspResult<MemoryOrder> {
        self.parent.read_native(samples, out)
    }

    fn read_stored_native(&self, samples: Range<u64>, out: &mut [u8]) -> DspResult<MemoryOrder> {
        self.parent.read_stored_native(samples, out)
    }

    fn native_stored_order(&self) -> MemoryOrder {
        self.parent.native_stored_order()
    }

    fn chunk_samples(&self) -> Option<u64> {
        self.parent.chunk_samples()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{SyntheticConfig, SyntheticRecording};

    #[test]
    fn reads_are_the_parents_and_times_follow_the_chosen_rate() {
        let parent: Arc<dyn RecordingSource> = Arc::new(
            SyntheticRecording::new(SyntheticConfig::default().with_samples(4_001).with_seed(9))
                .unwrap(),
        );
        let rate: SampleRate = "29997.17".parse().unwrap();
        let rated = RatedRecording::new(parent.clone(), rate);
        let channels = [3, 0, 3];
        let (mut a, mut b) = (vec![0f32; 3 * 1_000], vec![0f32; 3 * 1_000]);
        parent.read(&channels, 1_000..2_000, &mut a).unwrap();
        rated.read(&channels, 1_000..2_000, &mut b).unwrap();
        assert!(a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()));
        let bytes = 4_001 * parent.info().frame_bytes();
        let (mut sa, mut sb) = (vec![0u8; bytes], vec![0u8; bytes]);
        let oa = parent.read_stored_native(0..4_001, &mut sa).unwrap();
        let ob = rated.read_stored_native(0..4_001, &mut sb).unwrap();
        assert_eq!((oa, &sa), (ob, &sb));
        assert_eq!(rated.native_stored_order(), parent.native_stored_order());
        // Exact times: 4001 samples at 2999717/100 Hz.
        assert_eq!(
            rated.info().duration().unwrap().as_ratio(),
            (400_100, 2_999_717)
        );
        assert_eq!(rated.info().metadata[STATED_RATE_KEY], "30000");
        assert_eq!(rated.info().nominal(), parent.info().sample_rate);
        assert_eq!(rated.info().samples, parent.info().samples);
        // 94.3 ppm slow: 339.6 ms per hour.
        let ppm = rated.difference_ppm();
        assert!((ppm - (-94.333_333)).abs() < 1e-4, "{ppm}");
    }

    #[test]
    fn ppm_is_exact_for_large_ratios() {
        let a: SampleRate = "750003/25".parse().unwrap();
        let b: SampleRate = "30000".parse().unwrap();
        // 30000.12 against 30000: 4 ppm.
        assert!((rate_difference_ppm(a, b) - 4.0).abs() < 1e-9);
        assert_eq!(rate_difference_ppm(b, b), 0.0);
    }
}
