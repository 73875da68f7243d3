//! The frame packer on every runtime: the owned samples of channel-major rows cut and laid out
//! time-major as `int16` (whole numbers, negative ones and the ends of the range included) and
//! `float32`, equal byte for byte to the frames laid out on the host.

use cubecl::client::Client;
use cubecl::server::Handle;
use dspk_ops::frames::{self, FramePacker};
use dspk_tests::{for_each_runtime, test_rng};
use dspk_types::OutputType;
use rand::Rng as _;

fn upload(client: &Client, values: &[f32]) -> Handle {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    client.create_from_slice(&bytes)
}

/// Packs `part` of `rows` on the device and checks the bytes against the host's.
fn check(
    client: &Client,
    rows: &[f32],
    channels: usize,
    part: std::ops::Range<usize>,
    output: OutputType,
) {
    let stride = rows.len() / channels;
    let packer = FramePacker::new(client, channels, output).expect("packer");
    let packed = packer
        .pack(&upload(client, rows), stride, part.clone())
        .expect("pack");
    let bytes = client.read_one(packed).expect("read back");
    let len = packer.frame_bytes(part.len());
    let want = frames::host(rows, channels, stride, part.clone(), output).expect("whole numbers");
    assert_eq!(want.len(), len, "the host's frames have the stated size");
    if let Some(i) = (0..len).find(|&i| bytes[i] != want[i]) {
        let value = i / (len / (channels * part.len()).max(1));
        panic!(
            "{output:?} frames of {channels} channels, samples {part:?} of {stride}: byte {i} \
             differs (frame {}, channel {}): device {:#04x}, host {:#04x}",
            value / channels,
            value % channels,
            bytes[i],
            want[i]
        );
    }
}

#[test]
fn int16_frames_equal_the_hosts_for_odd_and_even_shapes() {
    for_each_runtime("int16_frames_equal_the_hosts", |_, client| {
        let (_, mut rng) = test_rng("int16_frames_equal_the_hosts");
        for (channels, stride, part) in [(5, 301, 17..290), (4, 64, 0..64), (3, 9, 4..5)] {
            let mut rows: Vec<f32> = (0..channels * stride)
                .map(|_| f32::from(rng.random_range(i16::MIN..=i16::MAX)))
                .collect();
            // The ends of the range and both zeros, inside the part.
            let at = |c: usize| c * stride + part.start;
            rows[at(0)] = -32768.0;
            rows[at(1)] = 32767.0;
            rows[at(2)] = -0.0;
            check(client, &rows, channels, part, OutputType::Int16);
        }
    });
}

#[test]
fn float32_frames_keep_the_bits() {
    for_each_runtime("float32_frames_keep_the_bits", |_, client| {
        let (_, mut rng) = test_rng("float32_frames_keep_the_bits");
        let (channels, stride) = (7, 200);
        let rows: Vec<f32> = (0..channels * stride)
            .map(|_| rng.random_range(-1e4f32..1e4))
            .collect();
        check(client, &rows, channels, 33..181, OutputType::Float32);
    });
}

#[test]
fn a_part_past_the_rows_is_refused() {
    for_each_runtime("frames_part_past_the_rows", |_, client| {
        let packer = FramePacker::new(client, 2, OutputType::Int16).expect("packer");
        let err = packer
            .pack(&upload(client, &[0.0; 20]), 10, 5..11)
            .expect_err("past the rows");
        let message = err.to_string();
        assert!(
            message.contains("5..11") && message.contains("rows of 10"),
            "{message}"
        );
    });
}
