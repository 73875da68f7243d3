//! Tests: every exit behaviour is checked in a child process (the test binary re-running itself).
//!
//! A test `foo` first asks [`in_child`] whether it is the child for case `foo`; if so it does
//! the thing under test. Otherwise it is the parent: it re-runs the test binary with
//! `DSPK_EXIT_CHILD=foo --exact tests::foo`, under a watchdog, and checks how that child ended.

use std::io::Read;
use std::process::{Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use crate::handlers::{Mechanism, register_with};
use crate::{exit_now, exit_status_known, register_exit_handler, teardown_within};

/// The environment variable that names the case a child process runs.
const CHILD_VAR: &str = "DSPK_EXIT_CHILD";

/// A child that has not ended after this long has hung: it is killed and the test fails.
const WATCHDOG: Duration = Duration::from_secs(20);

/// Slack for process start-up and a loaded machine when checking how long a child took.
const MARGIN: Duration = Duration::from_secs(5);

/// How a child process ended.
struct ChildRun {
    status: ExitStatus,
    stdout: String,
    stderr: String,
    elapsed: Duration,
}

impl ChildRun {
    fn code(&self) -> Option<i32> {
        self.status.code()
    }

    /// The lines the exit handlers of these tests printed, in order.
    fn handler_lines(&self) -> Vec<&str> {
        self.stderr
            .lines()
            .filter(|line| line.starts_with("handler "))
            .collect()
    }
}

impl std::fmt::Display for ChildRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "status {:?} after {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.status, self.elapsed, self.stdout, self.stderr
        )
    }
}

/// Whether this process is the child running `case`.
fn in_child(case: &str) -> bool {
    std::env::var(CHILD_VAR).is_ok_and(|value| value == case)
}

/// Re-runs this test binary for the test `tests::<case>` as the child for `case`.
fn run_child(case: &str) -> ChildRun {
    let exe = std::env::current_exe().expect("the test binary knows its own path");
    let start = Instant::now();
    let mut child = Command::new(exe)
        .args([
            "--exact",
            &format!("tests::{case}"),
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_VAR, case)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the test binary can be started again");
    let stdout = drain(child.stdout.take().expect("stdout is piped"));
    let stderr = drain(child.stderr.take().expect("stderr is piped"));
    let status = loop {
        if let Some(status) = child.try_wait().expect("the child can be waited for") {
            break status;
        }
        if start.elapsed() > WATCHDOG {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "child {case} still running after {WATCHDOG:?}: killed\n--- stdout ---\n{}\n--- stderr ---\n{}",
                stdout.join().unwrap_or_default(),
                stderr.join().unwrap_or_default()
            );
        }
        thread::sleep(Duration::from_millis(10));
    };
    let elapsed = start.elapsed();
    ChildRun {
        status,
        stdout: stdout.join().expect("stdout reader does not panic"),
        stderr: stderr.join().expect("stderr reader does not panic"),
        elapsed,
    }
}

/// Reads a pipe to its end on a thread of its own, so that a full pipe never blocks the child.
fn drain(mut pipe: impl Read + Send + 'static) -> thread::JoinHandle<String> {
    thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

/// The status handlers receive for an exit with `status` on this C library.
fn seen_status(status: i32) -> i32 {
    if exit_status_known() { status } else { 0 }
}

fn handler_a(status: i32) {
    eprintln!("handler A status {status}");
}

fn handler_b(status: i32) {
    eprintln!("handler B status {status}");
}

/// An exit handler that tears down with a teardown that never returns, passing on its status.
fn handler_with_hanging_teardown(status: i32) {
    eprintln!("handler T status {status}");
    teardown_within(Duration::from_secs(1), status, hang);
}

fn hang() {
    loop {
        thread::sleep(Duration::from_secs(1));
    }
}

#[test]
fn exit_now_flushes_and_ends_with_status() {
    const TEXT: &str = "first line\nsecond part without a newline";
    if in_child("exit_now_flushes_and_ends_with_status") {
        print!("<<{TEXT}");
        exit_now(7);
    }
    let run = run_child("exit_now_flushes_and_ends_with_status");
    assert_eq!(run.code(), Some(7), "{run}");
    assert!(run.stdout.ends_with(&format!("<<{TEXT}")), "{run}");
}

#[test]
fn exit_now_skips_exit_handlers_and_destructors() {
    struct Loud;
    impl Drop for Loud {
        fn drop(&mut self) {
            eprintln!("destructor ran");
        }
    }
    if in_child("exit_now_skips_exit_handlers_and_destructors") {
        assert!(register_exit_handler(handler_a));
        let _loud = Loud;
        exit_now(5);
    }
    let run = run_child("exit_now_skips_exit_handlers_and_destructors");
    assert_eq!(run.code(), Some(5), "{run}");
    assert!(run.handler_lines().is_empty(), "{run}");
    assert!(!run.stderr.contains("destructor ran"), "{run}");
}

#[test]
fn handlers_run_latest_first_with_the_exit_status() {
    if in_child("handlers_run_latest_first_with_the_exit_status") {
        assert!(register_exit_handler(handler_a));
        assert!(register_exit_handler(handler_b));
        std::process::exit(3);
    }
    let run = run_child("handlers_run_latest_first_with_the_exit_status");
    assert_eq!(run.code(), Some(3), "{run}");
    let s = seen_status(3);
    assert_eq!(
        run.handler_lines(),
        [
            format!("handler B status {s}"),
            format!("handler A status {s}")
        ],
        "{run}"
    );
}

#[test]
fn handlers_receive_the_status_on_glibc() {
    assert_eq!(exit_status_known(), cfg!(all(unix, target_env = "gnu")));
}

#[test]
fn registering_twice_runs_once() {
    if in_child("registering_twice_runs_once") {
        assert!(register_exit_handler(handler_a));
        assert!(register_exit_handler(handler_a));
        std::process::exit(3);
    }
    let run = run_child("registering_twice_runs_once");
    assert_eq!(run.code(), Some(3), "{run}");
    assert_eq!(
        run.handler_lines(),
        [format!("handler A status {}", seen_status(3))],
        "{run}"
    );
}

#[test]
fn registering_again_moves_the_handler_first() {
    if in_child("registering_again_moves_the_handler_first") {
        assert!(register_exit_handler(handler_a));
        assert!(register_exit_handler(handler_b));
        assert!(register_exit_handler(handler_a));
        std::process::exit(3);
    }
    let run = run_child("registering_again_moves_the_handler_first");
    assert_eq!(run.code(), Some(3), "{run}");
    let s = seen_status(3);
    assert_eq!(
        run.handler_lines(),
        [
            format!("handler A status {s}"),
            format!("handler B status {s}")
        ],
        "{run}"
    );
}

/// The `atexit` path (the one used off glibc) keeps the same order and once-only rule.
#[test]
fn atexit_path_orders_and_deduplicates() {
    if in_child("atexit_path_orders_and_deduplicates") {
        assert!(register_with(Mechanism::AtExit, handler_a));
        assert!(register_with(Mechanism::AtExit, handler_b));
        assert!(register_with(Mechanism::AtExit, handler_a));
        std::process::exit(3);
    }
    let run = run_child("atexit_path_orders_and_deduplicates");
    assert_eq!(run.code(), Some(3), "{run}");
    assert_eq!(
        run.handler_lines(),
        ["handler A status 0", "handler B status 0"],
        "{run}"
    );
}

#[test]
fn hanging_teardown_ends_the_process_within_the_limit() {
    const LIMIT: Duration = Duration::from_secs(1);
    if in_child("hanging_teardown_ends_the_process_within_the_limit") {
        print!("before teardown, no newline");
        teardown_within(LIMIT, 9, hang);
        println!("after teardown");
        return;
    }
    let run = run_child("hanging_teardown_ends_the_process_within_the_limit");
    assert_eq!(run.code(), Some(9), "{run}");
    assert!(run.elapsed >= LIMIT.mul_f64(0.9), "{run}");
    assert!(run.elapsed < LIMIT + MARGIN, "{run}");
    assert!(run.stdout.ends_with("before teardown, no newline"), "{run}");
}

#[test]
fn quick_teardown_lets_the_process_continue() {
    if in_child("quick_teardown_lets_the_process_continue") {
        teardown_within(Duration::from_secs(10), 9, || println!("teardown ran"));
        println!("after teardown");
        return;
    }
    let run = run_child("quick_teardown_lets_the_process_continue");
    assert_eq!(run.code(), Some(0), "{run}");
    assert!(run.elapsed < Duration::from_secs(10), "{run}");
    let ran = run.stdout.find("teardown ran");
    let after = run.stdout.find("after teardown");
    assert!(ran.is_some() && ran < after, "{run}");
}

#[test]
fn panicking_teardown_counts_as_returned() {
    if in_child("panicking_teardown_counts_as_returned") {
        teardown_within(Duration::from_secs(10), 9, || panic!("teardown failed"));
        println!("after teardown");
        return;
    }
    let run = run_child("panicking_teardown_counts_as_returned");
    assert_eq!(run.code(), Some(0), "{run}");
    assert!(run.elapsed < Duration::from_secs(10), "{run}");
    assert!(run.stderr.contains("teardown failed"), "{run}");
    assert!(run.stdout.contains("after teardown"), "{run}");
}

/// What dspk-device does: an exit handler tears down within a limit and, when the teardown
/// hangs, the process still ends with its own status.
#[test]
fn hanging_teardown_in_an_exit_handler_keeps_the_status() {
    if in_child("hanging_teardown_in_an_exit_handler_keeps_the_status") {
        assert!(register_exit_handler(handler_with_hanging_teardown));
        std::process::exit(4);
    }
    let run = run_child("hanging_teardown_in_an_exit_handler_keeps_the_status");
    let s = seen_status(4);
    assert_eq!(run.code(), Some(s), "{run}");
    assert_eq!(
        run.handler_lines(),
        [format!("handler T status {s}")],
        "{run}"
    );
    assert!(run.elapsed < Duration::from_secs(1) + MARGIN, "{run}");
}

#[test]
fn a_panicking_handler_does_not_stop_the_others() {
    fn handler_panics(_status: i32) {
        panic!("exit handler P failed");
    }
    if in_child("a_panicking_handler_does_not_stop_the_others") {
        assert!(register_exit_handler(handler_a));
        assert!(register_exit_handler(handler_panics));
        std::process::exit(3);
    }
    let run = run_child("a_panicking_handler_does_not_stop_the_others");
    assert_eq!(run.code(), Some(3), "{run}");
    assert!(run.stderr.contains("exit handler P failed"), "{run}");
    assert_eq!(
        run.handler_lines(),
        [format!("handler A status {}", seen_status(3))],
        "{run}"
    );
}
