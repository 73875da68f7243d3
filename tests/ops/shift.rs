//! The phase shift on every runtime: the device equals the `f64` host reference to `f32`
//! rounding, the filter equals an FFT shift of the whole signal on band-limited data, a
//! sample's bits do not depend on the window, and the segment ends are the odd extension.

use std::f64::consts::PI;

use cubecl::client::Client;
use cubecl::server::Handle;
use dspk_ops::shift::{self, PhaseShiftStage};
use dspk_ops::{Span, Stage as _};
use dspk_tests::{for_each_runtime, test_rng, visible};
use dspk_types::{
    AdcCycle, AdcSlot, Contact, MemoryOrder, PhaseShiftSpec, Probe, ProbeParts, RecordingInfo,
    SampleFormat, SampleRate,
};
use rand::Rng as _;
use rand::rngs::StdRng;

fn upload(client: &Client, values: &[f32]) -> Handle {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    client.create_from_slice(&bytes)
}

fn download(client: &Client, handle: &Handle, len: usize) -> Vec<f32> {
    let bytes = client.read_one(handle.clone()).expect("read back");
    bytes[..4 * len]
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

/// Runs `stage` over `rows` (channel-major, `stride` per row) for `span`; returns the output
/// rows (NaN where nothing was produced).
fn run(client: &Client, stage: &mut PhaseShiftStage, rows: &[f32], span: &Span) -> Vec<f32> {
    let input = upload(client, rows);
    let output = upload(client, &vec![f32::NAN; rows.len()]);
    stage.launch(&input, &output, span).expect("launch");
    download(client, &output, rows.len())
}

/// `count` samples of a sum of 12 sinusoids of random frequency up to `max_cycles` per sample,
/// amplitude and phase, plus `dc`.
fn sinusoids(rng: &mut StdRng, count: usize, max_cycles: f64, dc: f64) -> Vec<f64> {
    let parts: Vec<(f64, f64, f64)> = (0..12)
        .map(|_| {
            (
                rng.random_range(0.0..max_cycles),
                rng.random_range(5.0..60.0),
                rng.random_range(0.0..2.0 * PI),
            )
        })
        .collect();
    (0..count)
        .map(|n| {
            dc + parts
                .iter()
                .map(|&(f, a, p)| a * (2.0 * PI * f * n as f64 + p).sin())
                .sum::<f64>()
        })
        .collect()
}

fn rms(x: &[f64]) -> f64 {
    (x.iter().map(|v| v * v).sum::<f64>() / x.len() as f64).sqrt()
}

fn as_f32(x: &[f64]) -> Vec<f32> {
    x.iter().map(|&v| v as f32).collect()
}

fn as_f64(x: &[f32]) -> Vec<f64> {
    x.iter().map(|&v| f64::from(v)).collect()
}

/// One segment `0..samples` held whole in a row of `samples`.
fn whole(channels: usize, samples: usize) -> Span {
    Span {
        channels,
        stride: samples,
        origin: 0,
        segment: 0..samples as u64,
        produce: 0..samples,
    }
}

#[test]
fn the_device_equals_the_host_reference() {
    const NAME: &str = "phase_shift_device_equals_the_host_reference";
    for_each_runtime(NAME, |target, client| {
        let (seed, mut rng) = test_rng(NAME);
        let (channels, samples) = (3, 2000);
        for half_taps in [32, 5] {
            let shifts: Vec<f64> = (0..channels).map(|_| rng.random_range(0.0..1.0)).collect();
            // Random data with a DC offset: the reference holds for any input.
            let rows: Vec<f32> = (0..channels * samples)
                .map(|_| 300.0 + rng.random_range(-100.0f32..100.0))
                .collect();
            let mut stage = PhaseShiftStage::with_shifts(client, &shifts, half_taps).unwrap();
            let got = run(client, &mut stage, &rows, &whole(channels, samples));
            // Each run length a unit may take gives the same bits (the device's own choice is
            // 1 on a GPU, 8 on a CPU device).
            for per_unit in [1, 3, 8, 16] {
                let mut other = PhaseShiftStage::with_shifts(client, &shifts, half_taps)
                    .unwrap()
                    .with_samples_per_unit(per_unit);
                let again = run(client, &mut other, &rows, &whole(channels, samples));
                assert!(
                    again
                        .iter()
                        .zip(&got)
                        .all(|(a, b)| a.to_bits() == b.to_bits()),
                    "seed {seed}: half_taps {half_taps}, {per_unit} samples a unit"
                );
            }
            let mut worst = 0.0f64;
            for c in 0..channels {
                let row = &rows[c * samples..(c + 1) * samples];
                let want = shift::host(&as_f64(row), shifts[c], half_taps);
                for n in 0..samples {
                    let e = (f64::from(got[c * samples + n]) - want[n]).abs();
                    worst = worst.max(e);
                }
            }
            visible(&format!(
                "{NAME} on {target}: half_taps {half_taps}: max |device − host| {worst:.3e} \
                 (values ~400); 1, 3, 8 and 16 samples a unit the same bits"
            ));
            // f32 rounding of inputs near 400 through a sum of 2·half_taps products: the
            // worst case is 2·half_taps·ε·Σ|w·x| ≈ 64 × 1.2e-7 × 400 × 1.5 ≈ 4.6e-3; over
            // random seeds the error reaches ~2.1e-4 (7 ulps of 400, lavapipe and the H200).
            assert!(worst < 1e-3, "seed {seed}: {worst}");
        }
    });
}

#[test]
fn the_stage_takes_each_channels_shift_from_the_probe() {
    const NAME: &str = "phase_shift_takes_each_channels_shift_from_the_probe";
    for_each_runtime(NAME, |_, client| {
        let contacts = (0..4u32)
            .map(|c| {
                let mut contact = Contact::new(0.0, 20.0 * f64::from(c), 0, format!("e{c}"));
                contact.adc = Some(AdcSlot {
                    adc: c / 2,
                    order: 3 * c,
                });
                Some(contact)
            })
            .collect();
        let probe = Probe::new(ProbeParts {
            adc_cycle: Some(AdcCycle {
                adcs: 2,
                channels_per_adc: 12,
                cycle_samples: 13,
            }),
            channels: contacts,
            ..ProbeParts::default()
        })
        .unwrap();
        let rate = SampleRate::new(30_000.0).unwrap();
        let mut info = RecordingInfo::new(
            "np",
            4,
            1000,
            rate,
            SampleFormat::I16,
            MemoryOrder::TimeMajor,
        );
        info.probe = Some(probe);
        let stage = PhaseShiftStage::new(client, &PhaseShiftSpec::default(), &info).unwrap();
        assert_eq!(stage.shifts(), &[0.0, 3.0 / 13.0, 6.0 / 13.0, 9.0 / 13.0]);
        assert_eq!(stage.halo(), dspk_ops::Halo::both(32));
        info.probe = None;
        let err = PhaseShiftStage::new(client, &PhaseShiftSpec::default(), &info).unwrap_err();
        assert!(err.to_string().contains("no probe"), "{err}");
        let err = PhaseShiftStage::with_shifts(client, &[0.2, 1.0], 8).unwrap_err();
        assert!(
            err.to_string().contains("channel 1's sample shift is 1"),
            "{err}"
        );
    });
}

/// In-place radix-2 FFT of `re + i·im` (`inverse`: the conjugate transform, unscaled).
fn fft(re: &mut [f64], im: &mut [f64], inverse: bool) {
    let n = re.len();
    assert!(n.is_power_of_two());
    let mut j = 0;
    for i in 1..n {
        let mut bit = n >> 1;
        while j & bit != 0 {
            j ^= bit;
            bit >>= 1;
        }
        j |= bit;
        if i < j {
            re.swap(i, j);
            im.swap(i, j);
        }
    }
    let sign = if inverse { 1.0 } else { -1.0 };
    let mut len = 2;
    while len <= n {
        for start in (0..n).step_by(len) {
            for k in 0..len / 2 {
                let angle = sign * 2.0 * PI * k as f64 / len as f64;
                let (wr, wi) = (angle.cos(), angle.sin());
                let (a, b) = (start + k, start + k + len / 2);
                let (xr, xi) = (re[b] * wr - im[b] * wi, re[b] * wi + im[b] * wr);
                re[b] = re[a] - xr;
                im[b] = im[a] - xi;
                re[a] += xr;
                im[a] += xi;
            }
        }
        len <<= 1;
    }
}

/// `x` delayed by `shift` samples through its whole-signal DFT: bin `k` times
/// `e^{−2πi·f_k·shift}` (SpikeInterface's `apply_frequency_shift`, the Nyquist bin taking the
/// real part as `irfft` does).
fn dft_shift(x: &[f64], shift: f64) -> Vec<f64> {
    let n = x.len();
    let mut re = x.to_vec();
    let mut im = vec![0.0; n];
    fft(&mut re, &mut im, false);
    for k in 0..n {
        let f = if k <= n / 2 {
            k as f64 / n as f64
        } else {
            k as f64 / n as f64 - 1.0
        };
        if k == n / 2 {
            let c = (PI * shift).cos();
            re[k] *= c;
            im[k] = 0.0;
            continue;
        }
        let (c, s) = ((2.0 * PI * f * shift).cos(), -(2.0 * PI * f * shift).sin());
        let (r, i) = (re[k] * c - im[k] * s, re[k] * s + im[k] * c);
        re[k] = r;
        im[k] = i;
    }
    fft(&mut re, &mut im, true);
    re.iter().map(|v| v / n as f64).collect()
}

#[test]
fn the_filter_equals_a_whole_signal_fft_shift_on_band_limited_data() {
    const NAME: &str = "phase_shift_equals_a_whole_signal_fft_shift";
    for_each_runtime(NAME, |target, client| {
        let (seed, mut rng) = test_rng(NAME);
        let samples = 4096;
        let half_taps = 32;
        // NP1's shifts (slot/13) and one at random; frequencies on the DFT's grid up to 10 kHz
        // at 30 kHz (1/3 cycle per sample), so the whole-signal DFT shift is the exact delay.
        let shifts = [0.0, 5.0 / 13.0, 12.0 / 13.0, rng.random_range(0.0..1.0)];
        let channels = shifts.len();
        let signals: Vec<Vec<f64>> = (0..channels)
            .map(|_| {
                let x = sinusoids(&mut rng, samples, 1.0 / 3.0, 0.0);
                // Snap each frequency to the grid: rebuild from the DFT's bins below n/3.
                let mut re = x;
                let mut im = vec![0.0; samples];
                fft(&mut re, &mut im, false);
                for k in 0..samples {
                    let f = k.min(samples - k);
                    if f > samples / 3 {
                        re[k] = 0.0;
                        im[k] = 0.0;
                    }
                }
                fft(&mut re, &mut im, true);
                re.iter().map(|v| v / samples as f64).collect()
            })
            .collect();
        let rows: Vec<f32> = signals.iter().flat_map(|s| as_f32(s)).collect();
        let mut stage = PhaseShiftStage::with_shifts(client, &shifts, half_taps).unwrap();
        let got = run(client, &mut stage, &rows, &whole(channels, samples));
        for (c, &s) in shifts.iter().enumerate() {
            let x = as_f64(&rows[c * samples..(c + 1) * samples]);
            let want = dft_shift(&x, s);
            let host = shift::host(&x, s, half_taps);
            let device = as_f64(&got[c * samples..(c + 1) * samples]);
            let scale = rms(&x);
            let inner = half_taps as usize..samples - half_taps as usize;
            let err = |y: &[f64]| {
                inner
                    .clone()
                    .map(|n| (y[n] - want[n]).abs())
                    .fold(0.0, f64::max)
                    / scale
            };
            let (e_host, e_device) = (err(&host), err(&device));
            let e_ends = (0..samples)
                .map(|n| (device[n] - want[n]).abs())
                .fold(0.0, f64::max)
                / scale;
            visible(&format!(
                "{NAME} on {target}: shift {s:.4}: max |FIR − FFT| / RMS from {half_taps} \
                 samples in: host {e_host:.2e}, device {e_device:.2e}; at the ends (odd \
                 extension against the periodic signal) {e_ends:.2e}"
            ));
            assert!(e_host < 1e-6, "seed {seed} shift {s}: host {e_host}");
            assert!(e_device < 1e-5, "seed {seed} shift {s}: device {e_device}");
        }
    });
}

#[test]
fn a_samples_bits_do_not_depend_on_the_window() {
    const NAME: &str = "phase_shift_bits_do_not_depend_on_the_window";
    for_each_runtime(NAME, |target, client| {
        let (seed, mut rng) = test_rng(NAME);
        let (channels, half_taps) = (2, 16usize);
        // A recording of 3000 samples whose segment 1 is 1000..2600.
        let total = 3000;
        let segment = 1000u64..2600;
        let recording: Vec<Vec<f64>> = (0..channels)
            .map(|_| {
                let dc = rng.random_range(-500.0..500.0);
                sinusoids(&mut rng, total, 0.45, dc)
            })
            .collect();
        let shifts: Vec<f64> = (0..channels).map(|_| rng.random_range(0.0..1.0)).collect();
        let mut stage = PhaseShiftStage::with_shifts(client, &shifts, half_taps as u32).unwrap();
        // Rows of recording samples `origin..origin + stride`, producing recording samples
        // `from..to`.
        let mut window = |origin: u64, stride: usize, from: u64, to: u64| {
            let rows: Vec<f32> = recording
                .iter()
                .flat_map(|r| as_f32(&r[origin as usize..origin as usize + stride]))
                .collect();
            let span = Span {
                channels,
                stride,
                origin,
                segment: segment.clone(),
                produce: (from - origin) as usize..(to - origin) as usize,
            };
            let out = run(client, &mut stage, &rows, &span);
            (origin, stride, out)
        };
        // The whole segment at once, rows exactly the segment.
        let reference = window(1000, 1600, 1000, 2600);
        let others = [
            // Rows reaching into the neighbouring segments (their samples must be ignored).
            window(900, 1800, 1000, 2600),
            // Pieces with their halos, ends included.
            window(1000, 437 + half_taps, 1000, 1437),
            window(1437 - half_taps as u64, 600 + 2 * half_taps, 1437, 2037),
            window(2037 - half_taps as u64, 563 + half_taps, 2037, 2600),
            window(2037 - half_taps as u64, 700, 2037, 2600),
            // A single sample in the middle and the last one.
            window(1500 - half_taps as u64, 2 * half_taps + 1, 1500, 1501),
            window(2599 - half_taps as u64, 200, 2599, 2600),
        ];
        let at = |(origin, stride, out): &(u64, usize, Vec<f32>), c: usize, s: u64| {
            let local = s.checked_sub(*origin)? as usize;
            (local < *stride).then(|| out[c * stride + local])
        };
        let mut compared = 0;
        for other in &others {
            for c in 0..channels {
                for s in segment.clone() {
                    if let Some(v) = at(other, c, s).filter(|v| !v.is_nan()) {
                        let r = at(&reference, c, s).unwrap();
                        assert_eq!(
                            v.to_bits(),
                            r.to_bits(),
                            "seed {seed}: channel {c} sample {s} of the window at {}: {v} vs {r}",
                            other.0
                        );
                        compared += 1;
                    }
                }
            }
        }
        visible(&format!(
            "{NAME} on {target}: {compared} samples from 7 windows equal the whole segment's bits"
        ));
        assert!(compared >= 2 * 1600 * 2);

        // A row that cuts the context short inside the segment is refused.
        let rows = vec![0.0f32; channels * 100];
        let short = Span {
            channels,
            stride: 100,
            origin: 1200,
            segment: segment.clone(),
            produce: 5..95,
        };
        let input = upload(client, &rows);
        let err = stage.launch(&input, &input.clone(), &short).unwrap_err();
        assert!(err.to_string().contains("needs samples"), "{err}");
    });
}

#[test]
fn segment_ends_are_the_odd_extension() {
    const NAME: &str = "phase_shift_segment_ends_are_the_odd_extension";
    for_each_runtime(NAME, |target, client| {
        let (seed, mut rng) = test_rng(NAME);
        let half_taps = 12u32;
        for length in [700usize, 20, 3, 1] {
            let x = sinusoids(&mut rng, length, 0.3, 800.0);
            let shifts = [rng.random_range(0.0..1.0)];
            let mut stage = PhaseShiftStage::with_shifts(client, &shifts, half_taps).unwrap();
            // The segment sits in the middle of a row of other segments' samples.
            let mut row = vec![1e4f32; 50];
            row.extend(as_f32(&x));
            row.extend(vec![-1e4f32; 50]);
            let span = Span {
                channels: 1,
                stride: row.len(),
                origin: 5000,
                segment: 5050..5050 + length as u64,
                produce: 50..50 + length,
            };
            let got = run(client, &mut stage, &row, &span);
            let want = shift::host(&as_f64(&row[50..50 + length]), shifts[0], half_taps);
            let worst = (0..length)
                .map(|n| (f64::from(got[50 + n]) - want[n]).abs())
                .fold(0.0, f64::max);
            visible(&format!(
                "{NAME} on {target}: segment of {length}: max |device − host| {worst:.2e}"
            ));
            assert!(worst < 5e-4, "seed {seed} length {length}: {worst}");
            assert!(
                got[..50]
                    .iter()
                    .chain(&got[50 + length..])
                    .all(|v| v.is_nan())
            );
        }
    });
}
