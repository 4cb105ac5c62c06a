//! What latency a carbon saving costs: the example landscape placed by `simulate` with
//! `LatencyDistance` at weight 3 and `CarbonIntensity` at several weights, the forecast of
//! `example/carbon-forecast.json` and the region mapping of `example/22-componentconfig-carbon.yaml`.

use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use gardener_scheduler::profile::Profile;
use gardener_scheduler::simulate::{self, Landscape};
use serde_json::{Value, json};

/// One weight's placements.
#[derive(Debug)]
pub struct CarbonRow {
    /// `CarbonIntensity` weight; 0 = the priority left out
    pub weight: u32,
    pub pending: usize,
    pub placed: usize,
    /// placements whose seed had no usable forecast (raw value NaN), left out of the mean
    pub neutral: usize,
    /// mean expected gCO2eq/kWh of the chosen seeds with a forecast
    pub mean_intensity: f64,
    /// mean round-trip latency shoot region → seed region over all placements (ms)
    pub mean_latency_ms: f64,
}

pub struct CarbonInputs {
    pub landscape: Landscape,
    pub now: DateTime<Utc>,
    /// first and last forecast timestamp
    pub range: (DateTime<Utc>, DateTime<Utc>),
    carbon_args: Value,
    matrix_file: PathBuf,
}

fn example(root: &Path, rel: &str) -> PathBuf {
    root.join("example").join(rel)
}

/// Reads the example files; `now` is the first forecast timestamp, so the whole horizon that
/// follows is covered by the forecast.
pub fn inputs(root: &Path) -> CarbonInputs {
    let points_file = example(root, "carbon-forecast.json");
    let points: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(&points_file).expect("read forecast"))
            .expect("forecast is a JSON list");
    let mut stamps: Vec<DateTime<Utc>> = points
        .iter()
        .map(|p| {
            p["timestamp"]
                .as_str()
                .expect("timestamp")
                .parse()
                .expect("RFC 3339 timestamp")
        })
        .collect();
    stamps.sort();
    let range = (stamps[0], *stamps.last().expect("points"));

    let cfg_text = std::fs::read_to_string(example(root, "22-componentconfig-carbon.yaml"))
        .expect("read carbon config");
    let cfg: Value = serde_yaml_ng::from_str(&cfg_text).expect("carbon config is YAML");
    let mut carbon_args = cfg["schedulers"]["shoot"]["profiles"]
        .as_array()
        .expect("profiles")
        .iter()
        .flat_map(|p| {
            p["profile"]["priorities"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .find(|p| p["name"] == "CarbonIntensity")
        .expect("a CarbonIntensity priority in the example")["args"]
        .clone();
    carbon_args["pointsFile"] = json!(points_file.display().to_string());

    let landscape =
        Landscape::load(&[example(root, "landscape")]).expect("example landscape loads");
    CarbonInputs {
        landscape,
        now: range.0,
        range,
        carbon_args,
        matrix_file: example(root, "latency-matrix.yaml"),
    }
}

/// `Scored` with LatencyDistance×3 and, for a positive weight, CarbonIntensity×weight.
pub fn config_text(inputs: &CarbonInputs, weight: u32) -> String {
    let mut priorities = vec![json!({
        "name": "LatencyDistance",
        "weight": 3,
        "args": { "matrixFile": inputs.matrix_file.display().to_string() },
    })];
    if weight > 0 {
        priorities.push(json!({
            "name": "CarbonIntensity",
            "weight": weight,
            "args": inputs.carbon_args,
        }));
    }
    let doc = json!({
        "apiVersion": "scheduler.config.gardener.cloud/v1alpha1",
        "kind": "SchedulerConfiguration",
        "schedulers": { "shoot": {
            "candidateDeterminationStrategy": "Scored",
            "priorities": priorities,
        }},
    });
    serde_yaml_ng::to_string(&doc).expect("config serializes")
}

fn raw_of(d: &gardener_scheduler::schedule::Decision, name: &str) -> Option<f64> {
    d.winner()
        .priorities
        .iter()
        .find(|p| p.name == name)
        .map(|p| p.raw)
}

/// Places the pending shoots of the example landscape with one weight.
pub fn run(inputs: &CarbonInputs, weight: u32) -> CarbonRow {
    let text = config_text(inputs, weight);
    let cfg = gardener_scheduler::compile::load_str(&text)
        .unwrap_or_else(|e| panic!("weight {weight}: {e}"))
        .config;
    let profile = Profile::from_config(&format!("carbon-{weight}"), &cfg.schedulers.shoot)
        .unwrap_or_else(|e| panic!("weight {weight}: {e:?}"));
    let sim = simulate::simulate(
        &inputs.landscape,
        &profile,
        &cfg.schedulers.shoot.scheduler_names,
        &gardener_scheduler::regions::Regions::with_overrides(&cfg.schedulers.shoot.regions),
        inputs.now,
    );
    let placed: Vec<_> = sim
        .outcomes
        .iter()
        .filter_map(|o| o.result.as_ref().ok())
        .collect();
    let latencies: Vec<f64> = placed
        .iter()
        .map(|d| raw_of(d, "LatencyDistance").expect("LatencyDistance in every ranking"))
        .collect();
    // Weight 0 has no CarbonIntensity in its profile: the intensity of its seeds is read from
    // the same settings through a profile that has it, so all rows use the same measure.
    let intensities: Vec<f64> = if weight > 0 {
        placed
            .iter()
            .map(|d| raw_of(d, "CarbonIntensity").expect("CarbonIntensity in every ranking"))
            .collect()
    } else {
        intensity_of_seeds(inputs, &sim)
    };
    let known: Vec<f64> = intensities
        .iter()
        .copied()
        .filter(|v| !v.is_nan())
        .collect();
    CarbonRow {
        weight,
        pending: sim.outcomes.len(),
        placed: placed.len(),
        neutral: intensities.len() - known.len(),
        mean_intensity: mean(&known),
        mean_latency_ms: mean(&latencies),
    }
}

/// The expected intensity of each placed shoot's seed, as a profile with CarbonIntensity sees it:
/// every placed shoot is decided again, pinned to its seed via the ranking of a carbon profile.
fn intensity_of_seeds(inputs: &CarbonInputs, sim: &simulate::Simulation) -> Vec<f64> {
    let text = config_text(inputs, 1);
    let cfg = gardener_scheduler::compile::load_str(&text)
        .expect("carbon config")
        .config;
    let profile =
        Profile::from_config("carbon-probe", &cfg.schedulers.shoot).expect("carbon profile");
    let initial = simulate::snapshot_of(&inputs.landscape);
    sim.outcomes
        .iter()
        .filter_map(|o| o.result.as_ref().ok().map(|d| (o, d)))
        .map(|(o, d)| {
            let shoot = &inputs.landscape.shoots[o.index];
            let probe =
                gardener_scheduler::schedule::schedule(shoot, &initial, &profile, inputs.now)
                    .expect("a shoot placed once is placeable in the initial landscape");
            probe
                .ranking
                .iter()
                .find(|s| *s.seed == *d.seed)
                .and_then(|s| s.priorities.iter().find(|p| p.name == "CarbonIntensity"))
                .map(|p| p.raw)
                .expect("the chosen seed is in the carbon profile's ranking")
        })
        .collect()
}

fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        f64::NAN
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}
