//! The one error type of probe geometry.

/// What is wrong with a probe or with a question asked of it.
///
/// Channels are the recording's channel indices (0-based), the same numbers the probe's
/// lookups take and return.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProbeError {
    /// A probe of no channels at all.
    #[error("a probe needs at least one channel")]
    NoChannels,
    /// A probe whose channels all lack a contact.
    #[error("none of the probe's {channels} channels has a contact")]
    NoContacts {
        /// The probe's channel count.
        channels: usize,
    },
    /// A channel index at or past the probe's channel count.
    #[error("channel {channel} does not exist: the probe describes {count} channels")]
    ChannelOutOfRange {
        /// The channel asked for.
        channel: usize,
        /// The probe's channel count.
        count: usize,
    },
    /// A channel without a contact (a sync or auxiliary channel) asked for its position.
    #[error("channel {channel} has no contact on the probe (a sync or auxiliary channel)")]
    NoContact {
        /// The channel asked for.
        channel: usize,
    },
    /// A contact position that is not a finite number of micrometres.
    #[error("channel {channel}: contact position ({x_um}, {y_um}) µm is not finite")]
    NonFinitePosition {
        /// The channel.
        channel: usize,
        /// Its x.
        x_um: f64,
        /// Its y.
        y_um: f64,
    },
    /// A contact with an empty id.
    #[error("channel {channel}: the contact id is empty")]
    EmptyContactId {
        /// The channel.
        channel: usize,
    },
    /// Two channels on one contact.
    #[error("channels {first} and {second} both name contact '{id}'")]
    DuplicateContactId {
        /// The contact id.
        id: String,
        /// The first channel naming it.
        first: usize,
        /// The second channel naming it.
        second: usize,
    },
    /// A probe-level length that is negative or not finite.
    #[error("{what} {value} µm is not a finite length of 0 or more")]
    BadLength {
        /// Which length (`shank pitch`, `contact width`).
        what: &'static str,
        /// Its value.
        value: f64,
    },
    /// An ADC cycle that cannot be: no ADCs, no channels per ADC, or a cycle shorter than the
    /// channels it samples.
    #[error(
        "ADC cycle of {adcs} ADCs, {channels_per_adc} channels each, {cycle_samples} samples per cycle: \
         counts must be above 0 and the cycle at least as long as the channels it samples"
    )]
    BadAdcCycle {
        /// ADCs on the probe.
        adcs: u32,
        /// Channels each ADC samples in turn.
        channels_per_adc: u32,
        /// Sample slots in one cycle.
        cycle_samples: u32,
    },
    /// A channel that names its ADC on a probe that states no ADC cycle.
    #[error("channel {channel} names an ADC but the probe states no ADC cycle")]
    AdcWithoutCycle {
        /// The channel.
        channel: usize,
    },
    /// A channel's ADC or sample order outside the probe's ADC cycle.
    #[error(
        "channel {channel}: ADC {adc} slot {order} is outside the cycle of {adcs} ADCs and {cycle_samples} slots"
    )]
    AdcSlotOutOfCycle {
        /// The channel.
        channel: usize,
        /// Its ADC.
        adc: u32,
        /// Its sample order within the cycle.
        order: u32,
        /// ADCs on the probe.
        adcs: u32,
        /// Slots in one cycle.
        cycle_samples: u32,
    },
    /// Radii of a neighbourhood that are negative, not finite, or inner past outer.
    #[error("neighbourhood radii {inner_um}..{outer_um} µm: need 0 <= inner < outer, both finite")]
    BadRadii {
        /// The inner radius.
        inner_um: f64,
        /// The outer radius.
        outer_um: f64,
    },
    /// A probe attached to a recording of another channel count.
    #[error("the probe describes {probe} channels but the recording has {recording}")]
    ChannelCountMismatch {
        /// The probe's channel count.
        probe: usize,
        /// The recording's.
        recording: usize,
    },
}
