//! G1 (BENCH.md): the decode kernel's throughput against a device-to-device copy measured in
//! the same run.

use std::time::Duration;

use cubecl::prelude::*;
use dspk_types::{DspResult, MemoryOrder, SampleFormat};

use crate::args::f32_arg;
use crate::decode::Decoder;
use crate::geometry::{LaunchGeometry, element_position};
use crate::limits::device_elements;
use crate::timing::time_device;

/// Kernel launches per timed run (one launch is too short to time against a sync).
pub const LAUNCHES_PER_RUN: usize = 10;

/// Timed runs per kernel (the median is kept).
pub const RUNS: usize = 7;

/// The copy baseline: `output[i] = input[i]`, one unit per `f32`.
#[cube(launch)]
fn copy_kernel(input: &[f32], output: &mut [f32], n: usize) {
    let i = element_position();
    if i < n {
        output[i] = input[i];
    }
}

/// Launches the copy baseline over the first `n` values of `input` into `output` (for other
/// crates' throughput figures against a copy in the same run).
///
/// # Errors
/// Buffers holding fewer than `n` values, or more values than one launch addresses.
pub fn launch_copy(
    client: &cubecl::client::Client,
    input: &cubecl::server::Handle,
    output: &cubecl::server::Handle,
    n: usize,
) -> DspResult<()> {
    device_elements("copied values", &[n])?;
    let g = LaunchGeometry::elementwise(client, n)?;
    copy_kernel::launch(
        client,
        g.cube_count(),
        g.cube_dim(),
        f32_arg(input, n)?,
        f32_arg(output, n)?,
        n,
    );
    Ok(())
}

/// G1's figures: int16 time-major → f32 channel-major decode against an f32 copy of the same
/// number of values, both on the device, in the same run.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodeVsCopy {
    /// The device (runtime and adapter).
    pub device: String,
    /// Channels of the window.
    pub channels: usize,
    /// Samples per channel of the window.
    pub samples: usize,
    /// Median time of one decode launch.
    pub decode_time: Duration,
    /// Median time of one copy launch.
    pub copy_time: Duration,
    /// Median time of one decode launch of the same window stored channel-major (no
    /// transpose): how much the time-major layout costs.
    pub channel_major_time: Duration,
    /// Bytes one decode moves: 2 read + 4 written per sample.
    pub decode_bytes: u64,
    /// Bytes one copy moves: 4 read + 4 written per value.
    pub copy_bytes: u64,
}

impl DecodeVsCopy {
    /// Decode throughput, bytes moved per second.
    pub fn decode_bytes_per_s(&self) -> f64 {
        self.decode_bytes as f64 / self.decode_time.as_secs_f64()
    }

    /// Copy throughput, bytes moved per second.
    pub fn copy_bytes_per_s(&self) -> f64 {
        self.copy_bytes as f64 / self.copy_time.as_secs_f64()
    }

    /// Decode throughput as a fraction of the copy's (G1's figure; target ≥ 0.6).
    pub fn ratio(&self) -> f64 {
        self.decode_bytes_per_s() / self.copy_bytes_per_s()
    }
}

impl std::fmt::Display for DecodeVsCopy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "G1 on {}: {} ch × {} samples int16 time-major → f32 channel-major: decode {:.1} µs \
             ({} B, {:.1} GB/s) vs copy {:.1} µs ({} B, {:.1} GB/s): {:.2} × copy \
             (channel-major stored: {:.1} µs, {:.2} × copy)",
            self.device,
            self.channels,
            self.samples,
            self.decode_time.as_secs_f64() * 1e6,
            self.decode_bytes,
            self.decode_bytes_per_s() / 1e9,
            self.copy_time.as_secs_f64() * 1e6,
            self.copy_bytes,
            self.copy_bytes_per_s() / 1e9,
            self.ratio(),
            self.channel_major_time.as_secs_f64() * 1e6,
            self.copy_time.as_secs_f64() / self.channel_major_time.as_secs_f64() * 6.0 / 8.0
        )
    }
}

/// Measures G1 on the client's device for one window of `channels × samples` int16 samples
/// (non-trivial data: a hash of the position, gains and offsets per channel).
pub fn decode_vs_copy(client: &Client, channels: usize, samples: usize) -> DspResult<DecodeVsCopy> {
    let n = device_elements("G1 window", &[channels, samples])? as usize;
    let gains: Vec<f32> = (0..channels).map(|c| 0.195 + c as f32 * 1e-3).collect();
    let offsets: Vec<f32> = (0..channels).map(|c| c as f32 * 0.5 - 10.0).collect();
    let mut decoder = Decoder::new(
        client,
        channels,
        samples,
        SampleFormat::I16,
        MemoryOrder::TimeMajor,
        &gains,
        &offsets,
    )?;
    let stored: Vec<u8> = (0..n as u64)
        .flat_map(|i| {
            let h = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40;
            (h as u16).to_le_bytes()
        })
        .collect();
    decoder.upload(&stored, samples)?;
    let mut channel_major = Decoder::new(
        client,
        channels,
        samples,
        SampleFormat::I16,
        MemoryOrder::ChannelMajor,
        &gains,
        &offsets,
    )?;
    channel_major.upload(&stored, samples)?;
    drop(stored);
    let channel_major_run = time_device(client, RUNS, || {
        for _ in 0..LAUNCHES_PER_RUN {
            channel_major.decode_uploaded(samples)?;
        }
        Ok(())
    })?;
    drop(channel_major);

    let decode_run = time_device(client, RUNS, || {
        for _ in 0..LAUNCHES_PER_RUN {
            decoder.decode_uploaded(samples)?;
        }
        Ok(())
    })?;

    let window = decoder.decode_uploaded(samples)?;
    let source = window.handle().clone();
    let target = client.empty(n * 4);
    let g = LaunchGeometry::elementwise(client, n)?;
    let copy_run = time_device(client, RUNS, || {
        for _ in 0..LAUNCHES_PER_RUN {
            copy_kernel::launch(
                client,
                g.cube_count(),
                g.cube_dim(),
                f32_arg(&source, n)?,
                f32_arg(&target, n)?,
                n,
            );
        }
        Ok(())
    })?;

    Ok(DecodeVsCopy {
        device: format!("{} ({})", client.name(), client.properties().identity.name),
        channels,
        samples,
        decode_time: decode_run / LAUNCHES_PER_RUN as u32,
        copy_time: copy_run / LAUNCHES_PER_RUN as u32,
        channel_major_time: channel_major_run / LAUNCHES_PER_RUN as u32,
        decode_bytes: n as u64 * 6,
        copy_bytes: n as u64 * 8,
    })
}
