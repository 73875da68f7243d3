//! dspk
fn main() {}
