//! Tuning keys (which device, which size class) and the reproducibility guard that pins tuned
//! choices.
//!
//! Kernels that choose between variants by measuring (autotuning) key their choice on
//! [`tune_id`] and [`size_class`]. A measured choice can differ between two runs on a noisy
//! machine, and with it the rounding of float results; code that must reproduce bit for bit
//! (tests comparing two runs, a result written for an audit) holds a [`PinnedChoices`] guard:
//! while one is alive on the thread, [`tuned_choices_pinned`] is `true` and tuned code takes
//! its fixed, documented default instead of measuring.

use std::cell::Cell;
use std::marker::PhantomData;

use cubecl::prelude::*;

/// A key naming the client's device and compiler for tuning caches: the runtime name, the
/// adapter's name and the compilation fingerprint, lowercase, with anything but ASCII letters,
/// digits, `.`, `-` and `_` replaced by `_`.
pub fn tune_id(client: &Client) -> String {
    let identity = &client.properties().identity;
    let raw = format!(
        "{}-{}-{}",
        client.name(),
        identity.name,
        identity.fingerprint
    );
    raw.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect()
}

/// Whether the client's device is a CPU (Mesa's lavapipe, a CPU runtime) rather than a card:
/// CubeCL reports no physical device for one. Kernels whose variants give the same bits
/// (exact selections) may take the variant that suits a CPU's caches there.
pub fn runs_on_cpu(client: &Client) -> bool {
    client.properties().identity.physical.is_none()
}

/// The power-of-two size class of a problem of `n` elements: the smallest power of two at or
/// above `n` (0 for 0; saturating at 2^63 for larger `n`). Problems in one class share a tuned
/// choice.
pub fn size_class(n: u64) -> u64 {
    match n {
        0 => 0,
        n => n.checked_next_power_of_two().unwrap_or(1 << 63),
    }
}

thread_local! {
    static PINNED: Cell<usize> = const { Cell::new(0) };
}

/// While alive, tuned code on this thread uses fixed choices (see the module docs). Guards
/// nest: choices stay pinned until the last one is dropped. Not `Send`: the pin belongs to the
/// thread that took it:
///
/// ```compile_fail
/// fn needs_send<T: Send>(_: T) {}
/// needs_send(dspk_kernels::pin_tuned_choices());
/// ```
#[derive(Debug)]
#[must_use = "choices are pinned only while the guard is alive"]
pub struct PinnedChoices {
    _not_send: PhantomData<*const ()>,
}

impl Drop for PinnedChoices {
    fn drop(&mut self) {
        PINNED.with(|p| p.set(p.get().saturating_sub(1)));
    }
}

/// Pins tuned choices on this thread until the returned guard is dropped.
pub fn pin_tuned_choices() -> PinnedChoices {
    PINNED.with(|p| p.set(p.get() + 1));
    PinnedChoices {
        _not_send: PhantomData,
    }
}

/// Whether a [`PinnedChoices`] guard is alive on this thread.
pub fn tuned_choices_pinned() -> bool {
    PINNED.with(|p| p.get() > 0)
}

#[cfg(test)]
#[path = "tests/tuning.rs"]
mod tests;
