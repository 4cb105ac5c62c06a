//! Reading the decision record back, and checking it against the shoot it is on.
//!
//! The annotation is written by whoever may edit the shoot: a copy from another shoot, a record
//! left by a binding that was undone, or a hand-made one. A record that contradicts the shoot (it
//! names another seed than `spec.seedName`, the shoot is pending, its time is not a time or lies
//! ahead, a value no profile can produce) is kept apart as untrusted, never shown as the shoot's
//! decision, and every contradiction is named.

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::api::{ANNOTATION_DECISION, Shoot};

/// A record may lie ahead of `now` by this much: the clocks of the scheduler's host and of the
/// host running `explain` differ by seconds, not minutes.
const CLOCK_SKEW_SECS: i64 = 300;

/// The longest record value a problem quotes, in characters.
const QUOTED_CHARS: usize = 64;

/// The decision record on a shoot, as `explain` reads it.
#[derive(Debug, Default)]
pub(super) struct ReadRecord {
    /// A record consistent with the shoot: its decision.
    pub(super) trusted: Option<Value>,
    /// A record that contradicts the shoot, as stored.
    pub(super) untrusted: Option<Value>,
    /// Why the annotation is unreadable or the record untrusted, every reason named.
    pub(super) problem: Option<String>,
}

/// Reads the record on `shoot`, bound to `seed` (`None`: pending), at `now`.
pub(super) fn read_record(shoot: &Shoot, seed: Option<&str>, now: DateTime<Utc>) -> ReadRecord {
    let Some(text) = shoot
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(ANNOTATION_DECISION))
    else {
        return ReadRecord::default();
    };
    let unreadable = |problem: String| ReadRecord {
        problem: Some(format!("annotation {ANNOTATION_DECISION}: {problem}")),
        ..ReadRecord::default()
    };
    let v = match serde_json::from_str::<Value>(text) {
        Ok(v) => v,
        Err(e) if e.to_string().starts_with("recursion limit exceeded") => {
            return unreadable(format!(
                "not a decision record: JSON nested deeper than 128 levels at line {} column {}",
                e.line(),
                e.column()
            ));
        }
        Err(e) => return unreadable(format!("not JSON: {e}")),
    };
    if v.get("v").and_then(|v| v.as_u64()) != Some(1) {
        return unreadable(format!(
            "format {} is not one this version reads (1)",
            v.get("v").map_or("(none)".to_string(), quoted)
        ));
    }
    let contradictions = contradictions(&v, seed, now);
    if contradictions.is_empty() {
        ReadRecord {
            trusted: Some(v),
            ..ReadRecord::default()
        }
    } else {
        ReadRecord {
            untrusted: Some(v),
            problem: Some(format!(
                "the record contradicts the shoot, so it is not taken as its decision: {}",
                contradictions.join("; ")
            )),
            ..ReadRecord::default()
        }
    }
}

/// Every way the record `r` contradicts a shoot bound to `seed` at `now`, one clause each.
fn contradictions(r: &Value, seed: Option<&str>, now: DateTime<Utc>) -> Vec<String> {
    let mut out = Vec::new();
    match (r.get("seed"), seed) {
        (_, None) => out.push(
            "the shoot is pending (no spec.seedName), yet it carries a record of a binding".into(),
        ),
        (Some(Value::String(s)), Some(bound)) if s == bound => {}
        (Some(Value::String(s)), Some(bound)) => out.push(format!(
            "it names seed {}, but spec.seedName is {bound:?}",
            quoted(&Value::String(s.clone()))
        )),
        (Some(other), Some(_)) => out.push(format!("its seed {} is not a name", quoted(other))),
        (None, Some(_)) => out.push("it names no seed".into()),
    }
    match r.get("time") {
        Some(Value::String(t)) => match DateTime::parse_from_rfc3339(t) {
            Ok(at) if at.timestamp() > now.timestamp() + CLOCK_SKEW_SECS => out.push(format!(
                "its time {t} is after now ({})",
                now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
            )),
            Ok(_) => {}
            Err(_) => out.push(format!(
                "its time {} is not an RFC 3339 time",
                quoted(&Value::String(t.clone()))
            )),
        },
        Some(other) => out.push(format!(
            "its time {} is not an RFC 3339 time",
            quoted(other)
        )),
        None => out.push("it has no time".into()),
    }
    out.extend(values_out_of_range(r));
    out
}

/// The scores, weights, total, margin and counts that no profile can produce.
fn values_out_of_range(r: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let mut most = 0.0;
    let mut weights = 0usize;
    if let Some(p) = r.get("priorities").and_then(Value::as_object) {
        for (name, v) in p {
            let score = v.get("score").and_then(Value::as_f64);
            if !score.is_some_and(|s| (0.0..=100.0).contains(&s)) {
                out.push(format!(
                    "priority {name:?} has score {}, not a number from 0 to 100",
                    v.get("score").map_or("(none)".into(), quoted)
                ));
            }
            match v.get("weight").and_then(Value::as_f64) {
                Some(w) if w > 0.0 && w.is_finite() => {
                    most += w * 100.0;
                    weights += 1;
                }
                _ => out.push(format!(
                    "priority {name:?} has weight {}, not a positive number",
                    v.get("weight").map_or("(none)".into(), quoted)
                )),
            }
        }
    }
    // Each weight is rounded to two decimals in the record: up to 0.005 × 100 each.
    let bound = most + 0.5 * weights as f64 + 0.01;
    for key in ["total", "margin"] {
        match r.get(key) {
            None | Some(Value::Null) if key == "margin" => {}
            Some(v) if v.as_f64().is_some_and(|x| (0.0..=bound).contains(&x)) => {}
            v => out.push(format!(
                "its {key} {} is not a number from 0 to {} (the priorities' weights × 100)",
                v.map_or("(none)".into(), quoted),
                most
            )),
        }
    }
    if let Some(rejected) = r.get("rejected").and_then(Value::as_object) {
        for (stage, n) in rejected {
            if n.as_u64().is_none() {
                out.push(format!(
                    "filter {stage:?} rejected {} seeds, not a count",
                    quoted(n)
                ));
            }
        }
    }
    out
}

/// A value of the record as a problem quotes it: JSON, cut at [`QUOTED_CHARS`] characters.
fn quoted(v: &Value) -> String {
    let text = v.to_string();
    match text.char_indices().nth(QUOTED_CHARS) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::ShootBuilder;

    fn now() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2026-12-02T09:00:00Z")
            .unwrap()
            .to_utc()
    }

    /// The record on a shoot bound to `s1`, with `field` replaced by `value`.
    fn read(seed: Option<&str>, field: &str, value: &str) -> ReadRecord {
        let mut v: Value = serde_json::from_str(
            r#"{"v":1,"profile":"default","time":"2026-12-01T09:00:00Z","seed":"s1","total":100.0,"margin":null,"priorities":{"ShootCount":{"score":100.0,"weight":1.0}},"rejected":{"Taints":2},"scheduler":"0.1.0"}"#,
        )
        .unwrap();
        if !field.is_empty() {
            *v.pointer_mut(field).unwrap() = serde_json::from_str(value).unwrap();
        }
        let mut b =
            ShootBuilder::new("garden-dev", "web").annotation(ANNOTATION_DECISION, &v.to_string());
        if let Some(s) = seed {
            b = b.seed(s);
        }
        read_record(&b.build(), seed, now())
    }

    #[test]
    fn a_record_that_agrees_with_the_shoot_is_its_decision() {
        let r = read(Some("s1"), "", "");
        assert!(r.trusted.is_some() && r.untrusted.is_none(), "{r:?}");
        assert_eq!(r.problem, None);
    }

    #[test]
    fn each_contradiction_keeps_the_record_apart_and_is_named() {
        let cases = [
            (
                Some("s2"),
                "",
                "",
                "it names seed \"s1\", but spec.seedName is \"s2\"",
            ),
            (None, "", "", "the shoot is pending (no spec.seedName)"),
            (
                Some("s1"),
                "/time",
                "\"yesterday\"",
                "its time \"yesterday\" is not an RFC 3339 time",
            ),
            (
                Some("s1"),
                "/time",
                "1700000000",
                "its time 1700000000 is not an RFC 3339 time",
            ),
            (
                Some("s1"),
                "/time",
                "\"2027-01-01T00:00:00Z\"",
                "its time 2027-01-01T00:00:00Z is after now (2026-12-02T09:00:00Z)",
            ),
            (
                Some("s1"),
                "/total",
                "1e308",
                "its total 1e+308 is not a number from 0 to 100",
            ),
            (
                Some("s1"),
                "/total",
                "-1",
                "its total -1 is not a number from 0 to 100",
            ),
            (
                Some("s1"),
                "/margin",
                "\"NaN\"",
                "its margin \"NaN\" is not a number from 0 to 100",
            ),
            (
                Some("s1"),
                "/priorities/ShootCount/score",
                "\"NaN\"",
                "priority \"ShootCount\" has score \"NaN\", not a number from 0 to 100",
            ),
            (
                Some("s1"),
                "/priorities/ShootCount/weight",
                "0",
                "priority \"ShootCount\" has weight 0, not a positive number",
            ),
            (
                Some("s1"),
                "/rejected/Taints",
                "-3",
                "filter \"Taints\" rejected -3 seeds, not a count",
            ),
        ];
        for (seed, field, value, want) in cases {
            let r = read(seed, field, value);
            assert!(
                r.trusted.is_none() && r.untrusted.is_some(),
                "{field}={value}: {r:?}"
            );
            let problem = r.problem.unwrap();
            assert!(
                problem.starts_with("the record contradicts the shoot") && problem.contains(want),
                "{field}={value}: want {want:?} in {problem}"
            );
        }
    }

    #[test]
    fn a_record_a_few_seconds_ahead_is_a_clock_skew_not_a_contradiction() {
        let r = read(Some("s1"), "/time", "\"2026-12-02T09:04:00Z\"");
        assert!(r.trusted.is_some(), "{r:?}");
    }

    #[test]
    fn a_long_value_is_quoted_cut() {
        let long = format!("\"{}\"", "x".repeat(10_000));
        let problem = read(Some("s1"), "/seed", &long).problem.unwrap();
        assert!(problem.len() < 400, "{problem}");
        assert!(problem.contains("xxx…"), "{problem}");
    }

    #[test]
    fn deep_json_is_named_as_nesting_not_as_the_parsers_recursion_limit() {
        let shoot = ShootBuilder::new("garden-dev", "web")
            .seed("s1")
            .annotation(
                ANNOTATION_DECISION,
                &format!("{}{}", "[".repeat(200), "]".repeat(200)),
            )
            .build();
        let problem = read_record(&shoot, Some("s1"), now()).problem.unwrap();
        assert!(!problem.contains("recursion limit"), "{problem}");
        assert!(
            problem.contains("JSON nested deeper than 128 levels at line 1"),
            "{problem}"
        );
    }
}
