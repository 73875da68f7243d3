//! Process exit with an open device, each case in a child process (`dspk-probe`).

use std::process::Output;

use dspk_tests::{field, run_probe};
use dspk_types::{ComputeTarget, RUNTIME_ENV};

use crate::device::{probe, text};

/// Runs the probe on wgpu with the exit teardown traced; `None` (after a visible SKIP line)
/// when wgpu has no device and the run does not require it.
fn probe_on_wgpu(args: &[&str]) -> Option<Output> {
    if !ComputeTarget::for_tests().contains(&ComputeTarget::Wgpu) {
        dspk_tests::visible("SKIP exit test: wgpu is not among the tested runtimes");
        return None;
    }
    let output = run_probe(
        &probe(),
        args,
        &[
            (RUNTIME_ENV, Some("wgpu")),
            (dspk_device::TRACE_ENV, Some("1")),
        ],
        None,
    );
    let (_, stderr) = text(&output);
    if stderr.contains("found no usable device") && !ComputeTarget::Wgpu.required_by_tests() {
        dspk_tests::visible(&format!("SKIP exit test on wgpu: {stderr}"));
        return None;
    }
    Some(output)
}

/// The output is complete: the kernel's result and then the final line.
fn assert_output_intact(stdout: &str) {
    let result = stdout
        .find("result ok")
        .unwrap_or_else(|| panic!("no result: {stdout}"));
    let done = stdout
        .find("done unix_ns=")
        .unwrap_or_else(|| panic!("no final line: {stdout}"));
    assert!(result < done, "{stdout}");
    assert!(stdout.ends_with('\n'), "{stdout:?}");
}

#[test]
fn returning_from_main_with_a_device_open_exits_zero_with_output_intact() {
    let Some(output) = probe_on_wgpu(&["run"]) else {
        return;
    };
    let (stdout, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(0), "{stdout}\n{stderr}");
    assert_output_intact(&stdout);
    // The exit handler ran and released the device the program opened.
    assert!(
        stderr.contains("exit teardown released 1 wgpu device(s)")
            && stderr.contains("0 still in use")
            && stderr.contains("(status 0)"),
        "{stderr}"
    );
}

#[test]
fn process_exit_keeps_its_status_through_the_teardown() {
    let Some(output) = probe_on_wgpu(&["exit", "3"]) else {
        return;
    };
    let (stdout, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(3), "{stdout}\n{stderr}");
    assert_output_intact(&stdout);
    assert!(
        stderr.contains("exit teardown released 1 wgpu device(s)") && stderr.contains("(status 3)"),
        "{stderr}"
    );
}

#[test]
fn exit_with_a_client_still_held_ends_promptly_with_its_status() {
    let start = std::time::Instant::now();
    let Some(output) = probe_on_wgpu(&["exit-held", "5"]) else {
        return;
    };
    let elapsed = start.elapsed();
    let (stdout, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(5), "{stdout}\n{stderr}");
    assert_output_intact(&stdout);
    assert!(
        stderr.contains("1 still in use by a live client") && stderr.contains("(status 5)"),
        "{stderr}"
    );
    // Two seconds of waiting for the runner, well within the ten-second limit.
    assert!(elapsed < std::time::Duration::from_secs(9), "{elapsed:?}");
}

#[test]
fn exit_now_ends_with_its_status_after_flushing_output() {
    let Some(output) = probe_on_wgpu(&["exit-now", "7"]) else {
        return;
    };
    let (stdout, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(7), "{stdout}\n{stderr}");
    assert_output_intact(&stdout);
    // `exit_now` skips exit handlers: no teardown.
    assert!(!stderr.contains("exit teardown"), "{stderr}");
}

#[test]
fn repeated_runs_neither_crash_nor_hang() {
    for path in [None, Some("exit-now")] {
        let mut args = vec!["stress", "3"];
        args.extend(path);
        let Some(output) = probe_on_wgpu(&args) else {
            return;
        };
        let (stdout, stderr) = text(&output);
        assert_eq!(output.status.code(), Some(0), "{stdout}\n{stderr}");
        assert_eq!(field(&stdout, "s2", "runs"), Some("3"), "{stdout}");
        assert_eq!(field(&stdout, "s2", "crashes"), Some("0"), "{stdout}");
        assert_eq!(field(&stdout, "s2", "hangs"), Some("0"), "{stdout}");
        let median: f64 = field(&stdout, "s2", "median")
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no median in {stdout}"));
        // Generous on a shared 2-core machine; BENCH.md's 50 ms target is for the H200 run.
        assert!((0.0..5_000.0).contains(&median), "{stdout}");
    }
}
