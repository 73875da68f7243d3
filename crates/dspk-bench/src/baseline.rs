//! The same-run baselines and helpers of the table: host memcpy, PyTorch's pinned upload where
//! it exists, medians and rates, the temporary folder of the synthetic file.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use dspk_device::upload::Staging;

/// Bytes copied by the host memcpy baseline.
const MEMCPY_BYTES: usize = 256 << 20;

/// Repeats of each host figure (the median is reported).
pub(crate) const REPEATS: usize = 3;

/// The median of `v` (the upper one of an even count).
pub(crate) fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// `bytes` in `t`, in GB/s.
pub(crate) fn gbs(bytes: f64, t: Duration) -> f64 {
    bytes / t.as_secs_f64() / 1e9
}

/// Host memcpy bandwidth in GB/s, counting bytes read plus bytes written.
pub(crate) fn memcpy_gbs() -> f64 {
    let src: Vec<u8> = (0..MEMCPY_BYTES).map(|i| (i * 7 + 3) as u8).collect();
    let mut dst = vec![1u8; MEMCPY_BYTES];
    let mut times = Vec::new();
    for _ in 0..=REPEATS {
        let started = Instant::now();
        dst.copy_from_slice(&src);
        times.push(started.elapsed());
        std::hint::black_box(&dst);
    }
    times.remove(0);
    gbs(2.0 * MEMCPY_BYTES as f64, median(times))
}

/// A temporary directory removed when dropped.
pub(crate) struct TempDir(pub(crate) PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// PyTorch's pinned int16 upload + decode (time-major → f32 channel-major × gain), in GB/s of
/// int16 input, where `python3` with CUDA PyTorch exists; `None` elsewhere.
pub(crate) fn pytorch_gbs(channels: usize, samples: usize) -> Option<f64> {
    let script = format!(
        r#"
import time, torch
assert torch.cuda.is_available()
c, n, k = {channels}, {samples}, 8
host = [torch.randint(-2000, 2000, (n, c), dtype=torch.int16).pin_memory() for _ in range(k)]
gain = torch.rand(c, device='cuda')
out = None
for it in range(3):
    torch.cuda.synchronize(); t = time.perf_counter()
    for h in host * 4:
        d = h.to('cuda', non_blocking=True)
        out = (d.t().float() * gain[:, None]).contiguous()
    torch.cuda.synchronize(); dt = time.perf_counter() - t
print(len(host) * 4 * n * c * 2 / dt / 1e9)
"#
    );
    let output = std::process::Command::new("python3")
        .arg("-c")
        .arg(script)
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    String::from_utf8(output.stdout).ok()?.trim().parse().ok()
}

/// How the bench table names an upload path.
pub(crate) fn staging_name(staging: Staging) -> &'static str {
    match staging {
        Staging::HostCached => "host-memory (cached)",
        Staging::HostUncached => "host-memory (uncached)",
        Staging::Mapped => "wgpu mapped",
        Staging::Write => "Client::write",
    }
}
