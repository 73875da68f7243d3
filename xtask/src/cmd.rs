//! Running commands from the workspace root, each printed before it runs.

use std::ffi::{OsStr, OsString};
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;

use crate::Error;

/// The workspace xtask works on: its root and the target directory a plain `cargo build` uses.
pub struct Workspace {
    /// The directory of the root `Cargo.toml`.
    pub root: PathBuf,
    /// `CARGO_TARGET_DIR` when set (relative to where xtask was started, as cargo reads it),
    /// else `<root>/target`. `build.target-dir` in a cargo config is not read: this workspace
    /// does not set one.
    pub target_dir: PathBuf,
}

impl Workspace {
    /// The workspace of the xtask package being run: `CARGO_MANIFEST_DIR` as `cargo run` sets
    /// it for this process, else where this binary was compiled. (The compile-time path alone
    /// is wrong when a clone shares another checkout's target dir: cargo then reuses the binary
    /// built in the other checkout.)
    pub fn locate() -> Result<Self, Error> {
        let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
        let root = manifest_dir
            .parent()
            .expect("xtask/ lives inside the workspace root")
            .to_path_buf();
        let target_dir = match std::env::var_os("CARGO_TARGET_DIR").filter(|v| !v.is_empty()) {
            Some(dir) => {
                let cwd = std::env::current_dir().map_err(|e| {
                    Error::Failed(format!("cannot read the current directory: {e}"))
                })?;
                cwd.join(dir)
            }
            None => root.join("target"),
        };
        Ok(Self { root, target_dir })
    }

    /// `path` relative to the workspace root where it lies inside it, for shorter messages.
    pub fn show(&self, path: &Path) -> String {
        path.strip_prefix(&self.root)
            .unwrap_or(path)
            .display()
            .to_string()
    }
}

/// One command line: program, arguments, and environment added to xtask's own.
pub struct Cmd {
    program: OsString,
    shown_as: String,
    args: Vec<OsString>,
    envs: Vec<(String, OsString)>,
    cwd: PathBuf,
}

/// What a captured command did.
pub struct Captured {
    /// Whether it exited with status 0.
    pub success: bool,
    /// Its stdout and stderr, interleaved line by line as they arrived.
    pub output: String,
}

impl Cmd {
    /// `cargo` (the one that runs xtask, through `$CARGO`), in the workspace root.
    pub fn cargo(ws: &Workspace) -> Self {
        let program = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        Self {
            program,
            shown_as: "cargo".to_owned(),
            args: Vec::new(),
            envs: Vec::new(),
            cwd: ws.root.clone(),
        }
    }

    /// `program` (a path or a name on `PATH`), in the workspace root.
    pub fn program(ws: &Workspace, program: impl AsRef<OsStr>) -> Self {
        let program = program.as_ref().to_owned();
        Self {
            shown_as: ws.show(Path::new(&program)),
            program,
            args: Vec::new(),
            envs: Vec::new(),
            cwd: ws.root.clone(),
        }
    }

    /// Adds arguments.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    /// Sets an environment variable for this command only.
    pub fn env(mut self, key: &str, value: impl AsRef<OsStr>) -> Self {
        self.envs.push((key.to_owned(), value.as_ref().to_owned()));
        self
    }

    /// The command as a shell line, environment first.
    pub fn line(&self) -> String {
        let envs = self
            .envs
            .iter()
            .map(|(k, v)| format!("{k}={}", quote(&v.to_string_lossy())));
        let argv = std::iter::once(self.shown_as.clone())
            .chain(self.args.iter().map(|a| quote(&a.to_string_lossy())));
        envs.chain(argv).collect::<Vec<_>>().join(" ")
    }

    fn command(&self) -> Command {
        let mut command = Command::new(&self.program);
        command.args(&self.args).current_dir(&self.cwd);
        for (k, v) in &self.envs {
            command.env(k, v);
        }
        command
    }

    fn announce(&self) {
        eprintln!("$ {}", self.line());
    }

    /// Runs with the terminal's stdio; a non-zero exit is an error naming the command.
    pub fn run(&self) -> Result<(), Error> {
        self.announce();
        let status = self
            .command()
            .status()
            .map_err(|e| Error::Failed(format!("cannot start `{}`: {e}", self.line())))?;
        if status.success() {
            Ok(())
        } else {
            Err(Error::Failed(format!(
                "`{}` failed ({status})",
                self.line()
            )))
        }
    }

    /// Runs with all output discarded: true when it started and exited with status 0.
    pub fn succeeds_quietly(&self) -> bool {
        self.announce();
        self.command()
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    /// Runs, passing stdout and stderr through as they come and keeping a copy of both.
    pub fn run_captured(&self) -> Result<Captured, Error> {
        self.announce();
        let mut child = self
            .command()
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| Error::Failed(format!("cannot start `{}`: {e}", self.line())))?;
        let copy = Arc::new(Mutex::new(Vec::new()));
        let out = child.stdout.take().expect("stdout was piped above");
        let err = child.stderr.take().expect("stderr was piped above");
        let out_thread = tee(out, io::stdout(), Arc::clone(&copy));
        let err_thread = tee(err, io::stderr(), Arc::clone(&copy));
        let status = child
            .wait()
            .map_err(|e| Error::Failed(format!("cannot wait for `{}`: {e}", self.line())))?;
        for thread in [out_thread, err_thread] {
            thread
                .join()
                .map_err(|_| Error::Failed("an output-copying thread panicked".to_owned()))?;
        }
        let bytes = std::mem::take(&mut *copy.lock().unwrap_or_else(|p| p.into_inner()));
        Ok(Captured {
            success: status.success(),
            output: String::from_utf8_lossy(&bytes).into_owned(),
        })
    }
}

/// Copies `from` line by line to `to` and appends each line to `copy`.
fn tee<R, W>(from: R, mut to: W, copy: Arc<Mutex<Vec<u8>>>) -> thread::JoinHandle<()>
where
    R: Read + Send + 'static,
    W: Write + Send + 'static,
{
    thread::spawn(move || {
        let mut reader = BufReader::new(from);
        let mut line = Vec::new();
        loop {
            line.clear();
            match reader.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    // A closed terminal must not stop the copy that the classification reads.
                    let _ = to.write_all(&line).and_then(|()| to.flush());
                    copy.lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .extend_from_slice(&line);
                }
            }
        }
    })
}

/// Quotes a word for display when a shell would split or expand it.
fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_=.,/:+@%".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quote_leaves_plain_words_and_quotes_the_rest() {
        assert_eq!(quote("--features"), "--features");
        assert_eq!(quote("wgpu,cuda"), "wgpu,cuda");
        assert_eq!(quote("-D warnings"), "'-D warnings'");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote(""), "''");
    }

    #[test]
    fn line_shows_environment_then_program_and_arguments() {
        let ws = Workspace {
            root: PathBuf::from("/ws"),
            target_dir: PathBuf::from("/ws/target"),
        };
        let cmd = Cmd::cargo(&ws)
            .args(["doc", "--workspace"])
            .env("RUSTDOCFLAGS", "-D warnings");
        assert_eq!(
            cmd.line(),
            "RUSTDOCFLAGS='-D warnings' cargo doc --workspace"
        );
    }
}
