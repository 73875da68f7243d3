//! dspk-device's `Uploader` on every runtime and every staging path: the bytes that land in the
//! device buffer are the bytes `fill` wrote, window after window through the reused staging
//! buffers; `fill` sees each byte once, in aligned pieces; errors come back, nothing panics.

use std::sync::Mutex;

use cubecl::client::Client;
use dspk_device::upload::{Destination, Staging, Uploader};
use dspk_tests::{for_each_runtime, test_rng, visible};
use dspk_types::DspError;
use rand::{Rng as _, RngCore as _};

const ALL: [Staging; 4] = [
    Staging::HostCached,
    Staging::HostUncached,
    Staging::Mapped,
    Staging::Write,
];

/// The first `len` bytes of a device buffer.
fn read_bytes(client: &Client, handle: &cubecl::server::Handle, len: usize) -> Vec<u8> {
    let bytes = client.read_one(handle.clone()).expect("read back");
    bytes[..len].to_vec()
}

#[test]
fn uploads_land_bit_for_bit_through_every_staging_path() {
    const NAME: &str = "uploads_land_bit_for_bit_through_every_staging_path";
    for_each_runtime(NAME, |target, client| {
        let (seed, mut rng) = test_rng(NAME);
        for wanted in ALL {
            for threads in [1usize, 3] {
                // Below the 64 MiB staging chunk, so each window crosses in one staging
                // buffer and consecutive windows take turns through the ring's two
                // (`Client::write` goes in 8 MiB pieces: a window past that takes several).
                let capacity = 24 << 20;
                let mut uploader = Uploader::with_staging(client, capacity, threads, wanted);
                let got = uploader.staging();
                visible(&format!(
                    "{NAME} on {target}: asked {}, got {} ({threads} threads)",
                    wanted.name(),
                    got.name()
                ));
                assert!(uploader.capacity() >= capacity);
                assert_eq!(uploader.is_staged(), got != Staging::Write);
                let dst = client.empty(capacity as usize);
                // More windows than staging buffers, of fresh lengths (not all multiples of 4,
                // the largest first so a shorter one cannot pass on stale bytes; one just past
                // 8 MiB), with frame alignments of 768, 2 and 2310 bytes (the last does not
                // divide a write piece), and frames of more than 8 MiB each. (A frame larger
                // than a staging buffer, which grows the ring, is the next test's.)
                let big = (8 << 20) + 8;
                let mut cases = vec![
                    (capacity as usize - 2, 768),
                    (1, 2),
                    (7, 2310),
                    (4096 + 2, 2),
                    ((8 << 20) + 1, 768),
                    (2 * big + 5, big),
                ];
                cases.extend((0..3).map(|k| {
                    let align = [768, 2, 2310][k];
                    (rng.random_range(1..capacity as usize), align)
                }));
                for (k, (len, align)) in cases.into_iter().enumerate() {
                    let context = format!(
                        "{target}, seed {seed}: {} × {threads}, window {k}, {len} bytes",
                        got.name()
                    );
                    let mut source = vec![0u8; len];
                    rng.fill_bytes(&mut source);
                    let pieces = Mutex::new(Vec::new());
                    uploader
                        .upload(
                            Destination::Copy(&dst),
                            len,
                            align,
                            |offset, piece| {
                                pieces.lock().expect("lock").push((offset, piece.len()));
                                piece.copy_from_slice(&source[offset..offset + piece.len()]);
                                Ok(())
                            },
                            || Ok(()),
                        )
                        .unwrap_or_else(|e| panic!("{context}: {e}"));
                    // `fill` covered 0..len once, in pieces that are whole multiples of the
                    // alignment but where `len` ends.
                    let mut pieces = pieces.into_inner().expect("lock");
                    pieces.sort();
                    let mut at = 0;
                    for &(offset, n) in &pieces {
                        assert_eq!(offset, at, "{context}: pieces {pieces:?}");
                        assert!(n > 0, "{context}: an empty piece");
                        assert!(
                            n % align == 0 || offset + n == len,
                            "{context}: piece {offset}+{n} not a multiple of {align}"
                        );
                        at += n;
                    }
                    assert_eq!(at, len, "{context}: pieces {pieces:?}");
                    let device = read_bytes(client, &dst, len);
                    if let Some(i) = (0..len).find(|&i| device[i] != source[i]) {
                        panic!(
                            "{context}: byte {i} is {} on the device, {} on the host",
                            device[i], source[i]
                        );
                    }
                }
                uploader
                    .wait_idle()
                    .unwrap_or_else(|e| panic!("{target}: {e}"));
            }
        }
    });
}

/// Bytes one staging buffer of dspk-device's ring holds before a piece outgrows it (its
/// `STAGING_CHUNK`).
const STAGING_CHUNK: usize = 64 << 20;

#[test]
fn a_frame_larger_than_a_staging_buffer_grows_the_ring_and_lands_bit_for_bit() {
    const NAME: &str = "a_frame_larger_than_a_staging_buffer_grows_the_ring_and_lands_bit_for_bit";
    for_each_runtime(NAME, |target, client| {
        let (seed, mut rng) = test_rng(NAME);
        // Frames (the pieces `fill` must see whole) longer than a staging buffer: the ring
        // grows its buffers to hold one frame each.
        let frame = STAGING_CHUNK + 8 * rng.random_range(1..512);
        let capacity = (frame + 4096) as u64;
        for wanted in ALL {
            let mut uploader = Uploader::with_staging(client, capacity, 2, wanted);
            let got = uploader.staging();
            let context = format!(
                "{target}, seed {seed}: asked {}, got {}, frames of {frame} bytes",
                wanted.name(),
                got.name()
            );
            let host = matches!(got, Staging::HostCached | Staging::HostUncached);
            if host {
                assert_eq!(
                    uploader.staging_kernel_capacity(),
                    STAGING_CHUNK as u64,
                    "{context}: staging buffers before the upload"
                );
            }
            let dst = client.empty(capacity as usize);
            // One frame and part of the next: two pieces, through both buffers of the ring.
            let len = frame + rng.random_range(1..4096);
            let mut source = vec![0u8; len];
            rng.fill_bytes(&mut source);
            let pieces = Mutex::new(Vec::new());
            uploader
                .upload(
                    Destination::Copy(&dst),
                    len,
                    frame,
                    |offset, piece| {
                        pieces.lock().expect("lock").push((offset, piece.len()));
                        piece.copy_from_slice(&source[offset..offset + piece.len()]);
                        Ok(())
                    },
                    || Ok(()),
                )
                .unwrap_or_else(|e| panic!("{context}: {e}"));
            let mut pieces = pieces.into_inner().expect("lock");
            pieces.sort();
            assert_eq!(pieces, [(0, frame), (frame, len - frame)], "{context}");
            if host {
                assert!(
                    uploader.staging_kernel_capacity() >= frame as u64,
                    "{context}: the ring did not grow ({} bytes per staging buffer)",
                    uploader.staging_kernel_capacity()
                );
            }
            let device = read_bytes(client, &dst, len);
            if let Some(i) = (0..len).find(|&i| device[i] != source[i]) {
                panic!(
                    "{context}: byte {i} is {} on the device, {} on the host",
                    device[i], source[i]
                );
            }
            // The grown ring carries ordinary windows as before.
            let len = rng.random_range(1..capacity as usize);
            let mut source = vec![0u8; len];
            rng.fill_bytes(&mut source);
            uploader
                .upload(
                    Destination::Copy(&dst),
                    len,
                    768,
                    |offset, piece| {
                        piece.copy_from_slice(&source[offset..offset + piece.len()]);
                        Ok(())
                    },
                    || Ok(()),
                )
                .unwrap_or_else(|e| panic!("{context}: after growing: {e}"));
            assert!(
                read_bytes(client, &dst, len) == source,
                "{context}: a {len}-byte window after growing differs on the device"
            );
        }
    });
}

#[test]
fn back_to_back_uploads_each_reach_their_own_buffer() {
    const NAME: &str = "back_to_back_uploads_each_reach_their_own_buffer";
    for_each_runtime(NAME, |target, client| {
        let (seed, mut rng) = test_rng(NAME);
        for (wanted, staging_buffers) in ALL.into_iter().flat_map(|w| [(w, 1), (w, 2)]) {
            let capacity = 1 << 20;
            let mut uploader = Uploader::with_buffers(client, capacity, 2, wanted, staging_buffers);
            // Five uploads queued without reading in between: each staging buffer (one, as a
            // device taking turns with others has, or two) is reused while earlier copies may
            // still be in flight.
            let windows: Vec<Vec<u8>> = (0..5)
                .map(|_| {
                    let mut w = vec![0u8; rng.random_range(1..capacity as usize)];
                    rng.fill_bytes(&mut w);
                    w
                })
                .collect();
            let buffers: Vec<_> = windows
                .iter()
                .map(|w| {
                    let dst = client.empty(w.len().next_multiple_of(4));
                    uploader
                        .upload(
                            Destination::Copy(&dst),
                            w.len(),
                            1,
                            |offset, piece| {
                                piece.copy_from_slice(&w[offset..offset + piece.len()]);
                                Ok(())
                            },
                            || Ok(()),
                        )
                        .unwrap_or_else(|e| panic!("{target}, seed {seed}: {e}"));
                    dst
                })
                .collect();
            for (k, (w, dst)) in windows.iter().zip(&buffers).enumerate() {
                assert!(
                    read_bytes(client, dst, w.len()) == *w,
                    "{target}, seed {seed}: {} window {k} differs on the device \
                     ({staging_buffers} staging buffers)",
                    uploader.staging().name()
                );
            }
        }
    });
}

#[test]
fn upload_errors_come_back_and_the_uploader_still_works() {
    const NAME: &str = "upload_errors_come_back_and_the_uploader_still_works";
    for_each_runtime(NAME, |target, client| {
        let (seed, mut rng) = test_rng(NAME);
        for wanted in ALL {
            let mut uploader = Uploader::with_staging(client, 4096, 2, wanted);
            let name = uploader.staging().name();
            let dst = client.empty(uploader.capacity() as usize);
            // Larger than the staging capacity: refused, naming the sizes.
            let too_long = uploader.capacity() as usize + 1;
            match uploader.upload(
                Destination::Copy(&dst),
                too_long,
                1,
                |_, _| Ok(()),
                || Ok(()),
            ) {
                Err(DspError::BufferOverrun { needed, .. }) => assert_eq!(needed, too_long),
                other => panic!("{target} {name}: expected an overrun, got {other:?}"),
            }
            // A failing fill is the upload's error.
            let err = uploader
                .upload(
                    Destination::Copy(&dst),
                    1000,
                    4,
                    |offset, piece| {
                        if offset + piece.len() > 500 {
                            Err(DspError::config(format!("source failed at {offset}")))
                        } else {
                            Ok(())
                        }
                    },
                    || Ok(()),
                )
                .expect_err("the fill failed");
            assert!(
                err.to_string().contains("source failed at"),
                "{target} {name}: {err}"
            );
            // A device buffer shorter than the upload is refused.
            let short = client.empty(64);
            assert!(
                uploader
                    .upload(Destination::Copy(&short), 1000, 1, |_, _| Ok(()), || Ok(()))
                    .is_err(),
                "{target} {name}: an upload past a 64-byte buffer succeeded"
            );
            // And then an upload works.
            let mut bytes = vec![0u8; 777];
            rng.fill_bytes(&mut bytes);
            uploader
                .upload(
                    Destination::Copy(&dst),
                    bytes.len(),
                    1,
                    |offset, piece| {
                        piece.copy_from_slice(&bytes[offset..offset + piece.len()]);
                        Ok(())
                    },
                    || Ok(()),
                )
                .unwrap_or_else(|e| panic!("{target} {name}: {e}"));
            assert!(
                read_bytes(client, &dst, bytes.len()) == bytes,
                "{target} {name}, seed {seed}: bytes differ after the errors"
            );
        }
    });
}

#[test]
fn work_during_an_upload_runs_once_and_goes_before_the_copy() {
    const NAME: &str = "work_during_an_upload_runs_once_and_goes_before_the_copy";
    for_each_runtime(NAME, |target, client| {
        let (seed, mut rng) = test_rng(NAME);
        for wanted in ALL {
            let mut uploader = Uploader::with_staging(client, 1 << 20, 3, wanted);
            let name = uploader.staging().name();
            let context = format!("{target} {name}, seed {seed}");
            let len = rng.random_range(600_000..(1 << 20));
            let mut bytes = vec![0u8; len];
            rng.fill_bytes(&mut bytes);
            let dst = client.empty(len.next_multiple_of(4));
            // `during` overwrites the whole destination: the upload, ordered after it, wins.
            let mut runs = 0;
            let noise = vec![0xA5u8; len.next_multiple_of(4)];
            uploader
                .upload(
                    Destination::Copy(&dst),
                    len,
                    1,
                    |offset, piece| {
                        piece.copy_from_slice(&bytes[offset..offset + piece.len()]);
                        Ok(())
                    },
                    || {
                        runs += 1;
                        client.write(&dst, cubecl::bytes::Bytes::from_bytes_vec(noise.clone()));
                        Ok(())
                    },
                )
                .unwrap_or_else(|e| panic!("{context}: {e}"));
            assert_eq!(runs, 1, "{context}");
            assert!(
                read_bytes(client, &dst, len) == bytes,
                "{context}: bytes differ"
            );
            // Its error is the upload's error; so is the fill's.
            let err = uploader
                .upload(
                    Destination::Copy(&dst),
                    len,
                    1,
                    |_, _| Ok(()),
                    || Err(DspError::config("during failed")),
                )
                .expect_err("during failed");
            assert!(
                err.to_string().contains("during failed"),
                "{context}: {err}"
            );
            let mut ran = false;
            let err = uploader
                .upload(
                    Destination::Copy(&dst),
                    len,
                    1,
                    |_, _| Err(DspError::config("fill failed")),
                    || {
                        ran = true;
                        Ok(())
                    },
                )
                .expect_err("fill failed");
            assert!(err.to_string().contains("fill failed"), "{context}: {err}");
            assert!(ran, "{context}: `during` did not run");
            // An empty upload still runs it.
            let mut ran = false;
            uploader
                .upload(
                    Destination::Copy(&dst),
                    0,
                    1,
                    |_, _| Ok(()),
                    || {
                        ran = true;
                        Ok(())
                    },
                )
                .unwrap_or_else(|e| panic!("{context}: {e}"));
            assert!(ran, "{context}: `during` did not run for an empty upload");
        }
    });
}

#[test]
fn a_later_uploader_reuses_host_staging_and_uploads_the_same() {
    const NAME: &str = "a_later_uploader_reuses_host_staging_and_uploads_the_same";
    for_each_runtime(NAME, |target, client| {
        let (seed, mut rng) = test_rng(NAME);
        // A capacity no other test uses, so that the cached set is this test's own.
        let capacity = (5 << 20) + 4 * rng.random_range(1..1000);
        let first = Uploader::with_staging(client, capacity, 2, Staging::HostCached);
        let host = matches!(first.staging(), Staging::HostCached | Staging::HostUncached);
        assert!(
            !first.reused_staging() || host,
            "{target}: reuse off the host path"
        );
        drop(first);
        for k in 0..3 {
            let mut uploader = Uploader::with_staging(client, capacity, 2, Staging::HostCached);
            let context = format!("{target}, seed {seed}, uploader {k}");
            // Host staging buffers come back for an uploader of the same device and size.
            assert_eq!(uploader.reused_staging(), host, "{context}");
            let len = rng.random_range(1..capacity as usize);
            let mut bytes = vec![0u8; len];
            rng.fill_bytes(&mut bytes);
            let dst = client.empty(len.next_multiple_of(4));
            for _ in 0..3 {
                uploader
                    .upload(
                        Destination::Copy(&dst),
                        len,
                        1,
                        |offset, piece| {
                            piece.copy_from_slice(&bytes[offset..offset + piece.len()]);
                            Ok(())
                        },
                        || Ok(()),
                    )
                    .unwrap_or_else(|e| panic!("{context}: {e}"));
            }
            assert!(
                read_bytes(client, &dst, len) == bytes,
                "{context}: bytes differ"
            );
        }
    });
}
