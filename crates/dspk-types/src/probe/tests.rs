//! Probe checks and lookups against hand-computed values; subset laws by property.

use proptest::prelude::*;

use super::*;

fn at(x: f64, y: f64, id: &str) -> Option<Contact> {
    Some(Contact::new(x, y, 0, id))
}

fn parts(channels: Vec<Option<Contact>>) -> ProbeParts {
    ProbeParts {
        channels,
        ..ProbeParts::default()
    }
}

/// Six channels: a staggered pair of rows, a sync channel (4) and one more row.
fn staggered() -> Probe {
    Probe::new(parts(vec![
        at(0.0, 0.0, "e0"),
        at(32.0, 0.0, "e1"),
        at(16.0, 20.0, "e2"),
        at(48.0, 20.0, "e3"),
        None,
        at(0.0, 40.0, "e4"),
    ]))
    .expect("valid probe")
}

#[test]
fn neighbourhoods_match_hand_computed_distances() {
    let p = staggered();
    // From e2 at (16, 20): e0, e1, e4 at √(16² + 20²) = 25.612 µm, e3 at 32 µm.
    assert!((p.distance_um(2, 0).unwrap() - 656f64.sqrt()).abs() < 1e-12);
    assert_eq!(p.within(2, 25.0).unwrap(), Vec::<usize>::new());
    assert_eq!(p.within(2, 26.0).unwrap(), vec![0, 1, 5]);
    assert_eq!(p.within(2, 32.0).unwrap(), vec![0, 1, 5, 3]);
    assert_eq!(p.annulus(2, 25.7, 40.0).unwrap(), vec![3]);
    assert_eq!(p.annulus(2, 0.0, 25.7).unwrap(), vec![0, 1, 5]);
    assert_eq!(p.nearest(2, 3).unwrap(), vec![2, 0, 1]);
    assert_eq!(p.nearest(2, 99).unwrap(), vec![2, 0, 1, 5, 3]);
    assert_eq!(p.nearest(2, 0).unwrap(), Vec::<usize>::new());
    // From e0 at (0, 0): e2 25.612, e1 32, e4 40, e3 √(48² + 20²) = 52.
    assert_eq!(p.nearest(0, 5).unwrap(), vec![0, 2, 1, 5, 3]);
    assert_eq!(p.annulus(0, 40.0, 52.0).unwrap(), vec![3]);
    assert_eq!(p.row_pitch_um(), Some(20.0));
    assert_eq!(p.contact_count(), 5);
    assert_eq!(p.contact_channels(), vec![0, 1, 2, 3, 5]);
    assert_eq!(p.shanks(), vec![0]);
}

#[test]
fn row_pitch_is_measured_within_a_shank() {
    let mut a = Contact::new(0.0, 0.0, 0, "s0e0");
    let mut b = Contact::new(250.0, 7.5, 1, "s1e0");
    let c = Contact::new(0.0, 15.0, 0, "s0e1");
    a.shank = 0;
    b.shank = 1;
    let p = Probe::new(ProbeParts {
        shank_pitch_um: Some(250.0),
        ..parts(vec![Some(a), Some(b), Some(c)])
    })
    .unwrap();
    // 7.5 µm separates rows of different shanks only.
    assert_eq!(p.row_pitch_um(), Some(15.0));
    assert_eq!(p.shanks(), vec![0, 1]);
    let single = Probe::new(parts(vec![at(1.0, 2.0, "e0")])).unwrap();
    assert_eq!(single.row_pitch_um(), None);
}

#[test]
fn sample_shift_is_the_slot_over_the_cycle() {
    let cycle = AdcCycle {
        adcs: 32,
        channels_per_adc: 12,
        cycle_samples: 13,
    };
    let mut c = Contact::new(0.0, 0.0, 0, "e0");
    c.adc = Some(AdcSlot { adc: 31, order: 5 });
    let p = Probe::new(ProbeParts {
        adc_cycle: Some(cycle),
        ..parts(vec![Some(c), at(0.0, 20.0, "e1"), None])
    })
    .unwrap();
    assert_eq!(p.sample_shift(0), Some(5.0 / 13.0));
    assert_eq!(p.sample_shift(1), None);
    assert_eq!(p.sample_shift(2), None);
    assert_eq!(p.sample_shift(9), None);
}

#[test]
fn bad_probes_are_refused_with_the_offending_values() {
    let err = |p: ProbeParts| Probe::new(p).expect_err("invalid probe");
    assert_eq!(err(parts(vec![])), ProbeError::NoChannels);
    assert_eq!(
        err(parts(vec![None, None])),
        ProbeError::NoContacts { channels: 2 }
    );
    assert!(matches!(
        err(parts(vec![at(0.0, 0.0, "a"), at(f64::NAN, 1.0, "b")])),
        ProbeError::NonFinitePosition { channel: 1, y_um, .. } if y_um == 1.0
    ));
    assert!(matches!(
        err(parts(vec![at(0.0, 0.0, "a"), at(f64::INFINITY, 1.0, "b")])),
        ProbeError::NonFinitePosition { channel: 1, .. }
    ));
    assert_eq!(
        err(parts(vec![at(0.0, 0.0, "a"), None, at(1.0, 0.0, "a")])),
        ProbeError::DuplicateContactId {
            id: "a".into(),
            first: 0,
            second: 2
        }
    );
    assert_eq!(
        err(parts(vec![at(0.0, 0.0, "")])),
        ProbeError::EmptyContactId { channel: 0 }
    );
    assert_eq!(
        err(ProbeParts {
            shank_pitch_um: Some(-1.0),
            ..parts(vec![at(0.0, 0.0, "a")])
        }),
        ProbeError::BadLength {
            what: "shank pitch",
            value: -1.0
        }
    );
    let mut slotted = Contact::new(0.0, 0.0, 0, "a");
    slotted.adc = Some(AdcSlot { adc: 2, order: 13 });
    assert_eq!(
        err(parts(vec![Some(slotted.clone())])),
        ProbeError::AdcWithoutCycle { channel: 0 }
    );
    let cycle = AdcCycle {
        adcs: 32,
        channels_per_adc: 12,
        cycle_samples: 13,
    };
    assert_eq!(
        err(ProbeParts {
            adc_cycle: Some(cycle),
            ..parts(vec![Some(slotted)])
        }),
        ProbeError::AdcSlotOutOfCycle {
            channel: 0,
            adc: 2,
            order: 13,
            adcs: 32,
            cycle_samples: 13
        }
    );
    assert!(matches!(
        err(ProbeParts {
            adc_cycle: Some(AdcCycle {
                cycle_samples: 11,
                ..cycle
            }),
            ..parts(vec![at(0.0, 0.0, "a")])
        }),
        ProbeError::BadAdcCycle { .. }
    ));
}

#[test]
fn lookups_refuse_bad_channels_and_radii() {
    let p = staggered();
    assert_eq!(p.contact(4), Err(ProbeError::NoContact { channel: 4 }));
    assert_eq!(
        p.within(6, 10.0),
        Err(ProbeError::ChannelOutOfRange {
            channel: 6,
            count: 6
        })
    );
    for (inner, outer) in [(-1.0, 5.0), (5.0, 5.0), (6.0, 5.0), (0.0, f64::NAN)] {
        assert!(
            matches!(p.annulus(0, inner, outer), Err(ProbeError::BadRadii { .. })),
            "{inner}..{outer}"
        );
    }
    assert!(p.within(0, 0.0).unwrap().is_empty());
    assert!(matches!(
        p.within(0, -1.0),
        Err(ProbeError::BadRadii { .. })
    ));
    assert_eq!(
        p.check_channel_count(5),
        Err(ProbeError::ChannelCountMismatch {
            probe: 6,
            recording: 5
        })
    );
}

#[test]
fn select_follows_the_channels_and_refuses_repeats() {
    let p = staggered();
    let s = p.select(&[5, 4, 2]).unwrap();
    assert_eq!(s.channel_count(), 3);
    assert_eq!(s.contact(0).unwrap().id, "e4");
    assert_eq!(s.contact(1), Err(ProbeError::NoContact { channel: 1 }));
    assert_eq!(s.within(2, 26.0).unwrap(), vec![0]);
    assert!(matches!(
        p.select(&[0, 0]),
        Err(ProbeError::DuplicateContactId { .. })
    ));
    assert_eq!(
        p.select(&[7]),
        Err(ProbeError::ChannelOutOfRange {
            channel: 7,
            count: 6
        })
    );
    assert_eq!(p.select(&[4]), Err(ProbeError::NoContacts { channels: 1 }));
}

#[test]
fn serde_round_trips_and_checks_on_read() {
    let p = staggered();
    let text = serde_json::to_string(&p).unwrap();
    assert!(text.contains("null"), "{text}");
    let back: Probe = serde_json::from_str(&text).unwrap();
    assert_eq!(back, p);
    let dup =
        r#"{"channels": [{"x_um": 0, "y_um": 0, "id": "a"}, {"x_um": 1, "y_um": 0, "id": "a"}]}"#;
    let e = serde_json::from_str::<Probe>(dup).expect_err("duplicate id");
    assert!(e.to_string().contains("both name contact 'a'"), "{e}");
    let unknown = r#"{"channels": [{"x_um": 0, "y_um": 0, "id": "a", "z": 1}]}"#;
    assert!(serde_json::from_str::<Probe>(unknown).is_err());
}

/// A probe of `n` channels on a coarse grid (ties in distance are common), every fifth
/// channel without a contact, and a subset of its channels in a random order.
fn probe_and_subset() -> impl Strategy<Value = (Probe, Vec<usize>, f64, usize)> {
    (2usize..40)
        .prop_flat_map(|n| {
            (
                prop::collection::vec((0u8..4, 0u8..12), n),
                Just((0..n).collect::<Vec<_>>()).prop_shuffle(),
                1usize..=n,
                0.0f64..80.0,
                0usize..12,
            )
        })
        .prop_filter_map("a probe with a contact", |(xy, order, keep, r, k)| {
            let channels = xy
                .iter()
                .enumerate()
                .map(|(i, &(x, y))| {
                    (i % 5 != 4).then(|| {
                        Contact::new(f64::from(x) * 16.0, f64::from(y) * 20.0, 0, format!("e{i}"))
                    })
                })
                .collect();
            let probe = Probe::new(parts(channels)).ok()?;
            let subset: Vec<usize> = order.into_iter().take(keep).collect();
            probe.select(&subset).ok()?;
            Some((probe, subset, r, k))
        })
}

proptest! {
    #[test]
    fn subset_then_lookup_equals_lookup_then_subset((probe, subset, r, k) in probe_and_subset()) {
        let sel = probe.select(&subset).unwrap();
        for (i, &parent) in subset.iter().enumerate() {
            if sel.contact(i).is_err() {
                prop_assert!(probe.contact(parent).is_err());
                continue;
            }
            let in_subset = |c: &usize| subset.contains(c);
            let mut got: Vec<usize> = sel.within(i, r).unwrap().iter().map(|&j| subset[j]).collect();
            let mut want: Vec<usize> = probe.within(parent, r).unwrap().into_iter().filter(in_subset).collect();
            got.sort_unstable();
            want.sort_unstable();
            prop_assert_eq!(got, want);

            let mut got: Vec<usize> = sel.annulus(i, r / 2.0, r + 1.0).unwrap().iter().map(|&j| subset[j]).collect();
            let mut want: Vec<usize> = probe.annulus(parent, r / 2.0, r + 1.0).unwrap().into_iter().filter(in_subset).collect();
            got.sort_unstable();
            want.sort_unstable();
            prop_assert_eq!(got, want);

            // Nearest: the same distances (ties may pick other channels at equal distance).
            let dist = |p: &Probe, a: usize, b: usize| p.distance_um(a, b).unwrap();
            let got: Vec<f64> = sel.nearest(i, k).unwrap().iter().map(|&j| dist(&sel, i, j)).collect();
            let want: Vec<f64> = probe.nearest(parent, usize::MAX).unwrap().into_iter()
                .filter(in_subset).take(k).map(|c| dist(&probe, parent, c)).collect();
            prop_assert_eq!(got, want);
        }
    }
}
