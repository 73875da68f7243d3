//! 32-bit element limits and the binding check, given a binding size.

use super::*;

#[test]
fn device_elements_multiplies_and_refuses_what_32_bits_cannot_index() {
    assert_eq!(device_elements("w", &[384, 30_000]).unwrap(), 11_520_000);
    assert_eq!(device_elements("w", &[]).unwrap(), 1);
    let err = device_elements("decoded window", &[65_536, 65_536]).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("decoded window") && text.contains("4294967296"),
        "{text}"
    );
    assert!(device_elements("w", &[usize::MAX, 3]).is_err());
    assert!(
        u64::from(device_elements("w", &[MAX_DEVICE_ELEMENTS as usize]).unwrap())
            == MAX_DEVICE_ELEMENTS
    );
}

#[test]
fn the_window_that_fits_is_the_largest_that_fits() {
    let binding = 128u64 << 20;
    for format in SampleFormat::ALL {
        for channels in [1usize, 3, 384, 385] {
            let fit = max_window_samples_with(binding, channels, format) as usize;
            assert!(fit > 0);
            let per = channels * format.bytes().max(4);
            assert!((fit * per) as u64 <= binding, "{format} {channels}");
            assert!(((fit + 1) * per) as u64 > binding, "{format} {channels}");
            assert!(stored_window_bytes(channels, fit, format).unwrap() <= binding);
            check_window_fits_with(binding, channels, fit, format).unwrap();
            let err = check_window_fits_with(binding, channels, fit + 1, format).unwrap_err();
            let text = err.to_string();
            assert!(
                text.contains(&format!("at most {fit} samples per window fit")),
                "{text}"
            );
            assert!(text.contains(&binding.to_string()), "{text}");
        }
    }
    assert_eq!(max_window_samples_with(binding, 0, SampleFormat::I16), 0);
}

#[test]
fn thirty_two_bit_indexing_caps_the_window_on_a_huge_binding() {
    let fit = max_window_samples_with(u64::MAX, 2, SampleFormat::I16);
    assert_eq!(fit, MAX_DEVICE_ELEMENTS / 2);
    let fit = max_window_samples_with(u64::MAX, 2, SampleFormat::F64);
    assert_eq!(fit, MAX_DEVICE_ELEMENTS / 4);
}

#[test]
fn stored_bytes_are_padded_to_words() {
    assert_eq!(stored_window_bytes(3, 7, SampleFormat::I8).unwrap(), 24);
    assert_eq!(stored_window_bytes(3, 7, SampleFormat::I16).unwrap(), 44);
    assert_eq!(stored_window_bytes(3, 7, SampleFormat::F64).unwrap(), 168);
    assert_eq!(stored_window_bytes(1, 1, SampleFormat::I8).unwrap(), 4);
}
