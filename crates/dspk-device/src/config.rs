//! CubeCL's global configuration: the compiled-kernel and autotune caches, set once before the
//! first device opens.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use cubecl::config::{CubeClRuntimeConfig, RuntimeConfig, cache::CacheConfig};
use serde::Serialize;

/// The environment variable naming the directory CubeCL's caches go to (default: the user cache
/// directory, e.g. `~/.cache/dspk` on Linux).
pub const CACHE_DIR_ENV: &str = "DSPK_CACHE_DIR";

/// The environment variable that turns the compiled-kernel cache off when it is `0` (also
/// `false`, `off`, `no`). Any other value, or none, leaves it on.
pub const KERNEL_CACHE_ENV: &str = "DSPK_KERNEL_CACHE";

/// Who decided CubeCL's configuration in this process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ConfigOrigin {
    /// dspk set it (from `cubecl.toml` where one was found, CubeCL's variables, then dspk's
    /// defaults and variables).
    Dspk,
    /// It was already set (or read) before dspk got to it, typically by the embedding
    /// application calling `CubeClRuntimeConfig::set`; dspk kept it unchanged.
    Existing,
}

/// Where CubeCL's caches go and which of them are on, as [`configure_runtime`] left them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CacheSettings {
    /// The directory the cache database lives in (CubeCL's environment root).
    pub dir: PathBuf,
    /// The database file of the active CubeCL environment, inside (or mounted instead of)
    /// `dir`.
    pub file: PathBuf,
    /// Whether compiled kernels are kept on disk (on wgpu: the SPIR-V of Vulkan devices).
    pub kernel_cache: bool,
    /// Whether autotune decisions are kept on disk.
    pub autotune_cache: bool,
    /// Who set the configuration.
    pub origin: ConfigOrigin,
    /// The `cubecl.toml` (or `burn.toml` `[cubecl]` section) that was read, if any.
    pub config_file: Option<PathBuf>,
}

static SETTINGS: OnceLock<CacheSettings> = OnceLock::new();

/// Sets CubeCL's global configuration once per process; later calls return the same settings.
///
/// Called automatically before any device opens; call it yourself only to read the settings
/// early. What it sets, unless the configuration was already set (see below):
/// - the compiled-kernel cache **on** (CubeCL's `compilation.cache`), unless `DSPK_KERNEL_CACHE`
///   is `0`/`false`/`off`/`no`, or a `cubecl.toml` sets `compilation.cache` itself;
/// - autotune decisions persisted (CubeCL's default; `autotune.disable_cache` in a `cubecl.toml`
///   or `CUBECL_AUTOTUNE_CACHE=0` still turn it off);
/// - the cache directory (CubeCL's `environment.path`) to `DSPK_CACHE_DIR` when set, else to
///   the `environment.path` of a `cubecl.toml` when it names one, else to the user cache
///   directory (`directories`: `~/.cache/dspk` on Linux) — never CubeCL's default, the `target/`
///   directory of whatever Cargo workspace the process happens to run in.
///
/// The `cubecl.toml` (or `burn.toml` `[cubecl]`) CubeCL itself would find, walking up from the
/// current directory, is read first and CubeCL's own variables (`CUBECL_*`) applied on top, so
/// everything else in them still applies.
///
/// A configuration that is already in place — set by the embedding application through
/// `CubeClRuntimeConfig::set`/`try_set`, or read by CubeCL before dspk got here — is kept as
/// it is ([`ConfigOrigin::Existing`]): CubeCL's configuration can be set only once, and the
/// application's word wins.
pub fn configure_runtime() -> &'static CacheSettings {
    SETTINGS.get_or_init(|| {
        let requested = CacheRequest {
            dir_override: cache_dir_from_env(),
            kernel_cache_off: kernel_cache_off_from_env(),
            user_dir: user_cache_dir(),
        };
        apply(&requested)
    })
}

/// The directory CubeCL's caches go to, or `None` when neither the kernel cache nor the
/// autotune cache is on. Configures the runtime first if that has not happened yet.
pub fn cache_dir() -> Option<PathBuf> {
    let settings = configure_runtime();
    (settings.kernel_cache || settings.autotune_cache).then(|| settings.dir.clone())
}

/// What dspk's own variables and the platform ask for.
#[derive(Debug, Clone, PartialEq, Eq)]
struct CacheRequest {
    /// `DSPK_CACHE_DIR`, when set and not empty.
    dir_override: Option<PathBuf>,
    /// `DSPK_KERNEL_CACHE` says off.
    kernel_cache_off: bool,
    /// The user cache directory for dspk, when the platform names one.
    user_dir: Option<PathBuf>,
}

/// Reads `DSPK_CACHE_DIR` (the one place that does).
fn cache_dir_from_env() -> Option<PathBuf> {
    std::env::var_os(CACHE_DIR_ENV)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// Reads `DSPK_KERNEL_CACHE` (the one place that does).
fn kernel_cache_off_from_env() -> bool {
    std::env::var(KERNEL_CACHE_ENV).is_ok_and(|v| kernel_cache_value_is_off(&v))
}

/// Whether a `DSPK_KERNEL_CACHE` value turns the cache off.
fn kernel_cache_value_is_off(value: &str) -> bool {
    matches!(
        value.trim().to_ascii_lowercase().as_str(),
        "0" | "false" | "off" | "no"
    )
}

/// dspk's directory inside the user cache directory (`~/.cache/dspk` on Linux).
fn user_cache_dir() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "dspk").map(|dirs| dirs.cache_dir().to_path_buf())
}

/// Which of the settings dspk cares about a configuration file states itself.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct FileKeys {
    /// The file that was read.
    path: Option<PathBuf>,
    /// `compilation.cache` is present.
    kernel_cache: bool,
    /// `environment.path` is present.
    cache_path: bool,
}

/// Builds the configuration and installs it, unless one is in place already.
fn apply(request: &CacheRequest) -> CacheSettings {
    if CubeClRuntimeConfig::storage().lock().is_some() {
        settings_of(&CubeClRuntimeConfig::get(), ConfigOrigin::Existing, None)
    } else {
        let keys = find_config_file();
        let config = resolve(
            CubeClRuntimeConfig::from_current_dir().override_from_env(),
            &keys,
            request,
        );
        let origin = if CubeClRuntimeConfig::try_set(config) {
            ConfigOrigin::Dspk
        } else {
            ConfigOrigin::Existing
        };
        settings_of(&CubeClRuntimeConfig::get(), origin, keys.path)
    }
}

/// dspk's choices applied to a configuration read from files and CubeCL's variables.
fn resolve(
    mut config: CubeClRuntimeConfig,
    keys: &FileKeys,
    request: &CacheRequest,
) -> CubeClRuntimeConfig {
    if request.kernel_cache_off {
        config.compilation.cache = false;
    } else if !keys.kernel_cache {
        config.compilation.cache = true;
    }
    if let Some(dir) = &request.dir_override {
        config.environment.path = CacheConfig::Directory(dir.clone());
    } else if !keys.cache_path {
        config.environment.path = match &request.user_dir {
            Some(dir) => CacheConfig::Directory(dir.clone()),
            // No user cache directory on this platform: CubeCL's own user-cache fallback.
            None => CacheConfig::Global,
        };
    }
    config
}

/// The settings a configuration amounts to.
fn settings_of(
    config: &CubeClRuntimeConfig,
    origin: ConfigOrigin,
    config_file: Option<PathBuf>,
) -> CacheSettings {
    CacheSettings {
        dir: cubecl::environment::root(),
        file: cubecl::environment::path(),
        kernel_cache: config.compilation.cache,
        autotune_cache: !config.autotune.disable_cache,
        origin,
        config_file,
    }
}

/// Finds the configuration file CubeCL would read (the same walk from the current directory,
/// the same names, the same rule that a file which does not parse is skipped) and notes which
/// of dspk's settings it states.
fn find_config_file() -> FileKeys {
    let Ok(mut dir) = std::env::current_dir() else {
        return FileKeys::default();
    };
    loop {
        for name in CubeClRuntimeConfig::file_names() {
            let path = dir.join(name);
            if let Some(table) = read_table(&path)
                && valid_config(&table)
            {
                return keys_of(path, &table);
            }
        }
        for (name, section) in CubeClRuntimeConfig::section_file_names() {
            let path = dir.join(name);
            if let Some(table) = read_table(&path)
                && let Some(toml::Value::Table(section)) = table.get(*section)
                && valid_config(section)
            {
                return keys_of(path, section);
            }
        }
        if !dir.pop() {
            return FileKeys::default();
        }
    }
}

/// A TOML file's top-level table, or `None` when it is missing or does not parse.
fn read_table(path: &Path) -> Option<toml::Table> {
    let text = std::fs::read_to_string(path).ok()?;
    toml::from_str(&text).ok()
}

/// Whether CubeCL would accept the table as its configuration.
fn valid_config(table: &toml::Table) -> bool {
    toml::Value::Table(table.clone())
        .try_into::<CubeClRuntimeConfig>()
        .is_ok()
}

/// The keys dspk cares about in a configuration table.
fn keys_of(path: PathBuf, table: &toml::Table) -> FileKeys {
    let has = |section: &str, key: &str| {
        table
            .get(section)
            .and_then(toml::Value::as_table)
            .is_some_and(|t| t.contains_key(key))
    };
    FileKeys {
        path: Some(path),
        kernel_cache: has("compilation", "cache"),
        cache_path: has("environment", "path"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(dir: Option<&str>, off: bool, user: Option<&str>) -> CacheRequest {
        CacheRequest {
            dir_override: dir.map(PathBuf::from),
            kernel_cache_off: off,
            user_dir: user.map(PathBuf::from),
        }
    }

    fn dir_of(config: &CubeClRuntimeConfig) -> Option<PathBuf> {
        match &config.environment.path {
            CacheConfig::Directory(d) => Some(d.clone()),
            _ => None,
        }
    }

    #[test]
    fn defaults_turn_the_kernel_cache_on_in_the_user_cache_dir() {
        let config = resolve(
            CubeClRuntimeConfig::default(),
            &FileKeys::default(),
            &request(None, false, Some("/home/u/.cache/dspk")),
        );
        assert!(config.compilation.cache);
        assert!(!config.autotune.disable_cache);
        assert_eq!(dir_of(&config), Some(PathBuf::from("/home/u/.cache/dspk")));
    }

    #[test]
    fn the_variables_override_the_directory_and_the_kernel_cache() {
        let config = resolve(
            CubeClRuntimeConfig::default(),
            &FileKeys::default(),
            &request(Some("/tmp/x"), true, Some("/home/u/.cache/dspk")),
        );
        assert!(!config.compilation.cache);
        assert_eq!(dir_of(&config), Some(PathBuf::from("/tmp/x")));
    }

    #[test]
    fn a_config_file_keeps_what_it_states() {
        let table: toml::Table = toml::from_str(
            "[compilation]\ncache = false\n[environment]\npath = \"local\"\n[autotune]\ndisable_cache = true\n",
        )
        .expect("valid toml");
        assert!(valid_config(&table));
        let keys = keys_of(PathBuf::from("cubecl.toml"), &table);
        assert!(keys.kernel_cache && keys.cache_path);
        let loaded: CubeClRuntimeConfig =
            toml::Value::Table(table).try_into().expect("valid config");
        let config = resolve(loaded, &keys, &request(None, false, Some("/u")));
        assert!(!config.compilation.cache);
        assert!(config.autotune.disable_cache);
        assert!(matches!(config.environment.path, CacheConfig::Local));
        // DSPK_CACHE_DIR still wins over the file's directory.
        let config = resolve(
            CubeClRuntimeConfig::default(),
            &keys,
            &request(Some("/v"), false, None),
        );
        assert_eq!(dir_of(&config), Some(PathBuf::from("/v")));
    }

    #[test]
    fn a_file_without_the_keys_gets_dspk_defaults() {
        let table: toml::Table =
            toml::from_str("[autotune]\nlevel = \"minimal\"\n").expect("valid toml");
        let keys = keys_of(PathBuf::from("cubecl.toml"), &table);
        assert!(!keys.kernel_cache && !keys.cache_path);
        let config = resolve(
            CubeClRuntimeConfig::default(),
            &keys,
            &request(None, false, None),
        );
        assert!(config.compilation.cache);
        assert!(matches!(config.environment.path, CacheConfig::Global));
    }

    #[test]
    fn kernel_cache_values() {
        for off in ["0", "false", "OFF", " no "] {
            assert!(kernel_cache_value_is_off(off), "{off}");
        }
        for on in ["1", "true", "on", "", "yes", "2"] {
            assert!(!kernel_cache_value_is_off(on), "{on}");
        }
    }

    #[test]
    fn a_malformed_section_is_not_a_config() {
        let table: toml::Table =
            toml::from_str("[compilation]\ncache = \"maybe\"\n").expect("valid toml");
        assert!(!valid_config(&table));
    }
}
