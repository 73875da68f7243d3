//! Disk space in CI: how much is free at each step (a full disk otherwise shows up as an
//! unrelated failure late in the run), and the lint build's output removed once no later step
//! needs it.

use std::path::Path;
use std::process::Command;

use crate::cmd::Workspace;

/// The free bytes of the filesystem that holds `path`, as `df -Pk` reports them; `None` where
/// `df` cannot tell.
pub fn free_bytes(path: &Path) -> Option<u64> {
    let out = Command::new("df").arg("-Pk").arg(path).output().ok()?;
    if !out.status.success() {
        return None;
    }
    parse_df_available(&String::from_utf8_lossy(&out.stdout))
}

/// The "Available" column (KiB) of `df -Pk`'s one data line, in bytes.
fn parse_df_available(text: &str) -> Option<u64> {
    let line = text.lines().nth(1)?;
    let kib: u64 = line.split_whitespace().nth(3)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// `12.3 GB`.
fn gigabytes(bytes: u64) -> String {
    format!("{:.1} GB", bytes as f64 / 1e9)
}

/// One line: the space free for the target directory and for temporary files.
pub fn report(ws: &Workspace) -> String {
    let temp = std::env::temp_dir();
    let target = if ws.target_dir.exists() {
        ws.target_dir.as_path()
    } else {
        ws.root.as_path()
    };
    let shown = |p: &Path| free_bytes(p).map_or_else(|| "unknown".to_owned(), gigabytes);
    format!(
        "disk: {} free for {}, {} for temporary files ({})",
        shown(target),
        ws.show(&ws.target_dir),
        shown(&temp),
        temp.display()
    )
}

/// Removes what `cargo clippy`, `cargo check` and `cargo doc` compiled that no later step of
/// `ci` reads: check-mode metadata (a `.rmeta` with no `.rlib` beside it) in the `ci` profile
/// they now share with the tests, whose build scripts and proc macros stay; and the dev profile's
/// output (`target/debug`) of runs before they did. The running xtask binary
/// (`target/debug/xtask`) stays. Returns the bytes removed.
pub fn drop_lint_build(ws: &Workspace) -> u64 {
    let mut freed = 0;
    let debug = ws.target_dir.join("debug");
    for dir in ["deps", "build", ".fingerprint", "incremental", "examples"] {
        let path = debug.join(dir);
        let size = size_of(&path);
        if std::fs::remove_dir_all(&path).is_ok() {
            freed += size;
        }
    }
    let deps = ws.target_dir.join(crate::ci::CI_PROFILE).join("deps");
    let Ok(entries) = std::fs::read_dir(&deps) else {
        return freed;
    };
    for path in entries.flatten().map(|e| e.path()) {
        let check_only =
            path.extension().is_some_and(|e| e == "rmeta") && !path.with_extension("rlib").exists();
        if check_only {
            let size = size_of(&path);
            if std::fs::remove_file(&path).is_ok() {
                freed += size;
            }
        }
    }
    freed
}

/// The bytes of the files under `path` (0 where it cannot be read).
fn size_of(path: &Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return 0;
    };
    if !meta.is_dir() {
        return meta.len();
    }
    std::fs::read_dir(path).map_or(0, |entries| {
        entries
            .filter_map(Result::ok)
            .map(|e| size_of(&e.path()))
            .sum()
    })
}

/// `freed` bytes, for the log.
pub fn freed_line(freed: u64) -> String {
    format!(
        "removed the lint, check and doc builds' metadata: {} freed",
        gigabytes(freed)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_available_column() {
        let text = "Filesystem     1024-blocks      Used Available Capacity Mounted on\n\
                    /dev/vda         263174212  12582912  83886080      13% /\n";
        assert_eq!(parse_df_available(text), Some(83_886_080 * 1024));
        assert_eq!(parse_df_available("Filesystem\n"), None);
        assert_eq!(parse_df_available("header\n/dev/x 1 2 many 3% /\n"), None);
    }

    #[test]
    fn sizes_a_tree_and_removes_only_the_lint_build() {
        let root = std::env::temp_dir().join(format!("xtask-disk-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let debug = root.join("target/debug");
        std::fs::create_dir_all(debug.join("deps/nested")).unwrap();
        std::fs::create_dir_all(debug.join("build")).unwrap();
        std::fs::write(debug.join("deps/a.rmeta"), vec![0u8; 1000]).unwrap();
        std::fs::write(debug.join("deps/nested/b"), vec![0u8; 24]).unwrap();
        std::fs::write(debug.join("build/c"), vec![0u8; 7]).unwrap();
        std::fs::write(debug.join("xtask"), vec![0u8; 5]).unwrap();
        assert_eq!(size_of(&debug), 1036);
        let ci = root.join("target/ci/deps");
        std::fs::create_dir_all(&ci).unwrap();
        std::fs::write(ci.join("libchecked-1.rmeta"), vec![0u8; 300]).unwrap();
        std::fs::write(ci.join("libbuilt-2.rmeta"), vec![0u8; 40]).unwrap();
        std::fs::write(ci.join("libbuilt-2.rlib"), vec![0u8; 50]).unwrap();
        std::fs::write(ci.join("libmacro-3.so"), vec![0u8; 60]).unwrap();
        let ws = Workspace {
            root: root.clone(),
            target_dir: root.join("target"),
        };
        assert_eq!(drop_lint_build(&ws), 1031 + 300);
        assert!(!debug.join("deps").exists() && !debug.join("build").exists());
        assert!(!ci.join("libchecked-1.rmeta").exists());
        assert!(
            ["libbuilt-2.rmeta", "libbuilt-2.rlib", "libmacro-3.so"]
                .iter()
                .all(|f| ci.join(f).exists()),
            "what a build compiled stays"
        );
        assert!(
            debug.join("xtask").exists(),
            "the running xtask binary stays"
        );
        std::fs::remove_dir_all(&root).unwrap();
    }
}
