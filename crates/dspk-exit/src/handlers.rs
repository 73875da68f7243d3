//! Exit-handler registration: a registry of handlers behind C-level trampolines.
//!
//! Every call to [`register_exit_handler`] makes a new C-level registration (`on_exit` on
//! glibc, `atexit` elsewhere) of a trampoline that knows the handler's slot in a private
//! registry. The C library runs registrations in reverse order, so a handler runs at the
//! position of its latest registration; the slot's "ran" flag makes its earlier registrations
//! do nothing.

use std::panic;
use std::sync::{Mutex, MutexGuard, PoisonError};

/// One distinct handler and whether it has already run in this process exit.
struct Entry {
    handler: fn(i32),
    ran: bool,
}

/// Every distinct handler ever registered; an entry's index never changes.
static HANDLERS: Mutex<Vec<Entry>> = Mutex::new(Vec::new());

/// The C-level mechanism a registration goes through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mechanism {
    /// glibc's `on_exit`: the handler receives the exit status.
    #[cfg(all(unix, target_env = "gnu"))]
    OnExit,
    /// `atexit`: no status; the handler receives 0.
    AtExit,
}

impl Mechanism {
    /// The best mechanism this C library offers.
    #[cfg(all(unix, target_env = "gnu"))]
    pub(crate) const BEST: Self = Self::OnExit;
    /// The best mechanism this C library offers.
    #[cfg(not(all(unix, target_env = "gnu")))]
    pub(crate) const BEST: Self = Self::AtExit;
}

/// Registers `handler` to run when the process exits normally; returns whether the C library
/// accepted the registration.
///
/// "Normally" means `std::process::exit`, returning from `main`, or C's `exit` — not
/// [`exit_now`](crate::exit_now), `_exit`, `abort`, or death by a signal.
///
/// - **Status:** the handler receives the exit status on glibc (through `on_exit`); elsewhere
///   (through `atexit`) it receives 0, whatever the real status — see [`exit_status_known`].
/// - **Order:** as in C, handlers registered later run first, interleaved with the handlers
///   other libraries register in the same process.
/// - **Registering again** is harmless and moves the handler to run first: every call is a new
///   C-level registration, and the handler runs once per process exit, at the position of its
///   latest registration. This is how a caller makes its handler run before those of libraries
///   loaded after its first registration.
///
/// Handlers are told apart by function address (see [`std::ptr::fn_addr_eq`]), so register a
/// plain, named function rather than a generic one instantiated in several crates. A handler
/// that panics is stopped at the panic (its message is printed by the panic hook) and the exit
/// continues with the remaining handlers. A handler must not call `exit` itself; to end the
/// process from a handler, use [`exit_now`](crate::exit_now) or
/// [`teardown_within`](crate::teardown_within).
pub fn register_exit_handler(handler: fn(i32)) -> bool {
    register_with(Mechanism::BEST, handler)
}

/// Whether handlers receive the real exit status (true on glibc, where `on_exit` exists);
/// when false they receive 0.
pub fn exit_status_known() -> bool {
    Mechanism::BEST != Mechanism::AtExit
}

/// Registers `handler` through a chosen mechanism (tests reach `atexit` on glibc this way).
pub(crate) fn register_with(mechanism: Mechanism, handler: fn(i32)) -> bool {
    let index = slot_of(handler);
    match mechanism {
        #[cfg(all(unix, target_env = "gnu"))]
        Mechanism::OnExit => on_exit::register(index),
        Mechanism::AtExit => at_exit::register(index),
    }
}

/// The registry, whatever a panicking thread left behind (the data stays consistent: every
/// update is a single push or flag change).
fn handlers() -> MutexGuard<'static, Vec<Entry>> {
    HANDLERS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The registry index of `handler`, adding it on first sight.
fn slot_of(handler: fn(i32)) -> usize {
    let mut entries = handlers();
    if let Some(index) = entries
        .iter()
        .position(|entry| std::ptr::fn_addr_eq(entry.handler, handler))
    {
        return index;
    }
    entries.push(Entry {
        handler,
        ran: false,
    });
    entries.len() - 1
}

/// Runs the handler in slot `index` with `status`, unless it already ran.
///
/// Called from C, so it must not unwind: a panicking handler is caught here.
fn run_once(index: usize, status: i32) {
    let handler = {
        let mut entries = handlers();
        match entries.get_mut(index) {
            Some(entry) if !entry.ran => {
                entry.ran = true;
                entry.handler
            }
            _ => return,
        }
    };
    // The lock is released: the handler may register handlers or end the process.
    let _ = panic::catch_unwind(move || handler(status));
}

/// Registration through glibc's `on_exit`, whose argument pointer carries the registry index.
#[cfg(all(unix, target_env = "gnu"))]
#[expect(
    unsafe_code,
    reason = "`on_exit` is a C function the libc crate does not declare"
)]
mod on_exit {
    use std::ffi::{c_int, c_void};

    unsafe extern "C" {
        /// glibc: registers `function` to be called at normal exit with the exit status and
        /// `arg`; returns 0 on success.
        fn on_exit(function: extern "C" fn(c_int, *mut c_void), arg: *mut c_void) -> c_int;
    }

    /// Called by glibc at exit; `arg` is a registry index, not a real pointer.
    extern "C" fn trampoline(status: c_int, arg: *mut c_void) {
        super::run_once(arg.addr(), status);
    }

    /// Registers the trampoline for registry slot `index`.
    pub(super) fn register(index: usize) -> bool {
        // SAFETY: the declaration above matches glibc's `int on_exit(void (*)(int, void *),
        // void *)`. The trampoline is a plain `extern "C"` function that lives as long as the
        // process and cannot unwind (`run_once` catches panics). `arg` is never dereferenced:
        // it only carries the index back to the trampoline.
        unsafe { on_exit(trampoline, std::ptr::without_provenance_mut(index)) == 0 }
    }
}

/// Registration through `atexit`, which passes nothing to the function it calls: a list of
/// pending registry indices, in registration order, tells the trampoline which handler is next.
mod at_exit {
    use std::sync::{Mutex, MutexGuard, PoisonError};

    /// Registry indices of the `atexit` registrations not yet run, oldest first.
    static PENDING: Mutex<Vec<usize>> = Mutex::new(Vec::new());

    fn pending() -> MutexGuard<'static, Vec<usize>> {
        PENDING.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Called by the C library at exit, newest registration first, so the newest pending index
    /// is the one this call belongs to.
    extern "C" fn trampoline() {
        let index = pending().pop();
        if let Some(index) = index {
            super::run_once(index, 0);
        }
    }

    /// Registers the trampoline for registry slot `index`.
    #[expect(unsafe_code, reason = "`atexit` is a C function")]
    pub(super) fn register(index: usize) -> bool {
        // The lock is held across `atexit` so that the order of `PENDING` is the order of the
        // C-level registrations even when threads register concurrently.
        let mut pending = pending();
        pending.push(index);
        // SAFETY: `atexit` takes a plain `extern "C" fn()` that lives as long as the process;
        // the trampoline cannot unwind (`run_once` catches panics).
        let accepted = unsafe { libc::atexit(trampoline) } == 0;
        if !accepted {
            pending.pop();
        }
        accepted
    }
}
