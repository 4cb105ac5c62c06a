use super::*;

fn doc(moves: &str) -> String {
    format!(
        r#"{{"goal": {{"kind": "drain", "seeds": ["s1"]}}, "profile": "default",
            "now": "2026-01-01T10:00:00Z",
            "windows": {{"horizonSeconds": 604800, "maxConcurrent": 2, "moveDurationSeconds": 1800}},
            "stamp": {{"generator": "gardener-scheduler 0.1.0", "landscape": "00ff", "seeds": 3,
                       "shoots": 40, "profile": "default", "liveMigration": true, "other": 1}},
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

#[test]
fn shoot_names_the_api_server_would_refuse_are_refused_before_any_request() {
    for bad in [
        "garden-p/a\u{0}",
        "garden-p/a\u{202e}b",
        "garden-p/\u{1b}[2Ja",
        &format!("garden-p/{}", "a".repeat(300)),
        "garden-p/%2F..",
        "../x",
        "Garden-P/a",
        "garden-p/a/b",
    ] {
        let e = parse("plan.json", &doc(&A.replace("garden-p/a", bad)))
            .unwrap_err()
            .to_string();
        assert!(e.contains("moves[0].shoot: "), "{bad:?}: {e}");
        assert!(
            !e.contains('\u{0}') && !e.contains('\u{1b}') && !e.contains('\u{202e}'),
            "{e:?}"
        );
    }
}

#[test]
fn a_plan_out_of_shape_is_refused_naming_the_field() {
    let cases = [
        (
            format!("{} trailing", doc(A)),
            "(document): text after the plan's JSON object",
        ),
        (
            format!("{}{{}}", doc(A)),
            "(document): text after the plan's JSON object",
        ),
        (
            doc(&A.replace("2026-01-01T22:00:00Z", "0001-01-01T22:00:00Z")),
            "moves[0].timing.start: 0001-01-01T22:00:00Z is outside the plan's horizon",
        ),
        (
            doc(&A.replace("2026-01-01T22:30:00Z", "9999-01-01T22:30:00Z")),
            "moves[0].timing.end: 9999-01-01T22:30:00Z is after the plan's horizon",
        ),
        (
            doc(&A
                .replace("2026-01-01T22:00:00Z", "2026-03-01T22:00:00Z")
                .replace("2026-01-01T22:30:00Z", "2026-03-01T22:30:00Z")),
            "moves[0].timing.start: 2026-03-01T22:00:00Z is outside the plan's horizon",
        ),
        (
            doc(A).replace("\"horizonSeconds\": 604800", "\"horizonSeconds\": -1"),
            "windows.horizonSeconds: must be between 1 and",
        ),
        (
            doc(A).replace(
                "\"horizonSeconds\": 604800",
                "\"horizonSeconds\": 999999999999",
            ),
            "windows.horizonSeconds: must be between 1 and",
        ),
        (
            doc(A).replace(
                "\"moveDurationSeconds\": 1800",
                "\"moveDurationSeconds\": 700000",
            ),
            "windows.moveDurationSeconds: must be between 1 and windows.horizonSeconds",
        ),
        (
            doc(A).replace("2026-01-01T10:00:00Z", "yesterday"),
            "now: \"yesterday\" is not an RFC 3339 timestamp",
        ),
        (
            doc(A).replace("\"kind\": \"drain\"", "\"kind\": \"evict\""),
            "goal.kind: unknown variant `evict`",
        ),
        (
            doc(A).replace("\"profile\": \"default\",\n", "\"profile\": \"night\",\n"),
            "profile: \"night\" differs from stamp.profile \"default\"",
        ),
        (
            doc(A).replace("\"seeds\": 3,", ""),
            "stamp: missing field `seeds`",
        ),
    ];
    for (text, want) in cases {
        let e = parse("plan.json", &text).unwrap_err().to_string();
        assert!(e.contains(want), "{want}: {e}");
    }
}

#[test]
fn a_plan_ten_years_or_more_away_from_the_apply_clock_is_refused() {
    let p = parse("plan.json", &doc(A)).unwrap();
    let at = |t: &str| DateTime::parse_from_rfc3339(t).unwrap().to_utc();
    assert!(check_clock("plan.json", &p, at("2026-01-02T00:00:00Z")).is_ok());
    assert!(check_clock("plan.json", &p, at("2020-01-01T00:00:00Z")).is_ok());
    for clock in ["0001-01-01T00:00:00Z", "9999-01-01T00:00:00Z"] {
        let e = check_clock("plan.json", &p, at(clock))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("plan.json: now: 2026-01-01T10:00:00Z is more than ten years from"),
            "{e}"
        );
    }
}

#[test]
fn nesting_numbers_out_of_range_and_wrong_types_are_named_in_words_with_the_field() {
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    // Nesting where the reader skips a value (a field it does not use) is read without recursion.
    assert!(
        parse(
            "plan.json",
            &doc(A).replace("\"other\": 1", &format!("\"other\": {deep}"))
        )
        .is_ok()
    );
    let cases = [
        (
            doc(A).replace("\"maxConcurrent\": 2", "\"maxConcurrent\": 1e20"),
            "plan.json: windows.maxConcurrent: must be a whole number, got 1e20 at line 3",
        ),
        (
            doc(A).replace(
                "\"maxConcurrent\": 2",
                "\"maxConcurrent\": 18446744073709551616",
            ),
            "plan.json: windows.maxConcurrent: must be a whole number, got",
        ),
        (
            doc(A).replace("\"horizonSeconds\": 604800", "\"horizonSeconds\": \"week\""),
            "plan.json: windows.horizonSeconds: must be a whole number, got text \"week\" at line 3",
        ),
        (
            doc(A).replace("\"profile\": \"default\",\n", "\"profile\": 5,\n"),
            "plan.json: profile: must be text, got 5 at line 1",
        ),
        // Read as far as the first value of the wrong type, never recursing into the rest.
        (
            doc(&deep),
            "plan.json: moves[0][0]: must be text, got a list at line 6 column",
        ),
    ];
    for (text, want) in cases {
        let e = parse("plan.json", &text).unwrap_err().to_string();
        assert!(e.starts_with(want), "want {want:?}, got {e:?}");
        for words in [
            "recursion limit",
            "invalid type",
            "as u128",
            "floating point",
        ] {
            assert!(!e.contains(words), "{e}");
        }
    }
}
