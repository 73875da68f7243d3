//! Pictures as PNG data URIs: an 8-bit palette image, zlib-compressed, base64-encoded, so that a
//! heat map of 384 channels is one `<image>` of a few hundred kilobytes, not 100 000 SVG
//! rectangles.

use std::io::Write as _;

use flate2::Compression;
use flate2::write::ZlibEncoder;

/// The PNG of a `width × height` image whose pixel `(x, y)` is `palette[indices[y·width + x]]`.
///
/// # Panics
/// Never for `indices.len() == width·height` and a palette of 1 to 256 colours (the callers
/// make both); otherwise it is a bug, and `debug_assert!` says so.
pub fn palette_png(width: u32, height: u32, indices: &[u8], palette: &[[u8; 3]]) -> Vec<u8> {
    debug_assert_eq!(indices.len(), width as usize * height as usize);
    debug_assert!((1..=256).contains(&palette.len()));
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut header = Vec::with_capacity(13);
    header.extend_from_slice(&width.to_be_bytes());
    header.extend_from_slice(&height.to_be_bytes());
    // Bit depth 8, colour type 3 (palette), deflate, filter method 0, no interlace.
    header.extend_from_slice(&[8, 3, 0, 0, 0]);
    chunk(&mut out, b"IHDR", &header);
    let colours: Vec<u8> = palette.iter().flatten().copied().collect();
    chunk(&mut out, b"PLTE", &colours);
    // Every scanline with filter type 0 (none): palette indices do not predict well.
    let mut raw = Vec::with_capacity(indices.len() + height as usize);
    for row in indices.chunks(width.max(1) as usize) {
        raw.push(0);
        raw.extend_from_slice(row);
    }
    let mut z = ZlibEncoder::new(Vec::new(), Compression::new(6));
    z.write_all(&raw).expect("writing to a Vec cannot fail");
    let data = z.finish().expect("writing to a Vec cannot fail");
    chunk(&mut out, b"IDAT", &data);
    chunk(&mut out, b"IEND", &[]);
    out
}

/// Appends one PNG chunk: length, type, data, CRC-32 of type and data.
fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let mut crc = flate2::Crc::new();
    crc.update(kind);
    crc.update(data);
    out.extend_from_slice(&crc.sum().to_be_bytes());
}

/// `data:image/png;base64,…` of `png`.
pub fn data_uri(png: &[u8]) -> String {
    format!("data:image/png;base64,{}", base64(png))
}

/// Standard base64 (RFC 4648, with padding).
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for group in bytes.chunks(3) {
        let b = [
            group[0],
            *group.get(1).unwrap_or(&0),
            *group.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= group.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::io::Read as _;

    use super::*;

    #[test]
    fn base64_of_rfc_4648_vectors() {
        // RFC 4648 section 10.
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), coded);
        }
    }

    /// The chunks of a PNG: (type, data), each CRC checked.
    fn chunks(png: &[u8]) -> Vec<([u8; 4], Vec<u8>)> {
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        let mut at = 8;
        let mut out = Vec::new();
        while at < png.len() {
            let len = u32::from_be_bytes(png[at..at + 4].try_into().unwrap()) as usize;
            let kind: [u8; 4] = png[at + 4..at + 8].try_into().unwrap();
            let data = png[at + 8..at + 8 + len].to_vec();
            let crc = u32::from_be_bytes(png[at + 8 + len..at + 12 + len].try_into().unwrap());
            let mut c = flate2::Crc::new();
            c.update(&kind);
            c.update(&data);
            assert_eq!(c.sum(), crc);
            out.push((kind, data));
            at += 12 + len;
        }
        out
    }

    #[test]
    fn a_palette_image_round_trips() {
        let (w, h) = (5u32, 3u32);
        let indices: Vec<u8> = (0..15).map(|i| (i * 7 % 4) as u8).collect();
        let palette = [[0, 0, 0], [255, 0, 0], [0, 255, 0], [0, 0, 255]];
        let png = palette_png(w, h, &indices, &palette);
        let parts = chunks(&png);
        let kinds: Vec<&[u8; 4]> = parts.iter().map(|(k, _)| k).collect();
        assert_eq!(kinds, [b"IHDR", b"PLTE", b"IDAT", b"IEND"]);
        assert_eq!(parts[0].1, [0, 0, 0, 5, 0, 0, 0, 3, 8, 3, 0, 0, 0]);
        assert_eq!(parts[1].1, palette.concat());
        let mut raw = Vec::new();
        flate2::read::ZlibDecoder::new(&parts[2].1[..])
            .read_to_end(&mut raw)
            .unwrap();
        let rows: Vec<&[u8]> = raw.chunks(6).collect();
        assert_eq!(rows.len(), 3);
        for (y, row) in rows.iter().enumerate() {
            assert_eq!(row[0], 0);
            assert_eq!(&row[1..], &indices[y * 5..y * 5 + 5]);
        }
    }
}
