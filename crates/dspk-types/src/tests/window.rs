//! Tests of halo windows: tiling, halos, local positions and event ownership.

use std::ops::Range;

use proptest::prelude::*;

use super::*;

/// The read range of an owned range, computed in wide signed arithmetic (independently of the
/// saturating arithmetic of the implementation).
fn expected_read(owned: &Range<u64>, left: u64, right: u64, total: u64) -> Range<u64> {
    let start = (i128::from(owned.start) - i128::from(left)).max(0);
    let end = (i128::from(owned.end) + i128::from(right)).min(i128::from(total));
    start as u64..end as u64
}

/// Checks one window against the laws that hold for each window alone.
fn check_window(w: &HaloWindow, left: u64, right: u64, total: u64) -> Result<(), TestCaseError> {
    prop_assert!(
        w.valid_global.start < w.valid_global.end,
        "empty window {w:?}"
    );
    prop_assert_eq!(
        &w.read_global,
        &expected_read(&w.valid_global, left, right, total)
    );
    prop_assert_eq!(
        w.read_global.start + w.valid_local.start as u64,
        w.valid_global.start,
        "valid_local does not locate the owned part of {:?}",
        w
    );
    prop_assert_eq!(
        w.valid_len() as u64,
        w.valid_global.end - w.valid_global.start
    );
    prop_assert!(w.valid_local.end <= w.read_len());
    prop_assert_eq!(w.read_len() as u64, w.read_global.end - w.read_global.start);
    // Boundaries of ownership.
    let (vs, ve) = (w.valid_local.start, w.valid_local.end);
    if vs > 0 {
        prop_assert_eq!(w.remap_event(vs - 1), None);
        prop_assert!(!w.is_interior_local(vs - 1));
    }
    prop_assert_eq!(w.remap_event(vs), Some(w.valid_global.start));
    prop_assert_eq!(w.remap_event(ve - 1), Some(w.valid_global.end - 1));
    prop_assert_eq!(w.remap_event(ve), None);
    prop_assert_eq!(w.remap_event(w.read_len()), None);
    prop_assert_eq!(w.to_global_sample(w.read_len() - 1), w.read_global.end - 1);
    Ok(())
}

/// Checks a whole schedule: tiling, per-window laws, the longest read, and the lazy form.
fn check_schedule(
    target: Range<u64>,
    batch: u64,
    left: u64,
    right: u64,
    total: u64,
    count_events: bool,
) -> Result<(), TestCaseError> {
    let s = ChunkSchedule::new(target.clone(), batch, left, right, total)
        .map_err(|e| TestCaseError::fail(format!("valid input refused: {e}")))?;
    let len = target.end - target.start;
    prop_assert_eq!(s.len() as u64, len.div_ceil(batch));
    prop_assert_eq!(s.is_empty(), len == 0);
    let ws = s.windows();
    // Tiling: no gap, no overlap, every window full but the last.
    let mut next = target.start;
    for (i, w) in ws.iter().enumerate() {
        prop_assert_eq!(w.index, i);
        prop_assert_eq!(
            w.valid_global.start,
            next,
            "gap or overlap before window {}",
            i
        );
        let owned = w.valid_global.end - w.valid_global.start;
        if i + 1 < ws.len() {
            prop_assert_eq!(owned, batch);
        } else {
            prop_assert!(owned <= batch);
        }
        next = w.valid_global.end;
        check_window(w, left, right, total)?;
    }
    prop_assert_eq!(next, target.end);
    // The longest read, by brute force, and by the closed form of the lazy iterator.
    let longest = ws.iter().map(|w| w.read_len() as u64).max().unwrap_or(0);
    prop_assert_eq!(s.max_read_samples(), longest);
    let lazy = ChunkSchedule::iter(target.clone(), batch, left, right, total)
        .map_err(|e| TestCaseError::fail(format!("valid input refused by iter: {e}")))?;
    prop_assert_eq!(lazy.max_read_samples(), longest);
    prop_assert_eq!(lazy.len(), ws.len());
    prop_assert_eq!(&lazy.clone().collect::<Vec<_>>()[..], ws);
    let mut back: Vec<_> = lazy.rev().collect();
    back.reverse();
    prop_assert_eq!(&back[..], ws);
    // Every sample of the target is returned by exactly one window, nothing else is.
    if count_events {
        let mut seen = vec![0u32; total as usize];
        for w in ws {
            for local in 0..w.read_len() {
                if let Some(g) = w.remap_event(local) {
                    prop_assert_eq!(g, w.to_global_sample(local));
                    seen[g as usize] += 1;
                }
            }
        }
        for (g, &n) in seen.iter().enumerate() {
            let want = u32::from(target.contains(&(g as u64)));
            prop_assert_eq!(n, want, "sample {} returned {} times", g, n);
        }
    }
    Ok(())
}

/// A target inside `0..total` from two fractions, sometimes ending at the last sample.
fn target_in(total: u64, a: f64, b: f64, to_end: bool) -> Range<u64> {
    let x = (a * total as f64) as u64;
    let y = (b * total as f64) as u64;
    let (start, end) = (x.min(y).min(total), x.max(y).min(total));
    if to_end { start..total } else { start..end }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Small recordings (down to 1 sample, and empty), halos up to larger than the recording:
    /// every law, including ownership of every sample.
    #[test]
    fn small_recordings_tile_and_own_every_sample(
        total in 0u64..300,
        a in 0.0f64..=1.0,
        b in 0.0f64..=1.0,
        to_end in any::<bool>(),
        batch in 1u64..80,
        left in prop_oneof![0u64..10, 0u64..700],
        right in prop_oneof![0u64..10, 0u64..700],
    ) {
        let target = target_in(total, a, b, to_end);
        check_schedule(target, batch, left, right, total, true)?;
    }

    /// One-sample recordings with any halos and batches.
    #[test]
    fn one_sample_recordings(batch in 1u64..5, left in 0u64..5, right in 0u64..5, empty in any::<bool>()) {
        let target = if empty { 1..1 } else { 0..1 };
        check_schedule(target.clone(), batch, left, right, 1, true)?;
        if !empty {
            let s = ChunkSchedule::new(target, batch, left, right, 1).unwrap();
            prop_assert_eq!(s.windows().to_vec(), vec![HaloWindow {
                index: 0,
                valid_global: 0..1,
                read_global: 0..1,
                valid_local: 0..1,
                pad_left: 0,
                pad_right: 0,
                edge: EdgeMode::Clamp,
            }]);
        }
    }

    /// Recordings past 2^32 samples, up to a few thousand windows: tiling, halos, local
    /// positions and ownership at every window boundary.
    #[test]
    fn huge_recordings_tile(
        total in (1u64 << 32)..(1u64 << 44),
        a in 0.0f64..=1.0,
        b in 0.0f64..=1.0,
        to_end in any::<bool>(),
        windows in 1u64..3000,
        extra in 0u64..1000,
        left in prop_oneof![0u64..100_000, 0u64..(1u64 << 45)],
        right in prop_oneof![0u64..100_000, 0u64..(1u64 << 45)],
    ) {
        let target = target_in(total, a, b, to_end);
        let batch = ((target.end - target.start) / windows).max(1) + extra;
        check_schedule(target, batch, left, right, total, false)?;
    }

    /// Schedules with far too many windows to list: walked lazily, window k and k+1 meet,
    /// the last ends at the target's end, and the reads follow the halo law.
    #[test]
    fn lazy_schedules_of_billions_of_windows(
        total in (1u64 << 33)..(1u64 << 50),
        batch in 1u64..64,
        left in 0u64..1000,
        right in 0u64..1000,
        k_frac in 0.0f64..1.0,
    ) {
        let mut it = ChunkSchedule::iter(0..total, batch, left, right, total).unwrap();
        let count = it.len();
        prop_assert_eq!(count as u64, total.div_ceil(batch));
        let k = ((k_frac * count as f64) as usize).min(count - 2);
        let wk = it.clone().nth(k).unwrap();
        let wk1 = it.clone().nth(k + 1).unwrap();
        prop_assert_eq!(wk.index, k);
        prop_assert_eq!(wk.valid_global.end, wk1.valid_global.start);
        prop_assert_eq!(wk.valid_global.start, k as u64 * batch);
        check_window(&wk, left, right, total)?;
        check_window(&wk1, left, right, total)?;
        // The sample at the boundary is owned by window k+1 only.
        let boundary = wk1.valid_global.start;
        let in_k = (boundary - wk.read_global.start) as usize;
        prop_assert!(in_k >= wk.read_len() || wk.remap_event(in_k).is_none());
        let in_k1 = (boundary - wk1.read_global.start) as usize;
        prop_assert_eq!(wk1.remap_event(in_k1), Some(boundary));
        let first = it.next().unwrap();
        let last = it.next_back().unwrap();
        prop_assert_eq!(first.valid_global.start, 0);
        prop_assert_eq!(last.valid_global.end, total);
        prop_assert_eq!(last.index, count - 1);
        check_window(&first, left, right, total)?;
        check_window(&last, left, right, total)?;
        prop_assert_eq!(it.len(), count - 2);
        let full = batch + left + right;
        prop_assert_eq!(it.max_read_samples(), full.min(total));
    }
}

#[test]
fn example_schedule() {
    let s = ChunkSchedule::new(100..350, 100, 10, 20, 360).unwrap();
    let ws = s.windows();
    assert_eq!(ws.len(), 3);
    assert_eq!(ws[0].valid_global, 100..200);
    assert_eq!(ws[0].read_global, 90..220);
    assert_eq!(ws[0].valid_local, 10..110);
    assert_eq!(ws[2].valid_global, 300..350);
    assert_eq!(ws[2].read_global, 290..360);
    assert_eq!(ws[2].valid_local, 10..60);
    assert_eq!(ws[2].remap_event(9), None);
    assert_eq!(ws[2].remap_event(10), Some(300));
    assert_eq!(ws[2].remap_event(59), Some(349));
    assert_eq!(ws[2].remap_event(60), None);
    assert_eq!(s.max_read_samples(), 130);
    assert_eq!(
        (
            s.target(),
            s.batch(),
            s.left_halo(),
            s.right_halo(),
            s.total()
        ),
        (100..350, 100, 10, 20, 360)
    );
    let by_ref: Vec<usize> = (&s).into_iter().map(|w| w.index).collect();
    assert_eq!(by_ref, vec![0, 1, 2]);
    assert_eq!(s.clone().into_windows(), s.into_iter().collect::<Vec<_>>());
}

#[test]
fn full_recording_is_the_whole_target() {
    let a = ChunkSchedule::full_recording(1000, 300, 7, 9).unwrap();
    let b = ChunkSchedule::new(0..1000, 300, 7, 9, 1000).unwrap();
    assert_eq!(a, b);
    assert_eq!(a.len(), 4);
    assert_eq!(a.windows()[3].valid_global, 900..1000);
    assert_eq!(a.windows()[3].read_global, 893..1000);
}

#[test]
fn empty_targets_give_empty_schedules() {
    for (target, total) in [(0..0, 0), (5..5, 10), (10..10, 10)] {
        let s = ChunkSchedule::new(target.clone(), 4, 2, 2, total).unwrap();
        assert!(s.is_empty(), "{target:?}");
        assert_eq!(s.len(), 0);
        assert_eq!(s.max_read_samples(), 0);
        assert_eq!(
            ChunkSchedule::iter(target, 4, 2, 2, total).unwrap().len(),
            0
        );
    }
}

#[test]
fn batch_zero_is_refused_by_name() {
    let e = ChunkSchedule::new(0..10, 0, 1, 1, 10).unwrap_err();
    assert!(matches!(e, DspError::InvalidConfig(_)), "{e:?}");
    let text = e.to_string();
    assert!(text.contains("batch") && text.contains("got 0"), "{text}");
    assert!(ChunkSchedule::full_recording(10, 0, 0, 0).is_err());
    assert!(ChunkSchedule::iter(0..10, 0, 0, 0, 10).is_err());
}

#[test]
fn targets_outside_the_recording_name_the_values() {
    let cases = [
        (5..12, 10),
        (11..11, 10),
        (Range { start: 7, end: 3 }, 10), // reversed
        (0..1, 0),
        (1u64 << 40..(1u64 << 40) + 1, 1u64 << 40),
    ];
    for (target, total) in cases {
        let e = ChunkSchedule::new(target.clone(), 4, 0, 0, total).unwrap_err();
        assert_eq!(
            e,
            DspError::SampleRange {
                start: target.start,
                end: target.end,
                total
            }
        );
        let text = e.to_string();
        for v in [target.start, target.end, total] {
            assert!(text.contains(&v.to_string()), "{text} lacks {v}");
        }
        assert_eq!(ChunkSchedule::iter(target, 4, 0, 0, total).unwrap_err(), e);
    }
}

#[test]
fn halos_larger_than_the_recording_read_everything() {
    let s = ChunkSchedule::full_recording(50, 10, 1000, 1000).unwrap();
    for w in s.windows() {
        assert_eq!(w.read_global, 0..50);
        assert_eq!(w.valid_local.start as u64, w.valid_global.start);
    }
    assert_eq!(s.max_read_samples(), 50);
}
