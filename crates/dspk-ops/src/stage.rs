//! What every device stage is: a launch that reads a window's rows and writes the rows of a
//! buffer its caller owns, over the samples it is asked to produce, from the context its halo
//! says it needs.

use std::ops::Range;

use cubecl::server::Handle;
use dspk_types::{DspError, DspResult};

/// Samples of input a stage reads on each side of the samples it produces (within the
/// segment: a stage makes up what lies past a segment's ends itself).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Halo {
    /// Samples before the first produced sample.
    pub before: u64,
    /// Samples after the last produced sample.
    pub after: u64,
}

impl Halo {
    /// No context: a stage that is pointwise in time.
    pub const NONE: Halo = Halo {
        before: 0,
        after: 0,
    };

    /// The same context on both sides.
    pub const fn both(samples: u64) -> Halo {
        Halo {
            before: samples,
            after: samples,
        }
    }

    /// The context of this stage followed by `next` (their sum).
    pub fn then(self, next: Halo) -> Halo {
        Halo {
            before: self.before + next.before,
            after: self.after + next.after,
        }
    }
}

/// Where a stage works, in one window: the rows' layout and which samples to produce.
///
/// Buffers hold `channels` rows of `stride` values (channel-major); local index `i` of a row
/// is recording sample `origin + i`. The window lies inside one segment, `segment` (recording
/// sample indices). The input is valid on `produce` widened by the stage's [`Halo`] and clipped
/// to the segment and to the row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    /// Rows (channels).
    pub channels: usize,
    /// Values per row of the input and the output buffers.
    pub stride: usize,
    /// The recording sample of local index 0.
    pub origin: u64,
    /// The segment the window lies in (recording sample indices).
    pub segment: Range<u64>,
    /// The local indices to write.
    pub produce: Range<usize>,
}

impl Span {
    /// The local indices of input a stage with `halo` reads to produce
    /// [`produce`](Self::produce): widened by the halo, clipped to the segment and the row.
    pub fn input_range(&self, halo: Halo) -> Range<usize> {
        let seg_start = self.segment.start.saturating_sub(self.origin) as usize;
        let seg_end = (self.segment.end.saturating_sub(self.origin) as usize).min(self.stride);
        let start = self
            .produce
            .start
            .saturating_sub(halo.before as usize)
            .max(seg_start);
        let end = (self.produce.end + halo.after as usize).min(seg_end);
        start..end
    }

    /// Recording sample of local index `local`.
    pub fn global(&self, local: usize) -> u64 {
        self.origin + local as u64
    }

    /// Values in each buffer the span covers (`channels × stride`).
    pub fn len(&self) -> usize {
        self.channels * self.stride
    }

    /// Whether the span produces nothing.
    pub fn is_empty(&self) -> bool {
        self.produce.is_empty()
    }

    /// Checks the span is coherent: the produced samples lie in the row and in the segment.
    ///
    /// # Errors
    /// A produced range outside the row or the segment.
    pub fn check(&self) -> DspResult<()> {
        let end = self.global(self.produce.end);
        if self.produce.end > self.stride
            || self.produce.start > self.produce.end
            || self.global(self.produce.start) < self.segment.start
            || end > self.segment.end
        {
            return Err(DspError::config(format!(
                "a stage was asked to produce local samples {:?} of a row of {} starting at \
                 recording sample {}, outside its segment {:?}",
                self.produce, self.stride, self.origin, self.segment
            )));
        }
        Ok(())
    }
}

/// One preprocessing stage on one device.
///
/// A stage launches kernels and never synchronises or reads back; what it writes depends only
/// on the recording (its input samples and their recording positions), never on where the
/// window starts or how long it is, so a chain of stages gives the same bits for any windows
/// and any number of devices.
pub trait Stage: Send {
    /// The stage's kind, as specs name it.
    fn kind(&self) -> &'static str;

    /// The context the stage reads around what it produces.
    fn halo(&self) -> Halo;

    /// Launches the stage: reads `input` (valid on [`Span::input_range`]) and writes `output`
    /// on `span.produce` of every row. `input` and `output` are different buffers of at least
    /// [`Span::len`] `f32` values.
    ///
    /// # Errors
    /// A span of another channel count than the stage's, buffers too small.
    fn launch(&mut self, input: &Handle, output: &Handle, span: &Span) -> DspResult<()>;

    /// A stage that can clip (scaling to int16): its device buffer of one `u32` count per
    /// channel of the samples it clipped since it was built, for the pass to read back and
    /// report (never silent). Other stages: `None`.
    fn clipped(&self) -> Option<&Handle> {
        None
    }
}
