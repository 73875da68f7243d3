//! `dspk bench` run to completion, text and `--json` (issue 28: no test ran it): a one-second
//! synthetic file in small windows, on every runtime with a device.

use std::collections::BTreeSet;

mod common;
use common::{json, ok, runtimes};

#[test]
fn a_short_bench_completes_in_text_and_json() {
    for target in runtimes() {
        let rt = target.name();
        let args = [
            "--runtime",
            rt,
            "bench",
            "--seconds",
            "1",
            "--window-samples",
            "7500",
        ];
        let report = json(&[&args[..], &["--json"]].concat());
        assert!(
            report["machine"].as_str().is_some_and(|m| !m.is_empty()),
            "{rt}: {report}"
        );
        let rows = report["rows"].as_array().expect("rows");
        let ids: Vec<&str> = rows.iter().map(|r| r["id"].as_str().expect("id")).collect();
        // The host figures, the upload and the end-to-end passes are measured everywhere; the
        // decode in staging (G3) where dspk has host staging of its own (wgpu devices: on
        // other runtimes the pass falls back to the copy, G3c, measured once).
        let have: BTreeSet<&str> = ids.iter().copied().collect();
        for id in ["H1", "G1", "G2", "G3c", "G4"] {
            assert!(have.contains(id), "{rt}: no {id} in {ids:?}");
        }
        assert_eq!(
            have.contains("G3"),
            target == dspk_types::ComputeTarget::Wgpu,
            "{rt}: {ids:?}"
        );
        for r in rows {
            let value = r["value"].as_f64().unwrap_or(f64::NAN);
            assert!(value.is_finite() && value > 0.0, "{rt}: {r}");
            assert!(
                r["unit"].as_str().is_some_and(|u| !u.is_empty()),
                "{rt}: {r}"
            );
            assert!(r["devices"].as_u64().is_some_and(|d| d >= 1), "{rt}: {r}");
            // Where the baseline was measured, the ratio is value / baseline.
            if let (Some(b), Some(ratio)) = (r["baseline_value"].as_f64(), r["ratio"].as_f64()) {
                assert!(
                    (ratio - value / b).abs() <= 1e-9 * ratio.abs().max(1.0),
                    "{rt}: {r}"
                );
            }
        }
        // The text table: a header, then one line per figure, in the same order.
        let text = ok(&args);
        let lines: Vec<&str> = text.lines().collect();
        let table: Vec<&str> = lines
            .iter()
            .skip_while(|l| !l.starts_with("id "))
            .skip(1)
            .map(|l| l.split_whitespace().next().unwrap_or(""))
            .collect();
        assert_eq!(table.len(), ids.len(), "{rt}: {text}");
        // The ids of a second run (fresh timings) in the order of the first.
        assert_eq!(table, ids, "{rt}: {text}");
    }
}
