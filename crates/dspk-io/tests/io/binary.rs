//! `BinaryRecording`: reads against a reference decode, conformance, and bad files.

use dspk_io::{BinaryRecording, BinarySidecar, sidecar_path};
use dspk_types::conformance::{SplitMix64, check_all};
use dspk_types::{DspError, MemoryOrder, RecordingSource, SampleFormat, SampleRate, SignalUnit};
use proptest::prelude::*;

use crate::common::{Scratch, random_stored, to_time_major, write_text};

/// Writes a file of `format`/`order` by hand (stored values channel-major in `cm`), with a
/// sidecar giving per-channel gains and offsets and a header of `header` bytes.
fn hand_written(
    dir: &Scratch,
    name: &str,
    (format, order): (SampleFormat, MemoryOrder),
    (channels, samples, header): (usize, usize, usize),
    cm: &[u8],
) -> (std::path::PathBuf, Vec<(f32, f32)>) {
    let path = dir.path(name);
    let mut data = vec![0x5au8; header];
    match order {
        MemoryOrder::ChannelMajor => data.extend_from_slice(cm),
        MemoryOrder::TimeMajor => data.extend(to_time_major(cm, channels, samples, format.bytes())),
    }
    std::fs::write(&path, &data).expect("write data");
    let scaling: Vec<(f32, f32)> = (0..channels)
        .map(|c| (0.5 + c as f32 * 0.125, c as f32 * -2.5))
        .collect();
    let chans: Vec<String> = scaling
        .iter()
        .enumerate()
        .map(|(c, (g, o))| {
            format!(r#"{{"name": "E{c}", "gain": {g}, "offset": {o}, "unit": "uV"}}"#)
        })
        .collect();
    let sidecar = format!(
        r#"{{"sample_rate": "29999.4325", "channel_count": {channels}, "format": "{}", "order": "{}",
            "header_offset_bytes": {header}, "channels": [{}], "start_time": "1/3",
            "metadata": {{"k": "v"}}}}"#,
        format.name(),
        order.name(),
        chans.join(",")
    );
    write_text(&sidecar_path(&path), &sidecar);
    (path, scaling)
}

/// Reference: decode `channels` of channel-major stored bytes over `samples` with
/// `SampleFormat::decode` per channel.
fn reference(
    format: SampleFormat,
    cm: &[u8],
    total: usize,
    scaling: &[(f32, f32)],
    channels: &[usize],
    samples: std::ops::Range<usize>,
) -> Vec<f32> {
    let w = format.bytes();
    let n = samples.len();
    let mut out = vec![0f32; channels.len() * n];
    for (i, &c) in channels.iter().enumerate() {
        let at = (c * total + samples.start) * w;
        format
            .decode(
                &cm[at..at + n * w],
                &mut out[i * n..(i + 1) * n],
                scaling[c].0,
                scaling[c].1,
            )
            .expect("reference decode");
    }
    out
}

#[test]
fn every_format_and_order_reads_like_the_reference_decode() {
    let seed = 0x0b1_0001;
    let dir = Scratch::new("formats");
    for format in SampleFormat::ALL {
        for order in [MemoryOrder::TimeMajor, MemoryOrder::ChannelMajor] {
            let (c, n) = (19, 613);
            let cm = random_stored(format, c, n, seed ^ format.bytes() as u64);
            let name = format!("{}-{}.dat", format.name(), order.name());
            let (path, scaling) = hand_written(&dir, &name, (format, order), (c, n, 37), &cm);
            let rec = BinaryRecording::open(&path).expect("open");
            let info = rec.info();
            assert_eq!((info.channel_count(), info.samples), (c, n as u64));
            assert_eq!(
                info.sample_rate,
                SampleRate::from_ratio(299_994_325, 10_000).expect("rate")
            );
            assert_eq!(
                info.start_time,
                dspk_types::RationalTime::new(1, 3).expect("1/3")
            );
            assert_eq!(info.channels[3].name, "E3");
            assert_eq!(info.channels[3].unit, SignalUnit::Microvolt);
            assert_eq!(info.metadata.get("k").map(String::as_str), Some("v"));
            assert!(rec.warnings().is_empty());

            let mut rng = SplitMix64::new(seed);
            for _ in 0..8 {
                let a = rng.below(n as u64) as usize;
                let b = a + rng.below((n - a) as u64 + 1) as usize;
                let k = 1 + rng.below(2 * c as u64) as usize;
                let chans: Vec<usize> = (0..k).map(|_| rng.below(c as u64) as usize).collect();
                let mut out = vec![f32::NAN; chans.len() * (b - a)];
                rec.read(&chans, a as u64..b as u64, &mut out)
                    .expect("read");
                let want = reference(format, &cm, n, &scaling, &chans, a..b);
                for (i, (g, w)) in out.iter().zip(&want).enumerate() {
                    assert_eq!(
                        g.to_bits(),
                        w.to_bits(),
                        "seed {seed:#x} {name} channels {chans:?} {a}..{b} value {i}"
                    );
                }
                let mut stored = vec![0u8; chans.len() * (b - a) * format.bytes()];
                rec.read_stored(&chans, a as u64..b as u64, &mut stored)
                    .expect("read_stored");
                let w = format.bytes();
                for (i, &ch) in chans.iter().enumerate() {
                    let from = (ch * n + a) * w;
                    assert_eq!(
                        &stored[i * (b - a) * w..(i + 1) * (b - a) * w],
                        &cm[from..from + (b - a) * w],
                        "seed {seed:#x} {name} stored channel {ch}"
                    );
                }
            }
            check_all(&rec, seed);
        }
    }
}

#[test]
fn read_native_of_a_time_major_file_is_a_straight_decode() {
    let dir = Scratch::new("native");
    let (c, n) = (5, 40);
    let cm = random_stored(SampleFormat::I16, c, n, 77);
    let (path, scaling) = hand_written(
        &dir,
        "n.bin",
        (SampleFormat::I16, MemoryOrder::TimeMajor),
        (c, n, 0),
        &cm,
    );
    let rec = BinaryRecording::open(&path).expect("open");
    let mut out = vec![0f32; c * 10];
    let order = rec.read_native(30..40, &mut out).expect("read_native");
    assert_eq!(order, MemoryOrder::TimeMajor);
    for s in 0..10 {
        for ch in 0..c {
            let b = &cm[(ch * n + 30 + s) * 2..];
            let want = f32::from(i16::from_le_bytes([b[0], b[1]])) * scaling[ch].0 + scaling[ch].1;
            assert_eq!(
                out[s * c + ch].to_bits(),
                want.to_bits(),
                "sample {s} channel {ch}"
            );
        }
    }
    assert_eq!(rec.chunk_samples(), None);
}

#[test]
fn sidecar_defaults_and_number_rates() {
    let dir = Scratch::new("defaults");
    let path = dir.path("d.bin");
    let values: Vec<u8> = [1i16, -2, 3, -4, 5, -6]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    std::fs::write(&path, &values).expect("write");
    write_text(
        &sidecar_path(&path),
        r#"{"sample_rate": 30000.12, "channel_count": 2, "format": "<i2", "order": "interleaved"}"#,
    );
    let rec = BinaryRecording::open(&path).expect("open");
    let info = rec.info();
    assert_eq!(
        info.sample_rate,
        SampleRate::from_ratio(750_003, 25).expect("rate")
    );
    assert_eq!(info.channels[1].name, "ch1");
    assert_eq!((info.channels[1].gain, info.channels[1].offset), (1.0, 0.0));
    assert_eq!(info.channels[1].unit, SignalUnit::Dimensionless);
    assert_eq!(info.start_time, dspk_types::RationalTime::ZERO);
    let mut out = [0f32; 3];
    rec.read(&[1], 0..3, &mut out).expect("read");
    assert_eq!(out, [-2.0, -4.0, -6.0]);
    // The sidecar path also opens the recording.
    let again = BinaryRecording::open(sidecar_path(&path)).expect("open by sidecar");
    assert_eq!(again.info(), rec.info());
    assert_eq!(again.sidecar().format, SampleFormat::I16);
}

#[test]
fn reads_split_across_threads_equal_single_thread_reads() {
    let seed = 0x0b1_0002;
    let dir = Scratch::new("threads");
    for (format, order) in [
        (SampleFormat::I16, MemoryOrder::TimeMajor),
        (SampleFormat::F32, MemoryOrder::ChannelMajor),
        (SampleFormat::U16, MemoryOrder::TimeMajor),
    ] {
        // 77 channels × 30 000 samples: 2.3 M values, split into channel blocks of 32.
        let (c, n) = (77, 30_000);
        let cm = random_stored(format, c, n, seed);
        let name = format!("t-{}-{}.bin", format.name(), order.name());
        let (path, scaling) = hand_written(&dir, &name, (format, order), (c, n, 8), &cm);
        let mut single = BinaryRecording::open(&path).expect("open");
        single.set_read_threads(1);
        let mut multi = BinaryRecording::open(&path).expect("open");
        multi.set_read_threads(4);
        assert_eq!((single.read_threads(), multi.read_threads()), (1, 4));
        let all: Vec<usize> = (0..c).collect();
        let mut rng = SplitMix64::new(seed);
        let shuffled: Vec<usize> = (0..2 * c).map(|_| rng.below(c as u64) as usize).collect();
        for chans in [all.clone(), shuffled] {
            let k = chans.len();
            let (mut a, mut b) = (vec![0f32; k * n], vec![1f32; k * n]);
            single.read(&chans, 0..n as u64, &mut a).expect("read");
            multi.read(&chans, 0..n as u64, &mut b).expect("read");
            assert_eq!(a, b, "seed {seed:#x} {name}: read");
            assert_eq!(
                a,
                reference(format, &cm, n, &scaling, &chans, 0..n),
                "seed {seed:#x} {name}: reference"
            );
            let w = format.bytes();
            let (mut a, mut b) = (vec![0u8; k * n * w], vec![1u8; k * n * w]);
            single
                .read_stored(&chans, 0..n as u64, &mut a)
                .expect("read_stored");
            multi
                .read_stored(&chans, 0..n as u64, &mut b)
                .expect("read_stored");
            assert_eq!(a, b, "seed {seed:#x} {name}: read_stored");
        }
        let (mut a, mut b) = (vec![0f32; c * n], vec![1f32; c * n]);
        single.read_native(0..n as u64, &mut a).expect("native");
        multi.read_native(0..n as u64, &mut b).expect("native");
        assert_eq!(a, b, "seed {seed:#x} {name}: read_native");
    }
}

fn open_err(path: &std::path::Path) -> String {
    match BinaryRecording::open(path) {
        Ok(_) => panic!("{} opened but should not have", path.display()),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_sidecars_are_clear_errors_naming_the_file() {
    let dir = Scratch::new("bad-sidecar");
    let path = dir.path("x.bin");
    std::fs::write(&path, [0u8; 64]).expect("write");
    let side = sidecar_path(&path);
    let side_name = side.display().to_string();

    let e = open_err(&path);
    assert!(
        e.contains(&side_name) && e.contains("missing sidecar"),
        "{e}"
    );

    let cases = [
        (
            r#"{"sample_rate": 1000, "channel_count": 2, "format": "int12", "order": "time-major"}"#,
            "int12",
        ),
        (
            r#"{"sample_rate": 1000, "channel_count": 0, "format": "int16", "order": "time-major"}"#,
            "channel_count is 0",
        ),
        (
            r#"{"sample_rate": 1000, "channel_count": 2, "format": "int16", "order": "time-major", "gian": 3}"#,
            "gian",
        ),
        (
            r#"{"sample_rate": 1000, "channel_count": 2, "format": "int16", "order": "sideways"}"#,
            "sideways",
        ),
        (
            r#"{"sample_rate": 0, "channel_count": 2, "format": "int16", "order": "time-major"}"#,
            "sample rate",
        ),
        (
            r#"{"sample_rate": 1000, "channel_count": 2, "format": "int16"}"#,
            "order",
        ),
        (
            r#"{"sample_rate": 1000, "channel_count": 3, "format": "int16", "order": "time-major", "channels": [{}, {}]}"#,
            "2 channels are described",
        ),
        (
            r#"{"sample_rate": 1000, "channel_count": 2, "format": "int16", "order": "time-major", "channels": [{"nmae": "a"}, {}]}"#,
            "nmae",
        ),
        (
            r#"{"version": 7, "sample_rate": 1000, "channel_count": 2, "format": "int16", "order": "time-major"}"#,
            "version 7",
        ),
        ("not json", "invalid sidecar"),
        // Cut short inside a key, after a value, and inside a channel entry: where it ends,
        // and no `?` for the field not yet known.
        (
            r#"{"sample_rate": 1000, "chan"#,
            "invalid sidecar: the file ends at line 1 column 27 before its JSON is complete",
        ),
        (
            "{\"sample_rate\": 1000,\n \"channel_count\": 2",
            "invalid sidecar: the file ends at line 2 column 19",
        ),
        (
            r#"{"sample_rate": 1000, "channel_count": 2, "channels": [{"name": "a"#,
            "invalid sidecar: channels[0].name: the file ends at line 1 column 66",
        ),
        (
            r#"{"sample_rate": 1000, "channel_count": 1000000000000000, "format": "int16", "order": "time-major"}"#,
            "exceeds the supported maximum",
        ),
    ];
    for (text, needle) in cases {
        write_text(&side, text);
        let e = open_err(&path);
        assert!(
            e.contains(&side_name) && e.contains(needle) && !e.contains('?'),
            "sidecar {text}: error '{e}' should name the file and '{needle}'"
        );
    }
}

#[test]
fn partial_frames_header_and_missing_data() {
    let dir = Scratch::new("sizes");
    let path = dir.path("p.bin");
    let name = path.display().to_string();
    let sidecar = |order: &str, header: u64| {
        format!(
            r#"{{"sample_rate": 1000, "channel_count": 3, "format": "int16", "order": "{order}", "header_offset_bytes": {header}}}"#
        )
    };
    // 10 frames of 6 bytes plus 4 bytes: the partial frame is dropped with a warning.
    std::fs::write(&path, vec![1u8; 64]).expect("write");
    write_text(&sidecar_path(&path), &sidecar("time-major", 0));
    let rec = BinaryRecording::open(&path).expect("open");
    assert_eq!(rec.info().samples, 10);
    assert_eq!(rec.warnings().len(), 1);
    assert!(
        rec.warnings()[0].contains(&name) && rec.warnings()[0].contains("4 trailing bytes"),
        "{:?}",
        rec.warnings()
    );
    let mut out = vec![0f32; 3];
    let e = rec
        .read(&[0, 1, 2], 10..11, &mut out)
        .expect_err("past the last whole frame");
    assert!(matches!(e, DspError::SampleRange { total: 10, .. }), "{e}");

    // Channel-major data that is not whole channels cannot be cut: an error.
    write_text(&sidecar_path(&path), &sidecar("channel-major", 0));
    let e = open_err(&path);
    assert!(e.contains(&name) && e.contains("channel-major"), "{e}");

    // A header longer than the file.
    write_text(&sidecar_path(&path), &sidecar("time-major", 100));
    let e = open_err(&path);
    assert!(
        e.contains(&name) && e.contains("shorter than its header") && e.contains("100"),
        "{e}"
    );

    // A header of exactly the file: no samples.
    write_text(&sidecar_path(&path), &sidecar("time-major", 64));
    let rec = BinaryRecording::open(&path).expect("open empty");
    assert_eq!(rec.info().samples, 0);

    // An empty file is an empty recording.
    std::fs::write(&path, []).expect("truncate");
    write_text(&sidecar_path(&path), &sidecar("time-major", 0));
    let rec = BinaryRecording::open(&path).expect("open empty file");
    assert_eq!(rec.info().samples, 0);
    let mut none: [f32; 0] = [];
    rec.read(&[0], 0..0, &mut none).expect("empty read");

    // A sidecar without its data file.
    let lone = dir.path("lone.bin");
    write_text(&sidecar_path(&lone), &sidecar("time-major", 0));
    let e = open_err(&lone);
    assert!(e.contains(&lone.display().to_string()), "{e}");
}

#[test]
fn sidecar_round_trips_through_json() {
    let dir = Scratch::new("sidecar-json");
    let path = dir.path("s.bin");
    let cm = random_stored(SampleFormat::F64, 3, 8, 5);
    let (path, _) = hand_written(
        &dir,
        path.file_name().and_then(|n| n.to_str()).expect("name"),
        (SampleFormat::F64, MemoryOrder::ChannelMajor),
        (3, 8, 16),
        &cm,
    );
    let rec = BinaryRecording::open(&path).expect("open");
    let text = serde_json::to_string(rec.sidecar()).expect("serialize");
    let back = BinarySidecar::parse(&text, &sidecar_path(&path)).expect("parse");
    assert_eq!(&back, rec.sidecar());
    assert!(
        text.contains("\"float64\"") && text.contains("\"channel-major\""),
        "{text}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]

    /// Any shape, format, order, window and channel list reads what the reference decode gives.
    #[test]
    fn reads_match_the_reference(
        fmt_i in 0usize..6,
        time_major in any::<bool>(),
        c in 1usize..40,
        n in 1usize..300,
        seed in any::<u64>(),
        picks in proptest::collection::vec(any::<u16>(), 1..50),
        a_frac in 0.0f64..1.0,
        b_frac in 0.0f64..1.0,
    ) {
        let format = SampleFormat::ALL[fmt_i];
        let order = if time_major { MemoryOrder::TimeMajor } else { MemoryOrder::ChannelMajor };
        let dir = Scratch::new("prop");
        let cm = random_stored(format, c, n, seed);
        let (path, scaling) = hand_written(&dir, "p.bin", (format, order), (c, n, 3), &cm);
        let rec = BinaryRecording::open(&path).expect("open");
        let a = (a_frac * n as f64) as usize;
        let b = a + (b_frac * (n - a) as f64) as usize;
        let chans: Vec<usize> = picks.iter().map(|&p| p as usize % c).collect();
        let mut out = vec![f32::NAN; chans.len() * (b - a)];
        rec.read(&chans, a as u64..b as u64, &mut out).expect("read");
        let want = reference(format, &cm, n, &scaling, &chans, a..b);
        for (i, (g, w)) in out.iter().zip(&want).enumerate() {
            prop_assert_eq!(g.to_bits(), w.to_bits(), "seed {} value {}", seed, i);
        }
    }
}

#[test]
fn sidecar_segments_are_read_checked_and_never_read_across() {
    let dir = Scratch::new("segments");
    let data = dir.path("s.bin");
    let bytes = random_stored(SampleFormat::I16, 2, 100, 0x5E65);
    std::fs::write(&data, to_time_major(&bytes, 2, 100, 2)).expect("write");
    let sidecar = |segments: &str| {
        format!(
            r#"{{"sample_rate": 1000, "channel_count": 2, "format": "int16", "order": "time-major", "segments": {segments}}}"#
        )
    };
    write_text(
        &sidecar_path(&data),
        &sidecar(
            r#"[{"samples": 60, "first_sample": 10, "start_time": "1/100"}, {"samples": 40, "first_sample": 500, "start_time": "1/2"}]"#,
        ),
    );
    let rec = BinaryRecording::open(&data).expect("open");
    let segs = rec.info().segments();
    let got: Vec<_> = segs
        .list()
        .iter()
        .map(|s| (s.start, s.samples, s.first_sample))
        .collect();
    assert_eq!(got, vec![(0, 60, 10), (60, 40, 500)]);
    assert_eq!(segs.gaps()[0].samples, 430);
    // Every kind of read stops at the boundary.
    let mut f = vec![0f32; 2 * 20];
    let mut b = vec![0u8; 2 * 20 * 2];
    let crosses = |e: DspError| matches!(e, DspError::CrossesSegment { segment: 0, .. });
    assert!(crosses(rec.read(&[0, 1], 50..70, &mut f).unwrap_err()));
    assert!(crosses(
        rec.read_stored(&[0, 1], 50..70, &mut b).unwrap_err()
    ));
    assert!(crosses(rec.read_native(50..70, &mut f).unwrap_err()));
    assert!(crosses(rec.read_stored_native(50..70, &mut b).unwrap_err()));
    rec.read_native(60..80, &mut f).expect("inside segment 1");
    // Segments that do not add up to the file are refused, naming the sidecar.
    write_text(
        &sidecar_path(&data),
        &sidecar(r#"[{"samples": 60}, {"samples": 30}]"#),
    );
    let e = open_err(&data);
    assert!(
        e.contains("s.bin.json")
            && e.contains("2 segments hold 90 samples but the data file holds 100"),
        "{e}"
    );
}
