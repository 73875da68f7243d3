//! The window sink's outputs: `int16` files of whole numbers read back equal, values int16
//! cannot hold refused by name, and the sidecar's provenance.

use dspk_io::{BinaryRecording, BinarySidecar, BinarySink, OutputFormat, sidecar_path};
use dspk_types::conformance::SplitMix64;
use dspk_types::{
    MemoryOrder, RecordingInfo, RecordingSource, SampleFormat, SampleRate, SignalUnit, WindowSink,
};

use crate::common::{Scratch, all_stored, all_values};

const ORDERS: [MemoryOrder; 2] = [MemoryOrder::TimeMajor, MemoryOrder::ChannelMajor];

/// A recording of `channels × samples` in µV (what a pass tells its sink).
fn info(channels: usize, samples: u64) -> RecordingInfo {
    let rate = SampleRate::new(30_000.0).expect("rate");
    let mut info = RecordingInfo::new(
        "rec",
        channels,
        samples,
        rate,
        SampleFormat::I16,
        MemoryOrder::TimeMajor,
    );
    for (i, c) in info.channels.iter_mut().enumerate() {
        c.gain = 2.34375;
        c.name = format!("AP{i}");
        c.unit = SignalUnit::Microvolt;
    }
    info
}

/// Channel-major whole numbers across int16's whole range, the extremes included.
fn whole_numbers(channels: usize, samples: usize, seed: u64) -> Vec<f32> {
    let mut rng = SplitMix64::new(seed);
    let mut v: Vec<f32> = (0..channels * samples)
        .map(|_| rng.in_range(0..65_536) as f32 - 32_768.0)
        .collect();
    v[0] = -32_768.0;
    v[1] = 32_767.0;
    v
}

#[test]
fn int16_windows_read_back_equal_with_the_inverse_gain() {
    let seed = 0x5117_0001;
    let (channels, samples) = (5, 1_003);
    let values = whole_numbers(channels, samples, seed);
    let info = info(channels, samples as u64);
    let units = vec![SignalUnit::Microvolt; channels];
    let dir = Scratch::new("sink-int16");
    for order in ORDERS {
        let path = dir.path(&format!("out-{order}.bin"));
        let mut sink =
            BinarySink::new(&path, order, "rec").format(OutputFormat::Int16 { gain: 200.0 });
        sink.begin(&info, &units).expect("begin");
        for window in [0..400, 400..401, 401..samples] {
            let part: Vec<f32> = (0..channels)
                .flat_map(|c| values[c * samples + window.start..c * samples + window.end].to_vec())
                .collect();
            sink.write_window(&part).expect("window");
        }
        sink.finish().expect("finish");
        let summary = sink.summary().expect("finished");
        assert_eq!(summary.format, SampleFormat::I16);
        assert_eq!(summary.bytes, (channels * samples * 2) as u64);

        let rec = BinaryRecording::open(&path).expect("open");
        assert_eq!(rec.info().format, SampleFormat::I16);
        assert_eq!(rec.info().order, order);
        let want_stored: Vec<u8> = values
            .iter()
            .flat_map(|&v| (v as i16).to_le_bytes())
            .collect();
        assert_eq!(
            all_stored(&rec),
            want_stored,
            "seed {seed:#x} {order}: stored"
        );
        for c in &rec.info().channels {
            assert_eq!((c.gain, c.offset), (0.005, 0.0), "{}: 1 / 200", c.name);
            assert_eq!(c.unit, SignalUnit::Microvolt);
        }
        // Read back scaled: each stored value times 1/200 in µV.
        let scaled = all_values(&rec);
        for (i, (&got, &v)) in scaled.iter().zip(&values).enumerate() {
            let want = v * 0.005;
            assert!(
                (got - want).abs() <= want.abs() * 1e-6,
                "seed {seed:#x} {order}: value {i}: {got} vs {want}"
            );
        }
        assert!(rec.sidecar().provenance.is_none(), "none set, none written");
    }
}

#[test]
fn a_value_int16_cannot_hold_is_refused_by_name_and_nothing_is_left() {
    let (channels, samples) = (3, 8);
    let info = info(channels, samples as u64);
    let units = vec![SignalUnit::Microvolt; channels];
    let dir = Scratch::new("sink-refused");
    for (bad, shown) in [(32_768.0f32, "32768"), (-12.5, "-12.5"), (f32::NAN, "NaN")] {
        let path = dir.path("out.bin");
        let mut sink = BinarySink::new(&path, MemoryOrder::TimeMajor, "rec")
            .format(OutputFormat::Int16 { gain: 3.0 });
        sink.begin(&info, &units).expect("begin");
        sink.write_window(&[1.0; 3 * 4]).expect("first window");
        let mut window = vec![-2.0f32; 3 * 4];
        window[2 * 4 + 1] = bad; // channel 2, sample 4 + 1
        let e = sink.write_window(&window).expect_err("does not fit");
        let text = e.to_string();
        for part in [shown, "channel 2 (AP2)", "sample 5", "int16"] {
            assert!(text.contains(part), "{part:?} missing from: {text}");
        }
        drop(sink);
        assert!(dir.files().is_empty(), "{:?}", dir.files());
    }
    let e = BinarySink::new(dir.path("zero.bin"), MemoryOrder::TimeMajor, "rec")
        .format(OutputFormat::Int16 { gain: 0.0 })
        .begin(&info, &units)
        .expect_err("gain 0");
    assert!(e.to_string().contains("gain 0"), "{e}");
}

#[test]
fn the_sidecar_keeps_the_provenance_and_older_sidecars_still_read() {
    let (channels, samples) = (2, 6);
    let info = info(channels, samples as u64);
    let units = vec![SignalUnit::Microvolt; channels];
    let dir = Scratch::new("sink-provenance");
    let path = dir.path("out.bin");
    let provenance = serde_json::json!({
        "pipeline": {"stages": [{"kind": "highpass", "cutoff_hz": 300.0}]},
        "dspk_version": "0.1.0",
        "inputs": [{"path": "rec.bin", "bytes": 24}],
        "timings_s": {"fit": 0.25, "apply": 1.5},
    });
    let mut sink = BinarySink::new(&path, MemoryOrder::ChannelMajor, "rec");
    sink.begin(&info, &units).expect("begin");
    let values: Vec<f32> = (0..12).map(|i| i as f32 * 0.75 - 3.0).collect();
    sink.write_window(&values).expect("window");
    sink.set_provenance(provenance.clone());
    sink.finish().expect("finish");

    let rec = BinaryRecording::open(&path).expect("open");
    assert_eq!(rec.sidecar().provenance.as_ref(), Some(&provenance));
    assert_eq!(all_values(&rec), values, "float32 by default");
    let read = BinarySidecar::read(&sidecar_path(&path)).expect("sidecar");
    assert_eq!(read.provenance, Some(provenance));

    // A sidecar written before the field existed reads as before, without it.
    let text = r#"{"sample_rate": 1000, "channel_count": 2, "format": "float32", "order": "channel-major"}"#;
    let old = BinarySidecar::parse(text, &sidecar_path(&path)).expect("old sidecar");
    assert_eq!(old.provenance, None);
    let back = serde_json::to_string(&old).expect("encode");
    assert!(!back.contains("provenance"), "{back}");
}
