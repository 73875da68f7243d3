//! The program's error: one clear line for the person at the terminal.

use std::fmt;

use dspk_types::{ComputeError, DspError};

/// Why a command failed, as the one line `dspk` prints after `error: `, with what the command
/// did compute (the scans that succeeded, the jobs that finished), printed before it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CliError {
    message: String,
    output: Option<String>,
}

/// Result of a command.
pub(crate) type CliResult<T> = Result<T, CliError>;

impl CliError {
    /// An error with the given message.
    pub(crate) fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            output: None,
        }
    }

    /// This error with the command's output, complete, to print on stdout before the error
    /// line (a scan of several recordings of which some failed).
    pub(crate) fn with_output(self, output: String) -> Self {
        Self {
            output: Some(output),
            ..self
        }
    }

    /// What the command computed before it failed, to print on stdout.
    pub(crate) fn output(&self) -> Option<&str> {
        self.output.as_deref()
    }

    /// The message on one line: line breaks inside it (a parser's multi-line report) become
    /// `; `.
    pub(crate) fn one_line(&self) -> String {
        self.message
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// This error with `context` in front (`context: message`).
    pub(crate) fn context(self, context: impl fmt::Display) -> Self {
        Self {
            message: format!("{context}: {}", self.message),
            ..self
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.one_line())
    }
}

impl From<DspError> for CliError {
    fn from(e: DspError) -> Self {
        Self::new(e.to_string())
    }
}

impl From<dspk_types::PipelineError> for CliError {
    fn from(e: dspk_types::PipelineError) -> Self {
        Self::new(e.to_string())
    }
}

impl From<ComputeError> for CliError {
    fn from(e: ComputeError) -> Self {
        Self::new(e.to_string())
    }
}

/// Adds context to any error that becomes a [`CliError`].
pub(crate) trait Context<T> {
    /// `context: error` on failure.
    fn context(self, context: impl fmt::Display) -> CliResult<T>;
}

impl<T, E: Into<CliError>> Context<T> for Result<T, E> {
    fn context(self, context: impl fmt::Display) -> CliResult<T> {
        self.map_err(|e| e.into().context(context))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_joins_lines() {
        let e = CliError::new("first\n  second\n\nthird  ");
        assert_eq!(e.to_string(), "first; second; third");
        let e: CliError = DspError::InvalidChannel { index: 9, count: 4 }.into();
        assert_eq!(
            e.to_string(),
            "channel 9 does not exist: the recording has 4 channels"
        );
        let r: Result<(), DspError> = Err(DspError::config("bad"));
        assert_eq!(
            r.context("--map m.toml").unwrap_err().to_string(),
            "--map m.toml: invalid configuration: bad"
        );
    }
}
