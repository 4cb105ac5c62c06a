//! `plan rebalance`: at most N moves that improve an objective the most.
//!
//! The solver is greedy: each round decides every movable shoot with the production
//! [`schedule`](crate::schedule::schedule) on the current state (so every filter and capacity
//! holds), evaluates the objective for each feasible destination, and keeps the single move
//! that improves it most, until N moves are planned or no move improves it. Greedy is not
//! optimal in general: [`optimum`] searches every set of at most N moves exhaustively, for tests
//! to measure the gap on small landscapes. The state moves are tried on, and the search for
//! the feasible ones, live in `state`.

mod state;

use std::collections::{BTreeSet, HashMap};

use serde::Serialize;

use crate::api::object_key;
use crate::snapshot::Snapshot;

use super::{Context, Figure, Goal, Move, Plan, PlanError, Timing, move_warnings, windows};
use state::{State, state};

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
    before_seeds.assign(&mut moves, &move_windows, &settings, cx.now);
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
