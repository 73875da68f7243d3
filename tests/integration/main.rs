//! dspk integration tests.
