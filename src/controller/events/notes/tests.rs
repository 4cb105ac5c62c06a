use crate::controller::events::notes::*;

#[test]
fn notes_are_cut_on_a_char_boundary() {
    let s = "ä".repeat(600); // 1200 bytes
    let t = truncate_note(&s, MAX_NOTE_BYTES);
    assert!(t.len() <= MAX_NOTE_BYTES);
    assert!(t.ends_with('…'));
    assert_eq!(truncate_note("short", 10), "short");
}

#[test]
fn the_success_note_is_upstreams_unless_priorities_or_profiles_add_to_it() {
    use crate::fixtures::{CloudProfileBuilder, SeedBuilder, ShootBuilder};
    let mut snap = crate::snapshot::Snapshot::new();
    snap.upsert_cloud_profile(&CloudProfileBuilder::new("aws").build());
    snap.upsert_seed(&SeedBuilder::new("s1").build());
    let shoot = ShootBuilder::new("garden-a", "s").build();
    let profile = crate::profile::Profile::upstream_default();
    let decision = crate::schedule::schedule(&shoot, &snap, &profile, chrono::Utc::now()).unwrap();
    let cases = [
        (
            "upstream's keys alone",
            false,
            false,
            "Scheduled to seed \"s1\"",
        ),
        (
            "a profile chain names the entry",
            true,
            false,
            "Scheduled to seed \"s1\" by profile \"default\"",
        ),
    ];
    for (name, by_profile, scores, want) in cases {
        assert_eq!(success_note(&decision, by_profile, scores), want, "{name}");
    }
    let with_scores = success_note(&decision, false, true);
    assert!(
        with_scores.starts_with("Scheduled to seed \"s1\" (score ")
            && with_scores.contains("ShootCount"),
        "priorities add the score summary: {with_scores}"
    );
}

#[test]
fn the_failure_description_is_worded_as_upstream() {
    let err = FitError::no_fit(0, vec![]);
    assert_eq!(
        failure_description(&err),
        "Failed to schedule Shoot: 0/0 seeds are available: no seeds are registered."
    );
}
