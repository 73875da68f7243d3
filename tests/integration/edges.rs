//! Edge modes through the device pass: windows whose halos reach past the recording are padded
//! on the device after decoding; every mode gives the host loader's padded windows bit for bit,
//! on a synthetic recording, a raw file and a recording of two segments (whose ends are padded
//! as recording ends), every channel and a subset.

use std::sync::Arc;

use dspk_io::{WriteOptions, write_binary};
use dspk_stream::{DevicePass, Flow};
use dspk_tests::{TempDir, for_each_runtime, test_rng};
use dspk_types::{
    ChunkSchedule, ConcatOptions, ConcatRecording, EdgeMode, MemoryOrder, NoProgress,
    RecordingSource, SampleFormat, SlicedRecording, SyntheticConfig, SyntheticRecording,
    WindowLoader,
};
use rand::Rng as _;

#[test]
fn every_edge_mode_pads_on_the_device_as_the_host_loader_does() {
    const NAME: &str = "every_edge_mode_pads_on_the_device_as_the_host_loader_does";
    let (seed, mut rng) = test_rng(NAME);
    let dir = TempDir::new(NAME);
    let samples = rng.random_range(9_000..14_000);
    let config = SyntheticConfig::default()
        .with_samples(samples)
        .with_seed(seed);
    let synthetic: Arc<dyn RecordingSource> = Arc::new(SyntheticRecording::new(config).unwrap());
    let path = dir.path().join("edges.bin");
    let options = WriteOptions {
        format: Some(SampleFormat::I16),
        order: Some(MemoryOrder::TimeMajor),
        ..WriteOptions::default()
    };
    write_binary(&*synthetic, &path, &options, &NoProgress).expect("write the raw file");
    let raw = dspk_io::open(&path).expect("open").into_source();
    // Two segments: the file's samples before `cut`, and those from `cut + gap` on (their clock
    // numbers are their sample indices, so the gap starts a segment).
    let cut = rng.random_range(4_000..samples - 4_000);
    let gap = rng.random_range(1..500);
    let first = SlicedRecording::new(raw.clone(), 0..cut, None).expect("first part");
    let second = SlicedRecording::new(raw.clone(), cut + gap..samples, None).expect("second part");
    let segmented: Arc<dyn RecordingSource> = Arc::new(
        ConcatRecording::new(
            vec![Arc::new(first), Arc::new(second)],
            ConcatOptions::default(),
        )
        .expect("two segments"),
    );
    assert_eq!(segmented.info().segments().len(), 2);
    let batch = rng.random_range(1_000..3_000);
    // The last window reads at least `left + 1` samples, so `right <= left` lets reflect and
    // odd pad it (they need more samples than they pad).
    let left = rng.random_range(1..400u64);
    let right = rng.random_range(1..=left);
    let subset: Vec<usize> = (0..rng.random_range(2..9))
        .map(|_| rng.random_range(0..synthetic.info().channel_count()))
        .collect();
    for_each_runtime(NAME, |target, client| {
        for source in [&synthetic, &raw, &segmented] {
            let total = source.info().samples;
            for mode in EdgeMode::ALL {
                let windows =
                    ChunkSchedule::for_recording(source.info(), 0..total, batch, left, right)
                        .and_then(|s| s.with_edge(mode))
                        .expect("schedule")
                        .into_windows();
                for channels in [None, Some(subset.clone())] {
                    let ctx = format!(
                        "{target}, {}, {mode}, seed {seed}, batch {batch}, halos {left}/{right}, \
                         channels {channels:?}",
                        source.info().name
                    );
                    let mut host = Vec::new();
                    let loader = match &channels {
                        Some(c) => WindowLoader::with_channels(&**source, c.clone()).unwrap(),
                        None => WindowLoader::new(&**source),
                    };
                    loader
                        .stream(&windows, |_, values| {
                            host.push(values.to_vec());
                            Ok(())
                        })
                        .expect("the host loader");
                    let mut pass = DevicePass::new(client, source.clone(), windows.clone());
                    if let Some(c) = &channels {
                        pass = pass.channels(c.clone());
                    }
                    let mut seen = 0;
                    pass.run_to_host(|w, values| {
                        let want = &host[seen];
                        let n = loader.channels().len();
                        assert_eq!(values.len(), n * w.padded_len(), "{ctx}: window {seen}");
                        let same = values
                            .iter()
                            .zip(want)
                            .all(|(a, b)| a.to_bits() == b.to_bits());
                        assert!(same, "{ctx}: window {seen} differs from the host loader's");
                        seen += 1;
                        Ok(Flow::Continue)
                    })
                    .expect("the device pass");
                    assert_eq!(seen, windows.len(), "{ctx}");
                    if mode.pads() {
                        // Every segment end is padded in full.
                        let padded_ends = windows
                            .iter()
                            .filter(|w| w.pad_right as u64 == right)
                            .count();
                        assert_eq!(padded_ends, source.info().segments().len(), "{ctx}");
                        let last = windows.last().unwrap();
                        assert_eq!(windows[0].pad_left as u64, left, "{ctx}: first window");
                        assert_eq!(last.pad_right as u64, right, "{ctx}: last window");
                    }
                }
            }
        }
    });
}
