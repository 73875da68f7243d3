//! Bad input to the `dspk` program, as a new user types it: each case must fail with its exit
//! status and one line on stderr that names the culprit, print nothing on stdout, and leave
//! every file as it was (no input changed, no output or temporary file left behind). Outputs
//! that would overwrite a file of the recording (by the same path, another spelling, a symbolic
//! or a hard link) are among them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs `dspk` in `dir` with `args` (no `DSPK_RUNTIME` from the caller's environment).
fn dspk_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dspk"))
        .args(args)
        .current_dir(dir)
        .env_remove("DSPK_RUNTIME")
        .output()
        .expect("the dspk binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Every file under `dir` (recursively) with its bytes; symbolic links as their target.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).expect("list the fixture directory") {
            let path = entry.expect("an entry").path();
            let meta = std::fs::symlink_metadata(&path).expect("stat");
            if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&path).expect("readlink");
                files.insert(path, target.to_string_lossy().as_bytes().to_vec());
            } else if meta.is_dir() {
                files.insert(path.clone(), b"<dir>".to_vec());
                todo.push(path);
            } else {
                files.insert(path.clone(), std::fs::read(&path).expect("read"));
            }
        }
    }
    files
}

/// 2 channels of int16, time-major, `samples` long, with a ramp so no two files are alike.
fn frames(samples: usize, seed: i16) -> Vec<u8> {
    (0..samples * 2)
        .flat_map(|i| (i as i16).wrapping_mul(31).wrapping_add(seed).to_le_bytes())
        .collect()
}

const SIDECAR: &str = r#"{"sample_rate": "30000", "channel_count": 2, "format": "int16",
 "order": "time-major", "channels": [{"name": "A0", "gain": 0.5, "unit": "uV"},
 {"name": "A1", "gain": 0.5, "unit": "uV"}]}"#;

const META: &str = "typeThis=imec\nimSampRate=30000.0\nnSavedChans=5\nsnsApLfSy=4,0,1\n\
acqApLfSy=4,4,1\nsnsSaveChanSubset=0:3,8\nimAiRangeMax=0.6\nimAiRangeMin=-0.6\n\
imDatPrb_type=0\n~imroTbl=(0,4)(0 0 0 500 250 1)(1 0 0 250 125 1)(2 0 0 1000 500 1)\
(3 0 0 50 2400 1)\n~snsChanMap=(4,4,1)(AP0;0:0)(AP1;1:1)(AP2;2:2)(AP3;3:3)(SY0;8:8)\n";

fn write(dir: &Path, name: &str, bytes: impl AsRef<[u8]>) {
    std::fs::write(dir.join(name), bytes).expect("write a fixture");
}

/// The fixture directory: good recordings of both formats, and broken ones.
fn fixtures(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("dspk-bad-inputs")
        .join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("sub")).expect("create the fixture directory");
    write(&dir, "raw.bin", frames(3000, 1));
    write(&dir, "raw.bin.json", SIDECAR);
    let five: Vec<u8> = frames(3000, 2).into_iter().chain(frames(4500, 3)).collect();
    write(&dir, "x.ap.bin", &five[..3000 * 10]);
    write(&dir, "x.ap.meta", META);
    write(
        &dir,
        "map.toml",
        "[remap]\nbase = 0\npairs = [{ from = 1, to = 0 }]\n",
    );
    write(
        &dir,
        "twice.toml",
        "[remap]\nbase = 0\npairs = [{ from = 0, to = 0 }, { from = 0, to = 1 }]\n",
    );
    write(&dir, "empty.bin", b"");
    write(&dir, "empty.bin.json", SIDECAR);
    write(&dir, "gone.dat.json", SIDECAR);
    write(&dir, "plain.xyz", b"not a recording");
    for (file, sidecar) in [
        ("list_rate", SIDECAR.replace(r#""30000""#, "[30000]")),
        ("negative_rate", SIDECAR.replace(r#""30000""#, "-30000")),
        ("zero_rate", SIDECAR.replace(r#""30000""#, r#""0""#)),
        ("typo", SIDECAR.replace("\"order\"", "\"ordr\"")),
        (
            "no_channels",
            SIDECAR.replace("\"channel_count\": 2", "\"channel_count\": 0"),
        ),
        ("int17", SIDECAR.replace("int16", "int17")),
        ("diagonal", SIDECAR.replace("time-major", "diagonal")),
        (
            "count_mismatch",
            SIDECAR.replace("\"channel_count\": 2", "\"channel_count\": 3"),
        ),
        (
            "nan_gain",
            SIDECAR.replace("0.5, \"unit\": \"uV\"}]", "1e999, \"unit\": \"uV\"}]"),
        ),
        ("truncated_json", SIDECAR[..40].to_string()),
        ("trailing_json", format!("{SIDECAR} {{}}")),
        (
            "header_past_end",
            SIDECAR.replace("\"format\"", "\"header_offset_bytes\": 99999, \"format\""),
        ),
        (
            "version_9",
            SIDECAR.replace("{\"sample_rate\"", "{\"version\": 9, \"sample_rate\""),
        ),
    ] {
        write(&dir, &format!("{file}.bin"), frames(100, 4));
        write(&dir, &format!("{file}.bin.json"), sidecar);
    }
    write(&dir, "orphan.ap.meta", META);
    write(&dir, "evil.ap.bin", frames(100, 5));
    write(
        &dir,
        "evil.ap.meta",
        format!("{META}\u{1b}[31mEVIL\u{7}\u{0}\n"),
    );
    write(&dir, "badrate.ap.bin", frames(100, 6));
    write(
        &dir,
        "badrate.ap.meta",
        META.replace("imSampRate=30000.0", "imSampRate=fast"),
    );
    write(&dir, "norate.ap.bin", frames(100, 6));
    write(
        &dir,
        "norate.ap.meta",
        META.replace("imSampRate=30000.0\n", ""),
    );
    // Pipelines `dspk preprocess` refuses before it writes anything.
    let high_pass = |hz: &str| {
        format!(
            "[[stages]]\nkind = \"filter\"\nband = \"highpass\"\ncutoff_hz = [{hz}]\norder = 3\n"
        )
    };
    write(&dir, "hp.toml", high_pass("300.0"));
    write(&dir, "nyquist.toml", high_pass("20000.0"));
    write(&dir, "wavelet.toml", "[[stages]]\nkind = \"wavelet\"\n");
    write(
        &dir,
        "w3.json",
        r#"{"version": 1, "channels": 3, "scope": "global", "epsilon": 0.0, "samples": 0,
 "rows": [{"columns": [0], "weights": [1.0]}, {"columns": [1], "weights": [1.0]},
 {"columns": [2], "weights": [1.0]}]}"#,
    );
    write(
        &dir,
        "whiten3.toml",
        "[[stages]]\nkind = \"whiten\"\nmatrix = \"w3.json\"\n",
    );
    std::fs::create_dir_all(dir.join("out.bin.json")).expect("a directory where a sidecar goes");
    write(&dir, "out.bin", b"the previous output");
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(dir.join("x.ap.meta"), dir.join("meta-link")).unwrap();
        std::os::unix::fs::symlink(dir.join("raw.bin"), dir.join("raw-link.bin")).unwrap();
        std::fs::hard_link(dir.join("raw.bin.json"), dir.join("hard.json")).unwrap();
        std::fs::hard_link(dir.join("x.ap.bin"), dir.join("hard.bin")).unwrap();
    }
    dir
}

/// One bad command: its arguments, the exit status, and what its one line must contain.
struct Case {
    args: &'static [&'static str],
    status: i32,
    wants: &'static [&'static str],
}

const fn case(args: &'static [&'static str], status: i32, wants: &'static [&'static str]) -> Case {
    Case {
        args,
        status,
        wants,
    }
}

/// Usage errors (status 2), bad runtimes, bad files, bad ranges, refused outputs (status 1).
const CASES: &[Case] = &[
    // Usage: one line with where help is, status 2.
    case(&[], 2, &["a command is needed", "dspk --help"]),
    case(&["frobnicate"], 2, &["frobnicate", "dspk --help"]),
    case(&["scan", "--bogus"], 2, &["--bogus", "dspk scan --help"]),
    case(
        &["convert", "raw.bin"],
        2,
        &["--output", "dspk convert --help"],
    ),
    case(
        &["convert", "raw.bin", "-o", "o.bin", "--order", "diagonal"],
        2,
        &["diagonal", "--order"],
    ),
    case(
        &["scan", "--window-samples", "abc"],
        2,
        &["abc", "--window-samples"],
    ),
    case(
        &["info", "raw.bin", "extra.bin"],
        2,
        &["extra.bin", "dspk info --help"],
    ),
    case(&["scan", "--mask"], 2, &["--mask", "dspk scan --help"]),
    // Runtimes.
    case(&["--runtime", "metal", "devices"], 1, &["metal", "wgpu"]),
    // Rates.
    case(
        &["info", "raw.bin", "--rate", "fast"],
        1,
        &["--rate", "fast"],
    ),
    case(&["scan", "raw.bin", "--rate", "0"], 1, &["--rate", "0"]),
    case(
        &["convert", "raw.bin", "-o", "o.bin", "--rate", "-30000"],
        1,
        &["--rate", "-30000"],
    ),
    case(
        &["info", "raw.bin", "--rate", "measured"],
        1,
        &["--rate measured", "raw.bin", "no measured rate"],
    ),
    // Segments and joined files.
    case(
        &["scan", "raw.bin", "--segment", "1"],
        1,
        &["--segment", "no segment 1", "has 1"],
    ),
    case(
        &["info", "raw.bin", "--zero-fill-gaps"],
        2,
        &["--concat", "dspk info --help"],
    ),
    case(
        &["info", "--concat", "raw.bin", "nothing.bin"],
        1,
        &["nothing.bin", "no such file"],
    ),
    case(
        &["scan", "raw.bin", "raw.bin", "--segment", "0"],
        1,
        &["--segment", "one REC"],
    ),
    case(
        &["convert", "raw.bin", "raw.bin", "-o", "o.bin"],
        2,
        &["raw.bin", "--concat", "dspk convert --help"],
    ),
    // A stream name where there are no streams.
    case(
        &["info", "raw.bin", "--stream", "ProbeA-AP"],
        1,
        &["raw.bin", "no streams", "'ProbeA-AP'", "Open Ephys"],
    ),
    case(
        &["scan", "--stream", "ProbeA-AP"],
        1,
        &["--stream", "give the REC"],
    ),
    case(
        &["bench", "raw.bin", "--stream", "ProbeA-AP"],
        1,
        &["raw.bin", "no streams", "'ProbeA-AP'", "Open Ephys"],
    ),
    case(
        &["bench", "--stream", "ProbeA-AP", "--seconds", "1"],
        1,
        &["--stream", "give the Open Ephys recording"],
    ),
    // Devices and several recordings.
    case(
        &["scan", "raw.bin", "--devices", "first"],
        1,
        &["--devices", "`first` is not a device number"],
    ),
    case(
        &["scan", "raw.bin", "--devices", "0,"],
        1,
        &["--devices", "`` is not a device number"],
    ),
    case(
        &["scan", "raw.bin", "--devices", "97"],
        1,
        &[
            "--devices",
            "device 97 does not exist",
            "`dspk devices` numbers 0",
        ],
    ),
    case(
        &["scan", "raw.bin", "--devices", "0,0,0"],
        1,
        &["--devices", "device 0 is chosen 3 times"],
    ),
    case(
        &["scan", "raw.bin", "x.ap.bin", "--mask", "m.json"],
        1,
        &["--mask writes one file"],
    ),
    case(
        &["scan", "raw.bin", "x.ap.bin", "--synthetic-duration", "5"],
        1,
        &["--synthetic-duration", "no REC is given"],
    ),
    case(&["scan", "raw.bin", "gone.bin"], 1, &["gone.bin"]),
    case(&["--runtime", "", "info"], 1, &["--runtime"]),
    // Files that are not recordings.
    case(
        &["info", "missing.bin"],
        1,
        &["missing.bin", "no such file"],
    ),
    case(
        &["info", "gone.dat.json"],
        1,
        &["gone.dat", "missing data file"],
    ),
    case(&["info", "sub"], 1, &["sub", "directory"]),
    case(&["info", "plain.xyz"], 1, &["plain.xyz", "no sidecar"]),
    case(
        &["info", "orphan.ap.meta"],
        1,
        &["orphan.ap.bin", "missing .bin"],
    ),
    case(
        &["info", "list_rate.bin"],
        1,
        &["list_rate.bin.json", "sample_rate", "sample rate in hertz"],
    ),
    case(
        &["info", "negative_rate.bin"],
        1,
        &["negative_rate.bin.json", "sample_rate", "-30000"],
    ),
    case(
        &["info", "zero_rate.bin"],
        1,
        &["zero_rate.bin.json", "sample_rate"],
    ),
    case(&["info", "typo.bin"], 1, &["typo.bin.json", "ordr"]),
    case(
        &["info", "no_channels.bin"],
        1,
        &["no_channels.bin.json", "channel_count is 0"],
    ),
    case(
        &["info", "int17.bin"],
        1,
        &["int17.bin.json", "format", "int17"],
    ),
    case(
        &["info", "diagonal.bin"],
        1,
        &["diagonal.bin.json", "order", "diagonal"],
    ),
    case(
        &["info", "count_mismatch.bin"],
        1,
        &["count_mismatch.bin.json", "3", "2 channels"],
    ),
    case(
        &["info", "nan_gain.bin"],
        1,
        &["nan_gain.bin.json", "channels"],
    ),
    case(
        &["info", "truncated_json.bin"],
        1,
        &["truncated_json.bin.json", "invalid sidecar"],
    ),
    case(
        &["info", "trailing_json.bin"],
        1,
        &["trailing_json.bin.json", "trailing"],
    ),
    case(
        &["info", "header_past_end.bin"],
        1,
        &["header_past_end.bin", "header_offset_bytes 99999"],
    ),
    case(
        &["info", "version_9.bin"],
        1,
        &["version_9.bin.json", "version 9"],
    ),
    case(
        &["info", "evil.ap.bin"],
        1,
        &["evil.ap.meta", "\\x1b[31mEVIL\\x07\\x00"],
    ),
    case(
        &["info", "badrate.ap.bin"],
        1,
        &["badrate.ap.meta", "imSampRate", "fast"],
    ),
    case(
        &["info", "norate.ap.bin"],
        1,
        &["norate.ap.meta", "imSampRate"],
    ),
    // Ranges.
    case(&["scan", "empty.bin"], 1, &["empty.bin", "no samples"]),
    case(
        &["convert", "empty.bin", "-o", "o.bin"],
        1,
        &["empty.bin", "no samples"],
    ),
    case(
        &["scan", "raw.bin", "--duration", "0"],
        1,
        &["--duration 0 s", "1/30000 s"],
    ),
    case(
        &["scan", "raw.bin", "--start", "10"],
        1,
        &["--start 10 s", "past the end"],
    ),
    case(
        &["scan", "raw.bin", "--end", "0.2", "--duration", "0.01"],
        1,
        &["--end", "--duration", "not both"],
    ),
    case(
        &["scan", "raw.bin", "--start", "0.05", "--end", "0.01"],
        1,
        &["--end", "before --start"],
    ),
    case(
        &["scan", "raw.bin", "--start", "1:xx"],
        1,
        &["--start", "1:xx"],
    ),
    case(
        &["scan", "raw.bin", "--end", "4000smp"],
        1,
        &["--end sample 4000", "past the end"],
    ),
    case(
        &["scan", "--synthetic-duration", "0"],
        1,
        &["--synthetic-duration", "shorter than one sample"],
    ),
    case(
        &["scan", "raw.bin", "--synthetic-duration", "1"],
        1,
        &["--synthetic-duration", "built-in"],
    ),
    case(
        &["convert", "raw.bin", "-o", "o.bin", "--channels", "2"],
        1,
        &["--channels", "channel 2"],
    ),
    case(
        &["convert", "raw.bin", "-o", "o.bin", "--channels", "1,,0"],
        1,
        &["--channels"],
    ),
    case(
        &["convert", "raw.bin", "-o", "o.bin", "--map", "missing.toml"],
        1,
        &["--map missing.toml"],
    ),
    case(
        &["convert", "raw.bin", "-o", "o.bin", "--map", "twice.toml"],
        1,
        &["--map twice.toml"],
    ),
    // Outputs that would overwrite a file of the recording, refused before anything is written.
    case(
        &["convert", "raw.bin", "-o", "raw.bin"],
        1,
        &["-o raw.bin", "the recording's data file"],
    ),
    case(
        &["convert", "raw.bin", "-o", "raw.bin.json"],
        1,
        &["-o raw.bin.json", "the recording's sidecar"],
    ),
    case(
        &["convert", "raw.bin.json", "-o", "raw.bin"],
        1,
        &["-o raw.bin", "data file"],
    ),
    case(
        &["convert", "raw.bin", "-o", "sub/../raw.bin"],
        1,
        &["-o sub/../raw.bin", "data file"],
    ),
    case(
        &["convert", "raw.bin", "-o", "./raw.bin.json"],
        1,
        &["-o ./raw.bin.json", "sidecar"],
    ),
    case(
        &["convert", "raw.bin", "-o", "raw-link.bin"],
        1,
        &["-o raw-link.bin", "data file"],
    ),
    case(
        &["convert", "raw.bin", "-o", "hard.json"],
        1,
        &["-o hard.json", "sidecar"],
    ),
    case(
        &["convert", "x.ap.meta", "-o", "x.ap.bin"],
        1,
        &["-o x.ap.bin", "the recording's data file"],
    ),
    case(
        &["convert", "x.ap.bin", "-o", "x.ap.meta"],
        1,
        &["-o x.ap.meta", "the recording's .meta"],
    ),
    case(
        &["convert", "x.ap.bin", "-o", "meta-link"],
        1,
        &["-o meta-link", ".meta"],
    ),
    case(
        &["convert", "x.ap.meta", "-o", "hard.bin"],
        1,
        &["-o hard.bin", "data file"],
    ),
    case(
        &["convert", "raw.bin", "-o", "map.toml", "--map", "map.toml"],
        1,
        &["-o map.toml", "channel map"],
    ),
    case(
        &["scan", "raw.bin", "--mask", "raw.bin.json"],
        1,
        &["--mask raw.bin.json", "sidecar"],
    ),
    case(
        &["scan", "x.ap.bin", "--mask", "./x.ap.meta"],
        1,
        &["--mask ./x.ap.meta", ".meta"],
    ),
    case(
        &["scan", "x.ap.bin", "--mask", "sub"],
        1,
        &["--mask sub", "directory"],
    ),
    // Pipelines refused before anything is written.
    case(
        &[
            "preprocess",
            "raw.bin",
            "--pipeline",
            "wavelet.toml",
            "-o",
            "p.bin",
        ],
        1,
        &["--pipeline", "wavelet.toml", "wavelet"],
    ),
    case(
        &[
            "preprocess",
            "raw.bin",
            "--pipeline",
            "nyquist.toml",
            "-o",
            "p.bin",
        ],
        1,
        &["--pipeline", "20000", "Nyquist"],
    ),
    case(
        &[
            "preprocess",
            "raw.bin",
            "--pipeline",
            "kilosort4",
            "-o",
            "p.bin",
        ],
        1,
        &["--pipeline", "whiten", "geometry"],
    ),
    case(
        &[
            "preprocess",
            "raw.bin",
            "--pipeline",
            "whiten3.toml",
            "-o",
            "p.bin",
        ],
        1,
        &["w3.json", "3 channels", "has 2"],
    ),
    case(
        &[
            "preprocess",
            "raw.bin",
            "--pipeline",
            "kilosort5",
            "-o",
            "p.bin",
        ],
        1,
        &["--pipeline", "kilosort5", "kilosort4"],
    ),
    case(
        &[
            "preprocess",
            "raw.bin",
            "--pipeline",
            "hp.toml",
            "--gain",
            "0",
            "-o",
            "p.bin",
        ],
        1,
        &["--gain", "0"],
    ),
    case(
        &[
            "preprocess",
            "raw.bin",
            "--pipeline",
            "hp.toml",
            "-o",
            "raw.bin",
        ],
        1,
        &["-o raw.bin", "data file"],
    ),
    case(
        &[
            "preprocess",
            "raw.bin",
            "--pipeline",
            "hp.toml",
            "-o",
            "hp.toml",
        ],
        1,
        &["-o hp.toml", "the pipeline file"],
    ),
    case(
        &[
            "preprocess",
            "raw.bin",
            "--pipeline",
            "whiten3.toml",
            "-o",
            "w3.json",
        ],
        1,
        &["-o w3.json", "whitening matrix"],
    ),
    case(
        &[
            "preprocess",
            "raw.bin",
            "--pipeline",
            "hp.toml",
            "--fits",
            "raw.bin.json",
            "-o",
            "p.bin",
        ],
        1,
        &["--fits", "raw.bin.json", "provenance"],
    ),
    // Outputs that cannot be written: found before the pass, the previous output kept.
    case(
        &["convert", "raw.bin", "-o", "sub"],
        1,
        &["-o sub", "directory"],
    ),
    case(
        &["convert", "raw.bin", "-o", "out.bin"],
        1,
        &["out.bin.json", "directory"],
    ),
    case(
        &["convert", "raw.bin", "-o", "nowhere/o.bin"],
        1,
        &["nowhere", "directory"],
    ),
];

#[test]
fn bad_inputs_fail_with_one_line_and_change_nothing() {
    let dir = fixtures("cases");
    let before = snapshot(&dir);
    assert!(CASES.len() >= 60, "{} cases", CASES.len());
    let mut failures = Vec::new();
    for c in CASES {
        let out = dspk_in(&dir, c.args);
        let err = text(&out.stderr);
        let args = c.args;
        let mut fail = |why: String| failures.push(format!("dspk {args:?}: {why}\n    {err:?}"));
        if out.status.code() != Some(c.status) {
            fail(format!(
                "exit status {:?}, not {}",
                out.status.code(),
                c.status
            ));
        }
        let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
        if lines.len() != 1 || !lines[0].starts_with("error: ") {
            fail("stderr is not one `error: ` line".into());
        }
        for want in c.wants {
            if !err.contains(want) {
                fail(format!("no '{want}' in the message"));
            }
        }
        for bad in ["untagged", "NumberOrText", "panicked", "0.0000333"] {
            if err.contains(bad) {
                fail(format!("'{bad}' in the message"));
            }
        }
        if err.bytes().any(|b| b < 0x20 && b != b'\n') {
            fail("control characters reached the terminal".into());
        }
        if !out.stdout.is_empty() {
            fail(format!("printed {}", text(&out.stdout)));
        }
        if snapshot(&dir) != before {
            fail("changed, added or removed a file".into());
            // Put the fixtures back so that the next cases are judged on their own.
            std::fs::remove_dir_all(&dir).unwrap();
            fixtures("cases");
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        CASES.len(),
        failures.join("\n")
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn text_from_files_is_escaped_on_stdout_too() {
    let dir = fixtures("escape");
    write(
        &dir,
        "names.bin.json",
        SIDECAR.replace(
            "\"order\"",
            "\"metadata\": {\"probe\": \"A\\u001b[2J\\u0007\\u0000\"}, \"order\"",
        ),
    );
    write(&dir, "names.bin", frames(100, 7));
    let out = dspk_in(&dir, &["info", "names.bin"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("probe = A\\x1b[2J\\x07\\x00"), "{stdout}");
    assert!(
        !out.stdout.iter().any(|&b| b < 0x20 && b != b'\n'),
        "{stdout:?}"
    );
    // JSON escapes them its own way and stays valid JSON with the text intact.
    let out = dspk_in(&dir, &["info", "names.bin", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert!(text(&out.stdout).contains("\\u001b"));
    assert_eq!(v["metadata"]["probe"], "A\u{1b}[2J\u{7}\u{0}", "{v}");
    std::fs::remove_dir_all(&dir).unwrap();
}
