//! The progress bar: drawn on stderr when it is a terminal, absent when it is piped.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::Duration;

use dspk_types::{ProgressEvent, ProgressSink};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A progress bar over a number of bytes, with rate and time left; nothing at all when stderr
/// is not a terminal.
#[derive(Debug)]
pub(crate) struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    /// A bar for `total_bytes` labelled `label`, shown only when stderr is a terminal.
    pub(crate) fn bytes(label: &str, total_bytes: u64) -> Self {
        if !std::io::stderr().is_terminal() {
            return Self::hidden();
        }
        let bar = ProgressBar::with_draw_target(Some(total_bytes), ProgressDrawTarget::stderr());
        let style = ProgressStyle::with_template(
            "{msg} [{bar:30}] {decimal_bytes}/{decimal_total_bytes} \
             {decimal_bytes_per_sec}, {eta} left",
        )
        .map(|s| s.progress_chars("=> "))
        .unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style);
        bar.set_message(label.to_string());
        bar.enable_steady_tick(Duration::from_millis(200));
        Self { bar: Some(bar) }
    }

    /// No bar.
    pub(crate) fn hidden() -> Self {
        Self { bar: None }
    }

    /// Removes the bar from the terminal (before results are printed).
    pub(crate) fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// The library's progress (stored bytes done of the total) moves the bar.
impl ProgressSink for Progress {
    fn report(&self, event: &ProgressEvent) {
        if let Some(bar) = &self.bar {
            if event.total > 0 {
                bar.set_length(event.total);
            }
            bar.set_position(event.done);
        }
    }
}

/// One bar over several passes running at once: each pass reports to its own [`Part`], and
/// the bar shows the sum.
pub(crate) struct Summed<'a> {
    bar: &'a Progress,
    done: Mutex<Vec<u64>>,
}

/// One pass's part of a [`Summed`] bar.
pub(crate) struct Part<'a> {
    index: usize,
    sum: &'a Summed<'a>,
}

impl<'a> Summed<'a> {
    /// A bar for `parts` passes (`bar`'s length is their total).
    pub(crate) fn new(bar: &'a Progress, parts: usize) -> Self {
        Self {
            bar,
            done: Mutex::new(vec![0; parts]),
        }
    }

    /// Each pass's sink.
    pub(crate) fn parts(&'a self) -> Vec<Part<'a>> {
        let n = self.done.lock().unwrap_or_else(|p| p.into_inner()).len();
        (0..n).map(|index| Part { index, sum: self }).collect()
    }
}

impl ProgressSink for Part<'_> {
    fn report(&self, event: &ProgressEvent) {
        let mut parts = self.sum.done.lock().unwrap_or_else(|p| p.into_inner());
        parts[self.index] = event.done;
        if let Some(bar) = &self.sum.bar.bar {
            bar.set_position(parts.iter().sum());
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}
