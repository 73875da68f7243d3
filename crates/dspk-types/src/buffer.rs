//! Memory orders, buffer layouts and owned chunks of scaled signal.

use serde::{Deserialize, Serialize};

use crate::{DspError, DspResult, RationalTime, SampleRate};

/// How a block of multichannel samples is laid out in memory or on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MemoryOrder {
    /// All samples of channel 0, then all of channel 1, … (what kernels want).
    #[default]
    ChannelMajor,
    /// Sample 0 of every channel, then sample 1, … (interleaved; what acquisition writes).
    TimeMajor,
}

impl MemoryOrder {
    /// The kebab-case name (`channel-major`, `time-major`).
    pub fn name(&self) -> &'static str {
        match self {
            MemoryOrder::ChannelMajor => "channel-major",
            MemoryOrder::TimeMajor => "time-major",
        }
    }
}

impl std::fmt::Display for MemoryOrder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for MemoryOrder {
    type Err = DspError;

    fn from_str(s: &str) -> DspResult<Self> {
        match s.trim().to_ascii_lowercase().replace('_', "-").as_str() {
            "channel-major" => Ok(MemoryOrder::ChannelMajor),
            "time-major" | "interleaved" => Ok(MemoryOrder::TimeMajor),
            _ => Err(DspError::config(format!(
                "unknown memory order '{s}' (valid: channel-major, time-major)"
            ))),
        }
    }
}

/// The shape and order of a channels × samples block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct BufferLayout {
    /// Number of channels.
    pub channels: usize,
    /// Samples per channel.
    pub samples: usize,
    /// How the block is ordered.
    pub order: MemoryOrder,
}

impl BufferLayout {
    /// A layout of `channels` × `samples` in `order`.
    pub fn new(channels: usize, samples: usize, order: MemoryOrder) -> Self {
        Self {
            channels,
            samples,
            order,
        }
    }

    /// `channels * samples`, or an overflow error.
    pub fn total_elements(&self) -> DspResult<usize> {
        self.channels.checked_mul(self.samples).ok_or_else(|| {
            DspError::Overflow(format!(
                "buffer of {} channels × {} samples",
                self.channels, self.samples
            ))
        })
    }

    /// Where `(channel, sample)` sits in a buffer of this layout. The caller keeps both in range
    /// (see [`SignalChunk::get`] for a checked access).
    pub fn linear_index(&self, channel: usize, sample: usize) -> usize {
        match self.order {
            MemoryOrder::ChannelMajor => channel * self.samples + sample,
            MemoryOrder::TimeMajor => sample * self.channels + channel,
        }
    }

    fn check(&self, channel: usize, sample: usize) -> DspResult<()> {
        if channel >= self.channels {
            return Err(DspError::InvalidChannel {
                index: channel,
                count: self.channels,
            });
        }
        if sample >= self.samples {
            return Err(DspError::SampleRange {
                start: sample as u64,
                end: (sample as u64).saturating_add(1),
                total: self.samples as u64,
            });
        }
        Ok(())
    }
}

/// A block of scaled `f32` samples with its layout, rate and the time of its first sample.
#[derive(Debug, Clone, PartialEq)]
pub struct SignalChunk {
    data: Vec<f32>,
    layout: BufferLayout,
    sample_rate: SampleRate,
    start_time: RationalTime,
}

impl SignalChunk {
    /// A chunk over `data`, which must hold exactly `layout.total_elements()` values.
    pub fn new(
        data: Vec<f32>,
        layout: BufferLayout,
        sample_rate: SampleRate,
        start_time: RationalTime,
    ) -> DspResult<Self> {
        let expected = layout.total_elements()?;
        if data.len() != expected {
            return Err(DspError::shape("signal chunk data", expected, data.len()));
        }
        Ok(Self {
            data,
            layout,
            sample_rate,
            start_time,
        })
    }

    /// A chunk of zeros.
    pub fn zeros(
        layout: BufferLayout,
        sample_rate: SampleRate,
        start_time: RationalTime,
    ) -> DspResult<Self> {
        let n = layout.total_elements()?;
        Self::new(vec![0.0; n], layout, sample_rate, start_time)
    }

    /// The values, in [`SignalChunk::layout`] order.
    pub fn data(&self) -> &[f32] {
        &self.data
    }

    /// The values, mutable (the length cannot change).
    pub fn data_mut(&mut self) -> &mut [f32] {
        &mut self.data
    }

    /// The values, giving up the chunk.
    pub fn into_data(self) -> Vec<f32> {
        self.data
    }

    /// Shape and order.
    pub fn layout(&self) -> BufferLayout {
        self.layout
    }

    /// The sample rate.
    pub fn sample_rate(&self) -> SampleRate {
        self.sample_rate
    }

    /// The time of the first sample.
    pub fn start_time(&self) -> RationalTime {
        self.start_time
    }

    /// The value at `(channel, sample)`, or an error naming the index out of range.
    pub fn get(&self, channel: usize, sample: usize) -> DspResult<f32> {
        self.layout.check(channel, sample)?;
        Ok(self.data[self.layout.linear_index(channel, sample)])
    }

    /// Sets the value at `(channel, sample)`, or an error naming the index out of range.
    pub fn set(&mut self, channel: usize, sample: usize, value: f32) -> DspResult<()> {
        self.layout.check(channel, sample)?;
        let i = self.layout.linear_index(channel, sample);
        self.data[i] = value;
        Ok(())
    }
}

#[cfg(test)]
#[path = "tests/buffer.rs"]
mod tests;
