//! Tests of error.
