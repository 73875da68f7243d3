//! Which pipeline a command runs: a preset's name or a spec file, and the output type and gain
//! a command's flags put on it — resolved here once for the program, Python and cluster plans.

use std::path::{Path, PathBuf};

use super::{OutputType, PipelineError, PipelineSpec, ScaleSpec, StageSpec};

impl PipelineSpec {
    /// The pipeline `choice` names: a spec file (`.toml` or `.json`, by its extension; other
    /// names are read as JSON when the text starts with `{`, else as TOML) where a file of that
    /// name exists or the name has one of those extensions, else a preset
    /// ([`preset`](Self::preset)).
    ///
    /// # Errors
    /// A file that cannot be read or is not a spec (naming the file), an unknown preset
    /// (naming the known ones).
    pub fn choose(choice: &str) -> Result<Self, PipelineError> {
        let path = Path::new(choice);
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        let is_file_name = matches!(ext.as_deref(), Some("toml" | "json"));
        if !is_file_name && !path.exists() {
            return Self::preset(choice);
        }
        let text = std::fs::read_to_string(path).map_err(|e| {
            PipelineError::Spec(format!("cannot read the pipeline file {choice}: {e}"))
        })?;
        let spec = match ext.as_deref() {
            Some("json") => Self::from_json(&text),
            Some("toml") => Self::from_toml(&text),
            _ if text.trim_start().starts_with('{') => Self::from_json(&text),
            _ => Self::from_toml(&text),
        };
        spec.map_err(|e| PipelineError::Spec(format!("{choice}: {e}")))
    }

    /// What the pipeline writes: its last stage's type and gain where that is a `scale` stage,
    /// else `float32` ×1.
    pub fn output(&self) -> ScaleSpec {
        match self.stages.last() {
            Some(StageSpec::Scale(s)) => s.clone(),
            _ => ScaleSpec::default(),
        }
    }

    /// The spec with its output set: `output` and `gain` (each where given) replace those of
    /// a last `scale` stage, or are a new last `scale` stage.
    ///
    /// # Errors
    /// A gain that is not finite and positive.
    pub fn with_output(
        mut self,
        output: Option<OutputType>,
        gain: Option<f64>,
    ) -> Result<Self, PipelineError> {
        if let Some(g) = gain
            && !(g.is_finite() && g > 0.0)
        {
            return Err(PipelineError::Spec(format!(
                "the output gain must be a finite number above 0, not {g}"
            )));
        }
        if output.is_none() && gain.is_none() {
            return Ok(self);
        }
        if !matches!(self.stages.last(), Some(StageSpec::Scale(_))) {
            self.stages.push(StageSpec::Scale(ScaleSpec::default()));
        }
        if let Some(StageSpec::Scale(s)) = self.stages.last_mut() {
            if let Some(o) = output {
                s.output = o;
            }
            if let Some(g) = gain {
                s.gain = g;
            }
        }
        Ok(self)
    }

    /// The whitening matrix files the spec names, in stage order.
    pub fn matrix_files(&self) -> Vec<&str> {
        self.stages
            .iter()
            .filter_map(|s| match s {
                StageSpec::Whiten(w) => w.matrix.as_deref(),
                _ => None,
            })
            .collect()
    }

    /// The files a run of the pipeline `choice` (this spec) reads besides the recording, each
    /// with what it is: the spec file, the whitening matrix files it names, and `fits` (a
    /// sidecar whose fitted parameters are applied) — so that no output overwrites one.
    pub fn files_read(&self, choice: &str, fits: Option<&Path>) -> Vec<(PathBuf, String)> {
        let mut files = Vec::new();
        if Path::new(choice).is_file() {
            files.push((PathBuf::from(choice), "the pipeline file".to_string()));
        }
        for m in self.matrix_files() {
            files.push((
                PathBuf::from(m),
                "a whitening matrix file of the pipeline".to_string(),
            ));
        }
        if let Some(f) = fits {
            files.push((
                f.to_path_buf(),
                "the fitted parameters' sidecar".to_string(),
            ));
        }
        files
    }

    /// Whether stage `index` is fitted to the recording before the pass (its parameters come
    /// from a fitting pass or a file, and it is pointwise in time: no halo).
    pub fn is_fitted(&self, index: usize) -> bool {
        matches!(
            self.stages.get(index),
            Some(StageSpec::Whiten(_) | StageSpec::Center(_))
        ) || matches!(self.stages.get(index), Some(StageSpec::InterpolateBad(i)) if i.detect)
    }
}

impl OutputType {
    /// The type's name as written in specs and flags (`float32`, `int16`).
    pub fn name(self) -> &'static str {
        match self {
            OutputType::Float32 => "float32",
            OutputType::Int16 => "int16",
        }
    }

    /// The type a name (as [`name`](Self::name) writes it) names.
    ///
    /// # Errors
    /// Any other name.
    pub fn parse(name: &str) -> Result<Self, PipelineError> {
        match name {
            "float32" => Ok(OutputType::Float32),
            "int16" => Ok(OutputType::Int16),
            other => Err(PipelineError::Spec(format!(
                "the output type must be float32 or int16, not {other:?}"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter_only() -> PipelineSpec {
        PipelineSpec::from_toml(
            "[[stages]]\nkind = \"filter\"\nband = \"highpass\"\ncutoff_hz = [300.0]\norder = 3\n",
        )
        .unwrap()
    }

    #[test]
    fn output_flags_replace_or_append_the_scale_stage() {
        let spec = filter_only();
        assert_eq!(spec.output(), ScaleSpec::default());
        let int16 = spec
            .clone()
            .with_output(Some(OutputType::Int16), Some(200.0))
            .unwrap();
        assert_eq!(int16.stages.len(), 2);
        assert_eq!(int16.output().output, OutputType::Int16);
        assert_eq!(int16.output().gain, 200.0);
        // A second override replaces, never appends.
        let again = int16.with_output(None, Some(3.0)).unwrap();
        assert_eq!(again.stages.len(), 2);
        assert_eq!(again.output().output, OutputType::Int16);
        assert_eq!(again.output().gain, 3.0);
        assert_eq!(spec.clone().with_output(None, None).unwrap(), spec);
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let e = spec.clone().with_output(None, Some(bad)).unwrap_err();
            assert!(e.to_string().contains("gain"), "{e}");
        }
    }

    #[test]
    fn a_choice_is_a_file_or_a_preset() {
        let dir = std::env::temp_dir().join(format!("dspk-choice-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let spec = filter_only();
        let toml = dir.join("p.toml");
        std::fs::write(&toml, spec.to_toml()).unwrap();
        let json = dir.join("p.json");
        std::fs::write(&json, spec.to_json()).unwrap();
        let bare = dir.join("spec");
        std::fs::write(&bare, spec.to_json()).unwrap();
        for path in [&toml, &json, &bare] {
            assert_eq!(PipelineSpec::choose(path.to_str().unwrap()).unwrap(), spec);
        }
        let missing = dir.join("missing.toml");
        let e = PipelineSpec::choose(missing.to_str().unwrap()).unwrap_err();
        assert!(e.to_string().contains("missing.toml"), "{e}");
        std::fs::write(&toml, "stages = 3").unwrap();
        let e = PipelineSpec::choose(toml.to_str().unwrap()).unwrap_err();
        assert!(e.to_string().contains("p.toml"), "{e}");
        let e = PipelineSpec::choose("no-such-preset").unwrap_err();
        assert!(e.to_string().contains("no-such-preset"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn output_types_round_trip_their_names() {
        for t in [OutputType::Float32, OutputType::Int16] {
            assert_eq!(OutputType::parse(t.name()).unwrap(), t);
        }
        assert!(
            OutputType::parse("int32")
                .unwrap_err()
                .to_string()
                .contains("int32")
        );
    }
}
