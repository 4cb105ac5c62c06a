//! The pages of `simulate -o html`: one simulation, and a comparison of two (`--compare`,
//! `--replay`).

use askama::Template;

use super::{BlockedSection, Card, Error, SeedGroup, seed_groups, timestamp};
use crate::plan::{Blocked, SeedLoad};
use crate::simulate::{Comparison, Placement, Summary};

/// One placed shoot: where it goes and why.
struct Placed {
    shoot: String,
    seed: String,
    reason: String,
    /// Every seed for this shoot (the `simulate --explain` view).
    explanation: String,
}

/// The page for `simulate -o html`.
#[derive(Template)]
#[template(path = "simulation.html")]
struct SimulationPage<'a> {
    title: &'a str,
    profile: &'a str,
    now: String,
    /// What was decided, for the meta line.
    decided: &'a str,
    cards: Vec<Card>,
    seeds: Vec<SeedGroup<'a>>,
    placements: Vec<Placed>,
    unschedulable: BlockedSection<'a>,
}

/// The page for `simulate -o html`: where each pending shoot goes and why, the seeds' load
/// before and after the simulated placements, and the unschedulable shoots.
pub fn render_simulation(
    landscape: &crate::simulate::Landscape,
    sim: &crate::simulate::Simulation,
    profile: &crate::profile::Profile,
    now: chrono::DateTime<chrono::Utc>,
    replayed_from: Option<&crate::snapshot::Snapshot>,
) -> Result<String, Error> {
    // Replay: "before" is the landscape as it was bound, before its shoots were made pending.
    let own;
    let before = match replayed_from {
        Some(s) => s,
        None => {
            own = crate::simulate::snapshot_of(landscape);
            &own
        }
    };
    let loads: Vec<SeedLoad> = crate::plan::seed_loads(before, &sim.snapshot, &Default::default());
    let (title, decided, decided_label) = if replayed_from.is_some() {
        (
            "Landscape after replay",
            "every shoot this configuration schedules decided again",
            "shoots replayed",
        )
    } else {
        (
            "Simulated placement of the pending shoots",
            "pending shoots decided",
            "pending shoots",
        )
    };
    let placements: Vec<Placed> = sim
        .outcomes
        .iter()
        .filter_map(|o| {
            let d = o.result.as_ref().ok()?;
            Some(Placed {
                shoot: o.shoot.clone(),
                seed: d.seed.clone(),
                reason: crate::plan::reason_line(d, &d.seed, &[]),
                explanation: crate::simulate::render_explain_with_defaults(
                    &o.shoot,
                    &o.result,
                    &landscape.default_notes(&o.shoot),
                ),
            })
        })
        .collect();
    let unschedulable: Vec<Blocked> = sim
        .outcomes
        .iter()
        .filter_map(|o| {
            let e = o.result.as_ref().err()?;
            Some(Blocked {
                shoot: o.shoot.clone(),
                from: "-".into(),
                category: crate::plan::category_of(profile, e),
                reason: e.to_string(),
            })
        })
        .collect();
    let placed = placements.len();
    SimulationPage {
        title,
        profile: &profile.name,
        now: timestamp(now),
        decided,
        cards: vec![
            Card::new(sim.outcomes.len(), decided_label),
            Card::new(placed, "placed"),
            Card::new(sim.outcomes.len() - placed, "unschedulable"),
        ],
        seeds: seed_groups(&loads),
        placements,
        unschedulable: BlockedSection::new(
            "Unschedulable",
            "Every pending shoot can be placed.",
            "Seed",
            &unschedulable,
        ),
    }
    .render()
}

/// One configuration's summary as (label, value) rows. The figures are rounded already: they
/// print as the table output prints them.
fn summary_rows(s: &Summary) -> [(&'static str, String); 7] {
    let u = s.utilisation.as_ref();
    [
        ("placed / decided", format!("{} / {}", s.placed, s.decided)),
        ("unschedulable", s.unschedulable.to_string()),
        (
            "latency mean / p95 (ms)",
            match &s.latency {
                Some(l) => format!("{} / {} ({} placements)", l.mean_ms, l.p95_ms, l.shoots),
                None => "- (no LatencyDistance priority, or nothing placed)".into(),
            },
        ),
        (
            "utilisation min / max",
            u.map_or("- (no seed states allocatable shoots)".into(), |u| {
                format!("{}% / {}%", u.min, u.max)
            }),
        ),
        (
            "utilisation mean",
            u.map_or("-".into(), |u| format!("{}%", u.mean)),
        ),
        (
            "utilisation spread (stddev)",
            u.map_or("-".into(), |u| {
                format!("{} pp ({} seeds)", u.stddev, u.seeds)
            }),
        ),
        ("regions with shoots", s.shoots_per_region.len().to_string()),
    ]
}

/// Shoots per region under both configurations.
struct RegionRow<'a> {
    region: &'a str,
    old: u64,
    new: u64,
}

impl RegionRow<'_> {
    fn change(&self) -> i64 {
        self.new as i64 - self.old as i64
    }
}

/// The page for `simulate --compare -o html`.
#[derive(Template)]
#[template(path = "comparison.html")]
struct ComparisonPage<'a> {
    title: &'a str,
    old_profile: &'a str,
    new_profile: &'a str,
    now: String,
    /// Which shoots were decided, for the meta line.
    scope: &'a str,
    cards: Vec<Card>,
    c: &'a Comparison,
    /// (label, old, new)
    summary: Vec<(&'static str, String, String)>,
    regions: Vec<RegionRow<'a>>,
}

/// The page for `simulate --compare -o html`: the shoots the two configurations place apart
/// (old → new, each with its explanation), then each configuration's summary side by side.
pub fn render_comparison(
    c: &Comparison,
    old_profile: &str,
    new_profile: &str,
    now: chrono::DateTime<chrono::Utc>,
    replay: bool,
) -> Result<String, Error> {
    let scope = if replay {
        "every shoot decided again (replay) under each configuration"
    } else {
        "the pending shoots decided under each configuration"
    };
    let summary = summary_rows(&c.old)
        .into_iter()
        .zip(summary_rows(&c.new))
        .map(|((label, old), (_, new))| (label, old, new))
        .collect();
    let mut regions: Vec<&String> = c
        .old
        .shoots_per_region
        .keys()
        .chain(c.new.shoots_per_region.keys())
        .collect();
    regions.sort();
    regions.dedup();
    let regions = regions
        .into_iter()
        .map(|r| RegionRow {
            region: r,
            old: c.old.shoots_per_region.get(r).copied().unwrap_or(0),
            new: c.new.shoots_per_region.get(r).copied().unwrap_or(0),
        })
        .collect();
    ComparisonPage {
        title: "Configuration comparison: old → new",
        old_profile,
        new_profile,
        now: timestamp(now),
        scope,
        cards: vec![
            Card::new(c.differences.len(), "shoots placed differently"),
            Card::new(c.new.decided, "shoots decided (new)"),
            Card::new(
                format!("{} → {}", c.old.placed, c.new.placed),
                "placed (old → new)",
            ),
            Card::new(
                format!("{} → {}", c.old.unschedulable, c.new.unschedulable),
                "unschedulable (old → new)",
            ),
        ],
        c,
        summary,
        regions,
    }
    .render()
}
