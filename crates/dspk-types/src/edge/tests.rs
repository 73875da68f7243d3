//! Tests of edge modes: numpy's reference values, the defining identities of each mode, padded
//! schedules and the padding loader.

use std::ops::Range;

use proptest::prelude::*;

use crate::*;

/// The table `scripts/edge_reference.py` wrote with numpy.pad (and scipy's odd_ext).
const REFERENCE: &str = include_str!("reference.json");

/// A window over `0..read_len` with the given pads, as a schedule would never build it (for
/// the host functions alone).
fn window(read_len: u64, pad_left: usize, pad_right: usize, edge: EdgeMode) -> HaloWindow {
    HaloWindow {
        index: 0,
        valid_global: 0..read_len,
        read_global: 0..read_len,
        valid_local: 0..read_len as usize,
        pad_left,
        pad_right,
        edge,
    }
}

/// Whether the rule on [`EdgeMode`] allows padding `len` samples by `(left, right)`, written
/// out case by case.
fn allowed(mode: EdgeMode, len: usize, left: usize, right: usize) -> bool {
    let pad = left.max(right);
    match mode {
        EdgeMode::Clamp => pad == 0,
        EdgeMode::Zeros => true,
        EdgeMode::Nearest => pad == 0 || len >= 1,
        EdgeMode::Reflect | EdgeMode::Odd => pad == 0 || pad < len,
    }
}

fn f32s(v: &serde_json::Value) -> Vec<f32> {
    v.as_array()
        .expect("an array of numbers")
        .iter()
        .map(|x| x.as_f64().expect("a number") as f32)
        .collect()
}

#[test]
fn padding_matches_numpy_exactly() {
    let doc: serde_json::Value = serde_json::from_str(REFERENCE).unwrap();
    let cases = doc["cases"].as_array().unwrap();
    assert!(cases.len() >= 60, "the table lost cases");
    let mut seen_modes = std::collections::HashSet::new();
    for case in cases {
        let mode: EdgeMode = case["mode"].as_str().unwrap().parse().unwrap();
        seen_modes.insert(mode);
        let data = f32s(&case["data"]);
        let want = f32s(&case["padded"]);
        let left = case["pad_left"].as_u64().unwrap() as usize;
        let right = case["pad_right"].as_u64().unwrap() as usize;
        let mut out = vec![f32::NAN; want.len()];
        mode.pad_into(&data, left, right, &mut out).unwrap();
        assert_eq!(out, want, "{mode} {data:?} padded ({left}, {right})");

        // The window functions, on two channels (the row and its negation), both layouts.
        let w = window(data.len() as u64, left, right, mode);
        let neg: Vec<f32> = data.iter().map(|x| -x).collect();
        let neg_want: Vec<f32> = {
            let mut o = vec![0.0; want.len()];
            mode.pad_into(&neg, left, right, &mut o).unwrap();
            o
        };
        let cm: Vec<f32> = data.iter().chain(&neg).copied().collect();
        let cm_want: Vec<f32> = want.iter().chain(&neg_want).copied().collect();
        assert_eq!(padded_channel_major(&w, 2, &cm).unwrap(), cm_want);
        let mut in_place = cm.clone();
        in_place.resize(cm_want.len(), f32::NAN);
        pad_channel_major_in_place(&w, 2, &mut in_place).unwrap();
        assert_eq!(in_place, cm_want, "in place, {mode} ({left}, {right})");
        let tm: Vec<f32> = data.iter().zip(&neg).flat_map(|(a, b)| [*a, *b]).collect();
        let tm_want: Vec<f32> = want
            .iter()
            .zip(&neg_want)
            .flat_map(|(a, b)| [*a, *b])
            .collect();
        let mut out = vec![f32::NAN; tm_want.len()];
        pad_time_major(&w, 2, &tm, &mut out).unwrap();
        assert_eq!(out, tm_want, "time-major, {mode} ({left}, {right})");
    }
    let padding: Vec<EdgeMode> = EdgeMode::ALL.into_iter().filter(|m| m.pads()).collect();
    assert!(padding.iter().all(|m| seen_modes.contains(m)));
}

#[test]
fn pads_longer_than_the_data_allows_are_refused() {
    // scipy's odd_ext refuses n > len - 1; dspk refuses it for reflect too.
    for mode in [EdgeMode::Reflect, EdgeMode::Odd] {
        let err = mode
            .pad_into(&[1.0, 2.0, 3.0], 3, 0, &mut [0.0; 6])
            .unwrap_err();
        let DspError::InvalidConfig(text) = &err else {
            panic!("{err:?}");
        };
        assert!(
            text.contains(mode.name()) && text.contains("pad 3 on the left"),
            "{text}"
        );
        assert!(
            text.contains("at least 4") && text.ends_with("got 3"),
            "{text}"
        );
        let err = mode.pad_into(&[5.0], 0, 1, &mut [0.0; 2]).unwrap_err();
        assert!(err.to_string().contains("on the right"), "{err}");
        assert!(mode.pad_into(&[1.0, 2.0, 3.0], 2, 2, &mut [0.0; 7]).is_ok());
    }
    assert!(EdgeMode::Nearest.pad_into(&[], 1, 0, &mut [0.0]).is_err());
    assert!(
        EdgeMode::Nearest
            .pad_into(&[4.0], 5, 5, &mut [0.0; 11])
            .is_ok()
    );
    let mut out = [1.0; 3];
    EdgeMode::Zeros.pad_into(&[], 1, 2, &mut out).unwrap();
    assert_eq!(out, [0.0; 3]);
    // Only a right pad of no data (there is no edge sample to look at).
    let mut out = [1.0; 2];
    EdgeMode::Zeros.pad_into(&[], 0, 2, &mut out).unwrap();
    assert_eq!(out, [0.0; 2]);
    let err = EdgeMode::Clamp
        .pad_into(&[1.0], 1, 0, &mut [0.0; 2])
        .unwrap_err();
    assert!(
        err.to_string().contains("clamp edge mode pads nothing"),
        "{err}"
    );
    let mut out = [0.0; 2];
    EdgeMode::Clamp
        .pad_into(&[1.0, 2.0], 0, 0, &mut out)
        .unwrap();
    assert_eq!(out, [1.0, 2.0]);
}

#[test]
fn bad_sizes_are_typed_errors() {
    let shape = |e: DspError| matches!(e, DspError::ShapeMismatch { .. });
    assert!(shape(
        EdgeMode::Zeros
            .pad_into(&[1.0], 1, 1, &mut [0.0; 4])
            .unwrap_err()
    ));
    let w = window(4, 2, 1, EdgeMode::Reflect);
    assert!(shape(
        pad_channel_major(&w, 2, &[0.0; 7], &mut [0.0; 14]).unwrap_err()
    ));
    assert!(shape(
        pad_channel_major(&w, 2, &[0.0; 8], &mut [0.0; 13]).unwrap_err()
    ));
    assert!(shape(
        pad_time_major(&w, 2, &[0.0; 9], &mut [0.0; 14]).unwrap_err()
    ));
    assert!(shape(
        pad_channel_major_in_place(&w, 2, &mut [0.0; 8]).unwrap_err()
    ));
    assert!(shape(padded_channel_major(&w, 3, &[0.0; 8]).unwrap_err()));
    // Pads that overflow, and a reversed read: errors, no panic.
    let huge = window(4, usize::MAX, 1, EdgeMode::Zeros);
    assert!(matches!(
        pad_channel_major(&huge, 1, &[0.0; 4], &mut []).unwrap_err(),
        DspError::Overflow(_)
    ));
    let mut reversed = window(4, 0, 0, EdgeMode::Zeros);
    reversed.read_global = Range { start: 4, end: 2 };
    assert!(pad_channel_major(&reversed, 1, &[], &mut []).is_err());
    // A clamp window that claims pads.
    let lying = window(4, 1, 0, EdgeMode::Clamp);
    assert!(matches!(
        pad_channel_major(&lying, 1, &[0.0; 4], &mut [0.0; 5]).unwrap_err(),
        DspError::InvalidConfig(_)
    ));
    // No channels: nothing to pad, and no error.
    assert!(pad_channel_major(&w, 0, &[], &mut []).is_ok());
    assert!(pad_time_major(&w, 0, &[], &mut []).is_ok());
}

#[test]
fn names_parse_display_and_serialize() {
    assert_eq!(EdgeMode::default(), EdgeMode::Clamp);
    for mode in EdgeMode::ALL {
        assert_eq!(mode.name().parse::<EdgeMode>().unwrap(), mode);
        assert_eq!(mode.to_string(), mode.name());
        let json = serde_json::to_string(&mode).unwrap();
        assert_eq!(json, format!("\"{}\"", mode.name()));
        assert_eq!(serde_json::from_str::<EdgeMode>(&json).unwrap(), mode);
    }
    assert_eq!(" Reflect ".parse::<EdgeMode>().unwrap(), EdgeMode::Reflect);
    let err = "mirror".parse::<EdgeMode>().unwrap_err();
    assert!(matches!(err, DspError::InvalidConfig(_)));
    assert_eq!(
        err.to_string(),
        "invalid configuration: unknown edge mode 'mirror': expected one of clamp, zeros, \
         reflect, odd, nearest"
    );
    assert!(serde_json::from_str::<EdgeMode>("\"edge\"").is_err());
}

#[test]
fn schedules_refuse_what_reflect_cannot_pad() {
    // A halo longer than the recording.
    let s = ChunkSchedule::full_recording(10, 10, 20, 0).unwrap();
    for mode in [EdgeMode::Reflect, EdgeMode::Odd] {
        let err = s.clone().with_edge(mode).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("window 0 of 1") && text.contains("pad 20"),
            "{text}"
        );
    }
    for mode in [EdgeMode::Zeros, EdgeMode::Nearest, EdgeMode::Clamp] {
        let p = s.clone().with_edge(mode).unwrap();
        assert_eq!(p.max_buffer_samples(), if mode.pads() { 30 } else { 10 });
    }
    // A batch much shorter than the halo: the first window reads too little.
    let s = ChunkSchedule::full_recording(1000, 4, 10, 2).unwrap();
    assert!(s.clone().with_edge(EdgeMode::Reflect).is_err());
    assert!(
        ChunkSchedule::iter(0..1000, 4, 10, 2, 1000)
            .unwrap()
            .with_edge(EdgeMode::Odd)
            .is_err()
    );
    // Padded windows too long for memory indices.
    let s = ChunkSchedule::full_recording(100, 10, u64::MAX - 5, 0).unwrap();
    assert!(matches!(
        s.with_edge(EdgeMode::Zeros).unwrap_err(),
        DspError::Overflow(_)
    ));
    // Stored values are not padded.
    let rate = SampleRate::new(1000.0).unwrap();
    let rec = MemoryRecording::from_channels("r", rate, vec![(0..50).map(|v| v as f32).collect()])
        .unwrap();
    let s = ChunkSchedule::full_recording(50, 20, 3, 3).unwrap();
    let loader = WindowLoader::new(&rec);
    let padded = s.clone().with_edge(EdgeMode::Odd).unwrap();
    let err = loader
        .stream_stored(padded.windows(), |_, _| Ok(()))
        .unwrap_err();
    assert!(
        err.to_string().contains("stored values are not padded"),
        "{err}"
    );
    let clamped = s.with_edge(EdgeMode::Clamp).unwrap();
    assert!(
        loader
            .stream_stored(clamped.windows(), |_, _| Ok(()))
            .is_ok()
    );
    // A window whose pads its mode cannot make is refused before any read or callback.
    let mut bad = clamped.windows()[0].clone();
    (bad.edge, bad.pad_left) = (EdgeMode::Reflect, bad.read_len());
    let mut called = false;
    let err = loader
        .stream(&[clamped.windows()[1].clone(), bad], |_, _| {
            called = true;
            Ok(())
        })
        .unwrap_err();
    assert!(
        matches!(err, DspError::InvalidConfig(_)) && !called,
        "{err}"
    );
}

fn any_mode() -> impl Strategy<Value = EdgeMode> {
    proptest::sample::select(EdgeMode::ALL.to_vec())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Each mode's defining identities on random data and pads; refusals exactly where the
    /// rule says; the window functions agree with the row function in every layout.
    #[test]
    fn padding_obeys_the_identities_of_its_mode(
        mode in any_mode(),
        data in proptest::collection::vec(-1.0e3f32..1.0e3, 0..40),
        left in prop_oneof![0usize..4, 0usize..60],
        right in prop_oneof![0usize..4, 0usize..60],
        channels in 1usize..4,
    ) {
        let n = data.len();
        let mut out = vec![f32::NAN; left + n + right];
        let result = mode.pad_into(&data, left, right, &mut out);
        prop_assert_eq!(result.is_ok(), allowed(mode, n, left, right), "{:?}", result);
        if result.is_err() {
            return Ok(());
        }
        prop_assert_eq!(&out[left..left + n], &data[..]);
        for i in 0..left {
            let o = out[left - 1 - i];
            let want = match mode {
                EdgeMode::Clamp => unreachable!("clamp pads nothing"),
                EdgeMode::Zeros => 0.0,
                EdgeMode::Reflect => data[i + 1],
                EdgeMode::Odd => 2.0 * data[0] - data[i + 1],
                EdgeMode::Nearest => data[0],
            };
            prop_assert_eq!(o.to_bits(), want.to_bits(), "left pad {}", i);
        }
        for i in 0..right {
            let o = out[left + n + i];
            let want = match mode {
                EdgeMode::Clamp => unreachable!("clamp pads nothing"),
                EdgeMode::Zeros => 0.0,
                EdgeMode::Reflect => data[n - 2 - i],
                EdgeMode::Odd => 2.0 * data[n - 1] - data[n - 2 - i],
                EdgeMode::Nearest => data[n - 1],
            };
            prop_assert_eq!(o.to_bits(), want.to_bits(), "right pad {}", i);
        }

        // Several channels (channel c is the data plus c), channel-major and time-major.
        let rows: Vec<Vec<f32>> = (0..channels)
            .map(|c| data.iter().map(|x| x + c as f32).collect())
            .collect();
        let padded_rows: Vec<Vec<f32>> = rows
            .iter()
            .map(|r| {
                let mut o = vec![0.0; left + n + right];
                mode.pad_into(r, left, right, &mut o).unwrap();
                o
            })
            .collect();
        let w = window(n as u64, left, right, mode);
        prop_assert_eq!(w.padded_len(), left + n + right);
        let cm: Vec<f32> = rows.concat();
        let cm_want: Vec<f32> = padded_rows.concat();
        prop_assert_eq!(&padded_channel_major(&w, channels, &cm).unwrap(), &cm_want);
        let mut in_place = cm.clone();
        in_place.resize(cm_want.len(), f32::NAN);
        pad_channel_major_in_place(&w, channels, &mut in_place).unwrap();
        prop_assert_eq!(&in_place, &cm_want);
        let p = left + n + right;
        let tm: Vec<f32> = (0..n * channels).map(|k| rows[k % channels][k / channels]).collect();
        let tm_want: Vec<f32> =
            (0..p * channels).map(|k| padded_rows[k % channels][k / channels]).collect();
        let mut out = vec![f32::NAN; tm_want.len()];
        pad_time_major(&w, channels, &tm, &mut out).unwrap();
        prop_assert_eq!(&out, &tm_want);
    }
}

/// The halo samples before the recording and past its end, in wide signed arithmetic.
fn missing(owned: &Range<u64>, left: u64, right: u64, total: u64) -> (u64, u64) {
    let before = (i128::from(left) - i128::from(owned.start)).max(0);
    let after = (i128::from(owned.end) + i128::from(right) - i128::from(total)).max(0);
    (before as u64, after as u64)
}

/// A target inside `0..total` from two fractions.
fn target_in(total: u64, a: f64, b: f64) -> Range<u64> {
    let x = ((a * total as f64) as u64).min(total);
    let y = ((b * total as f64) as u64).min(total);
    x.min(y)..x.max(y)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Padded schedules: the owned parts tile the target, every window is
    /// `left + owned + right` long (`left + batch + right` but perhaps the last), the pads are
    /// the halo samples past the recording, and a refusal means some window truly reads too
    /// little (checking the first and last windows checks them all).
    #[test]
    fn padded_schedules_tile_with_full_width_windows(
        mode in any_mode(),
        total in 1u64..400,
        a in 0.0f64..=1.0,
        b in 0.0f64..=1.0,
        batch in 1u64..90,
        left in prop_oneof![0u64..10, 0u64..500],
        right in prop_oneof![0u64..10, 0u64..500],
    ) {
        let target = target_in(total, a, b);
        let plain = ChunkSchedule::new(target.clone(), batch, left, right, total).unwrap();
        let all_fit = !mode.pads() || plain.windows().iter().all(|w| {
            let (l, r) = missing(&w.valid_global, left, right, total);
            allowed(mode, w.read_len(), l as usize, r as usize)
        });
        let Ok(s) = plain.clone().with_edge(mode) else {
            prop_assert!(!all_fit, "refused though every window can be padded");
            prop_assert!(matches!(mode, EdgeMode::Reflect | EdgeMode::Odd));
            prop_assert!(ChunkSchedule::iter(target, batch, left, right, total)
                .unwrap()
                .with_edge(mode)
                .is_err());
            return Ok(());
        };
        prop_assert!(all_fit, "accepted though a window cannot be padded");
        prop_assert_eq!(s.edge(), mode);
        prop_assert_eq!(s.max_read_samples(), plain.max_read_samples());
        let ws = s.windows();
        prop_assert_eq!(ws.len(), plain.len());
        let mut next = target.start;
        for (w, p) in ws.iter().zip(plain.windows()) {
            // The read is unchanged; only the pads are new.
            prop_assert_eq!(&w.valid_global, &p.valid_global);
            prop_assert_eq!(&w.read_global, &p.read_global);
            prop_assert_eq!(&w.valid_local, &p.valid_local);
            prop_assert_eq!(w.edge, mode);
            prop_assert_eq!(w.valid_global.start, next);
            next = w.valid_global.end;
            let owned = w.valid_len() as u64;
            if w.index + 1 < ws.len() {
                prop_assert_eq!(owned, batch);
            }
            if mode.pads() {
                let (l, r) = missing(&w.valid_global, left, right, total);
                prop_assert_eq!((w.pad_left as u64, w.pad_right as u64), (l, r));
                prop_assert_eq!(w.padded_len() as u64, left + owned + right);
                let vp = w.valid_padded();
                prop_assert_eq!(vp.clone(), left as usize..(left + owned) as usize);
                prop_assert_eq!(w.remap_padded_event(vp.start), Some(w.valid_global.start));
                prop_assert_eq!(w.remap_padded_event(vp.end - 1), Some(w.valid_global.end - 1));
                prop_assert_eq!(w.remap_padded_event(vp.end), None);
                if vp.start > 0 {
                    prop_assert_eq!(w.remap_padded_event(vp.start - 1), None);
                }
            } else {
                prop_assert_eq!(w, p);
            }
        }
        prop_assert_eq!(next, target.end);
        if mode.pads() && !ws.is_empty() {
            let full = left + batch + right;
            let n = ws.len();
            prop_assert!(ws[..n - 1].iter().all(|w| w.padded_len() as u64 == full));
            prop_assert!(ws[n - 1].padded_len() as u64 <= full);
        }
        let longest = ws.iter().map(|w| w.padded_len() as u64).max().unwrap_or(0);
        prop_assert_eq!(s.max_buffer_samples(), longest);
        let lazy = ChunkSchedule::iter(target, batch, left, right, total)
            .unwrap()
            .with_edge(mode)
            .unwrap();
        prop_assert_eq!(lazy.max_buffer_samples(), longest);
        prop_assert_eq!(&lazy.collect::<Vec<_>>()[..], ws);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// The loader streams each mode's windows as the host function pads the clamped read, and
    /// that is the slice of the whole recording padded as numpy would; clamped windows arrive
    /// exactly as read.
    #[test]
    fn the_loader_streams_padded_windows(
        mode in any_mode(),
        seed in any::<u64>(),
        n_channels in 1usize..4,
        total in 1u64..600,
        batch in 1u64..200,
        left in 0u64..60,
        right in 0u64..60,
        picks in proptest::collection::vec(0usize..4, 1..4),
    ) {
        // Random values from a small LCG, exact in f32 and their odd reflections too.
        let mut state = seed | 1;
        let mut next = move || {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            ((state >> 40) % 4096) as f32 - 2048.0
        };
        let data: Vec<Vec<f32>> = (0..n_channels)
            .map(|_| (0..total).map(|_| next()).collect())
            .collect();
        let rate = SampleRate::new(30_000.0).unwrap();
        let rec = MemoryRecording::from_channels("r", rate, data.clone()).unwrap();
        let channels: Vec<usize> = picks.iter().map(|p| p % n_channels).collect();
        let plain = ChunkSchedule::full_recording(total, batch, left, right).unwrap();
        let Ok(schedule) = plain.clone().with_edge(mode) else {
            return Ok(());
        };
        // Each channel of the whole recording padded by the first window's left pad and the
        // last window's right pad, the most any window has.
        let ws = schedule.windows();
        let (pl, pr) = (ws[0].pad_left, ws[ws.len() - 1].pad_right);
        let whole: Vec<Vec<f32>> = data
            .iter()
            .map(|row| {
                let mut o = vec![0.0; pl + row.len() + pr];
                let m = if mode.pads() { mode } else { EdgeMode::Zeros };
                m.pad_into(row, pl, pr, &mut o).unwrap();
                o
            })
            .collect();
        let loader = WindowLoader::with_channels(&rec, channels.clone()).unwrap();
        let mut seen = 0;
        loader.stream(ws, |w, got| {
            let mut read = vec![0f32; channels.len() * w.read_len()];
            rec.read(&channels, w.read_global.clone(), &mut read)?;
            if mode.pads() {
                assert_eq!(got, padded_channel_major(w, channels.len(), &read)?.as_slice());
                // Padded index j of the window is whole-recording sample
                // valid_global.start - left + j, at pl + that in `whole`.
                let p = w.padded_len();
                let from = pl + w.valid_global.start as usize - left as usize;
                for (k, &c) in channels.iter().enumerate() {
                    assert_eq!(&got[k * p..(k + 1) * p], &whole[c][from..from + p]);
                }
            } else {
                assert_eq!(got, read.as_slice());
            }
            seen += 1;
            Ok(())
        }).unwrap();
        prop_assert_eq!(seen, ws.len());
        // Clamp through with_edge is the schedule as built.
        if !mode.pads() {
            prop_assert_eq!(&schedule, &plain);
        }
    }
}
