//! `-o html`: one self-contained page (inline CSS and SVG, no external assets) that reads on a
//! laptop screen and prints: summary figures, seeds grouped by provider and region with their
//! load before and after, every move with its explanation, and the shoots that cannot move with
//! a histogram of their reasons.
//!
//! This file holds the page frame shared by every report and the drain/rebalance plan page;
//! `simulation.rs` renders the pages of `simulate -o html` (one run, `--compare`, `--replay`).

mod simulation;

use std::collections::BTreeMap;
use std::fmt::Write;

use chrono::SecondsFormat;

use super::output::{fmt_num, title};
use super::{Blocked, Plan, SeedLoad, Timing};

pub use simulation::{render_comparison, render_simulation};

/// Escapes text for HTML element content and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = r#"
:root{--fg:#1d2330;--muted:#5b6475;--line:#d9dee7;--bg:#f6f7fa;--before:#9aa5b8;--after:#2f6fdf;--warn:#b45309;--bad:#b42318;--ok:#15803d}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;color:var(--fg);background:#fff}
main{max-width:1280px;margin:0 auto;padding:24px 32px 48px}
h1{font-size:22px;margin:0 0 4px}
h2{font-size:17px;margin:32px 0 10px;padding-bottom:4px;border-bottom:1px solid var(--line)}
h3{font-size:15px;margin:18px 0 6px}
h4{font-size:13px;margin:10px 0 4px;color:var(--muted);font-weight:600}
.meta{color:var(--muted);margin:0}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(180px,1fr));gap:12px;margin-top:18px}
.card{background:var(--bg);border:1px solid var(--line);border-radius:8px;padding:10px 14px}
.card .n{font-size:22px;font-weight:650}
.card .l{color:var(--muted);font-size:12px}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:5px 8px;border-bottom:1px solid var(--line);vertical-align:top}
th{font-size:12px;color:var(--muted);font-weight:600;background:var(--bg)}
td.num{white-space:nowrap;font-variant-numeric:tabular-nums}
.seed{white-space:nowrap;font-weight:600}
.badge{display:inline-block;font-size:11px;padding:0 6px;border-radius:9px;margin-left:6px;font-weight:600}
.drained{background:#fde2e1;color:var(--bad)}
.unusable{background:#eceef2;color:var(--muted)}
.deferred{background:#fdf0d5;color:var(--warn)}
.warn{color:var(--warn);font-size:12px}
.legend{color:var(--muted);font-size:12px}
.legend i{display:inline-block;width:10px;height:10px;margin:0 4px 0 10px;vertical-align:-1px}
details{margin-top:4px}
summary{cursor:pointer;color:var(--after);font-size:12px}
pre{white-space:pre-wrap;font:12px/1.35 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:var(--bg);border:1px solid var(--line);border-radius:6px;padding:8px;margin:6px 0 0;max-height:360px;overflow:auto}
.arrow{color:var(--muted)}
.empty{color:var(--muted);font-style:italic}
@media print{main{max-width:none;padding:0}h2{break-after:avoid}tr,.card{break-inside:avoid}pre{max-height:none;overflow:visible}summary{display:none}}
"#;

pub(super) fn head(h: &mut String, title: &str, meta: &str) {
    let t = escape(title);
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <title>{t}</title><style>{STYLE}</style></head><body><main>\n<h1>{t}</h1>\n\
         <p class=\"meta\">{meta}</p>\n"
    );
}

pub(super) fn foot(h: &mut String) {
    h.push_str(
        "<script>window.addEventListener('beforeprint',function(){\
         document.querySelectorAll('details').forEach(function(d){d.open=true;});});</script>\n\
         </main></body></html>\n",
    );
}

pub(super) fn card_row(h: &mut String, cards: &[(String, String)]) {
    h.push_str("<section class=\"cards\">");
    for (n, l) in cards {
        let _ = write!(
            h,
            "<div class=\"card\"><div class=\"n\">{}</div><div class=\"l\">{}</div></div>",
            escape(n),
            escape(l)
        );
    }
    h.push_str("</section>\n");
}

/// A page that says only `message` (escaped): what `-o html` writes when there is no report to
/// show (scheduling deferred by the profile chain), so that `> report.html` is still HTML.
pub fn render_message(title: &str, message: &str) -> String {
    let mut h = String::new();
    head(&mut h, title, "");
    h.push_str(&format!("<section><p>{}</p></section>\n", escape(message)));
    foot(&mut h);
    h
}

/// The page for `plan`.
pub fn render(plan: &Plan) -> String {
    let mut h = String::new();
    let meta = format!(
        "Profile <b>{}</b> · evaluated at {} · moves start inside each shoot's maintenance \
         window, at most {} at a time per seed, {} min each, within {} h. Nothing has been applied.",
        escape(&plan.profile),
        plan.now.to_rfc3339_opts(SecondsFormat::Secs, true),
        plan.windows.max_concurrent,
        plan.windows.move_duration_seconds / 60,
        plan.windows.horizon_seconds / 3600
    );
    head(&mut h, &title(plan), &meta);
    cards(&mut h, plan);
    seeds(&mut h, &plan.seeds);
    moves(&mut h, plan);
    blocked(
        &mut h,
        "Cannot move",
        "Every shoot in scope can move.",
        "On seed",
        &plan.blocked,
    );
    foot(&mut h);
    h
}

fn cards(h: &mut String, plan: &Plan) {
    let mut cards = vec![
        (plan.scheduled().to_string(), "moves scheduled".to_string()),
        (
            plan.deferred().to_string(),
            "moves deferred (no slot in the horizon)".to_string(),
        ),
        (
            plan.blocked.len().to_string(),
            "shoots that cannot move".to_string(),
        ),
        (
            plan.live().to_string(),
            if plan.stamp.live_migration {
                "moves live (the control plane keeps serving)".to_string()
            } else {
                "moves live (--live-migration not given)".to_string()
            },
        ),
    ];
    for f in &plan.figures {
        cards.push((
            format!("{} → {}", fmt_num(f.before), fmt_num(f.after)),
            format!("{} ({})", f.name, f.unit),
        ));
    }
    card_row(h, &cards);
}

/// Two bars: before (grey) and after (blue), scaled to the capacity or to `scale`.
fn bars(s: &SeedLoad, scale: u64) -> String {
    const W: f64 = 260.0;
    let full = s.capacity.unwrap_or(scale).max(1) as f64;
    let w = |v: u64| (W * (v as f64 / full).min(1.0)).max(if v > 0 { 1.5 } else { 0.0 });
    format!(
        "<svg width=\"{W}\" height=\"22\" viewBox=\"0 0 {W} 22\" role=\"img\" \
         aria-label=\"{} shoots before, {} after\">\
         <rect x=\"0\" y=\"1\" width=\"{W}\" height=\"8\" fill=\"#eef0f4\"/>\
         <rect x=\"0\" y=\"1\" width=\"{:.1}\" height=\"8\" fill=\"#9aa5b8\"/>\
         <rect x=\"0\" y=\"12\" width=\"{W}\" height=\"8\" fill=\"#eef0f4\"/>\
         <rect x=\"0\" y=\"12\" width=\"{:.1}\" height=\"8\" fill=\"#2f6fdf\"/></svg>",
        s.before,
        s.after,
        w(s.before),
        w(s.after)
    )
}

pub(super) fn seeds(h: &mut String, seeds: &[SeedLoad]) {
    h.push_str(
        "<h2>Seeds</h2><p class=\"legend\">Shoots per seed<i style=\"background:#9aa5b8\"></i>before\
         <i style=\"background:#2f6fdf\"></i>after; bars are scaled to status.allocatable.shoots \
         (or to the busiest seed when a seed publishes none).</p>\n",
    );
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
    for (provider, regions) in grouped {
        let _ = writeln!(h, "<h3>{}</h3>", escape(provider));
        h.push_str(
            "<table><thead><tr><th style=\"width:18%\">Region</th><th style=\"width:22%\">Seed</th>\
             <th style=\"width:290px\">Load</th><th>Before → after</th></tr></thead><tbody>\n",
        );
        for (region, list) in regions {
            for (n, s) in list.iter().enumerate() {
                let region_cell = if n == 0 {
                    escape(region)
                } else {
                    String::new()
                };
                let mut badges = String::new();
                if s.drained {
                    badges.push_str("<span class=\"badge drained\">drained</span>");
                }
                if let Some(u) = &s.unusable {
                    let _ = write!(
                        badges,
                        "<span class=\"badge unusable\" title=\"{}\">takes no shoots</span>",
                        escape(u)
                    );
                }
                let cap = s
                    .capacity
                    .map_or_else(|| "no allocatable".to_string(), |c| format!("of {c}"));
                let delta = s.after as i64 - s.before as i64;
                let delta = if delta == 0 {
                    String::new()
                } else {
                    format!(" ({delta:+})")
                };
                let _ = writeln!(
                    h,
                    "<tr><td>{region_cell}</td><td class=\"seed\">{}{badges}</td><td>{}</td>\
                     <td class=\"num\">{} → <b>{}</b>{delta} {cap}</td></tr>",
                    escape(&s.name),
                    bars(s, scale),
                    s.before,
                    s.after
                );
            }
        }
        h.push_str("</tbody></table>\n");
    }
}

fn moves(h: &mut String, plan: &Plan) {
    let _ = writeln!(h, "<h2>Moves ({})</h2>", plan.moves.len());
    if plan.moves.is_empty() {
        h.push_str("<p class=\"empty\">No move improves the plan's goal.</p>\n");
        return;
    }
    h.push_str(
        "<table><thead><tr><th>Start (UTC)</th><th>Shoot</th><th>From → to</th><th>Why</th>\
         </tr></thead><tbody>\n",
    );
    for m in super::by_start(&plan.moves) {
        let start = match &m.timing {
            Timing::At { start, window, .. } => format!(
                "{}<br><span class=\"legend\">window {}</span>",
                start.format("%Y-%m-%d %H:%M"),
                escape(window)
            ),
            Timing::Deferred { window, reason } => format!(
                "<span class=\"badge deferred\" title=\"{}\">deferred</span><br>\
                 <span class=\"legend\">window {}</span>",
                escape(reason),
                escape(window)
            ),
            Timing::Unscheduled => "-".into(),
        };
        let mut why = escape(&m.reason);
        if let Timing::Deferred { reason, .. } = &m.timing {
            let _ = write!(
                why,
                "<div class=\"warn\">deferred: {}</div>",
                escape(reason)
            );
        }
        for w in &m.warnings {
            let _ = write!(why, "<div class=\"warn\">⚠ {}</div>", escape(w));
        }
        if m.migration.is_live() {
            why.push_str("<div><span class=\"badge\">live</span></div>");
        } else {
            let _ = write!(
                why,
                "<div class=\"legend\">classic: {}</div>",
                escape(&m.migration.not_live.join("; "))
            );
        }
        let _ = writeln!(
            h,
            "<tr><td class=\"num\">{start}</td><td class=\"seed\">{}</td>\
             <td class=\"num\">{} <span class=\"arrow\">→</span> <b>{}</b></td><td>{why}\
             <details><summary>explanation: every seed for this shoot</summary><pre>{}</pre>\
             </details></td></tr>",
            escape(&m.shoot),
            escape(&m.from),
            escape(&m.to),
            escape(&m.explanation)
        );
    }
    h.push_str("</tbody></table>\n");
}

/// Shoots that stay where they are (or pending), with a histogram of their categories.
pub(super) fn blocked(
    h: &mut String,
    heading: &str,
    empty: &str,
    seed_column: &str,
    list: &[Blocked],
) {
    let _ = writeln!(h, "<h2>{} ({})</h2>", escape(heading), list.len());
    if list.is_empty() {
        let _ = writeln!(h, "<p class=\"empty\">{}</p>", escape(empty));
        return;
    }
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for b in list {
        *counts.entry(&b.category).or_default() += 1;
    }
    let mut counts: Vec<(&str, usize)> = counts.into_iter().collect();
    counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let max = counts.first().map_or(1, |c| c.1).max(1);
    let row_h = 24;
    let (label_w, bar_w) = (420, 380);
    let _ = write!(
        h,
        "<h3>Reasons</h3><svg width=\"{}\" height=\"{}\" role=\"img\" aria-label=\"reason histogram\" \
         style=\"max-width:100%\">",
        label_w + bar_w + 40,
        row_h * counts.len()
    );
    for (n, (label, count)) in counts.iter().enumerate() {
        let y = n * row_h;
        let w = (bar_w as f64 * *count as f64 / max as f64).max(2.0);
        let _ = write!(
            h,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" font-size=\"12\" fill=\"#1d2330\">{}</text>\
             <rect x=\"{}\" y=\"{}\" width=\"{w:.1}\" height=\"14\" fill=\"#b42318\" rx=\"2\"/>\
             <text x=\"{}\" y=\"{}\" font-size=\"12\" fill=\"#1d2330\">{count}</text>",
            label_w - 8,
            y + 15,
            escape(label),
            label_w,
            y + 4,
            label_w as f64 + w + 6.0,
            y + 15
        );
    }
    h.push_str("</svg>\n");
    h.push_str(&format!(
        "<table><thead><tr><th>Shoot</th><th>{}</th><th>Reason</th></tr></thead><tbody>\n",
        escape(seed_column)
    ));
    for b in list {
        let _ = writeln!(
            h,
            "<tr><td class=\"seed\">{}</td><td class=\"seed\">{}</td><td>{}</td></tr>",
            escape(&b.shoot),
            escape(&b.from),
            escape(&b.reason)
        );
    }
    h.push_str("</tbody></table>\n");
}

#[cfg(test)]
mod tests {
    #[test]
    fn escapes_markup() {
        assert_eq!(
            super::escape("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }
}
