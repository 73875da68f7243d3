//! Staging kernels: WGSL compute pipelines that read a filled staging buffer in place, compiled
//! once per device and source ([`StagingKernel`]), launched over a window ([`StagingLaunch`]),
//! and the checks a launch passes before anything is submitted.

use cubecl::client::Client;
use cubecl::server::Handle;
use dspk_types::{DspError, DspResult};

#[cfg(feature = "wgpu")]
pub(super) use pipeline::{STAGING_KERNEL_ALIGN, compile, record};

/// A compute kernel that reads a filled staging buffer in place: the window crosses the bus
/// once, pulled by the kernel itself, with no copy into a device input buffer first (see
/// [`Destination::Kernel`](super::Destination::Kernel)). Made by
/// [`Uploader::staging_kernel`](super::Uploader::staging_kernel) or
/// [`compile_staging_kernel_for`]; its pipeline is compiled once per device and source and kept.
///
/// Its WGSL declares, in bind group 0: binding 0, `var<storage, read>` `array<u32>` of launch
/// parameters; binding 1, `var<storage, read>` over the staging bytes (the window, zero to 15
/// stale bytes after it up to a multiple of 16); bindings 2 and on, the device buffers of the
/// launch, in order.
pub struct StagingKernel {
    #[cfg_attr(
        not(feature = "wgpu"),
        expect(dead_code, reason = "without wgpu no kernel is compiled or launched")
    )]
    compiled: pipeline::Compiled,
    /// Device buffers a launch binds.
    buffers: usize,
    /// The name errors about the kernel give.
    pub(super) label: String,
}

impl std::fmt::Debug for StagingKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StagingKernel")
            .field("label", &self.label)
            .field("buffers", &self.buffers)
            .finish_non_exhaustive()
    }
}

/// The launch parameters a [`StagingKernel`] takes at most (`u32` words).
pub const STAGING_KERNEL_PARAMS: usize = 16;

/// One launch of a [`StagingKernel`] over a filled staging buffer.
#[derive(Debug, Clone, Copy)]
pub struct StagingLaunch<'a> {
    /// The kernel.
    pub kernel: &'a StagingKernel,
    /// The device buffers bound after the staging buffer (bindings 2, 3, ...).
    pub buffers: &'a [Handle],
    /// The launch parameters (binding 0), at most [`STAGING_KERNEL_PARAMS`].
    pub params: &'a [u32],
    /// Workgroups along x.
    pub workgroups: u32,
}

/// Compiles a [`StagingKernel`] for `client`'s device (see
/// [`Uploader::staging_kernel`](super::Uploader::staging_kernel)) without an uploader, e.g. on
/// a helper thread while an uploader pins its staging memory; `None` where the client is not a
/// wgpu device dspk opened. Whether uploads can run it is the uploader's
/// [`Uploader::runs_staging_kernels`](super::Uploader::runs_staging_kernels).
pub fn compile_staging_kernel_for(
    client: &Client,
    label: &str,
    wgsl: &str,
    entry: &str,
    buffers: usize,
) -> DspResult<Option<StagingKernel>> {
    #[cfg(feature = "wgpu")]
    if let Some(handles) = crate::bridge::handles_of(client) {
        return compile(&handles.device, label, wgsl, entry, buffers).map(Some);
    }
    let _ = (client, label, wgsl, entry, buffers);
    Ok(None)
}

/// Whether the pipeline of `wgsl`'s `entry` is compiled and kept for `client`'s device (the
/// next [`compile_staging_kernel_for`] of it there takes it, not compiling again); `false`
/// where the client is not a wgpu device dspk opened.
pub fn staging_kernel_kept(client: &Client, wgsl: &str, entry: &str) -> bool {
    #[cfg(feature = "wgpu")]
    if let Some(handles) = crate::bridge::handles_of(client) {
        return crate::upload::kept::has_kernel(&handles.device, wgsl, entry);
    }
    let _ = (client, wgsl, entry);
    false
}

/// Refuses a launch whose buffers do not match its kernel's, or with too many parameters.
pub(super) fn check_launch(launch: &StagingLaunch<'_>) -> DspResult<()> {
    if launch.buffers.len() != launch.kernel.buffers {
        return Err(DspError::shape(
            "device buffers of a staging kernel launch",
            launch.kernel.buffers,
            launch.buffers.len(),
        ));
    }
    if launch.params.len() > STAGING_KERNEL_PARAMS {
        return Err(DspError::BufferOverrun {
            what: format!("launch parameters of the kernel {}", launch.kernel.label),
            capacity: STAGING_KERNEL_PARAMS,
            needed: launch.params.len(),
        });
    }
    Ok(())
}

/// Refuses a `len`-byte window for a staging buffer of `capacity` bytes.
pub(super) fn check_fits(launch: &StagingLaunch<'_>, len: usize, capacity: u64) -> DspResult<()> {
    if len as u64 > capacity {
        return Err(DspError::BufferOverrun {
            what: format!(
                "staging buffer read in place by the kernel {}",
                launch.kernel.label
            ),
            capacity: capacity as usize,
            needed: len,
        });
    }
    Ok(())
}

/// Without wgpu no staging kernel is ever compiled: the pipeline type has no values.
#[cfg(not(feature = "wgpu"))]
mod pipeline {
    /// No value.
    pub(super) enum Compiled {}
}

/// The wgpu side: compiling the pipeline (or taking it from what is kept), recording a launch.
#[cfg(feature = "wgpu")]
mod pipeline {
    use cubecl::wgpu::{WgpuResource, wgpu};
    use dspk_types::{DspError, DspResult};

    use super::{STAGING_KERNEL_PARAMS, StagingKernel, StagingLaunch};
    use crate::upload::kept;

    /// Alignment of the staging bytes a [`StagingKernel`] sees (its WGSL may read them as
    /// `vec4<u32>`).
    pub(in crate::upload) const STAGING_KERNEL_ALIGN: u64 = 16;

    /// A kernel's pipeline (shared with every kernel of its source on the device) and its own
    /// parameter buffer.
    pub(super) struct Compiled {
        pipeline: wgpu::ComputePipeline,
        layout: wgpu::BindGroupLayout,
        params: wgpu::Buffer,
    }

    /// Compiles a [`StagingKernel`] on `device`; the device's validation message is the error.
    pub(in crate::upload) fn compile(
        device: &wgpu::Device,
        label: &str,
        wgsl: &str,
        entry: &str,
        buffers: usize,
    ) -> DspResult<StagingKernel> {
        // One at a time in the process (see `kept::compiling`): a compile in flight for this
        // device is then found kept.
        let _one_at_a_time = kept::compiling();
        let cached = kept::kernel(device, wgsl, entry);
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let (pipeline, layout) = match cached {
            Some(found) => found,
            None => {
                let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                    label: Some(label),
                    source: wgpu::ShaderSource::Wgsl(wgsl.into()),
                });
                let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: Some(label),
                    layout: None,
                    module: &module,
                    entry_point: Some(entry),
                    compilation_options: Default::default(),
                    cache: None,
                });
                let layout = pipeline.get_bind_group_layout(0);
                (pipeline, layout)
            }
        };
        // Each kernel has parameters of its own: two passes may launch the same pipeline at once.
        let params = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: (STAGING_KERNEL_PARAMS * 4) as u64,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        if let Some(error) = resolve_now(device, scope.pop()) {
            return Err(DspError::config(format!(
                "the device refused the kernel {label}: {error}"
            )));
        }
        kept::keep_kernel(device, wgsl, entry, &pipeline, &layout);
        Ok(StagingKernel {
            compiled: Compiled {
                pipeline,
                layout,
                params,
            },
            buffers,
            label: label.to_string(),
        })
    }

    /// The value of a wgpu future that native wgpu resolves at once (polling the device while
    /// it is not ready, for good measure).
    fn resolve_now<T>(device: &wgpu::Device, future: impl std::future::Future<Output = T>) -> T {
        let mut future = std::pin::pin!(future);
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        loop {
            if let std::task::Poll::Ready(value) = future.as_mut().poll(&mut cx) {
                return value;
            }
            let _ = device.poll(wgpu::PollType::Poll);
            std::thread::yield_now();
        }
    }

    /// Records `launch` over the first `bytes` of `staging` into `encoder`, its parameters
    /// written ahead of the submission.
    pub(in crate::upload) fn record(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
        launch: &StagingLaunch<'_>,
        staging: &wgpu::Buffer,
        bytes: u64,
        targets: &[WgpuResource],
    ) -> DspResult<()> {
        let kernel = launch.kernel;
        let compiled = &kernel.compiled;
        let mut params = [0u8; STAGING_KERNEL_PARAMS * 4];
        for (word, value) in params.chunks_exact_mut(4).zip(launch.params) {
            word.copy_from_slice(&value.to_le_bytes());
        }
        // Ordered before this submission, after the earlier ones that read the parameters.
        queue.write_buffer(&compiled.params, 0, &params);
        let size = |n: u64| {
            std::num::NonZeroU64::new(n).ok_or_else(|| {
                DspError::config(format!(
                    "an empty buffer bound to the kernel {}",
                    kernel.label
                ))
            })
        };
        let mut entries = vec![
            wgpu::BindGroupEntry {
                binding: 0,
                resource: compiled.params.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                    buffer: staging,
                    offset: 0,
                    size: Some(size(bytes)?),
                }),
            },
        ];
        for (k, t) in targets.iter().enumerate() {
            entries.push(wgpu::BindGroupEntry {
                binding: 2 + k as u32,
                resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                    buffer: &t.buffer,
                    offset: t.offset,
                    size: Some(size(t.size)?),
                }),
            });
        }
        // A kernel whose WGSL binds other buffers than its launch gives is an error, not a panic.
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(&kernel.label),
            layout: &compiled.layout,
            entries: &entries,
        });
        if let Some(error) = resolve_now(device, scope.pop()) {
            return Err(DspError::config(format!(
                "the buffers of a launch of the kernel {} do not match its bindings: {error}",
                kernel.label
            )));
        }
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some(&kernel.label),
            timestamp_writes: None,
        });
        pass.set_pipeline(&compiled.pipeline);
        pass.set_bind_group(0, &group, &[]);
        pass.dispatch_workgroups(launch.workgroups, 1, 1);
        Ok(())
    }
}
