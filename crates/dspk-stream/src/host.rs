//! Decoded windows back on the host, in order: the building block of `convert` (decode on the
//! device, write with a host writer).

use dspk_types::{DspResult, HaloWindow};

use crate::pass::{DevicePass, Flow, PassReport};

impl DevicePass<'_> {
    /// [`run`](Self::run), with each decoded window read back to the host: `on_window` gets
    /// the window and its values (channel-major, `channels × window.read_len()`), in window
    /// order, and may stop the pass.
    pub fn run_to_host(
        self,
        mut on_window: impl FnMut(&HaloWindow, &[f32]) -> DspResult<Flow>,
    ) -> DspResult<PassReport> {
        self.run(|window, decoded| on_window(window, &decoded.to_vec()?))
    }
}
