//! Writing: round trips of every format and order, conversions, subsets, progress, and no
//! partial output on failure.

use std::ops::Range;
use std::sync::Mutex;

use dspk_io::{BinaryRecording, BinaryWriter, WRITE_STAGE, WriteOptions, open, write_binary};
use dspk_types::conformance::check_all;
use dspk_types::{
    DspError, DspResult, MemoryOrder, NoProgress, ProgressEvent, RationalTime, RecordingInfo,
    RecordingSource, SampleFormat, SampleRate, SyntheticConfig, SyntheticRecording,
};

use crate::common::{Scratch, StoredSource, all_stored, all_values, assert_same_values};

const ORDERS: [MemoryOrder; 2] = [MemoryOrder::TimeMajor, MemoryOrder::ChannelMajor];

fn synthetic(samples: u64, seed: u64) -> SyntheticRecording {
    SyntheticRecording::new(
        SyntheticConfig::default()
            .with_channels(24, vec![3], vec![7])
            .with_samples(samples)
            .with_seed(seed),
    )
    .expect("synthetic")
}

fn options(order: MemoryOrder, window: u64) -> WriteOptions {
    WriteOptions {
        order: Some(order),
        window_samples: window,
        ..WriteOptions::default()
    }
}

#[test]
fn synthetic_round_trips_in_both_orders() {
    let seed = 0x3117_0001;
    let src = synthetic(5_003, seed);
    let dir = Scratch::new("synthetic");
    let want_bytes = all_stored(&src);
    let want_values = all_values(&src);
    for order in ORDERS {
        let path = dir.path(&format!("syn-{order}.bin"));
        let summary = write_binary(&src, &path, &options(order, 777), &NoProgress).expect("write");
        assert_eq!(
            (
                summary.samples,
                summary.channels,
                summary.format,
                summary.order
            ),
            (5_003, 24, SampleFormat::I16, order)
        );
        assert_eq!(summary.bytes, 5_003 * 24 * 2);
        assert_eq!(std::fs::metadata(&path).expect("stat").len(), summary.bytes);
        let rec = open(&path).expect("open");
        assert_eq!(
            rec.info().channels,
            src.info().channels,
            "names, gains, offsets, units"
        );
        assert_eq!(rec.info().sample_rate, src.info().sample_rate);
        assert_eq!(rec.info().start_time, src.info().start_time);
        assert_eq!(rec.info().order, order);
        assert_eq!(
            all_stored(&rec),
            want_bytes,
            "seed {seed:#x} {order}: stored bytes"
        );
        assert_same_values(
            &all_values(&rec),
            &want_values,
            &format!("seed {seed:#x} {order}"),
        );
        check_all(&rec, seed);
        assert_eq!(
            dir.files().len(),
            2 * (ORDERS.iter().position(|o| *o == order).expect("order") + 1)
        );
    }
}

#[test]
fn every_format_round_trips_in_both_orders() {
    let seed = 0x3117_0002;
    let dir = Scratch::new("formats");
    for format in SampleFormat::ALL {
        let src = StoredSource::new(format, 11, 2_049, seed ^ format.bytes() as u64);
        let want_bytes = all_stored(&src);
        let want_values = all_values(&src);
        for order in ORDERS {
            let path = dir.path(&format!("{}-{order}.bin", format.name()));
            write_binary(&src, &path, &options(order, 500), &NoProgress).expect("write");
            let rec = BinaryRecording::open(&path).expect("open");
            assert_eq!(rec.info().format, format);
            assert_eq!(rec.info().channels, src.info().channels);
            assert_eq!(rec.info().metadata, src.info().metadata);
            assert_eq!(rec.info().start_time, src.info().start_time);
            assert_eq!(rec.info().sample_rate, src.info().sample_rate);
            let ctx = format!("seed {seed:#x} {format} {order}");
            assert_eq!(all_stored(&rec), want_bytes, "{ctx}: stored bytes");
            assert_same_values(&all_values(&rec), &want_values, &ctx);
            // File to file, into the other order: still the same bytes.
            let other = if order == MemoryOrder::TimeMajor {
                MemoryOrder::ChannelMajor
            } else {
                MemoryOrder::TimeMajor
            };
            let path2 = dir.path(&format!("{}-{order}-again.bin", format.name()));
            write_binary(&rec, &path2, &options(other, 313), &NoProgress).expect("rewrite");
            let rec2 = BinaryRecording::open(&path2).expect("reopen");
            assert_eq!(all_stored(&rec2), want_bytes, "{ctx}: rewritten as {other}");
            check_all(&rec2, seed);
        }
    }
}

#[test]
fn conversions_keep_values() {
    let seed = 0x3117_0003;
    let src = synthetic(3_001, seed);
    let dir = Scratch::new("convert");
    let values = all_values(&src);
    for format in [SampleFormat::F32, SampleFormat::F64] {
        for order in ORDERS {
            let path = dir.path(&format!("{}-{order}.bin", format.name()));
            let opts = WriteOptions {
                format: Some(format),
                ..options(order, 1000)
            };
            write_binary(&src, &path, &opts, &NoProgress).expect("write scaled");
            let rec = BinaryRecording::open(&path).expect("open");
            assert!(
                rec.info()
                    .channels
                    .iter()
                    .all(|c| c.gain == 1.0 && c.offset == 0.0)
            );
            assert_eq!(rec.info().channels[0].unit, src.info().channels[0].unit);
            assert_same_values(
                &all_values(&rec),
                &values,
                &format!("seed {seed:#x} {format} {order}"),
            );
        }
    }
    // Stored int16 widened to int32 keeps the gains and the values.
    let path = dir.path("i32.bin");
    let opts = WriteOptions {
        format: Some(SampleFormat::I32),
        ..options(MemoryOrder::TimeMajor, 999)
    };
    write_binary(&src, &path, &opts, &NoProgress).expect("write int32");
    let rec = BinaryRecording::open(&path).expect("open");
    assert_eq!(rec.info().channels, src.info().channels);
    let widened: Vec<u8> = all_stored(&src)
        .chunks_exact(2)
        .flat_map(|b| i32::from(i16::from_le_bytes([b[0], b[1]])).to_le_bytes())
        .collect();
    assert_eq!(all_stored(&rec), widened);
    assert_same_values(&all_values(&rec), &values, "int32");

    // Narrowing that does not fit is an error naming the value, and leaves nothing behind.
    let before = dir.files();
    let path = dir.path("i8.bin");
    let opts = WriteOptions {
        format: Some(SampleFormat::I8),
        ..options(MemoryOrder::TimeMajor, 999)
    };
    let e =
        write_binary(&src, &path, &opts, &NoProgress).expect_err("int16 spikes do not fit in int8");
    assert!(e.to_string().contains("does not fit in int8"), "{e}");
    assert_eq!(dir.files(), before, "no partial output");

    // A float-only source cannot be written as integers.
    let floats = StoredSource::new(SampleFormat::F32, 2, 10, 1);
    let opts = WriteOptions {
        format: Some(SampleFormat::I16),
        ..WriteOptions::default()
    };
    let e =
        write_binary(&floats, dir.path("f.bin"), &opts, &NoProgress).expect_err("float to int16");
    assert!(matches!(e, DspError::UnsupportedFormat(_)), "{e}");
}

#[test]
fn channel_subsets_sample_ranges_and_progress() {
    let seed = 0x3117_0004;
    let src = synthetic(4_000, seed);
    let dir = Scratch::new("subset");
    let path = dir.path("sub.bin");
    let events = Mutex::new(Vec::new());
    let sink = |e: &ProgressEvent| events.lock().expect("lock").push(e.clone());
    let opts = WriteOptions {
        channels: Some(vec![5, 2, 2, 23]),
        samples: Some(100..2_950),
        ..options(MemoryOrder::ChannelMajor, 1_000)
    };
    let summary = write_binary(&src, &path, &opts, &sink).expect("write");
    assert_eq!((summary.channels, summary.samples), (4, 2_850));
    let rec = open(&path).expect("open");
    let rate = src.info().sample_rate;
    assert_eq!(
        rec.info().start_time,
        RationalTime::from_samples(100, rate).expect("time")
    );
    let names: Vec<&str> = rec
        .info()
        .channels
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    let want_names: Vec<&str> = [5, 2, 2, 23]
        .iter()
        .map(|&c| src.info().channels[c].name.as_str())
        .collect();
    assert_eq!(names, want_names);
    let mut want = vec![0f32; 4 * 2_850];
    src.read(&[5, 2, 2, 23], 100..2_950, &mut want)
        .expect("read source");
    assert_same_values(&all_values(&rec), &want, &format!("seed {seed:#x} subset"));

    let events = events.into_inner().expect("events");
    assert!(
        events
            .iter()
            .all(|e| e.stage == WRITE_STAGE && e.total == 2_850 && e.unit == "samples")
    );
    let done: Vec<u64> = events.iter().map(|e| e.done).collect();
    assert_eq!(done, vec![0, 1_000, 2_000, 2_850]);

    // Bad options are refused before anything is created.
    for (opts, what) in [
        (
            WriteOptions {
                channels: Some(vec![24]),
                ..WriteOptions::default()
            },
            "channel",
        ),
        (
            WriteOptions {
                channels: Some(vec![]),
                ..WriteOptions::default()
            },
            "no channels",
        ),
        (
            WriteOptions {
                samples: Some(0..4_001),
                ..WriteOptions::default()
            },
            "outside",
        ),
        (
            WriteOptions {
                window_samples: 0,
                ..WriteOptions::default()
            },
            "window",
        ),
    ] {
        let e = write_binary(&src, dir.path("bad.bin"), &opts, &NoProgress).expect_err(what);
        assert!(e.to_string().contains(what), "{what}: {e}");
    }
    assert_eq!(
        dir.files(),
        vec!["sub.bin".to_string(), "sub.bin.json".to_string()]
    );
}

/// A source whose reads fail from sample `fail_at` on.
struct Failing {
    inner: SyntheticRecording,
    fail_at: u64,
}

impl RecordingSource for Failing {
    fn info(&self) -> &RecordingInfo {
        self.inner.info()
    }

    fn read(&self, channels: &[usize], samples: Range<u64>, out: &mut [f32]) -> DspResult<()> {
        if samples.end > self.fail_at {
            return Err(DspError::Io {
                message: "disk on fire".into(),
                path: None,
            });
        }
        self.inner.read(channels, samples, out)
    }

    fn read_stored(
        &self,
        channels: &[usize],
        samples: Range<u64>,
        out: &mut [u8],
    ) -> DspResult<()> {
        if samples.end > self.fail_at {
            return Err(DspError::Io {
                message: "disk on fire".into(),
                path: None,
            });
        }
        self.inner.read_stored(channels, samples, out)
    }
}

#[test]
fn a_failed_write_leaves_no_file() {
    let dir = Scratch::new("fail");
    let src = Failing {
        inner: synthetic(10_000, 9),
        fail_at: 6_500,
    };
    for order in ORDERS {
        for format in [None, Some(SampleFormat::F32)] {
            let opts = WriteOptions {
                format,
                ..options(order, 1_000)
            };
            let e = write_binary(&src, dir.path("out.bin"), &opts, &NoProgress)
                .expect_err("source fails");
            assert!(e.to_string().contains("disk on fire"), "{e}");
            assert!(
                dir.files().is_empty(),
                "{order} {format:?}: left {:?}",
                dir.files()
            );
        }
    }
    // A directory that does not exist: an error naming the path.
    let missing = dir.path("no/such/dir/out.bin");
    let e = write_binary(&src.inner, &missing, &WriteOptions::default(), &NoProgress)
        .expect_err("no dir");
    assert!(
        e.to_string().contains(&missing.display().to_string()),
        "{e}"
    );
}

#[test]
fn binary_writer_windows_and_cleanup() {
    let dir = Scratch::new("writer");
    let rate = SampleRate::new(2_500.0).expect("rate");
    let mut info = RecordingInfo::new("w", 3, 7, rate, SampleFormat::I16, MemoryOrder::TimeMajor);
    info.channels[1].gain = 9.0;
    info.channels[1].unit = dspk_types::SignalUnit::Microvolt;
    info.start_time = RationalTime::new(5, 2).expect("time");
    let values: Vec<f32> = (0..21).map(|i| i as f32 * 1.5 - 7.0).collect(); // channel-major 3 × 7
    for order in ORDERS {
        let path = dir.path(&format!("w-{order}.bin"));
        let mut w = BinaryWriter::create(&path, &info, order).expect("create");
        assert_eq!(w.format(), SampleFormat::F32);
        for (a, b) in [(0usize, 3usize), (3, 3), (3, 7)] {
            let window: Vec<f32> = (0..3)
                .flat_map(|c| values[c * 7 + a..c * 7 + b].to_vec())
                .collect();
            w.write_window(&window).expect("window");
        }
        assert_eq!(w.samples_written(), 7);
        let e = w
            .write_window(&[1.0, 2.0, 3.0])
            .expect_err("past the declared length");
        assert!(matches!(e, DspError::BufferOverrun { .. }), "{e}");
        let e = w.write_window(&[1.0, 2.0]).expect_err("not whole frames");
        assert!(matches!(e, DspError::ShapeMismatch { .. }), "{e}");
        w.finish().expect("finish");
        let rec = BinaryRecording::open(&path).expect("open");
        assert_eq!(rec.info().order, order);
        assert_eq!(rec.info().start_time, info.start_time);
        assert_eq!(rec.info().channels[1].gain, 1.0, "scaled values: gain 1");
        assert_eq!(
            rec.info().channels[1].unit,
            dspk_types::SignalUnit::Microvolt
        );
        assert_same_values(&all_values(&rec), &values, &format!("{order}"));
    }
    let before = dir.files();
    // Dropped before finish: nothing left.
    {
        let mut w = BinaryWriter::create(dir.path("dropped.bin"), &info, MemoryOrder::ChannelMajor)
            .expect("create");
        w.write_window(&values[..6]).expect("window");
    }
    // Finished short: an error, nothing left.
    let mut w =
        BinaryWriter::create(dir.path("short.bin"), &info, MemoryOrder::TimeMajor).expect("create");
    w.write_window(&values[..6]).expect("window");
    let e = w.finish().expect_err("short");
    assert!(e.to_string().contains("only 2 were written"), "{e}");
    assert_eq!(dir.files(), before);

    // Stored windows in the file's own format.
    let path = dir.path("stored.bin");
    let mut w = BinaryWriter::create_stored(&path, &info, MemoryOrder::TimeMajor).expect("create");
    let stored: Vec<u8> = (0..21i16)
        .flat_map(|v| (v * 100 - 1000).to_le_bytes())
        .collect();
    w.write_stored_window(&stored).expect("stored window");
    let e = w
        .write_window(&[0.0; 3])
        .expect_err("scaled values into int16");
    assert!(matches!(e, DspError::UnsupportedFormat(_)), "{e}");
    w.finish().expect("finish");
    let rec = BinaryRecording::open(&path).expect("open");
    assert_eq!(all_stored(&rec), stored);
    assert_eq!(rec.info().channels[1].gain, 9.0);
}

#[test]
fn a_failed_finish_keeps_the_previous_output() {
    let dir = Scratch::new("writer-keep");
    let rate = SampleRate::new(1_000.0).expect("rate");
    let info = RecordingInfo::new("k", 2, 5, rate, SampleFormat::I16, MemoryOrder::TimeMajor);
    let values: Vec<f32> = (0..10).map(|i| i as f32 * 0.25 - 1.0).collect();
    // An output and sidecar from an earlier run.
    let path = dir.path("out.bin");
    let side = dir.path("out.bin.json");
    let mut w = BinaryWriter::create(&path, &info, MemoryOrder::TimeMajor).expect("create");
    w.write_window(&values).expect("window");
    w.finish().expect("finish");
    let (old_data, old_side) = (std::fs::read(&path).unwrap(), std::fs::read(&side).unwrap());

    // A directory appears where the sidecar goes while the next run writes: its finish fails
    // and both files of the earlier run are as they were, with nothing else left behind.
    let mut w = BinaryWriter::create(&path, &info, MemoryOrder::ChannelMajor).expect("create");
    w.write_window(&values.iter().map(|v| v * 3.0).collect::<Vec<_>>())
        .expect("window");
    std::fs::rename(&side, dir.path("kept.json")).unwrap();
    std::fs::create_dir(&side).unwrap();
    let e = w.finish().expect_err("the sidecar path is a directory");
    assert!(
        e.to_string().contains("out.bin.json") && e.to_string().contains("directory"),
        "{e}"
    );
    assert_eq!(
        std::fs::read(&path).unwrap(),
        old_data,
        "the previous data file is kept"
    );
    std::fs::remove_dir(&side).unwrap();
    std::fs::rename(dir.path("kept.json"), &side).unwrap();
    assert_eq!(std::fs::read(&side).unwrap(), old_side);
    let mut files = dir.files();
    files.sort();
    assert_eq!(files, ["out.bin", "out.bin.json"]);

    // An output path that is a directory is refused when the writer is created.
    std::fs::create_dir(dir.path("d.bin")).unwrap();
    let e = BinaryWriter::create(dir.path("d.bin"), &info, MemoryOrder::TimeMajor)
        .expect_err("a directory");
    assert!(
        e.to_string().contains("d.bin") && e.to_string().contains("directory"),
        "{e}"
    );
}
