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
