//! The page of `explain -o html`: the recorded decision, the decision now with every feasible
//! seed's total side by side (the shoot's own seed marked, and where it ranks), and what every
//! filter says of the shoot's seed and of the nearest seed.

use askama::Template;

use super::Error;
use crate::explain::{Explanation, SeedVerdict};

/// Bars drawn at most; the rest are counted (`-o json` lists every one).
const MAX_BARS: usize = 20;

/// The page of `explain` for one shoot.
#[derive(Template)]
#[template(path = "explanation.html")]
struct ExplanationPage<'a> {
    title: String,
    e: &'a Explanation,
    /// The record's fields as stored, in the record's order.
    record_rows: Vec<(String, String)>,
    /// What to say when there is no record, or why the record shown is untrusted.
    record_note: String,
    /// The feasible seeds' totals, when a seed fits.
    chart: Option<ScoreChart>,
    /// The shoot's own seed (when it would not stay) and the nearest seed, titled.
    seeds: Vec<(&'static str, &'a SeedVerdict)>,
}

/// The feasible seeds now, one bar each, best first.
struct ScoreChart {
    width: usize,
    height: usize,
    label_x: usize,
    bar_x: usize,
    bars: Vec<ScoreBar>,
    /// The total a bar is scaled to: the profile's highest (weights × 100).
    scale: f64,
    /// Where the shoot's own seed stands, one sentence; empty for a pending shoot.
    current: String,
    /// Feasible seeds not drawn.
    more: usize,
}

struct ScoreBar {
    /// `1. aws-eu3`
    label: String,
    total: f64,
    y: usize,
    text_y: usize,
    width: f64,
    value_x: f64,
    fill: &'static str,
}

const CHOSEN: &str = "#2f6fdf";
const OWN: &str = "#b45309";
const OTHER: &str = "#9aa5b8";

impl ScoreChart {
    fn new(e: &Explanation) -> Option<Self> {
        const ROW_HEIGHT: usize = 24;
        const BAR_WIDTH: usize = 380;
        let ranking = &e.now.ranking;
        if ranking.is_empty() {
            return None;
        }
        let own = e.seed.as_deref();
        let mut shown: Vec<usize> = (0..ranking.len().min(MAX_BARS)).collect();
        if let Some(at) = own.and_then(|s| ranking.iter().position(|r| r.seed == s))
            && at >= MAX_BARS
        {
            shown.push(at);
        }
        let top = ranking.iter().map(|r| r.total).fold(0.0, f64::max);
        let scale = e.now.max_total.unwrap_or(top).max(top);
        let longest = shown
            .iter()
            .map(|&i| ranking[i].seed.chars().count() + format!("{}. ", i + 1).len())
            .max()
            .unwrap_or(0);
        let label_width = (longest * 7 + 16).clamp(120, 480);
        let bars = shown
            .iter()
            .enumerate()
            .map(|(row, &i)| {
                let r = &ranking[i];
                let width = if scale > 0.0 {
                    (BAR_WIDTH as f64 * r.total / scale).clamp(2.0, BAR_WIDTH as f64)
                } else {
                    2.0
                };
                ScoreBar {
                    label: format!("{}. {}", i + 1, r.seed),
                    total: r.total,
                    y: row * ROW_HEIGHT + 4,
                    text_y: row * ROW_HEIGHT + 15,
                    width,
                    value_x: label_width as f64 + width + 6.0,
                    fill: match (i, own == Some(r.seed.as_str())) {
                        (0, _) => CHOSEN,
                        (_, true) => OWN,
                        _ => OTHER,
                    },
                }
            })
            .collect();
        Some(ScoreChart {
            width: label_width + BAR_WIDTH + 60,
            height: ROW_HEIGHT * shown.len(),
            label_x: label_width - 8,
            bar_x: label_width,
            bars,
            scale,
            current: current_line(e),
            more: ranking.len() - shown.len(),
        })
    }
}

/// Where the shoot's own seed stands among the feasible seeds now.
fn current_line(e: &Explanation) -> String {
    let (Some(seed), Some(c)) = (&e.seed, &e.current_seed) else {
        return String::new();
    };
    match c.rank {
        Some(1) => format!("Its seed {seed} ranks 1 of {}: chosen now.", e.now.feasible),
        Some(rank) => format!("Its seed {seed} ranks {rank} of {}.", e.now.feasible),
        None => {
            let stages: Vec<&str> = c.rejected_by.iter().map(|r| r.stage).collect();
            format!(
                "Its seed {seed} is not among them: rejected by {}.",
                stages.join(", ")
            )
        }
    }
}

/// The page for `explain -o html`.
pub fn render_explanation(e: &Explanation) -> Result<String, Error> {
    let record_rows = match e.record.as_ref().or(e.untrusted_record.as_ref()) {
        Some(serde_json::Value::Object(m)) => m
            .iter()
            .map(|(k, v)| {
                let v = match v {
                    serde_json::Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                (k.clone(), v)
            })
            .collect(),
        _ => Vec::new(),
    };
    let record_note = e.record_problem.clone().unwrap_or_else(|| {
        "None: the shoot is pending, was bound with decisionRecord: false, or by another scheduler."
            .to_string()
    });
    let mut seeds = Vec::new();
    if let Some(c) = &e.current_seed
        && e.verdict != "same"
    {
        seeds.push(("Its seed now", c));
    }
    if let Some(n) = &e.nearest {
        seeds.push(("Nearest seed", n));
    }
    ExplanationPage {
        title: format!("Explain {}", e.shoot),
        e,
        record_rows,
        record_note,
        chart: ScoreChart::new(e),
        seeds,
    }
    .render()
}

#[cfg(test)]
mod tests {
    use chrono::Utc;

    use super::*;
    use crate::fixtures::{CloudProfileBuilder, SeedBuilder, ShootBuilder};
    use crate::profile::Profile;
    use crate::regions::Regions;
    use crate::simulate::Landscape;

    /// Seeds `s00`..`s{n-1}` (`s00` holding the fewest shoots), a shoot bound to `own` and `extra`
    /// seeds, explained.
    fn explained(n: usize, own: &str, extra: &[&str]) -> Explanation {
        let mut l = Landscape::default();
        l.cloud_profiles
            .push(CloudProfileBuilder::new("aws").build());
        let names: Vec<String> = (0..n).map(|i| format!("s{i:02}")).collect();
        for name in names
            .iter()
            .map(String::as_str)
            .chain(extra.iter().copied())
        {
            l.seeds.push(SeedBuilder::new(name).build());
        }
        // s{i} holds i shoots: ShootCount ranks them in name order.
        for (i, name) in names.iter().enumerate() {
            for j in 0..i {
                l.shoots.push(
                    ShootBuilder::new("garden-x", &format!("{name}-{j}"))
                        .seed(name)
                        .build(),
                );
            }
        }
        for (i, name) in extra.iter().enumerate() {
            for j in 0..n + i {
                l.shoots.push(
                    ShootBuilder::new("garden-y", &format!("e{i}-{j}"))
                        .seed(name)
                        .build(),
                );
            }
        }
        l.shoots
            .push(ShootBuilder::new("garden-dev", "web").seed(own).build());
        crate::explain::explain(
            &l,
            "garden-dev/web",
            &Profile::upstream_default(),
            &Regions::builtin(),
            Utc::now(),
        )
        .unwrap()
    }

    #[test]
    fn the_feasible_seeds_are_drawn_side_by_side_and_the_own_seed_ranked() {
        let e = explained(3, "s01", &[]);
        let page = render_explanation(&e).unwrap();
        assert!(page.contains("<h2>Feasible seeds now (3)</h2>"), "{page}");
        assert!(page.contains("Its seed s01 ranks 2 of 3."), "{page}");
        let labels: Vec<&str> = page
            .split("text-anchor=\"end\" font-size=\"12\" fill=\"#1d2330\">")
            .skip(1)
            .map(|s| s.split('<').next().unwrap())
            .collect();
        assert_eq!(labels, ["1. s00", "2. s01", "3. s02"], "{page}");
        // The chosen seed and the own seed in their colours.
        assert!(page.contains(&format!("fill=\"{CHOSEN}\"")), "{page}");
        assert!(page.contains(&format!("fill=\"{OWN}\"")), "{page}");
    }

    #[test]
    fn past_twenty_seeds_the_own_seed_is_still_drawn_and_the_rest_counted() {
        let e = explained(30, "s27", &[]);
        let chart = ScoreChart::new(&e).unwrap();
        assert_eq!(chart.bars.len(), MAX_BARS + 1);
        assert_eq!(chart.bars.last().unwrap().label, "28. s27");
        assert_eq!(chart.bars.last().unwrap().fill, OWN);
        assert_eq!(chart.more, 9);
        let page = render_explanation(&e).unwrap();
        assert!(page.contains("and 9 more feasible seed(s)"), "{page}");
    }

    #[test]
    fn seed_names_in_the_chart_are_escaped() {
        // Names the API server refuses; the page escapes whatever it is given.
        let e = explained(1, "s00", &["<script>alert(1)</script>", "a\u{202e}b"]);
        let page = render_explanation(&e).unwrap();
        assert!(!page.contains("<script>alert"), "{page}");
        assert!(
            page.contains("&#60;script&#62;alert(1)&#60;/script&#62;"),
            "{page}"
        );
        assert!(
            !page.contains('\u{202e}') && page.contains("a\\u{202e}b"),
            "{page}"
        );
    }
}
