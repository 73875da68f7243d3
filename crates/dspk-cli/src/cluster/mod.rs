//! The program on a cluster's scheduler: `dspk plan`, `dspk run` and `dspk gather`, over
//! their data model.
//!
//! - `plan_file`: a plan's folder, `plan.json` (its jobs, and the options they share, parsed
//!   when the plan is read) and where its records go.
//! - `record`: a job's record: the job, its result as a typed value, its provenance.
//! - `preprocess`: a preprocess plan's parts: the fit of the plan step, a job's part, the
//!   output assembled from the parts.
//! - `detect`: a detect plan's parts: the fit of the plan step (pipeline and noise levels), a
//!   job's part of the table, the table concatenated from the parts.
//! - `plan`, `run`, `gather`: the commands. Each uses the data model; none uses another
//!   command (no import circle).

pub(crate) mod detect;
pub(crate) mod gather;
pub(crate) mod plan;
pub(crate) mod plan_file;
pub(crate) mod preprocess;
pub(crate) mod record;
pub(crate) mod run;
