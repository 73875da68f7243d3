//! Open Ephys electrode selections against positions and ids computed by hand from the
//! catalogue's pitches.

use dspk_types::AdcSlot;

use super::*;

fn positions(x_um: &[f64], y_um: &[f64], shanks: Option<Vec<i64>>, before_0_6: bool) -> Selection {
    Selection::Positions {
        x_um: x_um.to_vec(),
        y_um: y_um.to_vec(),
        shanks,
        before_0_6,
    }
}

/// `(x, y, shank, id)` of channel `i`, `None` without a contact.
fn at(probe: &Probe, i: usize) -> Option<(f64, f64, u32, String)> {
    probe
        .contact(i)
        .ok()
        .map(|c| (c.x_um, c.y_um, c.shank, c.id.clone()))
}

#[test]
fn np1_drawn_positions_become_catalogue_electrodes() {
    // The plugin draws NP1000 electrodes from the shank's edge: even rows at 27 µm + 32 µm per
    // column, odd rows at 11 µm; rows 20 µm apart. Electrodes 0, 1, 2, 3 are then at (27, 0),
    // (59, 0), (11, 20), (43, 20); the catalogue puts them at (16, 0), (48, 0), (0, 20),
    // (32, 20) (even rows shifted by 27 − 11 = 16 µm, the first column at 0).
    let sel = positions(
        &[27.0, 59.0, 11.0, 43.0],
        &[0.0, 0.0, 20.0, 20.0],
        None,
        false,
    );
    let probe =
        openephys_probe("NP1000", &sel, None, &[true, true, false, true, true]).expect("a probe");
    assert_eq!(at(&probe, 0), Some((16.0, 0.0, 0, "e0".into())));
    assert_eq!(at(&probe, 1), Some((48.0, 0.0, 0, "e1".into())));
    assert_eq!(at(&probe, 2), None, "an ADC channel has no contact");
    assert_eq!(at(&probe, 3), Some((0.0, 20.0, 0, "e2".into())));
    assert_eq!(at(&probe, 4), Some((32.0, 20.0, 0, "e3".into())));
    // Contact k is readout channel k: mux_np1000's first slot samples readout 0 and 1 on ADCs
    // 0 and 1; readout 2 and 3 come next on the same two ADCs.
    let adc = |i| probe.contact(i).expect("contact").adc;
    assert_eq!(adc(0), Some(AdcSlot { adc: 0, order: 0 }));
    assert_eq!(adc(1), Some(AdcSlot { adc: 1, order: 0 }));
    assert_eq!(adc(3), Some(AdcSlot { adc: 0, order: 1 }));
    assert_eq!(probe.model(), Some("NP1000"));
    assert_eq!(probe.adc_cycle().map(|c| c.cycle_samples), Some(13));
}

#[test]
fn np2_four_shanks_by_index_and_by_position() {
    // NP2014: 1280 electrodes per shank, 2 columns 32 µm apart, rows 15 µm, no stagger, shanks
    // 250 µm apart. Index 2 × 1280 + 5 is shank 2's electrode 5: column 1, row 2.
    let sel = Selection::Indices(vec![2 * 1280 + 5, 0]);
    let probe = openephys_probe("NP2014", &sel, None, &[true, true]).expect("a probe");
    assert_eq!(at(&probe, 0), Some((532.0, 30.0, 2, "s2e5".into())));
    assert_eq!(at(&probe, 1), Some((0.0, 0.0, 0, "s0e0".into())));
    assert_eq!(probe.shank_pitch_um(), Some(250.0));
    // The same two drawn by the plugin (x from the edge, 27 µm, with the shank's offset), and
    // a GUI 0.5 file, whose y also holds the shank pitch × shank.
    let drawn = positions(
        &[27.0 + 32.0 + 500.0, 27.0],
        &[30.0, 0.0],
        Some(vec![2, 0]),
        false,
    );
    let again = openephys_probe("NP2014", &drawn, None, &[true, true]).expect("a probe");
    assert_eq!(again, probe);
    let old = positions(&[559.0, 27.0], &[30.0 + 500.0, 0.0], Some(vec![2, 0]), true);
    assert_eq!(
        openephys_probe("NP2014", &old, None, &[true, true]),
        Ok(probe)
    );
}

#[test]
fn saved_channels_pick_among_the_electrodes() {
    let sel = Selection::Indices(vec![10, 11, 12, 13]);
    let probe =
        openephys_probe("NP1000", &sel, Some(&[1, 3]), &[true, true, false]).expect("a probe");
    let ids: Vec<Option<String>> = (0..3).map(|i| at(&probe, i).map(|c| c.3)).collect();
    assert_eq!(ids, [Some("e11".into()), Some("e13".into()), None]);
    // Contact k of the selection is readout channel k (probeinterface's rule), and keeps its
    // slot through the subset: e13 is readout 3, which mux_np1000 samples second on ADC 1.
    assert_eq!(
        probe.contact(1).expect("contact").adc,
        Some(AdcSlot { adc: 1, order: 1 })
    );
}

#[test]
fn selections_that_do_not_fit_are_one_line() {
    let one = [true];
    type Case<'a> = (&'a str, Selection, Option<&'a [usize]>, &'a [bool], &'a str);
    let cases: Vec<Case> = vec![
        (
            "NP9999",
            Selection::Indices(vec![0]),
            None,
            &one,
            "not in the Neuropixels catalogue",
        ),
        (
            "NP1000",
            Selection::Indices(vec![960]),
            None,
            &one,
            "outside the probe's 960",
        ),
        (
            "NP1000",
            Selection::Indices(vec![-1]),
            None,
            &one,
            "outside the probe's",
        ),
        (
            "NP1000",
            Selection::Indices(vec![0, 1]),
            None,
            &one,
            "1 probe channels but settings.xml gives 2",
        ),
        (
            "NP1000",
            Selection::Indices(vec![0]),
            Some(&[4]),
            &one,
            "saves channel 4 of a probe of 1",
        ),
        (
            "NP1000",
            Selection::Indices(vec![0, 0]),
            None,
            &[true, true],
            "e0",
        ),
        (
            "NP1000",
            positions(&[], &[], None, false),
            None,
            &one,
            "no channels",
        ),
        (
            "NP1000",
            positions(&[f64::NAN], &[0.0], None, false),
            None,
            &one,
            "not a finite number",
        ),
        // A single-shank probe with shanks given: probeinterface names it s0e0, not a contact.
        (
            "NP1000",
            positions(&[27.0], &[0.0], Some(vec![0]), false),
            None,
            &one,
            "contact s0e0",
        ),
        (
            "NP2014",
            positions(&[27.0], &[0.0], None, false),
            None,
            &one,
            "no shanks for NP2014",
        ),
        (
            "NP1000",
            positions(&[27.0, 27.0], &[0.0, 1e6], None, false),
            None,
            &[true, true],
            "not one of NP1000's",
        ),
    ];
    for (part, sel, saved, chans, says) in cases {
        let e = openephys_probe(part, &sel, saved, chans).expect_err(says);
        assert!(
            e.contains(says) && !e.contains('\n'),
            "expected {says:?}, got {e:?}"
        );
    }
}
