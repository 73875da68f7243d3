//! A stage's host parameters (taps, weights, index lists) as a device buffer: the one upload
//! every stage's constructor uses.

use cubecl::client::Client;
use cubecl::server::Handle;

/// A device buffer of little-endian 4-byte `words` (`f32` or `u32` values' `to_le_bytes`), at
/// least one word long: an empty list binds a buffer no unit reads.
pub(crate) fn upload(client: &Client, words: impl IntoIterator<Item = [u8; 4]>) -> Handle {
    let mut bytes: Vec<u8> = words.into_iter().flatten().collect();
    if bytes.is_empty() {
        bytes = vec![0; 4];
    }
    client.create_from_slice(&bytes)
}
