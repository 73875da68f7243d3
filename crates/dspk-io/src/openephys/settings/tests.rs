//! `settings.xml` fragments written by hand in the plugin's layout: what is read from valid
//! ones, and one line (never a panic) for missing elements and malformed numbers.

use super::*;

/// A settings file of GUI `gui`: a `Neuropix-PXI` processor of plugin `plugin` with `streams`
/// and `probes` (the `NP_PROBE` elements, under `EDITOR` before 0.9, else under its
/// `CUSTOM_PARAMETERS`), then a record node whose `CUSTOM_PARAMETERS` hold `record`.
fn settings(gui: &str, plugin: &str, streams: &[&str], probes: &str, record: &str) -> String {
    let streams: String = streams
        .iter()
        .map(|s| format!("<STREAM name=\"{s}\" sample_rate=\"30000.0\" channel_count=\"384\"><PARAMETERS/></STREAM>"))
        .collect();
    let editor = if version(gui) < Some((0, 9, 0)) {
        format!("<EDITOR displayName=\"Neuropix-PXI\"><NEUROPIXELS_EDITOR/>{probes}</EDITOR>")
    } else {
        format!(
            "<EDITOR displayName=\"Neuropix-PXI\"><CUSTOM_PARAMETERS>{probes}</CUSTOM_PARAMETERS></EDITOR>"
        )
    };
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<SETTINGS>
  <INFO><VERSION>{gui}</VERSION><PLUGIN_API_VERSION>8</PLUGIN_API_VERSION></INFO>
  <SIGNALCHAIN>
    <PROCESSOR name="Neuropix-PXI" libraryVersion="{plugin}" nodeId="100">{streams}<CUSTOM_PARAMETERS/>{editor}</PROCESSOR>
    <PROCESSOR name="Record Node" nodeId="101"><CUSTOM_PARAMETERS>{record}</CUSTOM_PARAMETERS></PROCESSOR>
  </SIGNALCHAIN>
</SETTINGS>
"#
    )
}

/// An `NP_PROBE` of `part`, serial `serial`, with `inner` elements.
/// (`custom_probe_name` is the serial number unless `extra` gives one).
fn np_probe(part: &str, serial: &str, extra: &str, inner: &str) -> String {
    let custom = if extra.contains("custom_probe_name") {
        String::new()
    } else {
        format!(r#"custom_probe_name="{serial}""#)
    };
    format!(
        r#"<NP_PROBE slot="2" port="1" dock="1" probe_serial_number="{serial}" probe_part_number="{part}" {custom} {extra}>{inner}</NP_PROBE>"#
    )
}

/// `CHANNELS`, `ELECTRODE_XPOS`, `ELECTRODE_YPOS` of `(key, value, x, y)`, in the order given.
fn drawn(entries: &[(&str, &str, &str, &str)]) -> String {
    let attrs = |column: usize| -> String {
        entries
            .iter()
            .map(|e| {
                let v = [e.1, e.2, e.3][column];
                format!("{}=\"{v}\"", e.0)
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    format!(
        "<CHANNELS {}/><ELECTRODE_XPOS {}/><ELECTRODE_YPOS {}/>",
        attrs(0),
        attrs(1),
        attrs(2),
    )
}

fn probes_of(text: &str) -> Result<Vec<SettingsProbe>, String> {
    Settings::parse(text)?.probes()
}

#[test]
fn gui_06_positions_in_channel_number_order() {
    // Written out of order: probeinterface sorts CHANNELS by the number after CH.
    let inner = drawn(&[
        ("CH2", "0", "11", "20"),
        ("CH0", "0", "27", "0"),
        ("CH10", "0", "43", "20"),
        ("CH1", "0", "59", "0"),
    ]);
    let text = settings(
        "0.6.7",
        "0.4.1",
        &["ProbeA-AP", "ProbeA-LFP"],
        &np_probe("NP1000", "18194814141", "", &inner),
        "",
    );
    let probes = probes_of(&text).expect("a probe");
    assert_eq!(probes.len(), 1);
    let p = &probes[0];
    assert_eq!(p.part_number, "NP1000");
    assert_eq!(p.serial_number.as_deref(), Some("18194814141"));
    // The custom name equals the serial number: the name is the stream's.
    assert_eq!(p.name, "ProbeA");
    assert_eq!(
        p.selection,
        Selection::Positions {
            x_um: vec![27.0, 59.0, 11.0, 43.0],
            y_um: vec![0.0, 0.0, 20.0, 20.0],
            shanks: None,
            before_0_6: false,
        }
    );
}

#[test]
fn gui_1_custom_parameters_shanks_and_selected_electrodes() {
    // GUI 1.0: NP_PROBE under EDITOR/CUSTOM_PARAMETERS; `bank:shank` values give shanks.
    let a = np_probe(
        "NP2014",
        "23107820944",
        "",
        &drawn(&[("CH0", "0:3", "777", "0"), ("CH1", "0:1", "277", "15")]),
    );
    let b = np_probe(
        "NP2000",
        "2",
        r#"custom_probe_name="Left""#,
        r#"<SELECTED_ELECTRODES CH0="7" CH1="3" CH2="1279"/>"#,
    );
    let text = settings("1.0.1", "1.0.2", &["ProbeA", "ProbeB"], &(a + &b), "");
    let probes = probes_of(&text).expect("two probes");
    assert_eq!(probes[0].name, "ProbeA");
    let Selection::Positions { shanks, .. } = &probes[0].selection else {
        panic!("positions expected: {:?}", probes[0].selection);
    };
    assert_eq!(shanks.as_deref(), Some(&[3, 1][..]));
    assert_eq!(probes[1].name, "Left");
    assert_eq!(probes[1].selection, Selection::Indices(vec![7, 3, 1279]));
}

#[test]
fn gui_05_probes_are_named_by_node_and_y_is_flagged() {
    let inner = drawn(&[("CH0", "0", "27", "0")]);
    let probe = np_probe("NP1000", "5", "", &inner);
    let text = settings("0.5.3", "0.3.3", &[], &(probe.clone() + &probe), "");
    let probes = probes_of(&text).expect("two probes");
    let names: Vec<&str> = probes.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["100.0", "100.1"]);
    assert!(matches!(
        probes[0].selection,
        Selection::Positions {
            before_0_6: true,
            ..
        }
    ));
}

#[test]
fn disabled_probes_and_quad_base_shanks() {
    let inner = r#"<SELECTED_ELECTRODES CH0="0"/>"#;
    let probes = np_probe("NP2020", "9", r#"shank="2""#, inner)
        + &np_probe("NP2020", "9", r#"isEnabled="0""#, inner);
    let text = settings("1.0.0", "1.0.0", &["ProbeA"], &probes, "");
    let got = probes_of(&text).expect("one enabled probe");
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].name, "ProbeA-3");
}

#[test]
fn which_streams_have_a_probe() {
    let text = settings(
        "0.6.7",
        "0.4.1",
        &["ProbeA-AP", "ProbeA-LFP", "PXI-ADC"],
        &np_probe("NP1000", "1", "", r#"<SELECTED_ELECTRODES CH0="0"/>"#),
        "",
    );
    let s = Settings::parse(&text).expect("xml");
    assert!(s.has_probe_for("Neuropix-PXI-100.ProbeA-AP"));
    assert!(s.has_probe_for("Neuropix-PXI-100.ProbeA-LFP"));
    assert!(!s.has_probe_for("Neuropix-PXI-100.ProbeB-AP"));
    assert!(!s.has_probe_for("Acquisition_Board-100.Rhythm Data"));
    assert!(!s.has_probe_for("PXI-ADC"), "ADC streams name no probe");
}

#[test]
fn saved_channels_of_the_record_node() {
    let one = |record: &str| {
        let text = settings("0.6.7", "0.4.1", &["ProbeA-AP"], "", record);
        Settings::parse(&text)
            .expect("xml")
            .saved_channels("Neuropix-PXI-100.ProbeA-AP")
    };
    assert_eq!(
        one(r#"<STREAM name="ProbeA-AP" recording_state="1101"/>"#),
        Ok(Some(vec![0, 1, 3]))
    );
    assert_eq!(
        one(r#"<STREAM name="ProbeA-AP" recording_state="ALL"/>"#),
        Ok(None)
    );
    assert_eq!(one(""), Ok(None));
    // Several streams: the one whose name is in the stream's.
    assert_eq!(
        one(
            r#"<STREAM name="ProbeB-AP" recording_state="0001"/><STREAM name="ProbeA-AP" recording_state="011"/>"#
        ),
        Ok(Some(vec![1, 2]))
    );
    let e = one(r#"<STREAM name="ProbeA-AP" recording_state="1x1"/>"#).expect_err("not a digit");
    assert!(e.contains("'x'") && !e.contains('\n'), "{e}");
}

#[test]
fn missing_elements_and_malformed_numbers_are_one_line() {
    let good_inner = drawn(&[("CH0", "0", "27", "0")]);
    let good = np_probe("NP1000", "1", "", &good_inner);
    let streams: &[&str] = &["ProbeA-AP"];
    let cases: Vec<(String, &str)> = vec![
        ("<SETTINGS><INFO/></SETTINGS>".into(), "no INFO/VERSION"),
        (
            "<SETTINGS><INFO><VERSION>zero</VERSION></INFO></SETTINGS>".into(),
            "not a version",
        ),
        (settings("0.6.7", "0.4.1", streams, "", ""), "no NP_PROBE"),
        (
            settings(
                "0.6.7",
                "0.4.1",
                streams,
                &np_probe("NP1000", "1", r#"isEnabled="0""#, &good_inner),
                "",
            ),
            "no enabled NP_PROBE",
        ),
        (
            settings("0.6.7", "0.3.2", streams, &good, ""),
            "writes no electrode positions",
        ),
        (
            settings("0.6.7", "beta", streams, &good, ""),
            "not a version",
        ),
        (
            settings(
                "0.6.7",
                "0.4.1",
                streams,
                &np_probe("NP1000", "1", "", "<CHANNELS CH0=\"0\"/>"),
                "",
            ),
            "ELECTRODE_XPOS or ELECTRODE_YPOS is missing",
        ),
        (
            settings(
                "0.6.7",
                "0.4.1",
                streams,
                &np_probe("NP1000", "1", "", ""),
                "",
            ),
            "neither SELECTED_ELECTRODES nor CHANNELS",
        ),
        (
            settings(
                "0.6.7",
                "0.4.1",
                streams,
                &np_probe("NP1000", "1", "", &drawn(&[("CH0", "0", "2x7", "0")])),
                "",
            ),
            "ELECTRODE_XPOS CH0=\"2x7\" is not a number",
        ),
        (
            settings(
                "0.6.7",
                "0.4.1",
                streams,
                &np_probe("NP1000", "1", "", &drawn(&[("CH0", "0:b", "27", "0")])),
                "",
            ),
            "CHANNELS CH0=\"b\" is not an integer",
        ),
        (
            settings(
                "0.6.7",
                "0.4.1",
                streams,
                &np_probe("NP1000", "1", "", &drawn(&[("CHx", "0", "27", "0")])),
                "",
            ),
            "CHx is not CH and a number",
        ),
        (
            settings(
                "0.6.7",
                "0.4.1",
                streams,
                &np_probe("NP1000", "1", "", r#"<SELECTED_ELECTRODES CH0="1.5"/>"#),
                "",
            ),
            "SELECTED_ELECTRODES CH0=\"1.5\" is not an integer",
        ),
        (
            settings(
                "0.6.7",
                "0.4.1",
                streams,
                &np_probe("", "1", "", &good_inner),
                "",
            ),
            "no probe_part_number",
        ),
        (
            settings("0.6.7", "0.4.1", &["ProbeA-AP", "ProbeB-AP"], &good, ""),
            "1 NP_PROBE for the probes",
        ),
        (
            settings(
                "0.6.7",
                "0.4.1",
                streams,
                &np_probe("NP1000", "1", r#"shank="two""#, &good_inner),
                "",
            ),
            "shank \"two\" is not a number",
        ),
        (
            settings("0.6.7", "0.4.1", streams, &good, "").replace(
                r#"<PROCESSOR name="Record Node""#,
                r#"<PROCESSOR name="Channel Map"/><PROCESSOR name="Record Node""#,
            ),
            "Channel Map",
        ),
        (
            settings("0.6.7", "0.4.1", streams, &good, "")
                .replace("Neuropix-PXI\" lib", "ONIX\" lib"),
            "ONIX",
        ),
        (
            settings("0.6.7", "0.4.1", streams, &good, "")
                .replace("Neuropix-PXI\" lib", "Bandpass Filter\" lib"),
            "no Neuropix-PXI or OneBox processor",
        ),
        ("<SETTINGS><INFO>".into(), "not well-formed XML"),
    ];
    for (text, says) in cases {
        let e = probes_of(&text).expect_err(says);
        assert!(
            e.contains(says) && !e.contains('\n'),
            "expected {says:?}, got {e:?}"
        );
    }
}

#[test]
fn versions() {
    assert_eq!(version("0.6.7"), Some((0, 6, 7)));
    assert_eq!(version("1.0"), Some((1, 0, 0)));
    assert_eq!(version(" 0.5.3-dev "), Some((0, 5, 3)));
    assert_eq!(version("v1"), None);
}
