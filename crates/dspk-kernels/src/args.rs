//! Safe kernel arguments over device buffers, with the length checked against the buffer.

use cubecl::ir::{ElemType, FloatKind, UIntKind};
use cubecl::prelude::*;
use cubecl::server::Handle;
use cubecl::std::tensor::TensorHandle;
use dspk_types::{DspError, DspResult};

/// Element types dspk kernels bind buffers as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Elem {
    F32,
    U32,
}

impl Elem {
    fn ty(self) -> ElemType {
        match self {
            Elem::F32 => ElemType::Float(FloatKind::F32),
            Elem::U32 => ElemType::UInt(UIntKind::U32),
        }
    }
}

/// A `&[f32]` kernel argument over the first `len` elements of `handle`; refused when the
/// buffer holds fewer.
pub fn f32_arg(handle: &Handle, len: usize) -> DspResult<BufferArg> {
    buffer_arg(handle, len, Elem::F32)
}

/// A `&[u32]` kernel argument over the first `len` elements of `handle`; refused when the
/// buffer holds fewer.
pub fn u32_arg(handle: &Handle, len: usize) -> DspResult<BufferArg> {
    buffer_arg(handle, len, Elem::U32)
}

fn buffer_arg(handle: &Handle, len: usize, elem: Elem) -> DspResult<BufferArg> {
    let needed = (len as u64).saturating_mul(4);
    let available = handle.size_in_used();
    if needed > available {
        return Err(DspError::BufferOverrun {
            what: "device buffer bound to a kernel (bytes)".into(),
            capacity: available as usize,
            needed: needed as usize,
        });
    }
    // `TensorHandle` is cubecl's safe route to a binding; the length was checked above, so the
    // kernel can never be told the buffer is longer than it is.
    let tensor = TensorHandle::new(handle.clone(), [len], [1], elem.ty());
    Ok(tensor.into_arg().into_buffer_arg())
}
