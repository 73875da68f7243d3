//! Size classes and the pin guard.

use super::*;

#[test]
fn size_classes_are_the_next_power_of_two() {
    assert_eq!(size_class(0), 0);
    assert_eq!(size_class(1), 1);
    assert_eq!(size_class(2), 2);
    assert_eq!(size_class(3), 4);
    assert_eq!(size_class(1024), 1024);
    assert_eq!(size_class(1025), 2048);
    assert_eq!(size_class(u64::MAX), 1 << 63);
    for n in 1..5000u64 {
        let c = size_class(n);
        assert!(c.is_power_of_two() && c >= n && c / 2 < n, "{n} -> {c}");
    }
}

#[test]
fn pins_nest_and_belong_to_their_thread() {
    assert!(!tuned_choices_pinned());
    let outer = pin_tuned_choices();
    assert!(tuned_choices_pinned());
    {
        let _inner = pin_tuned_choices();
        assert!(tuned_choices_pinned());
        std::thread::spawn(|| assert!(!tuned_choices_pinned()))
            .join()
            .unwrap();
    }
    assert!(
        tuned_choices_pinned(),
        "dropping the inner guard keeps the outer pin"
    );
    drop(outer);
    assert!(!tuned_choices_pinned());
}
