//! The device stage of a Butterworth filter (the module docs of `filter` say how).

use cubecl::client::Client;
use cubecl::server::Handle;
use dspk_kernels::{GridLimits, LaunchGeometry, f32_arg};
use dspk_types::{DspError, DspResult, FilterDirection, FilterSpec, PipelineError, RecordingInfo};

use super::design::{self, Sos};
use super::kernel::filter_blocks;
use crate::stage::{Halo, Span, Stage};

/// How far from the unit circle a filter's slowest pole must lie: closer, the float32
/// sections on the device lose the accuracy issue 31 asks (2e-3 µV on NP-like data). Measured on
/// the H200 and lavapipe against scipy's float64 `sosfiltfilt` (LFP and 5 mV offsets): order-5
/// 300–6000 Hz band-pass (margin 0.018) 4.7e-4–6.9e-4 µV; 100 Hz order-4 high-pass (0.008)
/// 4.9e-3 µV; 58–62 Hz band-stop (4.2e-4) 0.9 µV; 1 Hz order-3 high-pass (1.0e-4) 20 µV; 0.5 Hz
/// order-2 (7.4e-5) 40 µV: the error grows as the inverse square of the margin. At 30 kHz this
/// admits high-passes from about 115 Hz (order 3) and 185 Hz (order 5) up; LFP cut-offs wait
/// for a float64 or decimating filter, and are refused, saying why, until then.
pub const MIN_POLE_MARGIN: f64 = 1.2e-2;

/// Samples a unit loads before it filters them on a GPU: enough loads in flight to cover their
/// latency (the kernel's module docs).
const LOADS_AHEAD_GPU: usize = 32;

/// The same on a CPU device (lavapipe), where 32 values per SIMD lane outgrow the registers:
/// measured on lavapipe (2 cores), a band-pass on 384 × 10 000 samples took 69–83 ms with 2–8
/// against 104–127 ms with 32.
const LOADS_AHEAD_CPU: usize = 8;

/// Units per cube of the filter's launch: a plane's worth, so that a window's few
/// (channel, block) units spread over as many multiprocessors as there are planes of them.
const UNITS_PER_CUBE: u32 = 32;

/// A Butterworth filter on the device, on a fixed grid of blocks (see the module docs).
pub struct FilterStage {
    client: Client,
    sos: Sos,
    zero_phase: bool,
    block: usize,
    context: usize,
    padlen: usize,
    dc: f32,
    coef: Handle,
    scratch: Option<(Handle, usize)>,
    limits: GridLimits,
    loads_ahead: usize,
    /// The most scratch values one launch binds: the device's largest binding, unless a test
    /// lowers it.
    scratch_values: usize,
}

impl std::fmt::Debug for FilterStage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FilterStage")
            .field("sections", &self.sos.sections.len())
            .field("zero_phase", &self.zero_phase)
            .field("block", &self.block)
            .field("context", &self.context)
            .field("loads_ahead", &self.loads_ahead)
            .finish_non_exhaustive()
    }
}

impl FilterStage {
    /// The filter `spec` describes for `info`'s rate, on blocks of `block_samples`.
    ///
    /// # Errors
    /// A design the spec cannot give (cut-offs, order: [`design::butter`]), and a design
    /// whose slowest pole lies within [`MIN_POLE_MARGIN`] of the unit circle (see there).
    pub fn new(
        client: &Client,
        spec: &FilterSpec,
        block_samples: u32,
        info: &RecordingInfo,
    ) -> DspResult<Self> {
        let sos = design::butter(
            spec.order,
            &spec.cutoff_hz,
            spec.band,
            info.sample_rate.rate_hz(),
        )?;
        let margin = 1.0 - sos.slowest_pole_radius();
        if margin < MIN_POLE_MARGIN {
            return Err(PipelineError::Spec(format!(
                "a {:?} filter at {:?} Hz of order {} at {} Hz puts a pole {margin:.1e} from the \
                 unit circle, closer than {MIN_POLE_MARGIN:.1e}, where dspk's float32 sections \
                 lose accuracy (measured on the H200: 20 µV at a 1 Hz high-pass, 173 µV at a 2 Hz \
                 low-pass, against scipy in float64); raise the cut-off or filter a stream at a \
                 lower rate",
                spec.band,
                spec.cutoff_hz,
                spec.order,
                info.sample_rate.rate_hz()
            ))
            .into());
        }
        let context = spec
            .context_samples
            .unwrap_or_else(|| sos.default_context());
        let context = usize::try_from(context)
            .map_err(|_| DspError::Overflow("a filter's context in samples".into()))?;
        let coef: Vec<f32> = sos
            .sections
            .iter()
            .flat_map(|s| {
                let a0 = s[3];
                [s[0] / a0, s[1] / a0, s[2] / a0, s[4] / a0, s[5] / a0]
            })
            .map(|v| v as f32)
            .collect();
        let dc = sos
            .sections
            .iter()
            .map(|s| (s[0] + s[1] + s[2]) / (s[3] + s[4] + s[5]))
            .product::<f64>();
        Ok(Self {
            client: client.clone(),
            padlen: sos.padlen(),
            zero_phase: spec.direction == FilterDirection::ZeroPhase,
            block: block_samples as usize,
            context,
            dc: dc as f32,
            coef: client.create_from_slice(
                &coef
                    .iter()
                    .flat_map(|v| v.to_le_bytes())
                    .collect::<Vec<u8>>(),
            ),
            sos,
            scratch: None,
            limits: GridLimits::of(client),
            loads_ahead: if dspk_kernels::runs_on_cpu(client) {
                LOADS_AHEAD_CPU
            } else {
                LOADS_AHEAD_GPU
            },
            scratch_values: usize::try_from(dspk_kernels::max_binding_bytes(client) / 4)
                .unwrap_or(usize::MAX),
        })
    }

    /// The same stage binding at most `values` of scratch per launch instead of the device's
    /// largest binding: more launches over the units, the same bits (for tests of a window
    /// that needs several launches, on any device).
    #[must_use]
    pub fn with_scratch_values(mut self, values: usize) -> Self {
        self.scratch_values = values;
        self
    }

    /// The same stage loading `samples` (1 to 64; outside, the nearest) of a row before
    /// filtering them, instead of its device's choice: when loads are issued, never the
    /// arithmetic, so the same bits (for tests of both choices).
    #[must_use]
    pub fn with_loads_ahead(mut self, samples: usize) -> Self {
        self.loads_ahead = samples.clamp(1, 64);
        self
    }

    /// The sections the stage runs.
    pub fn sos(&self) -> &Sos {
        &self.sos
    }

    /// Samples of real signal each block is filtered from on each side.
    pub fn context(&self) -> u64 {
        self.context as u64
    }

    fn scratch(&mut self, values: usize) -> DspResult<Handle> {
        match &self.scratch {
            Some((h, n)) if *n >= values => Ok(h.clone()),
            _ => {
                dspk_kernels::device_elements("filter scratch", &[values])?;
                let h = self.client.empty(values.max(1) * 4);
                self.scratch = Some((h.clone(), values));
                Ok(h)
            }
        }
    }
}

impl Stage for FilterStage {
    fn kind(&self) -> &'static str {
        "filter"
    }

    fn halo(&self) -> Halo {
        let reach = (self.context + self.block) as u64;
        Halo {
            before: reach,
            after: if self.zero_phase { reach } else { 0 },
        }
    }

    fn launch(&mut self, input: &Handle, output: &Handle, span: &Span) -> DspResult<()> {
        span.check()?;
        if span.is_empty() || span.channels == 0 {
            return Ok(());
        }
        let segment_len = span.segment.end - span.segment.start;
        if self.zero_phase && segment_len <= self.padlen as u64 {
            return Err(PipelineError::Spec(format!(
                "a zero-phase filter needs more than {} samples in a segment (scipy's padlen), \
                 and the segment {:?} has {segment_len}",
                self.padlen, span.segment
            ))
            .into());
        }
        let halo = self.halo();
        let first = span.global(span.produce.start);
        let last = span.global(span.produce.end - 1);
        let need_lo = first.saturating_sub(halo.before).max(span.segment.start);
        let need_hi = (last + 1 + halo.after).min(span.segment.end);
        if need_lo < span.origin || need_hi > span.global(span.stride) {
            return Err(DspError::config(format!(
                "the filter needs recording samples {need_lo}..{need_hi} around {first}..{}, \
                 and the window holds {}..{}",
                last + 1,
                span.origin,
                span.global(span.stride)
            )));
        }
        let block = self.block as u64;
        let b0 = (first - span.segment.start) / block;
        let b1 = (last - span.segment.start) / block;
        let blocks = (b1 - b0 + 1) as usize;
        let first_block = (span.segment.start + b0 * block - span.origin) as usize;
        let (seg_lo, has_lo) = match span.segment.start.checked_sub(span.origin) {
            Some(lo) => (lo as usize, 1u32),
            None => (0, 0),
        };
        let (seg_hi, has_hi) = match span.segment.end - span.origin {
            hi if hi <= span.stride as u64 => (hi as usize, 1u32),
            _ => (span.stride, 0),
        };
        // What the backward pass reads: from the block's first sample to its span's end, which
        // never reaches past the segment, plus the odd extension.
        let scratch_len = if self.zero_phase {
            (self.block + self.context).min(segment_len as usize) + self.padlen
        } else {
            0
        };
        let units = span.channels * blocks;
        // Units per launch: as many as one binding of scratch holds (a long window of many
        // channels, or small blocks, can need more: 384 channels × 2 s at blocks of 1024 need
        // 169 MB, past lavapipe's 128 MiB), the launches taking the units in turn.
        let per_launch = match scratch_len {
            0 => units,
            len => {
                let values = self.scratch_values;
                if len > values {
                    return Err(DspError::config(format!(
                        "one filter block needs {len} values of scratch (block {} + context {} + \
                         padlen {}), more than the {values} one buffer of this device holds; \
                         lower block_samples or the filter's context_samples",
                        self.block, self.context, self.padlen
                    )));
                }
                (values / len).min(units)
            }
        };
        let scratch = self.scratch(per_launch * scratch_len)?;
        // Few units, each a long serial walk: small cubes spread them over every multiprocessor.
        let limits = GridLimits {
            max_units_per_cube: self.limits.max_units_per_cube.min(UNITS_PER_CUBE),
            ..self.limits
        };
        let sections = self.sos.sections.len();
        let mut first_unit = 0;
        while first_unit < units {
            let n = per_launch.min(units - first_unit);
            let g = LaunchGeometry::elementwise_with(&limits, n)?;
            filter_blocks::launch(
                &self.client,
                g.cube_count(),
                g.cube_dim(),
                f32_arg(input, span.len())?,
                f32_arg(output, span.len())?,
                f32_arg(&scratch, (n * scratch_len).max(1))?,
                f32_arg(&self.coef, sections * 5)?,
                span.channels,
                span.stride,
                blocks,
                first_block,
                self.block,
                self.context,
                seg_lo,
                has_lo,
                seg_hi,
                has_hi,
                span.produce.start,
                span.produce.end,
                self.padlen,
                self.dc,
                first_unit,
                n,
                sections,
                self.zero_phase,
                self.loads_ahead,
            );
            first_unit += n;
        }
        Ok(())
    }
}
