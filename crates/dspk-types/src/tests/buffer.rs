//! Tests of buffers.
