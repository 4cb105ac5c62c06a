//! `plan rebalance`: at most N moves that improve an objective the most.
//!
//! The solver is greedy: each round decides every movable shoot with the production
//! [`schedule`](crate::schedule::schedule) on the current state (so every filter and capacity
//! holds), evaluates the objective for each feasible destination, and keeps the single move
//! that improves it most, until N moves are planned or no move improves it. Greedy is not
//! optimal in general: [`optimum`] searches every set of at most N moves exhaustively, for tests
//! to measure the gap on small landscapes.

use std::collections::{BTreeSet, HashMap};

use serde::Serialize;

use crate::api::{Shoot, object_key};
use crate::schedule::schedule;
use crate::snapshot::Snapshot;
use crate::snapshot::estimate::LatencySources;

use super::{
    Blocked, Context, Figure, Goal, Move, Plan, PlanError, Timing, move_warnings, placed_on,
    source_blocker, unplaced, windows,
};

/// Latency counted for a shoot-seed pair no source knows.
pub const UNKNOWN_LATENCY_MS: f64 = 300.0;

/// What rebalancing minimises.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "camelCase")]
pub enum Objective {
    /// Mean expected latency (ms) between each shoot's region and its seed's region.
    Latency,
    /// Standard deviation of utilisation (shoots / allocatable shoots, %) over usable seeds.
    Spread,
}

impl Objective {
    pub fn unit(self) -> &'static str {
        match self {
            Objective::Latency => "ms",
            Objective::Spread => "percentage points",
        }
    }
    pub fn label(self) -> &'static str {
        match self {
            Objective::Latency => "mean shoot-to-seed latency",
            Objective::Spread => "utilisation spread (std. dev.)",
        }
    }
}

/// The movable shoots and the state they are moved in.
struct State<'c, 'a> {
    cx: &'c Context<'a>,
    objective: Objective,
    snap: Snapshot,
    /// landscape indices of the shoots that may move
    movable: Vec<usize>,
    /// current seed of each movable shoot
    at: Vec<String>,
    /// every placed shoot of this scheduler, for the latency mean: (index, seed)
    latency_cache: HashMap<(usize, String), f64>,
    /// The seeds the spread counts (usable, publishing `allocatable.shoots` > 0): load, capacity.
    counted: HashMap<String, (u64, u64)>,
    /// Sum and sum of squares of the counted seeds' utilisation (%), kept with every move so
    /// that a candidate's spread costs O(1), not a pass over every seed.
    sum: f64,
    sum_sq: f64,
}

fn util(load: u64, cap: u64) -> f64 {
    100.0 * load as f64 / cap as f64
}

impl State<'_, '_> {
    fn latency(&mut self, i: usize, seed: &str) -> f64 {
        if let Some(v) = self.latency_cache.get(&(i, seed.to_string())) {
            return *v;
        }
        let ms = self.latency_uncached(i, seed);
        self.latency_cache.insert((i, seed.to_string()), ms);
        ms
    }

    /// As [`Self::latency`], not kept: candidates' destinations would fill the cache with
    /// shoots × seeds entries.
    fn latency_uncached(&self, i: usize, seed: &str) -> f64 {
        let shoot = &self.cx.landscape.shoots[i];
        let sources = LatencySources {
            matrix: None,
            use_region_config_maps: true,
        };
        let cp = shoot
            .spec
            .cloud_profile
            .as_ref()
            .map(|r| r.name.clone())
            .or_else(|| shoot.spec.cloud_profile_name.clone())
            .unwrap_or_default();
        let region = shoot.spec.region.clone().unwrap_or_default();
        let provider = shoot
            .spec
            .provider
            .as_ref()
            .map(|p| p.type_.clone())
            .unwrap_or_default();
        self.snap
            .seed(seed)
            .and_then(|s| {
                sources
                    .for_shoot(&region, &provider, &cp, &self.snap)
                    .to(s)
                    .ms()
            })
            .unwrap_or(UNKNOWN_LATENCY_MS)
    }

    /// The objective on the current state; lower is better.
    fn value(&mut self) -> f64 {
        match self.objective {
            Objective::Latency => {
                if self.movable.is_empty() {
                    return 0.0;
                }
                let pairs: Vec<(usize, String)> = self
                    .movable
                    .iter()
                    .copied()
                    .zip(self.at.iter().cloned())
                    .collect();
                let sum: f64 = pairs.iter().map(|(i, s)| self.latency(*i, s)).sum();
                sum / pairs.len() as f64
            }
            Objective::Spread => spread(&self.snap),
        }
    }

    /// The objective after moving `m` to `to`, from the current value `current`, without
    /// moving it: only the two seeds (spread) or the one shoot (latency) change.
    fn value_after(&mut self, m: usize, to: &str, current: f64) -> f64 {
        match self.objective {
            Objective::Latency => {
                let i = self.movable[m];
                let from = self.at[m].clone();
                let delta = self.latency_uncached(i, to) - self.latency(i, &from);
                current + delta / self.movable.len() as f64
            }
            Objective::Spread => {
                let (mut sum, mut sum_sq) = (self.sum, self.sum_sq);
                for (seed, step) in [(self.at[m].as_str(), -1i64), (to, 1)] {
                    if let Some(&(load, cap)) = self.counted.get(seed) {
                        let (old, new) =
                            (util(load, cap), util(load.saturating_add_signed(step), cap));
                        sum += new - old;
                        sum_sq += new * new - old * old;
                    }
                }
                let n = self.counted.len().max(1) as f64;
                (sum_sq / n - (sum / n).powi(2)).max(0.0).sqrt()
            }
        }
    }

    fn shoot(&self, m: usize) -> &Shoot {
        &self.cx.landscape.shoots[self.movable[m]]
    }

    fn key(&self, m: usize) -> String {
        object_key(&self.shoot(m).metadata)
    }

    fn apply(&mut self, m: usize, to: &str) {
        let moved = placed_on(self.shoot(m), to);
        self.snap.upsert_shoot(&moved);
        let from = std::mem::replace(&mut self.at[m], to.to_string());
        for (seed, step) in [(from.as_str(), -1i64), (to, 1)] {
            if let Some((load, cap)) = self.counted.get_mut(seed) {
                let old = util(*load, *cap);
                *load = load.saturating_add_signed(step);
                let new = util(*load, *cap);
                self.sum += new - old;
                self.sum_sq += new * new - old * old;
            }
        }
    }

    /// Recounts the sums from the loads, so that rounding does not add up over many moves.
    fn resum(&mut self) {
        self.sum = self.counted.values().map(|&(l, c)| util(l, c)).sum();
        self.sum_sq = self
            .counted
            .values()
            .map(|&(l, c)| util(l, c).powi(2))
            .sum();
    }

    /// Feasible destinations of movable shoot `m` on the current state, best ranked first.
    fn destinations(&mut self, m: usize) -> Result<crate::schedule::Decision, ()> {
        let key = self.key(m);
        let current = self.at[m].clone();
        self.snap.remove_shoot(&key);
        let d = schedule(
            &unplaced(self.shoot(m)),
            &self.snap,
            self.cx.profile,
            self.cx.now,
        );
        let back = placed_on(self.shoot(m), &current);
        self.snap.upsert_shoot(&back);
        d.map_err(|_| ())
    }

    /// The movable shoots not moved yet, those most likely to improve the objective first:
    /// for spread, the shoots on the most utilised seeds; for latency, the farthest shoots.
    fn promising(&mut self, moved: &BTreeSet<usize>) -> Vec<usize> {
        let least = self
            .counted
            .values()
            .map(|&(l, c)| util(l, c))
            .fold(f64::INFINITY, f64::min);
        let mut order: Vec<(f64, usize)> = Vec::new();
        for m in (0..self.movable.len()).filter(|m| !moved.contains(m)) {
            let rank = match self.objective {
                Objective::Spread => self
                    .counted
                    .get(&self.at[m])
                    .map_or(f64::NEG_INFINITY, |&(l, c)| util(l, c)),
                Objective::Latency => {
                    let (i, seed) = (self.movable[m], self.at[m].clone());
                    self.latency(i, &seed)
                }
            };
            // A shoot at no latency cannot get closer; one on the least utilised seed cannot
            // lower the spread by leaving it.
            let hopeless = match self.objective {
                Objective::Latency => rank <= 0.0,
                Objective::Spread => rank <= least && rank.is_finite(),
            };
            if !hopeless {
                order.push((rank, m));
            }
        }
        order.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        order.into_iter().map(|(_, m)| m).collect()
    }

    /// Feasible moves from the current state with the objective value after each. With
    /// `prune`, the shoots are decided in batches of [`BATCH`], most promising first, and the
    /// search stops after the first batch that holds a move improving on `current`; without,
    /// every shoot is decided (the exhaustive [`optimum`] needs every move).
    fn candidates(
        &mut self,
        moved: &BTreeSet<usize>,
        current: f64,
        prune: bool,
        budget: &mut Budget,
    ) -> Result<Vec<(usize, String, f64)>, PlanError> {
        let order: Vec<usize> = if prune {
            self.promising(moved)
        } else {
            (0..self.movable.len())
                .filter(|m| !moved.contains(m))
                .collect()
        };
        let mut out = Vec::new();
        let total = order.len();
        for (done, m) in order.into_iter().enumerate() {
            if prune && done > 0 && done % BATCH == 0 {
                if out.iter().any(|(_, _, v)| *v < current - EPSILON) {
                    break;
                }
                budget.check(done, total)?;
            }
            let Ok(d) = self.destinations(m) else {
                continue;
            };
            let here = self.at[m].clone();
            let domain = super::migration::domain_of(&self.cx.landscape.shoots[self.movable[m]]);
            for s in &d.ranking {
                if *s.seed == *here {
                    continue;
                }
                let Some(to) = self.cx.seed(&s.seed) else {
                    continue;
                };
                let from = self.cx.seed(&here);
                if super::migration::refusal(domain, from, to).is_some() {
                    continue;
                }
                let v = self.value_after(m, &s.seed, current);
                out.push((m, s.seed.to_string(), v));
            }
        }
        Ok(out)
    }
}

/// Shoots decided per batch of a pruned search.
const BATCH: usize = 64;

/// The bounds of a rebalance run: a deadline, and progress for a terminal.
pub struct Budget<'p> {
    /// When the run fails instead of going on (`--timeout`).
    pub deadline: Option<(std::time::Instant, std::time::Duration)>,
    /// Called between batches: (moves planned, shoots decided this round, shoots to decide).
    pub progress: Option<&'p mut dyn FnMut(usize, usize, usize)>,
    moves: usize,
}

impl<'p> Budget<'p> {
    pub fn new(
        deadline: Option<(std::time::Instant, std::time::Duration)>,
        progress: Option<&'p mut dyn FnMut(usize, usize, usize)>,
    ) -> Self {
        Budget {
            deadline,
            progress,
            moves: 0,
        }
    }

    fn check(&mut self, done: usize, total: usize) -> Result<(), PlanError> {
        if let Some(p) = self.progress.as_mut() {
            p(self.moves, done, total);
        }
        match self.deadline {
            Some((at, limit)) if std::time::Instant::now() >= at => Err(PlanError::Timeout {
                limit_seconds: limit.as_secs_f64(),
                moves: self.moves,
            }),
            _ => Ok(()),
        }
    }
}

/// Standard deviation of utilisation in percent over usable seeds that publish
/// `allocatable.shoots`.
pub fn spread(snap: &Snapshot) -> f64 {
    let utils: Vec<f64> = snap
        .seeds()
        .filter(|s| s.usable.is_ok())
        .filter_map(|s| {
            s.allocatable_shoots()
                .filter(|c| *c > 0)
                .map(|c| 100.0 * snap.usage().shoots_on(&s.name) as f64 / c as f64)
        })
        .collect();
    if utils.is_empty() {
        return 0.0;
    }
    let mean = utils.iter().sum::<f64>() / utils.len() as f64;
    (utils.iter().map(|u| (u - mean).powi(2)).sum::<f64>() / utils.len() as f64).sqrt()
}

fn state<'c, 'a>(cx: &'c Context<'a>, objective: Objective) -> (State<'c, 'a>, Vec<Blocked>) {
    let snap = cx.snapshot();
    let mut movable = Vec::new();
    let mut at = Vec::new();
    let mut blocked = Vec::new();
    let mut order: Vec<usize> = (0..cx.landscape.shoots.len()).collect();
    order.sort_by_key(|&i| object_key(&cx.landscape.shoots[i].metadata));
    for i in order {
        let shoot = &cx.landscape.shoots[i];
        let Some(seed) = shoot.spec.seed_name.clone().filter(|s| !s.is_empty()) else {
            continue;
        };
        if !cx
            .scheduler_names
            .iter()
            .any(|n| n == shoot.scheduler_name())
        {
            continue;
        }
        if let Some((category, reason)) = source_blocker(cx, shoot, &seed) {
            blocked.push(Blocked {
                shoot: object_key(&shoot.metadata),
                from: seed,
                category,
                reason,
            });
            continue;
        }
        movable.push(i);
        at.push(seed);
    }
    let counted: HashMap<String, (u64, u64)> = snap
        .seeds()
        .filter(|s| s.usable.is_ok())
        .filter_map(|s| {
            s.allocatable_shoots()
                .filter(|c| *c > 0)
                .map(|c| (s.name.to_string(), (snap.usage().shoots_on(&s.name), c)))
        })
        .collect();
    let mut st = State {
        cx,
        objective,
        snap,
        movable,
        at,
        latency_cache: HashMap::new(),
        counted,
        sum: 0.0,
        sum_sq: 0.0,
    };
    st.resum();
    (st, blocked)
}

const EPSILON: f64 = 1e-9;

/// Plans at most `max_moves` moves that lower `objective`, greedily (see the module docs).
pub fn rebalance(
    cx: &Context,
    objective: Objective,
    max_moves: usize,
    settings: windows::Settings,
) -> Result<Plan, PlanError> {
    rebalance_within(
        cx,
        objective,
        max_moves,
        settings,
        &mut Budget::new(None, None),
    )
}

/// As [`rebalance`], within `budget`: past its deadline the run fails (no partial plan).
pub fn rebalance_within(
    cx: &Context,
    objective: Objective,
    max_moves: usize,
    settings: windows::Settings,
    budget: &mut Budget,
) -> Result<Plan, PlanError> {
    let (mut st, blocked) = state(cx, objective);
    // Read every window first: a bad one fails the whole plan.
    let mut all_windows = HashMap::new();
    for &i in &st.movable {
        let key = object_key(&cx.landscape.shoots[i].metadata);
        let doc = cx.landscape.shoot_docs.get(i).and_then(|d| d.value());
        all_windows.insert(i, windows::window_of(&key, doc.as_ref())?);
    }
    let before_seeds = super::Before::of(&st.snap, &BTreeSet::new());
    let before = st.value();
    let mut current = before;
    let mut moved = BTreeSet::new();
    let mut moves = Vec::new();
    let mut move_windows = Vec::new();
    while moves.len() < max_moves {
        budget.moves = moves.len();
        let best = st
            .candidates(&moved, current, true, budget)?
            .into_iter()
            .filter(|(_, _, v)| *v < current - EPSILON)
            .min_by(|a, b| a.2.total_cmp(&b.2));
        let Some((m, to, _)) = best else { break };
        let from = st.at[m].clone();
        let key = st.key(m);
        let decision = st
            .destinations(m)
            .expect("the move was feasible a moment ago");
        let explanation = super::explain(
            &key,
            &decision,
            cx.explain,
            &cx.landscape.default_notes(&key),
        );
        let score = decision
            .ranking
            .iter()
            .find(|s| *s.seed == *to)
            .map_or(0.0, |s| s.total.into_inner());
        let rank = decision
            .ranking
            .iter()
            .position(|s| *s.seed == *to)
            .unwrap_or(0)
            + 1;
        let migration = {
            let shoot = &cx.landscape.shoots[st.movable[m]];
            super::migration_of(cx, shoot, &from, &to, &st.snap)
        };
        st.apply(m, &to);
        st.resum();
        // The reported value is the objective recomputed on the new state, not the estimate.
        let value = st.value();
        moved.insert(m);
        moves.push(Move {
            shoot: key,
            index: st.movable[m],
            warnings: move_warnings(cx, &from, &to),
            migration,
            reason: format!(
                "{} {:.3} -> {:.3} {} (rank {rank} of {} feasible seed(s) for this shoot)",
                objective.label(),
                current,
                value,
                objective.unit(),
                decision.ranking.len()
            ),
            from,
            to,
            score,
            explanation,
            gain: Some(current - value),
            timing: Timing::Unscheduled,
        });
        move_windows.push(all_windows[&st.movable[m]].clone());
        current = value;
    }
    windows::assign(
        &mut moves,
        &move_windows,
        &settings,
        cx.now,
        &|name: &str| before_seeds.room(name),
    );
    let seeds = before_seeds.loads(&st.snap);
    Ok(Plan {
        goal: Goal::Rebalance {
            objective,
            max_moves,
        },
        profile: cx.profile.name.clone(),
        now: cx.now,
        moves,
        blocked,
        seeds,
        figures: vec![Figure {
            name: objective.label().into(),
            before,
            after: current,
            unit: objective.unit().into(),
        }],
        windows: settings,
        stamp: super::Stamp::of(cx),
    })
}

/// The best objective value reachable with at most `max_moves` moves, by exhaustive search
/// (every sequence of distinct shoots and feasible destinations). Exponential: for tests on
/// small landscapes, to measure how far the greedy plan is from the optimum.
pub fn optimum(cx: &Context, objective: Objective, max_moves: usize) -> f64 {
    fn search(st: &mut State, moved: &mut BTreeSet<usize>, left: usize, best: &mut f64) {
        let v = st.value();
        if v < *best {
            *best = v;
        }
        if left == 0 {
            return;
        }
        let mut unbounded = Budget::new(None, None);
        let current = st.value();
        let all = st
            .candidates(moved, current, false, &mut unbounded)
            .expect("no deadline");
        for (m, to, _) in all {
            let from = st.at[m].clone();
            st.apply(m, &to);
            moved.insert(m);
            search(st, moved, left - 1, best);
            moved.remove(&m);
            st.apply(m, &from);
        }
    }
    let (mut st, _) = state(cx, objective);
    let mut best = f64::INFINITY;
    search(&mut st, &mut BTreeSet::new(), max_moves, &mut best);
    best
}
