//! The whole chain (filter → phase shift → common reference → whitening → interpolation →
//! scale) on the device: the same bits for windows of 1 s, 0.37 s and 7.3 s, for every third
//! window streamed alone, and for two devices against one; its first stage equal to the
//! filter alone; and the values read back after every stage of one run equal to each cut
//! chain's own.

use std::sync::Arc;

use cubecl::client::Client;
use dspk_ops::Fits;
use dspk_stream::{DecodeRoute, PassDevice, halo_window, run_window_cuts, run_windows};
use dspk_tests::{for_each_runtime, test_rng};
use dspk_types::{
    AdcCycle, AdcSlot, ComputeTarget, Contact, MemoryOrder, MemoryRecording, NoProgress,
    PipelineSpec, Probe, ProbeParts, RecordingInfo, RecordingSource, SampleFormat, SampleRate,
};
use rand::Rng as _;

/// A two-column probe of `channels` contacts, 20 µm rows, Neuropixels 1.0's ADC cycle.
fn probe(channels: usize) -> Probe {
    let contacts = (0..channels)
        .map(|c| {
            let mut contact = Contact::new(
                if c % 2 == 0 { 0.0 } else { 32.0 },
                20.0 * (c / 2) as f64,
                0,
                format!("e{c}"),
            );
            contact.adc = Some(AdcSlot {
                adc: (c / 12) as u32,
                order: (c % 12) as u32,
            });
            Some(contact)
        })
        .collect();
    Probe::new(ProbeParts {
        adc_cycle: Some(AdcCycle {
            adcs: channels.div_ceil(12) as u32,
            channels_per_adc: 12,
            cycle_samples: 13,
        }),
        channels: contacts,
        ..ProbeParts::default()
    })
    .expect("a valid probe")
}

fn recording(channels: usize, samples: usize, seed_name: &str) -> Arc<dyn RecordingSource> {
    recording_on(probe(channels), samples, seed_name)
}

fn recording_on(probe: Probe, samples: usize, seed_name: &str) -> Arc<dyn RecordingSource> {
    let channels = probe.channel_count();
    let (_, mut rng) = test_rng(seed_name);
    let mut info = RecordingInfo::new(
        "chain",
        channels,
        samples as u64,
        SampleRate::new(30_000.0).unwrap(),
        SampleFormat::F32,
        MemoryOrder::ChannelMajor,
    );
    info.probe = Some(probe);
    let data: Vec<f32> = (0..channels * samples)
        .map(|i| {
            let c = i / samples;
            (c as f32 * 300.0 - 1000.0) + rng.random_range(-30.0f32..30.0)
        })
        .collect();
    Arc::new(MemoryRecording::new(info, data).expect("a memory recording"))
}

const SPEC: &str = r#"
    block_samples = 1024

    [[stages]]
    kind = "filter"
    band = "bandpass"
    cutoff_hz = [300.0, 6000.0]
    order = 5

    [[stages]]
    kind = "phase_shift"

    [[stages]]
    kind = "common_reference"
    operator = "median"

    [[stages]]
    kind = "whiten"
    scope = "local"
    neighbours = 6
    fit = { windows = 3, window_samples = 3000, seed = 7 }

    [[stages]]
    kind = "interpolate_bad"
    channels = [3]
    sigma_um = 20.0

    [[stages]]
    kind = "scale"
    output = "int16"
    gain = 200.0
"#;

/// The chain's output over the whole recording, in windows owning `window` samples, on
/// `devices`.
fn output(
    devices: &[PassDevice],
    source: &Arc<dyn RecordingSource>,
    spec: &PipelineSpec,
    fits: &Fits,
    window: u64,
    keep: impl Fn(usize) -> bool,
) -> Vec<(std::ops::Range<u64>, Vec<f32>)> {
    let info = source.info().clone();
    let chain = dspk_ops::build(&devices[0].client, spec, &info, fits, spec.stages.len())
        .expect("the chain builds");
    let halo = chain.halo();
    let windows: Vec<_> = (0..info.samples)
        .step_by(window as usize)
        .map(|start| start..(start + window).min(info.samples))
        .enumerate()
        .filter(|(i, _)| keep(*i))
        .map(|(i, valid)| halo_window(&info, i, valid, halo.before, halo.after))
        .collect();
    let mut out = Vec::new();
    run_windows(
        devices,
        source.clone(),
        spec,
        fits,
        windows,
        DecodeRoute::Staging,
        &NoProgress,
        |w, values| {
            out.push((w.valid_global.clone(), values.to_vec()));
            Ok(())
        },
    )
    .expect("the chain runs");
    out
}

/// Channel-major rows of the whole recording from windows' outputs.
fn rows(parts: &[(std::ops::Range<u64>, Vec<f32>)], channels: usize) -> Vec<Vec<u32>> {
    let mut rows = vec![Vec::new(); channels];
    for (range, values) in parts {
        let n = (range.end - range.start) as usize;
        for (c, row) in rows.iter_mut().enumerate() {
            row.extend(values[c * n..(c + 1) * n].iter().map(|v| v.to_bits()));
        }
    }
    rows
}

fn one_device(client: &Client) -> Vec<PassDevice> {
    vec![PassDevice {
        client: client.clone(),
        label: "one".into(),
    }]
}

#[test]
fn the_chain_gives_the_same_bits_for_any_windows_and_devices() {
    for_each_runtime("chain_bits", |target: ComputeTarget, client| {
        let (channels, samples) = (16, 36_000);
        let source = recording(channels, samples, "chain_bits");
        let spec = PipelineSpec::from_toml(SPEC).expect("the spec reads");
        let devices = one_device(client);
        let fits = dspk_stream::fit(
            &devices,
            &source,
            &spec,
            Fits::default(),
            DecodeRoute::Staging,
        )
        .expect("the whitening fits");
        let reference = rows(
            &output(&devices, &source, &spec, &fits, 30_000, |_| true),
            channels,
        );
        assert!(reference[0].len() == samples);
        for window in [11_100, 219_000] {
            let other = rows(
                &output(&devices, &source, &spec, &fits, window, |_| true),
                channels,
            );
            assert!(
                other == reference,
                "windows of {window} samples change the output"
            );
        }
        // Every third window of 0.37 s, alone.
        let thirds = output(&devices, &source, &spec, &fits, 11_100, |i| i % 3 == 0);
        for (range, values) in &thirds {
            let n = (range.end - range.start) as usize;
            for c in 0..channels {
                let expected = &reference[c][range.start as usize..range.end as usize];
                let got: Vec<u32> = values[c * n..(c + 1) * n]
                    .iter()
                    .map(|v| v.to_bits())
                    .collect();
                assert!(
                    got == expected,
                    "window {range:?} alone differs on channel {c}"
                );
            }
        }
        // Two devices (a second one on the same adapter; on the cpu runtime, the one CPU
        // client twice) against one, fit included.
        let second = dspk_tests::second_client(target, client);
        let two = vec![
            devices[0].clone(),
            PassDevice {
                client: second,
                label: "two".into(),
            },
        ];
        let fits_two =
            dspk_stream::fit(&two, &source, &spec, Fits::default(), DecodeRoute::Staging)
                .expect("the whitening fits on two");
        let both = rows(
            &output(&two, &source, &spec, &fits_two, 11_100, |_| true),
            channels,
        );
        assert!(both == reference, "two devices change the output");
    });
}

#[test]
fn a_saved_whitening_matrix_is_applied_unchanged() {
    for_each_runtime("saved_matrix", |_, client| {
        let (channels, samples) = (16, 12_000);
        let source = recording(channels, samples, "saved_matrix");
        let spec = PipelineSpec::from_toml(SPEC).expect("the spec reads");
        let devices = one_device(client);
        let fits = dspk_stream::fit(
            &devices,
            &source,
            &spec,
            Fits::default(),
            DecodeRoute::Staging,
        )
        .expect("the whitening fits");
        let fitted = &fits.whitening[&3];
        let dir = dspk_tests::TempDir::new("saved_matrix");
        let path = dir.path().join("whitening.json");
        std::fs::write(&path, fitted.to_json()).expect("written");
        let mut named = spec.clone();
        let dspk_types::StageSpec::Whiten(w) = &mut named.stages[3] else {
            panic!("stage 3 whitens");
        };
        w.matrix = Some(path.display().to_string());
        w.fit.seed = 99; // would fit another matrix: the file wins
        let loaded = dspk_stream::fit(
            &devices,
            &source,
            &named,
            Fits::default(),
            DecodeRoute::Staging,
        )
        .expect("the matrix loads");
        assert_eq!(loaded.whitening[&3].to_json(), fitted.to_json());
        let a = rows(
            &output(&devices, &source, &spec, &fits, 5_000, |_| true),
            channels,
        );
        let b = rows(
            &output(&devices, &source, &named, &loaded, 5_000, |_| true),
            channels,
        );
        assert!(a == b, "the loaded matrix whitens differently");
        // A matrix for other channels is refused, naming the file.
        let fewer = recording(channels - 1, samples, "saved_matrix_fewer");
        let mut fewer_spec = named.clone();
        fewer_spec.stages.truncate(4);
        fewer_spec.stages.remove(2); // no reference needed; keep filter, shift, whiten
        let err = dspk_stream::fit(
            &devices,
            &fewer,
            &fewer_spec,
            Fits::default(),
            DecodeRoute::Staging,
        )
        .expect_err("refused");
        assert!(err.to_string().contains("whitening.json"), "{err}");
    });
}

#[test]
fn every_stage_read_back_from_one_run_equals_the_chain_cut_there() {
    for_each_runtime("chain_cuts", |_, client| {
        let (channels, samples) = (16, 40_000);
        let spec_text = SPEC.replace(
            "kind = \"phase_shift\"",
            "kind = \"phase_shift\"\n    optional = true",
        );
        let spec = PipelineSpec::from_toml(&spec_text).expect("the spec reads");
        // With its ADC cycle every stage runs; without it the phase shift is left out, and
        // the cut after it is the common reference's input.
        let with_adc = recording(channels, samples, "chain_cuts");
        let mut parts = probe(channels).parts().clone();
        parts.adc_cycle = None;
        for contact in parts.channels.iter_mut().flatten() {
            contact.adc = None;
        }
        let without_adc = recording_on(
            Probe::new(parts).expect("a probe without ADCs"),
            samples,
            "chain_cuts",
        );
        let devices = one_device(client);
        for source in [with_adc, without_adc] {
            let info = source.info().clone();
            let fits = dspk_stream::fit(
                &devices,
                &source,
                &spec,
                Fits::default(),
                DecodeRoute::Staging,
            )
            .expect("the chain fits");
            let halo = dspk_ops::build(&devices[0].client, &spec, &info, &fits, 6)
                .expect("the chain builds")
                .halo();
            let (_, mut rng) = test_rng("chain_cuts_windows");
            let windows: Vec<_> = (0..3)
                .map(|i| {
                    let len = rng.random_range(1_000u64..9_000);
                    let start = rng.random_range(0..samples as u64 - len);
                    halo_window(&info, i, start..start + len, halo.before, halo.after)
                })
                .collect();
            let cuts: Vec<usize> = (0..=spec.stages.len()).rev().collect();
            let mut each = Vec::new();
            run_window_cuts(
                &devices,
                source.clone(),
                &spec,
                &fits,
                windows.clone(),
                &cuts,
                DecodeRoute::Staging,
                &NoProgress,
                |_, values| {
                    each.push(values.iter().map(|v| v.to_vec()).collect::<Vec<_>>());
                    Ok(())
                },
            )
            .expect("the cuts run");
            assert_eq!(each.len(), windows.len());
            for (slot, &cut) in cuts.iter().enumerate() {
                let cut_spec = PipelineSpec {
                    stages: spec.stages[..cut].to_vec(),
                    ..spec.clone()
                };
                let mut at = 0;
                run_windows(
                    &devices,
                    source.clone(),
                    &cut_spec,
                    &fits,
                    windows.clone(),
                    DecodeRoute::Staging,
                    &NoProgress,
                    |w, values| {
                        let n = (w.valid_global.end - w.valid_global.start) as usize;
                        assert_eq!(values.len(), channels * n);
                        let got: Vec<u32> = each[at][slot].iter().map(|v| v.to_bits()).collect();
                        let want: Vec<u32> = values.iter().map(|v| v.to_bits()).collect();
                        assert!(
                            got == want,
                            "the cut after {cut} stages of window {at} differs from that chain's"
                        );
                        at += 1;
                        Ok(())
                    },
                )
                .expect("the cut chain runs");
                assert_eq!(at, windows.len());
            }
            // A cut past the last stage is refused by its number.
            let e = run_window_cuts(
                &devices,
                source.clone(),
                &spec,
                &fits,
                windows.clone(),
                &[7],
                DecodeRoute::Staging,
                &NoProgress,
                |_, _| Ok(()),
            )
            .unwrap_err()
            .to_string();
            assert!(
                e.contains("after 7 stages") && e.contains("6 stages"),
                "{e}"
            );
        }
    });
}
