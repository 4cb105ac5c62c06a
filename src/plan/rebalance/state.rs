//! The state a rebalance moves shoots in: the movable shoots and where each is, the snapshot
//! with the moves so far, and the objective, kept so that one candidate move costs O(1) to
//! evaluate; plus the search for the feasible moves from it.

use std::collections::{BTreeSet, HashMap};

use crate::api::{Shoot, object_key};
use crate::plan::{Blocked, Context, PlanError, migration, placed_on, source_blocker, unplaced};
use crate::schedule::schedule;
use crate::snapshot::Snapshot;
use crate::snapshot::estimate::LatencySources;

use super::{BATCH, Budget, EPSILON, Objective, UNKNOWN_LATENCY_MS, spread};

/// The movable shoots and the state they are moved in.
pub(super) struct State<'c, 'a> {
    cx: &'c Context<'a>,
    objective: Objective,
    pub(super) snap: Snapshot,
    /// landscape indices of the shoots that may move
    pub(super) movable: Vec<usize>,
    /// current seed of each movable shoot
    pub(super) at: Vec<String>,
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
    pub(super) fn value(&mut self) -> f64 {
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

    pub(super) fn key(&self, m: usize) -> String {
        object_key(&self.shoot(m).metadata)
    }

    pub(super) fn apply(&mut self, m: usize, to: &str) {
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
    pub(super) fn resum(&mut self) {
        self.sum = self.counted.values().map(|&(l, c)| util(l, c)).sum();
        self.sum_sq = self
            .counted
            .values()
            .map(|&(l, c)| util(l, c).powi(2))
            .sum();
    }

    /// Feasible destinations of movable shoot `m` on the current state, best ranked first.
    pub(super) fn destinations(&mut self, m: usize) -> Result<crate::schedule::Decision, ()> {
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
    /// every shoot is decided (the exhaustive [`optimum`](super::optimum) needs every move).
    pub(super) fn candidates(
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
            let domain = migration::domain_of(&self.cx.landscape.shoots[self.movable[m]]);
            for s in &d.ranking {
                if *s.seed == *here {
                    continue;
                }
                let Some(to) = self.cx.seed(&s.seed) else {
                    continue;
                };
                let from = self.cx.seed(&here);
                if migration::refusal(domain, from, to).is_some() {
                    continue;
                }
                let v = self.value_after(m, &s.seed, current);
                out.push((m, s.seed.to_string(), v));
            }
        }
        Ok(out)
    }
}

pub(super) fn state<'c, 'a>(
    cx: &'c Context<'a>,
    objective: Objective,
) -> (State<'c, 'a>, Vec<Blocked>) {
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
