//! What the program prints, in one place: a command's output once it has finished, and stderr.
//!
//! Every command computes its whole output first and `main` prints it here, so that a command
//! that fails prints nothing half-made. A reader that goes away (`dspk scan --table | head -1`)
//! is not an error: the program stops writing and exits with the command's own status (0 when it
//! succeeded), with no message, as `grep` and `ripgrep` do.

use std::io::Write as _;

use crate::report::escape_controls;

/// Writes a command's output to stdout: JSON as it is (it escapes control characters itself),
/// text with text from files escaped. A closed pipe counts as written; other failures (a full
/// disk behind a redirect) are errors.
pub(crate) fn stdout(text: &str, json: bool) -> std::io::Result<()> {
    let escaped;
    let text = if json {
        text
    } else {
        escaped = escape_controls(text, true);
        &escaped
    };
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// One line on stderr (`error: …`, `warning: …`), escaped. A closed stderr leaves no one to
/// tell, so its failure is ignored (`eprintln!` would panic).
pub(crate) fn stderr_line(kind: &str, message: &str) {
    let line = escape_controls(message, false);
    let _ = writeln!(std::io::stderr().lock(), "{kind}: {line}");
}
