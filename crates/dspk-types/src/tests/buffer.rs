//! Tests of memory orders, buffer layouts and signal chunks.

use std::collections::HashSet;

use proptest::prelude::*;

use super::*;

fn rate() -> SampleRate {
    SampleRate::from_ratio(30000, 1).expect("30 kHz is a valid rate")
}

/// A value that differs for every `(channel, sample)`.
fn value(channel: usize, sample: usize) -> f32 {
    (channel * 1000 + sample) as f32 + 0.25
}

/// A buffer written in the order the layout names, by nested loops: the oracle for
/// `linear_index`.
fn written_in_order(channels: usize, samples: usize, order: MemoryOrder) -> Vec<f32> {
    let mut out = Vec::with_capacity(channels * samples);
    match order {
        MemoryOrder::ChannelMajor => {
            for c in 0..channels {
                for s in 0..samples {
                    out.push(value(c, s));
                }
            }
        }
        MemoryOrder::TimeMajor => {
            for s in 0..samples {
                for c in 0..channels {
                    out.push(value(c, s));
                }
            }
        }
    }
    out
}

fn any_order() -> impl Strategy<Value = MemoryOrder> {
    prop_oneof![
        Just(MemoryOrder::ChannelMajor),
        Just(MemoryOrder::TimeMajor)
    ]
}

#[test]
fn total_elements_overflow_is_an_error() {
    let ok = BufferLayout::new(384, 30000, MemoryOrder::TimeMajor);
    assert_eq!(ok.total_elements().unwrap(), 11_520_000);
    let big = BufferLayout::new(usize::MAX / 2 + 1, 2, MemoryOrder::ChannelMajor);
    let err = big.total_elements().unwrap_err();
    assert!(matches!(err, DspError::Overflow(_)), "{err:?}");
    assert!(
        err.to_string().contains(&(usize::MAX / 2 + 1).to_string()),
        "{err}"
    );
    let zeros = SignalChunk::zeros(big, rate(), RationalTime::ZERO);
    assert!(matches!(zeros, Err(DspError::Overflow(_))));
    assert_eq!(
        BufferLayout::new(0, 7, MemoryOrder::TimeMajor)
            .total_elements()
            .unwrap(),
        0
    );
}

proptest! {
    #[test]
    fn linear_index_is_a_bijection(channels in 1usize..40, samples in 1usize..60, order in any_order()) {
        let layout = BufferLayout::new(channels, samples, order);
        let total = layout.total_elements().unwrap();
        let data = written_in_order(channels, samples, order);
        let mut seen = HashSet::new();
        for c in 0..channels {
            for s in 0..samples {
                let i = layout.linear_index(c, s);
                prop_assert!(i < total);
                prop_assert!(seen.insert(i), "index {} hit twice", i);
                prop_assert_eq!(data[i], value(c, s));
            }
        }
        prop_assert_eq!(seen.len(), total);
    }

    #[test]
    fn set_then_get(
        channels in 1usize..20,
        samples in 1usize..50,
        order in any_order(),
        writes in prop::collection::vec((any::<usize>(), any::<usize>(), -1e6f32..1e6), 1..50),
    ) {
        let layout = BufferLayout::new(channels, samples, order);
        let mut chunk = SignalChunk::zeros(layout, rate(), RationalTime::ZERO).unwrap();
        let mut oracle = vec![vec![0f32; samples]; channels];
        for &(c, s, v) in &writes {
            let (c, s) = (c % channels, s % samples);
            chunk.set(c, s, v).unwrap();
            oracle[c][s] = v;
        }
        for (c, row) in oracle.iter().enumerate() {
            for (s, &v) in row.iter().enumerate() {
                prop_assert_eq!(chunk.get(c, s).unwrap(), v);
            }
        }
    }
}

#[test]
fn chunk_new_checks_the_length() {
    let layout = BufferLayout::new(3, 4, MemoryOrder::ChannelMajor);
    let err = SignalChunk::new(vec![1.0; 11], layout, rate(), RationalTime::ZERO).unwrap_err();
    assert_eq!(err, DspError::shape("signal chunk data", 12, 11));
    assert!(SignalChunk::new(vec![1.0; 13], layout, rate(), RationalTime::ZERO).is_err());
    let start = RationalTime::new(1, 3).unwrap();
    let data = written_in_order(3, 4, MemoryOrder::ChannelMajor);
    let chunk = SignalChunk::new(data.clone(), layout, rate(), start).unwrap();
    assert_eq!(chunk.data(), &data[..]);
    assert_eq!(chunk.layout(), layout);
    assert_eq!(chunk.sample_rate(), rate());
    assert_eq!(chunk.start_time(), start);
    assert_eq!(chunk.get(2, 3).unwrap(), value(2, 3));
    let mut chunk = chunk;
    chunk.data_mut()[0] = -7.5;
    assert_eq!(chunk.get(0, 0).unwrap(), -7.5);
    assert_eq!(chunk.into_data()[1..], data[1..]);
}

#[test]
fn get_and_set_out_of_range_are_errors() {
    let layout = BufferLayout::new(3, 4, MemoryOrder::TimeMajor);
    let mut chunk = SignalChunk::zeros(layout, rate(), RationalTime::ZERO).unwrap();
    assert_eq!(
        chunk.get(3, 0).unwrap_err(),
        DspError::InvalidChannel { index: 3, count: 3 }
    );
    assert_eq!(
        chunk.get(0, 4).unwrap_err(),
        DspError::SampleRange {
            start: 4,
            end: 5,
            total: 4
        }
    );
    assert_eq!(
        chunk.set(9, 0, 1.0).unwrap_err(),
        DspError::InvalidChannel { index: 9, count: 3 }
    );
    assert!(matches!(
        chunk.set(0, 4, 1.0),
        Err(DspError::SampleRange { .. })
    ));
    // The largest index is an error too, not an arithmetic panic.
    assert!(matches!(
        chunk.get(0, usize::MAX),
        Err(DspError::SampleRange { .. })
    ));
    assert!(matches!(
        chunk.get(usize::MAX, 0),
        Err(DspError::InvalidChannel { .. })
    ));
    assert!(
        chunk.data().iter().all(|&v| v == 0.0),
        "refused writes change nothing"
    );
}

#[test]
fn memory_order_names() {
    for order in [MemoryOrder::ChannelMajor, MemoryOrder::TimeMajor] {
        assert_eq!(order.to_string().parse::<MemoryOrder>().unwrap(), order);
        let json = serde_json::to_string(&order).unwrap();
        assert_eq!(json, format!("\"{}\"", order.name()));
        assert_eq!(serde_json::from_str::<MemoryOrder>(&json).unwrap(), order);
    }
    assert_eq!(
        "Interleaved".parse::<MemoryOrder>().unwrap(),
        MemoryOrder::TimeMajor
    );
    assert_eq!(
        " CHANNEL_MAJOR ".parse::<MemoryOrder>().unwrap(),
        MemoryOrder::ChannelMajor
    );
    let err = "row-major".parse::<MemoryOrder>().unwrap_err().to_string();
    assert!(
        err.contains("row-major") && err.contains("channel-major"),
        "{err}"
    );
    assert_eq!(MemoryOrder::default(), MemoryOrder::ChannelMajor);
}
