//! Tests of compute.
