//! `gardener-scheduler plan`: drain and rebalance plans over a landscape read from manifests.
//!
//! Every move is decided by the production [`schedule`](crate::schedule::schedule) on a
//! snapshot that already counts the moves planned before it (`choose`: where one shoot can go,
//! or why it cannot), then checked against what gardener-apiserver checks for a seed change
//! ([`migration`]: backup on both seeds, the internal and default domains), and marked live or
//! classic with the reasons. Start times come from [`windows`]. Nothing here writes anywhere:
//! the command prints the plan.
//!
//! [`migration`]: crate::plan::migration
//! [`windows`]: crate::plan::windows

mod choose;
pub mod drain;
pub mod failback;
pub mod migration;
pub mod outage;
pub mod output;
pub mod rebalance;
pub mod windows;

use std::collections::{BTreeSet, HashMap};

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::api::{Seed, object_key};
use crate::profile::Profile;
use crate::regions::Regions;
use crate::simulate::{Landscape, snapshot_of};
use crate::snapshot::Snapshot;

pub use choose::explain;
pub(crate) use choose::{
    Choice, category_of, choose, destination_blocker, migration_of, move_warnings, placed_on,
    reason_line, rejections_of, source_blocker, unplaced,
};
pub use drain::drain;
pub use failback::failback;
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
    /// The shoots that left `seed`, back to it.
    Failback {
        seed: String,
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
    /// The profile the moves were decided with, and a digest of its configuration.
    pub profile: String,
    pub profile_fingerprint: String,
    /// Whether live migrations were allowed (`--live-migration`), and preferred.
    pub live_migration: bool,
    pub prefer_live: bool,
}

impl Stamp {
    pub(crate) fn of(cx: &Context) -> Stamp {
        Stamp {
            computed_at: Utc::now(),
            generator: GENERATOR.into(),
            landscape: landscape_digest(cx.landscape),
            seeds: cx.landscape.seeds.len(),
            shoots: cx.landscape.shoots.len(),
            profile: cx.profile.name.clone(),
            profile_fingerprint: cx.profile.fingerprint.clone(),
            live_migration: cx.live_migration,
            prefer_live: cx.prefer_live,
        }
    }
}

/// The version that writes plans, as a plan's `stamp.generator` says it.
pub const GENERATOR: &str = concat!("gardener-scheduler ", env!("CARGO_PKG_VERSION"));

/// A digest of every Seed and Shoot of `landscape`: their names, resourceVersions, seeds and
/// specs (xxh3-64, hex). `plan apply` compares it with the plan's.
pub fn landscape_digest(landscape: &Landscape) -> String {
    use std::hash::Hasher;
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    for seed in &landscape.seeds {
        h.write(serde_json::to_string(seed).unwrap_or_default().as_bytes());
        h.write_u8(0);
    }
    for shoot in &landscape.shoots {
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
    format!("{:016x}", h.finish())
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

    /// Times the moves in their windows ([`windows::assign`]), against each seed's load and
    /// capacity before the plan.
    pub(crate) fn assign(
        &self,
        moves: &mut [Move],
        move_windows: &[windows::Window],
        settings: &windows::Settings,
        now: DateTime<Utc>,
    ) {
        let room = |name: &str| self.rooms.get(name).copied();
        windows::assign(moves, move_windows, settings, now, &room);
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
