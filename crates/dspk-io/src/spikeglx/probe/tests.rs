//! Geometry of small hand-written `.meta` tables against hand-computed positions.

use std::path::Path;

use super::*;

fn meta(text: &str) -> SpikeGlxMeta {
    SpikeGlxMeta::parse(text, Path::new("t.ap.meta")).expect("key=value text")
}

#[test]
fn np1_positions_ids_and_adc_slots() {
    // Electrode = bank × 384 + channel; NP1000: 2 columns 32 µm apart, rows 20 µm, even rows
    // shifted by 27 − 11 = 16 µm.
    let m = meta(
        "imDatPrb_pn=NP1000\n~imroTbl=(0,384)(0 0 0 500 250 1)(1 0 0 500 250 1)(2 0 0 500 250 1)(3 1 0 500 250 1)\n",
    );
    let probe = spikeglx_probe(&m, &[Some(0), Some(1), Some(2), Some(3), None])
        .expect("geometry")
        .expect("a probe");
    let c = |i: usize| probe.contact(i).expect("a contact").clone();
    assert_eq!((c(0).x_um, c(0).y_um, c(0).id.as_str()), (16.0, 0.0, "e0"));
    assert_eq!((c(1).x_um, c(1).y_um, c(1).id.as_str()), (48.0, 0.0, "e1"));
    assert_eq!((c(2).x_um, c(2).y_um, c(2).id.as_str()), (0.0, 20.0, "e2"));
    // Electrode 387: row 193 (odd, no stagger), column 1.
    assert_eq!(
        (c(3).x_um, c(3).y_um, c(3).id.as_str()),
        (32.0, 3860.0, "e387")
    );
    assert!(probe.contact(4).is_err(), "the sync channel has no contact");
    // The first slot of mux_np1000 samples readout channels 0, 1, 24, 25, … on ADCs 0, 1, 2, 3.
    assert_eq!(c(0).adc, Some(dspk_types::AdcSlot { adc: 0, order: 0 }));
    assert_eq!(c(1).adc, Some(dspk_types::AdcSlot { adc: 1, order: 0 }));
    let cycle = probe.adc_cycle().expect("a cycle");
    assert_eq!(
        (cycle.adcs, cycle.channels_per_adc, cycle.cycle_samples),
        (32, 12, 13)
    );
    assert_eq!(probe.model(), Some("NP1000"));
}

#[test]
fn part_number_first_header_and_four_shanks() {
    // SpikeGLX 20260115 on: the part number is the header's first field. NP2014: 2 columns 32
    // µm apart, rows 15 µm, no stagger, shanks 250 µm apart.
    let m = meta("~imroTbl=(NP2014,384)(0 2 0 0 5)(1 0 0 0 0)\n");
    let probe = spikeglx_probe(&m, &[Some(0), Some(1)])
        .expect("geometry")
        .expect("a probe");
    let c = probe.contact(0).expect("a contact");
    assert_eq!(
        (c.x_um, c.y_um, c.shank, c.id.as_str()),
        (532.0, 30.0, 2, "s2e5")
    );
    let c = probe.contact(1).expect("a contact");
    assert_eq!(
        (c.x_um, c.y_um, c.shank, c.id.as_str()),
        (0.0, 0.0, 0, "s0e0")
    );
    assert_eq!(probe.shank_pitch_um(), Some(250.0));
    assert_eq!(probe.adc_cycle().map(|c| c.cycle_samples), Some(16));
}

#[test]
fn bad_tables_give_one_line_not_a_panic() {
    for (text, says) in [
        ("~imroTbl=(99999,384)(0 0 0 0)\n", "neither"),
        ("~imroTbl=(0,384)(0 x 0 500 250 1)\n", "not numbers"),
        (
            "imDatPrb_pn=NP1000\n~imroTbl=(0,384)(0 9 0 500 250 1)\n",
            "outside the probe",
        ),
        (
            "imDatPrb_pn=NP1000\n~imroTbl=(0,384)(0 0 0 500 250 1)(0 1 0 500 250 1)\n",
            "twice",
        ),
        (
            "imDatPrb_pn=NP1000\n~imroTbl=(0,384)(0 0 0 500 250 1)\n",
            "no entry for readout channel 1",
        ),
        ("~imroTbl=\n", "no header"),
    ] {
        let e = spikeglx_probe(&meta(text), &[Some(0), Some(1)]).expect_err(text);
        assert!(e.contains(says) && !e.contains('\n'), "{text}: {e}");
    }
    assert_eq!(spikeglx_probe(&meta("a=1\n"), &[Some(0)]), Ok(None));
}
