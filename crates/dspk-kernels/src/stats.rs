//! Per-channel statistics of decoded windows: min, max, mean and the sum of squared deviations
//! in `f32` partials over modest chunks on the device, merged on the host in `f64`.
//!
//! [`STATS_LANES`] units share each chunk of [`STATS_CHUNK`] samples of one channel (32 values
//! each, neighbouring units on neighbouring samples). Each unit keeps Welford's running mean and
//! sum of squared deviations of its values taken relative to the chunk's first value (the
//! *shift*); a second pass merges the lanes with Chan et al.'s pairwise formula into one `f32`
//! partial per chunk: min, max, shift, mean from the shift, `M₂`. Relative to the shift the
//! values are small (a channel's spread, not its offset), so no digit of the spread is lost to a
//! DC offset, and the host merges the chunks in `f64` ([`ChannelStats::merge`]), so hours of
//! data keep their accuracy. (Sums and sums of squares in `f32`, `E[x²] − mean²`, reported a
//! 10 µV channel at a 56 mV offset as flat.)

use std::ops::Range;

use cubecl::prelude::*;
use cubecl::server::Handle;
use dspk_types::{DspError, DspResult, SampleFormat};

use crate::args::f32_arg;
use crate::channel_stats::ChannelStats;
use crate::decode::{DecodedWindow, read_f32};
use crate::geometry::{GridLimits, LaunchGeometry, element_position, row_share_of};
use crate::limits::{check_window_fits, device_elements};
use crate::special::{negative_infinity, positive_infinity};

/// Samples of one channel that one cube reduces into one partial.
pub const STATS_CHUNK: usize = 1024;

/// Units sharing one chunk in the first pass (a plane's worth on most GPUs).
pub const STATS_LANES: usize = 32;

/// Values in one chunk's partial: min, max, shift, mean from the shift, `M₂`.
const PARTIAL: usize = 5;

/// Values in one lane's partial: min, max, count, mean from the shift, `M₂`.
const LANE_PARTIAL: usize = 5;

/// First pass: [`STATS_LANES`] units per (channel, chunk) row, each taking its
/// [`row_share_of`] of the chunk (neighbouring lanes read neighbouring samples) and keeping
/// Welford's running mean and `M₂` of its values less the chunk's first value, writing one lane
/// partial (min, max, count, mean from the shift, `M₂`). No shared memory (see
/// [`crate::decode`]'s module docs on lavapipe).
#[cube(launch)]
fn stats_lanes(
    data: &[f32],
    lanes: &mut [f32],
    samples: usize,
    valid_start: usize,
    valid_len: usize,
    chunks: usize,
    rows: usize,
    #[comptime] chunk: usize,
    #[comptime] lane_count: usize,
    #[comptime] contiguous: bool,
) {
    let unit = element_position();
    let row = unit / lane_count;
    if row < rows {
        let lane = unit % lane_count;
        let channel = row / chunks;
        let first = (row % chunks) * chunk;
        let len = min(chunk, valid_len - first);
        let base = channel * samples + valid_start + first;
        let shift = data[base];
        let mut lo = positive_infinity();
        let mut hi = negative_infinity();
        let mut count = 0.0f32;
        let mut mean = 0.0f32;
        let mut m2 = 0.0f32;
        let share = row_share_of(len, lane, lane_count, contiguous);
        let mut i = share.start;
        while i < share.end {
            let v = data[base + i];
            lo = min(lo, v);
            hi = max(hi, v);
            let d = v - shift;
            count += 1.0;
            let delta = d - mean;
            mean += delta / count;
            m2 += delta * (d - mean);
            i += share.step;
        }
        let out = unit * 5;
        lanes[out] = lo;
        lanes[out + 1] = hi;
        lanes[out + 2] = count;
        lanes[out + 3] = mean;
        lanes[out + 4] = m2;
    }
}

/// Second pass: one unit per row merges the row's lane partials (Chan et al.'s pairwise
/// formula, in lane order) into the chunk's partial: min, max, shift, mean from the shift,
/// `M₂`. Lane 0 always holds the chunk's first value, so the running count is never 0.
#[cube(launch)]
fn stats_rows(
    data: &[f32],
    lanes: &[f32],
    partials: &mut [f32],
    samples: usize,
    valid_start: usize,
    chunks: usize,
    rows: usize,
    #[comptime] chunk: usize,
    #[comptime] lane_count: usize,
) {
    let row = element_position();
    if row < rows {
        let channel = row / chunks;
        let first = (row % chunks) * chunk;
        let shift = data[channel * samples + valid_start + first];
        let head = row * lane_count * 5;
        let mut lo = lanes[head];
        let mut hi = lanes[head + 1];
        let mut count = lanes[head + 2];
        let mut mean = lanes[head + 3];
        let mut m2 = lanes[head + 4];
        #[unroll]
        for l in 1..lane_count {
            let p = head + l * 5;
            lo = min(lo, lanes[p]);
            hi = max(hi, lanes[p + 1]);
            // An empty lane (a short chunk) has count 0 and adds nothing.
            let other = lanes[p + 2];
            let total = count + other;
            let delta = lanes[p + 3] - mean;
            let weight = other / total;
            mean += delta * weight;
            m2 += lanes[p + 4] + delta * delta * (count * weight);
            count = total;
        }
        let out = row * 5;
        partials[out] = lo;
        partials[out + 1] = hi;
        partials[out + 2] = shift;
        partials[out + 3] = mean;
        partials[out + 4] = m2;
    }
}

/// The channel-statistics kernel with its reused device buffer of partials.
pub struct ChannelStatsKernel {
    client: Client,
    channels: usize,
    max_samples: usize,
    lanes: Handle,
    partials: Handle,
    limits: GridLimits,
    /// Deferred mode: one partials buffer per window not read back yet (allocated on first
    /// use, twice [`STATS_IN_FLIGHT`] at most: one batch being read back while the next fills).
    ring: Vec<Handle>,
    /// Deferred mode: where in `ring` the batch being filled starts (0 or [`STATS_IN_FLIGHT`]).
    batch: usize,
    /// Deferred mode: the windows in `ring[batch..batch + pending.len()]`.
    pending: Vec<Deferred>,
    /// Deferred mode: the previous batch, being read back on a thread of its own.
    reading: Option<Reading>,
    /// Deferred mode: the totals of the untagged windows already read back.
    running: Vec<ChannelStats>,
    /// Deferred mode: the statistics of the tagged windows already read back.
    tagged: Vec<WindowStats>,
}

/// A deferred window: `(chunks, valid length)` of its partials, and its tag where it was
/// given one ([`ChannelStatsKernel::window_stats_deferred`]).
#[derive(Debug, Clone, Copy)]
struct Deferred {
    chunks: usize,
    valid_len: usize,
    tag: Option<u64>,
}

/// The statistics of one window on its own, with the tag its caller gave it
/// ([`ChannelStatsKernel::window_stats_deferred`]).
#[derive(Debug, Clone, PartialEq)]
pub struct WindowStats {
    /// The caller's tag (a window's position in its pass, say).
    pub tag: u64,
    /// One per channel, over the window's owned samples.
    pub stats: Vec<ChannelStats>,
}

/// A batch of partials being read back on a thread of its own.
struct Reading {
    /// The windows read.
    shapes: Vec<Deferred>,
    /// The read: the partials of each window.
    thread: std::thread::JoinHandle<Result<Vec<Vec<f32>>, String>>,
}

/// Windows whose partials deferred mode keeps on the device before reading them back in one
/// go (one host–device synchronisation per this many windows instead of one per window).
///
/// Each read-back held up the next window's upload by 1–4 ms on the H200 through wgpu (our
/// reading: the read goes through the device's thread, which the upload needs too), whatever
/// the batch's size; 32 windows of partials (230 kB each at 384 channels × 30 000 samples:
/// 7.4 MB, twice for the two halves of the ring) made a fresh 60 s scan 5–10 % faster than 8.
pub const STATS_IN_FLIGHT: usize = 32;

impl std::fmt::Debug for ChannelStatsKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChannelStatsKernel")
            .field("channels", &self.channels)
            .field("max_samples", &self.max_samples)
            .finish_non_exhaustive()
    }
}

impl Drop for ChannelStatsKernel {
    /// Waits for a read in flight (its thread holds the device's client).
    fn drop(&mut self) {
        if let Some(reading) = self.reading.take() {
            let _ = reading.thread.join();
        }
    }
}

impl ChannelStatsKernel {
    /// A kernel for windows of up to `max_samples` samples of `channels` channels.
    pub fn new(client: &Client, channels: usize, max_samples: usize) -> DspResult<Self> {
        if channels == 0 || max_samples == 0 {
            return Err(DspError::config(format!(
                "channel statistics need at least one channel and one sample per window, got \
                 {channels} channels × {max_samples} samples"
            )));
        }
        device_elements("statistics window", &[channels, max_samples])?;
        // The decoded f32 window it reads is one storage binding: refused here, before any
        // allocation, with the samples per window that fit, rather than at read-back.
        check_window_fits(client, channels, max_samples, SampleFormat::F32)?;
        let rows = channels * max_samples.div_ceil(STATS_CHUNK);
        let mut kernel = ChannelStatsKernel {
            client: client.clone(),
            channels,
            max_samples,
            lanes: client.empty(rows * STATS_LANES * LANE_PARTIAL * 4),
            partials: client.empty(rows * PARTIAL * 4),
            limits: GridLimits::of(client),
            ring: Vec::new(),
            batch: 0,
            pending: Vec::new(),
            reading: None,
            running: vec![ChannelStats::EMPTY; channels],
            tagged: Vec::new(),
        };
        // Both passes once over one sample of a small scratch buffer (the lanes and partials
        // they write are overwritten by every window): the kernels are compiled, or loaded from
        // the kernel cache, on the device's thread while the caller sets up the rest, instead
        // of when the first window waits for them.
        let scratch = client.empty(channels * 4);
        let partials = kernel.partials.clone();
        kernel.launch_into(&scratch, channels, 1, 0..1, &partials)?;
        Ok(kernel)
    }

    /// Adds the statistics of `window`'s samples `valid_local` (its owned part, so halos are
    /// not counted twice) to `totals` (one per channel).
    pub fn accumulate(
        &mut self,
        window: &DecodedWindow<'_>,
        valid_local: Range<usize>,
        totals: &mut [ChannelStats],
    ) -> DspResult<()> {
        self.accumulate_buffer(
            window.handle(),
            window.channels(),
            window.samples(),
            valid_local,
            totals,
        )
    }

    /// The statistics of `window`'s samples `valid_local`, one per channel.
    pub fn window_stats(
        &mut self,
        window: &DecodedWindow<'_>,
        valid_local: Range<usize>,
    ) -> DspResult<Vec<ChannelStats>> {
        let mut totals = vec![ChannelStats::EMPTY; window.channels()];
        self.accumulate(window, valid_local, &mut totals)?;
        Ok(totals)
    }

    /// [`accumulate`](Self::accumulate) over any device buffer holding `channels × samples`
    /// `f32`, channel-major.
    pub fn accumulate_buffer(
        &mut self,
        data: &Handle,
        channels: usize,
        samples: usize,
        valid_local: Range<usize>,
        totals: &mut [ChannelStats],
    ) -> DspResult<()> {
        if totals.len() != self.channels {
            return Err(DspError::shape(
                "statistics totals",
                self.channels,
                totals.len(),
            ));
        }
        let partials = self.partials.clone();
        let Some((chunks, valid_len)) =
            self.launch_into(data, channels, samples, valid_local, &partials)?
        else {
            return Ok(());
        };
        let rows = self.channels * chunks;
        let partials = read_f32(&self.client, &self.partials, rows * PARTIAL)?;
        merge_partials(&partials, chunks, valid_len, totals);
        Ok(())
    }

    /// Like [`accumulate`](Self::accumulate), without waiting for the device: the window's
    /// partials stay in a device buffer of their own and are read back with those of up to
    /// [`STATS_IN_FLIGHT`] windows in one go, on a thread of its own while the next windows
    /// run, so the host goes on with them while the device works.
    /// [`finish_deferred`](Self::finish_deferred) returns the totals.
    pub fn accumulate_deferred(
        &mut self,
        window: &DecodedWindow<'_>,
        valid_local: Range<usize>,
    ) -> DspResult<()> {
        self.accumulate_buffer_deferred(
            window.handle(),
            window.channels(),
            window.samples(),
            valid_local,
        )
    }

    /// [`accumulate_deferred`](Self::accumulate_deferred) over any device buffer holding
    /// `channels × samples` `f32`, channel-major.
    pub fn accumulate_buffer_deferred(
        &mut self,
        data: &Handle,
        channels: usize,
        samples: usize,
        valid_local: Range<usize>,
    ) -> DspResult<()> {
        self.defer(data, channels, samples, valid_local, None)
    }

    /// Like [`accumulate_deferred`](Self::accumulate_deferred), but the window's statistics
    /// are kept on their own, tagged with `tag`, instead of added to the totals:
    /// [`take_window_stats`](Self::take_window_stats) returns those read back so far,
    /// [`finish_window_stats`](Self::finish_window_stats) all of them. A caller that merges
    /// windows decoded on several devices merges them in its own order (the order of the
    /// tags), so its totals do not depend on which device did which window.
    pub fn window_stats_deferred(
        &mut self,
        window: &DecodedWindow<'_>,
        valid_local: Range<usize>,
        tag: u64,
    ) -> DspResult<()> {
        self.defer(
            window.handle(),
            window.channels(),
            window.samples(),
            valid_local,
            Some(tag),
        )
    }

    /// The tagged windows read back since the last call, in the order they were given.
    pub fn take_window_stats(&mut self) -> Vec<WindowStats> {
        std::mem::take(&mut self.tagged)
    }

    /// Waits for every deferred window and returns the tagged ones not taken yet, in the order
    /// they were given (untagged windows go to [`finish_deferred`](Self::finish_deferred)'s
    /// totals, which this keeps).
    pub fn finish_window_stats(&mut self) -> DspResult<Vec<WindowStats>> {
        self.drain()?;
        Ok(self.take_window_stats())
    }

    /// Queues both passes over a window, keeping its partials for a later read-back.
    fn defer(
        &mut self,
        data: &Handle,
        channels: usize,
        samples: usize,
        valid_local: Range<usize>,
        tag: Option<u64>,
    ) -> DspResult<()> {
        let slot = self.batch + self.pending.len();
        while slot >= self.ring.len() {
            let size = self.partials.size_in_used() as usize;
            self.ring.push(self.client.empty(size));
        }
        let target = self.ring[slot].clone();
        let Some((chunks, valid_len)) =
            self.launch_into(data, channels, samples, valid_local, &target)?
        else {
            return Ok(());
        };
        self.pending.push(Deferred {
            chunks,
            valid_len,
            tag,
        });
        if self.pending.len() == STATS_IN_FLIGHT {
            // The batch before this one is read by now (it had a batch's time): merge it, so
            // that its half of the ring is free for the next batch, and read this one meanwhile.
            self.collect_reading()?;
            let shapes = std::mem::take(&mut self.pending);
            let handles = self.partial_handles(self.batch, &shapes);
            let client = self.client.clone();
            let read = move || read_partials(&client, handles);
            match std::thread::Builder::new()
                .name("dspk-stats-read".into())
                .spawn(read)
            {
                Ok(thread) => self.reading = Some(Reading { shapes, thread }),
                // No thread to be had: read here.
                Err(_) => self.read_here(shapes)?,
            }
            self.batch = STATS_IN_FLIGHT - self.batch;
        }
        Ok(())
    }

    /// Waits for every deferred window and returns the totals of all windows given to
    /// [`accumulate_deferred`](Self::accumulate_deferred) since the last call (one per
    /// channel), starting afresh.
    pub fn finish_deferred(&mut self) -> DspResult<Vec<ChannelStats>> {
        self.drain()?;
        Ok(std::mem::replace(
            &mut self.running,
            vec![ChannelStats::EMPTY; self.channels],
        ))
    }

    /// Reads back and merges every deferred window.
    fn drain(&mut self) -> DspResult<()> {
        // In the order the windows came: the batch being read, then the one being filled.
        self.collect_reading()?;
        let shapes = std::mem::take(&mut self.pending);
        if !shapes.is_empty() {
            self.read_here(shapes)?;
        }
        self.batch = 0;
        Ok(())
    }

    /// The partials of the windows `shapes` whose buffers start at `ring[first]`.
    fn partial_handles(&self, first: usize, shapes: &[Deferred]) -> Vec<Handle> {
        shapes
            .iter()
            .zip(&self.ring[first..])
            .map(|(shape, h)| {
                let bytes = (self.channels * shape.chunks * PARTIAL * 4) as u64;
                h.clone().offset_end(h.size_in_used() - bytes)
            })
            .collect()
    }

    /// Reads back the batch `shapes` (starting at `ring[batch]`) on this thread and merges it
    /// into the running totals.
    fn read_here(&mut self, shapes: Vec<Deferred>) -> DspResult<()> {
        let read = read_partials(&self.client, self.partial_handles(self.batch, &shapes));
        self.merge_read(read, shapes)
    }

    /// Waits for the batch being read back, if any, and merges it into the running totals.
    fn collect_reading(&mut self) -> DspResult<()> {
        let Some(Reading { shapes, thread }) = self.reading.take() else {
            return Ok(());
        };
        let read = match thread.join() {
            Ok(read) => read,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        self.merge_read(read, shapes)
    }

    /// Merges the partials `read` of the windows `shapes` into the running totals. On an
    /// error the pending windows and the running totals are dropped (they would be
    /// incomplete).
    fn merge_read(
        &mut self,
        read: Result<Vec<Vec<f32>>, String>,
        shapes: Vec<Deferred>,
    ) -> DspResult<()> {
        let read = match read {
            Ok(read) => read,
            Err(e) => {
                self.running = vec![ChannelStats::EMPTY; self.channels];
                self.pending.clear();
                self.tagged.clear();
                return Err(DspError::config(format!("reading statistics back: {e}")));
            }
        };
        for (partials, shape) in read.iter().zip(shapes) {
            match shape.tag {
                None => merge_partials(partials, shape.chunks, shape.valid_len, &mut self.running),
                Some(tag) => {
                    let mut stats = vec![ChannelStats::EMPTY; self.channels];
                    merge_partials(partials, shape.chunks, shape.valid_len, &mut stats);
                    self.tagged.push(WindowStats { tag, stats });
                }
            }
        }
        Ok(())
    }

    /// Checks a window and launches both passes over its samples `valid_local`, leaving
    /// `channels × chunks` partials in `partials`; `(chunks, valid length)`, or `None`
    /// when the range is empty.
    fn launch_into(
        &mut self,
        data: &Handle,
        channels: usize,
        samples: usize,
        valid_local: Range<usize>,
        partials: &Handle,
    ) -> DspResult<Option<(usize, usize)>> {
        if channels != self.channels {
            return Err(DspError::shape(
                "statistics window channels",
                self.channels,
                channels,
            ));
        }
        if samples > self.max_samples {
            return Err(DspError::BufferOverrun {
                what: "statistics window (samples per channel)".into(),
                capacity: self.max_samples,
                needed: samples,
            });
        }
        if valid_local.start > valid_local.end || valid_local.end > samples {
            return Err(DspError::SampleRange {
                start: valid_local.start as u64,
                end: valid_local.end as u64,
                total: samples as u64,
            });
        }
        let valid_len = valid_local.len();
        if valid_len == 0 {
            return Ok(None);
        }
        let chunks = valid_len.div_ceil(STATS_CHUNK);
        let rows = channels * chunks;
        let lane_units = rows * STATS_LANES;
        let g = LaunchGeometry::elementwise_with(&self.limits, lane_units)?;
        stats_lanes::launch(
            &self.client,
            g.cube_count(),
            g.cube_dim(),
            f32_arg(data, channels * samples)?,
            f32_arg(&self.lanes, lane_units * LANE_PARTIAL)?,
            samples,
            valid_local.start,
            valid_len,
            chunks,
            rows,
            STATS_CHUNK,
            STATS_LANES,
            g.contiguous_runs(),
        );
        let g = LaunchGeometry::elementwise_with(&self.limits, rows)?;
        stats_rows::launch(
            &self.client,
            g.cube_count(),
            g.cube_dim(),
            f32_arg(data, channels * samples)?,
            f32_arg(&self.lanes, lane_units * LANE_PARTIAL)?,
            f32_arg(partials, rows * PARTIAL)?,
            samples,
            valid_local.start,
            chunks,
            rows,
            STATS_CHUNK,
            STATS_LANES,
        );
        Ok(Some((chunks, valid_len)))
    }
}

/// Reads `handles` (partials, `f32` each) back from `client`'s device, in one read.
fn read_partials(client: &Client, handles: Vec<Handle>) -> Result<Vec<Vec<f32>>, String> {
    let read = client.read(handles).map_err(|e| e.to_string())?;
    Ok(read
        .iter()
        .map(|bytes| {
            bytes
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect()
        })
        .collect())
}

/// Merges the per-chunk `partials` (channel-major, `chunks` per channel, the last chunk short
/// when `valid_len` is not a multiple of [`STATS_CHUNK`]) into `totals`, in `f64`, chunk by
/// chunk in order.
fn merge_partials(partials: &[f32], chunks: usize, valid_len: usize, totals: &mut [ChannelStats]) {
    for (ch, total) in totals.iter_mut().enumerate() {
        for k in 0..chunks {
            let p = &partials[(ch * chunks + k) * PARTIAL..][..PARTIAL];
            let n = STATS_CHUNK.min(valid_len - k * STATS_CHUNK) as u64;
            total.merge(&ChannelStats::from_shifted(
                n,
                f64::from(p[0]),
                f64::from(p[1]),
                f64::from(p[2]),
                f64::from(p[3]),
                f64::from(p[4]),
            ));
        }
    }
}
