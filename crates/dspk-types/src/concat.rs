//! Several recordings read as one: files of one run placed by their clock, contiguous ones
//! joined into one segment, the others separate segments or joined over zero-filled gaps.

use std::ops::Range;
use std::sync::Arc;

use crate::{
    Clock, DspError, DspResult, MemoryOrder, RationalTime, RecordingInfo, RecordingSource,
    SampleRate, Segments, check_read, check_read_stored, rate_difference_ppm,
};

/// What a [`ConcatRecording`] makes of the clock samples between two parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GapFill {
    /// A gap starts a new segment (nothing is made up).
    #[default]
    Segments,
    /// A gap is filled with stored zeros inside one segment, as CatGT does.
    Zeros,
}

/// How a [`ConcatRecording`] joins its parts.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ConcatOptions {
    /// What a gap between parts becomes.
    pub gaps: GapFill,
    /// The largest rate difference accepted, in ppm of the first part's rate; `None`: the
    /// rates must be equal exactly. An accepted difference is a warning.
    pub rate_tolerance_ppm: Option<f64>,
    /// Every part is its own segment, whatever the clock says (the recordings of an Open
    /// Ephys experiment, which SpikeInterface reads as one segment each).
    pub part_per_segment: bool,
}

impl ConcatOptions {
    /// Refuses a rate tolerance that is not a number of ppm, 0 or more (NaN, infinite or
    /// negative).
    pub fn validate(&self) -> DspResult<()> {
        match self.rate_tolerance_ppm {
            Some(t) if !(t.is_finite() && t >= 0.0) => Err(DspError::config(format!(
                "the rate tolerance must be a number of ppm, 0 or more, not {t}"
            ))),
            _ => Ok(()),
        }
    }
}

/// A drift between two clocks: the rates' difference in ppm, and what it makes of an hour.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateDrift {
    /// `(rate − reference) / reference × 10⁶`.
    pub ppm: f64,
    /// How much longer (positive) or shorter an hour of samples at `reference` lasts at
    /// `rate`, in milliseconds.
    pub ms_per_hour: f64,
}

impl RateDrift {
    /// The drift of `rate` from `reference`.
    pub fn between(rate: SampleRate, reference: SampleRate) -> Self {
        let ppm = rate_difference_ppm(rate, reference);
        // reference / rate − 1 of 3 600 000 ms: 1/(1 + p) − 1.
        let ms_per_hour = (1.0 / (1.0 + ppm * 1e-6) - 1.0) * 3.6e6;
        Self { ppm, ms_per_hour }
    }

    /// The drift accumulated over `duration`, in milliseconds (its sign as
    /// [`RateDrift::ms_per_hour`]'s).
    pub fn ms_over(&self, duration: RationalTime) -> f64 {
        self.ms_per_hour * duration.as_seconds_f64() / 3600.0
    }
}

impl std::fmt::Display for RateDrift {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:+.1} ppm, {:.1} ms per hour",
            self.ppm,
            self.ms_per_hour.abs()
        )
    }
}

/// One run of a [`ConcatRecording`]: a part's samples, or made-up zeros.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    /// Samples `from` of part `part`.
    Part { part: usize, from: Range<u64> },
    /// Stored zeros.
    Zeros { samples: u64 },
}

impl Piece {
    fn len(&self) -> u64 {
        match self {
            Piece::Part { from, .. } => from.end - from.start,
            Piece::Zeros { samples } => *samples,
        }
    }
}

/// Several recordings read as one, end to end in recording indices.
///
/// The parts must agree on channels (count, names, gains, offsets, units), stored format and
/// rate (exactly, or within [`ConcatOptions::rate_tolerance_ppm`] with a warning). Each part's
/// segments are placed by their clock numbers ([`Segment::first_sample`](crate::Segment)):
/// a part that starts where the one before ends continues its segment; one that starts later
/// leaves a gap, which starts a new segment or is filled with stored zeros
/// ([`GapFill`]); one that starts earlier is an error (overlapping or out of order), unless
/// every part is its own segment. A part whose files state no clock ([`Clock::Unstated`]: a raw
/// file whose sidecar gives no start time) has nothing to place it by: it continues the part
/// before it, end to end, as SpikeInterface's `concatenate_recordings` joins recordings.
///
/// ```
/// use std::sync::Arc;
/// use dspk_types::{ConcatOptions, ConcatRecording, RecordingSource, SyntheticRecording};
/// let a = Arc::new(SyntheticRecording::neuropixels(3_000));
/// let b = Arc::new(SyntheticRecording::neuropixels(2_000));
/// // Both start at clock sample 0: the second cannot continue the first.
/// assert!(ConcatRecording::new(vec![a.clone(), b.clone()], ConcatOptions::default()).is_err());
/// let each = ConcatOptions { part_per_segment: true, ..Default::default() };
/// let both = ConcatRecording::new(vec![a, b], each).unwrap();
/// assert_eq!(both.info().samples, 5_000);
/// assert_eq!(both.info().segments().len(), 2);
/// ```
pub struct ConcatRecording {
    parts: Vec<Arc<dyn RecordingSource>>,
    /// The pieces, in recording order, with the recording index of each one's first sample.
    pieces: Vec<(u64, Piece)>,
    info: RecordingInfo,
    warnings: Vec<String>,
}

impl std::fmt::Debug for ConcatRecording {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConcatRecording")
            .field("parts", &self.parts.len())
            .field("pieces", &self.pieces)
            .field("samples", &self.info.samples)
            .finish()
    }
}

impl ConcatRecording {
    /// The parts read as one, joined as `options` says. Checks the parts agree (see the type's
    /// description); an error names the part at fault.
    pub fn new(parts: Vec<Arc<dyn RecordingSource>>, options: ConcatOptions) -> DspResult<Self> {
        let first = parts
            .first()
            .ok_or_else(|| DspError::config("nothing to concatenate: no recordings given"))?
            .info()
            .clone();
        let mut warnings = Vec::new();
        for p in &parts[1..] {
            check_alike(&first, p.info(), options, &mut warnings)?;
        }
        let rate = first.sample_rate;
        let mut pieces: Vec<(u64, Piece)> = Vec::new();
        // (samples, first clock number, start time) per segment of the result.
        let mut segments: Vec<(u64, u64, RationalTime)> = Vec::new();
        let mut at = 0u64;
        // The clock number one past the last sample placed, and the part it came from.
        let mut clock_end: Option<(u64, usize)> = None;
        for (k, p) in parts.iter().enumerate() {
            let pinfo = p.info();
            // No clock to place it by: it follows the part before it, end to end.
            let unplaced = pinfo.clock == Clock::Unstated;
            for (s, seg) in pinfo.segments().list().iter().enumerate() {
                let continues = match clock_end {
                    None => false,
                    Some(_) if options.part_per_segment && s == 0 => false,
                    Some(_) if unplaced => true,
                    Some((end, before)) if seg.first_sample < end => {
                        return Err(DspError::config(format!(
                            "{}: segment {s} starts at clock sample {}, before the end ({end}) of {}: the recordings overlap or are out of order",
                            pinfo.name,
                            seg.first_sample,
                            parts[before].info().name
                        )));
                    }
                    Some((end, _)) if seg.first_sample == end => true,
                    Some((end, _)) => match options.gaps {
                        GapFill::Segments => false,
                        GapFill::Zeros => {
                            let gap = seg.first_sample - end;
                            pieces.push((at, Piece::Zeros { samples: gap }));
                            at = grow(at, gap)?;
                            segments.last_mut().expect("a segment before a gap").0 += gap;
                            true
                        }
                    },
                };
                if continues {
                    segments.last_mut().expect("a segment to continue").0 += seg.samples;
                } else {
                    segments.push((seg.samples, seg.first_sample, seg.start_time));
                }
                pieces.push((
                    at,
                    Piece::Part {
                        part: k,
                        from: seg.range(),
                    },
                ));
                at = grow(at, seg.samples)?;
                let end = match clock_end {
                    Some((end, _)) if unplaced => end.saturating_add(seg.samples),
                    _ => seg.clock_end(),
                };
                clock_end = Some((end, k));
            }
        }
        let segments = Segments::new(segments)?;
        let mut info = first.clone();
        info.name = if parts.len() == 1 {
            first.name.clone()
        } else {
            format!("{} + {} more", first.name, parts.len() - 1)
        };
        info.samples = at;
        info.start_time = segments.list()[0].start_time;
        // Joined by no clock at all, the whole has none either.
        info.clock = if parts.iter().all(|p| p.info().clock == Clock::Unstated) {
            Clock::Unstated
        } else {
            Clock::Stated
        };
        info.segments = (segments.len() > 1).then_some(segments);
        info.sample_rate = rate;
        if parts.iter().any(|p| p.info().order != first.order) {
            info.order = MemoryOrder::ChannelMajor;
        }
        info.metadata.insert(
            "concatenated_from".to_string(),
            parts
                .iter()
                .map(|p| p.info().name.clone())
                .collect::<Vec<_>>()
                .join(", "),
        );
        Ok(Self {
            parts,
            pieces,
            info,
            warnings,
        })
    }

    /// The parts, in order.
    pub fn parts(&self) -> &[Arc<dyn RecordingSource>] {
        &self.parts
    }

    /// What joining noticed without refusing: rate differences within the tolerance.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Samples made up as zeros to fill gaps.
    pub fn zero_filled_samples(&self) -> u64 {
        self.pieces
            .iter()
            .map(|(_, p)| match p {
                Piece::Zeros { samples } => *samples,
                Piece::Part { .. } => 0,
            })
            .sum()
    }

    /// The pieces overlapping `samples`, each with the range of it to read (in its own
    /// indices, `None` for zeros) and the range of `samples` it fills (from 0).
    fn pieces_in(
        &self,
        samples: &Range<u64>,
    ) -> impl Iterator<Item = (&Piece, Option<Range<u64>>, Range<usize>)> {
        let first = self
            .pieces
            .partition_point(|(at, p)| at + p.len() <= samples.start);
        self.pieces[first..]
            .iter()
            .take_while(move |(at, _)| *at < samples.end)
            .filter_map(move |(at, piece)| {
                let lo = samples.start.max(*at);
                let hi = samples.end.min(at + piece.len());
                if lo >= hi {
                    return None;
                }
                let dst = (lo - samples.start) as usize..(hi - samples.start) as usize;
                let src = match piece {
                    Piece::Part { from, .. } => {
                        Some(from.start + (lo - at)..from.start + (hi - at))
                    }
                    Piece::Zeros { .. } => None,
                };
                Some((piece, src, dst))
            })
    }

    /// Reads channel-major pieces into `out` (`per` values or bytes per sample per channel),
    /// filling zero pieces with `zero`.
    fn read_pieces<T: Copy + Default>(
        &self,
        channels: &[usize],
        samples: &Range<u64>,
        per: usize,
        out: &mut [T],
        zero: impl Fn(usize, &mut [T]),
        read: impl Fn(&dyn RecordingSource, Range<u64>, &mut [T]) -> DspResult<()>,
    ) -> DspResult<()> {
        // The callers checked the read: its length fits a usize.
        let n = (samples.end - samples.start) as usize;
        let mut tmp: Vec<T> = Vec::new();
        for (piece, src, dst) in self.pieces_in(samples) {
            let m = dst.end - dst.start;
            match (piece, src) {
                (Piece::Part { part, .. }, Some(src)) if m == n => {
                    // One piece serves the whole read: straight into `out`.
                    return read(&*self.parts[*part], src, out);
                }
                (Piece::Part { part, .. }, Some(src)) => {
                    tmp.clear();
                    tmp.resize(channels.len() * m * per, T::default());
                    read(&*self.parts[*part], src, &mut tmp)?;
                    for c in 0..channels.len() {
                        let to = (c * n + dst.start) * per..(c * n + dst.end) * per;
                        out[to].copy_from_slice(&tmp[c * m * per..(c + 1) * m * per]);
                    }
                }
                _ => {
                    for (c, &channel) in channels.iter().enumerate() {
                        let to = (c * n + dst.start) * per..(c * n + dst.end) * per;
                        zero(channel, &mut out[to]);
                    }
                }
            }
        }
        Ok(())
    }
}

fn grow(at: u64, by: u64) -> DspResult<u64> {
    at.checked_add(by)
        .ok_or_else(|| DspError::Overflow("samples of a concatenated recording".to_string()))
}

/// Refuses a part that does not match the first, naming it.
fn check_alike(
    first: &RecordingInfo,
    other: &RecordingInfo,
    options: ConcatOptions,
    warnings: &mut Vec<String>,
) -> DspResult<()> {
    let name = &other.name;
    let refuse = |what: String| {
        Err(DspError::config(format!(
            "{name} cannot continue {}: {what}",
            first.name
        )))
    };
    if other.channel_count() != first.channel_count() {
        return refuse(format!(
            "it has {} channels, not {}",
            other.channel_count(),
            first.channel_count()
        ));
    }
    if other.format != first.format {
        return refuse(format!(
            "its samples are {}, not {}",
            other.format, first.format
        ));
    }
    if let Some((i, (a, b))) = first
        .channels
        .iter()
        .zip(&other.channels)
        .enumerate()
        .find(|(_, (a, b))| a != b)
    {
        return refuse(format!(
            "channel {i} is {} (gain {}, offset {}, {}), not {} (gain {}, offset {}, {})",
            b.name, b.gain, b.offset, b.unit, a.name, a.gain, a.offset, a.unit
        ));
    }
    if other.sample_rate != first.sample_rate {
        let drift = RateDrift::between(other.sample_rate, first.sample_rate);
        let total = first.duration()?.checked_add(other.duration()?)?;
        let text = format!(
            "its rate {} differs from {}: {drift}, {:.1} ms over the {:.1} s of the two",
            other.sample_rate,
            first.sample_rate,
            drift.ms_over(total).abs(),
            total.as_seconds_f64()
        );
        match options.rate_tolerance_ppm {
            Some(tol) if drift.ppm.abs() <= tol => warnings.push(format!(
                "{name}: {text}; accepted (tolerance {tol} ppm), its samples are timed at {}",
                first.sample_rate
            )),
            Some(tol) => {
                return refuse(format!("{text}, more than the tolerance of {tol} ppm"));
            }
            None => {
                return refuse(format!(
                    "{text}; rates must be equal, or give a tolerance in ppm to accept it"
                ));
            }
        }
    }
    Ok(())
}

impl RecordingSource for ConcatRecording {
    fn info(&self) -> &RecordingInfo {
        &self.info
    }

    fn read(&self, channels: &[usize], samples: Range<u64>, out: &mut [f32]) -> DspResult<()> {
        check_read(&self.info, channels, &samples, out.len())?;
        let info = &self.info;
        self.read_pieces(
            channels,
            &samples,
            1,
            out,
            // A stored zero scales to the channel's offset.
            |c, dst| dst.fill(info.channels[c].offset),
            |p, src, dst| p.read(channels, src, dst),
        )
    }

    fn read_stored(
        &self,
        channels: &[usize],
        samples: Range<u64>,
        out: &mut [u8],
    ) -> DspResult<()> {
        check_read_stored(&self.info, channels, &samples, out.len())?;
        self.read_pieces(
            channels,
            &samples,
            self.info.format.bytes(),
            out,
            |_, dst| dst.fill(0),
            |p, src, dst| p.read_stored(channels, src, dst),
        )
    }

    fn read_stored_native(&self, samples: Range<u64>, out: &mut [u8]) -> DspResult<MemoryOrder> {
        let all: Vec<usize> = (0..self.info.channel_count()).collect();
        let n = check_read_stored(&self.info, &all, &samples, out.len())?;
        if self.native_stored_order() != MemoryOrder::TimeMajor {
            self.read_stored(&all, samples, out)?;
            return Ok(MemoryOrder::ChannelMajor);
        }
        // Time-major: each piece is a contiguous run of frames.
        let frame = self.info.frame_bytes();
        for (piece, src, dst) in self.pieces_in(&samples) {
            let to = &mut out[dst.start * frame..dst.end * frame];
            match (piece, src) {
                (Piece::Part { part, .. }, Some(src)) => {
                    let order = self.parts[*part].read_stored_native(src, to)?;
                    debug_assert_eq!(order, MemoryOrder::TimeMajor);
                }
                _ => to.fill(0),
            }
        }
        debug_assert_eq!(out.len(), n * frame);
        Ok(MemoryOrder::TimeMajor)
    }

    fn native_stored_order(&self) -> MemoryOrder {
        if self.info.order == MemoryOrder::TimeMajor
            && self
                .parts
                .iter()
                .all(|p| p.native_stored_order() == MemoryOrder::TimeMajor)
        {
            MemoryOrder::TimeMajor
        } else {
            MemoryOrder::ChannelMajor
        }
    }
}

#[cfg(test)]
#[path = "tests/concat.rs"]
mod tests;
