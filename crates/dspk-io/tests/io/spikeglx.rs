//! SpikeGLX files built from hand-written `.meta` text, read to the µV values computed by hand
//! from the gain formulas (written inline here, independent of the library's code).

use std::path::{Path, PathBuf};

use dspk_io::{SpikeGlxChannelKind, SpikeGlxRecording, SpikeGlxStream};
use dspk_types::conformance::{SplitMix64, check_all};
use dspk_types::{
    ChannelKind, DspError, MemoryOrder, RationalTime, RecordingSource, SampleFormat, SampleRate,
    SignalUnit,
};

use crate::common::{Scratch, write_text};

/// Random int16 frames (time-major), `channels × samples`.
fn frames(channels: usize, samples: usize, seed: u64) -> Vec<i16> {
    let mut rng = SplitMix64::new(seed);
    (0..channels * samples)
        .map(|_| rng.next_u64() as i16)
        .collect()
}

/// Writes `<name>.bin` (the frames, plus `extra` junk bytes) and `<name>.meta` (the text plus
/// a correct `fileSizeBytes` line when `size` is true). Returns the `.bin` path.
fn write_recording(
    dir: &Scratch,
    name: &str,
    meta: &str,
    data: &[i16],
    extra: usize,
    size: bool,
) -> PathBuf {
    let bin = dir.path(&format!("{name}.bin"));
    let mut bytes: Vec<u8> = data.iter().flat_map(|v| v.to_le_bytes()).collect();
    bytes.extend(std::iter::repeat_n(0x77u8, extra));
    std::fs::write(&bin, &bytes).expect("write bin");
    let mut text = meta.trim().to_string();
    if size {
        text.push_str(&format!("\nfileSizeBytes={}", bytes.len()));
    }
    text.push('\n');
    write_text(&bin.with_extension("meta"), &text);
    bin
}

/// Asserts every value of `rec` is `stored × gains[c]` (µV gains computed by the test).
fn assert_scaled(rec: &SpikeGlxRecording, data: &[i16], gains: &[f32], ctx: &str) {
    let c = gains.len();
    let n = rec.info().samples as usize;
    assert_eq!(rec.info().channel_count(), c, "{ctx}: channel count");
    let all: Vec<usize> = (0..c).collect();
    let mut out = vec![0f32; c * n];
    rec.read(&all, 0..n as u64, &mut out).expect("read");
    for ch in 0..c {
        for s in 0..n {
            let want = f32::from(data[s * c + ch]) * gains[ch];
            let got = out[ch * n + s];
            assert!(
                (got - want).abs() <= want.abs() * 1e-6,
                "{ctx}: channel {ch} sample {s}: got {got}, expected {want}"
            );
        }
    }
}

fn names(rec: &SpikeGlxRecording) -> Vec<String> {
    rec.info().channels.iter().map(|c| c.name.clone()).collect()
}

fn kinds(rec: &SpikeGlxRecording) -> Vec<ChannelKind> {
    rec.info().channels.iter().map(|c| c.kind).collect()
}

const NP1_AP_META: &str = "
typeThis=imec
imSampRate=30000.0
nSavedChans=5
snsApLfSy=4,0,1
acqApLfSy=4,4,1
snsSaveChanSubset=0:3,8
imAiRangeMax=0.6
imAiRangeMin=-0.6
imDatPrb_type=0
firstSample=84149244
~imroTbl=(0,4)(0 0 0 500 250 1)(1 0 0 250 125 1)(2 0 0 1000 500 1)(3 0 0 50 2400 1)
~snsChanMap=(4,4,1)(AP0;0:0)(AP1;1:1)(AP2;2:2)(AP3;3:3)(SY0;8:8)
~snsShankMap=(1,2,480)(0:0:0:1)(0:1:0:1)(0:0:1:1)(0:1:1:1)
";

#[test]
fn np1_ap_stream_with_an_imro_table() {
    let dir = Scratch::new("np1-ap");
    let data = frames(5, 1_001, 0x5613_0001);
    let bin = write_recording(&dir, "run_g0_t0.imec0.ap", NP1_AP_META, &data, 0, true);
    let rec = SpikeGlxRecording::open(&bin).expect("open");
    // NP1.0: imAiRangeMax / 512 / gain × 1e6 µV per count.
    let uv = |gain: f64| (0.6 / 512.0 / gain * 1e6) as f32;
    assert_eq!(uv(500.0), 2.34375);
    assert_scaled(
        &rec,
        &data,
        &[uv(500.0), uv(250.0), uv(1000.0), uv(50.0), 1.0],
        "NP1.0 AP",
    );
    let info = rec.info();
    assert_eq!(names(&rec), ["AP0", "AP1", "AP2", "AP3", "SY0"]);
    assert_eq!(info.channels[0].unit, SignalUnit::Microvolt);
    assert_eq!(info.channels[4].unit, SignalUnit::Dimensionless);
    assert_eq!(
        info.sample_rate,
        SampleRate::from_ratio(30_000, 1).expect("rate")
    );
    assert_eq!(
        info.start_time,
        RationalTime::new(84_149_244, 30_000).expect("time")
    );
    assert_eq!(
        (info.samples, info.format, info.order),
        (1_001, SampleFormat::I16, MemoryOrder::TimeMajor)
    );
    assert_eq!(
        info.metadata.get("~imroTbl").map(String::as_str),
        Some("(0,4)(0 0 0 500 250 1)(1 0 0 250 125 1)(2 0 0 1000 500 1)(3 0 0 50 2400 1)")
    );
    assert_eq!(
        info.metadata.get("typeThis").map(String::as_str),
        Some("imec")
    );
    assert_eq!(info.metadata.len(), 14);
    assert_eq!(rec.stream(), SpikeGlxStream::Imec);
    assert_eq!(rec.saved_channels(), [0, 1, 2, 3, 8]);
    assert_eq!(rec.channel_kinds()[4], SpikeGlxChannelKind::Sync);
    // snsApLfSy=4,0,1 with channels 0:3,8 saved: acquisition channel 8 (after 4 AP and 4 LF)
    // is the sync word, marked in the description every face reads.
    assert_eq!(
        kinds(&rec),
        [[ChannelKind::Signal; 4].as_slice(), &[ChannelKind::Sync]].concat()
    );
    assert!(rec.warnings().is_empty());
    // The stored values are the raw int16.
    let mut stored = vec![0u8; 2 * 10];
    rec.read_stored(&[4, 1], 5..10, &mut stored)
        .expect("read_stored");
    let data_ref = &data;
    let want: Vec<u8> = [4usize, 1]
        .iter()
        .flat_map(|&c| (5..10).flat_map(move |s| data_ref[s * 5 + c].to_le_bytes()))
        .collect();
    assert_eq!(stored, want);
    check_all(&rec, 0x5613_0001);

    // Opened through its .meta too.
    let again = SpikeGlxRecording::open(bin.with_extension("meta")).expect("open by .meta");
    assert_eq!(again.info(), rec.info());
}

#[test]
fn np1_lf_stream_and_the_all_subset() {
    let dir = Scratch::new("np1-lf");
    let lf_meta = NP1_AP_META
        .replace("imSampRate=30000.0", "imSampRate=2500.0")
        .replace("snsApLfSy=4,0,1", "snsApLfSy=0,4,1")
        .replace("snsSaveChanSubset=0:3,8", "snsSaveChanSubset=4:8")
        .replace(
            "(AP0;0:0)(AP1;1:1)(AP2;2:2)(AP3;3:3)",
            "(LF0;4:4)(LF1;5:5)(LF2;6:6)(LF3;7:7)",
        );
    let data = frames(5, 300, 0x5613_0002);
    let bin = write_recording(&dir, "run_g0_t0.imec0.lf", &lf_meta, &data, 0, true);
    let rec = SpikeGlxRecording::open(&bin).expect("open");
    let uv = |gain: f64| (0.6 / 512.0 / gain * 1e6) as f32;
    assert_scaled(
        &rec,
        &data,
        &[uv(250.0), uv(125.0), uv(500.0), uv(2400.0), 1.0],
        "NP1.0 LF",
    );
    assert_eq!(names(&rec), ["LF0", "LF1", "LF2", "LF3", "SY0"]);
    assert_eq!(
        rec.info().sample_rate,
        SampleRate::from_ratio(2_500, 1).expect("rate")
    );
    assert_eq!(rec.channel_kinds()[0], SpikeGlxChannelKind::Lf);

    // "all" in an AP file without a channel map: AP channels then the sync channel.
    let all_meta = NP1_AP_META
        .replace("snsSaveChanSubset=0:3,8", "snsSaveChanSubset=all")
        .lines()
        .filter(|l| !l.starts_with("~snsChanMap"))
        .collect::<Vec<_>>()
        .join("\n");
    let bin = write_recording(&dir, "all.imec0.ap", &all_meta, &data, 0, true);
    let rec = SpikeGlxRecording::open(&bin).expect("open all");
    assert_eq!(rec.saved_channels(), [0, 1, 2, 3, 8]);
    assert_eq!(names(&rec), ["AP0", "AP1", "AP2", "AP3", "SY0"]);
    assert_scaled(
        &rec,
        &data,
        &[uv(500.0), uv(250.0), uv(1000.0), uv(50.0), 1.0],
        "NP1.0 all",
    );
}

#[test]
fn np1_saved_subset_of_a_full_probe() {
    let dir = Scratch::new("np1-subset");
    let ap_gain = |i: usize| [50.0, 125.0, 250.0, 500.0, 1000.0, 1500.0, 2500.0, 3000.0][i % 8];
    let imro: String = (0..384)
        .map(|i| format!("({i} 0 0 {} 250 1)", ap_gain(i)))
        .collect();
    let meta = format!(
        "typeThis=imec\nimSampRate=30000\nnSavedChans=8\nsnsApLfSy=7,0,1\nacqApLfSy=384,384,1\n\
         snsSaveChanSubset=0:5,100,768\nimAiRangeMax=0.6\nimAiRangeMin=-0.6\nimMaxInt=512\n\
         ~imroTbl=(0,384){imro}\n"
    );
    let data = frames(8, 257, 0x5613_0003);
    let bin = write_recording(&dir, "sub.imec0.ap", &meta, &data, 0, true);
    let rec = SpikeGlxRecording::open(&bin).expect("open");
    let uv = |gain: f64| (0.6 / 512.0 / gain * 1e6) as f32;
    let mut gains: Vec<f32> = [0, 1, 2, 3, 4, 5, 100]
        .iter()
        .map(|&i| uv(ap_gain(i)))
        .collect();
    gains.push(1.0);
    assert_scaled(&rec, &data, &gains, "NP1.0 subset");
    assert_eq!(
        names(&rec),
        ["AP0", "AP1", "AP2", "AP3", "AP4", "AP5", "AP100", "SY0"]
    );
    assert_eq!(rec.saved_channels(), [0, 1, 2, 3, 4, 5, 100, 768]);
}

#[test]
fn np2_stream_with_a_single_gain_and_a_calibrated_rate() {
    let dir = Scratch::new("np2");
    let names_map: String = (0..6)
        .map(|i| format!("(AP{i};{i}:{i})"))
        .collect::<String>()
        + "(AP100;100:100)(SY0;384:384)";
    let imro: String = (0..384).map(|i| format!("({i} 0 0 {i})")).collect();
    let meta = format!(
        "typeThis=imec\nimSampRate=29999.4325\nnSavedChans=8\nsnsApLfSy=7,0,1\nacqApLfSy=384,0,1\n\
         snsSaveChanSubset=0:5,100,384\nimAiRangeMax=0.5\nimAiRangeMin=-0.5\nimMaxInt=8192\n\
         imDatPrb_type=21\nimChan0apGain=80\nfirstSample=7\n~imroTbl=(21,384){imro}\n~snsChanMap=(384,0,1){names_map}\n"
    );
    let data = frames(8, 500, 0x5613_0004);
    let bin = write_recording(&dir, "np2.imec1.ap", &meta, &data, 0, true);
    let rec = SpikeGlxRecording::open(&bin).expect("open");
    // NP2.0: imAiRangeMax / imMaxInt / imChan0apGain × 1e6 µV per count.
    let uv = (0.5 / 8192.0 / 80.0 * 1e6) as f32;
    let mut gains = vec![uv; 7];
    gains.push(1.0);
    assert_scaled(&rec, &data, &gains, "NP2.0");
    assert_eq!(
        names(&rec),
        ["AP0", "AP1", "AP2", "AP3", "AP4", "AP5", "AP100", "SY0"]
    );
    let rate = SampleRate::from_ratio(299_994_325, 10_000).expect("rate");
    assert_eq!(rec.info().sample_rate, rate, "29999.4325 Hz kept exact");
    assert_eq!(
        rec.info().start_time,
        RationalTime::from_samples(7, rate).expect("time")
    );
    check_all(&rec, 0x5613_0004);

    // Without imChan0apGain and imMaxInt: NP2.0 defaults (gain 80, 8192).
    let bare: String = meta
        .lines()
        .filter(|l| !l.starts_with("imChan0apGain") && !l.starts_with("imMaxInt"))
        .map(|l| {
            if l == "imDatPrb_type=21" {
                "imDatPrb_type=24"
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let bin = write_recording(&dir, "np2b.imec0.ap", &bare, &data, 0, true);
    let rec = SpikeGlxRecording::open(&bin).expect("open defaults");
    assert_scaled(&rec, &data, &gains, "NP2.0 defaults");

    // An NP2.0 imChan0apGain of another value is honoured.
    let other = meta.replace("imChan0apGain=80", "imChan0apGain=100");
    let bin = write_recording(&dir, "np2c.imec0.ap", &other, &data, 0, true);
    let rec = SpikeGlxRecording::open(&bin).expect("open gain 100");
    let mut gains100 = vec![(0.5 / 8192.0 / 100.0 * 1e6) as f32; 7];
    gains100.push(1.0);
    assert_scaled(&rec, &data, &gains100, "NP2.0 gain 100");
}

#[test]
fn ni_stream_gains_by_channel_type() {
    let dir = Scratch::new("nidq");
    let meta = "
typeThis=nidq
niSampRate=25000.123
niAiRangeMax=5
niAiRangeMin=-5
niMaxInt=32768
niMNGain=200
niMAGain=2
snsMnMaXaDw=2,1,2,1
nSavedChans=6
snsSaveChanSubset=all
firstSample=250001
~snsChanMap=(2,1,2,1,1)(MN0;0:0)(MN1;1:1)(MA0;2:2)(XA0;3:3)(XA1;4:4)(XD0;5:5)
";
    let data = frames(6, 400, 0x5613_0005);
    let bin = write_recording(&dir, "run_g0_t0.nidq", meta, &data, 0, true);
    let rec = SpikeGlxRecording::open(&bin).expect("open");
    // NI: niAiRangeMax / niMaxInt / channel gain × 1e6 µV per count; digital words unscaled.
    let uv = |gain: f64| (5.0 / 32768.0 / gain * 1e6) as f32;
    assert_scaled(
        &rec,
        &data,
        &[uv(200.0), uv(200.0), uv(2.0), uv(1.0), uv(1.0), 1.0],
        "NI",
    );
    assert_eq!(names(&rec), ["MN0", "MN1", "MA0", "XA0", "XA1", "XD0"]);
    assert_eq!(rec.stream(), SpikeGlxStream::Nidq);
    assert_eq!(rec.channel_kinds()[5], SpikeGlxChannelKind::Digital);
    // snsMnMaXaDw=2,1,2,1: five analog channels, then one digital word.
    assert_eq!(
        kinds(&rec),
        [[ChannelKind::Signal; 5].as_slice(), &[ChannelKind::Digital]].concat()
    );
    assert_eq!(rec.info().channels[5].unit, SignalUnit::Dimensionless);
    let rate = SampleRate::from_ratio(25_000_123, 1_000).expect("rate");
    assert_eq!(rec.info().sample_rate, rate);
    assert_eq!(
        rec.info().start_time,
        RationalTime::from_samples(250_001, rate).expect("time")
    );

    // niMaxInt absent: 32768.
    let bare = meta.replace("niMaxInt=32768\n", "");
    let bin = write_recording(&dir, "b.nidq", &bare, &data, 0, true);
    let rec = SpikeGlxRecording::open(&bin).expect("open");
    assert_scaled(
        &rec,
        &data,
        &[uv(200.0), uv(200.0), uv(2.0), uv(1.0), uv(1.0), 1.0],
        "NI default maxint",
    );
}

fn open_err(bin: &Path) -> DspError {
    match SpikeGlxRecording::open(bin) {
        Ok(_) => panic!("{} opened but should not have", bin.display()),
        Err(e) => e,
    }
}

#[test]
fn file_size_checks_and_partial_frames() {
    let dir = Scratch::new("sizes");
    let data = frames(5, 100, 0x5613_0006);
    // A partial last frame (fileSizeBytes agrees with the odd size): dropped with a warning.
    let bin = write_recording(&dir, "partial.imec0.ap", NP1_AP_META, &data, 7, true);
    let rec = SpikeGlxRecording::open(&bin).expect("open");
    assert_eq!(rec.info().samples, 100);
    assert_eq!(rec.warnings().len(), 1);
    assert!(
        rec.warnings()[0].contains(&bin.display().to_string())
            && rec.warnings()[0].contains("7 trailing bytes")
    );
    let uv = |gain: f64| (0.6 / 512.0 / gain * 1e6) as f32;
    assert_scaled(
        &rec,
        &data,
        &[uv(500.0), uv(250.0), uv(1000.0), uv(50.0), 1.0],
        "partial",
    );

    // fileSizeBytes that disagrees with the file (a truncated file): an error naming both.
    let meta = format!("{NP1_AP_META}\nfileSizeBytes=5000\n");
    let bin = write_recording(&dir, "trunc.imec0.ap", &meta, &data, 0, false);
    let e = open_err(&bin).to_string();
    assert!(
        e.contains(&bin.display().to_string()) && e.contains("5000") && e.contains("1000 bytes"),
        "{e}"
    );
    // Bigger than stated: also an error.
    let meta = format!("{NP1_AP_META}\nfileSizeBytes=990\n");
    let bin = write_recording(&dir, "long.imec0.ap", &meta, &data, 0, false);
    let e = open_err(&bin).to_string();
    assert!(e.contains("990") && e.contains("1000 bytes"), "{e}");
}

#[test]
fn bad_meta_files_are_clear_errors_naming_the_file() {
    let dir = Scratch::new("bad-meta");
    let data = frames(5, 10, 1);
    // A .bin without its .meta.
    let bin = dir.path("lonely.imec0.ap.bin");
    std::fs::write(&bin, [0u8; 10]).expect("write");
    let e = open_err(&bin).to_string();
    assert!(
        e.contains("lonely.imec0.ap.meta") && e.contains("missing .meta"),
        "{e}"
    );

    let cases: Vec<(String, &str)> = vec![
        (
            NP1_AP_META.replace("imSampRate=30000.0\n", ""),
            "missing imSampRate",
        ),
        (
            NP1_AP_META.replace("imSampRate=30000.0", "imSampRate=fast"),
            "imSampRate=fast",
        ),
        (
            NP1_AP_META.replace("imSampRate=30000.0", "imSampRate=0"),
            "imSampRate=0",
        ),
        (
            NP1_AP_META.replace("nSavedChans=5", "nSavedChans=6"),
            "nSavedChans is 6",
        ),
        (
            NP1_AP_META.replace("nSavedChans=5", "nSavedChans=0"),
            "nSavedChans",
        ),
        (
            NP1_AP_META.replace("snsSaveChanSubset=0:3,8", "snsSaveChanSubset=0:2,2,8"),
            "twice",
        ),
        (
            NP1_AP_META.replace("snsSaveChanSubset=0:3,8", "snsSaveChanSubset=0:3,9"),
            "beyond",
        ),
        (
            NP1_AP_META.replace("snsSaveChanSubset=0:3,8", "snsSaveChanSubset=3:0"),
            "snsSaveChanSubset",
        ),
        (
            NP1_AP_META.replace("(3 0 0 50 2400 1)", ""),
            "~imroTbl has 3 entries",
        ),
        (
            NP1_AP_META.replace("(3 0 0 50 2400 1)", "(3 0 0 0 2400 1)"),
            "gain 0",
        ),
        (
            NP1_AP_META.replace("imAiRangeMax=0.6\n", ""),
            "missing imAiRangeMax",
        ),
        (
            NP1_AP_META.replace("imDatPrb_type=0", "imDatPrb_type=4242"),
            "imMaxInt",
        ),
        (
            NP1_AP_META.replace("imDatPrb_type=0", "imDatPrb_type=4242") + "imMaxInt=512\n",
            "no gain for probe type 4242",
        ),
        (
            NP1_AP_META.replace("typeThis=imec", "typeThis=obx"),
            "'obx'",
        ),
        (
            NP1_AP_META.replace("(AP1;1:1)", "(AP1;one:1)"),
            "~snsChanMap",
        ),
        (
            NP1_AP_META.replace("firstSample=84149244", "firstSample=-1"),
            "firstSample",
        ),
        (
            NP1_AP_META.to_string() + "this line has no equals sign\n",
            "not key=value",
        ),
        (
            NP1_AP_META.replace("nSavedChans=5", "nSavedChans=999999999999"),
            "nSavedChans",
        ),
        (
            NP1_AP_META.replace("snsSaveChanSubset=0:3,8", "snsSaveChanSubset=0:99999999999"),
            "snsSaveChanSubset",
        ),
        (
            NP1_AP_META.replace("acqApLfSy=4,4,1", "acqApLfSy=4,99999999999999999,1"),
            "acqApLfSy",
        ),
    ];
    for (i, (meta, needle)) in cases.iter().enumerate() {
        let bin = write_recording(&dir, &format!("bad{i}.imec0.ap"), meta, &data, 0, true);
        let e = open_err(&bin);
        let text = e.to_string();
        let meta_path = bin.with_extension("meta").display().to_string();
        assert!(
            text.contains(&meta_path) && text.contains(needle),
            "case {i}: error '{text}' should name {meta_path} and '{needle}'"
        );
        if *needle == "'obx'" || needle.starts_with("no gain") {
            assert!(
                matches!(e, DspError::UnsupportedFormat(_)),
                "case {i}: {e:?}"
            );
        }
    }
}
