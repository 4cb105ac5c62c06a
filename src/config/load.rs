use std::fmt;
use std::path::{Path, PathBuf};

use config::{Config, Environment, File, FileFormat};

use super::types::SchedulerConfiguration;
use super::validate::validate;

const DEFAULTS: &str = include_str!("../../config/defaults.yaml");
/// Config files larger than this are refused.
pub const MAX_CONFIG_BYTES: u64 = 16 * 1024 * 1024;
/// Environment variables with this prefix override config keys (`__` separates levels).
pub const ENV_PREFIX: &str = "GARDENER_SCHEDULER";

/// One problem with one field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    pub path: String,
    pub message: String,
}

impl FieldError {
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("reading config file {path}: {source}")]
    Read {
        path: PathBuf,
        source: crate::input::ReadError,
    },
    #[error("parsing config: {0}")]
    Parse(#[from] config::ConfigError),
    #[error("invalid config:\n{}", render(.0))]
    Invalid(Vec<FieldError>),
}

fn render(errors: &[FieldError]) -> String {
    errors
        .iter()
        .map(|e| format!("  {e}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Loads defaults, then `path` (if any), then the environment; validates everything.
pub fn load(path: Option<&Path>) -> Result<SchedulerConfiguration, ConfigError> {
    let file = match path {
        Some(p) => Some(read_config_file(p)?),
        None => None,
    };
    let env = Environment::with_prefix(ENV_PREFIX)
        .prefix_separator("_")
        .separator("__")
        .convert_case(config::Case::Camel)
        .try_parsing(true);
    let mut cfg = build(file.as_deref(), Some(env))?;
    if let Ok(kubeconfig) = std::env::var("KUBECONFIG")
        && !kubeconfig.is_empty()
    {
        cfg.client_connection.kubeconfig = kubeconfig;
    }
    Ok(cfg)
}

/// The config file's text: a regular file of at most [`MAX_CONFIG_BYTES`], UTF-8, flow
/// nesting checked before any parser sees it.
fn read_config_file(path: &Path) -> Result<String, ConfigError> {
    use crate::input::{self, ReadError};
    let err = |source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    };
    let bytes = input::read_bytes(path, MAX_CONFIG_BYTES).map_err(err)?;
    let text = String::from_utf8(bytes).map_err(|e| err(ReadError::NotUtf8(e.utf8_error())))?;
    input::check_nesting(&text)
        .map_err(|e| err(ReadError::Io(std::io::Error::other(e.to_string()))))?;
    Ok(text)
}

/// Loads defaults and the given YAML text, without the environment (tests, `simulate`).
pub fn load_str(yaml: &str) -> Result<SchedulerConfiguration, ConfigError> {
    build(Some(yaml), None)
}

fn build(
    file: Option<&str>,
    env: Option<Environment>,
) -> Result<SchedulerConfiguration, ConfigError> {
    let mut builder = Config::builder().add_source(File::from_str(DEFAULTS, FileFormat::Yaml));
    if let Some(text) = file
        && !text.trim().is_empty()
    {
        // A document that is not a mapping is reported with the file's own words.
        let probe: serde_yaml_ng::Value = serde_yaml_ng::from_str(text)
            .map_err(|e| ConfigError::Invalid(vec![FieldError::new("<file>", e.to_string())]))?;
        if !(probe.is_mapping() || probe.is_null()) {
            return Err(ConfigError::Invalid(vec![FieldError::new(
                "<file>",
                "the configuration must be a YAML mapping",
            )]));
        }
        builder = builder.add_source(File::from_str(text, FileFormat::Yaml));
    }
    if let Some(env) = env {
        builder = builder.add_source(env);
    }
    let merged: serde_json::Value = builder.build()?.try_deserialize()?;

    // Deserialize section by section so that a type error in one section does not hide the
    // errors of the others.
    let mut errors = Vec::new();
    if let serde_json::Value::Object(map) = &merged {
        for (key, value) in map {
            let single = serde_json::json!({ key.clone(): value.clone() });
            if let Err(e) = serde_path_to_error::deserialize::<_, SchedulerConfiguration>(single) {
                let path = e.path().to_string();
                let path = if path == "." { key.clone() } else { path };
                errors.push(FieldError::new(path, e.into_inner().to_string()));
            }
        }
    }
    if !errors.is_empty() {
        return Err(ConfigError::Invalid(errors));
    }
    let cfg: SchedulerConfiguration = serde_path_to_error::deserialize(merged).map_err(|e| {
        ConfigError::Invalid(vec![FieldError::new(
            e.path().to_string(),
            e.into_inner().to_string(),
        )])
    })?;
    let problems = validate(&cfg);
    if problems.is_empty() {
        Ok(cfg)
    } else {
        Err(ConfigError::Invalid(problems))
    }
}
