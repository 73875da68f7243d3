//! Open Ephys streams with a record node's `settings.xml` written by hand in the Neuropixels
//! plugin's layout: the probe stream carries the catalogue's contacts, other streams none, and a
//! settings file that cannot give geometry leaves the stream opening with one warning.

use std::path::Path;

use dspk_io::{OpenEphysRecording, open};
use dspk_types::{Probe, RecordingSource};

use crate::common::Scratch;
use crate::openephys::{BOARD, NEUROPIX, write_v06};

/// A GUI 0.6 `settings.xml`: a Neuropix-PXI processor with streams `ProbeA-AP` / `ProbeA-LFP`
/// and one NP1000 `NP_PROBE` holding `electrodes`, then the record node.
fn settings(electrodes: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<SETTINGS>
  <INFO><VERSION>0.6.7</VERSION></INFO>
  <SIGNALCHAIN>
    <PROCESSOR name="Neuropix-PXI" libraryVersion="0.4.1" nodeId="100">
      <STREAM name="ProbeA-AP" sample_rate="30000.0" channel_count="3"/>
      <STREAM name="ProbeA-LFP" sample_rate="2500.0" channel_count="3"/>
      <EDITOR displayName="Neuropix-PXI">
        <NP_PROBE slot="2" port="1" dock="1" probe_serial_number="18194814141"
                  probe_part_number="NP1000" custom_probe_name="18194814141">{electrodes}</NP_PROBE>
      </EDITOR>
    </PROCESSOR>
    <PROCESSOR name="Record Node" nodeId="101"/>
  </SIGNALCHAIN>
</SETTINGS>
"#
    )
}

/// `(x, y, id)` of every channel's contact.
fn contacts(probe: &Probe) -> Vec<Option<(f64, f64, String)>> {
    probe
        .channels()
        .iter()
        .map(|c| c.as_ref().map(|c| (c.x_um, c.y_um, c.id.clone())))
        .collect()
}

/// `Record Node 101/experiment{k}/recording1` with the board and probe streams, and `settings`
/// written as `settings_file` in the record node.
fn write(root: &Path, k: u32, settings_file: &str, text: &str) -> std::path::PathBuf {
    let node = root.join("Record Node 101");
    let rec = write_v06(
        &node.join(format!("experiment{k}/recording1")),
        &[&BOARD, &NEUROPIX],
    );
    std::fs::write(node.join(settings_file), text).expect("settings");
    rec
}

#[test]
fn the_probe_stream_carries_the_plugins_electrodes() {
    let dir = Scratch::new("oe-probe");
    let rec = write(
        &dir.dir,
        1,
        "settings.xml",
        &settings(r#"<SELECTED_ELECTRODES CH0="5" CH1="0" CH2="100"/>"#),
    );
    let probe_stream = OpenEphysRecording::open(&rec, Some(NEUROPIX.folder)).expect("open");
    assert_eq!(probe_stream.warnings(), &[] as &[String]);
    let probe = probe_stream.info().probe.clone().expect("a probe");
    // NP1000: 2 columns 32 µm apart, rows 20 µm, even rows shifted 16 µm. Electrode 5 is row 2,
    // column 1; 100 is row 50, column 0.
    assert_eq!(
        contacts(&probe),
        [
            Some((48.0, 40.0, "e5".to_string())),
            Some((16.0, 0.0, "e0".to_string())),
            Some((16.0, 1000.0, "e100".to_string())),
        ]
    );
    assert_eq!(probe.model(), Some("NP1000"));
    // The generic open (what the program and Python use) gives the same probe.
    let opened = open(rec.join("continuous").join(NEUROPIX.folder)).expect("open");
    assert_eq!(opened.info().probe.as_ref(), Some(&probe));

    let board = OpenEphysRecording::open(&rec, Some(BOARD.folder)).expect("open board");
    assert!(
        board.info().probe.is_none(),
        "the board's stream is no probe's"
    );
    assert_eq!(board.warnings(), &[] as &[String]);
}

#[test]
fn experiment_k_reads_settings_k() {
    let dir = Scratch::new("oe-probe-k");
    let text = settings(r#"<SELECTED_ELECTRODES CH0="1" CH1="2" CH2="3"/>"#);
    let rec = write(&dir.dir, 2, "settings_2.xml", &text);
    let probe_stream = OpenEphysRecording::open(&rec, Some(NEUROPIX.folder)).expect("open");
    let probe = probe_stream.info().probe.clone().expect("a probe");
    let ids: Vec<String> = contacts(&probe)
        .into_iter()
        .map(|c| c.expect("contact").2)
        .collect();
    assert_eq!(ids, ["e1", "e2", "e3"]);
    // Experiment 2 does not read experiment 1's file.
    let other = Scratch::new("oe-probe-k1");
    let rec = write(&other.dir, 2, "settings.xml", &text);
    let s = OpenEphysRecording::open(&rec, Some(NEUROPIX.folder)).expect("open");
    assert!(s.info().probe.is_none() && s.warnings().is_empty());
}

#[test]
fn geometry_that_cannot_be_had_opens_without_a_probe_and_one_warning() {
    let cases = [
        (
            settings(
                r#"<CHANNELS CH0="0" CH1="0" CH2="0"/><ELECTRODE_XPOS CH0="27" CH1="2x7" CH2="27"/><ELECTRODE_YPOS CH0="0" CH1="20" CH2="40"/>"#,
            ),
            "ELECTRODE_XPOS CH1=\"2x7\" is not a number",
        ),
        (
            settings(r#"<SELECTED_ELECTRODES CH0="1"/>"#),
            "the stream has 3 probe channels but settings.xml gives 1 electrodes",
        ),
        (
            settings(r#"<SELECTED_ELECTRODES CH0="1" CH1="2" CH2="3"/>"#)
                .replace("NP1000", "NP0000"),
            "NP0000 is not in the Neuropixels catalogue",
        ),
        (
            settings(r#"<SELECTED_ELECTRODES CH0="1"/>"#).replace("<EDITOR", "<EDITOR><"),
            "not well-formed XML",
        ),
    ];
    for (k, (text, says)) in cases.iter().enumerate() {
        let dir = Scratch::new(&format!("oe-probe-bad{k}"));
        let rec = write(&dir.dir, 1, "settings.xml", text);
        let s = OpenEphysRecording::open(&rec, Some(NEUROPIX.folder)).expect("opens all the same");
        assert!(s.info().probe.is_none(), "{says}");
        match s.warnings() {
            [w] => assert!(
                w.contains(says)
                    && w.contains("settings.xml: no probe geometry")
                    && !w.contains('\n'),
                "expected {says:?}: {w}"
            ),
            other => panic!("expected one warning saying {says:?}, got {other:?}"),
        }
        // The values read as without a settings file.
        let mut out = vec![0f32; 3];
        s.read(&[0, 1, 2], 0..1, &mut out).expect("read");
    }
}
