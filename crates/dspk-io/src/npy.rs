//! A checked reader of NumPy `.npy` files of one dimension: the header is parsed, never trusted.
//!
//! The facts used, from NumPy's format specification (`numpy.lib.format`): the file opens with
//! the magic `\x93NUMPY`, a major and minor version byte (1.0, 2.0 or 3.0), the header length
//! (little-endian `u16` in 1.0, `u32` in 2.0 and 3.0), then the header: a Python dict literal
//! with exactly the keys `descr`, `fortran_order` and `shape` (Latin-1 text in 1.0 and 2.0,
//! UTF-8 in 3.0), padded with spaces and ended by a newline. The data follows the header.
//!
//! What is checked: every byte of the header grammar, the dtype against the one expected, the
//! shape (`(n,)`, or `(n, 1)` which is the same column), and that the file holds exactly the
//! `n` values the header states: a truncated file, or one with bytes after the data, is an
//! error naming the file.

use std::path::Path;

use dspk_types::DspResult;

use crate::mapped::MappedFile;
use crate::raw::file_error;

/// The NumPy magic string.
const MAGIC: &[u8; 6] = b"\x93NUMPY";
/// The longest header accepted: NumPy itself refuses headers over 10 000 bytes unless told
/// otherwise; a dict of three keys is under 200.
pub const MAX_NPY_HEADER_BYTES: usize = 65_536;

/// The element types dspk reads from `.npy` files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NpyDtype {
    /// Little-endian `int64` (`<i8`).
    I64,
    /// Little-endian `float64` (`<f8`).
    F64,
}

impl NpyDtype {
    /// The `descr` NumPy writes for it.
    pub fn descr(&self) -> &'static str {
        match self {
            NpyDtype::I64 => "<i8",
            NpyDtype::F64 => "<f8",
        }
    }

    /// The NumPy name (`int64`, `float64`).
    pub fn name(&self) -> &'static str {
        match self {
            NpyDtype::I64 => "int64",
            NpyDtype::F64 => "float64",
        }
    }
}

/// A parsed `.npy` header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NpyHeader {
    /// `(major, minor)`: `(1, 0)`, `(2, 0)` or `(3, 0)`.
    pub version: (u8, u8),
    /// The dtype string as written (`<i8`).
    pub descr: String,
    /// Whether the data is in Fortran order.
    pub fortran_order: bool,
    /// The shape, one entry per dimension (empty for a scalar).
    pub shape: Vec<u64>,
    /// Where the data starts, in bytes from the start of the file.
    pub data_offset: u64,
}

impl NpyHeader {
    /// Parses the header at the start of `bytes` (the whole file or at least its header).
    /// Never panics; any malformed header is an error describing what is wrong (without a
    /// path: [`NpyArray::open`] adds it).
    pub fn parse(bytes: &[u8]) -> Result<Self, String> {
        if bytes.len() < MAGIC.len() || &bytes[..MAGIC.len()] != MAGIC {
            return Err("not a .npy file (no \\x93NUMPY magic)".into());
        }
        let version = match bytes.get(6..8) {
            Some(&[major, minor]) => (major, minor),
            _ => return Err("truncated header: no version bytes".into()),
        };
        let (len_bytes, utf8) = match version {
            (1, 0) => (2, false),
            (2, 0) | (3, 0) => (4, version.0 == 3),
            (major, minor) => {
                return Err(format!(
                    "unsupported .npy version {major}.{minor} (supported: 1.0, 2.0, 3.0)"
                ));
            }
        };
        let start = 8 + len_bytes;
        let header_len = match bytes.get(8..start) {
            Some(&[a, b]) => usize::from(u16::from_le_bytes([a, b])),
            Some(&[a, b, c, d]) => usize::try_from(u32::from_le_bytes([a, b, c, d]))
                .map_err(|_| "header length does not fit in memory".to_string())?,
            _ => return Err("truncated header: no header length".into()),
        };
        if header_len > MAX_NPY_HEADER_BYTES {
            return Err(format!(
                "header length {header_len} bytes is over the {MAX_NPY_HEADER_BYTES} accepted"
            ));
        }
        let end = start + header_len;
        let raw = bytes.get(start..end).ok_or_else(|| {
            format!(
                "truncated header: it states {header_len} bytes but the file has {} after the length field",
                bytes.len().saturating_sub(start)
            )
        })?;
        let text: String = if utf8 {
            std::str::from_utf8(raw)
                .map_err(|_| "header is not UTF-8 text".to_string())?
                .to_string()
        } else {
            // Latin-1: every byte is the code point of the same value.
            raw.iter().map(|&b| char::from(b)).collect()
        };
        if !text.ends_with('\n') {
            return Err("header does not end with a newline".into());
        }
        let dict = DictParser::new(&text).parse()?;
        Ok(Self {
            version,
            descr: dict.descr,
            fortran_order: dict.fortran_order,
            shape: dict.shape,
            data_offset: end as u64,
        })
    }
}

/// The three values of a header dict.
struct HeaderDict {
    descr: String,
    fortran_order: bool,
    shape: Vec<u64>,
}

/// A parser of the header's dict literal: `{'descr': '<i8', 'fortran_order': False,
/// 'shape': (3,), }` (keys in any order, each exactly once, trailing commas allowed).
struct DictParser<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
}

impl<'a> DictParser<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            chars: text.chars().peekable(),
        }
    }

    fn skip_space(&mut self) {
        while self.chars.next_if(|c| c.is_ascii_whitespace()).is_some() {}
    }

    fn expect(&mut self, want: char) -> Result<(), String> {
        self.skip_space();
        match self.chars.next() {
            Some(c) if c == want => Ok(()),
            Some(c) => Err(format!("header dict: expected '{want}', found '{c}'")),
            None => Err(format!("header dict: expected '{want}', found the end")),
        }
    }

    /// `'…'` or `"…"` without escapes (NumPy writes none in these values).
    fn string(&mut self) -> Result<String, String> {
        self.skip_space();
        let quote = match self.chars.next() {
            Some(q @ ('\'' | '"')) => q,
            Some(c) => {
                return Err(format!(
                    "header dict: expected a quoted string, found '{c}'"
                ));
            }
            None => return Err("header dict: expected a quoted string, found the end".into()),
        };
        let mut s = String::new();
        loop {
            match self.chars.next() {
                Some(c) if c == quote => return Ok(s),
                Some('\\') => {
                    return Err("header dict: escapes in strings are not supported".into());
                }
                Some(c) => s.push(c),
                None => return Err("header dict: unterminated string".into()),
            }
        }
    }

    fn word(&mut self) -> String {
        self.skip_space();
        let mut s = String::new();
        while let Some(c) = self
            .chars
            .next_if(|c| c.is_ascii_alphanumeric() || *c == '_')
        {
            s.push(c);
        }
        s
    }

    fn bool(&mut self) -> Result<bool, String> {
        match self.word().as_str() {
            "True" => Ok(true),
            "False" => Ok(false),
            w => Err(format!(
                "header dict: fortran_order is '{w}', not True or False"
            )),
        }
    }

    /// `()`, `(3,)`, `(3, 1)`, `(3, 1,)`.
    fn shape(&mut self) -> Result<Vec<u64>, String> {
        self.expect('(')?;
        let mut dims = Vec::new();
        loop {
            self.skip_space();
            if self.chars.next_if_eq(&')').is_some() {
                return Ok(dims);
            }
            let w = self.word();
            let n: u64 = w
                .parse()
                .map_err(|_| format!("header dict: shape entry '{w}' is not a count"))?;
            dims.push(n);
            if dims.len() > 32 {
                return Err("header dict: shape has more than 32 dimensions".into());
            }
            self.skip_space();
            match self.chars.next() {
                Some(',') => {}
                Some(')') => {
                    if dims.len() == 1 {
                        return Err("header dict: a one-entry shape needs its comma, (n,)".into());
                    }
                    return Ok(dims);
                }
                Some(c) => {
                    return Err(format!(
                        "header dict: shape: expected ',' or ')', found '{c}'"
                    ));
                }
                None => return Err("header dict: unterminated shape".into()),
            }
        }
    }

    fn parse(mut self) -> Result<HeaderDict, String> {
        self.expect('{')?;
        let (mut descr, mut fortran, mut shape) = (None, None, None);
        loop {
            self.skip_space();
            if self.chars.next_if_eq(&'}').is_some() {
                break;
            }
            let key = self.string()?;
            self.expect(':')?;
            let dup = match key.as_str() {
                "descr" => descr.replace(self.string()?).is_some(),
                "fortran_order" => fortran.replace(self.bool()?).is_some(),
                "shape" => shape.replace(self.shape()?).is_some(),
                other => return Err(format!("header dict: unexpected key '{other}'")),
            };
            if dup {
                return Err(format!("header dict: key '{key}' twice"));
            }
            self.skip_space();
            match self.chars.next() {
                Some(',') => {}
                Some('}') => break,
                Some(c) => return Err(format!("header dict: expected ',' or '}}', found '{c}'")),
                None => return Err("header dict: unterminated dict".into()),
            }
        }
        self.skip_space();
        if let Some(c) = self.chars.next() {
            return Err(format!("header: '{c}' after the dict"));
        }
        let missing = |k: &str| format!("header dict: missing key '{k}'");
        Ok(HeaderDict {
            descr: descr.ok_or_else(|| missing("descr"))?,
            fortran_order: fortran.ok_or_else(|| missing("fortran_order"))?,
            shape: shape.ok_or_else(|| missing("shape"))?,
        })
    }
}

/// A one-dimensional `.npy` array of a known dtype, memory-mapped and checked: built only by
/// [`NpyArray::open`], which checks the header, the dtype, the shape and the file's size, so
/// every element index below `len()` lies inside the mapping.
#[derive(Debug)]
pub struct NpyArray {
    map: MappedFile,
    header: NpyHeader,
    dtype: NpyDtype,
    len: u64,
}

impl NpyArray {
    /// Opens `path` as a one-dimensional array of `dtype` (shape `(n,)` or `(n, 1)`).
    ///
    /// Errors name the file and say what is wrong: a missing file, a malformed or truncated
    /// header, another dtype, another shape, or a size that disagrees with the header.
    pub fn open(path: &Path, dtype: NpyDtype) -> DspResult<Self> {
        let map = match MappedFile::open(path) {
            Ok(m) => m,
            Err(_) if !path.exists() => return Err(file_error(path, "missing file")),
            Err(e) => return Err(e),
        };
        let header = NpyHeader::parse(map.bytes()).map_err(|e| file_error(path, e))?;
        let len = check_header(&header, dtype, map.bytes().len() as u64)
            .map_err(|e| file_error(path, e))?;
        Ok(Self {
            map,
            header,
            dtype,
            len,
        })
    }

    /// The number of elements.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The parsed header.
    pub fn header(&self) -> &NpyHeader {
        &self.header
    }

    /// The file.
    pub fn path(&self) -> &Path {
        self.map.path()
    }

    fn element(&self, i: u64) -> Option<[u8; 8]> {
        if i >= self.len {
            return None;
        }
        // In range: `open` checked that the file holds `len` elements after the header.
        let at = (self.header.data_offset + i * 8) as usize;
        self.map.bytes().get(at..at + 8)?.try_into().ok()
    }

    /// Element `i` of an `int64` array (`None` past the end or for another dtype).
    pub fn get_i64(&self, i: u64) -> Option<i64> {
        (self.dtype == NpyDtype::I64)
            .then(|| self.element(i).map(i64::from_le_bytes))
            .flatten()
    }

    /// Element `i` of a `float64` array (`None` past the end or for another dtype).
    pub fn get_f64(&self, i: u64) -> Option<f64> {
        (self.dtype == NpyDtype::F64)
            .then(|| self.element(i).map(f64::from_le_bytes))
            .flatten()
    }

    /// Every element of an `int64` array, in order (empty for another dtype).
    pub fn iter_i64(&self) -> impl Iterator<Item = i64> + '_ {
        let data = if self.dtype == NpyDtype::I64 {
            let start = self.header.data_offset as usize;
            &self.map.bytes()[start..start + self.len as usize * 8]
        } else {
            &[]
        };
        data.chunks_exact(8)
            .map(|c| i64::from_le_bytes(c.try_into().expect("chunks_exact(8) yields 8 bytes")))
    }
}

/// Checks a header against the expected dtype and a file of `file_len` bytes; returns the
/// element count.
fn check_header(h: &NpyHeader, dtype: NpyDtype, file_len: u64) -> Result<u64, String> {
    if h.descr != dtype.descr() {
        return Err(format!(
            "dtype '{}' where {} ('{}') is expected",
            h.descr,
            dtype.name(),
            dtype.descr()
        ));
    }
    let len = match h.shape.as_slice() {
        [n] | [n, 1] => *n,
        other => {
            return Err(format!(
                "shape {other:?} where a one-dimensional array (n,) is expected"
            ));
        }
    };
    let data = file_len.saturating_sub(h.data_offset);
    let needed = len
        .checked_mul(8)
        .ok_or_else(|| format!("shape ({len},) is too large"))?;
    if data != needed {
        return Err(format!(
            "the header states {len} values ({needed} bytes) but the file holds {data} bytes of data ({})",
            if data < needed {
                "truncated"
            } else {
                "bytes after the data"
            }
        ));
    }
    Ok(len)
}
