//! The output scaling on every runtime: `float32` times a gain and `int16` rounding (half to
//! even), saturation and per-channel clip counts equal to the host's, over launches and resets.

use cubecl::client::Client;
use cubecl::server::Handle;
use dspk_ops::scale::{self, ScaleStage};
use dspk_ops::{Span, Stage as _};
use dspk_tests::{for_each_runtime, test_rng, visible};
use dspk_types::{OutputType, ScaleSpec};
use rand::Rng as _;

fn upload(client: &Client, values: &[f32]) -> Handle {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    client.create_from_slice(&bytes)
}

fn download(client: &Client, handle: &Handle, len: usize) -> Vec<u32> {
    let bytes = client.read_one(handle.clone()).expect("read back");
    bytes[..4 * len]
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

/// Panics naming the first sample whose bits differ, with its input (a zero's sign aside:
/// −0 and +0 are the same `i16`, and the rounding makes either).
fn assert_bits(got: &[u32], want: &[u32], rows: &[f32], what: &str) {
    let zero = |bits: u32| f32::from_bits(bits) == 0.0;
    let differ: Vec<usize> = (0..want.len())
        .filter(|&i| got[i] != want[i] && !(zero(got[i]) && zero(want[i])))
        .collect();
    if let Some(&i) = differ.first() {
        panic!(
            "{what}: {} samples differ, first at {i}: input {} gives {} on the device, {} on \
             the host",
            differ.len(),
            rows[i],
            f32::from_bits(got[i]),
            f32::from_bits(want[i])
        );
    }
}

/// Marks output samples nobody wrote.
const UNTOUCHED: f32 = 12345.5;

/// Scales `rows` (channels × `stride`) on `produce` of each row; the output's bits.
fn run(
    client: &Client,
    stage: &mut ScaleStage,
    rows: &[f32],
    channels: usize,
    produce: std::ops::Range<usize>,
) -> Vec<u32> {
    let stride = rows.len() / channels;
    let span = Span {
        channels,
        stride,
        origin: 7,
        segment: 0..1 << 40,
        produce,
    };
    let input = upload(client, rows);
    let output = upload(client, &vec![UNTOUCHED; rows.len()]);
    stage.launch(&input, &output, &span).expect("launch");
    download(client, &output, rows.len())
}

/// What the stage should have written on `produce` of each row, and each channel's clips.
fn expected(
    rows: &[f32],
    channels: usize,
    produce: std::ops::Range<usize>,
    output: OutputType,
    gain: f32,
) -> (Vec<u32>, Vec<u32>) {
    let stride = rows.len() / channels;
    let mut bits = vec![UNTOUCHED.to_bits(); rows.len()];
    let mut clips = vec![0; channels];
    for c in 0..channels {
        let row = &rows[c * stride..(c + 1) * stride];
        let (values, clipped) = scale::host(&row[produce.clone()], output, gain);
        for (i, v) in values.iter().enumerate() {
            bits[c * stride + produce.start + i] = v.to_bits();
        }
        clips[c] = clipped;
    }
    (bits, clips)
}

#[test]
fn int16_rounds_half_to_even_saturates_and_counts_as_the_host() {
    const NAME: &str = "scale_int16_rounds_saturates_and_counts_as_the_host";
    for_each_runtime(NAME, |target, client| {
        let (seed, mut rng) = test_rng(NAME);
        let (channels, stride) = (3, 2048);
        // Gain 2 over quarters gives exact ties (m + 0.5) of both parities; gain 200 over
        // ±200 gives ±40000, past int16 on both sides.
        for gain in [2.0f64, 200.0] {
            let mut rows: Vec<f32> = (0..channels * stride)
                .map(|_| {
                    if gain == 2.0 {
                        rng.random_range(-70_000i32..70_000) as f32 / 4.0
                    } else {
                        rng.random_range(-200.0f32..200.0)
                    }
                })
                .collect();
            // Channel 2 never clips; channel 0 holds a NaN and infinities.
            rows[2 * stride..]
                .iter_mut()
                .for_each(|v| *v = v.clamp(-100.0, 100.0));
            rows[5] = f32::NAN;
            rows[6] = f32::INFINITY;
            rows[7] = f32::NEG_INFINITY;
            let spec = ScaleSpec {
                output: OutputType::Int16,
                gain,
            };
            let mut stage = ScaleStage::new(client, &spec, channels).unwrap();
            let first = 3..1500;
            let second = 1500..stride;
            let got = run(client, &mut stage, &rows, channels, first.clone());
            let (want, clips_a) = expected(&rows, channels, first, OutputType::Int16, gain as f32);
            assert_bits(
                &got,
                &want,
                &rows,
                &format!("seed {seed} gain {gain}: first launch"),
            );
            let got = run(client, &mut stage, &rows, channels, second.clone());
            let (want, clips_b) = expected(&rows, channels, second, OutputType::Int16, gain as f32);
            assert_bits(
                &got,
                &want,
                &rows,
                &format!("seed {seed} gain {gain}: second launch"),
            );
            let counts = download(client, stage.clipped_counts(), channels);
            let total: Vec<u32> = clips_a.iter().zip(&clips_b).map(|(a, b)| a + b).collect();
            visible(&format!(
                "{NAME} on {target}: gain {gain}: clipped per channel {counts:?} (host {total:?})"
            ));
            assert_eq!(counts, total, "seed {seed} gain {gain}");
            assert!(total[0] >= 3 && total[2] == 0);
            if gain == 200.0 {
                assert!(total[1] > 100, "the test should clip: {total:?}");
            }
            stage.reset().unwrap();
            assert_eq!(
                download(client, stage.clipped_counts(), channels),
                [0, 0, 0]
            );
        }
    });
}

#[test]
fn float32_is_the_input_times_the_gain() {
    const NAME: &str = "scale_float32_is_the_input_times_the_gain";
    for_each_runtime(NAME, |_, client| {
        let (seed, mut rng) = test_rng(NAME);
        let (channels, stride) = (2, 1000);
        let rows: Vec<f32> = (0..channels * stride)
            .map(|_| rng.random_range(-5000.0f32..5000.0))
            .collect();
        for gain in [1.0, 0.195, -3.0] {
            let spec = ScaleSpec {
                output: OutputType::Float32,
                gain,
            };
            let mut stage = ScaleStage::new(client, &spec, channels).unwrap();
            let got = run(client, &mut stage, &rows, channels, 10..990);
            let (want, _) = expected(&rows, channels, 10..990, OutputType::Float32, gain as f32);
            assert_bits(&got, &want, &rows, &format!("seed {seed} gain {gain}"));
            assert_eq!(download(client, stage.clipped_counts(), channels), [0, 0]);
        }
        let bad = ScaleSpec {
            output: OutputType::Int16,
            gain: f64::NAN,
        };
        let err = ScaleStage::new(client, &bad, channels).unwrap_err();
        assert!(err.to_string().contains("gain NaN"), "{err}");
    });
}
