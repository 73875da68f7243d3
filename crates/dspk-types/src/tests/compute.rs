//! Tests of runtime names, availability and the environment-driven choices.
//!
//! The environment itself is never touched (tests run in parallel): the `*_from`/`*_value`
//! functions take the variable's value.

use std::panic::{AssertUnwindSafe, catch_unwind};

use super::*;

/// The message of the panic `f` raises, or `None` when it returns.
fn panic_message<T>(f: impl FnOnce() -> T) -> Option<String> {
    let payload = catch_unwind(AssertUnwindSafe(f)).err()?;
    Some(if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else {
        "<non-text panic>".to_string()
    })
}

/// Which runtimes this build compiled in, from the features directly.
fn compiled() -> Vec<ComputeTarget> {
    let mut v = Vec::new();
    if cfg!(feature = "wgpu") {
        v.push(ComputeTarget::Wgpu);
    }
    if cfg!(feature = "cuda") {
        v.push(ComputeTarget::Cuda);
    }
    if cfg!(feature = "hip") {
        v.push(ComputeTarget::Hip);
    }
    if cfg!(feature = "cpu") {
        v.push(ComputeTarget::Cpu);
    }
    v
}

#[test]
fn parse_is_trimmed_and_case_insensitive() {
    assert_eq!(ComputeTarget::parse(" CUDA "), Ok(ComputeTarget::Cuda));
    assert_eq!(ComputeTarget::parse("\tWgpu\n"), Ok(ComputeTarget::Wgpu));
    assert_eq!(ComputeTarget::parse("hIp"), Ok(ComputeTarget::Hip));
    assert_eq!("cpu".parse::<ComputeTarget>(), Ok(ComputeTarget::Cpu));
}

#[test]
fn unknown_name_lists_the_valid_ones() {
    let err = ComputeTarget::parse("vulkan").unwrap_err();
    assert_eq!(
        err,
        ComputeError::UnknownName {
            name: "vulkan".to_string()
        }
    );
    let msg = err.to_string();
    for name in ["vulkan", "wgpu", "cuda", "hip", "cpu"] {
        assert!(msg.contains(name), "{msg}");
    }
    assert!(ComputeTarget::parse("").is_err());
    assert!(ComputeTarget::parse("cu da").is_err());
}

#[test]
fn names_display_from_str_and_serde() {
    let names = ["wgpu", "cuda", "hip", "cpu"];
    for (t, name) in ComputeTarget::ALL.into_iter().zip(names) {
        assert_eq!(t.name(), name);
        assert_eq!(t.to_string(), name);
        assert_eq!(name.parse::<ComputeTarget>(), Ok(t));
        assert_eq!(serde_json::to_string(&t).unwrap(), format!("\"{name}\""));
        assert_eq!(
            serde_json::from_str::<ComputeTarget>(&format!("\"{name}\"")).unwrap(),
            t
        );
    }
    assert!(serde_json::from_str::<ComputeTarget>("\"vulkan\"").is_err());
}

#[test]
fn available_follows_the_features_in_preference_order() {
    assert_eq!(ComputeTarget::available(), compiled());
    for t in ComputeTarget::ALL {
        assert_eq!(t.is_available(), compiled().contains(&t));
        match t.checked() {
            Ok(u) => assert!(t.is_available() && u == t),
            Err(e) => assert_eq!(e, ComputeError::NotCompiled { target: t }),
        }
    }
    let order: Vec<usize> = ComputeTarget::available()
        .iter()
        .map(|t| ComputeTarget::ALL.iter().position(|a| a == t).unwrap())
        .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");
}

#[test]
fn from_env_value_unset_takes_the_first_available() {
    let expected = compiled()
        .first()
        .copied()
        .ok_or(ComputeError::NothingCompiled);
    assert_eq!(ComputeTarget::from_env_value(None), expected);
    assert_eq!(ComputeTarget::from_env_value(Some("  ")), expected);
    assert_eq!(
        ComputeTarget::from_env_value(Some("metal")),
        Err(ComputeError::UnknownName {
            name: "metal".to_string()
        })
    );
}

#[cfg(not(any(feature = "wgpu", feature = "cuda", feature = "hip", feature = "cpu")))]
#[test]
fn nothing_compiled() {
    let err = ComputeTarget::from_env_value(None).unwrap_err();
    assert_eq!(err, ComputeError::NothingCompiled);
    let msg = err.to_string();
    for name in ["wgpu", "cuda", "hip", "cpu"] {
        assert!(msg.contains(name), "{msg}");
    }
    assert!(ComputeTarget::for_tests_from(None).is_empty());
}

#[cfg(not(feature = "cuda"))]
#[test]
fn runtime_not_compiled_names_the_feature() {
    let err = ComputeTarget::from_env_value(Some(" Cuda ")).unwrap_err();
    assert_eq!(
        err,
        ComputeError::NotCompiled {
            target: ComputeTarget::Cuda
        }
    );
    let msg = err.to_string();
    assert!(
        msg.contains("feature 'cuda'") && msg.contains("--features cuda"),
        "{msg}"
    );
}

#[cfg(feature = "cuda")]
#[test]
fn compiled_runtime_is_chosen() {
    assert_eq!(
        ComputeTarget::from_env_value(Some("cuda")),
        Ok(ComputeTarget::Cuda)
    );
    assert_eq!(
        ComputeTarget::for_tests_from(Some("cuda")),
        vec![ComputeTarget::Cuda]
    );
}

#[test]
fn for_tests_panics_on_an_unknown_name() {
    let msg = panic_message(|| ComputeTarget::for_tests_from(Some("bogus"))).expect("a panic");
    assert!(
        msg.contains(TEST_RUNTIMES_ENV) && msg.contains("bogus"),
        "{msg}"
    );
    assert!(
        msg.contains("wgpu") && msg.contains("cpu"),
        "lists the valid names: {msg}"
    );
}

#[cfg(not(feature = "cuda"))]
#[test]
fn for_tests_panics_on_a_runtime_not_compiled_in() {
    let msg = panic_message(|| ComputeTarget::for_tests_from(Some("cuda"))).expect("a panic");
    assert!(
        msg.contains(TEST_RUNTIMES_ENV) && msg.contains("feature 'cuda'"),
        "{msg}"
    );
}

#[test]
fn for_tests_panics_when_the_list_names_nothing() {
    let msg = panic_message(|| ComputeTarget::for_tests_from(Some(" , ,"))).expect("a panic");
    assert!(msg.contains("names no runtime"), "{msg}");
}

#[test]
fn for_tests_unset_is_everything_available() {
    assert_eq!(ComputeTarget::for_tests_from(None), compiled());
    assert_eq!(ComputeTarget::for_tests_from(Some("")), compiled());
    // Every compiled-in runtime, named in any case, order kept, repeats dropped.
    if !compiled().is_empty() {
        let names: Vec<String> = compiled().iter().map(|t| t.name().to_uppercase()).collect();
        let list = format!("{},{}", names.join(" , "), names.join(","));
        assert_eq!(ComputeTarget::for_tests_from(Some(&list)), compiled());
    }
}

#[test]
fn env_names() {
    assert_eq!(RUNTIME_ENV, "DSPK_RUNTIME");
    assert_eq!(TEST_RUNTIMES_ENV, "DSPK_TEST_RUNTIMES");
}

#[test]
fn device_error_messages_carry_the_runtime_and_reason() {
    let e = ComputeError::NoDevice {
        target: ComputeTarget::Hip,
        reason: "no amd gpu".to_string(),
    };
    assert_eq!(
        e.to_string(),
        "compute runtime 'hip' found no usable device: no amd gpu"
    );
    let e = ComputeError::DeviceFailure {
        target: ComputeTarget::Wgpu,
        reason: "lost".to_string(),
    };
    assert_eq!(e.to_string(), "compute runtime 'wgpu' failed: lost");
}
