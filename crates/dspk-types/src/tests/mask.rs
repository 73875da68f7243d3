//! Tests of the channel mask.
