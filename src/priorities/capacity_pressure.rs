//! `CapacityPressure`: latency plus the price of the capacity a placement uses up, so that a
//! shoot overflowing its region goes where it displaces the least expected demand instead of
//! taking the nearest free seed that the next region's shoots will need.
//!
//! The demand still to come (up to `plannedUtilisation` of the slots, less the shoots placed),
//! split by region like the placed shoots or a declared forecast, is assigned to the seeds' free
//! slots as a min-cost flow (see [`flow`]). How much of it comes is unknown, so plans are solved
//! for evenly spaced shares of it, and a seed's price is the mean over them of what one slot less
//! would cost the plan. Plans are solved when the seeds, the demand shares or the number of
//! placed shoots move, never per decision: a decision reads the cached prices.

mod args;
mod flow;

use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::context::ShootContext;
use crate::field_error::FieldError;
use crate::region_distance::region_distance;
use crate::snapshot::estimate::{LatencySources, ShootLatencies, round_ms};
use crate::snapshot::{SeedInfo, Snapshot};

use super::framework::{Detail, Details, Priority};

/// The config name.
pub const NAME: &str = "CapacityPressure";

/// Arguments that build it, for the generated profiles of the tests.
pub const EXAMPLE: &str = "{maxLatencyMs: 300, plannedUtilisation: 0.85}";

/// Plans per solve, for the volumes 1/8, 2/8, …, 8/8 of the expected volume.
const VOLUME_SCENARIOS: u64 = 8;
/// The most slots one seed counts for in the plan (see `plan`).
const MAX_PLANNED_SLOTS: u64 = 1 << 32;

/// Scores `latency + price` on LatencyDistance's absolute scale: 0 ms scores 100,
/// `maxLatencyMs` or more scores 0.
pub struct CapacityPressure {
    sources: LatencySources,
    max_latency_ms: f64,
    fallback_factor: f64,
    /// Declared demand weights per region; `None` = the placed shoots' regions.
    forecast: Option<BTreeMap<String, f64>>,
    planned_utilisation: f64,
    replan_threshold: f64,
    /// Plans by latency context (provider, CloudProfile), reused while they are current.
    plans: Mutex<HashMap<(String, String), Arc<Plan>>>,
    /// Plans solved so far, to show that decisions reuse them.
    solves: AtomicU64,
}

pub(super) fn build(
    args: &serde_json::Value,
    path: &str,
) -> Result<Box<dyn Priority>, Vec<FieldError>> {
    Ok(Box::new(CapacityPressure::from_args(args, path)?))
}

/// A solved plan and what it was solved for.
struct Plan {
    seeds: u64,
    shares: BTreeMap<String, f64>,
    /// Placed shoots and finite slots when it was solved: the plan is for the demand still to
    /// come, so it goes stale as shoots are placed or deleted.
    placed: usize,
    slots: u64,
    /// seed -> price of one slot in ms
    prices: HashMap<Arc<str>, f64>,
    /// `N more shoots expected from R regions over M free slots`, for explanations
    summary: Arc<str>,
}

impl CapacityPressure {
    /// How many plans this priority has solved since it was built.
    pub fn plans_solved(&self) -> u64 {
        self.solves.load(Ordering::Relaxed)
    }

    /// Demand shares per region, sorted by region; empty when nothing is known yet.
    fn shares(&self, snap: &Snapshot) -> BTreeMap<String, f64> {
        let weights: BTreeMap<String, f64> = match &self.forecast {
            Some(f) => f.clone(),
            None => snap
                .usage()
                .shoots_by_region()
                .iter()
                .filter(|(r, _)| !r.is_empty())
                .map(|(r, n)| (r.to_string(), *n as f64))
                .collect(),
        };
        let total: f64 = weights.values().sum();
        if total <= 0.0 {
            return BTreeMap::new();
        }
        weights
            .into_iter()
            .filter(|(_, w)| *w > 0.0)
            .map(|(r, w)| (r, w / total))
            .collect()
    }

    fn latency_ms(&self, rows: &ShootLatencies, seed: &SeedInfo, region: &str) -> f64 {
        rows.to(seed)
            .ms()
            .unwrap_or_else(|| region_distance(&seed.region, region) as f64 * self.fallback_factor)
    }

    /// The current plan for this latency context, solving it if the seeds or the demand shares
    /// moved since the last one.
    fn plan(&self, cx: &ShootContext, snap: &Snapshot) -> Option<Arc<Plan>> {
        let shares = self.shares(snap);
        if shares.is_empty() {
            return None;
        }
        let mut h = DefaultHasher::new();
        for s in snap.seeds() {
            (&*s.name, &s.region, &s.provider, s.allocatable_shoots()).hash(&mut h);
        }
        let seeds = h.finish();
        let key = (
            cx.provider.clone(),
            cx.cloud_profile.region_config_name.clone(),
        );
        let mut plans = self.plans.lock().unwrap_or_else(|e| e.into_inner());
        let placed = snap.usage().placed_shoots();
        if let Some(p) = plans.get(&key)
            && p.seeds == seeds
            && total_variation(&p.shares, &shares) <= self.replan_threshold
            && placed.abs_diff(p.placed) as f64 <= self.replan_threshold * p.slots as f64
        {
            return Some(Arc::clone(p));
        }
        let plan = Arc::new(self.solve(&key, seeds, shares, placed, snap));
        plans.insert(key, Arc::clone(&plan));
        Some(plan)
    }

    fn solve(
        &self,
        (provider, cloud_profile): &(String, String),
        seeds_hash: u64,
        shares: BTreeMap<String, f64>,
        placed: usize,
        snap: &Snapshot,
    ) -> Plan {
        let usage = snap.usage();
        let seeds: Vec<&SeedInfo> = snap.seeds().collect();
        // A seed may publish up to 2^63-1 shoots (`9Ei`, as upstream reads it); no demand fills
        // more than 2^32, so the plan counts at most that many, and its sums stay in range.
        let slots = |s: &SeedInfo| s.allocatable_shoots().map(|a| a.min(MAX_PLANNED_SLOTS));
        let finite: u64 = seeds
            .iter()
            .filter_map(|s| slots(s))
            .fold(0, u64::saturating_add);
        // The plan is for the shoots still to come on the slots still free: placed shoots are
        // sunk, and a slot's price is what taking it now costs the demand expected after.
        let held: u64 = seeds
            .iter()
            .filter_map(|s| Some(usage.shoots_on(&s.name).min(slots(s)?)))
            .fold(0, u64::saturating_add);
        let volume =
            ((self.planned_utilisation * finite as f64).round() as u64).saturating_sub(held);
        let total: u64 = shares
            .values()
            .map(|s| (s * volume as f64).round() as u64)
            .fold(0, u64::saturating_add);
        // Seeds of one provider and region are interchangeable in the plan (every latency source
        // sees only the provider and region), so they are solved as one pool with their summed
        // capacity: the problem is regions × pools, not regions × seeds, and a pool's price is
        // the price of each of its slots.
        let mut pools: BTreeMap<(&str, &str), (usize, u64, Vec<usize>)> = BTreeMap::new();
        for (i, s) in seeds.iter().enumerate() {
            let pool = pools
                .entry((s.provider.as_str(), s.region.as_str()))
                .or_insert((i, 0, Vec::new()));
            let free = slots(s).map_or(total, |a| a.saturating_sub(usage.shoots_on(&s.name)));
            pool.1 = pool.1.saturating_add(free);
            pool.2.push(i);
        }
        let pools: Vec<(usize, u64, Vec<usize>)> = pools.into_values().collect();
        let cost: Vec<Vec<i64>> = shares
            .keys()
            .map(|region| {
                let rows = self
                    .sources
                    .for_shoot(region, provider, cloud_profile, snap);
                pools
                    .iter()
                    .map(|(first, _, _)| {
                        (self.latency_ms(&rows, seeds[*first], region) * 1000.0).round() as i64
                    })
                    .collect()
            })
            .collect();
        let capacity: Vec<u64> = pools.iter().map(|(_, cap, _)| *cap).collect();
        // How much of the volume arrives is unknown: each fill up to it is taken as equally
        // likely, so a slot is priced by the mean of its prices over evenly spaced volumes. A
        // seed needed only if everything comes costs little; one needed early costs much.
        let mut price_sum = vec![0i64; pools.len()];
        let mut unserved_sum = 0u64;
        for k in 1..=VOLUME_SCENARIOS {
            let demand_k: Vec<u64> = shares
                .values()
                .map(|s| (s * (volume * k) as f64 / VOLUME_SCENARIOS as f64).round() as u64)
                .collect();
            let problem = flow::Problem {
                demand: demand_k,
                capacity: capacity.clone(),
                cost: cost.clone(),
                unserved: (self.max_latency_ms * 1000.0).round() as i64,
            };
            let solution = flow::solve(&problem);
            for (sum, p) in price_sum.iter_mut().zip(&solution.price) {
                *sum += p;
            }
            unserved_sum += solution.unserved.iter().sum::<u64>();
        }
        let solution_price: Vec<i64> = price_sum
            .iter()
            .map(|p| p / VOLUME_SCENARIOS as i64)
            .collect();
        self.solves.fetch_add(1, Ordering::Relaxed);
        let by_index = &seeds;
        // The price of a slot in one plan is what one slot less costs it: the exact increase in
        // the latency of the demand still to come when this shoot takes the slot.
        let prices: HashMap<Arc<str>, f64> = pools
            .iter()
            .zip(&solution_price)
            .flat_map(|((_, _, members), price)| {
                members
                    .iter()
                    .map(move |i| (Arc::clone(&by_index[*i].name), *price as f64 / 1000.0))
            })
            .collect();
        let free = finite - held;
        let unserved = unserved_sum;
        tracing::debug!(
            regions = shares.len(),
            seeds = seeds.len(),
            pools = pools.len(),
            demand = total,
            slots = finite,
            free,
            unserved,
            priced = prices.values().filter(|p| **p > 0.0).count(),
            "CapacityPressure plan solved"
        );
        Plan {
            seeds: seeds_hash,
            summary: format!(
                "{total} more shoots expected from {} regions over {free} free slots",
                shares.len()
            )
            .into(),
            shares,
            placed,
            slots: finite,
            prices,
        }
    }
}

/// Half the L1 distance: the share of demand that moved between regions.
fn total_variation(a: &BTreeMap<String, f64>, b: &BTreeMap<String, f64>) -> f64 {
    let only_a: f64 = a
        .iter()
        .map(|(r, x)| (x - b.get(r).copied().unwrap_or(0.0)).abs())
        .sum();
    let only_b: f64 = b
        .iter()
        .filter(|(r, _)| !a.contains_key(*r))
        .map(|(_, y)| y.abs())
        .sum();
    (only_a + only_b) / 2.0
}

impl Priority for CapacityPressure {
    fn name(&self) -> &'static str {
        NAME
    }

    fn raw(
        &self,
        cx: &ShootContext,
        positions: &[u32],
        snap: &Snapshot,
        mut details: Details<'_>,
    ) -> Vec<f64> {
        let plan = self.plan(cx, snap);
        let cols = snap.columns();
        let seeds: Vec<&SeedInfo> = positions.iter().map(|&i| cols.info(i)).collect();
        let rows = self.sources.for_shoot(
            &cx.region,
            &cx.provider,
            &cx.cloud_profile.region_config_name,
            snap,
        );
        // Home capacity is the shoot's own: with latencies that obey the triangle inequality,
        // giving a home slot to another region's overflow and sending this shoot away never
        // costs less, so only capacity elsewhere is priced.
        let priced: Vec<(bool, f64)> = seeds
            .iter()
            .map(|s| {
                let home = s.region == cx.region && s.provider == cx.provider;
                let price = plan
                    .as_ref()
                    .filter(|_| !home)
                    .and_then(|p| p.prices.get(&s.name).copied())
                    .unwrap_or(0.0);
                (home, price)
            })
            .collect();
        // The shoot takes a slot wherever it goes: what the cheapest candidate displaces is
        // displaced whatever the choice, so only the excess over it is charged.
        let base = priced.iter().map(|(_, p)| *p).fold(f64::INFINITY, f64::min);
        let base = if base.is_finite() { base } else { 0.0 };
        seeds
            .iter()
            .zip(priced)
            .map(|(s, (home, full))| {
                let latency = self.latency_ms(&rows, s, &cx.region);
                let price = full - base;
                details.put(|| {
                    let summary = plan.as_ref().map(|p| Arc::clone(&p.summary));
                    Detail::lazy(move |f| match &summary {
                        Some(_) if home => write!(
                            f,
                            "{} ms latency, home region: no capacity price",
                            round_ms(latency)
                        ),
                        Some(summary) if base > 0.0 => write!(
                            f,
                            "{} ms: {} ms latency + {} ms capacity price ({} ms, less the {} ms \
                             every candidate displaces; {summary})",
                            round_ms(latency + price),
                            round_ms(latency),
                            round_ms(price),
                            round_ms(full),
                            round_ms(base)
                        ),
                        Some(summary) => write!(
                            f,
                            "{} ms: {} ms latency + {} ms capacity price ({summary})",
                            round_ms(latency + price),
                            round_ms(latency),
                            round_ms(price)
                        ),
                        None => write!(
                            f,
                            "{} ms latency, no capacity price (no demand known yet)",
                            round_ms(latency)
                        ),
                    })
                });
                latency + price
            })
            .collect()
    }

    /// Only the excess over the cheapest candidate's price is charged.
    fn relative_to_candidates(&self) -> bool {
        true
    }

    fn normalize(&self, values: &[f64]) -> Vec<f64> {
        super::latency_distance::normalize_ms(values, self.max_latency_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::load_str;
    use crate::fixtures::{CloudProfileBuilder, SeedBuilder, ShootBuilder};
    use crate::priorities::testing::{evaluate, rounded};
    use crate::profile::Profile;
    use crate::schedule::schedule;

    /// Regions a and b are 10 ms apart, c is 30 ms from a and 100 ms from b; b's home seed is
    /// exactly as big as b's demand, a's is too small, c's is big and wanted by nobody.
    fn matrix() -> serde_json::Value {
        serde_json::json!({"a": {"b": 10, "c": 30}, "b": {"c": 100}})
    }

    fn landscape(placed: &[(&str, &str)]) -> Snapshot {
        let mut snap = Snapshot::new();
        snap.upsert_cloud_profile(&CloudProfileBuilder::new("aws").build());
        for (name, region, cap) in [("sa", "a", "2"), ("sb", "b", "3"), ("sc", "c", "10")] {
            snap.upsert_seed(
                &SeedBuilder::new(name)
                    .region(region)
                    .allocatable("shoots", cap)
                    .build(),
            );
        }
        for (i, (region, seed)) in placed.iter().enumerate() {
            snap.upsert_shoot(
                &ShootBuilder::new("garden-x", &format!("p{i}"))
                    .region(region)
                    .seed(seed)
                    .build(),
            );
        }
        snap
    }

    fn priority(args: serde_json::Value) -> Box<dyn Priority> {
        build(&args, "p.args").unwrap_or_else(|e| panic!("{e:?}"))
    }

    fn shoot(region: &str) -> crate::api::Shoot {
        ShootBuilder::new("garden-a", "new").region(region).build()
    }

    /// Four shoots of region a and three of region b, on their home seeds as far as they fit.
    const A4_B3: &[(&str, &str)] = &[
        ("a", "sa"),
        ("a", "sa"),
        ("a", "sc"),
        ("a", "sc"),
        ("b", "sb"),
        ("b", "sb"),
        ("b", "sb"),
    ];

    /// The same shoots, all on the far seed sc: the home seeds are still free.
    const A4_B3_ON_SC: &[(&str, &str)] = &[
        ("a", "sc"),
        ("a", "sc"),
        ("a", "sc"),
        ("a", "sc"),
        ("b", "sc"),
        ("b", "sc"),
        ("b", "sc"),
    ];

    #[test]
    fn overflow_is_priced_by_the_demand_still_to_come_whether_estimated_or_declared() {
        // Up to four more shoots of a and three of b, over 2 free slots on sa, 3 on sb and
        // plenty on sc. The plans for 1/8 .. 8/8 of that volume (a = k/2, b = 3k/8 rounded):
        //   k = 1, 2: nothing is full, no price;
        //   k = 3, 4: sa full, one slot less sends an a shoot to sb: sa 10 ms;
        //   k = 5, 6: a's third shoot fills sb: sa 30 ms (an a shoot to sc), sb 20 ms (a's
        //             shoot on sb moves on to sc);
        //   k = 7, 8: b fills sb: sa 30 ms, sb 40 ms (a b shoot to sa pushes an a shoot to sc).
        // Means: sa 17.5 ms, sb 15 ms, sc (never full) 0.
        let cases = [
            (
                "estimated from the placed shoots' regions, placed shoots' slots taken",
                serde_json::json!({"matrix": matrix(), "plannedUtilisation": 14.0 / 15.0}),
                A4_B3_ON_SC,
                "(7 more shoots expected from 2 regions over 8 free slots)",
            ),
            (
                "declared as a forecast",
                serde_json::json!({"matrix": matrix(), "demand": {"a": 4, "b": 3}, "plannedUtilisation": 7.0 / 15.0}),
                &[][..],
                "(7 more shoots expected from 2 regions over 15 free slots)",
            ),
        ];
        for (name, args, placed, summary) in cases {
            let p = priority(args);
            let got = evaluate(&*p, &shoot("a"), &landscape(placed));
            assert_eq!(
                got.iter().map(|g| g.1.as_str()).collect::<Vec<_>>(),
                [
                    "0 ms latency, home region: no capacity price".to_string(),
                    format!("25 ms: 10 ms latency + 15 ms capacity price {summary}"),
                    format!("30 ms: 30 ms latency + 0 ms capacity price {summary}"),
                ],
                "{name}"
            );
            assert_eq!(rounded(&got), vec![100.0, 91.667, 90.0], "{name}");
            let got = evaluate(&*p, &shoot("b"), &landscape(placed));
            assert_eq!(
                got[0].1,
                format!("27.5 ms: 10 ms latency + 17.5 ms capacity price {summary}"),
                "{name}"
            );
        }
    }

    #[test]
    fn once_the_planned_volume_is_placed_nothing_is_priced() {
        // 7 of 15 slots planned, 7 shoots placed: no demand left to displace.
        let p = priority(serde_json::json!({"matrix": matrix(), "plannedUtilisation": 7.0 / 15.0}));
        let got = evaluate(&*p, &shoot("a"), &landscape(A4_B3));
        assert_eq!(
            got[1].1,
            "10 ms: 10 ms latency + 0 ms capacity price (0 more shoots expected from 2 regions over 8 free slots)"
        );
        assert_eq!(rounded(&got), vec![100.0, 96.667, 90.0]);
    }

    #[test]
    fn a_shoot_whose_home_region_has_room_stays_home_even_when_its_seed_is_in_demand() {
        // Planned for a full landscape, every slot is wanted and sb is priced for a's shoots;
        // b's own shoot still scores it best.
        let p = priority(serde_json::json!({"matrix": matrix(), "demand": {"a": 4, "b": 3}}));
        let snap = landscape(&[]);
        let got = evaluate(&*p, &shoot("b"), &snap);
        assert_eq!(got[1].1, "0 ms latency, home region: no capacity price");
        assert_eq!(got[1].0, 100.0);
        assert!(got[0].0 < 80.0 && got[2].0 < 80.0, "{got:?}");
        // A shoot of region a sees sb's price.
        let got = evaluate(&*p, &shoot("a"), &snap);
        assert!(got[1].1.contains("ms capacity price"), "{}", got[1].1);
        assert!(got[1].0 < got[0].0, "{got:?}");
    }

    fn profile(priority: &str, args: serde_json::Value) -> Profile {
        let yaml = format!(
            "schedulers:\n  shoot:\n    candidateDeterminationStrategy: Scored\n    priorities:\n    - name: {priority}\n      args: {args}\n"
        );
        let cfg = load_str(&yaml).unwrap();
        Profile::from_config("p", &cfg.config.schedulers.shoot).unwrap()
    }

    #[test]
    fn overflow_leaves_the_near_seed_to_the_region_that_needs_it_where_latency_alone_takes_it() {
        // sa is full; a shoot of region a must go out. By latency alone sb (10 ms) wins, and
        // region b's next shoots would then overflow (10-100 ms); priced, sc (30 ms) wins.
        // 9 of 15 slots planned, 2 placed: up to 4 more of a and 3 of b. sb's price, over the
        // plans for 1/8 .. 8/8 of that: 0, 0, then 20 ms four times (an a shoot on sb moves to
        // sc), then 100 ms twice (b fills sb, a b shoot would go to sc): 35 ms. So sb costs
        // 10 + 35 ms against sc's 30 ms.
        let snap = landscape(&[("a", "sa"), ("a", "sa")]);
        let args = serde_json::json!({"matrix": matrix(), "demand": {"a": 4, "b": 3}, "plannedUtilisation": 0.6});
        let cases = [
            (
                "LatencyDistance",
                serde_json::json!({"matrix": matrix()}),
                "sb",
            ),
            ("CapacityPressure", args, "sc"),
        ];
        for (name, args, want) in cases {
            let d = schedule(&shoot("a"), &snap, &profile(name, args), chrono::Utc::now())
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(d.seed, want, "{name}");
        }
    }

    #[test]
    fn what_every_candidate_displaces_is_not_charged() {
        // Region d has no seed. With far more demand than slots, every plan fills every seed,
        // so each slot d's shoot could take displaces someone (sa and sb 230 ms, sc 213.8 ms):
        // only the excess over the cheapest candidate's price tells the candidates apart, and
        // charged in full it would push every score towards 0, where other priorities decide.
        let m = serde_json::json!({"a": {"b": 10, "c": 30, "d": 20}, "b": {"c": 100, "d": 20}, "c": {"d": 50}});
        let p = priority(
            serde_json::json!({"matrix": m, "demand": {"a": 10, "b": 10, "c": 10}, "plannedUtilisation": 3}),
        );
        let got = evaluate(&*p, &shoot("d"), &landscape(&[]));
        let summary = "45 more shoots expected from 3 regions over 15 free slots";
        assert_eq!(
            got.iter().map(|g| g.1.as_str()).collect::<Vec<_>>(),
            [
                format!(
                    "36.3 ms: 20 ms latency + 16.3 ms capacity price (230 ms, less the 213.8 ms every candidate displaces; {summary})"
                ),
                format!(
                    "36.3 ms: 20 ms latency + 16.3 ms capacity price (230 ms, less the 213.8 ms every candidate displaces; {summary})"
                ),
                format!(
                    "50 ms: 50 ms latency + 0 ms capacity price (213.8 ms, less the 213.8 ms every candidate displaces; {summary})"
                ),
            ]
        );
        assert_eq!(rounded(&got), vec![87.917, 87.917, 83.333]);
    }

    /// Upstream reads `9Ei` as 2^63-1 shoots: seeds publishing that much are summed without
    /// overflowing, and the plan still prices nothing where nothing is full.
    #[test]
    fn seeds_publishing_an_exa_of_shoots_are_planned_without_overflow() {
        let p = priority(serde_json::json!({"matrix": matrix()}));
        let mut snap = landscape(A4_B3);
        for (name, region) in [("sa", "a"), ("sb", "b"), ("sc", "c")] {
            snap.upsert_seed(
                &SeedBuilder::new(name)
                    .region(region)
                    .allocatable("shoots", "9Ei")
                    .build(),
            );
        }
        let got = evaluate(&*p, &shoot("a"), &snap);
        assert_eq!(got.len(), 3, "{got:?}");
        assert!(
            got.iter().all(|(_, detail)| detail.contains("latency")),
            "{got:?}"
        );
    }

    #[test]
    fn with_no_demand_known_yet_only_latency_counts() {
        let p = priority(serde_json::json!({"matrix": matrix()}));
        let got = evaluate(&*p, &shoot("a"), &landscape(&[]));
        assert_eq!(
            got[1].1,
            "10 ms latency, no capacity price (no demand known yet)"
        );
        assert_eq!(rounded(&got), vec![100.0, 96.667, 90.0]);
    }

    #[test]
    fn the_plan_is_solved_once_and_reused_until_the_seeds_or_the_demand_shares_change() {
        let p = CapacityPressure::from_args(&serde_json::json!({"matrix": matrix()}), "p").unwrap();
        let mut snap = landscape(A4_B3);
        let run = |snap: &Snapshot| evaluate(&p, &shoot("a"), snap);
        run(&snap);
        run(&snap);
        assert_eq!(p.plans_solved(), 1, "same snapshot: prices reused");
        let mut ready = SeedBuilder::new("sb")
            .region("b")
            .allocatable("shoots", "3")
            .build();
        ready.metadata.labels = Some([("x".to_string(), "y".to_string())].into());
        snap.upsert_seed(&ready);
        run(&snap);
        assert_eq!(p.plans_solved(), 1, "a seed change that keeps capacity");
        snap.upsert_seed(
            &SeedBuilder::new("sb")
                .region("b")
                .allocatable("shoots", "5")
                .build(),
        );
        run(&snap);
        assert_eq!(p.plans_solved(), 2, "a capacity change re-plans");
        for i in 0..20 {
            snap.upsert_shoot(
                &ShootBuilder::new("garden-x", &format!("more{i}"))
                    .region("b")
                    .seed("sc")
                    .build(),
            );
        }
        run(&snap);
        assert_eq!(p.plans_solved(), 3, "demand moved from a to b");
    }

    #[test]
    fn placements_re_plan_once_they_exceed_the_threshold_share_of_the_slots() {
        // 15 slots, threshold 0.2: more than 3 placements (or deletions) since the plan re-plan.
        let p = CapacityPressure::from_args(
            &serde_json::json!({"matrix": matrix(), "replanThreshold": 0.2}),
            "p",
        )
        .unwrap();
        let mut snap = landscape(A4_B3);
        let place = |snap: &mut Snapshot, name: &str, region: &str| {
            snap.upsert_shoot(
                &ShootBuilder::new("garden-x", name)
                    .region(region)
                    .seed("sc")
                    .build(),
            );
        };
        let run = |snap: &Snapshot| evaluate(&p, &shoot("a"), snap);
        run(&snap);
        place(&mut snap, "n1", "a");
        place(&mut snap, "n2", "b");
        place(&mut snap, "n3", "a");
        run(&snap);
        assert_eq!(p.plans_solved(), 1, "3 placements, shares nearly kept");
        place(&mut snap, "n4", "b");
        run(&snap);
        assert_eq!(p.plans_solved(), 2, "a fourth placement");
        snap.remove_shoot("garden-x/n4");
        run(&snap);
        assert_eq!(p.plans_solved(), 2, "one deletion");
    }

    fn errors(args: serde_json::Value) -> Vec<String> {
        match build(&args, "p.args") {
            Ok(_) => Vec::new(),
            Err(e) => e.iter().map(ToString::to_string).collect(),
        }
    }

    #[test]
    fn bad_args_are_reported_with_their_field_paths() {
        let cases: &[(&str, serde_json::Value, &[&str])] = &[
            (
                "scalars out of range",
                serde_json::json!({"maxLatencyMs": 0, "fallbackFactor": -1, "plannedUtilisation": 0, "replanThreshold": 2}),
                &[
                    "p.args.maxLatencyMs: must be a positive number of at most 1000000, got 0",
                    "p.args.fallbackFactor: must be a number from 0 to 1000, got -1",
                    "p.args.plannedUtilisation: must be a number above 0 and at most 10, got 0",
                    "p.args.replanThreshold: must be a number from 0 to 1, got 2",
                ],
            ),
            (
                "a negative and a non-numeric forecast entry",
                serde_json::json!({"demand": {"eu-west-1": -1, "us-east-1": "many", "ap-south-1": 3}}),
                &[
                    "p.args.demand.eu-west-1: must be a number from 0 to 1000000, got -1",
                    "p.args.demand.us-east-1: must be a number from 0 to 1000000, got \"many\"",
                ],
            ),
            (
                "a forecast without any demand",
                serde_json::json!({"demand": {"eu-west-1": 0}}),
                &["p.args.demand: must give at least one region a positive demand"],
            ),
            (
                "a forecast that is not a mapping",
                serde_json::json!({"demand": [1, 2]}),
                &["p.args.demand: must be a mapping of region to expected demand (a weight)"],
            ),
            (
                "a bad latency matrix entry",
                serde_json::json!({"matrix": {"a": {"b": -5}}}),
                &["p.args.matrix.a.b: latency must not be negative, got -5"],
            ),
            ("defaults", serde_json::Value::Null, &[]),
        ];
        for (name, args, want) in cases {
            assert_eq!(errors(args.clone()), *want, "{name}");
        }
        let got = errors(serde_json::json!({"forecast": {}}));
        assert!(
            got[0].starts_with("p.args.forecast: unknown field"),
            "{got:?}"
        );
    }
}
