//! `-o html`: one self-contained page (inline CSS and SVG, no external assets) that reads on a
//! laptop screen and prints: summary figures, seeds grouped by provider and region with their
//! load before and after, every move with its explanation, and the shoots that cannot move with
//! a histogram of their reasons.
//!
//! The markup lives in askama templates beside this file (`layout.html` the page frame,
//! `parts.html` the sections every report shares, one template per page), checked when the crate
//! compiles. Askama escapes every value it writes into an `.html` template: a name or a message
//! cannot add markup, whichever field it comes from. The Rust side only shapes the data (groups,
//! bar widths, counts). This file holds the shared parts and the drain/rebalance plan page;
//! `simulation.rs` holds the pages of `simulate -o html` (one run, `--compare`, `--replay`),
//! `explanation.rs` the page of `explain -o html`.

mod explanation;
mod simulation;

use std::collections::BTreeMap;

use askama::Template;
use chrono::{DateTime, SecondsFormat, Utc};

use crate::plan::output::{fmt_num, title};
use crate::plan::{Blocked, Move, Plan, SeedLoad, Timing};

pub use explanation::render_explanation;
pub use simulation::{render_comparison, render_simulation};

/// A report could not be written (a value failed to format).
pub type Error = askama::Error;

/// The escaper of every `.html` template (`askama.toml`): askama's HTML escaping, after the
/// control, bidi and zero-width characters that a region or a taint key gardener-apiserver
/// stores may hold are written as `\u{…}` (line breaks and tabs stay), as in every other output.
#[derive(Clone, Copy, Debug, Default)]
pub struct Visible;

impl askama::filters::Escaper for Visible {
    fn write_escaped_str<W: std::fmt::Write>(&self, dest: W, string: &str) -> std::fmt::Result {
        askama::filters::Html.write_escaped_str(dest, &crate::escape::text(string))
    }
}

/// One summary figure: the number, then what it counts.
pub(super) struct Card {
    pub(super) n: String,
    pub(super) l: String,
}

impl Card {
    pub(super) fn new(n: impl ToString, l: impl ToString) -> Self {
        Card {
            n: n.to_string(),
            l: l.to_string(),
        }
    }
}

/// The seeds of one provider, by region, in the `Seeds` section.
pub(super) struct SeedGroup<'a> {
    pub(super) provider: &'a str,
    pub(super) rows: Vec<SeedRow<'a>>,
}

pub(super) struct SeedRow<'a> {
    pub(super) seed: &'a SeedLoad,
    /// The region is named on its first row only.
    pub(super) first_of_region: bool,
    pub(super) bar: Bars,
    pub(super) delta: i64,
}

/// Two bars: before (grey) and after (blue), scaled to the capacity or to the busiest seed.
pub(super) struct Bars {
    pub(super) full: f64,
    pub(super) before: f64,
    pub(super) after: f64,
}

impl Bars {
    const WIDTH: f64 = 260.0;

    fn of(s: &SeedLoad, scale: u64) -> Self {
        let full = s.capacity.unwrap_or(scale).max(1) as f64;
        let w =
            |v: u64| (Self::WIDTH * (v as f64 / full).min(1.0)).max(if v > 0 { 1.5 } else { 0.0 });
        Bars {
            full: Self::WIDTH,
            before: w(s.before),
            after: w(s.after),
        }
    }
}

/// The seeds grouped by provider, then region (both in name order).
pub(super) fn seed_groups(seeds: &[SeedLoad]) -> Vec<SeedGroup<'_>> {
    let scale = seeds
        .iter()
        .map(|s| s.before.max(s.after))
        .max()
        .unwrap_or(1);
    let mut grouped: BTreeMap<&str, BTreeMap<&str, Vec<&SeedLoad>>> = BTreeMap::new();
    for s in seeds {
        grouped
            .entry(&s.provider)
            .or_default()
            .entry(&s.region)
            .or_default()
            .push(s);
    }
    grouped
        .into_iter()
        .map(|(provider, regions)| SeedGroup {
            provider,
            rows: regions
                .into_values()
                .flat_map(|list| {
                    list.into_iter().enumerate().map(|(n, seed)| SeedRow {
                        seed,
                        first_of_region: n == 0,
                        bar: Bars::of(seed, scale),
                        delta: seed.after as i64 - seed.before as i64,
                    })
                })
                .collect(),
        })
        .collect()
}

/// The shoots that stay where they are (or pending), with a histogram of their categories.
pub(super) struct BlockedSection<'a> {
    pub(super) heading: &'a str,
    /// What the section says when no shoot is blocked.
    pub(super) empty: &'a str,
    /// The heading of the seed column.
    pub(super) seed_column: &'a str,
    pub(super) list: &'a [Blocked],
    pub(super) histogram: Histogram<'a>,
}

/// Bars of the categories, most frequent first.
pub(super) struct Histogram<'a> {
    pub(super) width: usize,
    pub(super) height: usize,
    /// Where the labels end and the bars begin.
    pub(super) label_x: usize,
    pub(super) bar_x: usize,
    pub(super) bars: Vec<HistogramBar<'a>>,
}

pub(super) struct HistogramBar<'a> {
    pub(super) label: &'a str,
    pub(super) count: usize,
    pub(super) y: usize,
    pub(super) text_y: usize,
    pub(super) width: f64,
    pub(super) count_x: f64,
}

impl<'a> BlockedSection<'a> {
    pub(super) fn new(
        heading: &'a str,
        empty: &'a str,
        seed_column: &'a str,
        list: &'a [Blocked],
    ) -> Self {
        const ROW_HEIGHT: usize = 24;
        const LABEL_WIDTH: usize = 420;
        const BAR_WIDTH: usize = 380;
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for b in list {
            *counts.entry(&b.category).or_default() += 1;
        }
        let mut counts: Vec<(&str, usize)> = counts.into_iter().collect();
        counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        let max = counts.first().map_or(1, |c| c.1).max(1);
        let bars = counts
            .iter()
            .enumerate()
            .map(|(n, &(label, count))| {
                let width = (BAR_WIDTH as f64 * count as f64 / max as f64).max(2.0);
                HistogramBar {
                    label,
                    count,
                    y: n * ROW_HEIGHT + 4,
                    text_y: n * ROW_HEIGHT + 15,
                    width,
                    count_x: LABEL_WIDTH as f64 + width + 6.0,
                }
            })
            .collect();
        BlockedSection {
            heading,
            empty,
            seed_column,
            list,
            histogram: Histogram {
                width: LABEL_WIDTH + BAR_WIDTH + 40,
                height: ROW_HEIGHT * counts.len(),
                label_x: LABEL_WIDTH - 8,
                bar_x: LABEL_WIDTH,
                bars,
            },
        }
    }
}

/// `now` as the reports print it.
pub(super) fn timestamp(now: DateTime<Utc>) -> String {
    now.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// A page that says only `message`.
#[derive(Template)]
#[template(path = "message.html")]
struct MessagePage<'a> {
    title: &'a str,
    message: &'a str,
}

/// A page that says only `message`: what `-o html` writes when there is no report to show
/// (scheduling deferred by the profile chain), so that `> report.html` is still HTML.
pub fn render_message(title: &str, message: &str) -> Result<String, Error> {
    MessagePage { title, message }.render()
}

/// The page of a drain or rebalance plan.
#[derive(Template)]
#[template(path = "plan.html")]
struct PlanPage<'a> {
    title: String,
    now: String,
    plan: &'a Plan,
    cards: Vec<Card>,
    seeds: Vec<SeedGroup<'a>>,
    /// By start time.
    moves: Vec<&'a Move>,
    blocked: BlockedSection<'a>,
}

/// The page for `plan`.
pub fn render(plan: &Plan) -> Result<String, Error> {
    PlanPage {
        title: title(plan),
        now: timestamp(plan.now),
        plan,
        cards: cards(plan),
        seeds: seed_groups(&plan.seeds),
        moves: crate::plan::by_start(&plan.moves),
        blocked: BlockedSection::new(
            "Cannot move",
            "Every shoot in scope can move.",
            "On seed",
            &plan.blocked,
        ),
    }
    .render()
}

fn cards(plan: &Plan) -> Vec<Card> {
    let mut cards = vec![
        Card::new(plan.scheduled(), "moves scheduled"),
        Card::new(plan.deferred(), "moves deferred (no slot in the horizon)"),
        Card::new(plan.blocked.len(), "shoots that cannot move"),
        Card::new(
            plan.live(),
            if plan.stamp.live_migration {
                "moves live (the control plane keeps serving)"
            } else {
                "moves live (--live-migration not given)"
            },
        ),
    ];
    for f in &plan.figures {
        cards.push(Card::new(
            format!("{} → {}", fmt_num(f.before), fmt_num(f.after)),
            format!("{} ({})", f.name, f.unit),
        ));
    }
    cards
}

#[cfg(test)]
mod tests {
    use askama::filters::Escaper;

    /// A region gardener-apiserver stores may steer a terminal or display as another name: the
    /// reports show such characters visibly, and line breaks of explanations stay.
    #[test]
    fn a_region_with_a_bidi_override_or_an_escape_sequence_shows_them_visibly() {
        let mut out = String::new();
        super::Visible
            .write_escaped_str(&mut out, "eu-wést-1\u{202e}<\u{1b}]0;x\u{7}\nnext")
            .unwrap();
        assert_eq!(out, "eu-wést-1\\u{202e}&#60;\\u{1b}]0;x\\u{7}\nnext");
    }
}
