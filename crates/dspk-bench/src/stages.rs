//! P1 (BENCH.md, issue 31): each preprocessing stage's device throughput on one second of a
//! 384-channel Neuropixels-like probe already on the device, against a device copy of the same
//! values measured in the same run — the budget of `dspk preprocess`'s end-to-end target.

use std::time::Duration;

use cubecl::client::Client;
use dspk_kernels::{launch_copy, time_device};
use dspk_ops::whiten::{Covariance, WhiteningMatrix};
use dspk_ops::{Fits, Rows, build};
use dspk_types::{
    AdcCycle, AdcSlot, Contact, DspResult, MemoryOrder, PipelineSpec, Probe, ProbeParts,
    RecordingInfo, SampleFormat, SampleRate, StageSpec,
};

/// Channels of the measured probe.
const CHANNELS: usize = 384;
/// Samples each measured window owns (one second at 30 kHz).
const SAMPLES: usize = 30_000;
/// Timed runs per stage (the median is kept).
const RUNS: usize = 5;

/// One stage's figure.
#[derive(Debug, Clone, PartialEq)]
pub struct StageFigure {
    /// The stage, as its spec says.
    pub stage: String,
    /// Median device time of one window.
    pub time: Duration,
    /// Median device time of copying the window's owned values once.
    pub copy_time: Duration,
    /// Seconds of recording per second of device time.
    pub realtime: f64,
}

const SPECS: &str = r#"
[[stages]]
kind = "filter"
band = "bandpass"
cutoff_hz = [300.0, 6000.0]
order = 5

[[stages]]
kind = "filter"
band = "highpass"
cutoff_hz = [300.0]
order = 3

[[stages]]
kind = "common_reference"

[[stages]]
kind = "common_reference"
scope = "local"

[[stages]]
kind = "phase_shift"

[[stages]]
kind = "whiten"
scope = "local"
neighbours = 32

[[stages]]
kind = "whiten"

[[stages]]
kind = "interpolate_bad"
channels = [10, 100, 200, 300]

[[stages]]
kind = "scale"
output = "int16"
gain = 200.0
"#;

/// A Neuropixels 1.0-like probe: four columns, 20 µm rows, 32 ADCs of 12 channels in 13
/// slots.
fn np1_probe() -> DspResult<Probe> {
    let xs = [16.0, 48.0, 0.0, 32.0];
    let channels = (0..CHANNELS)
        .map(|c| {
            let mut contact = Contact::new(xs[c % 4], 20.0 * (c / 2) as f64, 0, format!("e{c}"));
            contact.adc = Some(AdcSlot {
                adc: (c / 12) as u32,
                order: (c % 12) as u32,
            });
            Some(contact)
        })
        .collect();
    Ok(Probe::new(ProbeParts {
        adc_cycle: Some(AdcCycle {
            adcs: 32,
            channels_per_adc: 12,
            cycle_samples: 13,
        }),
        channels,
        ..ProbeParts::default()
    })?)
}

/// Each stage of a typical chain on `client`'s device, timed alone on one second of 384
/// channels, with a copy of the same values as the baseline.
///
/// # Errors
/// What the device or the stages refuse.
pub fn measure_stages(client: &Client) -> DspResult<Vec<StageFigure>> {
    let mut info = RecordingInfo::new(
        "np1-like",
        CHANNELS,
        (SAMPLES * 4) as u64,
        SampleRate::new(30_000.0)?,
        SampleFormat::I16,
        MemoryOrder::TimeMajor,
    );
    info.probe = Some(np1_probe()?);
    let all = PipelineSpec::from_toml(SPECS)?;
    // A covariance with neighbouring channels correlated, for the whitening stages.
    let mut cov = vec![0.0; CHANNELS * CHANNELS];
    for i in 0..CHANNELS {
        for j in 0..CHANNELS {
            let d = i.abs_diff(j) as f64;
            cov[i * CHANNELS + j] = 100.0 * (-d / 8.0).exp();
        }
    }
    let covariance = Covariance::from_matrix(CHANNELS, &cov, 1)?;
    let mut figures = Vec::new();
    for stage in &all.stages {
        let spec = PipelineSpec {
            block_samples: all.block_samples,
            stages: vec![stage.clone()],
        };
        let mut fits = Fits::default();
        if let StageSpec::Whiten(w) = stage {
            fits.whitening.insert(
                0,
                WhiteningMatrix::fit(&covariance, w, info.probe.as_ref())?,
            );
        }
        let mut chain = build(client, &spec, &info, &fits, 1)?;
        let halo = chain.halo();
        let before = halo.before.min((SAMPLES * 3 / 2) as u64) as usize;
        let after = halo.after.min((SAMPLES * 3 / 2) as u64) as usize;
        let stride = before + SAMPLES + after;
        let values: Vec<u8> = (0..CHANNELS * stride)
            .flat_map(|i| (((i * 7919) % 2001) as f32 - 1000.0).to_le_bytes())
            .collect();
        let input = client.create_from_slice(&values);
        let rows = Rows {
            channels: CHANNELS,
            stride,
            origin: SAMPLES as u64 - before as u64,
            segment: 0..info.samples,
        };
        let valid = before..before + SAMPLES;
        let time = time_device(client, RUNS, || {
            chain.run(&input, &rows, valid.clone()).map(|_| ())
        })?;
        let copy_out = client.empty(CHANNELS * SAMPLES * 4);
        let copy_time = time_device(client, RUNS, || {
            launch_copy(client, &input, &copy_out, CHANNELS * SAMPLES)
        })?;
        figures.push(StageFigure {
            stage: describe(stage),
            time,
            copy_time,
            realtime: 1.0 / time.as_secs_f64(),
        });
    }
    Ok(figures)
}

/// A stage in a few words.
fn describe(stage: &StageSpec) -> String {
    match stage {
        StageSpec::Center(_) => "center (channel means)".into(),
        StageSpec::Filter(f) => format!(
            "filter {:?} {:?} Hz order {} ({:?})",
            f.band, f.cutoff_hz, f.order, f.direction
        )
        .to_lowercase(),
        StageSpec::CommonReference(r) => {
            format!("common reference {:?} {:?}", r.operator, r.scope).to_lowercase()
        }
        StageSpec::PhaseShift(p) => format!("phase shift ({} taps each side)", p.half_taps),
        StageSpec::Whiten(w) => match w.neighbours {
            Some(k) => format!("whiten local ({k} nearest)"),
            None => "whiten global (dense)".into(),
        },
        StageSpec::InterpolateBad(i) => format!("interpolate {} bad channels", i.channels.len()),
        StageSpec::SpatialHighpass(s) => format!(
            "spatial high-pass per shank (gain over {} samples)",
            s.agc_window_samples
        ),
        StageSpec::Scale(s) => format!("scale to {:?} ×{}", s.output, s.gain).to_lowercase(),
    }
}
