//! The spec read from TOML and JSON, and checked against recordings: each refusal names the
//! stage and the offending value.

use super::*;
use crate::{
    AdcCycle, AdcSlot, Contact, MemoryOrder, Probe, ProbeParts, RecordingInfo, SampleFormat,
    SampleRate,
};

fn info(channels: usize, probe: bool, adc: bool) -> RecordingInfo {
    let mut info = RecordingInfo::new(
        "rec",
        channels,
        30_000,
        SampleRate::new(30_000.0).unwrap(),
        SampleFormat::I16,
        MemoryOrder::TimeMajor,
    );
    if probe {
        let contacts = (0..channels)
            .map(|c| {
                let mut contact = Contact::new(
                    (c % 2) as f64 * 32.0,
                    (c / 2) as f64 * 20.0,
                    0,
                    format!("e{c}"),
                );
                if adc {
                    contact.adc = Some(AdcSlot {
                        adc: 0,
                        order: c as u32,
                    });
                }
                Some(contact)
            })
            .collect();
        info.probe = Some(
            Probe::new(ProbeParts {
                adc_cycle: adc.then_some(AdcCycle {
                    adcs: 1,
                    channels_per_adc: channels as u32,
                    cycle_samples: channels as u32 + 1,
                }),
                channels: contacts,
                ..ProbeParts::default()
            })
            .unwrap(),
        );
    }
    info
}

fn refusal(toml_text: &str, info: &RecordingInfo) -> String {
    let spec = PipelineSpec::from_toml(toml_text).expect("the spec reads");
    spec.check(info).expect_err("refused").to_string()
}

const FULL: &str = r#"
block_samples = 2048

[[stages]]
kind = "filter"
band = "bandpass"
cutoff_hz = [300.0, 6000.0]
order = 5

[[stages]]
kind = "phase_shift"

[[stages]]
kind = "common_reference"
scope = "local"

[[stages]]
kind = "whiten"
scope = "local"
neighbours = 4
fit = { windows = 3, seed = 7 }

[[stages]]
kind = "interpolate_bad"
channels = [1]

[[stages]]
kind = "scale"
output = "int16"
gain = 200.0
"#;

#[test]
fn a_spec_reads_from_toml_and_json_alike_and_round_trips() {
    let spec = PipelineSpec::from_toml(FULL).unwrap();
    assert_eq!(spec.block_samples, 2048);
    assert_eq!(spec.stages.len(), 6);
    assert_eq!(PipelineSpec::from_toml(&spec.to_toml()).unwrap(), spec);
    assert_eq!(PipelineSpec::from_json(&spec.to_json()).unwrap(), spec);
    spec.check(&info(8, true, true))
        .expect("a full chain runs on a probe with ADC slots");
}

#[test]
fn unknown_fields_and_kinds_are_refused_naming_them() {
    let e = PipelineSpec::from_toml("[[stages]]\nkind = \"filter\"\nband = \"highpass\"\ncutoff_hz = [300.0]\norder = 3\nfreq = 1\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("freq"), "{e}");
    let e = PipelineSpec::from_json(r#"{"stages": [{"kind": "destripe"}]}"#)
        .unwrap_err()
        .to_string();
    assert!(e.contains("destripe") && e.contains("JSON"), "{e}");
}

#[test]
fn filters_out_of_range_are_refused_with_their_values() {
    let i = info(4, false, false);
    let filter = |band: &str, cutoff: &str, order: u32, extra: &str| {
        format!(
            "[[stages]]\nkind = \"filter\"\nband = \"{band}\"\ncutoff_hz = {cutoff}\norder = {order}\n{extra}"
        )
    };
    let e = refusal(&filter("highpass", "[15000.0]", 3, ""), &i);
    assert!(
        e.contains("15000") && e.contains("Nyquist") && e.contains("stage 0 (filter)"),
        "{e}"
    );
    let e = refusal(&filter("bandpass", "[300.0]", 3, ""), &i);
    assert!(e.contains("2 cut-off"), "{e}");
    let e = refusal(&filter("bandpass", "[6000.0, 300.0]", 3, ""), &i);
    assert!(e.contains("below the high one"), "{e}");
    let e = refusal(&filter("lowpass", "[300.0]", 0, ""), &i);
    assert!(e.contains("order 0"), "{e}");
    let e = refusal(&filter("lowpass", "[300.0]", 13, ""), &i);
    assert!(e.contains("order 13"), "{e}");
    let e = refusal(
        &filter("highpass", "[300.0]", 3, "context_samples = 100"),
        &i,
    );
    assert!(e.contains("too short"), "{e}");
    let e = refusal(
        &filter("highpass", "[300.0]", 3, "context_samples = 100000"),
        &i,
    );
    assert!(
        e.contains("100000") && e.contains(&MAX_CONTEXT_SAMPLES.to_string()),
        "{e}"
    );
    let e = refusal("block_samples = 10\n", &i);
    assert!(e.contains("block_samples is 10"), "{e}");
}

#[test]
fn spatial_stages_need_geometry_and_say_so() {
    let bare = info(4, false, false);
    for stage in [
        "kind = \"common_reference\"\nscope = \"local\"",
        "kind = \"common_reference\"\nscope = \"shank\"",
        "kind = \"whiten\"\nscope = \"local\"\nneighbours = 3",
        "kind = \"interpolate_bad\"\nchannels = [1]",
        "kind = \"phase_shift\"",
    ] {
        let e = refusal(&format!("[[stages]]\n{stage}\n"), &bare);
        assert!(e.contains("geometry") && e.contains("rec"), "{stage}: {e}");
    }
    // Geometry without ADC slots: the phase shift alone is refused.
    let no_adc = info(4, true, false);
    let e = refusal("[[stages]]\nkind = \"phase_shift\"\n", &no_adc);
    assert!(e.contains("ADC sample shift"), "{e}");
    // The global reference needs none.
    PipelineSpec::from_toml("[[stages]]\nkind = \"common_reference\"\n")
        .unwrap()
        .check(&bare)
        .unwrap();
}

#[test]
fn bad_numbers_and_orders_are_refused() {
    let i = info(4, true, true);
    let e = refusal(
        "[[stages]]\nkind = \"interpolate_bad\"\nchannels = [9]\n",
        &i,
    );
    assert!(e.contains("channel 9") && e.contains("4 channels"), "{e}");
    let e = refusal(
        "[[stages]]\nkind = \"interpolate_bad\"\nchannels = [0, 1, 2, 3]\n",
        &i,
    );
    assert!(e.contains("every one"), "{e}");
    let e = refusal(
        "[[stages]]\nkind = \"whiten\"\nscope = \"local\"\nneighbours = 3\nradius_um = 50.0\n",
        &i,
    );
    assert!(e.contains("exactly one"), "{e}");
    let e = refusal("[[stages]]\nkind = \"whiten\"\nneighbours = 3\n", &i);
    assert!(e.contains("global whitening"), "{e}");
    let e = refusal("[[stages]]\nkind = \"whiten\"\nepsilon = -1.0\n", &i);
    assert!(e.contains("epsilon -1"), "{e}");
    let e = refusal(
        "[[stages]]\nkind = \"scale\"\n\n[[stages]]\nkind = \"common_reference\"\n",
        &i,
    );
    assert!(e.contains("last stage"), "{e}");
    let e = refusal("[[stages]]\nkind = \"scale\"\ngain = 0.0\n", &i);
    assert!(e.contains("gain 0"), "{e}");
    let e = refusal("[[stages]]\nkind = \"center\"\nfit = { every = 0 }\n", &i);
    assert!(
        e.contains("every must be at least 1") && e.contains("center"),
        "{e}"
    );
    let e = refusal("[[stages]]\nkind = \"phase_shift\"\nhalf_taps = 0\n", &i);
    assert!(e.contains("half_taps 0"), "{e}");
    let e = refusal(
        "[[stages]]\nkind = \"common_reference\"\nscope = \"local\"\nlocal_radius_um = [55.0, 30.0]\n",
        &i,
    );
    assert!(e.contains("annulus"), "{e}");
}

#[test]
fn each_preset_is_the_spec_its_docs_list_and_runs_where_it_should() {
    let kilosort4 = PipelineSpec::from_toml(
        r#"
        block_samples = 1024

        [[stages]]
        kind = "center"
        fit = { windows = 4294967295, window_samples = 60000, every = 25 }

        [[stages]]
        kind = "common_reference"
        median = "lower"

        [[stages]]
        kind = "filter"
        band = "highpass"
        cutoff_hz = [300.0]
        order = 3

        [[stages]]
        kind = "whiten"
        scope = "local"
        neighbours = 32
        epsilon = 1e-6
        fit = { windows = 4294967295, window_samples = 60000, every = 25 }

        [[stages]]
        kind = "scale"
        output = "int16"
        gain = 200.0
        "#,
    )
    .unwrap();
    assert_eq!(PipelineSpec::preset("kilosort4").unwrap(), kilosort4);
    let spikeinterface = PipelineSpec::from_toml(
        r#"
        block_samples = 1024

        [[stages]]
        kind = "filter"
        band = "bandpass"
        cutoff_hz = [300.0, 6000.0]
        order = 5

        [[stages]]
        kind = "phase_shift"
        optional = true

        [[stages]]
        kind = "common_reference"
        operator = "median"
        "#,
    )
    .unwrap();
    assert_eq!(
        PipelineSpec::preset("spikeinterface").unwrap(),
        spikeinterface
    );
    let ibl = PipelineSpec::from_toml(
        r#"
        block_samples = 1024

        [[stages]]
        kind = "filter"
        band = "highpass"
        cutoff_hz = [300.0]
        order = 3

        [[stages]]
        kind = "phase_shift"
        optional = true

        [[stages]]
        kind = "interpolate_bad"
        detect = true
        sigma_um = 20.0
        p = 1.3

        [[stages]]
        kind = "spatial_highpass"
        agc_window_samples = 3000
        agc_floor_uv = 0.01
        order = 3
        cutoff = 0.01
        pad_channels = 60
        "#,
    )
    .unwrap();
    assert_eq!(PipelineSpec::preset("ibl").unwrap(), ibl);
    let names: Vec<&str> = PipelineSpec::presets().iter().map(|p| p.name).collect();
    assert_eq!(names, ["kilosort4", "spikeinterface", "ibl"]);
    for preset in PRESETS {
        let spec = PipelineSpec::preset(preset.name).unwrap();
        assert_eq!(PipelineSpec::from_toml(&spec.to_toml()).unwrap(), spec);
        assert_eq!(PipelineSpec::from_json(&spec.to_json()).unwrap(), spec);
        spec.check(&info(40, true, true))
            .unwrap_or_else(|e| panic!("{}: {e}", preset.name));
        assert!(!preset.description.is_empty());
    }
    // SpikeInterface's chain runs with and without ADC shifts, and without geometry.
    for i in [info(8, true, false), info(8, false, false)] {
        spikeinterface.check(&i).unwrap();
    }
    // Kilosort's local whitening needs the geometry.
    let e = kilosort4
        .check(&info(8, false, false))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("stage 3 (whiten)") && e.contains("geometry"),
        "{e}"
    );
}

#[test]
fn an_unknown_preset_is_named_with_the_known_ones() {
    let e = PipelineSpec::preset("kilosort3").unwrap_err().to_string();
    assert_eq!(
        e,
        "no pipeline preset is named \"kilosort3\"; the presets are kilosort4, spikeinterface, ibl"
    );
}

#[test]
fn an_optional_phase_shift_applies_only_where_the_probe_states_shifts() {
    let optional = PhaseShiftSpec {
        optional: true,
        ..PhaseShiftSpec::default()
    };
    assert!(optional.applies_to(&info(4, true, true)));
    assert!(!optional.applies_to(&info(4, true, false)));
    assert!(!optional.applies_to(&info(4, false, false)));
    assert!(PhaseShiftSpec::default().applies_to(&info(4, false, false)));
    // `optional = false` is the default and not written out.
    assert!(
        !PipelineSpec::from_toml("[[stages]]\nkind = \"phase_shift\"\n")
            .unwrap()
            .to_toml()
            .contains("optional")
    );
}

#[test]
fn a_center_stage_needs_a_fit_window() {
    let e = refusal(
        "[[stages]]\nkind = \"center\"\nfit = { windows = 0 }\n",
        &info(4, false, false),
    );
    assert!(
        e.contains("stage 0 (center)") && e.contains("0 of 15000"),
        "{e}"
    );
    PipelineSpec::from_toml("[[stages]]\nkind = \"center\"\n")
        .unwrap()
        .check(&info(4, false, false))
        .unwrap();
}

#[test]
fn a_spatial_high_pass_on_a_shank_too_short_is_refused_before_it_runs() {
    let ibl = PipelineSpec::preset("ibl").unwrap();
    // Order 3: sosfiltfilt's padlen is 12, and 4 channels mirrored by 4 on each side are 12.
    let e = ibl.check(&info(4, true, false)).unwrap_err().to_string();
    assert_eq!(
        e,
        "stage 3 (spatial_highpass) of the pipeline: a spatial high-pass of order 3 needs \
         more than 12 channels per shank once padded, and shank 0 has 4 (12 padded)"
    );
    ibl.check(&info(5, true, false)).unwrap();
    // Without geometry, the bad channels (stage 2) could not be interpolated from neighbours.
    let e = ibl.check(&info(5, false, false)).unwrap_err().to_string();
    assert!(
        e.starts_with("stage 2 (interpolate_bad)") && e.contains("geometry"),
        "{e}"
    );
}

#[test]
fn a_detecting_interpolation_takes_no_channels_and_is_fitted() {
    let i = info(4, true, true);
    let spec =
        PipelineSpec::from_toml("[[stages]]\nkind = \"interpolate_bad\"\ndetect = true\n").unwrap();
    spec.check(&i).unwrap();
    assert!(spec.is_fitted(0));
    assert!(spec.to_toml().contains("detect = true"));
    let given = PipelineSpec::from_toml("[[stages]]\nkind = \"interpolate_bad\"\nchannels = [1]\n")
        .unwrap();
    assert!(!given.is_fitted(0));
    assert!(!given.to_toml().contains("detect"));
    let e = refusal(
        "[[stages]]\nkind = \"interpolate_bad\"\nchannels = [1]\ndetect = true\n",
        &i,
    );
    assert!(
        e.contains("channels [1] are given and detect is set"),
        "{e}"
    );
    let e = refusal("[[stages]]\nkind = \"interpolate_bad\"\n", &i);
    assert!(e.contains("no channels to interpolate"), "{e}");
}
