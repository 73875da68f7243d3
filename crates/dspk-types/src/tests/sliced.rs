//! Tests (in progress).
