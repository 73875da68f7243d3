//! The host's share of a report, spread over its cores: a window's values are reduced to a
//! picture on the host while the devices wait, so each reduction splits its rows (or its
//! values) into one contiguous part per core, in scoped threads, and joins the parts in order —
//! the result does not depend on how many cores there are.

use std::ops::Range;
use std::thread;

/// Values below which a reduction stays on the calling thread (a thread costs more).
const SERIAL_BELOW: usize = 1 << 16;

/// How many parts `work` units are split into: one per core, none smaller than one unit.
fn parts(units: usize, work: usize) -> usize {
    if work < SERIAL_BELOW {
        return 1;
    }
    let cores = thread::available_parallelism().map_or(1, |n| n.get());
    cores.min(units).max(1)
}

/// `f` of each of the contiguous parts `0..units` is split into (`work`: how many values they
/// hold together, to keep small jobs on this thread), in order.
pub(crate) fn map_parts<T: Send>(
    units: usize,
    work: usize,
    f: impl Fn(Range<usize>) -> T + Sync,
) -> Vec<T> {
    let n = parts(units, work);
    let ranges: Vec<Range<usize>> = (0..n).map(|k| k * units / n..(k + 1) * units / n).collect();
    if n == 1 {
        return ranges.into_iter().map(&f).collect();
    }
    let f = &f;
    thread::scope(|scope| {
        let handles: Vec<_> = ranges
            .into_iter()
            .map(|range| scope.spawn(move || f(range)))
            .collect();
        handles
            .into_iter()
            .map(|h| match h.join() {
                Ok(v) => v,
                Err(panic) => std::panic::resume_unwind(panic),
            })
            .collect()
    })
}

/// `f` of each of `units` (a row, a channel), in order, the units spread over the cores.
pub(crate) fn map_units<T: Send>(
    units: usize,
    work: usize,
    f: impl Fn(usize) -> T + Sync,
) -> Vec<T> {
    map_parts(units, work, |range| range.map(&f).collect::<Vec<_>>())
        .into_iter()
        .flatten()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_cover_every_unit_once_in_order() {
        for units in [0, 1, 7, 1000] {
            let got = map_units(units, 1 << 20, |i| i * 3);
            assert_eq!(got, (0..units).map(|i| i * 3).collect::<Vec<_>>());
            let small = map_units(units, 10, |i| i + 1);
            assert_eq!(small, (1..=units).collect::<Vec<_>>());
        }
    }
}
