//! The device kernel of the temporal filters: one unit per (channel, block) of the fixed grid.
//!
//! A block `[gb, ge)` (the grid starts at its segment's first sample) is filtered over its
//! span `[gb − context, ge + context]`, clipped to the segment, extended by `padlen` odd
//! samples at a segment end that the span reaches (scipy's `sosfiltfilt` rule). The forward
//! pass runs over the whole extended span from the steady state of its first value, the
//! backward pass from the steady state of the forward pass's last value, as scipy's
//! `sosfiltfilt` does at a recording's ends; inside a segment the truncated span differs from
//! one whole-segment run by the filter's decay over `context` samples.
//!
//! In `f32`: each pass filters its input minus the value it starts from (so the state starts at
//! 0, and a DC offset never enters the sections' states), then adds that value back times the
//! filter's DC gain. In exact arithmetic this is the steady-state start; in `f32` it keeps a
//! 50 mV offset from eating the digits of a 10 µV signal.
//!
//! The sections run in transposed direct form II, as scipy's `sosfilt`, their coefficients and
//! states in local arrays (registers). What a unit writes depends only on its block's input, so
//! the output is the same bits for any window that contains the block's span.
//!
//! # Memory
//!
//! Each unit walks its own row, so its loads cannot coalesce with its neighbours'; they hit the
//! cache lines its previous loads brought in, and each unit loads `run` samples (a launch's
//! comptime choice: 32 on a GPU, 8 on a CPU device, see the stage) before it filters them, so
//! that their latencies overlap instead of adding up. The forward pass keeps only what the
//! backward pass reads (from the block's first sample on) in `scratch`, laid out sample-major
//! over the launch's units (`(k − stop) · units + unit`): neighbouring units write and read
//! neighbouring values. The backward pass writes the block's samples straight to the output.
//! None of this changes a unit's arithmetic, which is sample by sample in the same order.

use cubecl::prelude::*;
use dspk_kernels::element_position;

/// The value of the extended span at index `k`: `left` odd samples before the segment's start
/// (`seg_lo`), the span `[ss, se)`, then odd samples past the segment's end (`seg_hi`).
#[cube]
#[allow(clippy::too_many_arguments)]
fn extended(
    x: &[f32],
    row: usize,
    k: usize,
    left: usize,
    ss: usize,
    se: usize,
    seg_lo: usize,
    seg_hi: usize,
) -> f32 {
    if k < left {
        let m = left - k;
        2.0 * x[row + seg_lo] - x[row + seg_lo + m]
    } else if k < left + (se - ss) {
        x[row + ss + k - left]
    } else {
        let m = k - left - (se - ss) + 1;
        2.0 * x[row + seg_hi - 1] - x[row + seg_hi - 1 - m]
    }
}

/// The smaller of two indices.
#[cube]
fn umin(a: usize, b: usize) -> usize {
    let mut m = a;
    if b < a {
        m = b;
    }
    m
}

/// The larger of two indices.
#[cube]
fn umax(a: usize, b: usize) -> usize {
    let mut m = a;
    if b > a {
        m = b;
    }
    m
}

/// One step of the sections over `v` (transposed direct form II): `coef` holds five
/// coefficients per section (`b0 b1 b2 a1 a2`), `z1`, `z2` the states.
#[cube]
fn step(
    coef: &Array<f32>,
    z1: &mut Array<f32>,
    z2: &mut Array<f32>,
    v: f32,
    #[comptime] sections: usize,
) -> f32 {
    let mut u = v;
    #[unroll]
    for s in 0..sections {
        let b0 = coef[s * 5];
        let b1 = coef[s * 5 + 1];
        let b2 = coef[s * 5 + 2];
        let a1 = coef[s * 5 + 3];
        let a2 = coef[s * 5 + 4];
        let out = b0 * u + z1[s];
        z1[s] = b1 * u - a1 * out + z2[s];
        z2[s] = b2 * u - a2 * out;
        u = out;
    }
    u
}

/// Filters every (channel, block) from `x` into `y` (see the module docs), in local indices of
/// the window's rows (`grid_rows` rows of `grid_stride`): `grid_blocks` blocks of `grid_block`
/// samples from local index `grid_first_block`, `grid_context` samples of context, the segment
/// `grid_seg_lo..grid_seg_hi` (`grid_has_lo`/`grid_has_hi` 1 where that end lies in the row),
/// samples `grid_produce_lo..grid_produce_hi` written, `grid_padlen` odd samples past a segment
/// end, `grid_dc` the sections' gain at 0 Hz. Zero-phase keeps each unit's forward pass from its
/// block's first sample on in `scratch` (sample-major over the units). A launch runs the
/// `grid_units` units from `grid_first_unit` on (unit `c · grid_blocks + b`), so that a window
/// whose scratch would outgrow one binding runs in several launches over one scratch buffer.
/// Each unit loads `run` samples before it filters them; `run` changes when loads are issued,
/// never the arithmetic.
#[cube(launch)]
pub(crate) fn filter_blocks(
    x: &[f32],
    y: &mut [f32],
    scratch: &mut [f32],
    coef: &[f32],
    grid_rows: usize,
    grid_stride: usize,
    grid_blocks: usize,
    grid_first_block: usize,
    grid_block: usize,
    grid_context: usize,
    grid_seg_lo: usize,
    grid_has_lo: u32,
    grid_seg_hi: usize,
    grid_has_hi: u32,
    grid_produce_lo: usize,
    grid_produce_hi: usize,
    grid_padlen: usize,
    grid_dc: f32,
    grid_first_unit: usize,
    grid_units: usize,
    #[comptime] sections: usize,
    #[comptime] zero_phase: bool,
    #[comptime] run: usize,
) {
    let local = element_position();
    let id = grid_first_unit + local;
    if local < grid_units && id < grid_rows * grid_blocks {
        let c = id / grid_blocks;
        let b = id % grid_blocks;
        let row = c * grid_stride;
        let gb = grid_first_block + b * grid_block;
        let ge = umin(gb + grid_block, grid_seg_hi);
        let mut ss = grid_seg_lo;
        if gb >= grid_seg_lo + grid_context {
            ss = gb - grid_context;
        }
        let mut se = ge;
        if zero_phase {
            se = umin(ge + grid_context, grid_seg_hi);
        }
        let mut left = 0usize;
        if zero_phase && grid_has_lo == 1 && ss == grid_seg_lo {
            left = grid_padlen;
        }
        let mut right = 0usize;
        if zero_phase && grid_has_hi == 1 && se == grid_seg_hi {
            right = grid_padlen;
        }
        let len = left + (se - ss) + right;
        let lo = umax(gb, grid_produce_lo);
        let hi = umin(ge, grid_produce_hi);

        let mut c = Array::<f32>::new(comptime![sections * 5]);
        #[unroll]
        for i in 0..comptime![sections * 5] {
            c[i] = coef[i];
        }
        let mut z1 = Array::<f32>::new(sections);
        let mut z2 = Array::<f32>::new(sections);
        #[unroll]
        for s in 0..sections {
            z1[s] = 0.0;
            z2[s] = 0.0;
        }
        let r = extended(x, row, 0, left, ss, se, grid_seg_lo, grid_seg_hi);
        let dr = grid_dc * r;
        let mut v = Array::<f32>::new(run);
        if zero_phase {
            let units = grid_units;
            // The backward pass stops at the block's first sample: the forward values before it
            // are not kept.
            let stop = left + (gb - ss);
            let mut last = 0.0f32;
            let mut k = 0usize;
            while k + run <= len {
                #[unroll]
                for j in 0..run {
                    v[j] = extended(x, row, k + j, left, ss, se, grid_seg_lo, grid_seg_hi) - r;
                }
                #[unroll]
                for j in 0..run {
                    v[j] = step(&c, &mut z1, &mut z2, v[j], sections);
                }
                #[unroll]
                for j in 0..run {
                    if k + j >= stop {
                        scratch[(k + j - stop) * units + local] = v[j];
                    }
                }
                last = v[comptime![run - 1]];
                k += run;
            }
            while k < len {
                let u = extended(x, row, k, left, ss, se, grid_seg_lo, grid_seg_hi) - r;
                last = step(&c, &mut z1, &mut z2, u, sections);
                if k >= stop {
                    scratch[(k - stop) * units + local] = last;
                }
                k += 1;
            }
            // Backward from the forward pass's last value, down to the block's first sample.
            let q = last + dr;
            let dq = grid_dc * q;
            #[unroll]
            for s in 0..sections {
                z1[s] = 0.0;
                z2[s] = 0.0;
            }
            // `k` runs down over `stop..len`; index `k` is sample `ss + k − left`.
            let mut k = len;
            while k >= stop + run {
                #[unroll]
                for j in 0..run {
                    v[j] = scratch[(k - 1 - j - stop) * units + local] + dr - q;
                }
                #[unroll]
                for j in 0..run {
                    v[j] = step(&c, &mut z1, &mut z2, v[j], sections) + dq;
                }
                #[unroll]
                for j in 0..run {
                    let t = ss + (k - 1 - j) - left;
                    if t >= lo && t < hi {
                        y[row + t] = v[j];
                    }
                }
                k -= run;
            }
            while k > stop {
                k -= 1;
                let u = scratch[(k - stop) * units + local] + dr - q;
                let out = step(&c, &mut z1, &mut z2, u, sections) + dq;
                let t = ss + k - left;
                if t >= lo && t < hi {
                    y[row + t] = out;
                }
            }
        } else {
            // Causal: forward only, from the span's first sample to the block's last written.
            let mut t = ss;
            while t + run <= hi {
                #[unroll]
                for j in 0..run {
                    v[j] = x[row + t + j] - r;
                }
                #[unroll]
                for j in 0..run {
                    v[j] = step(&c, &mut z1, &mut z2, v[j], sections) + dr;
                }
                #[unroll]
                for j in 0..run {
                    if t + j >= lo {
                        y[row + t + j] = v[j];
                    }
                }
                t += run;
            }
            while t < hi {
                let out = step(&c, &mut z1, &mut z2, x[row + t] - r, sections) + dr;
                if t >= lo {
                    y[row + t] = out;
                }
                t += 1;
            }
        }
    }
}
