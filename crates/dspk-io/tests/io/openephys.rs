//! Open Ephys folders written by hand from the format description (GUI 0.5 and 0.6+ layouts,
//! record nodes, experiments, recordings, headstage and ADC channels), read back against the
//! int16 values × `bit_volts` computed here; bad inputs; the `.npy` header parser under
//! arbitrary bytes.

use std::path::{Path, PathBuf};

use dspk_io::{
    FileFormat, NpyHeader, OpenEphysFolder, OpenEphysLayout, OpenEphysRecording, OpenOptions,
    detect, open, open_with, recording_files,
};
use dspk_types::conformance::{SplitMix64, check_all};
use dspk_types::{RationalTime, RecordingSource, SampleRate, SignalUnit};
use proptest::prelude::*;
use serde_json::json;

use crate::common::Scratch;

/// A `.npy` file: `descr`, `shape` as Python text (`(3,)`), the data bytes, format `version`.
fn npy_bytes(version: u8, descr: &str, shape: &str, data: &[u8]) -> Vec<u8> {
    let dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    let len_bytes = if version == 1 { 2 } else { 4 };
    let unpadded = 8 + len_bytes + dict.len() + 1;
    let header_len = dict.len() + 1 + (64 - unpadded % 64) % 64;
    let mut out = b"\x93NUMPY".to_vec();
    out.extend([version, 0]);
    if version == 1 {
        out.extend((header_len as u16).to_le_bytes());
    } else {
        out.extend((header_len as u32).to_le_bytes());
    }
    out.extend(dict.as_bytes());
    out.resize(8 + len_bytes + header_len - 1, b' ');
    out.push(b'\n');
    out.extend(data);
    out
}

fn npy_i64(values: &[i64]) -> Vec<u8> {
    let data: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    npy_bytes(1, "<i8", &format!("({},)", values.len()), &data)
}

fn npy_f64(values: &[f64]) -> Vec<u8> {
    let data: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    npy_bytes(1, "<f8", &format!("({},)", values.len()), &data)
}

/// One channel: name, bit_volts, units.
pub(crate) type Chan = (&'static str, f64, &'static str);

const HEADSTAGE_AND_ADC: [Chan; 5] = [
    ("CH1", 0.195, "uV"),
    ("CH2", 0.195, "uV"),
    ("CH3", 0.195, "uV"),
    ("ADC1", 0.000_152_587_890_625, "V"),
    ("ADC2", 0.000_152_587_890_625, "V"),
];
const PROBE: [Chan; 3] = [
    ("AP1", 0.194_999_992_847_442_63, "uV"),
    ("AP2", 0.194_999_992_847_442_63, "uV"),
    ("AP3", 0.194_999_992_847_442_63, "uV"),
];

/// A stream to write: folder name, stream_name, rate, channels, samples, first sample number.
pub(crate) struct StreamSpec {
    pub(crate) folder: &'static str,
    pub(crate) stream_name: &'static str,
    pub(crate) rate: f64,
    pub(crate) channels: &'static [Chan],
    pub(crate) samples: usize,
    pub(crate) first: i64,
    pub(crate) seed: u64,
}

pub(crate) const BOARD: StreamSpec = StreamSpec {
    folder: "Acquisition_Board-100.Rhythm Data",
    stream_name: "Rhythm Data",
    rate: 30000.0,
    channels: &HEADSTAGE_AND_ADC,
    samples: 600,
    first: 1_234_567,
    seed: 0x0e_0001,
};
pub(crate) const NEUROPIX: StreamSpec = StreamSpec {
    folder: "Neuropix-PXI-100.ProbeA-AP",
    stream_name: "ProbeA-AP",
    rate: 30000.0,
    channels: &PROBE,
    samples: 450,
    first: 77,
    seed: 0x0e_0002,
};

/// The clock rate the timestamps are written at: 94 ppm slow, as in issue 18.
const CLOCK_HZ: f64 = 29_997.17;

fn frames(spec: &StreamSpec) -> Vec<i16> {
    let mut rng = SplitMix64::new(spec.seed);
    (0..spec.samples * spec.channels.len())
        .map(|_| rng.next_u64() as i16)
        .collect()
}

fn oebin_entry(spec: &StreamSpec, trailing_slash: bool) -> serde_json::Value {
    json!({
        "folder_name": format!("{}{}", spec.folder, if trailing_slash { "/" } else { "" }),
        "sample_rate": spec.rate,
        "source_processor_name": spec.folder.split('-').next().unwrap_or(""),
        "source_processor_id": 100,
        "stream_name": spec.stream_name,
        "recorded_processor": "Record Node",
        "recorded_processor_id": 101,
        "num_channels": spec.channels.len(),
        "channels": spec.channels.iter().map(|(n, bv, u)| json!({
            "channel_name": n, "description": "", "identifier": "", "history": "",
            "bit_volts": bv, "units": u,
        })).collect::<Vec<_>>(),
    })
}

/// Writes a 0.6+ recording folder with `streams`; returns the folder.
pub(crate) fn write_v06(dir: &Path, streams: &[&StreamSpec]) -> PathBuf {
    std::fs::create_dir_all(dir).expect("recording dir");
    let oebin = json!({
        "GUI version": "0.6.7",
        "continuous": streams.iter().map(|s| oebin_entry(s, true)).collect::<Vec<_>>(),
        "events": [],
        "spikes": [],
    });
    std::fs::write(
        dir.join("structure.oebin"),
        serde_json::to_string_pretty(&oebin).expect("json"),
    )
    .expect("oebin");
    for s in streams {
        let sd = dir.join("continuous").join(s.folder);
        std::fs::create_dir_all(&sd).expect("stream dir");
        let data: Vec<u8> = frames(s).iter().flat_map(|v| v.to_le_bytes()).collect();
        std::fs::write(sd.join("continuous.dat"), data).expect("dat");
        let sn: Vec<i64> = (0..s.samples as i64).map(|i| s.first + i).collect();
        let ts: Vec<f64> = sn
            .iter()
            .map(|&n| 100.25 + (n - s.first) as f64 / CLOCK_HZ)
            .collect();
        std::fs::write(sd.join("sample_numbers.npy"), npy_i64(&sn)).expect("sn");
        std::fs::write(sd.join("timestamps.npy"), npy_f64(&ts)).expect("ts");
    }
    dir.to_path_buf()
}

/// Writes a GUI 0.5 recording folder (empty `units`, `timestamps.npy` of sample numbers).
fn write_v05(dir: &Path, spec: &StreamSpec) -> PathBuf {
    std::fs::create_dir_all(dir).expect("recording dir");
    let mut entry = oebin_entry(spec, true);
    entry.as_object_mut().expect("object").remove("stream_name");
    for c in entry["channels"].as_array_mut().expect("channels") {
        c["units"] = json!("");
    }
    let oebin = json!({ "GUI version": "0.5.5", "continuous": [entry] });
    std::fs::write(dir.join("structure.oebin"), oebin.to_string()).expect("oebin");
    let sd = dir.join("continuous").join(spec.folder);
    std::fs::create_dir_all(&sd).expect("stream dir");
    let data: Vec<u8> = frames(spec).iter().flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(sd.join("continuous.dat"), data).expect("dat");
    let sn: Vec<i64> = (0..spec.samples as i64).map(|i| spec.first + i).collect();
    std::fs::write(sd.join("timestamps.npy"), npy_i64(&sn)).expect("ts");
    dir.to_path_buf()
}

/// Asserts every value is the stored int16 × bit_volts (as f32), computed here.
fn assert_scaled(rec: &OpenEphysRecording, spec: &StreamSpec, ctx: &str) {
    let data = frames(spec);
    let c = spec.channels.len();
    let n = spec.samples;
    assert_eq!(rec.info().channel_count(), c, "{ctx}: channels");
    assert_eq!(rec.info().samples, n as u64, "{ctx}: samples");
    let all: Vec<usize> = (0..c).collect();
    let mut out = vec![0f32; c * n];
    rec.read(&all, 0..n as u64, &mut out).expect("read");
    for ch in 0..c {
        let bv = spec.channels[ch].1 as f32;
        for s in 0..n {
            let want = f32::from(data[s * c + ch]) * bv;
            let got = out[ch * n + s];
            assert!(
                (got - want).abs() <= want.abs() * 1e-6,
                "{ctx}: channel {ch} sample {s}: got {got}, expected {want}"
            );
        }
    }
}

/// `Record Node 101/experiment1/recording{1,2}` and `experiment2/recording1`, two streams each.
fn write_tree(root: &Path) -> Vec<PathBuf> {
    let node = root.join("Record Node 101");
    [
        "experiment1/recording1",
        "experiment1/recording2",
        "experiment2/recording1",
    ]
    .iter()
    .map(|r| write_v06(&node.join(r), &[&BOARD, &NEUROPIX]))
    .collect()
}

#[test]
fn gui_06_streams_values_rates_and_selection() {
    let dir = Scratch::new("oe-v06");
    let recs = write_tree(&dir.dir);
    let rec_dir = &recs[1];

    let board = OpenEphysRecording::open(rec_dir, Some(BOARD.folder)).expect("open board");
    assert_scaled(&board, &BOARD, "board");
    let info = board.info();
    let units: Vec<SignalUnit> = info.channels.iter().map(|c| c.unit.clone()).collect();
    assert_eq!(
        units,
        [
            SignalUnit::Microvolt,
            SignalUnit::Microvolt,
            SignalUnit::Microvolt,
            SignalUnit::Volt,
            SignalUnit::Volt
        ]
    );
    let names: Vec<&str> = info.channels.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["CH1", "CH2", "CH3", "ADC1", "ADC2"]);
    assert_eq!(
        info.sample_rate,
        SampleRate::from_ratio(30_000, 1).expect("rate")
    );
    assert_eq!(
        info.start_time,
        RationalTime::new(1_234_567, 30_000).expect("time")
    );
    assert_eq!(board.layout(), OpenEphysLayout::V06);
    assert!(board.warnings().is_empty(), "{:?}", board.warnings());
    // The measured rate: (last − first sample number) / (last − first timestamp).
    let measured: f64 = info.metadata["measured_sample_rate"].parse().expect("f64");
    assert!((measured - CLOCK_HZ).abs() < 1e-6, "{measured}");
    assert_eq!(
        board.measured_sample_rate(),
        Some(SampleRate::new(measured).expect("rate"))
    );
    let ppm: f64 = info.metadata["measured_rate_ppm"].parse().expect("ppm");
    assert!(
        (ppm - (CLOCK_HZ / 30_000.0 - 1.0) * 1e6).abs() < 1e-3,
        "{ppm}"
    );
    assert!((ppm + 94.33).abs() < 0.01, "{ppm}");
    for (k, v) in [
        ("format", "openephys"),
        ("layout", "0.6+"),
        ("gui_version", "0.6.7"),
        ("record_node", "Record Node 101"),
        ("experiment", "1"),
        ("recording", "2"),
        ("stream", BOARD.folder),
        ("stream_name", "Rhythm Data"),
        ("source_processor_id", "100"),
        ("first_sample_number", "1234567"),
        ("last_sample_number", "1235166"),
        ("first_timestamp_s", "100.25"),
    ] {
        assert_eq!(info.metadata.get(k).map(String::as_str), Some(v), "{k}");
    }
    check_all(&board, 0x0e_0010);

    // The same stream by its stream_name, by its folder and by its continuous.dat.
    let sd = rec_dir.join("continuous").join(BOARD.folder);
    for r in [
        OpenEphysRecording::open(rec_dir, Some("Rhythm Data")),
        OpenEphysRecording::open(&sd, None),
        OpenEphysRecording::open(sd.join("continuous.dat"), None),
        OpenEphysRecording::open(rec_dir.join("structure.oebin"), Some(BOARD.folder)),
    ] {
        assert_eq!(r.expect("open").info(), info);
    }

    let probe = OpenEphysRecording::open(rec_dir, Some("ProbeA-AP")).expect("probe");
    assert_scaled(&probe, &NEUROPIX, "probe");
    assert_eq!(
        probe.info().start_time,
        RationalTime::new(77, 30_000).expect("t")
    );
    assert_eq!(probe.stream().name, NEUROPIX.folder);
    assert_eq!(
        probe.index_files(),
        [
            rec_dir
                .join("continuous")
                .join(NEUROPIX.folder)
                .join("sample_numbers.npy"),
            rec_dir
                .join("continuous")
                .join(NEUROPIX.folder)
                .join("timestamps.npy"),
        ]
    );
    check_all(&probe, 0x0e_0011);

    // Two streams and no choice: an error listing both.
    let e = OpenEphysRecording::open(rec_dir, None)
        .expect_err("ambiguous")
        .to_string();
    assert!(
        e.contains("2 continuous streams")
            && e.contains(BOARD.folder)
            && e.contains(NEUROPIX.folder),
        "{e}"
    );
    let e = OpenEphysRecording::open(rec_dir, Some("ProbeB"))
        .expect_err("unknown")
        .to_string();
    assert!(
        e.contains("no continuous stream 'ProbeB'") && e.contains(NEUROPIX.folder),
        "{e}"
    );
    let e = OpenEphysRecording::open(&sd, Some(NEUROPIX.folder))
        .expect_err("path and name disagree")
        .to_string();
    assert!(e.contains("names stream"), "{e}");

    // Every recording of the folder, in order, each opened by index.
    let folder = OpenEphysFolder::scan(&dir.dir).expect("scan");
    let labels: Vec<String> = folder.recordings().iter().map(|r| r.label()).collect();
    assert_eq!(
        labels,
        [
            "Record Node 101/experiment1/recording1",
            "Record Node 101/experiment1/recording2",
            "Record Node 101/experiment2/recording1"
        ]
    );
    let r = &folder.recordings()[2];
    assert_eq!((r.experiment, r.recording), (Some(2), Some(1)));
    assert_eq!(r.streams.len(), 2);
    assert_eq!(r.streams[1].channel_count, 3);
    assert_eq!(r.gui_version.as_deref(), Some("0.6.7"));
    let third = folder.open(2, Some(BOARD.folder)).expect("open by index");
    assert_eq!(third.info().metadata["experiment"], "2");
    assert_scaled(&third, &BOARD, "third");
    let e = folder
        .open(3, None)
        .expect_err("no recording 3")
        .to_string();
    assert!(e.contains("no recording 3") && e.contains("holds 3"), "{e}");
    // A folder above several recordings: an error listing them.
    let e = OpenEphysRecording::open(&dir.dir, Some(BOARD.folder))
        .expect_err("several recordings")
        .to_string();
    assert!(
        e.contains("3 Open Ephys recordings") && e.contains("experiment2/recording1"),
        "{e}"
    );
}

#[test]
fn open_detect_and_protected_files() {
    let dir = Scratch::new("oe-detect");
    let recs = write_tree(&dir.dir);
    let dat = recs[0]
        .join("continuous")
        .join(NEUROPIX.folder)
        .join("continuous.dat");
    let d = detect(&dat).expect("detect");
    assert_eq!(d.format, FileFormat::OpenEphys);
    assert_eq!(d.data_path, dat);
    assert_eq!(d.metadata_path, recs[0].join("structure.oebin"));
    let rec = open(&dat).expect("open");
    assert_eq!(rec.format(), FileFormat::OpenEphys);
    assert_eq!(rec.info(), &d.info);
    assert!(rec.warnings().is_empty());
    let files = recording_files(&dat).expect("files");
    let sd = dat.parent().expect("stream dir");
    assert_eq!(
        files,
        [
            dat.clone(),
            recs[0].join("structure.oebin"),
            sd.join("sample_numbers.npy"),
            sd.join("timestamps.npy")
        ]
    );
    // The stream folder too; a recording folder or .oebin with two streams is ambiguous.
    assert_eq!(open(sd).expect("stream folder").info(), &d.info);
    for p in [
        recs[0].clone(),
        recs[0].join("structure.oebin"),
        dir.dir.clone(),
    ] {
        let e = open(&p).expect_err("ambiguous");
        assert!(
            e.to_string().contains("choose one") || e.to_string().contains("give one"),
            "{e}"
        );
    }

    // A recording with one stream opens from its folder, its .oebin and the top folder.
    let one = Scratch::new("oe-one");
    let rec_dir = write_v06(
        &one.path("Record Node 102/experiment1/recording1"),
        &[&NEUROPIX],
    );
    for p in [
        one.dir.clone(),
        rec_dir.clone(),
        rec_dir.join("structure.oebin"),
    ] {
        assert_eq!(
            open(&p).expect("one stream").info().samples,
            450,
            "{}",
            p.display()
        );
        assert_eq!(detect(&p).expect("detect").format, FileFormat::OpenEphys);
    }
}

#[test]
fn gui_05_layout_and_empty_units() {
    let dir = Scratch::new("oe-v05");
    let rec_dir = write_v05(&dir.path("experiment1/recording1"), &BOARD);
    let rec = OpenEphysRecording::open(&dir.dir, None).expect("open");
    assert_eq!(rec.layout(), OpenEphysLayout::V05);
    assert_scaled(&rec, &BOARD, "0.5");
    // Empty units: µV, and volts for ADC channels (as Neo reads them).
    let units: Vec<SignalUnit> = rec.info().channels.iter().map(|c| c.unit.clone()).collect();
    assert_eq!(units[0], SignalUnit::Microvolt);
    assert_eq!(units[4], SignalUnit::Volt);
    assert_eq!(
        rec.info().start_time,
        RationalTime::new(1_234_567, 30_000).expect("t")
    );
    assert_eq!(rec.measured_sample_rate(), None);
    assert!(!rec.info().metadata.contains_key("measured_sample_rate"));
    assert_eq!(rec.recording().record_node, None);
    assert_eq!(rec.recording().label(), "experiment1/recording1");
    assert_eq!(
        rec.index_files(),
        [rec_dir
            .join("continuous")
            .join(BOARD.folder)
            .join("timestamps.npy")]
    );
    check_all(&rec, 0x0e_0020);
}

#[test]
fn partial_frames_and_gaps_are_warnings() {
    let dir = Scratch::new("oe-warn");
    let rec_dir = write_v06(&dir.path("experiment1/recording1"), &[&NEUROPIX]);
    let sd = rec_dir.join("continuous").join(NEUROPIX.folder);
    let dat = sd.join("continuous.dat");
    let mut bytes = std::fs::read(&dat).expect("read");
    bytes.extend([1, 2, 3]);
    std::fs::write(&dat, &bytes).expect("write");
    let rec = OpenEphysRecording::open(&rec_dir, None).expect("open");
    assert_scaled(&rec, &NEUROPIX, "partial");
    assert_eq!(rec.warnings().len(), 1);
    assert!(
        rec.warnings()[0].contains("continuous.dat")
            && rec.warnings()[0].contains("3 trailing bytes"),
        "{:?}",
        rec.warnings()
    );
    // A gap of 10 samples after sample 99: read as contiguous, with a warning.
    let sn: Vec<i64> = (0..450i64)
        .map(|i| 77 + i + if i >= 100 { 10 } else { 0 })
        .collect();
    std::fs::write(sd.join("sample_numbers.npy"), npy_i64(&sn)).expect("sn");
    let rec = OpenEphysRecording::open(&rec_dir, None).expect("open with a gap");
    assert!(
        rec.warnings()
            .iter()
            .any(|w| w.contains("sample_numbers.npy")
                && w.contains("1 gaps")
                && w.contains("10 samples missing")),
        "{:?}",
        rec.warnings()
    );
}

/// A fresh one-stream 0.6+ recording, `change` applied, then opened: the error's text.
fn bad_case(tag: &str, change: impl FnOnce(&Path, &Path)) -> String {
    let dir = Scratch::new(tag);
    let rec_dir = write_v06(&dir.path("experiment1/recording1"), &[&NEUROPIX]);
    let sd = rec_dir.join("continuous").join(NEUROPIX.folder);
    change(&rec_dir, &sd);
    let e = match OpenEphysRecording::open(&rec_dir, None) {
        Ok(_) => panic!("{tag}: opened but should not have"),
        Err(e) => e.to_string(),
    };
    // detect refuses it too (it reads the same description), except for what only open's
    // pass over the sample numbers finds.
    if !e.contains("go backwards: value") {
        assert!(
            detect(rec_dir.join("structure.oebin")).is_err(),
            "{tag}: detect accepted it"
        );
    }
    e
}

/// Rewrites the `.oebin` with `f` applied to its JSON.
fn edit_oebin(rec: &Path, f: impl FnOnce(&mut serde_json::Value)) {
    let p = rec.join("structure.oebin");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&p).expect("read")).expect("json");
    f(&mut v);
    std::fs::write(&p, v.to_string()).expect("write");
}

#[test]
fn bad_inputs_are_clear_errors_naming_the_file() {
    type Change = Box<dyn FnOnce(&Path, &Path)>;
    let write = |name: &'static str, bytes: Vec<u8>| -> Change {
        Box::new(move |_, sd: &Path| std::fs::write(sd.join(name), bytes).expect("write"))
    };
    let oebin =
        |f: fn(&mut serde_json::Value)| -> Change { Box::new(move |r, _| edit_oebin(r, f)) };
    let sn_ok: Vec<i64> = (77..77 + 450).collect();
    let sn_data: Vec<u8> = sn_ok.iter().flat_map(|v| v.to_le_bytes()).collect();
    let cases: Vec<(&str, Change, &str, &str)> = vec![
        (
            "no-oebin",
            Box::new(|r, _| std::fs::remove_file(r.join("structure.oebin")).expect("rm")),
            "",
            "no structure.oebin",
        ),
        (
            "oebin-not-json",
            Box::new(|r, _| std::fs::write(r.join("structure.oebin"), "{ not json").expect("w")),
            "structure.oebin",
            "invalid structure.oebin",
        ),
        (
            "oebin-trailing",
            Box::new(|r, _| {
                let p = r.join("structure.oebin");
                let t = std::fs::read_to_string(&p).expect("r");
                std::fs::write(&p, t + " []").expect("w");
            }),
            "structure.oebin",
            "trailing",
        ),
        (
            "no-continuous",
            oebin(|v| {
                v.as_object_mut().expect("o").remove("continuous");
            }),
            "structure.oebin",
            "missing field `continuous`",
        ),
        (
            "no-folder-name",
            oebin(|v| {
                v["continuous"][0]
                    .as_object_mut()
                    .expect("o")
                    .remove("folder_name");
            }),
            "structure.oebin",
            "continuous[0]: missing field `folder_name`",
        ),
        (
            "no-sample-rate",
            oebin(|v| {
                v["continuous"][0]
                    .as_object_mut()
                    .expect("o")
                    .remove("sample_rate");
            }),
            "structure.oebin",
            "missing field `sample_rate`",
        ),
        (
            "no-num-channels",
            oebin(|v| {
                v["continuous"][0]
                    .as_object_mut()
                    .expect("o")
                    .remove("num_channels");
            }),
            "structure.oebin",
            "missing field `num_channels`",
        ),
        (
            "no-channels",
            oebin(|v| {
                v["continuous"][0]
                    .as_object_mut()
                    .expect("o")
                    .remove("channels");
            }),
            "structure.oebin",
            "missing field `channels`",
        ),
        (
            "no-bit-volts",
            oebin(|v| {
                v["continuous"][0]["channels"][1]
                    .as_object_mut()
                    .expect("o")
                    .remove("bit_volts");
            }),
            "structure.oebin",
            "continuous[0].channels[1]: missing field `bit_volts`",
        ),
        (
            "no-channel-name",
            oebin(|v| {
                v["continuous"][0]["channels"][2]
                    .as_object_mut()
                    .expect("o")
                    .remove("channel_name");
            }),
            "structure.oebin",
            "missing field `channel_name`",
        ),
        (
            "rate-text",
            oebin(|v| v["continuous"][0]["sample_rate"] = json!("fast")),
            "structure.oebin",
            "sample_rate",
        ),
        (
            "rate-zero",
            oebin(|v| v["continuous"][0]["sample_rate"] = json!(0)),
            "structure.oebin",
            "sample_rate 0",
        ),
        (
            "num-channels-mismatch",
            oebin(|v| v["continuous"][0]["num_channels"] = json!(4)),
            "structure.oebin",
            "num_channels is 4 but channels lists 3",
        ),
        (
            "num-channels-zero",
            oebin(|v| {
                v["continuous"][0]["num_channels"] = json!(0);
                v["continuous"][0]["channels"] = json!([]);
            }),
            "structure.oebin",
            "num_channels 0",
        ),
        (
            "bit-volts-zero",
            oebin(|v| v["continuous"][0]["channels"][0]["bit_volts"] = json!(0.0)),
            "structure.oebin",
            "bit_volts 0.0 is not a finite number above 0",
        ),
        (
            "bit-volts-below-f32",
            oebin(|v| v["continuous"][0]["channels"][0]["bit_volts"] = json!(1e-50)),
            "structure.oebin",
            "e-5",
        ),
        (
            "bit-volts-below-f32-text",
            oebin(|v| v["continuous"][0]["channels"][0]["bit_volts"] = json!(1e-50)),
            "structure.oebin",
            "is not a finite number above 0 as a 32-bit float",
        ),
        (
            "bit-volts-past-f32",
            oebin(|v| v["continuous"][0]["channels"][0]["bit_volts"] = json!(1e300)),
            "structure.oebin",
            "bit_volts 1e300 is not a finite number above 0 as a 32-bit float",
        ),
        (
            "folder-escape",
            oebin(|v| v["continuous"][0]["folder_name"] = json!("../x/")),
            "structure.oebin",
            "is not the name of one folder",
        ),
        (
            "no-streams",
            oebin(|v| v["continuous"] = json!([])),
            "structure.oebin",
            "no continuous streams",
        ),
        (
            "no-stream-dir",
            Box::new(|_, sd| std::fs::remove_dir_all(sd).expect("rm")),
            NEUROPIX.folder,
            "missing stream folder",
        ),
        (
            "no-dat",
            Box::new(|_, sd| std::fs::remove_file(sd.join("continuous.dat")).expect("rm")),
            "continuous.dat",
            "missing continuous.dat",
        ),
        (
            "no-sample-numbers-06",
            Box::new(|_, sd| std::fs::remove_file(sd.join("sample_numbers.npy")).expect("rm")),
            "sample_numbers.npy",
            "GUI version 0.6.7 writes the sample numbers there",
        ),
        (
            "no-index-files",
            Box::new(|r, sd| {
                edit_oebin(r, |v| {
                    v.as_object_mut().expect("o").remove("GUI version");
                });
                std::fs::remove_file(sd.join("sample_numbers.npy")).expect("rm");
                std::fs::remove_file(sd.join("timestamps.npy")).expect("rm");
            }),
            NEUROPIX.folder,
            "no sample numbers",
        ),
        (
            "sn-float",
            write("sample_numbers.npy", npy_f64(&vec![0.0; 450])),
            "sample_numbers.npy",
            "dtype '<f8' where int64 ('<i8') is expected",
        ),
        (
            "sn-int32",
            write(
                "sample_numbers.npy",
                npy_bytes(1, "<i4", "(450,)", &[0u8; 1800]),
            ),
            "sample_numbers.npy",
            "dtype '<i4'",
        ),
        (
            "sn-big-endian",
            write(
                "sample_numbers.npy",
                npy_bytes(1, ">i8", "(450,)", &sn_data),
            ),
            "sample_numbers.npy",
            "dtype '>i8'",
        ),
        (
            "sn-2d",
            write(
                "sample_numbers.npy",
                npy_bytes(1, "<i8", "(225, 2)", &sn_data),
            ),
            "sample_numbers.npy",
            "shape [225, 2]",
        ),
        (
            "sn-short",
            write("sample_numbers.npy", npy_i64(&sn_ok[..449])),
            "sample_numbers.npy",
            "449 values, but",
        ),
        (
            "sn-truncated-data",
            write("sample_numbers.npy", {
                let mut b = npy_i64(&sn_ok);
                b.truncate(b.len() - 5);
                b
            }),
            "sample_numbers.npy",
            "truncated",
        ),
        (
            "sn-extra-data",
            write("sample_numbers.npy", {
                let mut b = npy_i64(&sn_ok);
                b.extend([0u8; 8]);
                b
            }),
            "sample_numbers.npy",
            "bytes after the data",
        ),
        (
            "sn-truncated-header",
            write("sample_numbers.npy", npy_i64(&sn_ok)[..40].to_vec()),
            "sample_numbers.npy",
            "truncated header",
        ),
        (
            "sn-no-magic",
            write(
                "sample_numbers.npy",
                b"PK\x03\x04 not an npy file at all".to_vec(),
            ),
            "sample_numbers.npy",
            "no \\x93NUMPY magic",
        ),
        (
            "sn-version-4",
            write("sample_numbers.npy", {
                let mut b = npy_i64(&sn_ok);
                b[6] = 4;
                b
            }),
            "sample_numbers.npy",
            "unsupported .npy version 4.0",
        ),
        (
            "sn-empty",
            write("sample_numbers.npy", Vec::new()),
            "sample_numbers.npy",
            "magic",
        ),
        (
            "sn-negative",
            write(
                "sample_numbers.npy",
                npy_i64(&(-5..445).collect::<Vec<_>>()),
            ),
            "sample_numbers.npy",
            "first sample number -5 is negative",
        ),
        (
            "sn-backwards-end",
            write(
                "sample_numbers.npy",
                npy_i64(&(0..450).rev().collect::<Vec<_>>()),
            ),
            "sample_numbers.npy",
            "go backwards",
        ),
        (
            "sn-backwards-middle",
            write("sample_numbers.npy", {
                let mut v = sn_ok.clone();
                v[200] = v[199];
                npy_i64(&v)
            }),
            "sample_numbers.npy",
            "value 200 (276) is not above the one before (276)",
        ),
        (
            "ts-int",
            write("timestamps.npy", npy_i64(&sn_ok)),
            "timestamps.npy",
            "dtype '<i8' where float64",
        ),
        (
            "ts-long",
            write("timestamps.npy", npy_f64(&vec![1.0; 451])),
            "timestamps.npy",
            "451 values",
        ),
        (
            "ts-nan",
            write("timestamps.npy", npy_f64(&vec![f64::NAN; 450])),
            "timestamps.npy",
            "not finite",
        ),
        (
            "dat-short",
            Box::new(|_, sd| {
                let p = sd.join("continuous.dat");
                let b = std::fs::read(&p).expect("r");
                std::fs::write(&p, &b[..b.len() - 6 * 10]).expect("w");
            }),
            "sample_numbers.npy",
            "the files disagree on the stream's length",
        ),
    ];
    assert!(cases.len() >= 25, "{} cases", cases.len());
    let n = cases.len();
    for (tag, change, file, what) in cases {
        let e = bad_case(tag, change);
        assert!(
            e.contains(file),
            "{tag}: the error does not name {file}: {e}"
        );
        assert!(
            e.contains(what),
            "{tag}: the error does not say '{what}': {e}"
        );
    }
    eprintln!("{n} bad inputs refused");
}

#[test]
fn npy_headers_of_every_version_parse() {
    for v in [1u8, 2, 3] {
        let b = npy_bytes(v, "<i8", "(7,)", &[0u8; 56]);
        let h = NpyHeader::parse(&b).expect("parse");
        assert_eq!(h.version, (v, 0));
        assert_eq!(h.descr, "<i8");
        assert!(!h.fortran_order);
        assert_eq!(h.shape, [7]);
        assert_eq!(h.data_offset % 64, 0, "NumPy aligns the data to 64 bytes");
        assert_eq!(h.data_offset as usize, b.len() - 56);
    }
    // Keys in any order, double quotes, (n, 1) and () shapes; errors say what is wrong.
    let raw = |dict: &str| {
        let mut b = b"\x93NUMPY\x01\x00".to_vec();
        b.extend((dict.len() as u16 + 1).to_le_bytes());
        b.extend(dict.as_bytes());
        b.push(b'\n');
        b
    };
    let h = NpyHeader::parse(&raw(
        "{\"shape\": (3, 1), \"fortran_order\": True, \"descr\": \"<f8\"}",
    ))
    .expect("parse");
    assert_eq!(
        (h.shape.as_slice(), h.fortran_order, h.descr.as_str()),
        (&[3u64, 1][..], true, "<f8")
    );
    assert_eq!(
        NpyHeader::parse(&raw(
            "{'descr': '<i8', 'fortran_order': False, 'shape': ()}"
        ))
        .expect("scalar")
        .shape,
        Vec::<u64>::new()
    );
    for (dict, what) in [
        (
            "{'descr': '<i8', 'fortran_order': False}",
            "missing key 'shape'",
        ),
        (
            "{'descr': '<i8', 'fortran_order': 0, 'shape': (3,)}",
            "fortran_order",
        ),
        (
            "{'descr': '<i8', 'fortran_order': False, 'shape': (3)}",
            "needs its comma",
        ),
        (
            "{'descr': '<i8', 'fortran_order': False, 'shape': (-3,)}",
            "not a count",
        ),
        (
            "{'descr': '<i8', 'descr': '<i8', 'fortran_order': False, 'shape': (3,)}",
            "twice",
        ),
        (
            "{'descr': '<i8', 'fortran_order': False, 'shape': (3,), 'x': 1}",
            "unexpected key 'x'",
        ),
        (
            "{'descr': '<i8', 'fortran_order': False, 'shape': (3,)} x",
            "after the dict",
        ),
        (
            "{'descr': '<i8, 'fortran_order': False, 'shape': (3,)}",
            "expected ',' or '}'",
        ),
    ] {
        let e = NpyHeader::parse(&raw(dict)).expect_err(dict);
        assert!(e.contains(what), "{dict}: {e}");
    }
    let mut no_newline = raw("{'descr': '<i8', 'fortran_order': False, 'shape': (3,)}");
    *no_newline.last_mut().expect("byte") = b' ';
    assert!(
        NpyHeader::parse(&no_newline)
            .expect_err("newline")
            .contains("newline")
    );
    let mut huge = b"\x93NUMPY\x02\x00".to_vec();
    huge.extend(u32::MAX.to_le_bytes());
    assert!(
        NpyHeader::parse(&huge)
            .expect_err("huge")
            .contains("over the")
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Arbitrary bytes never panic the parser.
    #[test]
    fn npy_header_parser_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let _ = NpyHeader::parse(&bytes);
    }

    /// Valid headers with bytes overwritten or cut short: an error or a header, never a panic,
    /// and a header that parses never points past the bytes it was read from.
    #[test]
    fn mutated_npy_headers_never_panic(
        version in 1u8..=3,
        n in 0u64..1_000_000,
        edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..6),
        cut in any::<usize>(),
    ) {
        let mut b = npy_bytes(version, "<i8", &format!("({n},)"), &[]);
        for (at, byte) in edits {
            let i = at % b.len();
            b[i] = byte;
        }
        b.truncate(cut % (b.len() + 1));
        if let Ok(h) = NpyHeader::parse(&b) {
            prop_assert!(h.data_offset as usize <= b.len());
        }
    }
}

/// A folder of one experiment's recordings with two streams each opens on the stream named
/// (`OpenOptions::stream`, by folder name or `stream_name`), a segment per recording holding
/// that recording's stream as it reads alone; without a name it is an error listing the
/// streams; an unknown name is an error naming the streams; a name for a format without
/// streams is refused by name.
#[test]
fn an_experiment_of_several_streams_opens_on_the_stream_named() {
    let dir = Scratch::new("oe-experiment-streams");
    let recs = write_tree(&dir.dir);
    let experiment = dir.dir.join("Record Node 101").join("experiment1");
    let e = open(&experiment).expect_err("two streams, none named");
    assert!(
        e.to_string().contains("choose one") && e.to_string().contains(NEUROPIX.folder),
        "{e}"
    );
    for (spec, name) in [
        (&NEUROPIX, NEUROPIX.folder),
        (&NEUROPIX, NEUROPIX.stream_name),
        (&BOARD, BOARD.stream_name),
    ] {
        let options = OpenOptions {
            stream: Some(name.to_string()),
        };
        let rec = open_with(&experiment, &options).expect("the stream named");
        let ctx = format!("stream {name}");
        let info = rec.info().clone();
        let segments = info.segments().list().to_vec();
        assert_eq!(segments.len(), 2, "{ctx}: {segments:?}");
        assert_eq!(info.channel_count(), spec.channels.len(), "{ctx}");
        let channels: Vec<usize> = (0..info.channel_count()).collect();
        for (segment, rec_dir) in segments.iter().zip(&recs[..2]) {
            let alone = OpenEphysRecording::open(rec_dir, Some(name)).expect("alone");
            assert_eq!(segment.samples, alone.info().samples, "{ctx}");
            let n = segment.samples as usize;
            let mut want = vec![0.0f32; n * channels.len()];
            alone
                .read(&channels, 0..segment.samples, &mut want)
                .unwrap();
            let mut got = vec![0.0f32; want.len()];
            rec.read(&channels, segment.range(), &mut got).unwrap();
            assert!(
                got.iter()
                    .zip(&want)
                    .all(|(a, b)| a.to_bits() == b.to_bits()),
                "{ctx}: segment at {} differs from its recording read alone",
                segment.start
            );
        }
    }
    let unknown = OpenOptions {
        stream: Some("ProbeZ-LFP".into()),
    };
    let e = open_with(&experiment, &unknown).expect_err("no such stream");
    assert!(
        e.to_string().contains("ProbeZ-LFP") && e.to_string().contains(BOARD.folder),
        "{e}"
    );
    // The files a recording of two streams consists of (what an output may not overwrite,
    // whichever stream is read): the .oebin once, every stream's data and sample numbers.
    let files = recording_files(&recs[0]).expect("the files of a two-stream recording");
    for spec in [&BOARD, &NEUROPIX] {
        let sd = recs[0].join("continuous").join(spec.folder);
        for f in ["continuous.dat", "sample_numbers.npy", "timestamps.npy"] {
            assert!(
                files.contains(&sd.join(f)),
                "{f} of {}: {files:?}",
                spec.folder
            );
        }
    }
    let oebins = files
        .iter()
        .filter(|f| f.ends_with("structure.oebin"))
        .count();
    assert_eq!((oebins, files.len()), (1, 7), "{files:?}");
    assert_eq!(
        dspk_io::openephys_streams(&experiment).unwrap(),
        [BOARD.folder, NEUROPIX.folder]
    );
    // A stream name for a raw file (no streams) is refused, naming the file.
    let raw = dir.path("plain.bin");
    std::fs::write(&raw, [0u8; 8]).unwrap();
    std::fs::write(
        dir.path("plain.bin.json"),
        r#"{"sample_rate": "30000", "channel_count": 2, "format": "int16", "order": "time-major"}"#,
    )
    .unwrap();
    let e = open_with(
        &raw,
        &OpenOptions {
            stream: Some(NEUROPIX.stream_name.into()),
        },
    )
    .expect_err("a raw file has no streams");
    assert!(
        e.to_string().contains("plain.bin") && e.to_string().contains("no streams"),
        "{e}"
    );
}
