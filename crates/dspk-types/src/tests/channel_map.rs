//! Tests of channel maps: validation messages, TOML and JSON parsing and writing, files, and
//! reading through a map.

use std::path::PathBuf;
use std::sync::Arc;

use proptest::prelude::*;

use super::*;
use crate::{MemoryRecording, SampleRate};

fn map(base: usize, pairs: &[(usize, usize)]) -> ChannelMap {
    ChannelMap {
        base,
        pairs: pairs.iter().map(|&(f, t)| ChannelPair::new(f, t)).collect(),
    }
}

fn config_message(result: DspResult<impl std::fmt::Debug>) -> String {
    match result {
        Err(DspError::InvalidConfig(msg)) => msg,
        other => panic!("expected an invalid configuration, got {other:?}"),
    }
}

/// A scratch directory of this test process, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("dspk-channel-map-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn valid_maps_give_inputs_in_output_order() {
    let m = ChannelMap {
        base: 0,
        pairs: vec![
            ChannelPair::new(4, 2),
            ChannelPair::named(0, 0, "tip"),
            ChannelPair::new(7, 1),
        ],
    };
    assert_eq!(
        m.validate().unwrap(),
        vec![(0, Some("tip".to_string())), (7, None), (4, None)]
    );
    assert_eq!(m.output_count(), 3);
    // Base 1: numbers are shifted down by one.
    let m1 = map(1, &[(5, 2), (1, 1), (8, 3)]);
    assert_eq!(
        m1.validate().unwrap(),
        vec![(0, None), (4, None), (7, None)]
    );
    assert_eq!(
        ChannelMap::identity(3).validate().unwrap(),
        vec![(0, None), (1, None), (2, None)]
    );
}

#[test]
fn invalid_maps_are_refused_naming_the_pair() {
    let cases: Vec<(ChannelMap, &str)> = vec![
        (
            map(0, &[(1, 0), (2, 1), (1, 2)]),
            "pair 3 of 3 (from 1, to 2): input 1 is already mapped by pair 1",
        ),
        (
            map(0, &[(0, 0), (1, 1), (5, 1)]),
            "pair 3 of 3 (from 5, to 1): output 1 is already given by pair 2",
        ),
        (
            map(0, &[(0, 0), (1, 3), (2, 1)]),
            "pair 2 of 3 (from 1, to 3): output 3 is past the last output 2",
        ),
        (
            map(1, &[(1, 1), (0, 2)]),
            "pair 2 of 2 (from 0, to 2): input 0 is below base 1",
        ),
        (
            map(1, &[(1, 0), (2, 1)]),
            "pair 1 of 2 (from 1, to 0): output 0 is below base 1",
        ),
        (
            map(1, &[(1, 1), (2, 3)]),
            "pair 2 of 2 (from 2, to 3): output 3 is past the last output 2",
        ),
        (map(2, &[(2, 2)]), "channel map base 2 must be 0 or 1"),
        (map(0, &[]), "channel map has no pairs"),
    ];
    for (m, want) in cases {
        let msg = config_message(m.validate());
        assert!(msg.contains(want), "`{msg}` lacks `{want}`");
    }
    // A missing output is named as missing.
    let msg = config_message(map(0, &[(0, 0), (1, 5)]).validate());
    assert!(msg.contains("missing"), "{msg}");
}

#[test]
fn toml_and_json_parse_the_same_schema() {
    let toml_text = r#"
[remap]
base = 1
pairs = [
    { from = 3, to = 1, name = "tip" },
    { from = 1, to = 2 },
]
"#;
    let json_text = r#"{"remap": {"base": 1, "pairs": [{"from": 3, "to": 1, "name": "tip"}, {"from": 1, "to": 2}]}}"#;
    let want = ChannelMapFile::new(ChannelMap {
        base: 1,
        pairs: vec![ChannelPair::named(3, 1, "tip"), ChannelPair::new(1, 2)],
    });
    assert_eq!(ChannelMapFile::from_toml_str(toml_text).unwrap(), want);
    assert_eq!(ChannelMapFile::from_json_str(json_text).unwrap(), want);
    // Arrays of tables and a missing base (0 by default).
    let tables =
        "[[remap.pairs]]\nfrom = 0\nto = 1\n\n[[remap.pairs]]\nfrom = 2\nto = 0\nname = \"x\"\n";
    let parsed = ChannelMapFile::from_toml_str(tables).unwrap();
    assert_eq!(parsed.remap.base, DEFAULT_CHANNEL_BASE);
    assert_eq!(
        parsed.remap.validate().unwrap(),
        vec![(2, Some("x".into())), (0, None)]
    );
    let parsed = ChannelMapFile::from_json_str(
        r#"{"remap": {"pairs": [{"from": 4, "to": 0, "name": null}]}}"#,
    )
    .unwrap();
    assert_eq!(parsed.remap.validate().unwrap(), vec![(4, None)]);
}

#[test]
fn unknown_fields_and_malformed_text_are_refused() {
    let cases = [
        (
            "[remap]\nbase = 0\nbasis = 1\npairs = [{ from = 0, to = 0 }]\n",
            "basis",
        ),
        (
            "[remap]\npairs = [{ from = 0, to = 0, nmae = \"a\" }]\n",
            "nmae",
        ),
        (
            "extra = 1\n[remap]\npairs = [{ from = 0, to = 0 }]\n",
            "extra",
        ),
        ("[remap]\npairs = [{ from = 0 }]\n", "missing field `to`"),
        ("[remap\npairs = []\n", "malformed channel map TOML"),
        (
            "[remap]\npairs = [{ from = -1, to = 0 }]\n",
            "malformed channel map TOML",
        ),
    ];
    for (text, needle) in cases {
        let msg = config_message(ChannelMapFile::from_toml_str(text));
        assert!(
            msg.contains(needle),
            "TOML `{text}`: `{msg}` lacks `{needle}`"
        );
        assert!(msg.contains("malformed channel map TOML"), "{msg}");
    }
    let cases = [
        (
            r#"{"remap": {"base": 0, "basis": 1, "pairs": [{"from": 0, "to": 0}]}}"#,
            "basis",
        ),
        (
            r#"{"remap": {"pairs": [{"from": 0, "to": 0, "nmae": "a"}]}}"#,
            "nmae",
        ),
        (
            r#"{"extra": 1, "remap": {"pairs": [{"from": 0, "to": 0}]}}"#,
            "extra",
        ),
        (
            r#"{"remap": {"pairs": [{"from": 0, "to": 0}]"#,
            "malformed channel map JSON",
        ),
        (
            r#"{"remap": {"pairs": [{"from": "a", "to": 0}]}}"#,
            "malformed channel map JSON",
        ),
    ];
    for (text, needle) in cases {
        let msg = config_message(ChannelMapFile::from_json_str(text));
        assert!(
            msg.contains(needle),
            "JSON `{text}`: `{msg}` lacks `{needle}`"
        );
        assert!(msg.contains("malformed channel map JSON"), "{msg}");
    }
    // Well-formed but invalid maps are refused at parse time, naming the pair.
    let msg = config_message(ChannelMapFile::from_toml_str(
        "[remap]\npairs = [{ from = 5, to = 0 }, { from = 5, to = 1 }]\n",
    ));
    assert!(
        msg.contains("pair 2 of 2 (from 5, to 1): input 5 is already mapped by pair 1"),
        "{msg}"
    );
    let msg = config_message(ChannelMapFile::from_json_str(
        r#"{"remap": {"base": 1, "pairs": [{"from": 0, "to": 1}]}}"#,
    ));
    assert!(
        msg.contains("pair 1 of 1 (from 0, to 1): input 0 is below base 1"),
        "{msg}"
    );
}

#[test]
fn writing_refuses_invalid_maps() {
    let bad = ChannelMapFile::new(map(0, &[(0, 0), (0, 1)]));
    assert!(config_message(bad.to_toml_string()).contains("input 0 is already mapped by pair 1"));
    assert!(config_message(bad.to_json_string()).contains("input 0 is already mapped by pair 1"));
}

#[test]
fn files_load_and_save_by_extension() {
    let dir = Scratch::new("files");
    let file = ChannelMapFile::new(ChannelMap {
        base: 1,
        pairs: vec![ChannelPair::new(2, 2), ChannelPair::named(4, 1, "b")],
    });
    for name in ["m.toml", "m.json", "M.TOML", "m.Json"] {
        let path = dir.0.join(name);
        file.save(&path).unwrap();
        assert_eq!(ChannelMapFile::load(&path).unwrap(), file, "{name}");
    }
    // Another extension: refused, naming the file.
    let txt = dir.0.join("map.txt");
    std::fs::write(&txt, "[remap]\npairs = [{ from = 0, to = 0 }]\n").unwrap();
    match ChannelMapFile::load(&txt) {
        Err(DspError::UnsupportedFormat(msg)) => assert!(msg.contains("map.txt"), "{msg}"),
        other => panic!("expected an unsupported format, got {other:?}"),
    }
    // A missing file: an I/O error with its path.
    let missing = dir.0.join("absent.toml");
    match ChannelMapFile::load(&missing) {
        Err(DspError::Io { path, message }) => {
            assert_eq!(path.as_deref(), Some(missing.as_path()));
            assert!(message.contains("cannot read channel map"), "{message}");
        }
        other => panic!("expected an I/O error, got {other:?}"),
    }
    // Malformed and invalid content: the file and the parser's message.
    let bad = dir.0.join("bad.json");
    std::fs::write(&bad, "{\"remap\": [").unwrap();
    let msg = config_message(ChannelMapFile::load(&bad));
    assert!(
        msg.contains("bad.json") && msg.contains("malformed channel map JSON"),
        "{msg}"
    );
    assert!(
        msg.contains("line 1"),
        "the parser's position is kept: {msg}"
    );
    let bad = dir.0.join("bad.toml");
    std::fs::write(
        &bad,
        "[remap]\npairs = [{ from = 1, to = 0 }, { from = 2, to = 0 }]\n",
    )
    .unwrap();
    let msg = config_message(ChannelMapFile::load(&bad));
    assert!(
        msg.contains("bad.toml") && msg.contains("output 0 is already given by pair 1"),
        "{msg}"
    );
}

/// A random valid map: `n` distinct inputs below `inputs`, a permutation of outputs, names on
/// some pairs.
fn arb_map() -> impl Strategy<Value = ChannelMap> {
    (1usize..40, 0usize..2, any::<u64>()).prop_map(|(n, base, seed)| {
        let mut rng = crate::conformance::SplitMix64::new(seed);
        let inputs_total = n + rng.below(20) as usize;
        let mut inputs: Vec<usize> = (0..inputs_total).collect();
        for i in (1..inputs.len()).rev() {
            inputs.swap(i, rng.below(i as u64 + 1) as usize);
        }
        let mut outputs: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            outputs.swap(i, rng.below(i as u64 + 1) as usize);
        }
        let pairs = (0..n)
            .map(|k| ChannelPair {
                from: inputs[k] + base,
                to: outputs[k] + base,
                name: (rng.below(3) == 0).then(|| format!("n{k} \"q\" é")),
            })
            .collect();
        ChannelMap { base, pairs }
    })
}

proptest! {
    #[test]
    fn maps_round_trip_through_toml_and_json(m in arb_map()) {
        let file = ChannelMapFile::new(m.clone());
        let routes = m.validate().unwrap();
        let toml_text = file.to_toml_string().unwrap();
        prop_assert_eq!(&ChannelMapFile::from_toml_str(&toml_text).unwrap(), &file);
        let json_text = file.to_json_string().unwrap();
        prop_assert_eq!(&ChannelMapFile::from_json_str(&json_text).unwrap(), &file);
        // Every output gets the input of the pair that names it.
        for p in &m.pairs {
            prop_assert_eq!(routes[p.to - m.base].0, p.from - m.base);
            prop_assert_eq!(&routes[p.to - m.base].1, &p.name);
        }
    }

    #[test]
    fn a_duplicated_input_is_always_refused(m in arb_map(), pick in any::<u64>()) {
        prop_assume!(m.pairs.len() >= 2);
        let mut bad = m.clone();
        let n = bad.pairs.len() as u64;
        let a = (pick % n) as usize;
        let b = ((pick / n) % (n - 1)) as usize;
        let b = if b >= a { b + 1 } else { b };
        bad.pairs[b].from = bad.pairs[a].from;
        let msg = config_message(bad.validate());
        let (first, second) = (a.min(b), a.max(b));
        let want = format!(
            "pair {} of {n} (from {}, to {}): input {} is already mapped by pair {}",
            second + 1, bad.pairs[second].from, bad.pairs[second].to, bad.pairs[first].from, first + 1
        );
        prop_assert!(msg.contains(&want), "`{}` lacks `{}`", msg, want);
    }
}

#[test]
fn remapped_sources_read_through_the_map() {
    let rate = SampleRate::new(1000.0).unwrap();
    let data: Vec<Vec<f32>> = (0..4)
        .map(|c| (0..6).map(|t| (c * 10 + t) as f32).collect())
        .collect();
    let mut rec = MemoryRecording::from_channels("four", rate, data).unwrap();
    let (mut info, values) = rec.clone().into_parts();
    info.channels[2].gain = 2.0;
    info.channels[2].offset = 0.5;
    rec = MemoryRecording::new(info, values).unwrap();
    let parent: Arc<dyn RecordingSource> = Arc::new(rec);
    let m = ChannelMap {
        base: 1,
        pairs: vec![ChannelPair::new(3, 2), ChannelPair::named(4, 1, "last")],
    };
    let src = RemappedSource::new(parent.clone(), &m).unwrap();
    assert_eq!(src.inputs(), &[3, 2]);
    let info = src.info();
    assert_eq!(info.channel_count(), 2);
    assert_eq!(info.channels[0].name, "last");
    assert_eq!(info.channels[1].name, "ch2");
    assert_eq!((info.channels[1].gain, info.channels[1].offset), (2.0, 0.5));
    assert_eq!(info.samples, 6);
    let mut out = [0f32; 6];
    src.read(&[1, 0, 1], 2..4, &mut out).unwrap();
    assert_eq!(
        out,
        [22.0 * 2.0 + 0.5, 23.0 * 2.0 + 0.5, 32.0, 33.0, 44.5, 46.5]
    );
    let mut stored = [0u8; 8];
    src.read_stored(&[1, 0], 5..6, &mut stored).unwrap();
    assert_eq!(f32::from_le_bytes(stored[..4].try_into().unwrap()), 25.0);
    assert_eq!(f32::from_le_bytes(stored[4..].try_into().unwrap()), 35.0);
    assert_eq!(
        src.read(&[2], 0..1, &mut [0f32]),
        Err(DspError::InvalidChannel { index: 2, count: 2 })
    );

    // An input past the parent's end: the 0-based index and the parent's count.
    let too_far = map(1, &[(1, 1), (5, 2)]);
    assert_eq!(
        RemappedSource::new(parent.clone(), &too_far).unwrap_err(),
        DspError::InvalidChannel { index: 4, count: 4 }
    );
    // An invalid map names the pair.
    let msg = config_message(RemappedSource::new(parent, &map(0, &[(0, 1)])));
    assert!(msg.contains("pair 1 of 1 (from 0, to 1)"), "{msg}");
}
