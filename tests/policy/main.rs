//! The dependency policy of `deny.toml` (licenses, sources, wildcard requirements), checked
//! from `cargo metadata` by an ordinary test, so that CI checks it whether or not cargo-deny is
//! installed: every crate dspk can build with (all features) comes from crates.io, under a
//! licence expression the policy allows (or its per-crate exception), and no dependency asks
//! for `*` unless it is a path within the workspace.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// The policy, as `deny.toml` writes it.
struct Policy {
    allow: Vec<String>,
    exceptions: BTreeMap<String, Vec<String>>,
    clarified: BTreeMap<String, String>,
    registries: Vec<String>,
}

fn policy(root: &Path) -> Policy {
    let text = std::fs::read_to_string(root.join("deny.toml")).expect("deny.toml");
    let doc: toml::Value = toml::from_str(&text).expect("deny.toml parses");
    let strings = |v: &toml::Value| -> Vec<String> {
        v.as_array()
            .expect("an array")
            .iter()
            .map(|s| s.as_str().expect("a string").to_string())
            .collect()
    };
    let licenses = &doc["licenses"];
    let exceptions = licenses
        .get("exceptions")
        .and_then(toml::Value::as_array)
        .into_iter()
        .flatten()
        .map(|e| {
            (
                e["crate"].as_str().unwrap().to_string(),
                strings(&e["allow"]),
            )
        })
        .collect();
    let clarified = licenses
        .get("clarify")
        .and_then(toml::Value::as_array)
        .into_iter()
        .flatten()
        .map(|c| {
            (
                c["crate"].as_str().unwrap().to_string(),
                c["expression"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    Policy {
        allow: strings(&licenses["allow"]),
        exceptions,
        clarified,
        registries: strings(&doc["sources"]["allow-registry"]),
    }
}

/// Whether the SPDX `expression` is satisfied by the licences `ok` accepts: `OR` takes either
/// side, `AND` needs both, `WITH` an exception binds to its licence (`Apache-2.0 WITH
/// LLVM-exception` is one licence), parentheses group; the old `/` is `OR`.
fn satisfied(expression: &str, ok: &dyn Fn(&str) -> bool) -> Result<bool, String> {
    let spaced = expression
        .replace('(', " ( ")
        .replace(')', " ) ")
        .replace('/', " OR ");
    let tokens: Vec<&str> = spaced.split_whitespace().collect();
    let mut at = 0;
    let value = or_expr(&tokens, &mut at, ok)?;
    if at != tokens.len() {
        return Err(format!("`{expression}`: unexpected `{}`", tokens[at]));
    }
    Ok(value)
}

fn or_expr(t: &[&str], at: &mut usize, ok: &dyn Fn(&str) -> bool) -> Result<bool, String> {
    let mut value = and_expr(t, at, ok)?;
    while t.get(*at) == Some(&"OR") {
        *at += 1;
        value |= and_expr(t, at, ok)?;
    }
    Ok(value)
}

fn and_expr(t: &[&str], at: &mut usize, ok: &dyn Fn(&str) -> bool) -> Result<bool, String> {
    let mut value = licence(t, at, ok)?;
    while t.get(*at) == Some(&"AND") {
        *at += 1;
        value &= licence(t, at, ok)?;
    }
    Ok(value)
}

fn licence(t: &[&str], at: &mut usize, ok: &dyn Fn(&str) -> bool) -> Result<bool, String> {
    match t.get(*at) {
        Some(&"(") => {
            *at += 1;
            let value = or_expr(t, at, ok)?;
            if t.get(*at) != Some(&")") {
                return Err("an unclosed parenthesis".into());
            }
            *at += 1;
            Ok(value)
        }
        Some(id) if !["OR", "AND", "WITH", ")"].contains(id) => {
            *at += 1;
            let mut name = (*id).to_string();
            if t.get(*at) == Some(&"WITH") {
                let exception = t.get(*at + 1).ok_or("WITH without an exception")?;
                name = format!("{name} WITH {exception}");
                *at += 2;
            }
            Ok(ok(&name))
        }
        other => Err(format!("a licence expected, found {other:?}")),
    }
}

#[test]
fn the_spdx_reading_is_right() {
    let ok = |l: &str| ["MIT", "Apache-2.0", "Apache-2.0 WITH LLVM-exception"].contains(&l);
    for (e, want) in [
        ("MIT", true),
        ("MIT OR GPL-3.0", true),
        ("GPL-3.0 OR MIT", true),
        ("MIT AND GPL-3.0", false),
        ("(MIT OR Apache-2.0) AND Unicode-3.0", false),
        ("(MIT OR GPL-3.0) AND (Apache-2.0 OR GPL-2.0)", true),
        ("Apache-2.0 WITH LLVM-exception OR GPL-2.0", true),
        ("GPL-2.0 WITH Classpath-exception-2.0", false),
        ("MIT/Apache-2.0", true),
    ] {
        assert_eq!(satisfied(e, &ok), Ok(want), "{e}");
    }
    assert!(satisfied("(MIT", &ok).is_err());
    assert!(satisfied("MIT OR", &ok).is_err());
}

#[test]
fn every_dependency_is_from_crates_io_under_an_allowed_licence() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace root");
    let policy = policy(root);
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--all-features",
            "--locked",
        ])
        .current_dir(root)
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("metadata JSON");
    let members: Vec<&str> = meta["workspace_members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    // Only what the workspace can reach (the resolve graph), not every package in the lock.
    let reached: Vec<&str> = meta["resolve"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["id"].as_str().unwrap())
        .collect();
    let mut problems = Vec::new();
    let mut checked = 0;
    for p in meta["packages"].as_array().unwrap() {
        let id = p["id"].as_str().unwrap();
        if !reached.contains(&id) {
            continue;
        }
        let name = p["name"].as_str().unwrap();
        for d in p["dependencies"].as_array().unwrap() {
            if d["req"].as_str() == Some("*") && d.get("path").is_none_or(|v| v.is_null()) {
                problems.push(format!("{name} asks for any version of {}", d["name"]));
            }
        }
        if members.contains(&id) {
            continue;
        }
        checked += 1;
        let source = p["source"].as_str().unwrap_or("");
        let registry = source.strip_prefix("registry+").unwrap_or("");
        if !policy.registries.iter().any(|r| r == registry) {
            problems.push(format!("{name} comes from {source}, not crates.io"));
        }
        let expression = policy
            .clarified
            .get(name)
            .cloned()
            .or_else(|| p["license"].as_str().map(str::to_string));
        let Some(expression) = expression else {
            problems.push(format!("{name} states no licence expression"));
            continue;
        };
        let extra = policy.exceptions.get(name);
        let ok = |l: &str| {
            policy.allow.iter().any(|a| a == l) || extra.is_some_and(|e| e.iter().any(|a| a == l))
        };
        match satisfied(&expression, &ok) {
            Ok(true) => {}
            Ok(false) => problems.push(format!("{name}: `{expression}` is not allowed")),
            Err(e) => problems.push(format!("{name}: {e}")),
        }
    }
    assert!(checked > 100, "only {checked} crates checked");
    assert!(
        problems.is_empty(),
        "{} dependency policy problem(s):\n  {}",
        problems.len(),
        problems.join("\n  ")
    );
}
