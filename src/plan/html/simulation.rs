//! The pages of `simulate -o html`: one simulation, and a comparison of two (`--compare`,
//! `--replay`).

use std::fmt::Write;

use chrono::SecondsFormat;

use super::{blocked, card_row, escape, foot, head, seeds};
use crate::plan::Blocked;

/// The page for `simulate -o html`: where each pending shoot goes and why, the seeds' load
/// before and after the simulated placements, and the unschedulable shoots.
pub fn render_simulation(
    landscape: &crate::simulate::Landscape,
    sim: &crate::simulate::Simulation,
    profile: &crate::profile::Profile,
    now: chrono::DateTime<chrono::Utc>,
    replayed_from: Option<&crate::snapshot::Snapshot>,
) -> String {
    use crate::schedule::FitError;
    let replay = replayed_from.is_some();
    // Replay: "before" is the landscape as it was bound, before its shoots were made pending.
    let own;
    let before = match replayed_from {
        Some(s) => s,
        None => {
            own = crate::simulate::snapshot_of(landscape);
            &own
        }
    };
    let loads = crate::plan::seed_loads(before, &sim.snapshot, &Default::default());
    let placed = sim.outcomes.iter().filter(|o| o.result.is_ok()).count();
    let mut h = String::new();
    let (title, decided, decided_label) = if replay {
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
    let meta = format!(
        "Profile <b>{}</b> · evaluated at {} · {decided} in creation order, each placement \
         counted for the next. Nothing has been applied.",
        escape(&profile.name),
        now.to_rfc3339_opts(SecondsFormat::Secs, true)
    );
    head(&mut h, title, &meta);
    card_row(
        &mut h,
        &[
            (sim.outcomes.len().to_string(), decided_label.into()),
            (placed.to_string(), "placed".into()),
            (
                (sim.outcomes.len() - placed).to_string(),
                "unschedulable".into(),
            ),
        ],
    );
    seeds(&mut h, &loads);
    let _ = writeln!(h, "<h2>Placements ({placed})</h2>");
    if placed == 0 {
        h.push_str("<p class=\"empty\">No pending shoot can be placed.</p>\n");
    } else {
        h.push_str(
            "<table><thead><tr><th>Shoot</th><th>Seed</th><th>Why</th></tr></thead><tbody>\n",
        );
        for o in &sim.outcomes {
            let Ok(d) = &o.result else { continue };
            let _ = writeln!(
                h,
                "<tr><td class=\"seed\">{}</td><td class=\"seed\">{}</td><td>{}\
                 <details><summary>explanation: every seed for this shoot</summary><pre>{}</pre>\
                 </details></td></tr>",
                escape(&o.shoot),
                escape(&d.seed),
                escape(&crate::plan::reason_line(d, &d.seed, &[])),
                escape(&crate::simulate::render_explain_with_defaults(
                    &o.shoot,
                    &o.result,
                    &landscape.default_notes(&o.shoot)
                ))
            );
        }
        h.push_str("</tbody></table>\n");
    }
    let unschedulable: Vec<Blocked> = sim
        .outcomes
        .iter()
        .filter_map(|o| {
            let e: &FitError = o.result.as_ref().err()?;
            Some(Blocked {
                shoot: o.shoot.clone(),
                from: "-".into(),
                category: crate::plan::category_of(profile, e),
                reason: e.to_string(),
            })
        })
        .collect();
    blocked(
        &mut h,
        "Unschedulable",
        "Every pending shoot can be placed.",
        "Seed",
        &unschedulable,
    );
    foot(&mut h);
    h
}

/// One configuration's summary as (label, value) rows. The figures are rounded already: they
/// print as the table output prints them.
fn summary_rows(s: &crate::simulate::Summary) -> [(&'static str, String); 7] {
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

/// The page for `simulate --compare -o html`: the shoots the two configurations place apart
/// (old → new, each with its explanation), then each configuration's summary side by side.
pub fn render_comparison(
    c: &crate::simulate::Comparison,
    old_profile: &str,
    new_profile: &str,
    now: chrono::DateTime<chrono::Utc>,
    replay: bool,
) -> String {
    use crate::simulate::Placement;
    let mut h = String::new();
    let scope = if replay {
        "every shoot decided again (replay) under each configuration"
    } else {
        "the pending shoots decided under each configuration"
    };
    let meta = format!(
        "Old: profile <b>{}</b> · new: profile <b>{}</b> · evaluated at {} · {scope}, in \
         creation order, each placement counted for the next. Nothing has been applied.",
        escape(old_profile),
        escape(new_profile),
        now.to_rfc3339_opts(SecondsFormat::Secs, true)
    );
    head(&mut h, "Configuration comparison: old → new", &meta);
    card_row(
        &mut h,
        &[
            (
                c.differences.len().to_string(),
                "shoots placed differently".into(),
            ),
            (c.new.decided.to_string(), "shoots decided (new)".into()),
            (
                format!("{} → {}", c.old.placed, c.new.placed),
                "placed (old → new)".into(),
            ),
            (
                format!("{} → {}", c.old.unschedulable, c.new.unschedulable),
                "unschedulable (old → new)".into(),
            ),
        ],
    );

    let _ = writeln!(h, "<h2>Placed differently ({})</h2>", c.differences.len());
    if c.differences.is_empty() {
        let _ = writeln!(
            h,
            "<p class=\"empty\">No shoot is placed differently ({} decided).</p>",
            c.new.decided
        );
    } else {
        h.push_str(
            "<table><thead><tr><th>Shoot</th><th>Old → new</th><th>Why</th></tr></thead>\
             <tbody>\n",
        );
        let seed = |p: Option<&Placement>| match p {
            Some(Placement { seed: Some(s), .. }) => escape(s),
            Some(Placement { seed: None, .. }) => {
                "<span class=\"badge drained\">unschedulable</span>".into()
            }
            None => "<span class=\"badge unusable\">not decided</span>".into(),
        };
        for d in &c.differences {
            let mut why = String::new();
            if let Some(o) = &d.old {
                let _ = write!(why, "<div><b>old:</b> {}</div>", escape(&o.reason));
            }
            if let Some(n) = &d.new {
                let _ = write!(why, "<div><b>new:</b> {}</div>", escape(&n.reason));
            }
            if let Some(s) = &d.old_seed_under_new {
                let _ = write!(
                    why,
                    "<div class=\"legend\">under new, old seed {}</div>",
                    escape(s)
                );
            }
            if let Some(e) = &d.explanation {
                let _ = write!(
                    why,
                    "<details><summary>explanation: every seed under the new configuration\
                     </summary><pre>{}</pre></details>",
                    escape(e)
                );
            }
            let _ = writeln!(
                h,
                "<tr><td class=\"seed\">{}</td><td class=\"num\">{} <span class=\"arrow\">→\
                 </span> <b>{}</b></td><td>{why}</td></tr>",
                escape(&d.shoot),
                seed(d.old.as_ref()),
                seed(d.new.as_ref())
            );
        }
        h.push_str("</tbody></table>\n");
    }
    h.push_str("<h2>Summary per configuration</h2>\n");
    h.push_str("<table><thead><tr><th></th><th>Old</th><th>New</th></tr></thead><tbody>\n");
    for ((label, old), (_, new)) in summary_rows(&c.old).iter().zip(summary_rows(&c.new).iter()) {
        let _ = writeln!(
            h,
            "<tr><th>{}</th><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            escape(label),
            escape(old),
            escape(new)
        );
    }
    h.push_str("</tbody></table>\n");

    h.push_str("<h3>Shoots per region</h3>\n");
    let mut regions: Vec<&String> = c
        .old
        .shoots_per_region
        .keys()
        .chain(c.new.shoots_per_region.keys())
        .collect();
    regions.sort();
    regions.dedup();
    if regions.is_empty() {
        h.push_str("<p class=\"empty\">No shoot on any seed.</p>\n");
    } else {
        h.push_str(
            "<table><thead><tr><th>Region</th><th>Old</th><th>New</th><th>Change</th></tr>\
             </thead><tbody>\n",
        );
        for r in regions {
            let o = c.old.shoots_per_region.get(r).copied().unwrap_or(0);
            let n = c.new.shoots_per_region.get(r).copied().unwrap_or(0);
            let change = match n as i64 - o as i64 {
                0 => String::new(),
                d => format!("{d:+}"),
            };
            let _ = writeln!(
                h,
                "<tr><td class=\"seed\">{}</td><td class=\"num\">{o}</td><td class=\"num\">{n}</td>\
                 <td class=\"num\">{change}</td></tr>",
                escape(r)
            );
        }
        h.push_str("</tbody></table>\n");
    }

    foot(&mut h);
    h
}
