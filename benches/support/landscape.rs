//! Deterministic landscapes of realistic shape: three providers, their regions (demand is
//! Zipf-distributed over regions), zones, labels, taints, access restrictions, default domains,
//! capacities, projects; shoots with HA settings, tolerations, selectors and purposes.
//!
//! The same [`GridSpec`] always yields the same objects (ChaCha8 seeded from the spec).

use gardener_scheduler::api::{
    ANNOTATION_EMERGENCY_STOP, CloudProfile, ObjectMeta, Project, ProjectSpec, Seed, Shoot,
};
use gardener_scheduler::fixtures::{CloudProfileBuilder, SeedBuilder, ShootBuilder};
use gardener_scheduler::snapshot::Snapshot;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::baseline::Placed;
use super::geo;

/// Providers and their share of seeds and shoots.
pub const PROVIDERS: [(&str, f64); 3] = [("aws", 0.5), ("gcp", 0.3), ("azure", 0.2)];
/// Purposes and their share of shoots.
const PURPOSES: [(&str, f64); 4] = [
    ("production", 0.6),
    ("evaluation", 0.2),
    ("development", 0.15),
    ("testing", 0.05),
];
pub const PROTECTED: &str = "seed.gardener.cloud/protected";
pub const EU_ACCESS: &str = "eu-access-only";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GridSpec {
    pub seeds: usize,
    pub shoots: usize,
    pub rng_seed: u64,
}

/// Zipf weights `1/k` for `n` items in rank order.
pub fn zipf_weights(n: usize, exponent: f64) -> Vec<f64> {
    (1..=n).map(|k| 1.0 / (k as f64).powf(exponent)).collect()
}

/// Samples an index with probability proportional to its weight.
pub fn pick_weighted(rng: &mut impl Rng, weights: &[f64]) -> usize {
    let total: f64 = weights.iter().sum();
    let mut x = rng.r#gen::<f64>() * total;
    for (i, w) in weights.iter().enumerate() {
        if x < *w {
            return i;
        }
        x -= w;
    }
    weights.len() - 1
}

/// Splits `n` into parts proportional to `weights` (largest remainder; ties by index).
pub fn apportion(n: usize, weights: &[f64]) -> Vec<usize> {
    let total: f64 = weights.iter().sum();
    let exact: Vec<f64> = weights.iter().map(|w| n as f64 * w / total).collect();
    let mut parts: Vec<usize> = exact.iter().map(|x| x.floor() as usize).collect();
    let mut order: Vec<usize> = (0..weights.len()).collect();
    order.sort_by(|&a, &b| {
        let (fa, fb) = (exact[a] - exact[a].floor(), exact[b] - exact[b].floor());
        fb.partial_cmp(&fa).expect("finite").then(a.cmp(&b))
    });
    let missing = n - parts.iter().sum::<usize>();
    for &i in order.iter().take(missing) {
        parts[i] += 1;
    }
    parts
}

/// Zone names in a provider's style.
pub fn zones_of(provider: &str, region: &str, n: usize) -> Vec<String> {
    (0..n)
        .map(|i| match provider {
            "aws" => format!("{region}{}", (b'a' + i as u8) as char),
            "gcp" => format!("{region}-{}", (b'a' + i as u8) as char),
            _ => format!("{}", i + 1),
        })
        .collect()
}

fn is_eu(region: &str) -> bool {
    geo::location_of(region).is_some_and(|l| l.aws.starts_with("eu-"))
}

/// How much `allocatable.shoots` a seed publishes beyond its usage.
#[derive(Clone, Copy, Debug)]
enum Headroom {
    Unlimited,
    Full,
    /// allocatable = used × factor + 5
    Factor(f64),
}

/// Seed indices per region of one provider.
type RegionSeeds = Vec<(&'static str, Vec<usize>)>;

#[derive(Clone, Debug)]
struct SeedPlan {
    name: String,
    provider: &'static str,
    region: &'static str,
    zones: usize,
    canary: bool,
    taint: Option<(&'static str, Option<&'static str>)>,
    eu_access: bool,
    zone_mode: Option<&'static str>,
    backup: bool,
    not_ready: bool,
    invisible: bool,
    emergency_stop: bool,
    headroom: Headroom,
    used: u64,
}

/// Generates one landscape: seeds are planned first, shoots drawn one by one (so callers can
/// stream a million of them into a cache without keeping them), then seeds are built with
/// capacities that fit the usage the shoots produced.
pub struct Generator {
    /// The stream being drawn from: seeds while planning, then swapped with one of the two below.
    rng: ChaCha8Rng,
    existing_rng: ChaCha8Rng,
    pending_rng: ChaCha8Rng,
    seeds: Vec<SeedPlan>,
    /// per provider: region -> indices into `seeds`
    by_provider: Vec<(&'static str, RegionSeeds)>,
    projects: usize,
}

impl Generator {
    pub fn new(spec: GridSpec) -> Generator {
        // Seeds and pending shoots depend on the seed count only, so the cells of one row differ
        // in the existing shoots alone.
        let stream =
            |tag: u64| ChaCha8Rng::seed_from_u64(spec.rng_seed ^ ((spec.seeds as u64) << 32) ^ tag);
        let mut rng = stream(0);
        let existing_rng = stream(1 << 63 | spec.shoots as u64);
        let pending_rng = stream(1 << 62);
        let shares: Vec<f64> = PROVIDERS.iter().map(|(_, s)| *s).collect();
        let per_provider = if spec.seeds >= PROVIDERS.len() {
            // at least one seed per provider
            let mut p = apportion(spec.seeds - PROVIDERS.len(), &shares);
            p.iter_mut().for_each(|n| *n += 1);
            p
        } else {
            apportion(spec.seeds, &shares)
        };
        let mut seeds = Vec::with_capacity(spec.seeds);
        let mut by_provider = Vec::new();
        for ((provider, _), n) in PROVIDERS.iter().zip(per_provider) {
            let regions = geo::regions_of(provider);
            let per_region = apportion(n, &zipf_weights(regions.len(), 1.0));
            let mut index = Vec::new();
            for (region, count) in regions.iter().zip(per_region) {
                let mut ids = Vec::new();
                for k in 0..count {
                    ids.push(seeds.len());
                    let taint_roll: f64 = rng.r#gen();
                    let headroom_roll: f64 = rng.r#gen();
                    seeds.push(SeedPlan {
                        name: format!("{provider}-{region}-{k}"),
                        provider,
                        region,
                        zones: if rng.gen_bool(0.85) {
                            3
                        } else {
                            rng.gen_range(1..=2)
                        },
                        canary: rng.gen_bool(0.1),
                        taint: if taint_roll < 0.05 {
                            Some((PROTECTED, None))
                        } else if taint_roll < 0.07 {
                            Some(("dedicated", Some("payments")))
                        } else {
                            None
                        },
                        eu_access: is_eu(region) && rng.gen_bool(0.5),
                        zone_mode: match rng.gen_range(0..20) {
                            0 => Some("Enforce"),
                            1 | 2 => Some("Prefer"),
                            _ => None,
                        },
                        backup: rng.gen_bool(0.7),
                        not_ready: rng.gen_bool(0.01),
                        invisible: rng.gen_bool(0.01),
                        emergency_stop: rng.gen_bool(0.005),
                        headroom: if headroom_roll < 0.02 {
                            Headroom::Full
                        } else if headroom_roll < 0.8 {
                            Headroom::Factor(rng.gen_range(1.15..2.0))
                        } else {
                            Headroom::Unlimited
                        },
                        used: 0,
                    });
                }
                if !ids.is_empty() {
                    index.push((*region, ids));
                }
            }
            by_provider.push((*provider, index));
        }
        let projects = (spec.shoots / 40).clamp(20, 30_000);
        Generator {
            rng,
            existing_rng,
            pending_rng,
            seeds,
            by_provider,
            projects,
        }
    }

    pub fn project_count(&self) -> usize {
        self.projects
    }

    pub fn seed_names(&self) -> Vec<String> {
        self.seeds.iter().map(|s| s.name.clone()).collect()
    }

    fn pick_project(&mut self) -> usize {
        // squared uniform: a few big projects, many small ones
        let u: f64 = self.rng.r#gen();
        ((u * u) * self.projects as f64) as usize
    }

    fn pick_provider_region(&mut self) -> (&'static str, &'static str) {
        let p = pick_weighted(&mut self.rng, &PROVIDERS.map(|(_, s)| s));
        let provider = PROVIDERS[p].0;
        let regions = geo::regions_of(provider);
        let r = pick_weighted(&mut self.rng, &zipf_weights(regions.len(), 1.0));
        (provider, regions[r])
    }

    /// A realistic shoot (not yet placed) with number `i`, from the pending stream.
    pub fn shoot(&mut self, i: usize) -> Shoot {
        std::mem::swap(&mut self.rng, &mut self.pending_rng);
        let shoot = self.draw_shoot(i);
        std::mem::swap(&mut self.rng, &mut self.pending_rng);
        shoot
    }

    fn draw_shoot(&mut self, i: usize) -> Shoot {
        let (provider, region) = self.pick_provider_region();
        let project = self.pick_project();
        let namespace = format!("garden-p{project}");
        let name = format!("s{i}");
        let purpose = PURPOSES[pick_weighted(&mut self.rng, &PURPOSES.map(|(_, s)| s))].0;
        let mut b = ShootBuilder::new(&namespace, &name)
            .provider(provider)
            .cloud_profile(provider)
            .region(region)
            .purpose(purpose)
            .nodes(&format!("10.{}.0.0/16", self.rng.gen_range(0..250)));
        let zone_count = self.rng.gen_range(1..=3);
        let zones = zones_of(provider, region, zone_count);
        b = b.worker_zones(&zones.iter().map(String::as_str).collect::<Vec<_>>());
        match self.rng.gen_range(0..100) {
            0..10 => b = b.failure_tolerance("zone"),
            10..15 => b = b.failure_tolerance("node"),
            15 => b = b.control_plane_zones(&[zones[0].as_str()]),
            _ => {}
        }
        match self.rng.gen_range(0..100) {
            0..5 => b = b.toleration(PROTECTED, None),
            5..7 => b = b.toleration("dedicated", Some("payments")),
            _ => {}
        }
        if self.rng.gen_bool(0.03) {
            b = b.seed_selector("environment", "production");
        }
        if is_eu(region) && self.rng.gen_bool(0.1) {
            b = b.access_restriction(EU_ACCESS);
        }
        if self.rng.gen_bool(0.02)
            && let Some(seed) = self.random_seed_of(provider)
        {
            let domain = format!(
                "{name}.p{project}.{}",
                default_domain(&self.seeds[seed].name)
            );
            b = b.domain(&domain);
        }
        b.build()
    }

    fn random_seed_of(&mut self, provider: &str) -> Option<usize> {
        let (_, regions) = self.by_provider.iter().find(|(p, _)| *p == provider)?;
        let all: Vec<usize> = regions
            .iter()
            .flat_map(|(_, ids)| ids.iter().copied())
            .collect();
        (!all.is_empty()).then(|| all[self.rng.gen_range(0..all.len())])
    }

    /// An existing shoot with number `i`, placed on a seed of its provider (its region's when
    /// there is one), and its compact form for the recounting baseline.
    pub fn existing(&mut self, i: usize) -> (Shoot, Placed) {
        std::mem::swap(&mut self.rng, &mut self.existing_rng);
        let drawn = self.draw_existing(i);
        std::mem::swap(&mut self.rng, &mut self.existing_rng);
        drawn
    }

    fn draw_existing(&mut self, i: usize) -> (Shoot, Placed) {
        let mut shoot = self.draw_shoot(i);
        let provider = shoot
            .spec
            .provider
            .as_ref()
            .map(|p| p.type_.clone())
            .unwrap_or_default();
        let region = shoot.spec.region.clone().unwrap_or_default();
        let same_region = self
            .by_provider
            .iter()
            .find(|(p, _)| *p == provider)
            .and_then(|(_, regions)| regions.iter().find(|(r, _)| *r == region))
            .map(|(_, ids)| ids.clone());
        let seed = match same_region {
            Some(ids) => ids[self.rng.gen_range(0..ids.len())],
            None => match self.random_seed_of(&provider) {
                Some(s) => s,
                None => self.rng.gen_range(0..self.seeds.len()),
            },
        };
        self.seeds[seed].used += 1;
        let name = self.seeds[seed].name.clone();
        shoot.spec.seed_name = Some(name.clone());
        shoot.status.get_or_insert_with(Default::default).seed_name = Some(name);
        let placed = Placed::of(&shoot, seed as u32);
        (shoot, placed)
    }

    /// The seeds, with `status.allocatable.shoots` derived from the usage drawn so far.
    pub fn seeds(&self) -> Vec<Seed> {
        self.seeds.iter().map(build_seed).collect()
    }

    pub fn cloud_profiles(&self) -> Vec<CloudProfile> {
        vec![
            CloudProfileBuilder::new("aws").build(),
            CloudProfileBuilder::new("gcp")
                .match_expression("environment", "NotIn", &["canary"])
                .build(),
            CloudProfileBuilder::new("azure")
                .provider_types(&["azure", "aws"])
                .build(),
        ]
    }

    pub fn projects(&self) -> Vec<Project> {
        (0..self.projects)
            .map(|k| Project {
                metadata: ObjectMeta {
                    name: Some(format!("p{k}")),
                    ..Default::default()
                },
                spec: ProjectSpec {
                    namespace: Some(format!("garden-p{k}")),
                },
            })
            .collect()
    }

    /// Every region name a seed or shoot of this generator can have.
    pub fn regions() -> Vec<&'static str> {
        PROVIDERS
            .iter()
            .flat_map(|(p, _)| geo::regions_of(p))
            .collect()
    }
}

fn default_domain(seed: &str) -> String {
    format!("{seed}.seeds.example.gardener.cloud")
}

fn build_seed(p: &SeedPlan) -> Seed {
    let zones = zones_of(p.provider, p.region, p.zones);
    let mut b = SeedBuilder::new(&p.name)
        .provider(p.provider)
        .region(p.region)
        .zones(&zones.iter().map(String::as_str).collect::<Vec<_>>())
        .label(
            "environment",
            if p.canary { "canary" } else { "production" },
        )
        .label(
            &format!("provider.extensions.gardener.cloud/{}", p.provider),
            "true",
        )
        .networks("10.250.0.0/16", "10.96.0.0/11", "10.64.0.0/13")
        .shoot_defaults(Some("100.96.0.0/11"), Some("100.64.0.0/13"))
        .default_domain(&default_domain(&p.name));
    if let Some((key, value)) = p.taint {
        b = b.taint(key, value);
    }
    if p.eu_access {
        b = b
            .access_restriction(EU_ACCESS)
            .label("seed.gardener.cloud/eu-access", "true");
    }
    if let Some(mode) = p.zone_mode {
        b = b.zone_mode(mode);
    }
    if p.backup {
        b = b.backup();
    }
    if p.not_ready {
        b = b.condition("GardenletReady", "False");
    }
    if p.invisible {
        b = b.visible(false);
    }
    if p.emergency_stop {
        b = b.annotation(ANNOTATION_EMERGENCY_STOP, "true");
    }
    // Seeds publish cpu and memory too (4 cores and 16Gi per shoot slot), so ResourceFit has
    // something to weigh.
    let slots = match p.headroom {
        Headroom::Unlimited => 1_000,
        Headroom::Full => p.used,
        Headroom::Factor(f) => (p.used as f64 * f).ceil() as u64 + 5,
    };
    b = b
        .allocatable("cpu", &(slots * 4).to_string())
        .allocatable("memory", &format!("{}Gi", slots * 16));
    match p.headroom {
        Headroom::Unlimited => {}
        Headroom::Full => b = b.allocatable("shoots", &p.used.to_string()),
        Headroom::Factor(f) => {
            b = b.allocatable(
                "shoots",
                &((p.used as f64 * f).ceil() as u64 + 5).to_string(),
            )
        }
    }
    b.build()
}

/// A landscape loaded into a snapshot, the compact shoot list for the baseline, and shoots
/// waiting for a decision.
pub struct Grid {
    pub snapshot: Snapshot,
    pub placed: Vec<Placed>,
    pub seed_names: Vec<String>,
    pub pending: Vec<Shoot>,
    pub projects: usize,
}

/// Builds a grid cell's landscape: existing shoots are generated, cached and dropped one by one.
pub fn grid(spec: GridSpec, pending: usize) -> Grid {
    let mut g = Generator::new(spec);
    let mut snapshot = Snapshot::new();
    let mut placed = Vec::with_capacity(spec.shoots);
    for i in 0..spec.shoots {
        let (shoot, p) = g.existing(i);
        snapshot.upsert_shoot(&shoot);
        placed.push(p);
    }
    for s in g.seeds() {
        snapshot.upsert_seed(&s);
    }
    for cp in g.cloud_profiles() {
        snapshot.upsert_cloud_profile(&cp);
    }
    for p in g.projects() {
        snapshot.upsert_project(&p);
    }
    // The per-seed columns are built on first use after seeds come or go: build them with the
    // landscape (the controller's first decision after its initial sync does the same), so
    // that decisions are timed and counted in steady state.
    snapshot.columns();
    let pending = (0..pending).map(|i| g.shoot(spec.shoots + i)).collect();
    Grid {
        snapshot,
        placed,
        seed_names: g.seed_names(),
        pending,
        projects: g.project_count(),
    }
}
