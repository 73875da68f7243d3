//! Tests of progress.
