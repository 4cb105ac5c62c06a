use super::*;

fn plan(moves: usize) -> SavedPlan {
    let one = r#"{"shoot": "garden-p/aN", "from": "s1", "to": "s2", "migration": {"kind": "classic"},
        "timing": {"state": "unscheduled"}}"#;
    let moves: Vec<String> = (0..moves)
        .map(|i| one.replace("aN", &format!("a{i}")))
        .collect();
    let text = format!(
        r#"{{"goal": {{"kind": "drain"}}, "profile": "default", "now": "2026-01-01T10:00:00Z",
            "windows": {{"horizonSeconds": 604800, "maxConcurrent": 2, "moveDurationSeconds": 1800}},
            "stamp": {{"generator": "{GENERATOR}", "landscape": "00ff", "seeds": 3, "shoots": 40,
                       "profile": "default", "liveMigration": false}},
            "moves": [{}]}}"#,
        moves.join(",")
    );
    crate::apply::parse("plan.json", &text).unwrap()
}

fn live(digest: &str, seeds: usize, shoots: usize, found: usize) -> Observed {
    Observed {
        digest: digest.into(),
        seeds,
        shoots,
        found,
    }
}

#[test]
fn the_same_landscape_says_nothing() {
    assert_eq!(
        compare(&plan(4), &live("00ff", 3, 40, 4), false),
        Verdict::default()
    );
}

#[test]
fn a_changed_landscape_is_a_note_with_the_counts() {
    let v = compare(&plan(4), &live("abcd", 3, 41, 4), false);
    assert_eq!(v.foreign, None);
    assert_eq!(
        v.notes,
        [
            "the landscape changed since the plan was computed (3 -> 3 seed(s), 40 -> 41 shoot(s)): \
          each move is checked again before it starts"
        ]
    );
    // moves carried out already change the digest, not the counts
    let v = compare(&plan(4), &live("abcd", 3, 40, 0), false);
    assert_eq!((v.foreign, v.notes.len()), (None, 1));
}

#[test]
fn a_plan_from_another_garden_is_refused_unless_forced() {
    let v = compare(&plan(4), &live("abcd", 7, 90, 2), false);
    let why = v.foreign.expect("refused");
    assert!(
        why.contains("another garden")
            && why.contains("3 -> 7 seed(s), 40 -> 90 shoot(s)")
            && why.contains("2 of its 4 move(s)")
            && why.contains("--force"),
        "{why}"
    );
    let v = compare(&plan(4), &live("abcd", 7, 90, 2), true);
    assert_eq!(v.foreign, None);
    assert!(
        v.notes[0].contains("applied anyway (--force)"),
        "{:?}",
        v.notes
    );
    // most of its shoots are where the plan left them: the same garden, grown
    let v = compare(&plan(4), &live("abcd", 7, 90, 3), false);
    assert_eq!(v.foreign, None);
}

#[test]
fn another_generator_is_named_in_a_note() {
    let mut p = plan(1);
    p.generator = "gardener-scheduler 9.0.0".into();
    let v = compare(&p, &live("00ff", 3, 40, 1), false);
    assert_eq!(v.notes.len(), 1);
    assert!(
        v.notes[0].contains("written by \"gardener-scheduler 9.0.0\""),
        "{:?}",
        v.notes
    );
}
