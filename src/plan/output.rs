//! Table, JSON and YAML renderings of a [`Plan`].

use std::borrow::Cow;

use chrono::SecondsFormat;

use super::{Goal, Plan, Timing};
use crate::simulate::Landscape;

fn ts(t: &chrono::DateTime<chrono::Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// The title line of a plan.
pub fn title(plan: &Plan) -> String {
    match &plan.goal {
        Goal::Drain { seeds } => format!("Drain plan for {}", seeds.join(", ")),
        Goal::Failback { seed } => format!("Fail-back plan for {seed}"),
        Goal::Rebalance {
            objective,
            max_moves,
        } => format!(
            "Rebalance plan: at most {max_moves} move(s) lowering the {}",
            objective.label()
        ),
    }
}

/// Moves (start, shoot, from, to, why), then the shoots that stay, then the figures.
pub fn render_table(plan: &Plan) -> String {
    let mut out = format!(
        "{} (profile {:?}, now {})\n\n",
        title(plan),
        plan.profile,
        ts(&plan.now)
    );
    let mut rows: Vec<[String; 6]> = vec![[
        "START".into(),
        "SHOOT".into(),
        "FROM".into(),
        "TO".into(),
        "MIGRATION".into(),
        "WHY".into(),
    ]];
    for m in super::by_start(&plan.moves) {
        let start = match &m.timing {
            Timing::At { start, .. } => ts(start),
            Timing::Deferred { .. } => "deferred".into(),
            Timing::Unscheduled => "-".into(),
        };
        let mut why = m.reason.clone();
        if let Timing::Deferred { reason, .. } = &m.timing {
            why = format!("deferred: {reason}; {why}");
        }
        for w in &m.warnings {
            why.push_str(&format!(" [warning: {w}]"));
        }
        rows.push([
            start,
            m.shoot.clone(),
            m.from.clone(),
            m.to.clone(),
            m.migration.label().into(),
            why,
        ]);
    }
    let widths: Vec<usize> = (0..5)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    if plan.moves.is_empty() {
        out.push_str("No moves.\n");
    } else {
        for r in &rows {
            for (c, w) in widths.iter().enumerate() {
                out.push_str(&format!("{:<w$}  ", r[c], w = w));
            }
            out.push_str(&r[5]);
            out.push('\n');
        }
    }
    if !plan.blocked.is_empty() {
        out.push_str("\nCannot move:\n");
        for b in &plan.blocked {
            out.push_str(&format!("  {}  (on {}): {}\n", b.shoot, b.from, b.reason));
        }
    }
    out.push('\n');
    for f in &plan.figures {
        out.push_str(&format!(
            "{}: {} -> {} {}\n",
            f.name,
            fmt_num(f.before),
            fmt_num(f.after),
            f.unit
        ));
    }
    out.push_str(&migration_line(plan));
    out.push_str(&format!(
        "{} move(s): {} scheduled, {} deferred; {} shoot(s) cannot move.\n",
        plan.moves.len(),
        plan.scheduled(),
        plan.deferred(),
        plan.blocked.len()
    ));
    out
}

/// How many moves are live, and what keeps the others classic, most common first.
pub fn migration_line(plan: &Plan) -> String {
    let live = plan.live();
    let classic = plan.moves.len() - live;
    let mut line = format!("Migrations: {live} live, {classic} classic");
    if !plan.stamp.live_migration {
        line.push_str(" (without --live-migration every move is classic)");
    } else if classic > 0 {
        let mut why: std::collections::BTreeMap<&str, usize> = Default::default();
        for m in &plan.moves {
            for r in &m.migration.not_live {
                *why.entry(r.as_str()).or_default() += 1;
            }
        }
        let mut why: Vec<_> = why.into_iter().collect();
        why.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        let top: Vec<String> = why
            .iter()
            .take(3)
            .map(|(r, n)| format!("{n}× {r}"))
            .collect();
        line.push_str(&format!("; not live: {}", top.join("; ")));
    }
    line.push('\n');
    line
}

/// The plan as one JSON document.
pub fn render_json(plan: &Plan) -> String {
    serde_json::to_string_pretty(plan).expect("JSON of plain values") + "\n"
}

/// One Shoot document per scheduled move with `spec.seedName` set to the destination: what
/// `kubectl replace --raw …/shoots/NAME/binding -f -` takes. Deferred moves are listed as
/// comments only. Nothing is applied.
pub fn render_yaml(landscape: &Landscape, plan: &Plan) -> String {
    // Every comment line goes through `escape::comment`: no input string can end a comment and
    // start a document of its own.
    let mut out = crate::escape::comment(&format!("{}; not applied", title(plan)));
    let mut first = true;
    for m in &plan.moves {
        let Timing::At { start, .. } = &m.timing else {
            let reason = match &m.timing {
                Timing::Deferred { reason, .. } => reason.as_str(),
                _ => "not scheduled",
            };
            out.push_str(&crate::escape::comment(&format!(
                "deferred: {} {} -> {}: {reason}",
                m.shoot, m.from, m.to
            )));
            continue;
        };
        let mut doc: Cow<'_, serde_yaml_ng::Value> =
            match landscape.shoot_docs.get(m.index).and_then(|d| d.value()) {
                Some(d) => Cow::Owned(d),
                None => Cow::Owned(
                    serde_yaml_ng::to_value(&landscape.shoots[m.index]).expect("YAML of a shoot"),
                ),
            };
        if let Some(spec) = doc
            .to_mut()
            .get_mut("spec")
            .and_then(|s| s.as_mapping_mut())
        {
            spec.insert("seedName".into(), m.to.clone().into());
        }
        if let Some(map) = doc.to_mut().as_mapping_mut() {
            map.remove("status");
        }
        if m.migration.is_live()
            && let Some(meta) = doc
                .to_mut()
                .get_mut("metadata")
                .and_then(|v| v.as_mapping_mut())
        {
            let annotations = meta
                .entry("annotations".into())
                .or_insert_with(|| serde_yaml_ng::Mapping::new().into());
            if let Some(a) = annotations.as_mapping_mut() {
                a.insert(
                    super::migration::ANNOTATION_LIVE_MIGRATE.into(),
                    "true".into(),
                );
            }
        }
        if !first {
            out.push_str("---\n");
        }
        first = false;
        out.push_str(&crate::escape::comment(&format!(
            "{} -> {} at {} ({}, {})",
            m.from,
            m.to,
            ts(start),
            m.shoot,
            m.migration.label()
        )));
        out.push_str(&serde_yaml_ng::to_string(&*doc).expect("YAML of parsed YAML"));
    }
    out
}

/// Whole numbers without decimals, others with two.
pub fn fmt_num(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}
