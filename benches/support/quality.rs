//! Placement quality: a stream of shoots with skewed regional demand onto seeds of limited
//! capacity, placed by each strategy through the production `decide()`, compared with the
//! offline optimum for mean latency.

use chrono::{DateTime, Utc};
use gardener_scheduler::api::{ObjectMeta, Project, ProjectSpec, Shoot};
use gardener_scheduler::fixtures::{CloudProfileBuilder, SeedBuilder, ShootBuilder};
use gardener_scheduler::schedule::decide;
use gardener_scheduler::snapshot::Snapshot;
use pathfinding::kuhn_munkres::kuhn_munkres;
use pathfinding::matrix::Matrix;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::geo::{self, LOCATIONS};
use super::landscape::{apportion, pick_weighted, zipf_weights};
use super::profiles::BuiltProfile;
use super::stats;

#[derive(Clone, Copy, Debug)]
pub struct QualitySpec {
    pub shoots: usize,
    pub projects: usize,
    /// Demand / total capacity.
    pub load: f64,
    /// Zipf exponent of regional demand.
    pub zipf: f64,
    /// Share of a project's shoots in its home region.
    pub home_share: f64,
    pub rng_seed: u64,
}

#[derive(Clone, Debug)]
pub struct QSeed {
    pub name: String,
    pub region: &'static str,
    pub capacity: u32,
}

#[derive(Clone, Debug)]
pub struct QShoot {
    pub project: usize,
    pub name: String,
    pub region: &'static str,
}

impl QShoot {
    pub fn namespace(&self) -> String {
        format!("garden-q{}", self.project)
    }
}

pub struct QualityLandscape {
    pub spec: QualitySpec,
    pub seeds: Vec<QSeed>,
    /// In arrival order.
    pub shoots: Vec<QShoot>,
}

/// Seeds per region, by demand rank: the busiest regions have several seeds, a few regions have
/// none (their shoots must go elsewhere), two unpopular regions have one.
fn seeds_in_region(rank: usize) -> usize {
    match rank {
        0..3 => 3,
        3..7 => 2,
        7..16 => 1,
        22 | 24 => 1,
        _ => 0,
    }
}

pub fn landscape(spec: QualitySpec) -> QualityLandscape {
    let mut rng = ChaCha8Rng::seed_from_u64(spec.rng_seed);
    let mut plans: Vec<(String, &'static str, f64)> = Vec::new();
    for (rank, l) in LOCATIONS.iter().enumerate() {
        for k in 0..seeds_in_region(rank) {
            plans.push((
                format!("aws-{}-{k}", l.aws),
                l.aws,
                rng.gen_range(20.0..45.0),
            ));
        }
    }
    let total = (spec.shoots as f64 / spec.load).ceil() as usize;
    let caps = apportion(total, &plans.iter().map(|p| p.2).collect::<Vec<_>>());
    let seeds = plans
        .into_iter()
        .zip(caps)
        .map(|((name, region, _), c)| QSeed {
            name,
            region,
            capacity: c as u32,
        })
        .collect();

    let demand = zipf_weights(LOCATIONS.len(), spec.zipf);
    let homes: Vec<usize> = (0..spec.projects)
        .map(|_| pick_weighted(&mut rng, &demand))
        .collect();
    let mut shoots: Vec<QShoot> = (0..spec.shoots)
        .map(|i| {
            let u: f64 = rng.r#gen();
            let project = ((u * u) * spec.projects as f64) as usize;
            let r = if rng.gen_bool(spec.home_share) {
                homes[project]
            } else {
                pick_weighted(&mut rng, &demand)
            };
            QShoot {
                project,
                name: format!("q{i}"),
                region: LOCATIONS[r].aws,
            }
        })
        .collect();
    shoots.shuffle(&mut rng);
    QualityLandscape {
        spec,
        seeds,
        shoots,
    }
}

fn latency(shoot_region: &str, seed_region: &str) -> f64 {
    geo::region_rtt_ms(shoot_region, seed_region).expect("known regions")
}

/// What one strategy (or the optimum) achieved.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub label: String,
    pub profile: String,
    /// per shoot: seed index
    pub placement: Vec<Option<usize>>,
    pub latencies: Vec<f64>,
    pub unschedulable: usize,
    /// used / capacity per seed
    pub utilisation: Vec<f64>,
    /// projects that got a second shoot on a seed while an equally near seed without one of
    /// their shoots had room; `None` for the optimum
    pub needless_colocation: Option<(usize, usize)>,
}

impl Outcome {
    pub fn mean_latency(&self) -> f64 {
        stats::mean(&self.latencies)
    }
    pub fn p95_latency(&self) -> f64 {
        stats::percentile(&self.latencies, 95.0).unwrap_or(f64::NAN)
    }
    pub fn util_max_min(&self) -> (f64, f64) {
        let max = self
            .utilisation
            .iter()
            .cloned()
            .fold(f64::NEG_INFINITY, f64::max);
        let min = self
            .utilisation
            .iter()
            .cloned()
            .fold(f64::INFINITY, f64::min);
        (max, min)
    }
    pub fn util_stddev(&self) -> f64 {
        stats::stddev(&self.utilisation)
    }
    /// Placed shoots whose seed is in another region.
    pub fn out_of_region(&self, land: &QualityLandscape) -> usize {
        land.shoots
            .iter()
            .zip(&self.placement)
            .filter(|(q, p)| p.is_some_and(|i| land.seeds[i].region != q.region))
            .count()
    }
}

fn base_snapshot(land: &QualityLandscape) -> Snapshot {
    let mut snap = Snapshot::new();
    snap.upsert_cloud_profile(&CloudProfileBuilder::new("aws").build());
    for s in &land.seeds {
        let zones: Vec<String> = super::landscape::zones_of("aws", s.region, 3);
        snap.upsert_seed(
            &SeedBuilder::new(&s.name)
                .region(s.region)
                .zones(&zones.iter().map(String::as_str).collect::<Vec<_>>())
                .allocatable("shoots", &s.capacity.to_string())
                .allocatable("cpu", &(s.capacity * 4).to_string())
                .allocatable("memory", &format!("{}Gi", s.capacity * 16))
                .build(),
        );
    }
    for p in 0..land.spec.projects {
        snap.upsert_project(&Project {
            metadata: ObjectMeta {
                name: Some(format!("q{p}")),
                ..Default::default()
            },
            spec: ProjectSpec {
                namespace: Some(format!("garden-q{p}")),
            },
        });
    }
    snap
}

fn to_shoot(q: &QShoot) -> Shoot {
    ShootBuilder::new(&q.namespace(), &q.name)
        .region(q.region)
        .build()
}

/// Places the stream one shoot at a time with `decide()`, each placement visible to the next.
pub fn run(
    land: &QualityLandscape,
    label: &str,
    built: &BuiltProfile,
    now: DateTime<Utc>,
) -> Outcome {
    let mut snap = base_snapshot(land);
    let n_seeds = land.seeds.len();
    let mut used = vec![0u32; n_seeds];
    let mut project_on = vec![vec![0u32; n_seeds]; land.spec.projects];
    let mut flagged = vec![false; land.spec.projects];
    let mut placement = Vec::with_capacity(land.shoots.len());
    let mut latencies = Vec::new();
    let mut unschedulable = 0;
    for q in &land.shoots {
        let shoot = to_shoot(q);
        match decide(&shoot, &snap, &built.profile, now) {
            Ok(d) => {
                let idx = land
                    .seeds
                    .iter()
                    .position(|s| s.name == d.seed)
                    .expect("known seed");
                let lat = latency(q.region, land.seeds[idx].region);
                if project_on[q.project][idx] > 0 {
                    let as_good_elsewhere = (0..n_seeds).any(|j| {
                        j != idx
                            && used[j] < land.seeds[j].capacity
                            && project_on[q.project][j] == 0
                            && latency(q.region, land.seeds[j].region) <= lat + 1e-9
                    });
                    flagged[q.project] |= as_good_elsewhere;
                }
                used[idx] += 1;
                project_on[q.project][idx] += 1;
                latencies.push(lat);
                placement.push(Some(idx));
                let mut placed = shoot;
                placed.spec.seed_name = Some(d.seed);
                snap.upsert_shoot(&placed);
            }
            Err(_) => {
                unschedulable += 1;
                placement.push(None);
            }
        }
    }
    let multi = project_on
        .iter()
        .filter(|row| row.iter().sum::<u32>() >= 2)
        .count();
    Outcome {
        label: label.to_string(),
        profile: built.describe(),
        placement,
        latencies,
        unschedulable,
        utilisation: utilisation(land, &used),
        needless_colocation: Some((flagged.iter().filter(|f| **f).count(), multi)),
    }
}

fn utilisation(land: &QualityLandscape, used: &[u32]) -> Vec<f64> {
    land.seeds
        .iter()
        .zip(used)
        .map(|(s, u)| *u as f64 / s.capacity as f64)
        .collect()
}

/// Latency in integer microseconds, the cost unit of the assignment.
fn cost_us(shoot_region: &str, seed_region: &str) -> i64 {
    (latency(shoot_region, seed_region) * 1000.0).round() as i64
}

/// The offline optimum for mean latency: every shoot gets one slot (a seed has `capacity`
/// slots), total latency minimal. Hungarian method on the shoots × slots matrix.
pub fn optimum(land: &QualityLandscape) -> Outcome {
    let slots: Vec<usize> = land
        .seeds
        .iter()
        .enumerate()
        .flat_map(|(i, s)| std::iter::repeat_n(i, s.capacity as usize))
        .collect();
    assert!(
        slots.len() >= land.shoots.len(),
        "capacity must cover demand for the optimum"
    );
    // kuhn_munkres maximises: negate costs.
    let weights = Matrix::from_fn(land.shoots.len(), slots.len(), |(r, c)| {
        -cost_us(land.shoots[r].region, land.seeds[slots[c]].region)
    });
    let (_, assignment) = kuhn_munkres(&weights);
    let mut used = vec![0u32; land.seeds.len()];
    let mut placement = Vec::with_capacity(land.shoots.len());
    let mut latencies = Vec::with_capacity(land.shoots.len());
    for (q, slot) in land.shoots.iter().zip(assignment) {
        let seed = slots[slot];
        used[seed] += 1;
        placement.push(Some(seed));
        latencies.push(latency(q.region, land.seeds[seed].region));
    }
    Outcome {
        label: "offline optimum".into(),
        profile: format!(
            "min-cost assignment, {} shoots × {} slots",
            land.shoots.len(),
            slots.len()
        ),
        placement,
        latencies,
        unschedulable: 0,
        utilisation: utilisation(land, &used),
        needless_colocation: None,
    }
}

/// A landscape at scale for timing `CapacityPressure`'s plan: `seeds` seeds over the 27 regions
/// (more in busier regions), `placed` shoots already on them with Zipf regional demand, and a
/// few pending shoots to decide.
pub fn pressure_landscape(seeds: usize, placed: usize, rng_seed: u64) -> (Snapshot, Vec<Shoot>) {
    let mut rng = ChaCha8Rng::seed_from_u64(rng_seed);
    let demand = zipf_weights(LOCATIONS.len(), 1.0);
    let per_region = apportion(seeds, &demand);
    let capacity = (placed as f64 / 0.8 / seeds as f64).ceil() as u32;
    let mut snap = Snapshot::new();
    snap.upsert_cloud_profile(&CloudProfileBuilder::new("aws").build());
    let mut names = Vec::with_capacity(seeds);
    for (l, n) in LOCATIONS.iter().zip(per_region) {
        for k in 0..n {
            let name = format!("aws-{}-{k}", l.aws);
            snap.upsert_seed(
                &SeedBuilder::new(&name)
                    .region(l.aws)
                    .allocatable("shoots", &capacity.to_string())
                    .build(),
            );
            names.push(name);
        }
    }
    for i in 0..placed {
        let r = pick_weighted(&mut rng, &demand);
        let mut shoot = ShootBuilder::new("garden-p", &format!("p{i}"))
            .region(LOCATIONS[r].aws)
            .build();
        shoot.spec.seed_name = Some(names[i % names.len()].clone());
        snap.upsert_shoot(&shoot);
    }
    let pending = (0..16)
        .map(|i| {
            let r = pick_weighted(&mut rng, &demand);
            ShootBuilder::new("garden-p", &format!("new{i}"))
                .region(LOCATIONS[r].aws)
                .build()
        })
        .collect();
    (snap, pending)
}
