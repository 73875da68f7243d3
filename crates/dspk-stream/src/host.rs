//! Decoded windows back on the host, in order: the building block of `convert` (decode on the
//! device, write with a host writer) and of preprocessing's way back — only the samples wanted
//! cross the bus, into the host memory the runtime reads into (pinned on CUDA), with no copy
//! after it.

use std::ops::{Deref, Range};

use cubecl::bytes::Bytes;
use cubecl::client::Client;
use cubecl::server::{CopyDescriptor, Handle};
use dspk_kernels::DecodedWindow;
use dspk_types::{DspError, DspResult, HaloWindow};

use crate::pass::{DevicePass, Flow, PassReport};

impl DevicePass<'_> {
    /// [`run`](Self::run), with each decoded window read back to the host: `on_window` gets
    /// the window and its values (channel-major, `channels × window.read_len()`), in window
    /// order, and may stop the pass.
    pub fn run_to_host(
        self,
        mut on_window: impl FnMut(&HaloWindow, &[f32]) -> DspResult<Flow>,
    ) -> DspResult<PassReport> {
        let mut reader = RowReader::default();
        self.run(|window, decoded| {
            let values = reader.read_decoded(decoded)?;
            on_window(window, &values)
        })
    }
}

/// Values read back from the device, channel-major: the bytes the runtime read into, seen as
/// `f32` where they are aligned for it, else a copy.
pub(crate) enum HostValues {
    /// The runtime's own host buffer (pinned memory on CUDA), `len` values.
    Read { bytes: Bytes, len: usize },
    /// Values copied on the host (a runtime that cannot read part of each row, or a buffer not
    /// aligned for `f32`).
    Copied(Vec<f32>),
}

impl Deref for HostValues {
    type Target = [f32];

    fn deref(&self) -> &[f32] {
        match self {
            Self::Read { bytes, len } => {
                bytemuck::try_cast_slice(&bytes[..len * 4]).expect("checked aligned when read")
            }
            Self::Copied(values) => values,
        }
    }
}

impl HostValues {
    /// The first `len` values of `bytes` that `client` read, without a copy where they are
    /// aligned for `f32` and are the runtime's own host buffer ([`reads_alias_device`]: not on
    /// the cpu runtime, whose read is a view of the device buffer itself).
    fn of(client: &Client, bytes: Bytes, len: usize) -> Self {
        if !reads_alias_device(client)
            && bytemuck::try_cast_slice::<u8, f32>(&bytes[..len * 4]).is_ok()
        {
            Self::Read { bytes, len }
        } else {
            Self::Copied(
                bytes[..len * 4]
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                    .collect(),
            )
        }
    }
}

/// Whether what `client` reads back is a view of the device buffer rather than a copy:
/// CubeCL's cpu runtime, whose device memory is host memory, reads without copying
/// (cubecl-cpu 0.11's `read_async` wraps the buffer's own memory). Such bytes change when a
/// later kernel writes that buffer (the pass decodes the next window into it while the values
/// of this one are still being written out), so they are copied before they leave the pass.
pub(crate) fn reads_alias_device(client: &Client) -> bool {
    client.name() == "cpu"
}

/// Reads rows of device buffers back, part of each row where the runtime can (a pitched copy:
/// CUDA, HIP), else whole rows cut on the host (wgpu refuses strided reads; it is asked once).
/// CubeCL's cpu runtime neither copies pitched nor refuses: it hands back the whole region the
/// rows span (its memory, uncopied), and the rows are cut from that on the host.
#[derive(Debug, Default)]
pub(crate) struct RowReader {
    /// The runtime refused a pitched read: whole rows from now on.
    whole_rows: bool,
}

impl RowReader {
    /// A decoded window's values (`channels × samples`), read back.
    pub(crate) fn read_decoded(&mut self, decoded: &DecodedWindow<'_>) -> DspResult<HostValues> {
        let samples = decoded.samples();
        self.read_rows(
            decoded.client(),
            decoded.handle(),
            decoded.channels(),
            samples,
            0..samples,
        )
    }

    /// Samples `part` of each of `channels` rows of `stride` `f32` at the start of `handle`,
    /// read back channel-major (`channels × part.len()`).
    pub(crate) fn read_rows(
        &mut self,
        client: &Client,
        handle: &Handle,
        channels: usize,
        stride: usize,
        part: Range<usize>,
    ) -> DspResult<HostValues> {
        let len = part.len();
        if channels == 0 || len == 0 {
            return Ok(HostValues::Copied(Vec::new()));
        }
        let whole = (channels * stride * 4) as u64;
        if part.end > stride || whole > handle.size_in_used() {
            return Err(DspError::BufferUnderrun {
                what: format!(
                    "device buffer read back ({channels} rows of {stride} f32, samples {}..{})",
                    part.start, part.end
                ),
                needed: whole as usize,
                available: handle.size_in_used() as usize,
            });
        }
        if len == stride {
            return read_span(client, handle, channels * stride);
        }
        if !self.whole_rows {
            // From the first wanted value to the last: rows of `len` every `stride`.
            let first = (part.start * 4) as u64;
            let span = (((channels - 1) * stride + part.end) * 4) as u64;
            let region = handle
                .clone()
                .offset_start(first)
                .offset_end(handle.size_in_used() - span);
            let descriptor = CopyDescriptor::new(
                region.binding(),
                [channels, len].into(),
                [stride, 1].into(),
                4,
            );
            match client.read_tensor(vec![descriptor]) {
                Ok(mut bytes) if bytes.len() == 1 => {
                    let bytes = bytes.remove(0);
                    // CubeCL's cpu runtime answers a pitched read with the whole region, its
                    // pitch ignored (a zero-copy view of the buffer): cut the rows from it.
                    if bytes.len() as u64 == span - first && channels > 1 {
                        return Ok(cut_rows(&bytes, channels, stride, len));
                    }
                    if bytes.len() == channels * len * 4 {
                        return Ok(HostValues::of(client, bytes, channels * len));
                    }
                    return Err(DspError::BufferUnderrun {
                        what: format!(
                            "a pitched read of {channels} rows of {len} f32 every {stride} \
                             (bytes the runtime gave back)"
                        ),
                        needed: channels * len * 4,
                        available: bytes.len(),
                    });
                }
                // Refused (not failed): the runtime copies only contiguous spans.
                _ => self.whole_rows = true,
            }
        }
        let all = read_span(client, handle, channels * stride)?;
        let mut values = Vec::with_capacity(channels * len);
        for row in all.chunks_exact(stride) {
            values.extend_from_slice(&row[part.clone()]);
        }
        Ok(HostValues::Copied(values))
    }
}

/// `channels` rows of `len` values every `stride` from the start of `bytes` (little-endian
/// `f32`), copied channel-major.
fn cut_rows(bytes: &[u8], channels: usize, stride: usize, len: usize) -> HostValues {
    let mut values = Vec::with_capacity(channels * len);
    for c in 0..channels {
        let row = &bytes[c * stride * 4..(c * stride + len) * 4];
        values.extend(
            row.chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        );
    }
    HostValues::Copied(values)
}

/// The first `len` `f32` of `handle`, read back.
fn read_span(client: &Client, handle: &Handle, len: usize) -> DspResult<HostValues> {
    let bytes_len = len as u64 * 4;
    let trimmed = handle.clone().offset_end(handle.size_in_used() - bytes_len);
    let bytes = client.read_one(trimmed).map_err(|e| DspError::Io {
        message: format!("device error while reading a buffer back: {e}"),
        path: None,
    })?;
    Ok(HostValues::of(client, bytes, len))
}
