//! What is published for a seed: the ConfigMap holding its plan (the JSON `plan apply` reads,
//! and a summary to read), and the note of the event on the seed. Pure: the loop in `run`
//! writes what this makes.

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{Value, json};

use crate::plan::{Plan, output};

/// Which plan a ConfigMap holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// The shoots of an unhealthy seed, elsewhere.
    Evacuation,
    /// The shoots that left a seed, back to it once it is healthy again.
    Failback,
}

impl Kind {
    /// The value of [`LABEL_PLAN`].
    pub fn label(self) -> &'static str {
        match self {
            Kind::Evacuation => "evacuation",
            Kind::Failback => "failback",
        }
    }
}

/// Label of every published plan: which kind of plan it is.
pub const LABEL_PLAN: &str = "scheduling.gardener.cloud/plan";
/// Annotation of every published plan: the seed it is for (names may exceed a label value).
pub const ANNOTATION_SEED: &str = "scheduling.gardener.cloud/seed";
/// Annotation of every published plan: when the seed was judged unhealthy (or healthy again).
pub const ANNOTATION_JUDGED_AT: &str = "scheduling.gardener.cloud/judged-at";
/// The ConfigMap key `plan apply --from-configmap` reads.
pub use crate::apply::published::PLAN_KEY;
/// The ConfigMap key of the summary.
pub const SUMMARY_KEY: &str = "summary";
/// The ConfigMap key of the plan's HTML report (the page `plan drain -o html` writes).
pub const HTML_KEY: &str = "plan.html";
/// What a ConfigMap may hold here: the API server refuses more than 1 MiB, and the object's
/// metadata needs some of it.
pub const MAX_DATA_BYTES: usize = 900 * 1024;
/// Reasons an event names before counting the rest.
const REASONS_NAMED: usize = 3;
/// The longest event note (the API server refuses more than 1 KiB).
pub const MAX_NOTE: usize = 1024;

/// The ConfigMap's name: `gardener-scheduler-<kind>-<seed>`; a seed name too long for that
/// is shortened and a digest of it appended, so that two seeds never share one.
pub fn name(kind: Kind, seed: &str) -> String {
    let prefix = format!("gardener-scheduler-{}-", kind.label());
    let full = format!("{prefix}{seed}");
    if full.len() <= 253 {
        return full;
    }
    let digest = format!("{:016x}", xxhash_rust::xxh3::xxh3_64(seed.as_bytes()));
    let keep = 253 - prefix.len() - digest.len() - 1;
    let mut end = keep.min(seed.len());
    while !seed.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{prefix}{}-{digest}",
        seed[..end].trim_end_matches(['-', '.'])
    )
}

/// Why and since when a plan is published.
pub struct Occasion<'a> {
    pub seed: &'a str,
    /// When the seed was judged unhealthy (evacuation) or healthy again (fail-back).
    pub judged_at: DateTime<Utc>,
    /// What the seed's conditions said when it was judged (empty for a fail-back).
    pub reasons: &'a [String],
    /// `evacuation.mode: automatic`: its limits, and the plan is carried out by the scheduler
    /// process rather than left to an operator.
    pub automatic: Option<&'a crate::config::Automatic>,
}

/// How an automatic evacuation is carried out, for the summary and the event.
pub fn automatic_line(a: &crate::config::Automatic) -> String {
    format!(
        "carried out by the scheduler process (evacuation.mode: automatic): at most {} move(s) \
         in flight, {} per hour, {}% of the scheduled shoots in flight; each move decided again \
         before its binding; the shoots that cannot move are never moved; it stops when the \
         seed's conditions are healthy again",
        a.max_moves_in_flight, a.max_moves_per_hour, a.max_share_in_flight
    )
}

/// A plan's moves and what stays, compared to tell a new plan from the same plan again.
pub fn fingerprint(plan: &Plan) -> u64 {
    digest(
        plan.moves.iter().map(|m| (m.shoot.as_str(), m.to.as_str())),
        plan.blocked
            .iter()
            .map(|b| (b.shoot.as_str(), b.category.as_str())),
    )
}

/// The shoots a plan as published (its JSON) moves, `namespace/name`; none when it does not
/// read.
pub fn moved_shoots(text: &str) -> Vec<String> {
    let v: Value = serde_json::from_str(text).unwrap_or_default();
    (v.get("moves")
        .and_then(Value::as_array)
        .into_iter()
        .flatten())
    .filter_map(|m| Some(m.get("shoot")?.as_str()?.to_string()))
    .collect()
}

/// [`fingerprint`] of a plan as published (its JSON), or `None` when it does not read.
pub fn fingerprint_json(text: &str) -> Option<u64> {
    let v: Value = serde_json::from_str(text).ok()?;
    let pairs = |key: &str, a: &'static str, b: &'static str| -> Option<Vec<(String, String)>> {
        v.get(key)?
            .as_array()?
            .iter()
            .map(|item| {
                Some((
                    item.get(a)?.as_str()?.to_string(),
                    item.get(b)?.as_str()?.to_string(),
                ))
            })
            .collect()
    };
    let moves = pairs("moves", "shoot", "to")?;
    let blocked = pairs("blocked", "shoot", "category")?;
    Some(digest(
        moves.iter().map(|(a, b)| (a.as_str(), b.as_str())),
        blocked.iter().map(|(a, b)| (a.as_str(), b.as_str())),
    ))
}

fn digest<'a>(
    moves: impl Iterator<Item = (&'a str, &'a str)>,
    blocked: impl Iterator<Item = (&'a str, &'a str)>,
) -> u64 {
    use std::hash::Hasher;
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    for (a, b) in moves {
        for part in [a, b] {
            h.write(part.as_bytes());
            h.write_u8(0);
        }
    }
    h.write_u8(1);
    for (a, b) in blocked {
        for part in [a, b] {
            h.write(part.as_bytes());
            h.write_u8(0);
        }
    }
    h.finish()
}

/// The part of a drain plan that leaves `seed`: its moves and the shoots of it that stay; the
/// figure counts its shoots only.
pub fn leaving(mut plan: Plan, seed: &str) -> Plan {
    plan.moves.retain(|m| m.from == seed);
    plan.blocked.retain(|b| b.from == seed);
    plan.figures = vec![crate::plan::Figure {
        name: format!("shoots on {seed}"),
        before: (plan.moves.len() + plan.blocked.len()) as f64,
        after: plan.blocked.len() as f64,
        unit: "shoots".into(),
    }];
    plan
}

/// The summary's first lines: the seed's state, then what the plan does in one line.
fn headline(kind: Kind, at: &Occasion<'_>, plan: &Plan) -> String {
    let when = at.judged_at.to_rfc3339_opts(SecondsFormat::Secs, true);
    let mut out = match kind {
        Kind::Evacuation => format!("Seed {} is judged unhealthy since {when}:\n", at.seed),
        Kind::Failback => format!("Seed {} is judged healthy again since {when}.\n", at.seed),
    };
    for r in at.reasons {
        out.push_str(&format!("  {}\n", crate::escape::line(r)));
    }
    out.push_str(&format!("{}\n", counts(plan)));
    out
}

/// `3 move(s) (2 scheduled, 1 deferred), 1 shoot(s) cannot move`
pub fn counts(plan: &Plan) -> String {
    format!(
        "{} move(s) ({} scheduled, {} deferred), {} shoot(s) cannot move",
        plan.moves.len(),
        plan.scheduled(),
        plan.deferred(),
        plan.blocked.len()
    )
}

/// The ConfigMap of `plan` in `namespace`, as an object to apply. The plan's JSON is the one
/// `plan drain -o json` writes; a plan too large for a ConfigMap loses its moves' explanations
/// first (each move is decided again when it is applied), then is left out with a note.
pub fn config_map(namespace: &str, kind: Kind, at: &Occasion<'_>, plan: &Plan) -> Value {
    let name = name(kind, at.seed);
    let apply = match (kind, at.automatic) {
        (Kind::Evacuation, Some(a)) => format!("The plan is {}.\n", automatic_line(a)),
        _ => format!(
            "Apply it after review: gardener-scheduler plan apply --from-configmap \
             {namespace}/{name}\n"
        ),
    };
    let mut summary = format!(
        "{}\n{}\n{apply}",
        headline(kind, at, plan),
        output::render_table(plan)
    );
    let mut json = output::render_json(plan);
    if json.len() + summary.len() > MAX_DATA_BYTES {
        let mut lean = plan.clone();
        for m in &mut lean.moves {
            m.explanation = String::new();
        }
        json = output::render_json(&lean);
        summary = format!("{}\n{apply}", headline(kind, at, plan));
    }
    let mut data = serde_json::Map::new();
    if json.len() + summary.len() <= MAX_DATA_BYTES {
        data.insert(PLAN_KEY.into(), Value::String(json));
    } else {
        summary.push_str(&format!(
            "The plan is larger than a ConfigMap holds ({} bytes); compute it with \
             `gardener-scheduler plan drain {} --live -o json`.\n",
            json.len(),
            at.seed
        ));
    }
    // the report is what a ConfigMap holds last: after the plan and the summary, when it fits
    let html = crate::report::render(plan).unwrap_or_else(|e| {
        crate::report::render_message("plan report", &e.to_string()).unwrap_or_default()
    });
    let used = summary.len()
        + data
            .get(PLAN_KEY)
            .and_then(Value::as_str)
            .map_or(0, str::len);
    if used + html.len() <= MAX_DATA_BYTES {
        data.insert(HTML_KEY.into(), Value::String(html));
    } else {
        summary.push_str(&format!(
            "The HTML report is left out: with it the ConfigMap would exceed {} KiB ({} bytes of \
             report); render it with `gardener-scheduler plan drain {} --live -o html`.\n",
            MAX_DATA_BYTES / 1024,
            html.len(),
            at.seed
        ));
    }
    data.insert(SUMMARY_KEY.into(), Value::String(summary));
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {
                "app.kubernetes.io/managed-by": "gardener-scheduler",
                LABEL_PLAN: kind.label(),
            },
            "annotations": {
                ANNOTATION_SEED: at.seed,
                ANNOTATION_JUDGED_AT: at.judged_at.to_rfc3339_opts(SecondsFormat::Secs, true),
            },
        },
        "data": data,
    })
}

/// The note of the event on the seed: its state, the plan's counts and where the plan is.
pub fn note(kind: Kind, namespace: &str, at: &Occasion<'_>, plan: &Plan) -> String {
    let where_ = format!("{namespace}/{}", name(kind, at.seed));
    let text = match kind {
        Kind::Evacuation => {
            let mut reasons: Vec<String> = at
                .reasons
                .iter()
                .take(REASONS_NAMED)
                .map(|r| crate::escape::line(r).into_owned())
                .collect();
            if at.reasons.len() > REASONS_NAMED {
                reasons.push(format!("{} more", at.reasons.len() - REASONS_NAMED));
            }
            let how = match at.automatic {
                Some(a) => automatic_line(a),
                None => format!(
                    "apply it after review with `gardener-scheduler plan apply --from-configmap \
                     {where_}`"
                ),
            };
            format!(
                "Seed judged unhealthy ({}); evacuation plan in ConfigMap {where_}: {}; {how}",
                reasons.join("; "),
                counts(plan)
            )
        }
        Kind::Failback => format!(
            "Seed judged healthy again; fail-back plan in ConfigMap {where_}: {}; apply it after \
             review with `gardener-scheduler plan apply --from-configmap {where_}`",
            counts(plan)
        ),
    };
    crate::controller::truncate_note(&text, MAX_NOTE)
}

#[cfg(test)]
mod tests;
