//! NWB files: the small files pynwb wrote for the `nwb` fuzz corpus (their making is in the
//! test below each name), read for the values the writer was given; reads that cross chunk
//! boundaries equal the same samples of a whole read; a truncated file is an error naming it.

use std::path::PathBuf;

use dspk_io::{FileFormat, NwbRecording, OpenOptions, detect, nwb_series, open_with};
use dspk_types::{RecordingSource, SignalUnit};

fn seed(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus/nwb")
        .join(name)
}

/// pynwb: int16 (40 × 3), gzip, chunks (16, 3), `rate` 30000, `starting_time` 0.5,
/// `conversion` 2e-6, `offset` 1e-5, `channel_conversion` [1, 0.5, 2] (float32); electrodes
/// `c0`…`c2` at (0, 0), (1, 10), (2, 20), groups g0, g0, g1.
const INT16_GZIP: &str = "10fc282fb89318d37da997c5e6b9b5bc55e40b19";
/// float32 (20 × 2), electrodes [2, 0], `timestamps` 1 + k / 1000.
const FLOAT32_TIMESTAMPS: &str = "c62dd3a1d430cbd64ffb36039a384c3028c9d734";
/// int16 (30 × 3), `rate` 1000, `conversion` and `channel_conversion` both 5e-8.
const DOUBLE_SCALED: &str = "df285fca8e1e13863972ae6c794ec6005688c065";
/// The first 4096 bytes of `INT16_GZIP`.
const TRUNCATED: &str = "c3ddb620a671067688129b8190c0d49764fa6079";

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-6 * b.abs().max(1e-12)
}

#[test]
fn int16_gzip_with_rate_and_channel_conversion() {
    let path = seed(INT16_GZIP);
    assert_eq!(
        nwb_series(&path).unwrap(),
        vec!["acquisition/es".to_string()]
    );
    let d = detect(&path).unwrap();
    assert_eq!(d.format, FileFormat::Nwb);
    let rec = NwbRecording::open(&path, None).unwrap();
    let info = rec.info();
    assert_eq!((info.channel_count(), info.samples), (3, 40));
    assert_eq!(info.sample_rate.as_ratio(), (30_000, 1));
    assert_eq!(info.start_time.as_seconds_f64(), 0.5);
    let names: Vec<&str> = info.channels.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["c0", "c1", "c2"]);
    for (ch, want) in info.channels.iter().zip([2.0, 1.0, 4.0]) {
        assert!(
            close(f64::from(ch.gain), want),
            "gain {} for {want}",
            ch.gain
        );
        assert!(close(f64::from(ch.offset), 10.0), "offset {}", ch.offset);
        assert_eq!(ch.unit, SignalUnit::Microvolt);
    }
    let probe = info.probe.as_ref().expect("rel_x and rel_y give a probe");
    let placed: Vec<(f64, f64, u32)> = (0..3)
        .map(|c| {
            let k = probe.contact(c).unwrap();
            (k.x_um, k.y_um, k.shank)
        })
        .collect();
    assert_eq!(placed, [(0.0, 0.0, 0), (1.0, 10.0, 0), (2.0, 20.0, 1)]);
    assert_eq!(rec.chunk_samples(), Some(16));
    assert!(rec.warnings().is_empty());

    // Reads across the chunk boundaries at 16 and 32 equal a whole read's samples.
    let mut whole = vec![0f32; 3 * 40];
    rec.read(&[0, 1, 2], 0..40, &mut whole).unwrap();
    let mut stored = vec![0u8; 3 * 40 * 2];
    rec.read_stored(&[0, 1, 2], 0..40, &mut stored).unwrap();
    for c in 0..3 {
        let ch = &info.channels[c];
        for s in 0..40 {
            let raw = i16::from_le_bytes([stored[(c * 40 + s) * 2], stored[(c * 40 + s) * 2 + 1]]);
            assert_eq!(whole[c * 40 + s], f32::from(raw) * ch.gain + ch.offset);
        }
    }
    assert!(stored.chunks_exact(2).any(|b| b != [0, 0]), "all-zero data");
    let mut part = vec![0f32; 2 * 25];
    rec.read(&[2, 0], 10..35, &mut part).unwrap();
    assert_eq!(part[..25], whole[2 * 40 + 10..2 * 40 + 35]);
    assert_eq!(part[25..], whole[10..35]);
    let mut frames = vec![0f32; 3 * 25];
    rec.read_native(10..35, &mut frames).unwrap();
    for s in 0..25 {
        for c in 0..3 {
            assert_eq!(frames[s * 3 + c], whole[c * 40 + 10 + s]);
        }
    }
    // Split across any number of threads (pieces of whole chunk rows), the same values.
    let mut rec = rec;
    for threads in [1, 2, 3, 7] {
        rec.set_read_threads(threads);
        for range in [0..40, 10..35, 15..17, 31..33, 39..40] {
            let n = (range.end - range.start) as usize;
            let mut got = vec![0f32; 3 * n];
            rec.read_native(range.clone(), &mut got).unwrap();
            let want: Vec<f32> = (range.start as usize..range.end as usize)
                .flat_map(|s| (0..3).map(move |c| (c, s)))
                .map(|(c, s)| whole[c * 40 + s])
                .collect();
            assert_eq!(got, want, "{threads} threads, samples {range:?}");
        }
    }
}

#[test]
fn float32_with_timestamps_and_a_permuted_region() {
    let rec = NwbRecording::open(seed(FLOAT32_TIMESTAMPS), Some("es")).unwrap();
    let info = rec.info();
    assert_eq!((info.channel_count(), info.samples), (2, 20));
    assert!(close(info.sample_rate.rate_hz(), 1000.0));
    assert!(close(info.measured_rate.unwrap().rate_hz(), 1000.0));
    assert!(close(info.start_time.as_seconds_f64(), 1.0));
    let names: Vec<&str> = info.channels.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["c2", "c0"]);
    assert!(
        info.channels
            .iter()
            .all(|c| c.gain == 1e6 && c.offset == 0.0)
    );
    let probe = info.probe.as_ref().unwrap();
    assert_eq!(probe.contact(0).unwrap().y_um, 20.0);
    assert_eq!(probe.contact(1).unwrap().shank, 0);
}

#[test]
fn double_scaling_is_read_as_the_specification_says_and_warned() {
    let rec = NwbRecording::open(seed(DOUBLE_SCALED), Some("acquisition/es")).unwrap();
    let gain = f64::from(rec.info().channels[0].gain);
    assert!(close(gain, f64::from(5e-8f32) * f64::from(5e-8f32) * 1e6));
    assert_eq!(rec.warnings().len(), 1);
    assert!(
        rec.warnings()[0].contains("conversion and channel_conversion are both 0.00000005"),
        "{}",
        rec.warnings()[0]
    );
}

#[test]
fn bad_choices_and_bad_files_are_errors_naming_the_file() {
    let path = seed(INT16_GZIP);
    let e = open_with(
        &path,
        &OpenOptions {
            stream: Some("lfp".into()),
        },
    )
    .unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("no ElectricalSeries 'lfp'") && text.contains("'acquisition/es'"),
        "{text}"
    );
    let cut = seed(TRUNCATED);
    let e = NwbRecording::open(&cut, None).unwrap_err().to_string();
    assert!(e.contains(&cut.display().to_string()), "{e}");
}
