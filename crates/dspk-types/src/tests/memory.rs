//! Tests of the in-memory recording: construction checks and reads against hand indexing.

use super::*;
use crate::conformance::SplitMix64;
use crate::{ChannelInfo, SignalUnit};

fn rate() -> SampleRate {
    SampleRate::from_ratio(30_000, 1).expect("30 kHz is a valid rate")
}

#[test]
fn construction_checks_format_order_and_length() {
    let info = RecordingInfo::new(
        "r",
        3,
        4,
        rate(),
        SampleFormat::F32,
        MemoryOrder::ChannelMajor,
    );
    assert!(MemoryRecording::new(info.clone(), vec![0.5; 12]).is_ok());
    match MemoryRecording::new(info.clone(), vec![0.5; 11]) {
        Err(DspError::ShapeMismatch {
            expected,
            actual,
            what,
        }) => {
            assert_eq!((expected, actual), (12, 11));
            assert!(what.contains("3 channels × 4 samples"), "{what}");
        }
        other => panic!("expected a shape mismatch, got {other:?}"),
    }
    let mut i16_info = info.clone();
    i16_info.format = SampleFormat::I16;
    assert!(matches!(
        MemoryRecording::new(i16_info, vec![0.0; 12]),
        Err(DspError::UnsupportedFormat(m)) if m.contains("int16")
    ));
    let mut tm = info;
    tm.order = MemoryOrder::TimeMajor;
    assert!(matches!(
        MemoryRecording::new(tm, vec![0.0; 12]),
        Err(DspError::InvalidConfig(m)) if m.contains("time-major")
    ));
    match MemoryRecording::from_channels(
        "r",
        rate(),
        vec![vec![1.0; 5], vec![1.0; 5], vec![1.0; 4]],
    ) {
        Err(DspError::ShapeMismatch {
            expected,
            actual,
            what,
        }) => {
            assert_eq!((expected, actual), (5, 4));
            assert!(what.contains("channel 2"), "{what}");
        }
        other => panic!("expected a shape mismatch, got {other:?}"),
    }
}

#[test]
fn reads_index_the_data_and_apply_gain_and_offset() {
    let mut rng = SplitMix64::new(0xC0FFEE);
    let (channels, samples) = (5usize, 300usize);
    let data: Vec<f32> = (0..channels * samples)
        .map(|_| (rng.unit_f64() * 100.0 - 50.0) as f32)
        .collect();
    let mut info = RecordingInfo::new(
        "r",
        channels,
        samples as u64,
        rate(),
        SampleFormat::F32,
        MemoryOrder::ChannelMajor,
    );
    for (c, ch) in info.channels.iter_mut().enumerate() {
        *ch = ChannelInfo {
            name: format!("e{c}"),
            gain: 0.5 + c as f32,
            offset: -(c as f32) * 3.0,
            unit: SignalUnit::Microvolt,
            kind: crate::ChannelKind::Signal,
        };
    }
    let rec = MemoryRecording::new(info, data.clone()).unwrap();
    assert_eq!(rec.data(), &data[..]);
    assert_eq!(rec.channel(3).unwrap(), &data[900..1200]);
    assert_eq!(
        rec.channel(5),
        Err(DspError::InvalidChannel { index: 5, count: 5 })
    );
    for _ in 0..50 {
        let a = rng.below(samples as u64 + 1);
        let b = rng.in_range(a..samples as u64 + 1);
        let picks: Vec<usize> = (0..1 + rng.below(7))
            .map(|_| rng.below(channels as u64) as usize)
            .collect();
        let n = (b - a) as usize;
        let mut out = vec![0f32; picks.len() * n];
        rec.read(&picks, a..b, &mut out).unwrap();
        let mut bytes = vec![0u8; 4 * picks.len() * n];
        rec.read_stored(&picks, a..b, &mut bytes).unwrap();
        for (row, &c) in picks.iter().enumerate() {
            for s in 0..n {
                let stored = data[c * samples + a as usize + s];
                let want = stored * (0.5 + c as f32) + -(c as f32) * 3.0;
                assert_eq!(
                    out[row * n + s],
                    want,
                    "channel {c} sample {}",
                    a as usize + s
                );
                let k = 4 * (row * n + s);
                assert_eq!(
                    f32::from_le_bytes(bytes[k..k + 4].try_into().unwrap()),
                    stored
                );
            }
        }
    }
    let mut all = vec![0f32; channels * 10];
    assert_eq!(
        rec.read_native(290..300, &mut all).unwrap(),
        MemoryOrder::ChannelMajor
    );
    assert_eq!(all[10 * 4 + 9], data[4 * samples + 299] * 4.5 - 12.0);
    let (info, back) = rec.into_parts();
    assert_eq!(back, data);
    assert_eq!(info.channels[2].name, "e2");
}
