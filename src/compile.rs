//! The configuration compiled once: read, validated and turned into the profile chain in one
//! pass, so that every problem (of the file and of its profiles) is reported together and the
//! files a profile reads (latency matrices, carbon points) are read once. `simulate`, `plan` and
//! the controller receive the [`Compiled`] result and never build a chain themselves.

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

fn log_warnings(warnings: &[FieldError]) {
    for w in warnings {
        tracing::warn!(field = %w.path, "{}", w.message);
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use chrono::{DateTime, Utc};
    use http::{Request, Response};
    use kube::Client;
    use kube::client::Body;

    use super::*;
    use crate::chain::Selection;
    use crate::input::reads;
    use crate::plugin::ClusterData;

    /// A file of its own for this test, in the temporary directory.
    fn file(name: &str, text: &str) -> PathBuf {
        let path = std::env::temp_dir().join(format!(
            "gardener-scheduler-compile-{}-{name}",
            std::process::id()
        ));
        std::fs::write(&path, text).unwrap();
        path
    }

    fn config(matrix: &std::path::Path, points: &std::path::Path) -> String {
        format!(
            r#"
leaderElection: {{leaderElect: false}}
schedulers:
  shoot:
    candidateDeterminationStrategy: MinimalDistance
    profiles:
    - id: eco
      schedule: {{between: {{start: "2026-12-01T00:00:00Z", end: "2026-12-02T00:00:00Z"}}}}
      profile:
        priorities:
        - name: LatencyDistance
          args: {{matrixFile: {matrix:?}}}
        - name: CarbonIntensity
          args: {{pointsFile: {points:?}}}
    - id: default
      profile: {{}}
"#,
            matrix = matrix.display().to_string(),
            points = points.display().to_string(),
        )
    }

    #[tokio::test]
    async fn the_files_profiles_read_are_read_once_from_loading_to_the_running_scheduler() {
        let matrix = file("matrix.yaml", "eu-west-1:\n  eu-central-1: 20\n");
        let points = file(
            "points.json",
            r#"[{"location": "eu-west-1", "timestamp": "2026-12-01T00:00:00Z", "duration": 60, "value": 100}]"#,
        );
        let compiled = load_str(&config(&matrix, &points)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((reads::count(&matrix), reads::count(&points)), (1, 1));

        // What simulate, plan and the controller ask of the compiled chain reads nothing.
        let now: DateTime<Utc> = "2026-12-01T12:00:00Z".parse().unwrap();
        assert!(matches!(
            compiled.chain.select(now),
            Selection::Profile { entry: "eco", .. }
        ));
        assert!(matches!(
            compiled.chain.cluster_data().as_slice(),
            [ClusterData::CarbonConfigMaps(_)]
        ));
        let (service, _handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
        let client = Client::new(service, "default");
        crate::controller::Controller::new(compiled, client).unwrap();
        assert_eq!((reads::count(&matrix), reads::count(&points)), (1, 1));
        for path in [matrix, points] {
            let _ = std::fs::remove_file(path);
        }
    }

    #[test]
    fn every_problem_of_the_file_and_of_its_profiles_is_reported_together() {
        let err = load_str(
            "clientConnection: {qps: -1}\nschedulers:\n  shoot:\n    priorities: [{name: Nope}]\n",
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("clientConnection.qps: must be >= 0"), "{err}");
        assert!(
            err.contains("schedulers.shoot.priorities[0].name: unsupported value \"Nope\""),
            "{err}"
        );
    }
}
