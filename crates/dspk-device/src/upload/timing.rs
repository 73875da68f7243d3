//! Timing dspk's own submissions: a recorded command buffer submitted and waited for, again
//! and again, for the bandwidth one window alone reaches (`Uploader::time`).

use std::time::Duration;

use cubecl::wgpu::{WgpuResource, wgpu};
use dspk_types::{ComputeTarget, DspResult};

use super::memory::Slot;
use crate::failure::failed;

/// [`time_submissions`] of the copies of the first `len` bytes (a multiple of 4) out of
/// `slots` into `target`, one slot's worth (`slot_bytes`) per copy, in the order an upload
/// queues them.
pub(super) fn time_copies(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    slots: &[Slot],
    slot_bytes: u64,
    target: &WgpuResource,
    len: u64,
    iters: usize,
) -> DspResult<(Duration, wgpu::SubmissionIndex)> {
    time_submissions(device, queue, iters, |encoder| {
        let mut done = 0u64;
        for slot in slots.iter().cycle() {
            if done >= len {
                break;
            }
            let n = slot_bytes.min(len - done);
            encoder.copy_buffer_to_buffer(&slot.buffer, 0, &target.buffer, target.offset + done, n);
            done += n;
        }
        Ok(())
    })
}

/// Records `record` into a fresh command encoder, submits it and waits for the device,
/// `iters` + 1 times (at least twice): the median time of all but the first (a warm-up), and
/// the last submission.
pub(super) fn time_submissions(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    iters: usize,
    mut record: impl FnMut(&mut wgpu::CommandEncoder) -> DspResult<()>,
) -> DspResult<(Duration, wgpu::SubmissionIndex)> {
    let rounds = iters.max(1) + 1;
    let mut times = Vec::with_capacity(rounds);
    let mut last = None;
    for _ in 0..rounds {
        let started = std::time::Instant::now();
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("dspk timing"),
        });
        record(&mut encoder)?;
        let index = queue.submit([encoder.finish()]);
        device
            .poll(wgpu::PollType::Wait {
                submission_index: Some(index.clone()),
                timeout: None,
            })
            .map_err(|e| failed(ComputeTarget::Wgpu, "waiting for the device failed", e))?;
        times.push(started.elapsed());
        last = Some(index);
    }
    times.remove(0);
    times.sort();
    let last = last.expect("at least two submissions were timed");
    Ok((times[times.len() / 2], last))
}
