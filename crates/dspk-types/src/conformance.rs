//! Test support: the checks every [`RecordingSource`] must pass, shared by every implementation's
//! tests (here and in other crates, e.g. dspk-io's file readers).
//!
//! Each check reads seeded random windows (bounded in size, so hours-long sources are fine; the
//! first and the last samples are always among them) and **panics** with a message naming the
//! source, the seed and the offending read on the first violation. They are meant for tests,
//! not for production code.
//!
//! ```
//! use dspk_types::{SyntheticConfig, SyntheticRecording};
//! let rec = SyntheticRecording::new(SyntheticConfig::default().with_samples(5_000)).unwrap();
//! dspk_types::conformance::check_all(&rec, 7);
//! ```

use std::ops::Range;

use crate::{DspError, MemoryOrder, RecordingSource};

/// The most values (channels × samples) one checked full read holds.
const MAX_READ_VALUES: usize = 1 << 18;
/// The most samples one checked window holds.
const MAX_WINDOW: u64 = 600;
/// Random windows per check.
const WINDOWS: usize = 6;
/// Elements after `out` that must stay untouched.
const GUARD: usize = 16;
const F32_SENTINEL: u32 = 0x7FA5_A5A5;
const BYTE_SENTINEL: u8 = 0xA5;

/// SplitMix64: a tiny, seeded, good-enough generator for test randomness (no `rand` needed).
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next_u64() % n }
    }

    /// A number in `range` (its start when empty).
    pub fn in_range(&mut self, range: Range<u64>) -> u64 {
        range.start + self.below(range.end.saturating_sub(range.start))
    }

    /// A float in `[0, 1)`.
    pub fn unit_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Runs every check below on `src` with randomness from `seed`.
pub fn check_all(src: &dyn RecordingSource, seed: u64) {
    check_stored_matches_read(src, seed);
    check_native_matches_read(src, seed ^ 1);
    check_stored_native_matches_stored(src, seed ^ 5);
    check_channel_subsets(src, seed ^ 2);
    check_split_reads(src, seed ^ 3);
    check_bad_input(src, seed ^ 4);
}

/// Two values equal bit for bit (any NaN equals any NaN).
fn same(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

fn label(src: &dyn RecordingSource, seed: u64) -> String {
    let info = src.info();
    format!(
        "source '{}' ({} channels × {} samples, {}), seed {seed}",
        info.name,
        info.channel_count(),
        info.samples,
        info.format
    )
}

/// Seeded windows inside the recording: the first and the last (full and half size, so that
/// some touch one end only), then random ones; each holds at
/// most [`MAX_WINDOW`] samples and [`MAX_READ_VALUES`] values over every channel.
fn windows(src: &dyn RecordingSource, rng: &mut SplitMix64) -> Vec<Range<u64>> {
    let total = src.info().samples;
    let channels = src.info().channel_count().max(1) as u64;
    let cap = MAX_WINDOW
        .min((MAX_READ_VALUES as u64 / channels).max(1))
        .min(total);
    let mut out = vec![
        0..cap,
        total - cap..total,
        0..cap / 2,
        total - cap / 2..total,
    ];
    for _ in 0..WINDOWS {
        let len = rng.in_range(1..cap + 1).min(total);
        let start = rng.below(total - len + 1);
        out.push(start..start + len);
    }
    out
}

fn sample_len(r: &Range<u64>) -> usize {
    usize::try_from(r.end - r.start).expect("checked windows are small")
}

/// Reads `channels` over `samples` into a buffer with a guard region after it, checks the guard
/// and returns the values.
fn read_guarded(
    src: &dyn RecordingSource,
    ctx: &str,
    channels: &[usize],
    samples: Range<u64>,
) -> Vec<f32> {
    let len = channels.len() * sample_len(&samples);
    let mut buf = vec![f32::from_bits(F32_SENTINEL); len + GUARD];
    if let Err(e) = src.read(channels, samples.clone(), &mut buf[..len]) {
        panic!("{ctx}: read of channels {channels:?} over {samples:?} failed: {e}");
    }
    assert!(
        buf[len..].iter().all(|v| v.to_bits() == F32_SENTINEL),
        "{ctx}: read of channels {channels:?} over {samples:?} wrote past its output"
    );
    buf.truncate(len);
    buf
}

/// Like [`read_guarded`] for [`RecordingSource::read_stored`].
fn read_stored_guarded(
    src: &dyn RecordingSource,
    ctx: &str,
    channels: &[usize],
    samples: Range<u64>,
) -> Vec<u8> {
    let len = channels.len() * sample_len(&samples) * src.info().format.bytes();
    let mut buf = vec![BYTE_SENTINEL; len + GUARD];
    if let Err(e) = src.read_stored(channels, samples.clone(), &mut buf[..len]) {
        panic!("{ctx}: read_stored of channels {channels:?} over {samples:?} failed: {e}");
    }
    assert!(
        buf[len..].iter().all(|&v| v == BYTE_SENTINEL),
        "{ctx}: read_stored of channels {channels:?} over {samples:?} wrote past its output"
    );
    buf.truncate(len);
    buf
}

fn all_channels(src: &dyn RecordingSource) -> Vec<usize> {
    (0..src.info().channel_count()).collect()
}

/// Asserts two channel-major blocks are equal bit for bit, naming the first difference.
fn assert_block_eq(
    ctx: &str,
    what: &str,
    got: &[f32],
    want: &[f32],
    channels: &[usize],
    samples: &Range<u64>,
) {
    assert_eq!(got.len(), want.len(), "{ctx}: {what}: lengths differ");
    let n = sample_len(samples).max(1);
    if let Some(i) = (0..got.len()).find(|&i| !same(got[i], want[i])) {
        panic!(
            "{ctx}: {what}: channel {} (row {}) sample {} differs: got {}, expected {} (window {samples:?})",
            channels[i / n],
            i / n,
            samples.start + (i % n) as u64,
            got[i],
            want[i]
        );
    }
}

/// `read_stored` decoded with each channel's gain and offset ([`crate::SampleFormat::decode`])
/// equals `read`, bit for bit; both are deterministic.
pub fn check_stored_matches_read(src: &dyn RecordingSource, seed: u64) {
    let ctx = label(src, seed);
    let mut rng = SplitMix64::new(seed);
    let info = src.info();
    let all = all_channels(src);
    let width = info.format.bytes();
    for w in windows(src, &mut rng) {
        let n = sample_len(&w);
        let values = read_guarded(src, &ctx, &all, w.clone());
        let again = read_guarded(src, &ctx, &all, w.clone());
        assert_block_eq(&ctx, "a second identical read", &again, &values, &all, &w);
        let bytes = read_stored_guarded(src, &ctx, &all, w.clone());
        let mut decoded = vec![0f32; values.len()];
        for (c, ch) in info.channels.iter().enumerate() {
            let src_bytes = &bytes[c * n * width..(c + 1) * n * width];
            if let Err(e) = info.format.decode(
                src_bytes,
                &mut decoded[c * n..(c + 1) * n],
                ch.gain,
                ch.offset,
            ) {
                panic!("{ctx}: decoding channel {c} over {w:?} failed: {e}");
            }
        }
        assert_block_eq(
            &ctx,
            "read_stored decoded vs read",
            &decoded,
            &values,
            &all,
            &w,
        );
    }
}

/// `read_native`, reordered to channel-major by the order it returns, equals a read of every
/// channel.
pub fn check_native_matches_read(src: &dyn RecordingSource, seed: u64) {
    let ctx = label(src, seed);
    let mut rng = SplitMix64::new(seed);
    let all = all_channels(src);
    let c = all.len();
    for w in windows(src, &mut rng) {
        let n = sample_len(&w);
        let want = read_guarded(src, &ctx, &all, w.clone());
        let mut buf = vec![f32::from_bits(F32_SENTINEL); c * n + GUARD];
        let order = match src.read_native(w.clone(), &mut buf[..c * n]) {
            Ok(order) => order,
            Err(e) => panic!("{ctx}: read_native over {w:?} failed: {e}"),
        };
        assert!(
            buf[c * n..].iter().all(|v| v.to_bits() == F32_SENTINEL),
            "{ctx}: read_native over {w:?} wrote past its output"
        );
        let got: Vec<f32> = match order {
            MemoryOrder::ChannelMajor => buf[..c * n].to_vec(),
            MemoryOrder::TimeMajor => (0..c * n)
                .map(|i| buf[(i % n.max(1)) * c + i / n.max(1)])
                .collect(),
        };
        assert_block_eq(
            &ctx,
            &format!("read_native ({order}) vs read"),
            &got,
            &want,
            &all,
            &w,
        );
    }
}

/// `read_stored_native`, reordered to channel-major, equals `read_stored` of every channel bit for
/// bit, in the order `native_stored_order` announces, without writing past its output.
pub fn check_stored_native_matches_stored(src: &dyn RecordingSource, seed: u64) {
    let ctx = label(src, seed);
    let mut rng = SplitMix64::new(seed);
    let all = all_channels(src);
    let c = all.len();
    let b = src.info().format.bytes();
    for w in windows(src, &mut rng) {
        let n = sample_len(&w);
        let want = read_stored_guarded(src, &ctx, &all, w.clone());
        let len = c * n * b;
        let mut buf = vec![BYTE_SENTINEL; len + GUARD];
        let order = match src.read_stored_native(w.clone(), &mut buf[..len]) {
            Ok(order) => order,
            Err(e) => panic!("{ctx}: read_stored_native over {w:?} failed: {e}"),
        };
        assert_eq!(
            order,
            src.native_stored_order(),
            "{ctx}: read_stored_native wrote {order}, native_stored_order says otherwise"
        );
        assert!(
            buf[len..].iter().all(|&v| v == BYTE_SENTINEL),
            "{ctx}: read_stored_native over {w:?} wrote past its output"
        );
        for ch in 0..c {
            for t in 0..n {
                let at = match order {
                    MemoryOrder::ChannelMajor => ch * n + t,
                    MemoryOrder::TimeMajor => t * c + ch,
                };
                assert_eq!(
                    buf[at * b..(at + 1) * b],
                    want[(ch * n + t) * b..(ch * n + t + 1) * b],
                    "{ctx}: read_stored_native ({order}) differs from read_stored at channel \
                     {ch}, sample {} of {w:?}",
                    w.start + t as u64
                );
            }
        }
    }
}

/// Random channel lists (any order, repeats, 1 to 2× the channel count) read the matching rows
/// of a read of every channel, through `read` and `read_stored`.
pub fn check_channel_subsets(src: &dyn RecordingSource, seed: u64) {
    let ctx = label(src, seed);
    let mut rng = SplitMix64::new(seed);
    let all = all_channels(src);
    let c = all.len() as u64;
    if c == 0 {
        return;
    }
    let width = src.info().format.bytes();
    for w in windows(src, &mut rng) {
        let n = sample_len(&w);
        let full = read_guarded(src, &ctx, &all, w.clone());
        let full_bytes = read_stored_guarded(src, &ctx, &all, w.clone());
        for _ in 0..3 {
            let k = rng.in_range(1..(2 * c).min(64) + 1);
            let subset: Vec<usize> = (0..k).map(|_| rng.below(c) as usize).collect();
            let got = read_guarded(src, &ctx, &subset, w.clone());
            let want: Vec<f32> = subset
                .iter()
                .flat_map(|&ch| full[ch * n..(ch + 1) * n].to_vec())
                .collect();
            assert_block_eq(
                &ctx,
                "subset read vs rows of a full read",
                &got,
                &want,
                &subset,
                &w,
            );
            let got_bytes = read_stored_guarded(src, &ctx, &subset, w.clone());
            let want_bytes: Vec<u8> = subset
                .iter()
                .flat_map(|&ch| full_bytes[ch * n * width..(ch + 1) * n * width].to_vec())
                .collect();
            assert!(
                got_bytes == want_bytes,
                "{ctx}: read_stored of channels {subset:?} over {w:?} differs from the rows of a full read_stored"
            );
        }
    }
}

/// A read split at any point (including both ends) equals one read, through `read` and
/// `read_stored`.
pub fn check_split_reads(src: &dyn RecordingSource, seed: u64) {
    let ctx = label(src, seed);
    let mut rng = SplitMix64::new(seed);
    let all = all_channels(src);
    let width = src.info().format.bytes();
    for w in windows(src, &mut rng) {
        let n = sample_len(&w);
        let whole = read_guarded(src, &ctx, &all, w.clone());
        let whole_bytes = read_stored_guarded(src, &ctx, &all, w.clone());
        let splits = [
            w.start,
            w.end,
            rng.in_range(w.start..w.end + 1),
            rng.in_range(w.start..w.end + 1),
        ];
        for k in splits {
            let left = read_guarded(src, &ctx, &all, w.start..k);
            let right = read_guarded(src, &ctx, &all, k..w.end);
            let (nl, nr) = ((k - w.start) as usize, (w.end - k) as usize);
            let joined: Vec<f32> = (0..all.len())
                .flat_map(|c| {
                    left[c * nl..(c + 1) * nl]
                        .iter()
                        .chain(&right[c * nr..(c + 1) * nr])
                        .copied()
                        .collect::<Vec<_>>()
                })
                .collect();
            assert_block_eq(
                &ctx,
                &format!("read split at {k} vs one read"),
                &joined,
                &whole,
                &all,
                &w,
            );
            let left_b = read_stored_guarded(src, &ctx, &all, w.start..k);
            let right_b = read_stored_guarded(src, &ctx, &all, k..w.end);
            let joined_b: Vec<u8> = (0..all.len())
                .flat_map(|c| {
                    left_b[c * nl * width..(c + 1) * nl * width]
                        .iter()
                        .chain(&right_b[c * nr * width..(c + 1) * nr * width])
                        .copied()
                        .collect::<Vec<_>>()
                })
                .collect();
            assert!(
                joined_b == whole_bytes,
                "{ctx}: read_stored over {w:?} split at {k} differs from one read_stored"
            );
            debug_assert_eq!(nl + nr, n);
        }
    }
}

/// What a refused read must return.
#[derive(Debug)]
enum Expect {
    Channel { index: usize, count: usize },
    Range { start: u64, end: u64, total: u64 },
    Shape { expected: usize, actual: usize },
}

fn assert_refused(
    ctx: &str,
    what: &str,
    result: Result<impl std::fmt::Debug, DspError>,
    expect: &Expect,
) {
    let err = match result {
        Ok(v) => panic!("{ctx}: {what} was accepted ({v:?}); expected {expect:?}"),
        Err(e) => e,
    };
    let ok = match (expect, &err) {
        (Expect::Channel { index, count }, DspError::InvalidChannel { index: i, count: c }) => {
            i == index && c == count
        }
        (
            Expect::Range { start, end, total },
            DspError::SampleRange {
                start: s,
                end: e,
                total: t,
            },
        ) => s == start && e == end && t == total,
        (
            Expect::Shape { expected, actual },
            DspError::ShapeMismatch {
                expected: e,
                actual: a,
                ..
            },
        ) => e == expected && a == actual,
        _ => false,
    };
    assert!(
        ok,
        "{ctx}: {what} returned `{err}` ({err:?}); expected {expect:?}"
    );
}

/// Every kind of bad input through `read`, `read_stored` and `read_native` is refused with the
/// error that names it, and the output is left untouched: a channel past the end
/// ([`DspError::InvalidChannel`]), a range past the end or reversed ([`DspError::SampleRange`]),
/// an output of the wrong length ([`DspError::ShapeMismatch`]). Empty reads (no channels, no
/// samples) succeed.
pub fn check_bad_input(src: &dyn RecordingSource, seed: u64) {
    let ctx = label(src, seed);
    let mut rng = SplitMix64::new(seed);
    let info = src.info();
    let count = info.channel_count();
    let total = info.samples;
    let width = info.format.bytes();

    // A read expected to fail, with both buffers checked untouched afterwards.
    let refuse =
        |what: String, channels: &[usize], samples: Range<u64>, len: usize, expect: Expect| {
            let mut buf = vec![f32::from_bits(F32_SENTINEL); len];
            assert_refused(
                &ctx,
                &format!("read {what}"),
                src.read(channels, samples.clone(), &mut buf),
                &expect,
            );
            assert!(
                buf.iter().all(|v| v.to_bits() == F32_SENTINEL),
                "{ctx}: refused read {what} wrote to its output"
            );
            let expect_b = match expect {
                Expect::Shape { expected, actual } => Expect::Shape {
                    expected: expected * width,
                    actual: actual * width,
                },
                other => other,
            };
            let mut bytes = vec![BYTE_SENTINEL; len * width];
            assert_refused(
                &ctx,
                &format!("read_stored {what}"),
                src.read_stored(channels, samples, &mut bytes),
                &expect_b,
            );
            assert!(
                bytes.iter().all(|&v| v == BYTE_SENTINEL),
                "{ctx}: refused read_stored {what} wrote to its output"
            );
        };

    let n = total.min(8);
    let start = rng.below(total - n + 1);
    let w = start..start + n;
    let nw = n as usize;

    // Channels past the end, alone and among good ones.
    for bad in [count, count + 1 + rng.below(1000) as usize, usize::MAX] {
        let chans: Vec<usize> = if count > 0 {
            vec![0, bad, count - 1]
        } else {
            vec![bad]
        };
        refuse(
            format!("of channels {chans:?}"),
            &chans,
            w.clone(),
            chans.len() * nw,
            Expect::Channel { index: bad, count },
        );
    }

    let some: Vec<usize> = if count > 0 {
        vec![rng.below(count as u64) as usize]
    } else {
        Vec::new()
    };
    // Ranges past the end, and reversed.
    let past_end = [
        total..total + 1,
        total.saturating_sub(1)..total + 5,
        0..u64::MAX,
    ];
    for r in past_end {
        refuse(
            format!("over {r:?}"),
            &some,
            r.clone(),
            some.len(),
            Expect::Range {
                start: r.start,
                end: r.end,
                total,
            },
        );
        assert_native_refused(
            src,
            &ctx,
            r.clone(),
            Expect::Range {
                start: r.start,
                end: r.end,
                total,
            },
        );
    }
    if total >= 1 {
        let b = rng.in_range(1..total + 1);
        let r = b..b - 1;
        refuse(
            format!("over reversed {r:?}"),
            &some,
            r.clone(),
            some.len(),
            Expect::Range {
                start: r.start,
                end: r.end,
                total,
            },
        );
        assert_native_refused(
            src,
            &ctx,
            r.clone(),
            Expect::Range {
                start: r.start,
                end: r.end,
                total,
            },
        );
    }

    // Outputs of the wrong length.
    if count > 0 && nw > 0 {
        let chans = vec![count - 1, 0];
        let right = chans.len() * nw;
        for len in [right - 1, right + 1, 0, 3 * right] {
            refuse(
                format!("of channels {chans:?} over {w:?} into {len} values"),
                &chans,
                w.clone(),
                len,
                Expect::Shape {
                    expected: right,
                    actual: len,
                },
            );
        }
        let right = count * nw;
        for len in [right - 1, right + 1] {
            assert_native_refused_len(
                src,
                &ctx,
                w.clone(),
                len,
                Expect::Shape {
                    expected: right,
                    actual: len,
                },
            );
        }
    }

    // Empty reads succeed.
    if let Err(e) = src.read(&[], w.clone(), &mut []) {
        panic!("{ctx}: a read of no channels over {w:?} failed: {e}");
    }
    if let Err(e) = src.read_stored(&[], w.clone(), &mut []) {
        panic!("{ctx}: a read_stored of no channels over {w:?} failed: {e}");
    }
    let at = rng.below(total + 1);
    if let Err(e) = src.read(&some, at..at, &mut []) {
        panic!("{ctx}: an empty read at {at} failed: {e}");
    }
    if let Err(e) = src.read_native(at..at, &mut []) {
        panic!("{ctx}: an empty read_native at {at} failed: {e}");
    }
}

fn assert_native_refused(
    src: &dyn RecordingSource,
    ctx: &str,
    samples: Range<u64>,
    expect: Expect,
) {
    assert_native_refused_len(src, ctx, samples, src.info().channel_count(), expect);
}

fn assert_native_refused_len(
    src: &dyn RecordingSource,
    ctx: &str,
    samples: Range<u64>,
    len: usize,
    expect: Expect,
) {
    let mut buf = vec![f32::from_bits(F32_SENTINEL); len];
    assert_refused(
        ctx,
        &format!("read_native over {samples:?} into {len} values"),
        src.read_native(samples.clone(), &mut buf),
        &expect,
    );
    assert!(
        buf.iter().all(|v| v.to_bits() == F32_SENTINEL),
        "{ctx}: refused read_native over {samples:?} wrote to its output"
    );
}

#[cfg(test)]
#[path = "tests/conformance.rs"]
mod tests;
