//! The shared conformance checks applied to every recording in this crate, and checks that the
//! checks catch broken sources.

use std::ops::Range;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use super::*;
use crate::{
    ChannelMap, ChannelPair, DspResult, MemoryRecording, RecordingInfo, RemappedSource,
    SampleFormat, SampleRate, SlicedRecording, SyntheticConfig, SyntheticRecording,
    check_read_stored,
};

use crate::test_support::fresh_seed;

/// A memory recording of random values with random gains and offsets.
fn random_memory(channels: usize, samples: usize, seed: u64) -> MemoryRecording {
    let mut rng = SplitMix64::new(seed);
    let rate = SampleRate::new(30_000.0).unwrap();
    let mut info = RecordingInfo::new(
        "mem",
        channels,
        samples as u64,
        rate,
        SampleFormat::F32,
        MemoryOrder::ChannelMajor,
    );
    for ch in &mut info.channels {
        ch.gain = (0.1 + 2.0 * rng.unit_f64()) as f32;
        ch.offset = (rng.unit_f64() * 20.0 - 10.0) as f32;
    }
    info.start_time = crate::RationalTime::new(7, 3).unwrap();
    let data = (0..channels * samples)
        .map(|_| (rng.unit_f64() * 2000.0 - 1000.0) as f32)
        .collect();
    MemoryRecording::new(info, data).unwrap()
}

fn small_synthetic(channels: usize, samples: u64, seed: u64) -> SyntheticRecording {
    let dead = if channels > 2 { vec![1] } else { vec![] };
    let noisy = if channels > 3 {
        vec![channels - 1]
    } else {
        vec![]
    };
    let cfg = SyntheticConfig {
        offset_uv: -3.25,
        ..SyntheticConfig::default()
            .with_channels(channels, dead, noisy)
            .with_samples(samples)
            .with_seed(seed)
    };
    SyntheticRecording::new(cfg).unwrap()
}

#[test]
fn memory_recordings_conform() {
    let seed = fresh_seed("memory_recordings_conform");
    for (c, n) in [
        (1usize, 1usize),
        (5, 1000),
        (3, 37),
        (16, 2500),
        (2, 0),
        (0, 10),
    ] {
        check_all(&random_memory(c, n, seed ^ c as u64), seed);
    }
    let rate = SampleRate::new(1000.0).unwrap();
    let rec = MemoryRecording::from_channels(
        "plain",
        rate,
        vec![vec![1.5, -2.0, 3.0], vec![0.0, f32::NAN, 9.0]],
    )
    .unwrap();
    check_all(&rec, seed);
}

#[test]
fn synthetic_recordings_conform() {
    let seed = fresh_seed("synthetic_recordings_conform");
    check_all(&SyntheticRecording::neuropixels(100_000), seed);
    check_all(&SyntheticRecording::neuropixels(1_080_000_000), seed);
    for (c, n) in [(1usize, 5000u64), (7, 20_000), (13, 999), (5, 1)] {
        check_all(&small_synthetic(c, n, seed), seed);
    }
    let odd_rate = SyntheticConfig {
        sample_rate: SampleRate::new(24_414.062_5).unwrap(),
        spike_rate_hz: 0.0,
        ..SyntheticConfig::default()
            .with_channels(9, vec![8], vec![0])
            .with_samples(70_001)
    };
    check_all(&SyntheticRecording::new(odd_rate).unwrap(), seed);
}

#[test]
fn sliced_recordings_conform() {
    let seed = fresh_seed("sliced_recordings_conform");
    let mem: Arc<dyn RecordingSource> = Arc::new(random_memory(6, 3000, seed));
    let syn: Arc<dyn RecordingSource> = Arc::new(SyntheticRecording::neuropixels(1_080_000_000));
    type Case = (Arc<dyn RecordingSource>, Range<u64>, Option<Vec<usize>>);
    let cases: Vec<Case> = vec![
        (mem.clone(), 0..3000, None),
        (mem.clone(), 100..2900, Some(vec![5, 0, 0, 3])),
        (mem.clone(), 2999..3000, Some(vec![2])),
        (mem.clone(), 1500..1500, Some(vec![1, 2])),
        (syn.clone(), 0..30_000, None),
        (syn.clone(), 1_079_000_000..1_080_000_000, None),
        (syn.clone(), 5..100_005, Some(vec![383, 3, 77, 0, 200, 77])),
    ];
    for (parent, range, channels) in cases {
        let slice = SlicedRecording::new(parent, range, channels).unwrap();
        check_all(&slice, seed);
        // A slice of the slice.
        let n = slice.info().samples;
        let c = slice.info().channel_count();
        let inner =
            SlicedRecording::new(Arc::new(slice), n / 3..n - n / 4, Some(vec![c - 1, 0])).unwrap();
        check_all(&inner, seed);
        let inner_all = SlicedRecording::new(Arc::new(inner), 0..n - n / 4 - n / 3, None).unwrap();
        check_all(&inner_all, seed);
    }
}

#[test]
fn remapped_sources_conform() {
    let seed = fresh_seed("remapped_sources_conform");
    let mem: Arc<dyn RecordingSource> = Arc::new(random_memory(5, 1200, seed));
    let syn: Arc<dyn RecordingSource> = Arc::new(SyntheticRecording::neuropixels(3_000_000));
    let permuted = ChannelMap {
        base: 1,
        pairs: vec![
            ChannelPair::named(5, 1, "e"),
            ChannelPair::new(2, 3),
            ChannelPair::named(1, 2, "a"),
        ],
    };
    check_all(&RemappedSource::new(mem.clone(), &permuted).unwrap(), seed);
    check_all(
        &RemappedSource::new(mem.clone(), &ChannelMap::identity(5)).unwrap(),
        seed,
    );
    check_all(
        &RemappedSource::new(syn.clone(), &ChannelMap::identity(384)).unwrap(),
        seed,
    );
    let reversed = ChannelMap {
        base: 0,
        pairs: (0..384).map(|c| ChannelPair::new(383 - c, c)).collect(),
    };
    check_all(&RemappedSource::new(syn.clone(), &reversed).unwrap(), seed);
    // Slices of a remapped source and a remapped slice.
    let remapped: Arc<dyn RecordingSource> =
        Arc::new(RemappedSource::new(syn.clone(), &reversed).unwrap());
    check_all(
        &SlicedRecording::new(remapped, 10..2_000_010, Some(vec![0, 380, 5])).unwrap(),
        seed,
    );
    let slice: Arc<dyn RecordingSource> =
        Arc::new(SlicedRecording::new(mem, 7..1000, Some(vec![4, 1, 2])).unwrap());
    check_all(
        &RemappedSource::new(slice, &ChannelMap::identity(3)).unwrap(),
        seed,
    );
}

#[test]
fn a_slice_of_a_remap_of_synthetic_data_reads_what_indexing_the_full_data_gives() {
    let seed = fresh_seed("slice_of_remap_of_synthetic");
    let mut rng = SplitMix64::new(seed);
    let channels = 11usize;
    let total = 4000u64;
    let syn = Arc::new(small_synthetic(channels, total, seed));
    // The full data, read once: the oracle.
    let all: Vec<usize> = (0..channels).collect();
    let mut full = vec![0f32; channels * total as usize];
    syn.read(&all, 0..total, &mut full).unwrap();
    let at = |c: usize, t: u64| full[c * total as usize + t as usize];

    for _ in 0..20 {
        // A random map: a random subset of inputs in random order, 1-based or 0-based.
        let base = rng.below(2) as usize;
        let mut inputs: Vec<usize> = (0..channels).collect();
        for i in (1..inputs.len()).rev() {
            inputs.swap(i, rng.below(i as u64 + 1) as usize);
        }
        inputs.truncate(1 + rng.below(channels as u64) as usize);
        let mut outputs: Vec<usize> = (0..inputs.len()).collect();
        for i in (1..outputs.len()).rev() {
            outputs.swap(i, rng.below(i as u64 + 1) as usize);
        }
        let map = ChannelMap {
            base,
            pairs: inputs
                .iter()
                .zip(&outputs)
                .map(|(&i, &o)| ChannelPair::new(i + base, o + base))
                .collect(),
        };
        // Output k reads input inputs[j] where outputs[j] == k.
        let mut input_of = vec![0usize; inputs.len()];
        for (&i, &o) in inputs.iter().zip(&outputs) {
            input_of[o] = i;
        }
        let remapped = Arc::new(RemappedSource::new(syn.clone(), &map).unwrap());
        let start = rng.below(total);
        let end = rng.in_range(start..total + 1);
        let picks: Vec<usize> = (0..1 + rng.below(5))
            .map(|_| rng.below(inputs.len() as u64) as usize)
            .collect();
        let slice = SlicedRecording::new(remapped, start..end, Some(picks.clone())).unwrap();

        let n = end - start;
        let a = rng.below(n + 1);
        let b = rng.in_range(a..n + 1);
        let order: Vec<usize> = (0..1 + rng.below(4))
            .map(|_| rng.below(picks.len() as u64) as usize)
            .collect();
        let mut got = vec![0f32; order.len() * (b - a) as usize];
        slice.read(&order, a..b, &mut got).unwrap();
        for (row, &k) in order.iter().enumerate() {
            for s in a..b {
                let want = at(input_of[picks[k]], start + s);
                let g = got[row * (b - a) as usize + (s - a) as usize];
                assert_eq!(
                    g.to_bits(),
                    want.to_bits(),
                    "seed {seed}: map {map:?}, slice {start}..{end} of {picks:?}, row {row} (channel {k}) sample {s}"
                );
            }
        }
        assert_eq!(slice.info().start_time, syn.time_of_sample(start));
    }
}

/// The time of a sample at the synthetic rate, by hand: `index / 30000` seconds.
trait TimeOf {
    fn time_of_sample(&self, index: u64) -> crate::RationalTime;
}

impl TimeOf for SyntheticRecording {
    fn time_of_sample(&self, index: u64) -> crate::RationalTime {
        let (num, den) = self.info().sample_rate.as_ratio();
        crate::RationalTime::new(u128::from(index) * u128::from(den), u128::from(num)).unwrap()
    }
}

/// A source that breaks one rule, to show the checks catch it.
struct Broken {
    inner: MemoryRecording,
    flaw: Flaw,
}

#[derive(Clone, Copy, Debug)]
enum Flaw {
    /// `read_native` claims time-major but writes channel-major.
    NativeOrder,
    /// `read_stored` ignores the offset (returns scaled values).
    StoredScaled,
    /// `read` of a subset returns rows in sorted channel order.
    SortedSubset,
    /// A read starting past sample 0 is off by one sample.
    OffByOne,
    /// Writes into `out` before checking (then refuses).
    WritesBeforeCheck,
    /// Accepts channels past the end as the last channel.
    ClampsChannels,
}

impl RecordingSource for Broken {
    fn info(&self) -> &RecordingInfo {
        self.inner.info()
    }

    fn read(&self, channels: &[usize], samples: Range<u64>, out: &mut [f32]) -> DspResult<()> {
        match self.flaw {
            Flaw::SortedSubset => {
                let mut sorted = channels.to_vec();
                sorted.sort_unstable();
                self.inner.read(&sorted, samples, out)
            }
            Flaw::OffByOne if samples.start > 0 && samples.end < self.info().samples => self
                .inner
                .read(channels, samples.start + 1..samples.end + 1, out),
            Flaw::WritesBeforeCheck => {
                if let Some(o) = out.first_mut() {
                    *o = 1.0;
                }
                self.inner.read(channels, samples, out)
            }
            Flaw::ClampsChannels => {
                let last = self.info().channel_count() - 1;
                let clamped: Vec<usize> = channels.iter().map(|&c| c.min(last)).collect();
                self.inner.read(&clamped, samples, out)
            }
            _ => self.inner.read(channels, samples, out),
        }
    }

    fn read_stored(
        &self,
        channels: &[usize],
        samples: Range<u64>,
        out: &mut [u8],
    ) -> DspResult<()> {
        match self.flaw {
            Flaw::StoredScaled => {
                let n = check_read_stored(self.info(), channels, &samples, out.len())?;
                let mut v = vec![0f32; channels.len() * n];
                self.inner.read(channels, samples, &mut v)?;
                for (o, x) in out.chunks_exact_mut(4).zip(&v) {
                    o.copy_from_slice(&x.to_le_bytes());
                }
                Ok(())
            }
            _ => self.inner.read_stored(channels, samples, out),
        }
    }

    fn read_native(&self, samples: Range<u64>, out: &mut [f32]) -> DspResult<MemoryOrder> {
        let order = self.inner.read_native(samples, out)?;
        Ok(match self.flaw {
            Flaw::NativeOrder => MemoryOrder::TimeMajor,
            _ => order,
        })
    }
}

#[test]
fn the_checks_catch_broken_sources() {
    let seed = fresh_seed("the_checks_catch_broken_sources");
    type Check = fn(&dyn RecordingSource, u64);
    let cases: [(Flaw, Check); 6] = [
        (Flaw::NativeOrder, check_native_matches_read),
        (Flaw::StoredScaled, check_stored_matches_read),
        (Flaw::SortedSubset, check_channel_subsets),
        (Flaw::OffByOne, check_split_reads),
        (Flaw::WritesBeforeCheck, check_bad_input),
        (Flaw::ClampsChannels, check_bad_input),
    ];
    for (flaw, targeted) in cases {
        let broken = Broken {
            inner: random_memory(4, 500, seed),
            flaw,
        };
        for (which, check) in [
            ("targeted check", targeted),
            ("check_all", check_all as Check),
        ] {
            let caught = catch_unwind(AssertUnwindSafe(|| check(&broken, seed)));
            let msg = match caught {
                Ok(()) => panic!("seed {seed}: a source with flaw {flaw:?} passed the {which}"),
                Err(p) => p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default(),
            };
            assert!(
                msg.contains("source 'mem'"),
                "{flaw:?}: message does not name the source: {msg}"
            );
            println!("{flaw:?} caught by the {which}: {msg}");
        }
    }
    // The unbroken source passes every targeted check.
    let sound = random_memory(4, 500, seed);
    for (_, check) in cases {
        check(&sound, seed);
    }
}

#[test]
fn splitmix64_matches_the_reference_sequence() {
    // SplitMix64 seeded with 1234567: the first outputs of the reference C implementation.
    let mut rng = SplitMix64::new(1_234_567);
    let want = [
        6_457_827_717_110_365_317u64,
        3_203_168_211_198_807_973,
        9_817_491_932_198_370_423,
    ];
    for w in want {
        assert_eq!(rng.next_u64(), w);
    }
    let mut rng = SplitMix64::new(9);
    for _ in 0..1000 {
        assert!(rng.below(7) < 7);
        let x = rng.in_range(10..20);
        assert!((10..20).contains(&x));
        let u = rng.unit_f64();
        assert!((0.0..1.0).contains(&u));
    }
    assert_eq!(rng.below(0), 0);
    assert_eq!(rng.in_range(5..5), 5);
}
