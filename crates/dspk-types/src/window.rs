//! Halo windows: a target range cut into owned pieces, each read with settling margins.

use std::iter::FusedIterator;
use std::ops::Range;

use crate::{DspError, DspResult, EdgeMode, RecordingInfo, Segments};

/// One window of a [`ChunkSchedule`]: the samples it owns, the padded range it reads, and
/// where the owned part sits in the padded buffer.
///
/// A filter run over `read_global` settles in the halos; only results inside `valid_local`
/// belong to this window, so results found twice in overlapping halos are kept once.
///
/// Under an [`EdgeMode`] that pads, the halo samples that fall outside the recording are made
/// up instead of dropped: the window's buffer holds `pad_left` made-up samples, the
/// `read_len` samples read, then `pad_right` made-up samples, and the owned part lies at
/// [`valid_padded`](Self::valid_padded). Every padded window of a schedule is then
/// `left_halo + valid_len + right_halo` samples long. Under [`EdgeMode::Clamp`] both pads are
/// 0 and the buffer is the read.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct HaloWindow {
    /// Position of the window in its schedule, from 0.
    pub index: usize,
    /// The samples this window owns, in recording sample indices.
    pub valid_global: Range<u64>,
    /// The samples read for it: `valid_global` plus the halos, clamped to the recording (to
    /// its segment, for a schedule cut at segments).
    pub read_global: Range<u64>,
    /// Where `valid_global` lies in a buffer holding `read_global` (buffer indices).
    pub valid_local: Range<usize>,
    /// Samples of the left halo before the start of the recording (or segment), made up as
    /// `edge` says and
    /// placed before the read in the window's buffer (0 under [`EdgeMode::Clamp`]).
    pub pad_left: usize,
    /// Samples of the right halo past the end of the recording (or segment), made up as
    /// `edge` says and
    /// placed after the read in the window's buffer (0 under [`EdgeMode::Clamp`]).
    pub pad_right: usize,
    /// What the halo holds past the ends of the recording.
    pub edge: EdgeMode,
}

impl HaloWindow {
    /// Samples read for the window (owned part and halos).
    pub fn read_len(&self) -> usize {
        (self.read_global.end - self.read_global.start) as usize
    }

    /// Samples the window owns.
    pub fn valid_len(&self) -> usize {
        self.valid_local.end - self.valid_local.start
    }

    /// Whether buffer index `local` lies in the owned part (not in a halo).
    pub fn is_interior_local(&self, local: usize) -> bool {
        self.valid_local.contains(&local)
    }

    /// The recording sample index of buffer index `local`.
    pub fn to_global_sample(&self, local: usize) -> u64 {
        self.read_global.start + local as u64
    }

    /// The recording sample index of an event found at buffer index `local`, or `None` when
    /// the event lies in a halo (the neighbouring window owns it and reports it).
    pub fn remap_event(&self, local: usize) -> Option<u64> {
        self.is_interior_local(local)
            .then(|| self.to_global_sample(local))
    }

    /// Samples in the window's buffer: `pad_left + read_len + pad_right` (`read_len` under
    /// [`EdgeMode::Clamp`]).
    pub fn padded_len(&self) -> usize {
        self.pad_left
            .saturating_add(self.read_len())
            .saturating_add(self.pad_right)
    }

    /// Where `valid_global` lies in the padded buffer: `valid_local` shifted by `pad_left`.
    pub fn valid_padded(&self) -> Range<usize> {
        self.valid_local.start + self.pad_left..self.valid_local.end + self.pad_left
    }

    /// The recording sample index of an event found at index `padded` of the padded buffer,
    /// or `None` when it lies in a halo (made-up samples always do).
    pub fn remap_padded_event(&self, padded: usize) -> Option<u64> {
        let local = padded.checked_sub(self.pad_left)?;
        self.remap_event(local)
    }
}

/// The plan shared by [`ChunkSchedule`] and [`HaloWindows`]: everything needed to compute
/// window `i` in constant time.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Plan {
    target: Range<u64>,
    batch: u64,
    left_halo: u64,
    right_halo: u64,
    /// The samples reads may reach: the recording, or the segment `target` lies in.
    bounds: Range<u64>,
    total: u64,
    count: usize,
    /// The schedule index of this plan's first window.
    first_index: usize,
    edge: EdgeMode,
}

impl Plan {
    fn new(
        target: Range<u64>,
        batch: u64,
        left_halo: u64,
        right_halo: u64,
        total: u64,
    ) -> DspResult<Self> {
        if batch == 0 {
            return Err(DspError::config(format!(
                "window batch must be at least 1 sample, got 0 (target {}..{}, recording of {total} samples)",
                target.start, target.end
            )));
        }
        if target.start > target.end || target.end > total {
            return Err(DspError::SampleRange {
                start: target.start,
                end: target.end,
                total,
            });
        }
        let len = target.end - target.start;
        let count = usize::try_from(len.div_ceil(batch)).map_err(|_| {
            DspError::Overflow(format!(
                "count of windows of {batch} samples over {len} samples"
            ))
        })?;
        let plan = Self {
            target,
            batch,
            left_halo,
            right_halo,
            bounds: 0..total,
            total,
            count,
            first_index: 0,
            edge: EdgeMode::Clamp,
        };
        // Every buffer index must be a usize: check the longest read.
        let longest = plan.max_read_samples();
        usize::try_from(longest).map_err(|_| {
            DspError::Overflow(format!(
                "a window read of {longest} samples on this platform"
            ))
        })?;
        Ok(plan)
    }

    fn owned_range(&self, i: usize) -> Range<u64> {
        let start = self.target.start + i as u64 * self.batch;
        let end = start.saturating_add(self.batch).min(self.target.end);
        start..end
    }

    /// The same windows kept inside `bounds` (a segment holding `target`), numbered from
    /// `first_index`.
    fn within(mut self, bounds: Range<u64>, first_index: usize) -> Self {
        debug_assert!(bounds.start <= self.target.start && self.target.end <= bounds.end);
        self.bounds = bounds;
        self.first_index = first_index;
        self
    }

    fn read_range(&self, i: usize) -> Range<u64> {
        let owned = self.owned_range(i);
        let start = owned
            .start
            .saturating_sub(self.left_halo)
            .max(self.bounds.start);
        let end = owned
            .end
            .saturating_add(self.right_halo)
            .min(self.bounds.end);
        start..end
    }

    fn window(&self, i: usize) -> HaloWindow {
        let valid_global = self.owned_range(i);
        let read_global = self.read_range(i);
        let offset = (valid_global.start - read_global.start) as usize;
        let valid_local = offset..offset + (valid_global.end - valid_global.start) as usize;
        // The halo samples the read lost to the ends; `with_edge` checked they fit a usize.
        let (pad_left, pad_right) = if self.edge.pads() {
            let left = self.left_halo - (valid_global.start - read_global.start);
            let right = self.right_halo - (read_global.end - valid_global.end);
            (left as usize, right as usize)
        } else {
            (0, 0)
        };
        HaloWindow {
            index: self.first_index + i,
            valid_global,
            read_global,
            valid_local,
            pad_left,
            pad_right,
            edge: self.edge,
        }
    }

    /// The plan with windows padded as `edge` says, checked: every padded window must fit a
    /// usize, and the data read must be long enough for the mode (see [`EdgeMode`]). Pads
    /// shrink and reads grow from the first window inwards, and likewise from the last, so
    /// checking those two checks all.
    fn with_edge(mut self, edge: EdgeMode) -> DspResult<Self> {
        self.edge = edge;
        if !edge.pads() || self.count == 0 {
            return Ok(self);
        }
        let longest = self.max_buffer_samples().ok_or_else(|| {
            DspError::Overflow(format!(
                "a padded window of {} + {} + {} samples on this platform",
                self.left_halo,
                self.batch.min(self.target.end - self.target.start),
                self.right_halo
            ))
        })?;
        debug_assert!(longest >= self.max_read_samples());
        for i in [0, self.count - 1] {
            let w = self.window(i);
            if let Some(problem) = edge.pad_problem(w.read_len(), w.pad_left, w.pad_right) {
                let place = if self.bounds == (0..self.total) {
                    format!("a recording of {} samples", self.total)
                } else {
                    format!(
                        "the segment {}..{} of a recording of {} samples",
                        self.bounds.start, self.bounds.end, self.total
                    )
                };
                return Err(DspError::config(format!(
                    "window {} of {} ({}..{} of {place}): {problem}",
                    w.index, self.count, w.valid_global.start, w.valid_global.end
                )));
            }
        }
        Ok(self)
    }

    /// The longest window buffer in samples: the longest read under `Clamp`, else the first
    /// window's owned part and both halos (every padded window is its owned part and both
    /// halos, and the first owns the most). `None` when it does not fit a usize.
    fn max_buffer_samples(&self) -> Option<u64> {
        if !self.edge.pads() || self.count == 0 {
            return Some(self.max_read_samples());
        }
        let owned = self.owned_range(0);
        let n = self
            .left_halo
            .checked_add(owned.end - owned.start)?
            .checked_add(self.right_halo)?;
        usize::try_from(n).ok().map(|_| n)
    }

    /// The longest read of any window, without listing them.
    ///
    /// For full windows the left margin `min(left_halo, start)` grows with the index and the
    /// right margin `min(right_halo, total - end)` shrinks; where neither is at its cap the two
    /// change by `batch` in opposite directions and their sum is constant. So the maximum lies
    /// at an end of the schedule or where one margin reaches its cap (±1 for the rounding).
    fn max_read_samples(&self) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let last = self.count - 1;
        let ts = self.target.start;
        let b = self.batch;
        // First window whose left margin is the whole halo.
        let i_left = self
            .left_halo
            .saturating_sub(ts - self.bounds.start)
            .div_ceil(b);
        // Last window whose right margin is the whole halo.
        let i_right = self
            .bounds
            .end
            .saturating_sub(self.right_halo)
            .saturating_sub(ts)
            .checked_div(b)
            .unwrap_or(0)
            .saturating_sub(1);
        let last_u = last as u64;
        let candidates = [
            0,
            1,
            last_u.saturating_sub(1),
            last_u,
            i_left.saturating_sub(1),
            i_left,
            i_left.saturating_add(1),
            i_right.saturating_sub(1),
            i_right,
            i_right.saturating_add(1),
        ];
        candidates
            .into_iter()
            .map(|i| i.min(last as u64) as usize)
            .map(|i| {
                let r = self.read_range(i);
                r.end - r.start
            })
            .max()
            .unwrap_or(0)
    }
}

/// The plans of a schedule: one per segment the target meets (one for an unsegmented
/// recording), numbered on from each other.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Parts {
    /// The plan over the whole target, as built (its bounds the recording).
    whole: Plan,
    /// One plan per segment the target meets; the same as `whole` when there is one.
    plans: Vec<Plan>,
}

impl Parts {
    fn one(plan: Plan) -> Self {
        Self {
            whole: plan.clone(),
            plans: vec![plan],
        }
    }

    /// `whole`'s windows cut at the segment boundaries of `segments`.
    fn segmented(whole: Plan, segments: &Segments) -> DspResult<Self> {
        if segments.total() != whole.total {
            return Err(DspError::config(format!(
                "segments of {} samples for a recording of {} samples",
                segments.total(),
                whole.total
            )));
        }
        if segments.len() < 2 {
            return Ok(Self::one(whole));
        }
        let mut plans = Vec::new();
        let mut first = 0usize;
        for seg in segments.ranges() {
            let lo = seg.start.max(whole.target.start);
            let hi = seg.end.min(whole.target.end);
            if lo >= hi {
                continue;
            }
            let plan = Plan::new(
                lo..hi,
                whole.batch,
                whole.left_halo,
                whole.right_halo,
                whole.total,
            )?
            .within(seg, first);
            first = first.checked_add(plan.count).ok_or_else(|| {
                DspError::Overflow(format!("count of windows over {} segments", segments.len()))
            })?;
            plans.push(plan);
        }
        Ok(Self { whole, plans })
    }

    fn count(&self) -> usize {
        self.plans.last().map_or(0, |p| p.first_index + p.count)
    }

    fn window(&self, i: usize) -> HaloWindow {
        let k = self
            .plans
            .partition_point(|p| p.first_index + p.count <= i)
            .min(self.plans.len() - 1);
        let plan = &self.plans[k];
        plan.window(i - plan.first_index)
    }

    fn with_edge(mut self, edge: EdgeMode) -> DspResult<Self> {
        self.whole.edge = edge;
        self.plans = self
            .plans
            .into_iter()
            .map(|p| p.with_edge(edge))
            .collect::<DspResult<_>>()?;
        Ok(self)
    }

    fn max_read_samples(&self) -> u64 {
        self.plans
            .iter()
            .map(Plan::max_read_samples)
            .max()
            .unwrap_or(0)
    }

    fn max_buffer_samples(&self) -> Option<u64> {
        self.plans
            .iter()
            .map(Plan::max_buffer_samples)
            .try_fold(0, |m, n| n.map(|n| m.max(n)))
    }
}

/// Contiguous windows whose owned ranges tile a target range of a recording exactly.
///
/// Every window owns `batch` samples except perhaps the last, which owns what is left; each
/// reads its owned range widened by `left_halo` and `right_halo`, clamped to
/// `[0, total)`. Build it once, size device buffers with [`max_read_samples`], then stream
/// the windows (all, every n-th, or a few) with a [`WindowLoader`](crate::WindowLoader).
///
/// [`with_edge`](Self::with_edge) pads the halos that reach past the recording instead, so
/// that every window is `left_halo + batch + right_halo` samples long (the last perhaps
/// owning fewer); size buffers for those with [`max_buffer_samples`](Self::max_buffer_samples).
///
/// ```
/// use dspk_types::{ChunkSchedule, EdgeMode};
/// let s = ChunkSchedule::new(100..350, 100, 10, 20, 360).unwrap();
/// let reads: Vec<_> = s.windows().iter().map(|w| w.read_global.clone()).collect();
/// assert_eq!(reads, vec![90..220, 190..320, 290..360]);
/// assert_eq!(s.windows()[2].valid_global, 300..350);
/// assert_eq!(s.max_read_samples(), 130);
///
/// let padded = s.with_edge(EdgeMode::Reflect).unwrap();
/// let w = &padded.windows()[2];
/// assert_eq!((w.pad_left, w.read_len(), w.pad_right), (0, 70, 10));
/// assert_eq!((w.padded_len(), w.valid_padded()), (80, 10..60));
/// assert_eq!(padded.max_buffer_samples(), 130);
/// ```
///
/// [`max_read_samples`]: ChunkSchedule::max_read_samples
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkSchedule {
    parts: Parts,
    windows: Vec<HaloWindow>,
    max_read: u64,
}

impl ChunkSchedule {
    /// The windows over `target` of a recording of `total` samples, owning `batch` samples
    /// each and reading `left_halo` / `right_halo` samples more on either side.
    ///
    /// A `batch` of 0 is a [`DspError::InvalidConfig`]; a target that is reversed or reaches
    /// past `total` is a [`DspError::SampleRange`]; an empty target gives an empty schedule.
    /// A schedule too long to list in memory is an error: use [`ChunkSchedule::iter`].
    pub fn new(
        target: Range<u64>,
        batch: u64,
        left_halo: u64,
        right_halo: u64,
        total: u64,
    ) -> DspResult<Self> {
        let plan = Plan::new(target, batch, left_halo, right_halo, total)?;
        Self::listed(Parts::one(plan))
    }

    /// The windows over `target` of a recording with `segments`, cut at every segment
    /// boundary: each segment's windows start at its first sample (or the target's), and no
    /// window reads outside its segment — halos end at segment ends, where an
    /// [`EdgeMode`] that pads makes them up as at the ends of a recording. Checks its input as
    /// [`ChunkSchedule::new`] does; `segments` must cover the recording.
    ///
    /// ```
    /// use dspk_types::{ChunkSchedule, RationalTime, Segments};
    /// let segs = Segments::new([(250, 0, RationalTime::ZERO), (150, 900, RationalTime::ZERO)]).unwrap();
    /// let s = ChunkSchedule::segmented(&segs, 0..400, 100, 10, 10).unwrap();
    /// let owned: Vec<_> = s.windows().iter().map(|w| w.valid_global.clone()).collect();
    /// assert_eq!(owned, vec![0..100, 100..200, 200..250, 250..350, 350..400]);
    /// assert_eq!(s.windows()[2].read_global, 190..250);
    /// assert_eq!(s.windows()[3].read_global, 250..360);
    /// ```
    pub fn segmented(
        segments: &Segments,
        target: Range<u64>,
        batch: u64,
        left_halo: u64,
        right_halo: u64,
    ) -> DspResult<Self> {
        let whole = Plan::new(target, batch, left_halo, right_halo, segments.total())?;
        Self::listed(Parts::segmented(whole, segments)?)
    }

    /// The windows over `target` of the recording `info` describes, cut at its segments
    /// ([`ChunkSchedule::segmented`]).
    pub fn for_recording(
        info: &RecordingInfo,
        target: Range<u64>,
        batch: u64,
        left_halo: u64,
        right_halo: u64,
    ) -> DspResult<Self> {
        match &info.segments {
            Some(segs) => Self::segmented(segs, target, batch, left_halo, right_halo),
            None => Self::new(target, batch, left_halo, right_halo, info.samples),
        }
    }

    fn listed(parts: Parts) -> DspResult<Self> {
        let count = parts.count();
        let mut windows = Vec::new();
        windows.try_reserve_exact(count).map_err(|_| {
            DspError::Overflow(format!(
                "a list of {count} windows (use ChunkSchedule::iter to walk them without a list)"
            ))
        })?;
        for plan in &parts.plans {
            windows.extend((0..plan.count).map(|i| plan.window(i)));
        }
        let max_read = windows
            .iter()
            .map(|w| w.read_len() as u64)
            .max()
            .unwrap_or(0);
        Ok(Self {
            parts,
            windows,
            max_read,
        })
    }

    /// The same windows with halos past the recording padded as `edge` says
    /// ([`EdgeMode::Clamp`]: as built, unpadded).
    ///
    /// Refused with a [`DspError::InvalidConfig`] when a window reads too little for the mode
    /// (`reflect` and `odd` need more samples read than padded on a side: a halo longer than
    /// the recording, or a batch much shorter than the halo at an end) and with a
    /// [`DspError::Overflow`] when a padded window would not fit in memory indices.
    pub fn with_edge(mut self, edge: EdgeMode) -> DspResult<Self> {
        self.parts = self.parts.with_edge(edge)?;
        for w in &mut self.windows {
            *w = self.parts.window(w.index);
        }
        Ok(self)
    }

    /// What the halos hold past the ends of the recording.
    pub fn edge(&self) -> EdgeMode {
        self.parts.whole.edge
    }

    /// The longest window buffer in samples ([`HaloWindow::padded_len`]; the same as
    /// [`max_read_samples`](Self::max_read_samples) under [`EdgeMode::Clamp`]).
    pub fn max_buffer_samples(&self) -> u64 {
        self.parts
            .max_buffer_samples()
            .expect("with_edge checked that the longest padded window fits")
    }

    /// The windows over the whole recording of `total` samples.
    pub fn full_recording(
        total: u64,
        batch: u64,
        left_halo: u64,
        right_halo: u64,
    ) -> DspResult<Self> {
        Self::new(0..total, batch, left_halo, right_halo, total)
    }

    /// The same windows as [`ChunkSchedule::new`], computed one at a time without a list (for
    /// schedules with very many windows). Checks its input like `new`.
    pub fn iter(
        target: Range<u64>,
        batch: u64,
        left_halo: u64,
        right_halo: u64,
        total: u64,
    ) -> DspResult<HaloWindows> {
        let plan = Plan::new(target, batch, left_halo, right_halo, total)?;
        Ok(HaloWindows::over(Parts::one(plan)))
    }

    /// The same windows as [`ChunkSchedule::segmented`], computed one at a time.
    pub fn iter_segmented(
        segments: &Segments,
        target: Range<u64>,
        batch: u64,
        left_halo: u64,
        right_halo: u64,
    ) -> DspResult<HaloWindows> {
        let whole = Plan::new(target, batch, left_halo, right_halo, segments.total())?;
        Ok(HaloWindows::over(Parts::segmented(whole, segments)?))
    }

    /// The windows, in order.
    pub fn windows(&self) -> &[HaloWindow] {
        &self.windows
    }

    /// The windows, in order, by value.
    pub fn into_windows(self) -> Vec<HaloWindow> {
        self.windows
    }

    /// The number of windows.
    pub fn len(&self) -> usize {
        self.windows.len()
    }

    /// Whether there are no windows (the target was empty).
    pub fn is_empty(&self) -> bool {
        self.windows.is_empty()
    }

    /// The longest read of any window in samples (0 for an empty schedule): size per-window
    /// buffers with it once.
    pub fn max_read_samples(&self) -> u64 {
        self.max_read
    }

    /// The target range the windows tile.
    pub fn target(&self) -> Range<u64> {
        self.parts.whole.target.clone()
    }

    /// Samples owned by every window but perhaps the last.
    pub fn batch(&self) -> u64 {
        self.parts.whole.batch
    }

    /// Samples read before each owned range (fewer at the start of the recording).
    pub fn left_halo(&self) -> u64 {
        self.parts.whole.left_halo
    }

    /// Samples read after each owned range (fewer at the end of the recording).
    pub fn right_halo(&self) -> u64 {
        self.parts.whole.right_halo
    }

    /// Samples in the recording.
    pub fn total(&self) -> u64 {
        self.parts.whole.total
    }
}

impl<'a> IntoIterator for &'a ChunkSchedule {
    type Item = &'a HaloWindow;
    type IntoIter = std::slice::Iter<'a, HaloWindow>;

    fn into_iter(self) -> Self::IntoIter {
        self.windows.iter()
    }
}

impl IntoIterator for ChunkSchedule {
    type Item = HaloWindow;
    type IntoIter = std::vec::IntoIter<HaloWindow>;

    fn into_iter(self) -> Self::IntoIter {
        self.windows.into_iter()
    }
}

/// The windows of a schedule computed one at a time (see [`ChunkSchedule::iter`]); `nth`
/// jumps in constant time.
#[derive(Debug, Clone)]
pub struct HaloWindows {
    parts: Parts,
    front: usize,
    back: usize,
}

impl HaloWindows {
    fn over(parts: Parts) -> Self {
        let back = parts.count();
        Self {
            parts,
            front: 0,
            back,
        }
    }

    /// The longest read of any window of the whole schedule, in samples.
    pub fn max_read_samples(&self) -> u64 {
        self.parts.max_read_samples()
    }

    /// The same windows padded as `edge` says, checked as [`ChunkSchedule::with_edge`].
    pub fn with_edge(mut self, edge: EdgeMode) -> DspResult<Self> {
        self.parts = self.parts.with_edge(edge)?;
        Ok(self)
    }

    /// The longest window buffer of the whole schedule, in samples (see
    /// [`ChunkSchedule::max_buffer_samples`]).
    pub fn max_buffer_samples(&self) -> u64 {
        self.parts
            .max_buffer_samples()
            .expect("with_edge checked that the longest padded window fits")
    }
}

impl Iterator for HaloWindows {
    type Item = HaloWindow;

    fn next(&mut self) -> Option<HaloWindow> {
        (self.front < self.back).then(|| {
            self.front += 1;
            self.parts.window(self.front - 1)
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.back - self.front;
        (n, Some(n))
    }

    fn nth(&mut self, n: usize) -> Option<HaloWindow> {
        self.front = self.front.saturating_add(n).min(self.back);
        self.next()
    }
}

impl DoubleEndedIterator for HaloWindows {
    fn next_back(&mut self) -> Option<HaloWindow> {
        (self.front < self.back).then(|| {
            self.back -= 1;
            self.parts.window(self.back)
        })
    }
}

impl ExactSizeIterator for HaloWindows {}

impl FusedIterator for HaloWindows {}

#[cfg(test)]
#[path = "tests/window.rs"]
mod tests;
