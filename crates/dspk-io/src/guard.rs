//! Outputs that must not overwrite inputs: a recording's files (data, sidecar, `.meta`,
//! `structure.oebin`, `.npy`) are compared with every output path by the file they resolve
//! to, not by the path as typed.

use std::path::{Path, PathBuf};

use dspk_types::{DspError, DspResult};

use crate::detect::detect;

/// The files the recording at `path` consists of (its data file, its sidecar, `.meta` or
/// `structure.oebin`, and an Open Ephys stream's `.npy` files), as [`detect`] finds them.
pub fn recording_files(path: &Path) -> DspResult<Vec<PathBuf>> {
    Ok(recording_inputs(path)?
        .into_iter()
        .map(|(p, _)| p)
        .collect())
}

/// [`recording_files`], each with what it is (`the recording's data file`, `the recording's
/// .meta`, …), as [`refuse_overwrite`] takes them.
pub fn recording_inputs(path: &Path) -> DspResult<Vec<(PathBuf, String)>> {
    let d = detect(path)?;
    let mut out = vec![
        (d.data_path, "the recording's data file".to_string()),
        (d.metadata_path, d.format.metadata_role().to_string()),
    ];
    out.extend(d.index_paths.into_iter().map(|p| {
        (
            p,
            "the recording's sample numbers or timestamps".to_string(),
        )
    }));
    Ok(out)
}

/// Whether `a` and `b` are the same file: the same path after resolving symbolic links and
/// `..`, or (on Unix) the same device and inode, so hard links count too. A path that does
/// not exist yet is the same as another when its resolved parent and name are.
pub fn same_file(a: &Path, b: &Path) -> bool {
    if let (Ok(ma), Ok(mb)) = (std::fs::metadata(a), std::fs::metadata(b)) {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt as _;
            return ma.dev() == mb.dev() && ma.ino() == mb.ino();
        }
        #[cfg(not(unix))]
        {
            let _ = (ma, mb);
            return matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y);
        }
    }
    match (resolved(a), resolved(b)) {
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

/// `path` with its parent resolved (the file itself may not exist).
fn resolved(path: &Path) -> Option<PathBuf> {
    if let Ok(p) = path.canonicalize() {
        return Some(p);
    }
    let name = path.file_name()?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    Some(parent.canonicalize().ok()?.join(name))
}

/// Refuses `output` (named `flag` in the message, e.g. `-o out.bin`) when it is one of
/// `inputs` (each with what it is, e.g. `the recording's .meta`), before anything is written.
pub fn refuse_overwrite(inputs: &[(PathBuf, String)], flag: &str, output: &Path) -> DspResult<()> {
    match inputs.iter().find(|(input, _)| same_file(input, output)) {
        Some((input, what)) => Err(DspError::config(format!(
            "{flag} {} would overwrite {what} {}: choose another output path",
            output.display(),
            input.display()
        ))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("dspk-guard-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn spellings_links_and_new_files() {
        let dir = scratch("same");
        let a = dir.join("a.bin");
        std::fs::write(&a, b"x").unwrap();
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        assert!(same_file(&a, &dir.join("sub").join("..").join("a.bin")));
        // Not there yet: the same when its resolved parent and name are.
        assert!(same_file(
            &dir.join("new.bin"),
            &dir.join("sub").join("..").join("new.bin")
        ));
        assert!(same_file(&a, &dir.join(".").join("a.bin")));
        assert!(!same_file(&a, &dir.join("b.bin")));
        #[cfg(unix)]
        {
            std::fs::hard_link(&a, dir.join("hard.bin")).unwrap();
            std::os::unix::fs::symlink(&a, dir.join("soft.bin")).unwrap();
            assert!(same_file(&a, &dir.join("hard.bin")));
            assert!(same_file(&a, &dir.join("soft.bin")));
        }
        let inputs = [(a.clone(), "the recording's data file".to_string())];
        let err = refuse_overwrite(&inputs, "-o", &dir.join("./a.bin")).unwrap_err();
        assert!(
            err.to_string()
                .contains("would overwrite the recording's data file"),
            "{err}"
        );
        assert!(refuse_overwrite(&inputs, "-o", &dir.join("new.bin")).is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
