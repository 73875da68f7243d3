//! What can be wrong with a pipeline spec.

/// A pipeline spec that cannot be read, or cannot run on the recording it was checked against.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PipelineError {
    /// The text is not a pipeline spec.
    #[error("the pipeline spec is not valid {format}: {reason}")]
    Parse {
        /// `TOML` or `JSON`.
        format: &'static str,
        /// The parser's reason (it names the field and line).
        reason: String,
    },
    /// A stage asks for something it cannot be.
    #[error("stage {index} ({kind}) of the pipeline: {reason}")]
    Stage {
        /// The stage's position, from 0.
        index: usize,
        /// The stage's kind, as written in specs.
        kind: &'static str,
        /// What is wrong, with the offending values.
        reason: String,
    },
    /// Something about the whole pipeline.
    #[error("the pipeline: {0}")]
    Spec(String),
    /// No preset has the name asked for.
    #[error("no pipeline preset is named {name:?}; the presets are {}", known.join(", "))]
    UnknownPreset {
        /// The name asked for.
        name: String,
        /// The presets' names.
        known: Vec<&'static str>,
    },
}
