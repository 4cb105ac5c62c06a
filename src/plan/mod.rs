//! `gardener-scheduler plan`: drain and rebalance plans over a landscape read from manifests.
//!
//! Every move is decided by the production [`schedule`] on a snapshot that already counts the
//! moves planned before it, then checked against what gardener-apiserver checks for a seed
//! change ([`migration`]: backup on both seeds, the internal and default domains), and marked
//! live or classic with the reasons. Start times come from [`windows`]. Nothing here writes
//! anywhere: the command prints the plan.

pub mod drain;
pub mod html;
pub mod migration;
pub mod output;
pub mod rebalance;
pub mod windows;

use std::collections::{BTreeMap, BTreeSet, HashMap};

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::api::{Seed, Shoot, object_key};
use crate::profile::Profile;
use crate::regions::Regions;
use crate::schedule::{Decision, FitError, schedule};
use crate::simulate::{Landscape, render_explain_with_defaults, snapshot_of};
use crate::snapshot::Snapshot;

pub use drain::drain;
pub use rebalance::{Budget, Objective, rebalance, rebalance_within};
pub use windows::{Timing, WindowError};

/// Input errors: the plan is not computed at all, never computed in part.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error("seed {name:?}: no Seed with that name in the landscape (known: {known})")]
    UnknownSeed { name: String, known: String },
    #[error("no seed to drain: name at least one")]
    NoSeeds,
    #[error(transparent)]
    Window(#[from] WindowError),
    #[error(
        "the plan did not finish within {limit_seconds} s (--timeout) after {moves} move(s); \
         nothing was planned: raise --timeout or lower --max-moves"
    )]
    Timeout { limit_seconds: f64, moves: usize },
}

/// What the plan is for.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Goal {
    Drain {
        seeds: Vec<String>,
    },
    #[serde(rename_all = "camelCase")]
    Rebalance {
        objective: Objective,
        max_moves: usize,
    },
}

/// One planned control-plane migration.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Move {
    /// `namespace/name`
    pub shoot: String,
    /// index into `Landscape::shoots`
    #[serde(skip)]
    pub index: usize,
    pub from: String,
    pub to: String,
    /// The destination's total score under the profile.
    pub score: f64,
    /// One line: why this destination.
    pub reason: String,
    /// Every seed for this shoot at the time of the move (the `simulate --explain` view).
    pub explanation: String,
    /// Things the operator must check that do not block the move (e.g. another provider type).
    pub warnings: Vec<String>,
    /// Live or classic, and why not live.
    pub migration: migration::Migration,
    /// For rebalance: how much this move improved the objective.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gain: Option<f64>,
    /// When it runs, or why it is deferred; filled by [`windows::assign`].
    pub timing: Timing,
}

/// A shoot that stays where it is, and why.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Blocked {
    pub shoot: String,
    pub from: String,
    /// Short, countable category for the histogram (e.g. `no seed fits`).
    pub category: String,
    pub reason: String,
}

/// One seed's load before and after the plan.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SeedLoad {
    pub name: String,
    pub provider: String,
    pub region: String,
    pub before: u64,
    pub after: u64,
    /// `status.allocatable.shoots`
    pub capacity: Option<u64>,
    pub drained: bool,
    /// Why the seed takes no shoots, when it does not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unusable: Option<String>,
}

/// A figure shown before and after (objective values, moved counts).
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Figure {
    pub name: String,
    pub before: f64,
    pub after: f64,
    pub unit: String,
}

/// The whole plan.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Plan {
    pub goal: Goal,
    pub profile: String,
    #[serde(serialize_with = "windows::rfc3339")]
    pub now: DateTime<Utc>,
    pub moves: Vec<Move>,
    pub blocked: Vec<Blocked>,
    pub seeds: Vec<SeedLoad>,
    pub figures: Vec<Figure>,
    /// Scheduling settings of the start times.
    pub windows: windows::Settings,
    /// What the plan was computed from.
    pub stamp: Stamp,
}

/// What a plan was computed from, so that a saved plan can be told apart from the landscape
/// it is carried out on.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Stamp {
    /// The wall-clock time the plan was computed (`now` is the time it plans from).
    #[serde(serialize_with = "windows::rfc3339")]
    pub computed_at: DateTime<Utc>,
    /// `gardener-scheduler` and its version.
    pub generator: String,
    /// A digest of every Seed and Shoot the plan read: their names, resourceVersions, seeds and
    /// specs (xxh3-64, hex).
    pub landscape: String,
    /// The objects behind the digest.
    pub seeds: usize,
    pub shoots: usize,
    /// The profile the moves were decided with.
    pub profile: String,
    /// Whether live migrations were allowed (`--live-migration`), and preferred.
    pub live_migration: bool,
    pub prefer_live: bool,
}

impl Stamp {
    pub(crate) fn of(cx: &Context) -> Stamp {
        use std::hash::Hasher;
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        for seed in &cx.landscape.seeds {
            h.write(serde_json::to_string(seed).unwrap_or_default().as_bytes());
            h.write_u8(0);
        }
        for shoot in &cx.landscape.shoots {
            let m = &shoot.metadata;
            for part in [
                m.namespace.as_deref(),
                m.name.as_deref(),
                m.resource_version.as_deref(),
                shoot.spec.seed_name.as_deref(),
            ] {
                h.write(part.unwrap_or_default().as_bytes());
                h.write_u8(0);
            }
            h.write(
                serde_json::to_string(&shoot.spec)
                    .unwrap_or_default()
                    .as_bytes(),
            );
            h.write_u8(1);
        }
        Stamp {
            computed_at: Utc::now(),
            generator: format!("gardener-scheduler {}", env!("CARGO_PKG_VERSION")),
            landscape: format!("{:016x}", h.finish()),
            seeds: cx.landscape.seeds.len(),
            shoots: cx.landscape.shoots.len(),
            profile: cx.profile.name.clone(),
            live_migration: cx.live_migration,
            prefer_live: cx.prefer_live,
        }
    }
}

impl Plan {
    pub fn scheduled(&self) -> usize {
        self.moves
            .iter()
            .filter(|m| matches!(m.timing, Timing::At { .. }))
            .count()
    }
    pub fn deferred(&self) -> usize {
        self.moves.len() - self.scheduled()
    }
    pub fn live(&self) -> usize {
        self.moves.iter().filter(|m| m.migration.is_live()).count()
    }
}

/// The inputs every plan shares.
pub struct Context<'a> {
    pub landscape: &'a Landscape,
    pub profile: &'a Profile,
    pub scheduler_names: &'a [String],
    pub regions: &'a Regions,
    pub now: DateTime<Utc>,
    /// How many feasible seeds each move's explanation lists (`None`: every seed, `--explain`).
    pub explain: Option<usize>,
    /// gardener-apiserver's `LiveControlPlaneMigration` feature gate is on: moves that meet
    /// the prerequisites are live.
    pub live_migration: bool,
    /// A drain takes, for a highly available shoot, the best destination it can move to live
    /// over a better-ranked one it cannot.
    pub prefer_live: bool,
    pub seed_index: SeedIndex<'a>,
}

/// Feasible seeds a move's explanation lists unless every seed is asked for: a drain of a big
/// seed at 10,000 seeds would otherwise carry 10,000 lines per move.
pub const EXPLAIN_TOP: usize = 10;

impl Context<'_> {
    pub(crate) fn snapshot(&self) -> Snapshot {
        let mut snap = snapshot_of(self.landscape);
        snap.set_regions(self.regions.clone());
        snap
    }

    /// The landscape's seed called `name`, from an index built on first use: a plan asks for
    /// the source and destination of every candidate move.
    pub(crate) fn seed(&self, name: &str) -> Option<&Seed> {
        self.seed_index
            .0
            .get_or_init(|| {
                self.landscape
                    .seeds
                    .iter()
                    .filter_map(|s| Some((s.metadata.name.clone()?, s)))
                    .collect()
            })
            .get(name)
            .copied()
    }
}

/// The seeds of a [`Context`]'s landscape by name, built on first use
/// (`SeedIndex::default()` when making a context).
#[derive(Default)]
pub struct SeedIndex<'a>(std::sync::OnceLock<HashMap<String, &'a Seed>>);

/// The shoot as if it were pending: no seed in spec nor status, everything else kept.
pub(crate) fn unplaced(shoot: &Shoot) -> Shoot {
    let mut s = shoot.clone();
    s.spec.seed_name = None;
    if let Some(status) = s.status.as_mut() {
        status.seed_name = None;
    }
    s
}

/// The shoot placed on `seed`.
pub(crate) fn placed_on(shoot: &Shoot, seed: &str) -> Shoot {
    let mut s = unplaced(shoot);
    s.spec.seed_name = Some(seed.to_string());
    s
}

/// Why a shoot cannot leave its seed at all, if it cannot.
pub(crate) fn source_blocker(cx: &Context, shoot: &Shoot, from: &str) -> Option<(String, String)> {
    if shoot.metadata.deletion_timestamp.is_some() {
        return Some(("deleting".into(), "the shoot is being deleted".into()));
    }
    if shoot.is_self_hosted() {
        return Some((
            "self-hosted".into(),
            "the control plane runs on the shoot's own workers: no seed to move from".into(),
        ));
    }
    match cx.seed(from) {
        Some(seed) if seed.spec.backup.is_none() => Some((
            "source without backup".into(),
            format!(
                "seed {from} has no spec.backup: control-plane migration restores etcd from the \
                 source seed's backup"
            ),
        )),
        _ => None,
    }
}

/// Why gardener-apiserver would refuse to move `shoot` from `from` to `to`, if it would
/// (beyond the scheduler's own filters; see [`migration::refusal`]).
pub(crate) fn destination_blocker(
    cx: &Context,
    shoot: &Shoot,
    from: &str,
    to: &str,
) -> Option<String> {
    match cx.seed(to) {
        Some(seed) => migration::refusal(migration::domain_of(shoot), cx.seed(from), seed),
        None => Some(format!("seed {to} is not in the landscape")),
    }
}

/// The kind of the migration of `shoot` from `from` to `to`.
pub(crate) fn migration_of(
    cx: &Context,
    shoot: &Shoot,
    from: &str,
    to: &str,
    snap: &Snapshot,
) -> migration::Migration {
    match (cx.seed(from), cx.seed(to)) {
        (Some(a), Some(b)) => migration::kind(
            shoot,
            a,
            b,
            snap,
            &cx.landscape.config_maps,
            cx.live_migration,
        ),
        _ => migration::Migration {
            kind: migration::Kind::Classic,
            not_live: vec!["a seed of the move is not in the landscape".into()],
        },
    }
}

/// Warnings for a move between `from` and `to` that does not block it.
pub(crate) fn move_warnings(cx: &Context, from: &str, to: &str) -> Vec<String> {
    let provider = |n: &str| {
        cx.seed(n)
            .and_then(|s| s.spec.provider.as_ref())
            .map(|p| p.type_.clone())
            .unwrap_or_default()
    };
    let (a, b) = (provider(from), provider(to));
    if a != b {
        vec![format!(
            "provider type changes ({a} -> {b}): pods on {to} need network access to the backup \
             storage of {from}, and the shoot's nodes to the new control plane"
        )]
    } else {
        Vec::new()
    }
}

/// Where a shoot can go, or why it cannot.
pub(crate) enum Choice {
    To {
        seed: String,
        score: f64,
        reason: String,
        explanation: String,
        migration: migration::Migration,
    },
    None {
        category: String,
        reason: String,
    },
}

/// The best destination for `shoot` (already unplaced in `snap`) among the seeds the profile
/// ranks, skipping `excluded` and seeds gardener-apiserver would refuse; with
/// [`Context::prefer_live`], a highly available shoot takes the best one it can move to live,
/// if there is one.
pub(crate) fn choose(
    cx: &Context,
    shoot: &Shoot,
    snap: &Snapshot,
    excluded: &BTreeSet<String>,
) -> Choice {
    let pending = unplaced(shoot);
    let key = object_key(&shoot.metadata);
    let from = shoot.spec.seed_name.clone().unwrap_or_default();
    let wants_live = cx.prefer_live
        && cx.live_migration
        && shoot
            .spec
            .control_plane
            .as_ref()
            .and_then(|c| c.high_availability.as_ref())
            .is_some();
    match schedule(&pending, snap, cx.profile, cx.now) {
        Ok(d) => {
            let mut skipped = Vec::new();
            let mut best: Option<(&crate::schedule::SeedScore, migration::Migration)> = None;
            // what was skipped above the destination chosen so far
            let mut skipped_above = 0;
            for s in &d.ranking {
                if excluded.contains(&*s.seed) {
                    continue;
                }
                if let Some(why) = destination_blocker(cx, shoot, &from, &s.seed) {
                    skipped.push(why);
                    continue;
                }
                let m = migration_of(cx, shoot, &from, &s.seed, snap);
                let live = m.is_live();
                if best.is_none() {
                    best = Some((s, m));
                    skipped_above = skipped.len();
                } else if live {
                    // a better-ranked destination that is not live is passed over
                    let (first, _) = best.take().expect("set above");
                    skipped.push(format!(
                        "{} (score {:.1}) ranks higher but cannot be reached live; --prefer-live",
                        first.seed,
                        first.total.into_inner()
                    ));
                    best = Some((s, m));
                    skipped_above = skipped.len();
                }
                if live || !wants_live {
                    break;
                }
            }
            if let Some((s, migration)) = best {
                skipped.truncate(skipped_above);
                return Choice::To {
                    seed: s.seed.to_string(),
                    score: s.total.into_inner(),
                    reason: reason_line(&d, &s.seed, &skipped),
                    explanation: explain(&key, &d, cx.explain, &cx.landscape.default_notes(&key)),
                    migration,
                };
            }
            Choice::None {
                category: "no migration destination".into(),
                reason: if skipped.is_empty() {
                    "every feasible seed is being drained".into()
                } else {
                    format!(
                        "the feasible seeds fail a migration precondition: {}",
                        skipped.join("; ")
                    )
                },
            }
        }
        Err(e) => Choice::None {
            category: category_of(cx.profile, &e),
            reason: e.to_string(),
        },
    }
}

/// The `simulate --explain` view of a decision, or, with `limit`, its best `limit` feasible
/// seeds and the rejections counted by reason; `defaults`: the defaults that changed how the
/// files are read ([`Landscape::default_notes`]).
pub fn explain(shoot: &str, d: &Decision, limit: Option<usize>, defaults: &[String]) -> String {
    let Some(limit) = limit else {
        return render_explain_with_defaults(shoot, &Ok(d.clone()), defaults);
    };
    let top = Decision {
        seed: d.seed.clone(),
        profile: d.profile.clone(),
        ranking: d.ranking.iter().take(limit).cloned().collect(),
        rejected: Vec::new(),
    };
    let mut out = render_explain_with_defaults(shoot, &Ok(top), defaults);
    if d.ranking.len() > limit {
        out.push_str(&format!(
            "  … and {} more feasible seed(s) (--explain lists every seed)\n",
            d.ranking.len() - limit
        ));
    }
    if !d.rejected.is_empty() {
        let mut counts: BTreeMap<(&str, &str), usize> = BTreeMap::new();
        for r in &d.rejected {
            *counts.entry((r.stage, r.reason.summary())).or_default() += 1;
        }
        let mut counts: Vec<_> = counts.into_iter().collect();
        counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        out.push_str(&format!("\nRejected seeds: {}\n", d.rejected.len()));
        for ((stage, why), n) in counts {
            out.push_str(&format!("  {n:>6} seed(s) {why} ({stage})\n"));
        }
    }
    out
}

pub(crate) fn reason_line(d: &Decision, seed: &str, skipped: &[String]) -> String {
    let Some(s) = d.ranking.iter().find(|s| &*s.seed == seed) else {
        return String::new();
    };
    let rank = d.ranking.iter().position(|x| &*x.seed == seed).unwrap_or(0) + 1;
    let parts: Vec<String> = s
        .priorities
        .iter()
        .map(|p| format!("{} ({})", p.name, p.detail))
        .collect();
    let mut line = format!(
        "rank {rank} of {} feasible seed(s), score {:.1}: {}",
        d.ranking.len(),
        s.total.into_inner(),
        parts.join(", ")
    );
    if !skipped.is_empty() {
        line.push_str(&format!("; skipped: {}", skipped.join("; ")));
    }
    line
}

/// The histogram category of a failed decision: what rejected the seeds that got furthest,
/// i.e. the rejections of the last stage (in profile order) that rejected any seed.
pub(crate) fn category_of(profile: &Profile, e: &FitError) -> String {
    match e {
        FitError::NoFit { rejected, .. } => {
            let last = profile
                .stages
                .iter()
                .rev()
                .map(|s| s.name())
                .find(|name| rejected.iter().any(|r| r.stage == *name));
            let mut counts: BTreeMap<&'static str, usize> = BTreeMap::new();
            for r in rejected.iter().filter(|r| Some(r.stage) == last) {
                *counts.entry(r.reason.summary()).or_default() += 1;
            }
            counts
                .into_iter()
                .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(a.0)))
                .map(|(s, _)| format!("no seed fits: the last seeds {s}"))
                .unwrap_or_else(|| "no seed fits".into())
        }
        FitError::InvalidShoot { field, .. } => format!("invalid shoot ({field})"),
        FitError::InvalidRegionConfig { .. } => "invalid region ConfigMap".into(),
        FitError::OverBudget { stage, .. } => format!("decision over its budget ({stage})"),
    }
}

/// Moves in the order they start: scheduled by start time, then deferred (stable otherwise).
pub fn by_start(moves: &[Move]) -> Vec<&Move> {
    let mut v: Vec<&Move> = moves.iter().collect();
    v.sort_by_key(|m| match &m.timing {
        Timing::At { start, .. } => (0, Some(*start)),
        _ => (1, None),
    });
    v
}

/// The seeds as they were before the plan: their rows of the load table and their room for the
/// start times. Kept instead of a copy of the snapshot, which at 100,000 shoots costs hundreds of
/// megabytes.
pub(crate) struct Before {
    rows: Vec<SeedLoad>,
    rooms: HashMap<String, windows::Room>,
}

impl Before {
    pub(crate) fn of(snap: &Snapshot, drained: &BTreeSet<String>) -> Before {
        let mut rows: Vec<SeedLoad> = snap
            .seeds()
            .map(|s| {
                let load = snap.usage().shoots_on(&s.name);
                SeedLoad {
                    name: s.name.to_string(),
                    provider: s.provider.clone(),
                    region: s.region.clone(),
                    before: load,
                    after: load,
                    capacity: s.allocatable_shoots(),
                    drained: drained.contains(&*s.name),
                    unusable: s.usable.as_ref().err().map(|r| r.to_string()),
                }
            })
            .collect();
        rows.sort_by(|a, b| {
            (&a.provider, &a.region, &a.name).cmp(&(&b.provider, &b.region, &b.name))
        });
        let rooms = rows
            .iter()
            .map(|r| {
                (
                    r.name.clone(),
                    windows::Room {
                        load: r.before,
                        capacity: r.capacity,
                    },
                )
            })
            .collect();
        Before { rows, rooms }
    }

    /// Each seed's load and capacity before the plan, for [`windows::assign`].
    pub(crate) fn room(&self, name: &str) -> Option<windows::Room> {
        self.rooms.get(name).copied()
    }

    /// Seeds and their load before and after (`after`: the snapshot with the moves applied).
    pub(crate) fn loads(self, after: &Snapshot) -> Vec<SeedLoad> {
        let mut rows = self.rows;
        for r in &mut rows {
            r.after = after.usage().shoots_on(&r.name);
        }
        rows
    }
}

/// Seeds and their load before (`before`) and after (`after` with the moves applied).
pub(crate) fn seed_loads(
    before: &Snapshot,
    after: &Snapshot,
    drained: &BTreeSet<String>,
) -> Vec<SeedLoad> {
    Before::of(before, drained).loads(after)
}

/// Shoots currently on `seed` (spec.seedName), in creation order then namespace/name.
pub(crate) fn shoots_on(landscape: &Landscape, seeds: &BTreeSet<String>) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..landscape.shoots.len())
        .filter(|&i| {
            landscape.shoots[i]
                .spec
                .seed_name
                .as_deref()
                .is_some_and(|s| seeds.contains(s))
        })
        .collect();
    idx.sort_by_key(|&i| {
        let s = &landscape.shoots[i];
        (
            s.metadata.creation_timestamp.as_ref().map(|t| t.0),
            object_key(&s.metadata),
        )
    });
    idx
}
