//! Progress reporting: libraries report events, programs decide how to draw them.

/// One step of progress of a long operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgressEvent {
    /// What is being done (e.g. "scan", "write").
    pub stage: String,
    /// Which stage of the run this is, from 1 (see [`Stages`]); 0 when the run has one stage.
    pub step: usize,
    /// How many stages the run has; 0 when the run has one stage.
    pub steps: usize,
    /// Units done so far in this stage.
    pub done: u64,
    /// Units in this stage; 0 when unknown.
    pub total: u64,
    /// What a unit is (e.g. "windows", "samples", "bytes").
    pub unit: &'static str,
}

impl ProgressEvent {
    /// An event of a single-stage run.
    pub fn new(stage: impl Into<String>, done: u64, total: u64, unit: &'static str) -> Self {
        Self {
            stage: stage.into(),
            step: 0,
            steps: 0,
            done,
            total,
            unit,
        }
    }

    /// `done / total` in `0..=1`, or `None` when the total is unknown.
    pub fn fraction(&self) -> Option<f64> {
        (self.total > 0).then(|| (self.done as f64 / self.total as f64).min(1.0))
    }
}

/// Receives progress events. Every `Fn(&ProgressEvent) + Send + Sync` is a sink.
pub trait ProgressSink: Send + Sync {
    /// Called for each event, on whatever thread did the work; keep it cheap.
    fn report(&self, event: &ProgressEvent);
}

/// A sink that ignores every event.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;

impl ProgressSink for NoProgress {
    fn report(&self, _event: &ProgressEvent) {}
}

impl<F: Fn(&ProgressEvent) + Send + Sync> ProgressSink for F {
    fn report(&self, event: &ProgressEvent) {
        self(event)
    }
}

/// Numbers the stages of one run and forwards their events to a sink with `step`/`steps` set.
///
/// ```
/// use dspk_types::{ProgressEvent, Stages};
/// let seen = std::sync::Mutex::new(Vec::new());
/// let sink = |e: &ProgressEvent| seen.lock().unwrap().push((e.step, e.steps, e.done));
/// let stages = Stages::new(&sink, 2);
/// stages.report(1, ProgressEvent::new("read", 5, 10, "windows"));
/// stages.report(2, ProgressEvent::new("write", 1, 1, "files"));
/// assert_eq!(*seen.lock().unwrap(), vec![(1, 2, 5), (2, 2, 1)]);
/// ```
pub struct Stages<'a> {
    sink: &'a dyn ProgressSink,
    steps: usize,
}

impl<'a> Stages<'a> {
    /// Stages `1..=steps` reported to `sink`.
    pub fn new(sink: &'a dyn ProgressSink, steps: usize) -> Self {
        Self { sink, steps }
    }

    /// Forwards `event` as stage `step` of this run.
    pub fn report(&self, step: usize, mut event: ProgressEvent) {
        event.step = step;
        event.steps = self.steps;
        self.sink.report(&event);
    }

    /// A sink for stage `step`: everything reported to it is forwarded as that stage.
    pub fn stage(&self, step: usize) -> StageSink<'_> {
        StageSink { stages: self, step }
    }

    /// How many stages the run has.
    pub fn steps(&self) -> usize {
        self.steps
    }
}

/// One stage of a [`Stages`], usable wherever a [`ProgressSink`] is wanted.
pub struct StageSink<'a> {
    stages: &'a Stages<'a>,
    step: usize,
}

impl ProgressSink for StageSink<'_> {
    fn report(&self, event: &ProgressEvent) {
        self.stages.report(self.step, event.clone());
    }
}

#[cfg(test)]
#[path = "tests/progress.rs"]
mod tests;
