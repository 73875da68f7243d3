//! The `Client::write` path: where dspk has no staging buffers of its own (other runtimes,
//! devices an embedding application registered), a window goes up through CubeCL's writes,
//! in pieces.

use cubecl::bytes::Bytes;
use cubecl::client::Client;
use cubecl::server::Handle;
use dspk_types::{DspError, DspResult};

use super::staging::{COPY_ALIGN, lcm};

/// Bytes per `Client::write` (larger writes were measured to collapse).
const PIECE_BYTES: usize = 8 << 20;

/// Runs `during`, then fills `len` bytes piece by piece through `fill` and writes each to its
/// place in `dst` (see [`Uploader::upload`](super::Uploader::upload); `len` is not 0).
pub(super) fn upload<F, D>(
    client: &Client,
    dst: &Handle,
    len: usize,
    align: usize,
    fill: F,
    during: D,
) -> DspResult<()>
where
    F: Fn(usize, &mut [u8]) -> DspResult<()> + Sync,
    D: FnOnce() -> DspResult<()>,
{
    during()?;
    let padded = (len as u64).next_multiple_of(COPY_ALIGN);
    let total = dst.size_in_used();
    if total < padded {
        return Err(DspError::BufferOverrun {
            what: "device input buffer".into(),
            capacity: total as usize,
            needed: padded as usize,
        });
    }
    // Pieces of whole `align` units that also start at 4-byte offsets (writes must).
    let unit = lcm(align.max(1), COPY_ALIGN as usize);
    let piece_len = (PIECE_BYTES / unit).max(1) * unit;
    let mut offset = 0usize;
    while offset < len {
        let n = piece_len.min(len - offset);
        let mut piece = vec![0u8; (n as u64).next_multiple_of(COPY_ALIGN) as usize];
        fill(offset, &mut piece[..n])?;
        let end = offset as u64 + piece.len() as u64;
        let target = dst
            .clone()
            .offset_start(offset as u64)
            .offset_end(total - end);
        client.write(&target, Bytes::from_bytes_vec(piece));
        offset += n;
    }
    Ok(())
}
