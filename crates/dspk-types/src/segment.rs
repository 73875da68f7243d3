//! Segments: the contiguous runs of a recording, and the gaps between them.
//!
//! A recording's samples are indexed `0..samples` end to end; a segment is a run of them that
//! the acquisition clock recorded without interruption. Between two segments the clock ran on
//! (a gap) or restarted. Nothing reads across a segment boundary: a read whose range crosses
//! one is an error, and halo windows are cut at segment ends (see
//! [`ChunkSchedule::for_recording`](crate::ChunkSchedule::for_recording)).

use std::ops::Range;

use serde::{Deserialize, Serialize};

use crate::{DspError, DspResult, RationalTime, SampleRate};

/// One segment of a recording.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Segment {
    /// The recording index of its first sample.
    pub start: u64,
    /// Its length in samples.
    pub samples: u64,
    /// The acquisition clock's number of its first sample (SpikeGLX's `firstSample`, Open
    /// Ephys's first sample number); 0 where the format has no clock.
    pub first_sample: u64,
    /// The time of its first sample.
    pub start_time: RationalTime,
}

impl Segment {
    /// Its samples as recording indices.
    pub fn range(&self) -> Range<u64> {
        self.start..self.start + self.samples
    }

    /// The clock number one past its last sample.
    pub fn clock_end(&self) -> u64 {
        self.first_sample.saturating_add(self.samples)
    }
}

/// What lies between segment `after` and the next one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentGap {
    /// The segment before the gap.
    pub after: usize,
    /// Clock samples between the end of `after` and the start of the next segment: positive
    /// when the clock ran on, 0 for segments that abut, negative when the clock restarted.
    pub samples: i128,
}

impl SegmentGap {
    /// The gap in seconds at `rate` (negative when the clock restarted).
    pub fn seconds(&self, rate: SampleRate) -> f64 {
        let (num, den) = rate.as_ratio();
        self.samples as f64 * den as f64 / num as f64
    }
}

/// The segments of a recording: at least one, contiguous in recording indices from 0, their
/// lengths adding up to the recording's.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "Vec<Segment>", into = "Vec<Segment>")]
pub struct Segments {
    list: Vec<Segment>,
}

impl Segments {
    /// One segment of `samples` samples.
    pub fn single(samples: u64, first_sample: u64, start_time: RationalTime) -> Self {
        Self {
            list: vec![Segment {
                start: 0,
                samples,
                first_sample,
                start_time,
            }],
        }
    }

    /// Segments of the given lengths, clock numbers and start times, placed end to end from
    /// recording index 0. An empty list is an error; so is a total past `u64`.
    pub fn new(parts: impl IntoIterator<Item = (u64, u64, RationalTime)>) -> DspResult<Self> {
        let mut list = Vec::new();
        let mut start = 0u64;
        for (samples, first_sample, start_time) in parts {
            list.push(Segment {
                start,
                samples,
                first_sample,
                start_time,
            });
            start = start.checked_add(samples).ok_or_else(|| {
                DspError::Overflow(format!("a recording of {} segments", list.len()))
            })?;
        }
        if list.is_empty() {
            return Err(DspError::config("a recording needs at least one segment"));
        }
        Ok(Self { list })
    }

    /// The segments, in order.
    pub fn list(&self) -> &[Segment] {
        &self.list
    }

    /// The number of segments.
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// Always false: a recording has at least one segment.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Samples in all segments.
    pub fn total(&self) -> u64 {
        self.list.last().map_or(0, |s| s.start + s.samples)
    }

    /// The segment holding recording index `index` (the last one for the end of the recording).
    pub fn containing(&self, index: u64) -> usize {
        self.list
            .partition_point(|s| s.start + s.samples <= index)
            .min(self.list.len() - 1)
    }

    /// Segment `index`, or an error that says how many there are.
    pub fn get(&self, index: usize) -> DspResult<&Segment> {
        self.list.get(index).ok_or_else(|| {
            DspError::config(format!(
                "no segment {index}: the recording has {} (0 to {})",
                self.list.len(),
                self.list.len() - 1
            ))
        })
    }

    /// Refuses a non-empty `range` that crosses a segment boundary, naming the boundary.
    pub fn check_within(&self, range: &Range<u64>) -> DspResult<()> {
        if self.list.len() < 2 || range.start >= range.end {
            return Ok(());
        }
        let k = self.containing(range.start);
        let seg = &self.list[k];
        if range.end <= seg.start + seg.samples {
            return Ok(());
        }
        Err(DspError::CrossesSegment {
            start: range.start,
            end: range.end,
            segment: k,
            segment_start: seg.start,
            segment_end: seg.start + seg.samples,
        })
    }

    /// The gaps between consecutive segments.
    pub fn gaps(&self) -> Vec<SegmentGap> {
        self.list
            .windows(2)
            .enumerate()
            .map(|(k, pair)| SegmentGap {
                after: k,
                samples: i128::from(pair[1].first_sample) - i128::from(pair[0].clock_end()),
            })
            .collect()
    }

    /// The segments of recording indices `range`, re-indexed from 0 (for a view of part of a
    /// recording): segments outside it are dropped, the ones at its ends cut, their clock
    /// numbers and start times moved with the cut at `rate`.
    pub fn slice(&self, range: &Range<u64>, rate: SampleRate) -> DspResult<Self> {
        let mut parts = Vec::new();
        for seg in &self.list {
            let r = seg.range();
            let (lo, hi) = (r.start.max(range.start), r.end.min(range.end));
            if lo >= hi {
                continue;
            }
            let cut = lo - r.start;
            let shift = RationalTime::from_samples(cut, rate)?;
            parts.push((
                hi - lo,
                seg.first_sample + cut,
                seg.start_time.checked_add(shift)?,
            ));
        }
        if parts.is_empty() {
            let k = self.containing(range.start);
            let seg = &self.list[k];
            let cut = range.start - seg.start;
            let shift = RationalTime::from_samples(cut, rate)?;
            parts.push((
                0,
                seg.first_sample + cut,
                seg.start_time.checked_add(shift)?,
            ));
        }
        Self::new(parts)
    }

    /// Each segment's recording indices.
    pub fn ranges(&self) -> impl Iterator<Item = Range<u64>> + '_ {
        self.list.iter().map(Segment::range)
    }
}

impl TryFrom<Vec<Segment>> for Segments {
    type Error = DspError;

    /// Checks that the segments lie end to end from 0.
    fn try_from(list: Vec<Segment>) -> DspResult<Self> {
        let built = Self::new(
            list.iter()
                .map(|s| (s.samples, s.first_sample, s.start_time)),
        )?;
        if built.list != list {
            return Err(DspError::config(
                "segments must lie end to end from recording index 0",
            ));
        }
        Ok(built)
    }
}

impl From<Segments> for Vec<Segment> {
    fn from(s: Segments) -> Self {
        s.list
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn three() -> Segments {
        // 100 samples from clock 0, 50 from clock 130 (a gap of 30), 20 from clock 180.
        Segments::new([
            (100, 0, RationalTime::ZERO),
            (50, 130, RationalTime::new(130, 1000).unwrap()),
            (20, 180, RationalTime::new(180, 1000).unwrap()),
        ])
        .unwrap()
    }

    #[test]
    fn segments_lie_end_to_end_and_gaps_are_clock_differences() {
        let s = three();
        let ranges: Vec<_> = s.ranges().collect();
        assert_eq!(ranges, vec![0..100, 100..150, 150..170]);
        assert_eq!(s.total(), 170);
        let gaps: Vec<_> = s.gaps().iter().map(|g| g.samples).collect();
        assert_eq!(gaps, vec![30, 0]);
        let rate = SampleRate::from_ratio(1000, 1).unwrap();
        assert_eq!(s.gaps()[0].seconds(rate), 0.03);
        assert_eq!(
            [0, 99, 100, 149, 150, 169, 170].map(|i| s.containing(i)),
            [0, 0, 1, 1, 2, 2, 2]
        );
    }

    #[test]
    fn a_range_across_a_boundary_is_refused_with_the_boundary() {
        let s = three();
        assert!(s.check_within(&(0..100)).is_ok());
        assert!(s.check_within(&(100..150)).is_ok());
        assert!(s.check_within(&(120..120)).is_ok());
        let err = s.check_within(&(90..110)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "sample range 90..110 crosses the end of segment 0 (samples 0..100): a read must lie inside one segment"
        );
    }

    #[test]
    fn a_slice_cuts_the_segments_and_moves_their_clocks() {
        let rate = SampleRate::from_ratio(1000, 1).unwrap();
        let s = three().slice(&(90..160), rate).unwrap();
        let got: Vec<_> = s
            .list()
            .iter()
            .map(|g| (g.start, g.samples, g.first_sample, g.start_time))
            .collect();
        assert_eq!(
            got,
            vec![
                (0, 10, 90, RationalTime::new(90, 1000).unwrap()),
                (10, 50, 130, RationalTime::new(130, 1000).unwrap()),
                (60, 10, 180, RationalTime::new(180, 1000).unwrap()),
            ]
        );
        let empty = three().slice(&(120..120), rate).unwrap();
        assert_eq!((empty.len(), empty.total()), (1, 0));
        assert_eq!(empty.list()[0].first_sample, 150);
    }

    #[test]
    fn no_segments_is_an_error() {
        assert!(Segments::new(Vec::<(u64, u64, RationalTime)>::new()).is_err());
    }
}
