//! SpikeGLX runs split into `_t0`, `_t1`, … files, opened as one recording: placed by
//! `firstSample`, contiguous files one segment, a gap a new segment or zeros, rates compared
//! exactly, a missing file named; raw files stating no start time end to end. Values checked
//! against each file read alone.

use std::path::PathBuf;

use dspk_io::{SpikeGlxRecording, open_joined, order_run_files, spikeglx_run_files};
use dspk_types::conformance::SplitMix64;
use dspk_types::{ConcatOptions, DspError, GapFill, RecordingSource, SampleRate};

use crate::common::{Scratch, all_values, write_text};

const CH: usize = 5;

/// An NP1.0 AP file's `.meta` with `firstSample` and `imSampRate` of the caller's.
fn meta(first: u64, rate: &str, bytes: usize) -> String {
    format!(
        "typeThis=imec\nimSampRate={rate}\nnSavedChans={CH}\nsnsApLfSy=4,0,1\nacqApLfSy=4,4,1\n\
         snsSaveChanSubset=0:3,8\nimAiRangeMax=0.6\nimAiRangeMin=-0.6\nimDatPrb_type=0\n\
         firstSample={first}\nfileSizeBytes={bytes}\n\
         ~imroTbl=(0,4)(0 0 0 500 250 1)(1 0 0 250 125 1)(2 0 0 1000 500 1)(3 0 0 50 2400 1)\n\
         ~snsChanMap=(4,4,1)(AP0;0:0)(AP1;1:1)(AP2;2:2)(AP3;3:3)(SY0;8:8)\n"
    )
}

/// Writes trigger file `_t<t>` of run `r_g0` with `samples` random frames from clock `first`.
fn trigger(dir: &Scratch, t: u64, first: u64, samples: usize, rate: &str, seed: u64) -> PathBuf {
    let mut rng = SplitMix64::new(seed);
    let bytes: Vec<u8> = (0..CH * samples)
        .flat_map(|_| (rng.next_u64() as i16).to_le_bytes())
        .collect();
    let bin = dir.path(&format!("r_g0_t{t}.imec0.ap.bin"));
    std::fs::write(&bin, &bytes).expect("write bin");
    write_text(&bin.with_extension("meta"), &meta(first, rate, bytes.len()));
    bin
}

/// Channel-major values of each file alone, joined end to end per channel.
fn joined_values(paths: &[PathBuf]) -> Vec<f32> {
    let parts: Vec<(usize, Vec<f32>)> = paths
        .iter()
        .map(|p| {
            let rec = SpikeGlxRecording::open(p).expect("open one");
            (rec.info().samples as usize, all_values(&rec))
        })
        .collect();
    let mut out = Vec::new();
    for c in 0..CH {
        for (n, v) in &parts {
            out.extend_from_slice(&v[c * n..(c + 1) * n]);
        }
    }
    out
}

#[test]
fn contiguous_trigger_files_are_one_segment_equal_to_each_file_read_alone() {
    let dir = Scratch::new("join-contiguous");
    let t = [
        trigger(&dir, 0, 1_000, 700, "30000.0", 1),
        trigger(&dir, 1, 1_700, 500, "30000.0", 2),
        trigger(&dir, 2, 2_200, 300, "30000.0", 3),
    ];
    // The run is found from any of its files, in trigger order.
    let found = spikeglx_run_files(&t[1]).expect("run files");
    assert_eq!(found, t.to_vec());
    let j = open_joined(
        &[t[2].clone(), t[0].clone(), t[1].clone()],
        ConcatOptions::default(),
    )
    .expect("join");
    assert_eq!(j.paths, t.to_vec());
    let info = j.recording.info();
    assert_eq!(info.samples, 1_500);
    assert!(info.segments.is_none(), "{:?}", info.segments);
    assert_eq!(info.segments().list()[0].first_sample, 1_000);
    assert_eq!(all_values(&j.recording), joined_values(&t));
    // A read across the seams of all three.
    let mut out = vec![0f32; 2 * 900];
    j.recording
        .read(&[4, 1], 300..1_200, &mut out)
        .expect("read");
    let all = joined_values(&t);
    assert_eq!(&out[..900], &all[4 * 1_500 + 300..4 * 1_500 + 1_200]);
    assert_eq!(&out[900..], &all[1_500 + 300..1_500 + 1_200]);
}

#[test]
fn a_gap_between_trigger_files_is_a_segment_or_zeros() {
    let dir = Scratch::new("join-gap");
    let t = [
        trigger(&dir, 0, 0, 600, "30000.0", 4),
        trigger(&dir, 1, 600, 400, "30000.0", 5),
        // 3 000 clock samples (0.1 s) after t1 ends.
        trigger(&dir, 2, 4_000, 500, "30000.0", 6),
    ];
    let j = open_joined(&t, ConcatOptions::default()).expect("join");
    let segs = j.recording.info().segments();
    let got: Vec<_> = segs
        .list()
        .iter()
        .map(|s| (s.start, s.samples, s.first_sample))
        .collect();
    assert_eq!(got, vec![(0, 1_000, 0), (1_000, 500, 4_000)]);
    assert_eq!(segs.gaps()[0].samples, 3_000);
    let rate = SampleRate::from_ratio(30_000, 1).unwrap();
    assert!((segs.gaps()[0].seconds(rate) - 0.1).abs() < 1e-12);
    let mut out = vec![0f32; 20];
    let err = j.recording.read(&[0], 990..1_010, &mut out).unwrap_err();
    assert!(matches!(err, DspError::CrossesSegment { .. }), "{err}");
    // Each segment reads as its files.
    let all = joined_values(&t);
    let mut seg1 = vec![0f32; 500];
    j.recording
        .read(&[2], 1_000..1_500, &mut seg1)
        .expect("segment 1");
    assert_eq!(&seg1[..], &all[2 * 1_500 + 1_000..3 * 1_500]);

    let zeros = ConcatOptions {
        gaps: GapFill::Zeros,
        ..Default::default()
    };
    let z = open_joined(&t, zeros).expect("zero-filled");
    let info = z.recording.info();
    assert_eq!((info.samples, info.segments.is_none()), (4_500, true));
    let mut out = vec![0f32; 4_500];
    z.recording.read(&[3], 0..4_500, &mut out).expect("read");
    assert_eq!(&out[..1_000], &all[3 * 1_500..3 * 1_500 + 1_000]);
    assert!(out[1_000..4_000].iter().all(|&v| v == 0.0));
    assert_eq!(&out[4_000..], &all[3 * 1_500 + 1_000..4 * 1_500]);
}

#[test]
fn a_missing_trigger_file_is_named() {
    let dir = Scratch::new("join-missing");
    let t0 = trigger(&dir, 0, 0, 100, "30000.0", 7);
    let t2 = trigger(&dir, 2, 200, 100, "30000.0", 8);
    let missing = dir.path("r_g0_t1.imec0.ap.bin").display().to_string();
    for err in [
        spikeglx_run_files(&t0).unwrap_err(),
        open_joined(&[t0.clone(), t2.clone()], ConcatOptions::default()).unwrap_err(),
        order_run_files(&[t2, t0]).unwrap_err(),
    ] {
        let text = err.to_string();
        assert!(
            text.contains(&missing) && text.contains("not _t1"),
            "{text}"
        );
    }
}

#[test]
fn a_rate_off_by_94_ppm_is_refused_without_a_tolerance_and_accepted_with_one() {
    let dir = Scratch::new("join-rate");
    let t0 = trigger(&dir, 0, 0, 3_000, "30000", 9);
    // 30 002.826 Hz: +94.2 ppm, an hour of 30 kHz samples lasts 339.1 ms less at it.
    let t1 = trigger(&dir, 1, 3_000, 3_000, "30002.826", 10);
    let err = open_joined(&[t0.clone(), t1.clone()], ConcatOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("r_g0_t1.imec0.ap.bin cannot continue"),
        "{err}"
    );
    assert!(err.contains("+94.2 ppm, 339.1 ms per hour"), "{err}");
    let tolerant = ConcatOptions {
        rate_tolerance_ppm: Some(100.0),
        ..Default::default()
    };
    let j = open_joined(&[t0, t1], tolerant).expect("accepted");
    let warning = j.warnings.last().expect("a warning");
    assert!(
        warning.contains("+94.2 ppm, 339.1 ms per hour"),
        "{warning}"
    );
    assert_eq!(j.recording.info().samples, 6_000);
}

#[test]
fn nominal_and_measured_rates_of_spikeglx_files() {
    let dir = Scratch::new("join-rates");
    let plain = SpikeGlxRecording::open(trigger(&dir, 0, 0, 10, "30000.0", 11)).expect("open");
    let thirty = SampleRate::from_ratio(30_000, 1).unwrap();
    assert_eq!(plain.info().nominal_rate, None);
    assert_eq!(plain.info().measured_rate, Some(thirty));
    let cal = SpikeGlxRecording::open(trigger(&dir, 1, 10, 10, "29999.4325", 12)).expect("open");
    let calibrated: SampleRate = "29999.4325".parse().unwrap();
    assert_eq!(cal.info().sample_rate, calibrated);
    assert_eq!(cal.info().nominal_rate, Some(thirty));
    assert_eq!(cal.info().measured_rate, Some(calibrated));
}

/// A raw int16 file of `channels` × `samples` random values whose sidecar states no start
/// time (`start_time` given: that one); its channel-major values.
fn raw_part(
    dir: &Scratch,
    name: &str,
    samples: usize,
    start_time: Option<&str>,
    seed: u64,
) -> (PathBuf, Vec<f32>) {
    let channels = 3;
    let mut rng = SplitMix64::new(seed);
    let stored: Vec<i16> = (0..channels * samples)
        .map(|_| rng.next_u64() as i16)
        .collect();
    let path = dir.path(name);
    std::fs::write(
        &path,
        stored
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect::<Vec<u8>>(),
    )
    .expect("write raw");
    let start = start_time.map_or_else(String::new, |t| format!(r#", "start_time": "{t}""#));
    write_text(
        &dspk_io::sidecar_path(&path),
        &format!(
            r#"{{"sample_rate": 1000, "channel_count": {channels}, "format": "int16",
                "order": "time-major"{start}}}"#
        ),
    );
    // Time-major stored values to channel-major f32 (gain 1).
    let values = (0..channels)
        .flat_map(|c| (0..samples).map(move |i| (c, i)))
        .map(|(c, i)| f32::from(stored[i * channels + c]))
        .collect();
    (path, values)
}

#[test]
fn raw_files_without_a_start_time_join_end_to_end_in_the_order_given() {
    let dir = Scratch::new("join-unclocked");
    let seed = u64::from(std::process::id());
    eprintln!("seed {seed}");
    let parts = [
        raw_part(&dir, "c.bin", 700, None, seed),
        raw_part(&dir, "a.bin", 300, None, seed + 1),
        raw_part(&dir, "b.bin", 500, None, seed + 2),
    ];
    let paths: Vec<PathBuf> = parts.iter().map(|(p, _)| p.clone()).collect();
    let j = open_joined(&paths, ConcatOptions::default()).expect("join end to end");
    assert_eq!(j.paths, paths, "the order given is kept");
    let info = j.recording.info();
    assert_eq!(info.samples, 1_500);
    assert!(info.segments.is_none(), "one segment: {:?}", info.segments);
    assert_eq!(info.clock, dspk_types::Clock::Unstated);
    let mut want = Vec::new();
    for c in 0..3 {
        for (_, v) in &parts {
            let n = v.len() / 3;
            want.extend_from_slice(&v[c * n..(c + 1) * n]);
        }
    }
    assert_eq!(all_values(&j.recording), want);
    // A file that does state its start (0) after one that does not: it is placed by it, and
    // overlaps.
    let (stated, _) = raw_part(&dir, "d.bin", 100, Some("0"), seed + 3);
    let e = open_joined(
        &[paths[0].clone(), stated.clone()],
        ConcatOptions::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("overlap"), "{e}");
    // Written out, the join still states no clock; a cut that moves the start states it.
    let out = dir.path("joined.bin");
    dspk_io::write_binary(
        &j.recording,
        &out,
        &Default::default(),
        &dspk_types::NoProgress,
    )
    .expect("write");
    let side = std::fs::read_to_string(dspk_io::sidecar_path(&out)).expect("sidecar");
    assert!(!side.contains("start_time"), "{side}");
    let cut = dspk_io::WriteOptions {
        samples: Some(1_000..1_500),
        ..Default::default()
    };
    dspk_io::write_binary(&j.recording, &out, &cut, &dspk_types::NoProgress).expect("write");
    let side = std::fs::read_to_string(dspk_io::sidecar_path(&out)).expect("sidecar");
    assert!(side.contains(r#""start_time": "1""#), "{side}");
}
