//! Process-exit mechanics for dspk programs: immediate exit, time-limited teardown, exit handlers.
//!
//! Ending a process that holds GPU devices is delicate: driver layers register their own exit
//! handlers, runner threads may still be busy, and a teardown that waits on a wedged driver can
//! hang the process forever. This crate provides the three primitives the rest of dspk builds
//! on:
//!
//! - [`exit_now`]: flush Rust's stdout and stderr, then end the process at once with `_exit` —
//!   no exit handlers, no destructors. For a program's last line; libraries never call it.
//! - [`teardown_within`]: run a teardown on a helper thread; if it has not returned within a
//!   limit, end the process with a given status instead of hanging.
//! - [`register_exit_handler`]: run a function when the process exits normally (`exit`, or
//!   returning from `main`), receiving the exit status where the C library can tell it (glibc's
//!   `on_exit`; see [`exit_status_known`]). Handlers registered later run first, and registering
//!   a handler again is harmless: it then runs at its latest position, once.
//!
//! What it deliberately is not: it knows nothing about devices, runtimes or drivers. Deciding
//! *what* to tear down and *when* to (re)register belongs to `dspk-device`; this crate only
//! supplies the mechanics. It has no features and depends on `libc` only.
//!
//! # Example
//!
//! ```no_run
//! use std::time::Duration;
//!
//! fn release_everything(status: i32) {
//!     // Bounded: a wedged driver cannot keep the process alive past ten seconds.
//!     dspk_exit::teardown_within(Duration::from_secs(10), status, || {
//!         // stop runner threads, destroy devices …
//!     });
//! }
//!
//! fn main() {
//!     dspk_exit::register_exit_handler(release_everything);
//!     let status = 0; // … the program's work …
//!     // `exit` runs the handler; `exit_now` would skip it.
//!     std::process::exit(status);
//! }
//! ```

mod handlers;

#[cfg(test)]
mod tests;

use std::io::{self, Write as _};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::Duration;

pub use handlers::{exit_status_known, register_exit_handler};

/// How long [`teardown_within`] waits for stdout and stderr to flush once the teardown has run
/// out of time: the thread that hangs may itself hold the stdout lock.
const FLUSH_LIMIT: Duration = Duration::from_secs(1);

/// Flushes Rust's stdout and stderr, then ends the process at once with `status`.
///
/// The process ends through `_exit`: exit handlers (including those of
/// [`register_exit_handler`] and of C libraries) do not run, and no destructors run — not of
/// locals, not of statics, not of other threads' thread-locals. Only Rust's own buffered
/// standard output is flushed first, so text printed without a trailing newline still arrives.
///
/// This is for a program's last line, once everything that matters has been written and
/// released. Libraries never call it: they cannot know what else the process still has to do.
pub fn exit_now(status: i32) -> ! {
    flush_output();
    end_process(status)
}

/// Runs `f` on a helper thread and waits at most `limit` for it to return.
///
/// If `f` returns within `limit`, `teardown_within` returns normally. If it has not, Rust's
/// stdout and stderr are flushed (waiting at most one second, in case the hung thread holds the
/// stdout lock) and the process ends at once with `status`, as [`exit_now`] does: no exit
/// handlers, no destructors.
///
/// Meant for teardown at exit (typically inside an exit handler, passing on the status the
/// handler received) where a wedged driver must not keep the process alive.
///
/// Decisions worth knowing:
/// - A panic in `f` counts as `f` having returned: the panic hook prints its message as usual
///   and `teardown_within` returns normally. Teardown is best effort; a failed teardown must
///   neither hang nor turn the exit it is part of into an abort.
/// - `teardown_within` waits for `f` to return, not for the helper thread to finish: the
///   thread's own thread-local destructors run afterwards and are not waited for.
/// - If no helper thread can be started, `f` runs on the calling thread, and then no limit can
///   be enforced.
pub fn teardown_within<F>(limit: Duration, status: i32, f: F)
where
    F: FnOnce() + Send + 'static,
{
    // `f` sits in a shared slot so that it can be taken back if the thread cannot be spawned
    // (a failed spawn drops the closure it was given).
    let slot = Arc::new(Mutex::new(Some(f)));
    let helper_slot = Arc::clone(&slot);
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let spawned = thread::Builder::new()
        .name("dspk-exit-teardown".to_owned())
        .spawn(move || {
            if let Some(f) = take(&helper_slot) {
                f();
            }
            // Not reached if `f` panics: the sender is then dropped while unwinding, which
            // the receiver sees as a disconnection.
            let _ = done_tx.send(());
        });
    match spawned {
        Ok(_detached) => match done_rx.recv_timeout(limit) {
            Ok(()) | Err(RecvTimeoutError::Disconnected) => {}
            Err(RecvTimeoutError::Timeout) => {
                flush_output_within(FLUSH_LIMIT);
                end_process(status)
            }
        },
        Err(_) => {
            if let Some(f) = take(&slot) {
                f();
            }
        }
    }
}

/// Takes the closure out of its slot; a poisoned lock still holds a usable `Option`.
fn take<F>(slot: &Mutex<Option<F>>) -> Option<F> {
    slot.lock().unwrap_or_else(PoisonError::into_inner).take()
}

/// Flushes Rust's stdout and stderr, ignoring errors: there is nobody left to report them to.
fn flush_output() {
    let _ = io::stdout().flush();
    let _ = io::stderr().flush();
}

/// Flushes like [`flush_output`], but gives up after `limit` (on a helper thread) so that a
/// thread blocked while holding the stdout lock cannot stop the process from ending.
fn flush_output_within(limit: Duration) {
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let spawned = thread::Builder::new()
        .name("dspk-exit-flush".to_owned())
        .spawn(move || {
            flush_output();
            let _ = done_tx.send(());
        });
    match spawned {
        Ok(_detached) => {
            let _ = done_rx.recv_timeout(limit);
        }
        Err(_) => flush_output(),
    }
}

/// Ends the process with `status` through `_exit`.
#[expect(unsafe_code, reason = "`_exit` is a C function")]
fn end_process(status: i32) -> ! {
    // SAFETY: `_exit` takes a plain integer and never returns. Skipping destructors and exit
    // handlers is its documented purpose here; Rust's safety never relies on destructors
    // running (leaking is safe), and it is async-signal-safe, so any thread may call it at
    // any time.
    unsafe { libc::_exit(status) }
}
