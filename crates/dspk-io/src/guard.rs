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
    if let Some(dirs) = crate::experiment_recordings(path) {
        return recordings_inputs(&dirs);
    }
    // An Open Ephys recording of several streams (opened on one by name): every stream's
    // files, so that nothing any choice reads is overwritten.
    let streams = crate::openephys::streams_of(path)?;
    if streams.len() > 1 {
        let mut all: Vec<(PathBuf, String)> = Vec::new();
        for (_, dir) in streams {
            for file in recording_inputs(&dir)? {
                if !all.iter().any(|(p, _)| *p == file.0) {
                    all.push(file);
                }
            }
        }
        return Ok(all);
    }
    // An NWB file is one file whatever series is read (and `detect` without a series name
    // refuses a file of several).
    if crate::nwb::is_nwb(path) {
        return Ok(vec![(
            path.to_path_buf(),
            "the recording's NWB file".to_string(),
        )]);
    }
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

/// [`recording_inputs`] of each of `paths` (the files of a joined recording), in order.
pub fn recordings_inputs(paths: &[PathBuf]) -> DspResult<Vec<(PathBuf, String)>> {
    let mut all = Vec::new();
    for p in paths {
        all.extend(recording_inputs(p)?);
    }
    Ok(all)
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

/// Refuses `output` (named by `flag` as the user gave it, e.g. `-o` or `--mask`) when it is
/// one of `inputs` (each with what it is, e.g. `the recording's .meta`), before anything is
/// written.
pub fn refuse_overwrite(inputs: &[(PathBuf, String)], flag: &str, output: &Path) -> DspResult<()> {
    refuse_named(inputs, &format!("{flag} {}", output.display()), output)
}

/// [`refuse_overwrite`] with the output already named in full (`named`).
fn refuse_named(inputs: &[(PathBuf, String)], named: &str, output: &Path) -> DspResult<()> {
    match inputs.iter().find(|(input, _)| same_file(input, output)) {
        Some((input, what)) => Err(DspError::config(format!(
            "{named} would overwrite {what} {}: choose another output path",
            input.display()
        ))),
        None => Ok(()),
    }
}

/// Refuses, before anything is read or written, a binary output `output` (named by `flag`,
/// e.g. `-o`) when it or its sidecar is one of `inputs` ([`refuse_overwrite`]) or a directory,
/// or when the directory it goes in does not exist ([`DspError::NotFound`]). `dspk convert`
/// and the Python package's `convert` both check their output with it.
pub fn check_output(inputs: &[(PathBuf, String)], flag: &str, output: &Path) -> DspResult<()> {
    let named = format!("{flag} {}", output.display());
    let sidecar = crate::sidecar_path(output);
    let sidecar_named = format!("the sidecar of {named}, {},", sidecar.display());
    for (path, name) in [(output, named.as_str()), (&sidecar, sidecar_named.as_str())] {
        refuse_named(inputs, name, path)?;
        if path.is_dir() {
            return Err(DspError::Io {
                message: format!(
                    "{} is a directory: an output file cannot be written there",
                    name.trim_end_matches(',')
                ),
                path: None,
            });
        }
    }
    let parent = match output.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !parent.is_dir() {
        return Err(DspError::NotFound {
            what: format!("{named}: the directory"),
            path: parent.to_path_buf(),
        });
    }
    Ok(())
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
        let spelled = dir.join("./a.bin");
        let err = refuse_overwrite(&inputs, "-o", &spelled).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "invalid configuration: -o {} would overwrite the recording's data file {}: \
                 choose another output path",
                spelled.display(),
                a.display()
            )
        );
        assert!(refuse_overwrite(&inputs, "-o", &dir.join("new.bin")).is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn outputs_checked_with_their_sidecar() {
        let dir = scratch("output");
        let data = dir.join("rec.bin");
        let side = crate::sidecar_path(&data);
        std::fs::write(&data, b"x").unwrap();
        std::fs::write(&side, b"{}").unwrap();
        let inputs = [
            (data.clone(), "the recording's data file".to_string()),
            (side.clone(), "the recording's sidecar".to_string()),
        ];
        let err = check_output(&inputs, "-o", &data).unwrap_err();
        assert!(
            err.to_string().contains(&format!(
                "-o {} would overwrite the recording's data file",
                data.display()
            )),
            "{err}"
        );
        let fresh = dir.join("fresh.bin");
        std::fs::write(crate::sidecar_path(&fresh), b"{}").unwrap();
        let sidecar_input = [(
            crate::sidecar_path(&fresh),
            "the recording's sidecar".to_string(),
        )];
        let err = check_output(&sidecar_input, "out", &fresh).unwrap_err();
        assert!(
            err.to_string().contains(&format!(
                "the sidecar of out {}, {}, would overwrite the recording's sidecar",
                fresh.display(),
                crate::sidecar_path(&fresh).display()
            )),
            "{err}"
        );
        std::fs::create_dir_all(dir.join("folder.bin")).unwrap();
        let err = check_output(&inputs, "-o", &dir.join("folder.bin")).unwrap_err();
        assert!(matches!(err, DspError::Io { .. }), "{err:?}");
        assert!(
            err.to_string()
                .ends_with("is a directory: an output file cannot be written there"),
            "{err}"
        );
        std::fs::create_dir_all(dir.join("side.bin.json")).unwrap();
        let err = check_output(&inputs, "-o", &dir.join("side.bin")).unwrap_err();
        assert!(err.to_string().starts_with("the sidecar of -o"), "{err}");
        let nowhere = dir.join("gone").join("x.bin");
        let err = check_output(&inputs, "-o", &nowhere).unwrap_err();
        assert_eq!(
            err,
            DspError::NotFound {
                what: format!("-o {}: the directory", nowhere.display()),
                path: dir.join("gone"),
            }
        );
        assert!(check_output(&inputs, "-o", &dir.join("new.bin")).is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
