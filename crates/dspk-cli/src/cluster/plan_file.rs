//! A plan's folder and its `plan.json`: the jobs of a cluster run, with their recordings'
//! paths relative to a base, and the options every job shares, parsed when the plan is read.

use std::fmt;
use std::path::{Path, PathBuf};

use dspk_types::{ChannelList, DspResult, MemoryOrder, RateChoice};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::detect::PlannedDetect;
use super::preprocess::PlannedPipeline;
use crate::error::{CliError, CliResult};

/// The `format` of a plan file; a plan of another format is refused by name.
pub(crate) const PLAN_FORMAT: &str = "dspk-plan/1";

/// The plan's file in its folder.
pub(crate) const PLAN_FILE: &str = "plan.json";

/// The folder of result records in a plan's folder.
pub(crate) const RESULTS_DIR: &str = "results";

/// The folder of converted files in a plan's folder.
pub(crate) const OUTPUTS_DIR: &str = "outputs";

/// The job array script `dspk plan` writes beside the plan.
pub(crate) const SBATCH_FILE: &str = "array.sbatch";

/// What every job of a plan runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum JobCommand {
    /// `dspk scan`: statistics, dead and noisy channels.
    Scan,
    /// `dspk convert`: float32 µV raw binary + sidecar, into the plan's `outputs/`.
    Convert,
    /// `dspk preprocess` of a part of a recording, with the parameters the plan step fitted:
    /// `dspk gather` assembles the parts into one output per recording.
    Preprocess,
    /// `dspk detect` of a part of a recording, with the noise levels (and the pipeline's
    /// parameters) the plan step fitted: `dspk gather` concatenates the parts' tables into one
    /// table per recording.
    Detect,
}

impl JobCommand {
    /// `scan`, `convert`, `preprocess` or `detect`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            JobCommand::Scan => "scan",
            JobCommand::Convert => "convert",
            JobCommand::Preprocess => "preprocess",
            JobCommand::Detect => "detect",
        }
    }
}

/// An option's value as written on `dspk plan`'s command line, and parsed: the plan keeps the
/// text (two plans are the same plan when their texts are), a job uses the value.
#[derive(Debug, Clone)]
pub(crate) struct Written<T> {
    text: String,
    value: T,
}

/// What an option's text parses into.
pub(crate) trait Notation: Sized {
    /// `text` parsed, or why not.
    fn parse_text(text: &str) -> DspResult<Self>;
}

impl Notation for RateChoice {
    fn parse_text(text: &str) -> DspResult<Self> {
        RateChoice::parse(text)
    }
}

impl Notation for ChannelList {
    fn parse_text(text: &str) -> DspResult<Self> {
        ChannelList::parse(text)
    }
}

impl<T: Notation> Written<T> {
    /// `text` parsed.
    pub(crate) fn parse(text: &str) -> DspResult<Self> {
        Ok(Self {
            text: text.to_string(),
            value: T::parse_text(text)?,
        })
    }

    /// The parsed value.
    pub(crate) fn value(&self) -> &T {
        &self.value
    }
}

impl<T> PartialEq for Written<T> {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl<T> Eq for Written<T> {}

impl<T> fmt::Display for Written<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl<T> Serialize for Written<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

impl<'de, T: Notation> Deserialize<'de> for Written<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Self::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// The options every job of a plan shares, as written on `dspk plan`'s command line.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct JobOptions {
    /// Samples per window (`--window-samples`).
    pub(crate) window_samples: Option<u64>,
    /// The rate to read recordings at (`--rate`).
    pub(crate) rate: Option<Written<RateChoice>>,
    /// Convert only: the channels to keep (`--channels`).
    pub(crate) channels: Option<Written<ChannelList>>,
    /// Convert and preprocess: the order written (`--order`).
    pub(crate) order: Option<MemoryOrder>,
    /// Preprocess: the pipeline (`--preprocess`, with `--format` and `--gain` applied);
    /// detect: the pipeline run before detection (`--pipeline`, empty for `none`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) pipeline: Option<PlannedPipeline>,
    /// Detect only: the detector's parameters (`--threshold`, `--sign`, `--radius`,
    /// `--exclude-sweep`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) detect: Option<PlannedDetect>,
    /// The probeinterface JSON attached to every recording (`--probe`): relative to the
    /// plan's base where it is inside it, else absolute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) probe: Option<String>,
}

/// One job: a part of one recording (a segment, or a piece of one cut by `--chunk`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Job {
    /// Its number, `0..jobs`: the `--job` of `dspk run` and the array index.
    pub(crate) job: usize,
    /// The recording's path relative to the plan's base, with `/` separators; `None` for the
    /// built-in synthetic recording.
    pub(crate) recording: Option<String>,
    /// The Open Ephys stream read (by folder name), where the recording has several: a job
    /// per stream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) stream: Option<String>,
    /// The built-in synthetic recording's length in samples, when that is the recording.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) synthetic_samples: Option<u64>,
    /// Which part of the recording (of its stream) this is, from 0: its segments in order,
    /// each cut into pieces by `--chunk` (plans before the field was renamed call it
    /// `segment`).
    #[serde(alias = "segment")]
    pub(crate) part: usize,
    /// How many parts the recording (its stream) is cut into.
    #[serde(alias = "segments")]
    pub(crate) parts: usize,
    /// First sample of the part.
    pub(crate) start_sample: u64,
    /// One past its last sample.
    pub(crate) end_sample: u64,
    /// The bytes the job reads.
    pub(crate) stored_bytes: u64,
    /// Preprocess plans: the output (`outputs/rec-K.bin`, fitted in `preprocess/rec-K.json`)
    /// the job writes a part of; detect plans: the table (`outputs/rec-K.npy`, fitted in
    /// `detect/rec-K.json`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) output: Option<usize>,
}

impl Job {
    /// `a/run.ap.bin [2/4]`, `oe/experiment1 stream ProbeA-AP [1/2]` or `built-in synthetic
    /// recording [1/1]`.
    pub(crate) fn label(&self) -> String {
        format!(
            "{}{} [{}/{}]",
            self.recording
                .as_deref()
                .unwrap_or("built-in synthetic recording"),
            self.stream
                .as_deref()
                .map_or_else(String::new, |s| format!(" stream {s}")),
            self.part + 1,
            self.parts
        )
    }
}

/// A plan: every job of a cluster run, and where its recordings are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Plan {
    /// [`PLAN_FORMAT`].
    pub(crate) format: String,
    /// The dspk that wrote it.
    pub(crate) dspk_version: String,
    /// The folder the recordings' paths are relative to (`dspk run --base` replaces it where
    /// the data is mounted elsewhere).
    pub(crate) base: PathBuf,
    /// What every job runs.
    pub(crate) command: JobCommand,
    /// The options every job shares.
    pub(crate) options: JobOptions,
    /// The jobs, numbered from 0.
    pub(crate) jobs: Vec<Job>,
}

impl Plan {
    /// Reads `dir/plan.json`.
    pub(crate) fn load(dir: &Path) -> CliResult<Self> {
        let path = dir.join(PLAN_FILE);
        let text = std::fs::read_to_string(&path).map_err(|e| {
            CliError::new(format!(
                "{}: cannot read the plan ({e}): `dspk plan REC… --out {}` writes it",
                path.display(),
                dir.display()
            ))
        })?;
        let plan: Plan = serde_json::from_str(&text)
            .map_err(|e| CliError::new(format!("{}: not a dspk plan: {e}", path.display())))?;
        if plan.format != PLAN_FORMAT {
            return Err(CliError::new(format!(
                "{}: a plan of format '{}', this dspk reads '{PLAN_FORMAT}'",
                path.display(),
                plan.format
            )));
        }
        for (i, job) in plan.jobs.iter().enumerate() {
            if job.job != i {
                return Err(CliError::new(format!(
                    "{}: job {i} is numbered {}: jobs are numbered 0, 1, 2… in order",
                    path.display(),
                    job.job
                )));
            }
        }
        Ok(plan)
    }

    /// Each output of the plan (a preprocessed file, a peak table) loaded by `load`, kept where
    /// every job of it (`jobs` of what was loaded) is `done`: what `gather` assembles.
    pub(crate) fn done_outputs<P>(
        &self,
        done: impl Fn(usize) -> bool,
        load: impl Fn(usize) -> CliResult<P>,
        jobs: impl Fn(&P) -> &[usize],
    ) -> CliResult<Vec<P>> {
        let mut outputs: Vec<usize> = self.jobs.iter().filter_map(|j| j.output).collect();
        outputs.dedup();
        let mut kept = Vec::new();
        for output in outputs {
            let planned = load(output)?;
            if jobs(&planned).iter().all(|&j| done(j)) {
                kept.push(planned);
            }
        }
        Ok(kept)
    }

    /// The job numbered `n`.
    pub(crate) fn job(&self, n: usize) -> CliResult<&Job> {
        self.jobs.get(n).ok_or_else(|| {
            CliError::new(format!(
                "job {n} is not in the plan: it has {} jobs, 0 to {}",
                self.jobs.len(),
                self.jobs.len().saturating_sub(1)
            ))
        })
    }

    /// A recording's path on this machine: `base` (or the plan's base) joined with its
    /// relative path.
    pub(crate) fn recording_path(&self, job: &Job, base: Option<&Path>) -> Option<PathBuf> {
        let base = base.unwrap_or(&self.base);
        job.recording.as_ref().map(|rel| base.join(rel))
    }

    /// The probe file's path on this machine, as [`recording_path`](Self::recording_path)
    /// finds a recording's (an absolute path stays as it is).
    pub(crate) fn probe_path(&self, base: Option<&Path>) -> Option<PathBuf> {
        let base = base.unwrap_or(&self.base);
        self.options.probe.as_ref().map(|p| base.join(p))
    }
}

/// `results/job-N.json`.
pub(crate) fn result_path(dir: &Path, job: usize) -> PathBuf {
    dir.join(RESULTS_DIR).join(format!("job-{job}.json"))
}

/// `results/job-N.failed.json`.
pub(crate) fn failure_path(dir: &Path, job: usize) -> PathBuf {
    dir.join(RESULTS_DIR).join(format!("job-{job}.failed.json"))
}

/// How many result records `dir/results` holds.
pub(crate) fn result_files(dir: &Path) -> usize {
    std::fs::read_dir(dir.join(RESULTS_DIR)).map_or(0, |entries| {
        entries
            .flatten()
            .filter(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                name.starts_with("job-") && name.ends_with(".json")
            })
            .count()
    })
}

#[cfg(test)]
mod tests;
