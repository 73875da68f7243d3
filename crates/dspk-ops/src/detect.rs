//! Spike detection on the device: threshold crossings made locally exclusive across
//! neighbouring channels, as SpikeInterface's `locally_exclusive` detector, each peak decided
//! once by the window that owns its sample.
//!
//! - **Noise** ([`noise_windows`], [`NoiseLevels`]): per channel, the median absolute deviation
//!   / 0.6745 of 20 chunks of 500 ms per segment, averaged (SpikeInterface's
//!   `get_noise_levels` defaults), on chunks placed evenly instead of at random: fitted once per
//!   recording, the same for every window, device and job.
//! - **Candidates**: samples past `−k × noise` (`+k × noise`, or either: [`PeakSign`]) that are
//!   a local extremum of their channel (strictly beyond the sample before, at least as far as
//!   the one after; a neighbour past the segment's end does not count).
//! - **Exclusion**: a candidate is kept unless another candidate within ±`sweep` samples on a
//!   channel within `radius_um` of its own (the probe's geometry; itself included) beats it: a
//!   larger amplitude in units of its own threshold, or on equality a lower sample, then a lower
//!   channel. SpikeInterface keeps both peaks of an exact tie at one sample and compares `f64`
//!   quotients where dspk compares `f32` products; nothing else differs.
//!
//! [`Detector`] reads a window valid on its owned samples widened by [`Detector::halo`]
//! (clipped to the segment) and returns the peaks of the owned samples only: windows that tile
//! a recording find every peak exactly once, with the same values, whatever their size.
//! [`host_detect`] is the reference the device is held to, bit for bit.

mod host;
mod kernel;
mod noise;

use std::fmt;
use std::str::FromStr;

use cubecl::bytes::Bytes;
use cubecl::client::Client;
use cubecl::server::Handle;
use dspk_kernels::{
    GridLimits, LaunchGeometry, device_elements, f32_arg, max_binding_bytes, u32_arg,
};
use dspk_types::{DspError, DspResult, RecordingInfo};
use serde::{Deserialize, Serialize};

pub use host::host_detect;
pub use noise::{NOISE_CHUNK_S, NOISE_CHUNKS, NoiseLevels, median, noise_windows};

use crate::stage::{Halo, Span};
use crate::upload::upload;

/// Which crossings are peaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PeakSign {
    /// Below `−k × noise` (extracellular spikes).
    #[default]
    Neg,
    /// Above `+k × noise`.
    Pos,
    /// Either.
    Both,
}

impl PeakSign {
    /// Whether negative, then positive crossings count.
    pub fn directions(self) -> (bool, bool) {
        match self {
            PeakSign::Neg => (true, false),
            PeakSign::Pos => (false, true),
            PeakSign::Both => (true, true),
        }
    }

    /// The name SpikeInterface and the program use (`neg`, `pos`, `both`).
    pub fn name(self) -> &'static str {
        match self {
            PeakSign::Neg => "neg",
            PeakSign::Pos => "pos",
            PeakSign::Both => "both",
        }
    }
}

impl fmt::Display for PeakSign {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for PeakSign {
    type Err = DspError;

    fn from_str(s: &str) -> DspResult<Self> {
        match s {
            "neg" => Ok(PeakSign::Neg),
            "pos" => Ok(PeakSign::Pos),
            "both" => Ok(PeakSign::Both),
            other => Err(DspError::config(format!(
                "peak sign {other:?} is none of neg, pos, both"
            ))),
        }
    }
}

/// How to detect (SpikeInterface's `detect_peaks` parameters, dspk's defaults).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DetectSpec {
    /// `k`: the threshold in noise levels (SpikeInterface's `detect_threshold`).
    pub threshold: f64,
    /// Which crossings count.
    pub sign: PeakSign,
    /// Channels within this distance (µm) of a peak's channel are its neighbourhood.
    pub radius_um: f64,
    /// A peak excludes smaller ones within this many ms (SpikeInterface's `exclude_sweep_ms`).
    pub exclude_sweep_ms: f64,
}

impl Default for DetectSpec {
    fn default() -> Self {
        Self {
            threshold: 5.0,
            sign: PeakSign::Neg,
            radius_um: 50.0,
            exclude_sweep_ms: 0.1,
        }
    }
}

impl DetectSpec {
    /// Refuses a threshold, radius or sweep that is not a finite number (threshold `> 0`,
    /// radius and sweep `>= 0`).
    ///
    /// # Errors
    /// The first parameter out of range, with its value.
    pub fn check(&self) -> DspResult<()> {
        if !(self.threshold.is_finite() && self.threshold > 0.0) {
            return Err(DspError::config(format!(
                "the detection threshold {} is not a finite number of noise levels > 0",
                self.threshold
            )));
        }
        if !(self.radius_um.is_finite() && self.radius_um >= 0.0) {
            return Err(DspError::config(format!(
                "the detection radius {} µm is not a finite distance >= 0",
                self.radius_um
            )));
        }
        if !(self.exclude_sweep_ms.is_finite() && self.exclude_sweep_ms >= 0.0) {
            return Err(DspError::config(format!(
                "the exclusion sweep {} ms is not a finite duration >= 0",
                self.exclude_sweep_ms
            )));
        }
        Ok(())
    }

    /// The sweep in samples at `rate_hz`: `⌊ms × rate / 1000⌋`, as SpikeInterface rounds it.
    pub fn sweep_samples(&self, rate_hz: f64) -> usize {
        (self.exclude_sweep_ms * rate_hz / 1000.0).floor() as usize
    }

    /// Each channel's threshold, `k × noise` rounded once to `f32` (what host and device
    /// compare against).
    pub fn thresholds(&self, noise: &[f64]) -> Vec<f32> {
        noise.iter().map(|n| (self.threshold * n) as f32).collect()
    }
}

/// One detected peak.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Peak {
    /// The recording sample (segments end to end from 0).
    pub sample: u64,
    /// The channel.
    pub channel: u32,
    /// The signal there (the pipeline's output units, µV).
    pub amplitude: f32,
    /// The segment that holds the sample.
    pub segment: u32,
}

impl Peak {
    /// The order of a table: sample, then channel.
    pub fn key(&self) -> (u64, u32) {
        (self.sample, self.channel)
    }
}

/// Each channel's neighbourhood: the channels within a radius of it, itself included, in
/// channel order (as flat lists).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Neighbourhoods {
    starts: Vec<u32>,
    channels: Vec<u32>,
}

impl Neighbourhoods {
    /// The neighbourhoods of `info`'s channels within `radius_um` (the probe's geometry; a
    /// channel without a contact is its own only neighbour).
    ///
    /// # Errors
    /// A recording without a probe.
    pub fn of(info: &RecordingInfo, radius_um: f64) -> DspResult<Self> {
        let probe = info.probe.as_ref().ok_or_else(|| {
            DspError::config(format!(
                "locally exclusive detection needs the probe's geometry, and {} has none",
                info.name
            ))
        })?;
        let lists = (0..info.channel_count())
            .map(|c| {
                let mut near: Vec<usize> = probe.within(c, radius_um).unwrap_or_default();
                near.push(c);
                near.sort_unstable();
                near.dedup();
                near
            })
            .collect::<Vec<_>>();
        Ok(Self::from_lists(&lists))
    }

    /// Each of `channels` channels its own only neighbour (SpikeInterface's `by_channel`
    /// detection: for a recording without geometry).
    pub fn alone(channels: usize) -> Self {
        let lists: Vec<Vec<usize>> = (0..channels).map(|c| vec![c]).collect();
        Self::from_lists(&lists)
    }

    /// Neighbourhoods as given (each list should hold its own channel).
    pub fn from_lists(lists: &[Vec<usize>]) -> Self {
        let mut starts = vec![0u32];
        let mut channels = Vec::new();
        for list in lists {
            channels.extend(list.iter().map(|&c| c as u32));
            starts.push(channels.len() as u32);
        }
        Self { starts, channels }
    }

    /// The neighbourhood of `channel`.
    pub fn of_channel(&self, channel: usize) -> &[u32] {
        match (self.starts.get(channel), self.starts.get(channel + 1)) {
            (Some(&a), Some(&b)) => &self.channels[a as usize..b as usize],
            _ => &[],
        }
    }

    /// Channels described.
    pub fn channel_count(&self) -> usize {
        self.starts.len() - 1
    }
}

/// Kept peaks the first read of a window brings: 512 KiB of positions and values, against a
/// 2 s window's 46 MB of int16 on its way in; a window with more reads the rest at once, and
/// the next windows' first reads grow to half as much again.
const FIRST_READ_PEAKS: usize = 1 << 16;

/// The most peaks a window of `len` owned samples on `channels` channels can keep: on one
/// channel, two kept peaks lie more than `sweep` samples apart (each is in the other's
/// neighbourhood, and of two candidates one always beats the other). With no sweep, every
/// sample can be one (a trough then a crest, with [`PeakSign::Both`]).
pub fn kept_bound(channels: usize, len: usize, sweep: usize) -> usize {
    channels.saturating_mul(len.div_ceil(sweep + 1)).max(1)
}

/// A detection launched on the device ([`Detector::queue`]), its kept peaks not yet read.
#[derive(Debug)]
pub struct QueuedPeaks {
    count: Handle,
    found: Handle,
    capacity: usize,
    listed: usize,
    stride: usize,
    origin: u64,
    segment: u32,
}

impl QueuedPeaks {
    /// What to read back, in one read: the count of kept peaks, then the positions and values
    /// of the first [`listed`](Self::listed).
    pub fn reads(&self) -> Vec<Handle> {
        vec![self.count.clone(), self.listed_of(self.listed)]
    }

    /// The first `peaks` slots of the list.
    fn listed_of(&self, peaks: usize) -> Handle {
        let size = self.found.size_in_used();
        self.found.clone().offset_end(size - (peaks * 8) as u64)
    }

    /// Kept peaks the reads bring.
    pub fn listed(&self) -> usize {
        self.listed
    }
}

/// Little-endian 32-bit words of `bytes`.
fn words_of(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

/// A failed read of `what` from the device.
fn read_error(what: &str, e: impl fmt::Display) -> DspError {
    DspError::Io {
        message: format!("device error while reading {what} back: {e}"),
        path: None,
    }
}

/// Detection on one device (see the module docs).
pub struct Detector {
    client: Client,
    channels: usize,
    sweep: usize,
    sign: PeakSign,
    thresholds: Handle,
    /// The neighbourhoods' starts (`channels + 1`), then their channels.
    near: Handle,
    listed: usize,
    values: Option<(Handle, usize)>,
    limits: GridLimits,
    /// Kept peaks a window's first read brings (more where a window had more).
    expect: usize,
    /// Slots of kept peaks one binding holds.
    most_slots: usize,
}

impl fmt::Debug for Detector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Detector")
            .field("channels", &self.channels)
            .field("sweep", &self.sweep)
            .field("sign", &self.sign)
            .finish_non_exhaustive()
    }
}

impl Detector {
    /// A detector on `client`'s device for `thresholds` (one per channel, see
    /// [`DetectSpec::thresholds`]), `neighbourhoods` of as many channels, `sweep` samples and
    /// `sign`.
    ///
    /// # Errors
    /// Neighbourhoods of another channel count, a neighbour past the last channel.
    pub fn new(
        client: &Client,
        thresholds: &[f32],
        neighbourhoods: &Neighbourhoods,
        sweep: usize,
        sign: PeakSign,
    ) -> DspResult<Self> {
        let channels = thresholds.len();
        if neighbourhoods.channel_count() != channels {
            return Err(DspError::shape(
                "channels of the detection neighbourhoods",
                channels,
                neighbourhoods.channel_count(),
            ));
        }
        if let Some(&c) = neighbourhoods
            .channels
            .iter()
            .find(|&&c| c as usize >= channels)
        {
            return Err(DspError::config(format!(
                "a detection neighbourhood lists channel {c} of a recording of {channels}"
            )));
        }
        Ok(Self {
            client: client.clone(),
            channels,
            sweep,
            sign,
            thresholds: upload(client, thresholds.iter().map(|t| t.to_le_bytes())),
            near: upload(
                client,
                neighbourhoods
                    .starts
                    .iter()
                    .chain(&neighbourhoods.channels)
                    .map(|s| s.to_le_bytes()),
            ),
            listed: neighbourhoods.channels.len(),
            values: None,
            limits: GridLimits::of(client),
            expect: FIRST_READ_PEAKS,
            most_slots: (max_binding_bytes(client) / 8).max(1) as usize,
        })
    }

    /// The same detector with the first read of each window bringing `peaks` kept peaks (at
    /// least 1; by default 65,536): a window that keeps more reads the rest at once, and the
    /// first reads after it grow.
    pub fn with_first_read(mut self, peaks: usize) -> Self {
        self.expect = peaks.max(1);
        self
    }

    /// The same detector listing at most `slots` kept peaks a window (at least 1; by default
    /// as many as one device buffer holds): a window that keeps more is refused, not cut short
    /// (for tests of that refusal).
    pub fn with_most_slots(mut self, slots: usize) -> Self {
        self.most_slots = slots.max(1);
        self
    }

    /// The context detection reads around the owned samples: the sweep and one sample more
    /// (a candidate is compared with its neighbours in time).
    pub fn halo(&self) -> Halo {
        Halo::both(self.sweep as u64 + 1)
    }

    /// The peaks of `span.produce` (the owned samples) of `input`, valid on
    /// `span.input_range(self.halo())`, sorted by sample then channel, tagged `segment`.
    /// Launches, then reads the result back (synchronises): [`queue`](Self::queue) and
    /// [`complete`](Self::complete) in one.
    ///
    /// # Errors
    /// As [`queue`](Self::queue) and [`complete`](Self::complete).
    pub fn detect(&mut self, input: &Handle, span: &Span, segment: u32) -> DspResult<Vec<Peak>> {
        let Some(queued) = self.queue(input, span, segment)? else {
            return Ok(Vec::new());
        };
        let bytes = self
            .client
            .read(queued.reads())
            .map_err(|e| read_error("the kept peaks", e))?;
        self.complete(queued, bytes)
    }

    /// Launches detection on `span.produce` (the owned samples) of `input`, valid on
    /// `span.input_range(self.halo())`, and returns what to read back for it: nothing is read
    /// yet, so the caller can queue the read behind the kernels and go on ([`detect`] waits at
    /// once). `None` for an empty span. The kept peaks are listed on the device (a slot each,
    /// in no set order), so that one read brings them: their count and the first
    /// [`QueuedPeaks::listed`] of them.
    ///
    /// [`detect`]: Self::detect
    ///
    /// # Errors
    /// A span of another channel count or incoherent, a buffer shorter than the span.
    pub fn queue(
        &mut self,
        input: &Handle,
        span: &Span,
        segment: u32,
    ) -> DspResult<Option<QueuedPeaks>> {
        span.check()?;
        if span.channels != self.channels {
            return Err(DspError::shape(
                "channels of a window to detect in",
                self.channels,
                span.channels,
            ));
        }
        if span.is_empty() {
            return Ok(None);
        }
        let len = span.len();
        device_elements("a detection window", &[self.channels, span.stride])?;
        let values = match &self.values {
            Some((h, n)) if *n >= len => h.clone(),
            _ => {
                let h = self.client.empty(len * 4);
                self.values = Some((h.clone(), len));
                h
            }
        };
        let seg_lo = span.segment.start.saturating_sub(span.origin) as usize;
        let seg_hi = (span.segment.end.saturating_sub(span.origin) as usize).min(span.stride);
        let near = span.input_range(Halo::both(self.sweep as u64));
        let (neg, pos) = self.sign.directions();
        let g = LaunchGeometry::channels_samples_with(&self.limits, self.channels, near.len())?;
        kernel::candidates::launch(
            &self.client,
            g.cube_count(),
            g.cube_dim(),
            f32_arg(input, len)?,
            f32_arg(&values, len)?,
            f32_arg(&self.thresholds, self.channels)?,
            self.channels,
            span.stride,
            near.start,
            near.len(),
            seg_lo,
            seg_hi,
            u32::from(neg),
            u32::from(pos),
        );
        let owned = span.produce.clone();
        let words = owned.len().div_ceil(32);
        // As many slots as the window can keep, within one binding (only a sweep of 0 on a
        // window near the device's largest asks more; `complete` then refuses, saying so).
        let capacity = kept_bound(self.channels, owned.len(), self.sweep).min(self.most_slots);
        let count = upload(&self.client, [0u32.to_le_bytes()]);
        let found = self.client.empty(capacity * 8);
        let g = LaunchGeometry::elementwise_with(&self.limits, self.channels * words)?;
        kernel::exclusive::launch(
            &self.client,
            g.cube_count(),
            g.cube_dim(),
            f32_arg(input, len)?,
            f32_arg(&values, len)?,
            f32_arg(&self.thresholds, self.channels)?,
            u32_arg(&self.near, self.channels + 1 + self.listed)?,
            u32_arg(&count, 1)?,
            u32_arg(&found, 2 * capacity)?,
            capacity,
            self.channels,
            span.stride,
            owned.start,
            owned.len(),
            words,
            near.start,
            near.end,
            self.sweep,
        );
        Ok(Some(QueuedPeaks {
            count,
            found,
            capacity,
            listed: self.expect.min(capacity),
            stride: span.stride,
            origin: span.origin,
            segment,
        }))
    }

    /// The peaks of a detection [`queue`](Self::queue)d on this detector, from `bytes`, what
    /// [`QueuedPeaks::reads`] read back; peaks past the listed ones are read now (waiting for
    /// the device), and later windows list more.
    ///
    /// # Errors
    /// Bytes of another shape than the reads, a failed read of the rest.
    pub fn complete(&mut self, queued: QueuedPeaks, bytes: Vec<Bytes>) -> DspResult<Vec<Peak>> {
        let [count, found] = <[Bytes; 2]>::try_from(bytes)
            .map_err(|b| DspError::shape("buffers of the kept peaks read back", 2, b.len()))?;
        let kept = words_of(&count).first().copied().unwrap_or(0) as usize;
        if kept > queued.capacity {
            return Err(DspError::config(format!(
                "detection kept {kept} peaks in one window, more than the {} one device buffer \
                 lists; detect in shorter windows or with an exclusion sweep",
                queued.capacity
            )));
        }
        let found = if kept <= queued.listed {
            words_of(&found)
        } else {
            self.expect = self.expect.max(kept.saturating_add(kept / 2));
            let rest = self
                .client
                .read_one(queued.listed_of(kept))
                .map_err(|e| read_error("the kept peaks", e))?;
            words_of(&rest)
        };
        if found.len() < 2 * kept {
            return Err(DspError::BufferUnderrun {
                what: "kept peaks read back (words)".into(),
                needed: 2 * kept,
                available: found.len(),
            });
        }
        let mut peaks: Vec<Peak> = found[..2 * kept]
            .chunks_exact(2)
            .map(|slot| {
                let (e, a) = (slot[0] as usize, slot[1]);
                Peak {
                    sample: queued.origin + (e % queued.stride) as u64,
                    channel: (e / queued.stride) as u32,
                    amplitude: f32::from_bits(a),
                    segment: queued.segment,
                }
            })
            .collect();
        peaks.sort_unstable_by_key(Peak::key);
        Ok(peaks)
    }
}
