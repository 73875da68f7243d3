//! The decode that reads int16 windows (time-major or channel-major) where they are staged
//! (dspk-kernels' `STAGED_DECODE_WGSL` through dspk-device's `Destination::Kernel`): bit
//! for bit the host reference and the copy-then-decode path, window after window through the
//! reused staging buffers; refused clearly where it cannot run.

use cubecl::client::Client;
use dspk_device::upload::{
    Destination, Staging, StagingKernel, StagingLaunch, Uploader, compile_staging_kernel_for,
};
use dspk_kernels::{
    Decoder, STAGED_DECODE_BUFFERS, STAGED_DECODE_ENTRY, STAGED_DECODE_WGSL, StagedDecode,
};
use dspk_stream::{compile_decode_in_staging, launch_of};
use dspk_tests::{for_each_runtime, test_rng, visible};
use dspk_types::{ComputeTarget, DspError, MemoryOrder, SampleFormat};
use rand::Rng as _;

use crate::kernels::{assert_decoded, host_decode, random_scaling, random_stored};

/// The staged decode kernel compiled (by dspk-stream, as a pass compiles it) for `uploader`'s
/// device, or `None` where it cannot run through `uploader`.
fn compile(client: &Client, uploader: &Uploader) -> Option<StagingKernel> {
    compile_decode_in_staging(client)
        .expect("the decode kernel compiles")
        .filter(|_| uploader.runs_staging_kernels())
}

/// Stages `stored` (a window of `samples` samples, in the decoder's order) and decodes it there.
fn decode_staged(
    uploader: &mut Uploader,
    kernel: &StagingKernel,
    launch: &StagedDecode,
    stored: &[u8],
    frame: usize,
) -> Result<(), DspError> {
    uploader.upload(
        Destination::Kernel(launch_of(kernel, launch)),
        stored.len(),
        frame,
        |offset, piece| {
            piece.copy_from_slice(&stored[offset..offset + piece.len()]);
            Ok(())
        },
        || Ok(()),
    )
}

#[test]
fn decode_in_staging_equals_the_host_and_the_copy_path() {
    const NAME: &str = "decode_in_staging_equals_the_host_and_the_copy_path";
    for_each_runtime(NAME, |target, client: &Client| {
        let (seed, mut rng) = test_rng(NAME);
        // Channel counts: Neuropixels' 384 and 385 (with the sync channel), odd and tiny ones,
        // and a fresh one; both orders.
        let shapes = [384usize, 385, 1, 3, rng.random_range(2..700)]
            .into_iter()
            .flat_map(|c| [(c, MemoryOrder::TimeMajor), (c, MemoryOrder::ChannelMajor)]);
        for (channels, order) in shapes {
            let max_samples = rng.random_range(300..3000);
            let (gains, offsets) = random_scaling(&mut rng, channels);
            let format = SampleFormat::I16;
            let mut decoder = Decoder::new(
                client,
                channels,
                max_samples,
                format,
                order,
                &gains,
                &offsets,
            )
            .unwrap_or_else(|e| panic!("{target}: decoder: {e}"));
            assert!(decoder.decodes_in_staging());
            let mut uploader = Uploader::new(client, (max_samples * channels * 2) as u64, 3)
                .unwrap_or_else(|e| panic!("{target}: uploader: {e}"));
            let Some(kernel) = compile(client, &uploader) else {
                // Only wgpu's Vulkan devices stage in dspk's host memory; the tests' wgpu
                // devices are Vulkan (lavapipe in CI), so there it must run.
                assert_ne!(
                    target,
                    ComputeTarget::Wgpu,
                    "{target}: no staging kernel on wgpu"
                );
                assert!(!uploader.runs_staging_kernels());
                continue;
            };
            visible(&format!(
                "{NAME} on {target}: {channels} channels {order}, staging {}",
                uploader.staging().name()
            ));
            // The longest window first, then shorter ones (stale bytes must not leak into a
            // shorter window), one of a single sample, more windows than staging buffers.
            let mut lengths = vec![max_samples, 1, rng.random_range(1..max_samples)];
            lengths.extend((0..3).map(|_| rng.random_range(1..=max_samples)));
            for (k, samples) in lengths.into_iter().enumerate() {
                let context = format!(
                    "{target}, seed {seed}: {channels} ch {order}, window {k} of {samples}"
                );
                let stored = random_stored(&mut rng, format, channels * samples);
                let host = host_decode(&stored, format, order, channels, samples, &gains, &offsets);
                let launch = decoder
                    .staged_decode(samples)
                    .unwrap_or_else(|e| panic!("{context}: {e}"))
                    .expect("int16 decodes in staging");
                // Fill pieces of whole frames, or of whole channel rows (as a pass hands them).
                let unit = match order {
                    MemoryOrder::TimeMajor => channels * 2,
                    MemoryOrder::ChannelMajor => samples * 2,
                };
                decode_staged(&mut uploader, &kernel, &launch, &stored, unit)
                    .unwrap_or_else(|e| panic!("{context}: {e}"));
                let staged = decoder.staged_window(samples).and_then(|w| w.to_vec());
                let staged = staged.unwrap_or_else(|e| panic!("{context}: read back: {e}"));
                assert_decoded(&staged, &host, format, &format!("{context}, in staging"));
                // The copy path over the same bytes gives the same bits.
                let copied = decoder
                    .decode(&stored, samples)
                    .and_then(|w| w.to_vec())
                    .unwrap_or_else(|e| panic!("{context}: copy path: {e}"));
                assert!(
                    copied
                        .iter()
                        .zip(&staged)
                        .all(|(a, b)| a.to_bits() == b.to_bits()),
                    "{context}: the copy path and the staged decode differ"
                );
            }
        }
    });
}

#[test]
fn staging_kernels_are_refused_clearly() {
    const NAME: &str = "staging_kernels_are_refused_clearly";
    for_each_runtime(NAME, |target, client: &Client| {
        let (channels, samples) = (5, 64);
        let (gains, offsets) = (vec![1.0f32; channels], vec![0.0f32; channels]);
        let decoder = Decoder::new(
            client,
            channels,
            samples,
            SampleFormat::I16,
            MemoryOrder::TimeMajor,
            &gains,
            &offsets,
        )
        .unwrap_or_else(|e| panic!("{target}: {e}"));
        // Other formats are not decoded in staging.
        let other = Decoder::new(
            client,
            channels,
            samples,
            SampleFormat::F32,
            MemoryOrder::TimeMajor,
            &gains,
            &offsets,
        )
        .unwrap_or_else(|e| panic!("{target}: {e}"));
        assert!(!other.decodes_in_staging());
        assert!(matches!(other.staged_decode(samples), Ok(None)));
        // A window longer than the decoder's is refused, naming both.
        match decoder.staged_decode(samples + 1) {
            Err(DspError::BufferOverrun {
                capacity, needed, ..
            }) => {
                assert_eq!((capacity, needed), (samples, samples + 1))
            }
            other => panic!("{target}: expected an overrun, got {other:?}"),
        }
        let frame = channels * 2;
        let mut uploader = Uploader::new(client, (samples * frame) as u64, 2)
            .unwrap_or_else(|e| panic!("{target}: {e}"));
        let Some(kernel) = compile(client, &uploader) else {
            assert_ne!(
                target,
                ComputeTarget::Wgpu,
                "{target}: no staging kernel on wgpu"
            );
            return;
        };
        // Compiled without an uploader too (as a pass does on a helper thread).
        let alone = compile_staging_kernel_for(
            client,
            "test decode, no uploader",
            STAGED_DECODE_WGSL,
            STAGED_DECODE_ENTRY,
            STAGED_DECODE_BUFFERS,
        )
        .unwrap_or_else(|e| panic!("{target}: {e}"));
        assert!(
            alone.is_some(),
            "{target}: no staging kernel without an uploader"
        );
        let err = compile_staging_kernel_for(client, "broken alone", "fn x( {", "main", 1)
            .expect_err("broken WGSL compiled");
        assert!(err.to_string().contains("broken alone"), "{target}: {err}");
        // WGSL the device refuses is an error that names the kernel.
        let err = uploader
            .staging_kernel("broken kernel", "fn nope( {", "main", 1)
            .expect_err("broken WGSL compiled");
        assert!(err.to_string().contains("broken kernel"), "{target}: {err}");
        let launch = decoder
            .staged_decode(samples)
            .expect("fits")
            .expect("int16");
        let stored = vec![0u8; samples * frame];
        // The wrong number of buffers, too many parameters, a window past the staging buffer.
        let one = [launch.buffers[0].clone()];
        let params = [0u32; 17];
        let cases: [(&str, StagingLaunch<'_>, usize); 3] = [
            (
                "buffers",
                StagingLaunch {
                    kernel: &kernel,
                    buffers: &one,
                    params: &launch.params,
                    workgroups: 1,
                },
                stored.len(),
            ),
            (
                "parameters",
                StagingLaunch {
                    kernel: &kernel,
                    buffers: &launch.buffers,
                    params: &params,
                    workgroups: 1,
                },
                stored.len(),
            ),
            (
                "staging buffer",
                StagingLaunch {
                    kernel: &kernel,
                    buffers: &launch.buffers,
                    params: &launch.params,
                    workgroups: 1,
                },
                uploader.staging_kernel_capacity() as usize + 1,
            ),
        ];
        for (what, bad, len) in cases {
            let err = uploader
                .upload(
                    Destination::Kernel(bad),
                    len,
                    frame,
                    |_, _| Ok(()),
                    || Ok(()),
                )
                .expect_err(what);
            assert!(err.to_string().contains(what), "{target}: {what}: {err}");
        }
        // A kernel whose WGSL binds more buffers than it was compiled for: the launch's
        // buffers do not match its bindings, an error (not a panic) that names the kernel.
        let short = uploader
            .staging_kernel("mislabelled", STAGED_DECODE_WGSL, STAGED_DECODE_ENTRY, 1)
            .unwrap_or_else(|e| panic!("{target}: {e}"))
            .expect("staging kernels run here");
        let err = uploader
            .upload(
                Destination::Kernel(StagingLaunch {
                    kernel: &short,
                    buffers: &one,
                    params: &launch.params,
                    workgroups: 1,
                }),
                stored.len(),
                frame,
                |_, _| Ok(()),
                || Ok(()),
            )
            .expect_err("a launch with missing bindings ran");
        assert!(err.to_string().contains("mislabelled"), "{target}: {err}");
        // wgpu's own mapped buffers cannot be read in place: refused, naming the path.
        let mut mapped =
            Uploader::with_staging(client, (samples * frame) as u64, 2, Staging::Mapped);
        assert!(!mapped.runs_staging_kernels());
        let ok = StagingLaunch {
            kernel: &kernel,
            buffers: &launch.buffers,
            params: &launch.params,
            workgroups: launch.workgroups,
        };
        let err = mapped
            .upload(
                Destination::Kernel(ok),
                stored.len(),
                frame,
                |_, _| Ok(()),
                || Ok(()),
            )
            .expect_err("mapped staging ran a staging kernel");
        assert!(err.to_string().contains("mapped"), "{target}: {err}");
        // After the errors the uploader still decodes.
        decode_staged(&mut uploader, &kernel, &launch, &stored, frame)
            .unwrap_or_else(|e| panic!("{target}: after the errors: {e}"));
        let decoded = decoder.staged_window(samples).and_then(|w| w.to_vec());
        assert!(decoded.expect("read back").iter().all(|&v| v == 0.0));
    });
}
