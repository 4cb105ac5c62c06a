use super::*;

fn doc(moves: &str) -> String {
    format!(
        r#"{{"goal": {{"kind": "drain", "seeds": ["s1"]}},
            "windows": {{"horizonSeconds": 604800, "maxConcurrent": 2, "moveDurationSeconds": 1800}},
            "stamp": {{"landscape": "00ff", "profile": "default", "liveMigration": true, "other": 1}},
            "moves": [{moves}]}}"#
    )
}

const A: &str = r#"{"shoot": "garden-p/a", "from": "s1", "to": "s2",
    "migration": {"kind": "live"},
    "timing": {"state": "at", "start": "2026-01-01T22:00:00Z", "end": "2026-01-01T22:30:00Z", "window": "x"}}"#;

#[test]
fn a_saved_plan_reads_back_with_its_moves_and_settings() {
    let p = parse("plan.json", &doc(A)).unwrap();
    assert_eq!(p.max_concurrent, 2);
    assert_eq!(p.move_duration, chrono::Duration::minutes(30));
    assert!(p.live_migration);
    assert_eq!(p.moves.len(), 1);
    let m = &p.moves[0];
    assert_eq!((m.namespace.as_str(), m.name.as_str()), ("garden-p", "a"));
    assert!(m.live());
    assert_eq!(
        m.start,
        Ok(DateTime::parse_from_rfc3339("2026-01-01T22:00:00Z")
            .unwrap()
            .to_utc())
    );
}

#[test]
fn a_deferred_move_reads_as_not_startable_with_the_plans_reason() {
    let d = r#"{"shoot": "garden-p/b", "from": "s1", "to": "s2", "migration": {"kind": "classic"},
        "timing": {"state": "deferred", "window": "x", "reason": "no slot within the horizon"}}"#;
    let p = parse("plan.json", &doc(d)).unwrap();
    assert_eq!(
        p.moves[0].start,
        Err("deferred by the plan: no slot within the horizon".into())
    );
}

#[test]
fn bad_plans_are_refused_naming_the_field() {
    let cases = [
        (doc(&A.replace("garden-p/a", "a")), "moves[0].shoot"),
        (
            doc(&A.replace("\"to\": \"s2\"", "\"to\": \"s1\"")),
            "moves[0].to",
        ),
        (doc(&format!("{A}, {A}")), "moves[1].shoot"),
        (
            doc(&A.replace("\"live\"", "\"fast\"")),
            "moves[0].migration.kind",
        ),
        (
            doc(&A.replace("2026-01-01T22:00:00Z", "tonight")),
            "moves[0].timing.start",
        ),
        (
            doc(&A.replace("22:30:00Z", "21:30:00Z")),
            "moves[0].timing.end",
        ),
        (
            doc(A).replace("\"maxConcurrent\": 2", "\"maxConcurrent\": 0"),
            "windows.maxConcurrent",
        ),
        (
            doc(A).replace("\"stamp\"", "\"stump\""),
            "(document): missing field `stamp`",
        ),
        ("[]".to_string(), "(document)"),
    ];
    for (text, field) in cases {
        let e = parse("plan.json", &text).unwrap_err().to_string();
        assert!(
            e.starts_with("plan.json: ") && e.contains(field),
            "{field}: {e}"
        );
    }
}
