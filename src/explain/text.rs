//! The explanation as a terminal report.

use super::Explanation;

/// The explanation as text, for a terminal.
pub fn render_explanation(e: &Explanation) -> String {
    let mut out = format!("Shoot {}  (decided again at {})\n", e.shoot, e.time);
    match &e.seed {
        Some(s) => out.push_str(&format!("Bound to {s}\n")),
        None => out.push_str("Pending\n"),
    }
    out.push_str(&format!("View: {}\n", e.view));
    out.push_str("\nRecorded decision:\n");
    match (&e.record, &e.untrusted_record, &e.record_problem) {
        (Some(r), _, _) => out.push_str(&record_lines(r)),
        (None, Some(r), Some(problem)) => {
            out.push_str(&format!(
                "  untrusted: {problem}.\n  as stored (not this shoot's decision):\n"
            ));
            out.push_str(&record_lines(r));
        }
        (None, _, Some(problem)) => out.push_str(&format!("  unreadable: {problem}\n")),
        (None, _, None) => out.push_str(
            "  none (pending, bound with decisionRecord: false, or bound by another scheduler)\n",
        ),
    }
    out.push_str(&format!("\nDecided now (profile {}):\n", e.now.profile));
    match &e.now.seed {
        Some(s) => {
            out.push_str(&format!(
                "  seed {s}  total {:.2}  margin {}  feasible seeds {}\n",
                e.now.total.unwrap_or(0.0),
                e.now.margin.map_or("-".to_string(), |m| format!("{m:.2}")),
                e.now.feasible
            ));
            for p in &e.now.priorities {
                out.push_str(&format!(
                    "    {:<20} score {:.2}  weight {}\n",
                    p.name, p.score, p.weight
                ));
            }
        }
        None => out.push_str(&format!(
            "  no seed: {}\n",
            e.now.message.as_deref().unwrap_or("-")
        )),
    }
    if !e.now.rejected.is_empty() {
        let list: Vec<String> = e
            .now
            .rejected
            .iter()
            .map(|c| format!("{} {}", c.stage, c.seeds))
            .collect();
        out.push_str(&format!("    seeds rejected: {}\n", list.join(", ")));
    }
    out.push_str(&format!("\nVerdict: {}\n", e.verdict));
    for c in &e.changes {
        out.push_str(&format!("  {c}\n"));
    }
    for (title, v) in [
        ("Its seed now", &e.current_seed),
        ("Nearest seed", &e.nearest),
    ] {
        let Some(v) = v else { continue };
        if title == "Its seed now" && e.verdict == "same" {
            continue;
        }
        out.push_str(&format!("\n{title}: {}", v.seed));
        if v.feasible {
            out.push_str(&format!(
                " (fits; rank {} of {}, total {:.2})\n",
                v.rank.unwrap_or(0),
                e.now.feasible,
                v.total.unwrap_or(0.0)
            ));
        } else {
            out.push_str(&format!(" ({} filter(s) reject it)\n", v.rejected_by.len()));
        }
        for r in &v.rejected_by {
            out.push_str(&format!("  {:<22} {}\n", r.stage, r.reason));
            if let Some(h) = &r.hint {
                out.push_str(&format!("  {:<22} to fit: {h}\n", ""));
            }
        }
    }
    out
}

/// A record's fields, indented under its heading.
fn record_lines(r: &serde_json::Value) -> String {
    let get = |k: &str| r.get(k).map_or("-".to_string(), value_text);
    let mut out = format!(
        "  seed {}  profile {}  at {}  total {}  margin {}  scheduler {}\n",
        get("seed"),
        get("profile"),
        get("time"),
        get("total"),
        get("margin"),
        get("scheduler")
    );
    if let Some(p) = r.get("priorities").and_then(|p| p.as_object()) {
        for (name, v) in p {
            out.push_str(&format!(
                "    {name:<20} score {}  weight {}\n",
                v.get("score").map_or("-".into(), value_text),
                v.get("weight").map_or("-".into(), value_text)
            ));
        }
    }
    if let Some(rej) = r.get("rejected").and_then(|p| p.as_object())
        && !rej.is_empty()
    {
        let list: Vec<String> = rej
            .iter()
            .map(|(k, v)| format!("{k} {}", value_text(v)))
            .collect();
        out.push_str(&format!("    seeds rejected: {}\n", list.join(", ")));
    }
    out
}

fn value_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => "-".to_string(),
        other => other.to_string(),
    }
}
