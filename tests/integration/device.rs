//! dspk-device: opening devices, running a kernel, the registry, shutdown, caches.

use std::path::{Path, PathBuf};

use dspk_device::{TargetExt as _, describe, open_device, open_devices, run_check_kernel};
use dspk_tests::{TempDir, field, for_each_runtime, probe_path, run_probe, test_rng};
use dspk_types::{ComputeError, ComputeTarget, RUNTIME_ENV};
use rand::Rng as _;

/// The probe binary Cargo built for these tests.
pub(crate) fn probe() -> PathBuf {
    probe_path(option_env!("CARGO_BIN_EXE_dspk-probe"))
}

/// The probe's output as text, with its status, for assertion messages.
pub(crate) fn text(output: &std::process::Output) -> (String, String) {
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn a_client_runs_a_kernel() {
    for_each_runtime("a_client_runs_a_kernel", |target, client| {
        let (seed, mut rng) = test_rng("a_client_runs_a_kernel");
        let n = rng.random_range(1..20_000);
        let input: Vec<f32> = (0..n).map(|_| rng.random_range(-1e3..1e3)).collect();
        let scale: f32 = rng.random_range(-8.0..8.0);
        let offset: f32 = rng.random_range(-100.0..100.0);
        let output = run_check_kernel(client, &input, scale, offset)
            .unwrap_or_else(|e| panic!("{target}: {e}"));
        assert_eq!(output.len(), n, "seed {seed}");
        for (i, (x, y)) in input.iter().zip(&output).enumerate() {
            let expected = x * scale + offset;
            assert!(
                (expected - y).abs() <= 1e-5 * (1.0 + expected.abs()),
                "seed {seed}: element {i}: {y} != {expected}"
            );
        }
        dspk_device::check_device(client).unwrap_or_else(|e| panic!("{target}: {e}"));
    });
}

#[test]
fn describe_reports_the_device_limits() {
    for_each_runtime("describe_reports_the_device_limits", |target, client| {
        let info = describe(client);
        let props = client.properties();
        assert_eq!(info.runtime, target);
        assert!(!info.adapter_name.is_empty());
        assert_eq!(info.adapter_name, props.identity.name);
        assert!(info.plane_size_min >= 1 && info.plane_size_min <= info.plane_size_max);
        assert_eq!(info.max_storage_binding_bytes, props.memory.max_page_size);
        // WebGPU's floor for the largest storage binding is 128 MiB.
        assert!(
            info.max_storage_binding_bytes >= 128 << 20,
            "{}",
            info.max_storage_binding_bytes
        );
        assert!(info.max_cube_count.0 >= 65_535, "{:?}", info.max_cube_count);
        if target == ComputeTarget::Cpu {
            // A CPU's cube is one unit per core (CubeCL's cpu runtime runs a cube's units
            // on the host's threads): as many as this process may run in parallel.
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
            assert_eq!(info.max_units_per_cube as usize, cores, "{target}");
            assert_eq!(
                (info.plane_size_min, info.plane_size_max),
                (1, 1),
                "{target}"
            );
        } else {
            assert!(
                info.max_units_per_cube >= 64,
                "{target}: {}",
                info.max_units_per_cube
            );
        }
        assert_eq!(info.max_cube_count, props.hardware.max_cube_count);
        if target == ComputeTarget::Wgpu {
            assert!(
                info.backend.is_some(),
                "dspk opened it, so it knows the API"
            );
            if info.adapter_name.contains("llvmpipe") {
                assert_eq!(info.kind, dspk_device::DeviceKind::Software);
            }
        }
        let json = serde_json::to_value(&info).expect("serializable");
        assert_eq!(json["runtime"], target.name());
        assert_eq!(
            json["max_storage_binding_bytes"].as_u64(),
            Some(info.max_storage_binding_bytes)
        );
        let shown = info.to_string();
        assert!(shown.contains(&info.adapter_name), "{shown}");
    });
}

#[test]
fn opening_twice_gives_the_same_device() {
    for_each_runtime("opening_twice_gives_the_same_device", |target, first| {
        let second = target.client().expect("opened once already");
        let third = open_device(target.device().expect("device")).expect("open again");
        assert_eq!(first.service_id(), second.service_id());
        assert_eq!(first.service_id(), third.service_id());
        let device = target.device().expect("device");
        let listed = dspk_device::list_devices(target).expect("compiled in");
        assert!(
            !listed.is_empty(),
            "{target}: a device opened, yet none is listed"
        );
        assert!(
            listed.iter().all(|d| d.runtime() == device.runtime()),
            "{listed:?}"
        );
        let recorded = open_devices().iter().filter(|d| **d == device).count();
        assert_eq!(recorded, 1, "{device:?} recorded {recorded} times");
        // Memory written through one client is read through the other: one device.
        let (seed, mut rng) = test_rng("opening_twice_gives_the_same_device");
        let values: Vec<u32> = (0..257).map(|_| rng.random()).collect();
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let handle = first.create_from_slice(&bytes);
        let read = second.read_one(handle).expect("read back");
        assert_eq!(&read[..], &bytes[..], "seed {seed}");
    });
}

/// `dspk-probe ARGS` on wgpu with `envs` added, asserted to succeed: its stdout and stderr.
/// `None`, after a visible SKIP line naming `label`, where wgpu is not among the tested
/// runtimes, or the probe failed and `DSPK_TEST_RUNTIMES` does not require wgpu.
fn wgpu_probe(
    label: &str,
    args: &[&str],
    envs: &[(&str, Option<&str>)],
) -> Option<(String, String)> {
    if !ComputeTarget::for_tests().contains(&ComputeTarget::Wgpu) {
        dspk_tests::visible(&format!(
            "SKIP {label}: wgpu is not among the tested runtimes"
        ));
        return None;
    }
    let mut all = vec![(RUNTIME_ENV, Some("wgpu"))];
    all.extend_from_slice(envs);
    let output = run_probe(&probe(), args, &all, None);
    let (stdout, stderr) = text(&output);
    if !output.status.success() && !ComputeTarget::Wgpu.required_by_tests() {
        dspk_tests::visible(&format!("SKIP {label} on wgpu: {stderr}"));
        return None;
    }
    assert!(output.status.success(), "{stdout}\n{stderr}");
    Some((stdout, stderr))
}

/// Thread counts printed by `dspk-probe threads`.
fn thread_field(stdout: &str, key: &str) -> usize {
    field(stdout, "threads", key)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {key} in {stdout}"))
}

#[test]
fn shutdown_stops_the_device_threads_and_a_later_client_reopens() {
    let Some((stdout, _)) = wgpu_probe("shutdown test", &["threads"], &[]) else {
        return;
    };
    // CubeCL names a device's runner thread `DS<stage>-<type>-<index>`.
    let names = |prefix: &str| -> Vec<String> {
        stdout
            .lines()
            .find_map(|l| l.strip_prefix(prefix))
            .unwrap_or_else(|| panic!("no {prefix:?} line in {stdout}"))
            .split(',')
            .map(|n| n.trim().to_string())
            .collect()
    };
    let is_runner = |name: &String| name.starts_with("DSD-") || name.starts_with("DSU-");
    assert!(names("names open:").iter().any(is_runner), "{stdout}");
    assert!(!names("names after:").iter().any(is_runner), "{stdout}");
    let before = thread_field(&stdout, "before");
    let after1 = thread_field(&stdout, "after1");
    for cycle in ["1", "2"] {
        let open = thread_field(&stdout, &format!("open{cycle}"));
        let released = thread_field(&stdout, &format!("released{cycle}"));
        let after = thread_field(&stdout, &format!("after{cycle}"));
        assert_eq!(released, 1, "cycle {cycle}: {stdout}");
        assert!(
            open > before,
            "cycle {cycle}: the open device runs threads: {stdout}"
        );
        // What stays is the driver's per-instance threads (CubeCL keeps wgpu instances for the
        // life of the process; lavapipe runs its rasterizer threads there): never more than
        // after the first shutdown.
        assert!(
            open > after,
            "cycle {cycle}: shutdown stopped no thread: {stdout}"
        );
        assert!(after <= after1, "cycle {cycle}: threads pile up: {stdout}");
    }
    assert!(stdout.contains("reopen ok"), "{stdout}");
}

/// Opening a wgpu device loads the Vulkan loader once: dspk-device's held instance keeps it
/// (and the drivers it loads) in memory while CubeCL creates and drops its own instances,
/// which without it loaded and unloaded them three times. Counted by glibc's `LD_DEBUG=files`,
/// which prints a line for each library it loads.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn the_vulkan_loader_loads_once_a_process() {
    let Some((stdout, stderr)) =
        wgpu_probe("loader test", &["run"], &[("LD_DEBUG", Some("files"))])
    else {
        return;
    };
    assert!(stdout.contains("result ok"), "{stdout}\n{stderr}");
    let loads = stderr
        .lines()
        .filter(|l| l.contains("file=libvulkan.so.1 ") && l.contains("dynamically loaded by"))
        .count();
    assert_eq!(
        loads,
        1,
        "the Vulkan loader was loaded {loads} times: {}",
        stderr
            .lines()
            .filter(|l| l.contains("libvulkan.so.1"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn a_runtime_not_compiled_in_names_its_feature() {
    for target in ComputeTarget::ALL.into_iter().filter(|t| !t.is_available()) {
        let err = ComputeTarget::from_env_value(Some(target.name())).expect_err("not compiled");
        assert_eq!(err, ComputeError::NotCompiled { target });
        assert!(
            err.to_string().contains(&format!("feature '{target}'")),
            "{err}"
        );
        assert_eq!(
            dspk_device::list_devices(target),
            Err(ComputeError::NotCompiled { target })
        );
        let Err(err) = target.client() else {
            panic!("{target} is not compiled in, yet a client opened");
        };
        assert_eq!(err, ComputeError::NotCompiled { target });
        // Through the environment, in a program: an error naming the feature, not a panic.
        let output = run_probe(
            &probe(),
            &["run"],
            &[(RUNTIME_ENV, Some(target.name()))],
            None,
        );
        let (stdout, stderr) = text(&output);
        assert_eq!(output.status.code(), Some(1), "{stdout}\n{stderr}");
        assert!(
            stderr.contains(&format!("feature '{target}'")) && !stderr.contains("panicked"),
            "{stderr}"
        );
    }
}

/// The `cache` line of `dspk-probe cache`: the directory and the database file.
fn cache_paths(stdout: &str) -> (PathBuf, PathBuf) {
    let dir = field(stdout, "cache", "dir").unwrap_or_else(|| panic!("no dir in {stdout}"));
    let file = field(stdout, "cache", "file").unwrap_or_else(|| panic!("no file in {stdout}"));
    (PathBuf::from(dir), PathBuf::from(file))
}

/// Files (recursively) under `dir`.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// Whether any file under `dir` contains `needle` (the cache database and its write-ahead log
/// hold each namespace's name in plain bytes).
fn cache_mentions(dir: &Path, needle: &str) -> bool {
    files_under(dir).iter().any(|f| {
        std::fs::read(f)
            .is_ok_and(|bytes| bytes.windows(needle.len()).any(|w| w == needle.as_bytes()))
    })
}

/// CubeCL's namespace of compiled SPIR-V kernels (wgpu on Vulkan with the SPIR-V compiler).
const SPIRV_NAMESPACE: &str = "vulkan/";

/// A working directory inside a Cargo workspace of its own, where CubeCL's default cache
/// location would be `<work>/target/environment`.
fn cargo_workdir(tmp: &TempDir) -> PathBuf {
    let work = tmp.path().join("work");
    std::fs::create_dir_all(&work).expect("work dir");
    std::fs::write(work.join("Cargo.toml"), "[workspace]\n").expect("Cargo.toml");
    work
}

/// Runs `dspk-probe cache` and checks the caches went to `expected` and not to `./target`.
fn check_cache_location(tmp: &TempDir, envs: &[(&str, Option<&str>)], expected: &Path) {
    let work = cargo_workdir(tmp);
    let mut all_envs = vec![(RUNTIME_ENV, Some("wgpu"))];
    all_envs.extend_from_slice(envs);
    let output = run_probe(&probe(), &["cache"], &all_envs, Some(&work));
    let (stdout, stderr) = text(&output);
    if !output.status.success() && !ComputeTarget::Wgpu.required_by_tests() {
        return dspk_tests::visible(&format!("SKIP cache test on wgpu: {stderr}"));
    }
    assert!(output.status.success(), "{stdout}\n{stderr}");
    let (dir, file) = cache_paths(&stdout);
    assert_eq!(dir, expected, "{stdout}");
    assert!(file.starts_with(expected), "{stdout}");
    assert_eq!(field(&stdout, "cache", "kernel_cache"), Some("true"));
    assert_eq!(field(&stdout, "cache", "origin"), Some("Dspk"), "{stdout}");
    let files = files_under(expected);
    assert!(
        files.contains(&file),
        "the cache database {} was not written; found {files:?}",
        file.display()
    );
    assert!(
        !work.join("target").exists(),
        "caches went to the working directory's target/: {:?}",
        files_under(&work.join("target"))
    );
    if stdout.contains("runtime=wgpu<spirv>") {
        assert!(
            cache_mentions(expected, SPIRV_NAMESPACE),
            "no compiled kernel in the cache: {files:?}"
        );
    }
}

#[test]
fn caches_land_in_dspk_cache_dir() {
    if !ComputeTarget::for_tests().contains(&ComputeTarget::Wgpu) {
        return;
    }
    let tmp = TempDir::new("cache-dir");
    let cache = tmp.path().join("cache");
    let cache_text = cache.to_string_lossy().into_owned();
    check_cache_location(
        &tmp,
        &[(dspk_device::CACHE_DIR_ENV, Some(&cache_text))],
        &cache,
    );
}

#[test]
fn caches_default_to_the_user_cache_dir() {
    if !ComputeTarget::for_tests().contains(&ComputeTarget::Wgpu) {
        return;
    }
    let tmp = TempDir::new("user-cache");
    let xdg = tmp.path().join("xdg-cache");
    let xdg_text = xdg.to_string_lossy().into_owned();
    check_cache_location(
        &tmp,
        &[
            (dspk_device::CACHE_DIR_ENV, None),
            ("XDG_CACHE_HOME", Some(&xdg_text)),
        ],
        &xdg.join("dspk"),
    );
}

#[test]
fn the_kernel_cache_can_be_turned_off() {
    if !ComputeTarget::for_tests().contains(&ComputeTarget::Wgpu) {
        return;
    }
    let tmp = TempDir::new("no-kernel-cache");
    let work = cargo_workdir(&tmp);
    let cache = tmp.path().join("cache");
    let cache_text = cache.to_string_lossy().into_owned();
    let output = run_probe(
        &probe(),
        &["cache"],
        &[
            (RUNTIME_ENV, Some("wgpu")),
            (dspk_device::CACHE_DIR_ENV, Some(&cache_text)),
            (dspk_device::KERNEL_CACHE_ENV, Some("0")),
        ],
        Some(&work),
    );
    let (stdout, stderr) = text(&output);
    if !output.status.success() && !ComputeTarget::Wgpu.required_by_tests() {
        return dspk_tests::visible(&format!("SKIP kernel cache test on wgpu: {stderr}"));
    }
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert_eq!(
        field(&stdout, "cache", "kernel_cache"),
        Some("false"),
        "{stdout}"
    );
    assert_eq!(
        field(&stdout, "cache", "autotune_cache"),
        Some("true"),
        "{stdout}"
    );
    assert!(stdout.contains("result ok"), "{stdout}");
    assert!(
        !cache_mentions(&cache, SPIRV_NAMESPACE),
        "a compiled kernel was cached although the kernel cache is off: {:?}",
        files_under(&cache)
    );
}

#[test]
fn a_cubecl_toml_still_applies() {
    if !ComputeTarget::for_tests().contains(&ComputeTarget::Wgpu) {
        return;
    }
    let tmp = TempDir::new("cubecl-toml");
    let work = cargo_workdir(&tmp);
    let from_toml = tmp.path().join("from-toml");
    std::fs::write(
        work.join("cubecl.toml"),
        format!(
            "[compilation]\ncache = false\n\n[environment]\npath = {{ directory = {:?} }}\n",
            from_toml.to_string_lossy()
        ),
    )
    .expect("cubecl.toml");
    let output = run_probe(
        &probe(),
        &["cache"],
        &[
            (RUNTIME_ENV, Some("wgpu")),
            (dspk_device::CACHE_DIR_ENV, None),
        ],
        Some(&work),
    );
    let (stdout, stderr) = text(&output);
    if !output.status.success() && !ComputeTarget::Wgpu.required_by_tests() {
        return dspk_tests::visible(&format!("SKIP cubecl.toml test on wgpu: {stderr}"));
    }
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert_eq!(cache_paths(&stdout).0, from_toml, "{stdout}");
    assert_eq!(
        field(&stdout, "cache", "kernel_cache"),
        Some("false"),
        "{stdout}"
    );
    assert!(!work.join("target").exists());
}

#[test]
fn a_configuration_set_by_the_application_is_kept() {
    if !ComputeTarget::for_tests().contains(&ComputeTarget::Wgpu) {
        return;
    }
    let tmp = TempDir::new("app-config");
    let work = cargo_workdir(&tmp);
    let app_dir = tmp.path().join("app");
    let dspk_dir = tmp.path().join("dspk");
    let output = run_probe(
        &probe(),
        &["app-config", &app_dir.to_string_lossy()],
        &[
            (RUNTIME_ENV, Some("wgpu")),
            (
                dspk_device::CACHE_DIR_ENV,
                Some(&dspk_dir.to_string_lossy()),
            ),
        ],
        Some(&work),
    );
    let (stdout, stderr) = text(&output);
    if !output.status.success() && !ComputeTarget::Wgpu.required_by_tests() {
        return dspk_tests::visible(&format!("SKIP app-config test on wgpu: {stderr}"));
    }
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("origin Existing"), "{stdout}");
    assert_eq!(cache_paths(&stdout).0, app_dir, "{stdout}");
    assert_eq!(
        field(&stdout, "cache", "kernel_cache"),
        Some("false"),
        "{stdout}"
    );
    assert!(
        !dspk_dir.exists(),
        "DSPK_CACHE_DIR overrode the application's configuration"
    );
}
