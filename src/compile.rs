//! The configuration compiled once: read, validated and turned into the profile chain in one
//! pass, so that every problem (of the file and of its profiles) is reported together and the
//! files a profile reads (latency matrices, carbon points) are read once. `simulate`, `plan` and
//! the controller receive the [`Compiled`] result and never build a chain themselves.
//!
//! [`Compiled`]: crate::compile::Compiled

use std::path::Path;
use std::sync::Arc;

use crate::chain::ProfileChain;
use crate::config::{self, ConfigError, Draft, SchedulerConfiguration, UnknownKeys};
use crate::field_error::FieldError;

/// A valid configuration and the profile chain it describes.
#[derive(Clone)]
pub struct Compiled {
    pub config: SchedulerConfiguration,
    pub chain: Arc<ProfileChain>,
    /// One entry per ignored key, with its field path (empty under [`UnknownKeys::Reject`]).
    pub warnings: Vec<FieldError>,
}

impl std::fmt::Debug for Compiled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compiled")
            .field("config", &self.config)
            .field("warnings", &self.warnings)
            .finish_non_exhaustive()
    }
}

/// Reads defaults, then `path` (if any), then the environment, and compiles the result. Keys
/// the configuration does not know are logged as warnings.
pub fn load(path: Option<&Path>) -> Result<Compiled, ConfigError> {
    let compiled = load_with(path, UnknownKeys::Warn)?;
    log_warnings(&compiled.warnings);
    Ok(compiled)
}

/// [`load`] with a choice of how unknown keys are treated; warnings are returned, not logged.
pub fn load_with(path: Option<&Path>, unknown: UnknownKeys) -> Result<Compiled, ConfigError> {
    compile(config::read_with(path, unknown)?)
}

/// Defaults and the given YAML text, without the environment (tests, `simulate`), compiled.
/// Unknown keys are logged as warnings.
pub fn load_str(yaml: &str) -> Result<Compiled, ConfigError> {
    let compiled = load_str_with(yaml, UnknownKeys::Warn)?;
    log_warnings(&compiled.warnings);
    Ok(compiled)
}

/// [`load_str`] with a choice of how unknown keys are treated; warnings are returned.
pub fn load_str_with(yaml: &str, unknown: UnknownKeys) -> Result<Compiled, ConfigError> {
    compile(config::read_str_with(yaml, unknown)?)
}

/// Builds the chain of a read configuration; its problems come after the file's, and any
/// problem refuses the whole configuration.
pub fn compile(draft: Draft) -> Result<Compiled, ConfigError> {
    let Draft {
        config,
        warnings,
        mut problems,
    } = draft;
    problems.extend(lost_schedules(&config, &warnings));
    match ProfileChain::from_config(&config.schedulers.shoot) {
        Ok(chain) if problems.is_empty() => Ok(Compiled {
            config,
            chain: Arc::new(chain),
            warnings,
        }),
        Ok(_) => Err(ConfigError::Invalid(problems)),
        Err(mut chain_problems) => {
            problems.append(&mut chain_problems);
            Err(ConfigError::Invalid(problems))
        }
    }
}

/// A profile entry whose `schedule` lost every key it had (each misspelt, so ignored with a
/// warning) would be active at every instant, and under `freeze: true` freeze scheduling for
/// good: an error, not a warning. `schedule: {}` written so stays "always".
fn lost_schedules(config: &SchedulerConfiguration, warnings: &[FieldError]) -> Vec<FieldError> {
    let Some(entries) = &config.schedulers.shoot.profiles else {
        return Vec::new();
    };
    let mut lost = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let Some(s) = &entry.schedule else { continue };
        let between = s
            .between
            .as_ref()
            .is_some_and(|b| b.start.is_some() || b.end.is_some());
        let period = s.active_period.as_ref().is_some_and(|a| {
            a.start_cron.is_some() || a.timezone.is_some() || a.duration.is_some()
        });
        if between || period {
            continue;
        }
        let at = format!("schedulers.shoot.profiles[{i}].schedule");
        let unknown: Vec<&str> = warnings
            .iter()
            .filter(|w| w.path.starts_with(&format!("{at}.")))
            .map(|w| w.path.as_str())
            .collect();
        if !unknown.is_empty() {
            lost.push(FieldError::new(
                at,
                format!(
                    "every key of it is unknown ({}), so the entry would be active at every \
                     instant; correct the keys, or leave schedule out to mean that",
                    unknown.join(", ")
                ),
            ));
        }
    }
    lost
}

fn log_warnings(warnings: &[FieldError]) {
    for w in warnings {
        tracing::warn!(field = %w.path, "{}", w.message);
    }
}

#[cfg(test)]
mod tests;
