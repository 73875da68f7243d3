//! Tests of exact sample rates, times and time ranges.

use std::time::Duration;

use proptest::prelude::*;

use super::*;

/// Euclid's gcd, independent of num-rational, for oracles.
fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

fn reduced(n: u128, d: u128) -> (u128, u128) {
    let g = gcd(n, d);
    (n / g, d / g)
}

/// The rates the issue names, with their exact fractions computed from the typed decimal.
fn named_rates() -> Vec<(f64, u64, u64)> {
    let cases: [(f64, u128, u128); 5] = [
        (30000.0, 30000, 1),
        (30000.12, 3000012, 100),
        (24414.0625, 244140625, 10_000),
        (29999.4325, 299994325, 10_000),
        (30000.305042016807, 30000305042016807, 1_000_000_000_000),
    ];
    cases
        .iter()
        .map(|&(hz, n, d)| {
            let (n, d) = reduced(n, d);
            (hz, n as u64, d as u64)
        })
        .collect()
}

fn rate(n: u64, d: u64) -> SampleRate {
    SampleRate::from_ratio(n, d).expect("test rates are positive")
}

fn time(n: u128, d: u128) -> RationalTime {
    RationalTime::new(n, d).expect("test times have a denominator")
}

fn is_invalid_rate(r: DspResult<SampleRate>) -> bool {
    matches!(r, Err(DspError::InvalidSampleRate { .. }))
}

fn any_rate() -> impl Strategy<Value = SampleRate> {
    prop_oneof![
        prop::sample::select(named_rates()).prop_map(|(_, n, d)| rate(n, d)),
        (1u64.., 1u64..).prop_map(|(n, d)| rate(n, d)),
        (1u64..1_000_000, 1u64..10_000).prop_map(|(n, d)| rate(n, d)),
    ]
}

/// Times whose parts stay below 2^62, so that the oracles' cross products fit in u128.
fn any_time() -> impl Strategy<Value = RationalTime> {
    prop_oneof![
        (0u64..(1 << 62), 1u64..(1 << 62)).prop_map(|(n, d)| time(n.into(), d.into())),
        (0u64..1_000_000, 1u64..1000).prop_map(|(n, d)| time(n.into(), d.into())),
    ]
}

// ---- SampleRate ----------------------------------------------------------------------------

#[test]
fn sample_rate_keeps_the_typed_decimal() {
    assert_eq!(SampleRate::new(30000.12).unwrap().as_ratio(), (750003, 25));
    assert_eq!(
        SampleRate::new(24414.0625).unwrap().as_ratio(),
        (390625, 16)
    );
    assert_eq!(
        SampleRate::new(29999.4325).unwrap().as_ratio(),
        (11999773, 400)
    );
    assert_eq!(
        SampleRate::new(30000.305042016807).unwrap().as_ratio(),
        (30000305042016807, 1_000_000_000_000)
    );
    for (hz, n, d) in named_rates() {
        assert_eq!(SampleRate::new(hz).unwrap().as_ratio(), (n, d), "rate {hz}");
    }
}

#[test]
fn sample_rate_refuses_non_positive_and_non_finite() {
    for hz in [
        0.0,
        -0.0,
        -1.0,
        -30000.12,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ] {
        let r = SampleRate::new(hz);
        assert!(is_invalid_rate(r.clone()), "{hz} gave {r:?}");
    }
    let msg = SampleRate::new(-5.5).unwrap_err().to_string();
    assert!(msg.contains("-5.5"), "{msg}");
    assert!(is_invalid_rate(SampleRate::from_ratio(0, 7)));
    assert!(is_invalid_rate(SampleRate::from_ratio(7, 0)));
    // Too small to hold as u64/u64 is refused, not truncated.
    assert!(is_invalid_rate(SampleRate::new(1e-30)));
    assert!(is_invalid_rate(SampleRate::new(f64::MIN_POSITIVE)));
}

#[test]
fn sample_rate_accessors() {
    let r = SampleRate::new(30000.12).unwrap();
    assert!((r.rate_hz() - 30000.12).abs() < 1e-9);
    assert!((r.nyquist_hz() - 15000.06).abs() < 1e-9);
    assert!((r.period_seconds() - 1.0 / 30000.12).abs() < 1e-15);
    // 750003 samples at 750003/25 Hz last exactly 25 s.
    assert_eq!(r.duration_for_samples(750003).unwrap(), time(25, 1));
    assert_eq!(r.samples_for_duration(time(25, 1)).unwrap(), 750003);
    // Just under 1 s at 30000.12 Hz holds 30000 whole samples (floor of 30000.12 - tiny).
    assert_eq!(
        r.samples_for_duration(time(999_999, 1_000_000)).unwrap(),
        30000
    );
}

proptest! {
    #[test]
    fn from_ratio_reduces(n in 1u64.., d in 1u64..) {
        let (rn, rd) = reduced(n.into(), d.into());
        prop_assert_eq!(rate(n, d).as_ratio(), (rn as u64, rd as u64));
        let k = 7u64;
        if let (Some(kn), Some(kd)) = (n.checked_mul(k), d.checked_mul(k)) {
            prop_assert_eq!(rate(kn, kd), rate(n, d));
        }
    }

    #[test]
    fn sample_rate_display_from_str_round_trip(r in any_rate()) {
        let text = r.to_string();
        prop_assert!(text.ends_with(" Hz"), "{}", text);
        prop_assert_eq!(text.parse::<SampleRate>().unwrap(), r);
        prop_assert_eq!(text.trim_end_matches(" Hz").parse::<SampleRate>().unwrap(), r);
    }

    #[test]
    fn sample_rate_json_round_trip(r in any_rate()) {
        let json = serde_json::to_string(&r).unwrap();
        prop_assert_eq!(serde_json::from_str::<SampleRate>(&json).unwrap(), r);
    }

    #[test]
    fn sample_rate_new_of_a_typed_decimal(int in 1u64..100_000, frac in 0u64..10_000) {
        // "int.frac" with four decimals, parsed by Rust as f64, reads back exactly.
        let text = format!("{int}.{frac:04}");
        let hz: f64 = text.parse().unwrap();
        let (n, d) = reduced(u128::from(int) * 10_000 + u128::from(frac), 10_000);
        prop_assert_eq!(SampleRate::new(hz).unwrap().as_ratio(), (n as u64, d as u64));
    }
}

#[test]
fn sample_rate_display_forms() {
    assert_eq!(rate(30000, 1).to_string(), "30000 Hz");
    assert_eq!(
        SampleRate::new(24414.0625).unwrap().to_string(),
        "24414.0625 Hz"
    );
    assert_eq!(
        SampleRate::new(30000.12).unwrap().to_string(),
        "30000.12 Hz"
    );
    assert_eq!(rate(1, 3).to_string(), "1/3 Hz");
    assert_eq!(
        " 750003/25 hz ".parse::<SampleRate>().unwrap().as_ratio(),
        (750003, 25)
    );
    for bad in ["", "Hz", "abc", "-3", "0", "0/5", "5/0", "1e3", "3.4.5"] {
        assert!(is_invalid_rate(bad.parse::<SampleRate>()), "{bad:?}");
    }
}

#[test]
fn sample_rate_serde_forms() {
    let r = SampleRate::new(30000.12).unwrap();
    assert_eq!(serde_json::to_string(&r).unwrap(), "\"30000.12\"");
    assert_eq!(
        serde_json::from_str::<SampleRate>("30000.12")
            .unwrap()
            .as_ratio(),
        (750003, 25)
    );
    assert_eq!(
        serde_json::from_str::<SampleRate>("30000").unwrap(),
        rate(30000, 1)
    );
    assert_eq!(
        serde_json::from_str::<SampleRate>("\"750003/25\"").unwrap(),
        r
    );
    for bad in ["0", "-1", "-30000.5", "\"abc\"", "null", "\"0\""] {
        assert!(serde_json::from_str::<SampleRate>(bad).is_err(), "{bad}");
    }
}

// ---- RationalTime ---------------------------------------------------------------------------

#[test]
fn round_trip_at_named_rates_and_edges() {
    let indices = [
        0u64,
        1,
        2,
        29_999,
        30_000,
        1_080_000_000,
        (1 << 40) - 1,
        1 << 40,
        u64::MAX,
    ];
    for (_, n, d) in named_rates() {
        let r = rate(n, d);
        for i in indices {
            let t = RationalTime::from_samples(i, r).unwrap();
            assert_eq!(t.to_sample_index(r).unwrap(), i, "sample {i} at {r}");
            // The exact time is i * d / n.
            assert_eq!(
                t.as_ratio(),
                reduced(u128::from(i) * u128::from(d), u128::from(n))
            );
        }
    }
}

proptest! {
    #[test]
    fn sample_time_round_trip(i in 0u64..(1 << 40), r in any_rate()) {
        let t = RationalTime::from_samples(i, r).unwrap();
        prop_assert_eq!(t.to_sample_index(r).unwrap(), i);
    }

    #[test]
    fn sample_time_round_trip_any_index(i in any::<u64>(), r in any_rate()) {
        let t = RationalTime::from_samples(i, r).unwrap();
        prop_assert_eq!(t.to_sample_index(r).unwrap(), i);
    }

    #[test]
    fn to_sample_index_floors(i in 0u64..(1 << 40), r in any_rate()) {
        let (n, d) = r.as_ratio();
        // The time of sample i+1 is (i+1)·d/n; ((i+1)·d − 1)/n is the largest time below it
        // with that denominator.
        let next = (u128::from(i) + 1) * u128::from(d);
        let before = time(next - 1, n.into());
        prop_assert_eq!(before.to_sample_index(r).unwrap(), i);
        prop_assert_eq!(time(next, n.into()).to_sample_index(r).unwrap(), i + 1);
    }

    #[test]
    fn add_then_sub_is_exact(a in any_time(), b in any_time()) {
        let sum = a.checked_add(b).unwrap();
        prop_assert_eq!(sum.checked_sub(b).unwrap(), a);
        prop_assert_eq!(sum.checked_sub(a).unwrap(), b);
        prop_assert_eq!(b.checked_add(a).unwrap(), sum);
        // Oracle: an/ad + bn/bd = (an·bd + bn·ad) / (ad·bd), reduced.
        let ((an, ad), (bn, bd)) = (a.as_ratio(), b.as_ratio());
        prop_assert_eq!(sum.as_ratio(), reduced(an * bd + bn * ad, ad * bd));
        prop_assert!(sum >= a && sum >= b);
    }

    #[test]
    fn sub_of_later_is_an_error(a in any_time(), b in any_time()) {
        prop_assume!(a != b);
        let (lo, hi) = if a < b { (a, b) } else { (b, a) };
        prop_assert!(lo.checked_sub(hi).is_err());
        prop_assert!(hi.checked_sub(lo).unwrap() > RationalTime::ZERO);
        prop_assert_eq!(lo.checked_sub(lo).unwrap(), RationalTime::ZERO);
    }

    #[test]
    fn time_display_from_str_round_trip(t in any_time()) {
        let text = t.to_string();
        prop_assert!(text.ends_with(" s"), "{}", text);
        prop_assert_eq!(text.parse::<RationalTime>().unwrap(), t);
        let json = serde_json::to_string(&t).unwrap();
        prop_assert_eq!(serde_json::from_str::<RationalTime>(&json).unwrap(), t);
    }

    #[test]
    fn as_duration_floors_to_nanoseconds(n in any::<u64>(), d in 1u64..) {
        let t = time(n.into(), d.into());
        let (n, d) = t.as_ratio();
        let nanos = (n % d) * 1_000_000_000 / d;
        prop_assert_eq!(t.as_duration(), Duration::new((n / d) as u64, nanos as u32));
    }

    #[test]
    fn from_seconds_f64_of_a_typed_decimal(int in 0u64..1_000_000, frac in 0u64..1_000) {
        let text = format!("{int}.{frac:03}");
        let secs: f64 = text.parse().unwrap();
        let t = RationalTime::from_seconds_f64(secs).unwrap();
        prop_assert_eq!(t.as_ratio(), reduced(u128::from(int) * 1000 + u128::from(frac), 1000));
        prop_assert!((t.as_seconds_f64() - secs).abs() <= secs * 1e-15);
    }
}

#[test]
fn overflow_is_an_error_never_a_wrap() {
    let max = time(u128::MAX, 1);
    assert!(matches!(
        max.checked_add(time(1, 1)),
        Err(DspError::Overflow(_))
    ));
    assert!(matches!(
        max.checked_add(time(1, 3)),
        Err(DspError::Overflow(_))
    ));
    // Huge coprime denominators: their common denominator does not fit in u128.
    let p = time(1, (1u128 << 100) + 1);
    let q = time(1, (1u128 << 100) - 1);
    assert!(matches!(p.checked_add(q), Err(DspError::Overflow(_))));
    assert!(matches!(q.checked_sub(p), Err(DspError::Overflow(_))));
    // A time whose sample index does not fit.
    let r = rate(30000, 1);
    assert!(matches!(max.to_sample_index(r), Err(DspError::Overflow(_))));
    let past_u64 = time(u128::from(u64::MAX) + 1, 30000);
    assert!(matches!(
        past_u64.to_sample_index(r),
        Err(DspError::Overflow(_))
    ));
    assert_eq!(
        time(u128::from(u64::MAX), 30000)
            .to_sample_index(r)
            .unwrap(),
        u64::MAX
    );
}

#[test]
fn sub_below_zero_is_an_error() {
    let e = time(1, 3).checked_sub(time(1, 2)).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("1/3") && msg.contains("0.5"), "{msg}");
}

#[test]
fn from_seconds_f64_is_exact_and_refuses_bad_values() {
    assert_eq!(
        RationalTime::from_seconds_f64(0.1).unwrap().as_ratio(),
        (1, 10)
    );
    assert_eq!(
        RationalTime::from_seconds_f64(1.5).unwrap().as_ratio(),
        (3, 2)
    );
    assert_eq!(
        RationalTime::from_seconds_f64(0.0).unwrap(),
        RationalTime::ZERO
    );
    assert_eq!(
        RationalTime::from_seconds_f64(-0.0).unwrap(),
        RationalTime::ZERO
    );
    assert_eq!(
        RationalTime::from_seconds_f64(36000.0).unwrap().as_ratio(),
        (36000, 1)
    );
    for bad in [-0.1, -1.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        assert!(RationalTime::from_seconds_f64(bad).is_err(), "{bad}");
    }
    // Beyond the exact u128 representation: an error, not a rounded value.
    assert!(RationalTime::from_seconds_f64(1e300).is_err());
    assert!(RationalTime::from_seconds_f64(1e-300).is_err());
}

#[test]
fn time_constructors_and_forms() {
    assert!(RationalTime::new(1, 0).is_err());
    assert_eq!(time(6, 4).as_ratio(), (3, 2));
    assert_eq!(RationalTime::default(), RationalTime::ZERO);
    assert_eq!(RationalTime::ZERO.as_ratio(), (0, 1));
    assert_eq!(time(25, 2).to_string(), "12.5 s");
    assert_eq!(time(1, 3).to_string(), "1/3 s");
    assert_eq!(time(7, 1).to_string(), "7 s");
    assert_eq!(time(1, 1000).to_string(), "0.001 s");
    assert_eq!("12.5".parse::<RationalTime>().unwrap(), time(25, 2));
    assert_eq!(" 1/3 s ".parse::<RationalTime>().unwrap(), time(1, 3));
    assert_eq!(".5s".parse::<RationalTime>().unwrap(), time(1, 2));
    for bad in ["", "s", "-1", "1/0", "abc", "1e3"] {
        assert!(bad.parse::<RationalTime>().is_err(), "{bad:?}");
    }
    assert_eq!(
        serde_json::from_str::<RationalTime>("12").unwrap(),
        time(12, 1)
    );
    assert_eq!(
        serde_json::from_str::<RationalTime>("0.1").unwrap(),
        time(1, 10)
    );
    assert_eq!(
        serde_json::from_str::<RationalTime>("\"1/3\"").unwrap(),
        time(1, 3)
    );
    assert!(serde_json::from_str::<RationalTime>("-2").is_err());
    assert_eq!(serde_json::to_string(&time(1, 3)).unwrap(), "\"1/3\"");
    assert!((time(1, 3).as_seconds_f64() - 1.0 / 3.0).abs() < 1e-16);
}

#[test]
fn as_duration_edges() {
    assert_eq!(time(3, 2).as_duration(), Duration::new(1, 500_000_000));
    assert_eq!(time(1, 3).as_duration(), Duration::new(0, 333_333_333));
    assert_eq!(time(u128::MAX, 1).as_duration(), Duration::MAX);
    // Reduced fractions with a denominator so large that rest · 10^9 would not fit in u128:
    // still exact. (3^78 + 1) / 3^79 = 1/3 + 3^-79, (5·3^79 + 2·3^78 + 1) / 3^79 = 5⅔ + 3^-79.
    let (p78, p79) = (3u128.pow(78), 3u128.pow(79));
    assert!(p79 > 1 << 98);
    assert_eq!(
        time(p78 + 1, p79).as_duration(),
        Duration::new(0, 333_333_333)
    );
    let t = time(5 * p79 + 2 * p78 + 1, p79);
    assert_eq!(t.as_ratio().1, p79);
    assert_eq!(t.as_duration(), Duration::new(5, 666_666_666));
    let just_under = time(u128::MAX - 1, u128::MAX);
    assert_eq!(just_under.as_duration(), Duration::new(0, 999_999_999));
}

// ---- TimeRange ------------------------------------------------------------------------------

#[test]
fn time_range_order_contains_and_duration() {
    let (a, b) = (time(1, 3), time(1, 2));
    assert!(TimeRange::new(b, a).is_err());
    let r = TimeRange::new(a, b).unwrap();
    assert!(r.contains(a) && r.contains(b) && r.contains(time(5, 12)));
    assert!(!r.contains(time(1, 4)) && !r.contains(time(2, 3)));
    assert_eq!(r.duration().unwrap(), time(1, 6));
    let point = TimeRange::new(a, a).unwrap();
    assert!(point.contains(a));
    assert_eq!(point.duration().unwrap(), RationalTime::ZERO);
    // Built by hand the wrong way round, the duration is an error rather than a wrap.
    let reversed = TimeRange { start: b, end: a };
    assert!(reversed.duration().is_err());
}

proptest! {
    #[test]
    fn time_range_laws(a in any_time(), b in any_time(), t in any_time()) {
        let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
        prop_assert_eq!(TimeRange::new(a, b).is_ok(), a <= b);
        let r = TimeRange::new(lo, hi).unwrap();
        prop_assert_eq!(r.contains(t), lo <= t && t <= hi);
        prop_assert_eq!(r.duration().unwrap().checked_add(lo).unwrap(), hi);
        let json = serde_json::to_string(&r).unwrap();
        prop_assert_eq!(serde_json::from_str::<TimeRange>(&json).unwrap(), r);
    }
}

#[test]
fn time_range_deserialize_validates() {
    let ok: TimeRange = serde_json::from_str(r#"{"start": "1/3", "end": 2}"#).unwrap();
    assert_eq!(ok, TimeRange::new(time(1, 3), time(2, 1)).unwrap());
    let err = serde_json::from_str::<TimeRange>(r#"{"start": 3, "end": 2}"#).unwrap_err();
    assert!(err.to_string().contains("after its end"), "{err}");
    assert!(serde_json::from_str::<TimeRange>(r#"{"start": 1, "end": 2, "x": 0}"#).is_err());
    assert!(serde_json::from_str::<TimeRange>(r#"{"start": 1}"#).is_err());
}
