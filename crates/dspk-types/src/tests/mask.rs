//! Tests of the channel mask: constructors, range checks, algebra laws, the JSON form.

use std::collections::BTreeSet;

use proptest::prelude::*;

use super::*;

fn enabled_set(m: &ChannelMask) -> BTreeSet<usize> {
    m.enabled_indices().into_iter().collect()
}

/// Sets computed from the flags directly, independent of the mask's own methods.
fn set_of(flags: &[bool], wanted: bool) -> BTreeSet<usize> {
    (0..flags.len()).filter(|&i| flags[i] == wanted).collect()
}

fn complement(m: &ChannelMask) -> ChannelMask {
    ChannelMask::from_bools(m.as_bools().iter().map(|&e| !e).collect())
}

/// Two flag vectors of one length (0..300 channels).
fn two_masks() -> impl Strategy<Value = (Vec<bool>, Vec<bool>)> {
    (0usize..300).prop_flat_map(|n| {
        (
            prop::collection::vec(any::<bool>(), n),
            prop::collection::vec(any::<bool>(), n),
        )
    })
}

#[test]
fn constructors_agree() {
    let a = ChannelMask::from_disabled_indices(6, &[1, 4, 4]).unwrap();
    let b = ChannelMask::from_bools(vec![true, false, true, true, false, true]);
    assert_eq!(a, b);
    assert_eq!(a.total_channels(), 6);
    assert_eq!(a.enabled_count(), 4);
    assert_eq!(a.disabled_count(), 2);
    assert_eq!(a.enabled_indices(), vec![0, 2, 3, 5]);
    assert_eq!(a.disabled_indices(), vec![1, 4]);
    let all = ChannelMask::all_enabled(384);
    assert_eq!(all.enabled_count(), 384);
    assert!(all.disabled_indices().is_empty());
    assert_eq!(ChannelMask::default().total_channels(), 0);
}

#[test]
fn index_past_the_end_is_named() {
    let err = ChannelMask::from_disabled_indices(4, &[1, 7, 9]).unwrap_err();
    assert_eq!(err, DspError::InvalidChannel { index: 7, count: 4 });
    let msg = err.to_string();
    assert!(msg.contains('7') && msg.contains('4'), "{msg}");
    assert_eq!(
        ChannelMask::from_disabled_indices(4, &[4]).unwrap_err(),
        DspError::InvalidChannel { index: 4, count: 4 }
    );
    assert!(ChannelMask::from_disabled_indices(0, &[0]).is_err());
}

#[test]
fn is_enabled_and_set_enabled_out_of_range() {
    let mut m = ChannelMask::from_bools(vec![true, false, true]);
    assert!(m.is_enabled(0) && !m.is_enabled(1) && m.is_enabled(2));
    assert!(!m.is_enabled(3) && !m.is_enabled(usize::MAX));
    let before = m.clone();
    assert_eq!(
        m.set_enabled(3, true).unwrap_err(),
        DspError::InvalidChannel { index: 3, count: 3 }
    );
    assert_eq!(m, before, "a refused set leaves the mask unchanged");
    m.set_enabled(1, true).unwrap();
    m.set_enabled(0, false).unwrap();
    assert_eq!(m.enabled_indices(), vec![1, 2]);
}

#[test]
fn combining_different_lengths_is_a_shape_mismatch() {
    let a = ChannelMask::all_enabled(3);
    let b = ChannelMask::all_enabled(5);
    let expected = DspError::shape("channel mask", 3, 5);
    assert_eq!(a.and(&b).unwrap_err(), expected);
    assert_eq!(a.or(&b).unwrap_err(), expected);
}

proptest! {
    #[test]
    fn algebra_laws((fa, fb) in two_masks()) {
        let (a, b) = (ChannelMask::from_bools(fa.clone()), ChannelMask::from_bools(fb.clone()));
        let (sa, sb) = (set_of(&fa, true), set_of(&fb, true));
        let or = a.or(&b).unwrap();
        let and = a.and(&b).unwrap();
        prop_assert_eq!(&or, &b.or(&a).unwrap());
        prop_assert_eq!(&and, &b.and(&a).unwrap());
        prop_assert_eq!(enabled_set(&or), sa.union(&sb).copied().collect::<BTreeSet<_>>());
        prop_assert_eq!(enabled_set(&and), sa.intersection(&sb).copied().collect::<BTreeSet<_>>());
        prop_assert_eq!(or.enabled_count(), sa.union(&sb).count());
        prop_assert_eq!(and.enabled_count(), sa.intersection(&sb).count());
        // De Morgan: not (a and b) = (not a) or (not b), and the dual.
        prop_assert_eq!(complement(&and), complement(&a).or(&complement(&b)).unwrap());
        prop_assert_eq!(complement(&or), complement(&a).and(&complement(&b)).unwrap());
        // Idempotence and identities.
        prop_assert_eq!(&a.and(&a).unwrap(), &a);
        prop_assert_eq!(&a.or(&a).unwrap(), &a);
        let all = ChannelMask::all_enabled(fa.len());
        prop_assert_eq!(&a.and(&all).unwrap(), &a);
        prop_assert_eq!(a.or(&all).unwrap(), all);
    }

    #[test]
    fn enabled_and_disabled_partition(flags in prop::collection::vec(any::<bool>(), 0..500)) {
        let m = ChannelMask::from_bools(flags.clone());
        let (en, dis) = (m.enabled_indices(), m.disabled_indices());
        prop_assert!(en.windows(2).all(|w| w[0] < w[1]));
        prop_assert!(dis.windows(2).all(|w| w[0] < w[1]));
        prop_assert_eq!(en.iter().copied().collect::<BTreeSet<_>>(), set_of(&flags, true));
        prop_assert_eq!(dis.iter().copied().collect::<BTreeSet<_>>(), set_of(&flags, false));
        let mut union: Vec<usize> = en.iter().chain(&dis).copied().collect();
        union.sort_unstable();
        prop_assert_eq!(union, (0..flags.len()).collect::<Vec<_>>());
        prop_assert_eq!(m.enabled_count() + m.disabled_count(), m.total_channels());
        prop_assert_eq!(m.total_channels(), flags.len());
        for (i, &f) in flags.iter().enumerate() {
            prop_assert_eq!(m.is_enabled(i), f);
        }
        // Rebuilding from the disabled list, in any order and with repeats, gives the mask.
        let mut shuffled: Vec<usize> = dis.iter().rev().chain(&dis).copied().collect();
        let third = shuffled.len() / 3;
        shuffled.rotate_left(third);
        prop_assert_eq!(ChannelMask::from_disabled_indices(flags.len(), &shuffled).unwrap(), m);
    }

    #[test]
    fn json_round_trip(flags in prop::collection::vec(any::<bool>(), 0..500)) {
        let m = ChannelMask::from_bools(flags.clone());
        let json = serde_json::to_string(&m).unwrap();
        let value: serde_json::Value = serde_json::from_str(&json).unwrap();
        prop_assert_eq!(value["total_channels"].as_u64(), Some(flags.len() as u64));
        let disabled: Vec<usize> = value["disabled"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap() as usize)
            .collect();
        prop_assert_eq!(disabled, set_of(&flags, false).into_iter().collect::<Vec<_>>());
        prop_assert_eq!(serde_json::from_str::<ChannelMask>(&json).unwrap(), m);
    }
}

#[test]
fn json_form() {
    let m = ChannelMask::from_disabled_indices(5, &[3, 0]).unwrap();
    assert_eq!(
        serde_json::to_string(&m).unwrap(),
        r#"{"total_channels":5,"disabled":[0,3]}"#
    );
    let read: ChannelMask =
        serde_json::from_str(r#"{ "disabled": [3, 0, 3], "total_channels": 5 }"#).unwrap();
    assert_eq!(read, m);
}

#[test]
fn bad_json_is_refused() {
    let past = serde_json::from_str::<ChannelMask>(r#"{"total_channels":4,"disabled":[2,11]}"#)
        .unwrap_err()
        .to_string();
    assert!(past.contains("channel 11"), "{past}");
    let unknown =
        serde_json::from_str::<ChannelMask>(r#"{"total_channels":4,"disabled":[],"enabled":[1]}"#)
            .unwrap_err()
            .to_string();
    assert!(unknown.contains("enabled"), "{unknown}");
    for bad in [
        r#"{"total_channels":4}"#,
        r#"{"disabled":[]}"#,
        r#"{"total_channels":-1,"disabled":[]}"#,
        r#"{"total_channels":4,"disabled":[-1]}"#,
        r#"[true, false]"#,
    ] {
        assert!(serde_json::from_str::<ChannelMask>(bad).is_err(), "{bad}");
    }
    // A channel count that cannot be allocated is an error, not an abort.
    let huge = format!(r#"{{"total_channels":{},"disabled":[]}}"#, usize::MAX);
    assert!(serde_json::from_str::<ChannelMask>(&huge).is_err());
}
