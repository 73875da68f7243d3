//! `open` and `detect`: the format from the files next to a path.

use dspk_io::{FileFormat, WriteOptions, detect, detect_format, open, sidecar_path, write_binary};
use dspk_types::{DspError, NoProgress, RecordingSource, SyntheticConfig, SyntheticRecording};

use crate::common::{Scratch, write_text};

#[test]
fn binary_and_spikeglx_are_detected_and_opened() {
    let dir = Scratch::new("detect");
    let src = SyntheticRecording::new(
        SyntheticConfig::default()
            .with_channels(8, vec![], vec![])
            .with_samples(1_000),
    )
    .expect("synthetic");
    let bin = dir.path("a.raw");
    write_binary(&src, &bin, &WriteOptions::default(), &NoProgress).expect("write");
    let d = detect(&bin).expect("detect binary");
    assert_eq!(d.format, FileFormat::Binary);
    assert_eq!(
        (d.data_path.as_path(), d.metadata_path.clone()),
        (bin.as_path(), sidecar_path(&bin))
    );
    let rec = open(&bin).expect("open binary");
    assert_eq!(rec.format(), FileFormat::Binary);
    assert_eq!(&d.info, rec.info());
    assert_eq!(
        detect(sidecar_path(&bin)).expect("detect by sidecar").info,
        d.info
    );
    let shared = rec.into_source();
    assert_eq!(shared.info().samples, 1_000);

    let meta = "typeThis=imec\nimSampRate=30000\nnSavedChans=2\nsnsApLfSy=1,0,1\nacqApLfSy=1,1,1\n\
                snsSaveChanSubset=0,2\nimAiRangeMax=0.6\n~imroTbl=(0,1)(0 0 0 500 250 1)\nfileSizeBytes=40\n";
    let sg = dir.path("r.imec0.ap.bin");
    std::fs::write(&sg, [1u8; 40]).expect("bin");
    write_text(&sg.with_extension("meta"), meta);
    for p in [sg.clone(), sg.with_extension("meta")] {
        assert_eq!(detect_format(&p).expect("format"), FileFormat::SpikeGlx);
        let d = detect(&p).expect("detect spikeglx");
        assert_eq!(d.data_path, sg);
        assert_eq!(d.info.samples, 10);
        let rec = open(&p).expect("open spikeglx");
        assert_eq!(rec.format(), FileFormat::SpikeGlx);
        assert_eq!(&d.info, rec.info());
        assert!(rec.warnings().is_empty());
    }
}

#[test]
fn detect_reads_no_data() {
    // 8 GiB of sparse file: detect answers from the sidecar and the size alone.
    let dir = Scratch::new("sparse");
    let path = dir.path("huge.bin");
    let f = std::fs::File::create(&path).expect("create");
    f.set_len(8 << 30).expect("sparse size");
    write_text(
        &sidecar_path(&path),
        r#"{"sample_rate": 30000, "channel_count": 384, "format": "int16", "order": "time-major"}"#,
    );
    let t = std::time::Instant::now();
    let d = detect(&path).expect("detect");
    assert_eq!(d.info.samples, (8u64 << 30) / 768);
    assert_eq!(
        d.warnings.len(),
        1,
        "8 GiB is not whole frames of 768 bytes"
    );
    assert!(t.elapsed().as_secs_f64() < 5.0);
}

#[test]
fn unknown_paths_are_clear_errors() {
    let dir = Scratch::new("unknown");
    let plain = dir.path("plain.dat");
    std::fs::write(&plain, [0u8; 8]).expect("write");
    let e = open(&plain).expect_err("no sidecar, no meta");
    assert!(matches!(e, DspError::UnsupportedFormat(_)), "{e:?}");
    let text = e.to_string();
    assert!(
        text.contains("plain.dat.json") && text.contains("SpikeGLX") && text.contains("sidecar"),
        "{text}"
    );

    let missing = dir.path("nothing.bin");
    let e = detect(&missing).expect_err("missing");
    assert!(
        e.to_string().contains("nothing.bin") && e.to_string().contains("no such file"),
        "{e}"
    );

    let e = open(&dir.dir).expect_err("a directory");
    assert!(matches!(e, DspError::UnsupportedFormat(_)), "{e:?}");

    let meta_only = dir.path("x.meta");
    write_text(&meta_only, "typeThis=imec\n");
    let e = open(&meta_only).expect_err("no .bin");
    assert!(
        e.to_string().contains("x.bin") && e.to_string().contains("missing .bin"),
        "{e}"
    );
}
