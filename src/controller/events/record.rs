//! The decision record: a compact, versioned JSON annotation the binding request carries, so a
//! bound shoot keeps why it went where it went after its events expire. Only what the shoot's
//! owner may see: its own seed (`spec.seedName` shows it), the profile, the scores of that seed,
//! how far it was ahead of the next seed (not which seed that was), how many seeds each filter
//! rejected (counts, no names) and the scheduler's version; no other seed's or project's name.

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::json;

use crate::schedule::Decision;

/// The record's format; a reader checks `v` before reading on.
pub const RECORD_VERSION: u32 = 1;

/// Rounds to two decimals, so the record stays short.
fn short(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// The record of `decision`, made at `now`: one line of JSON.
pub fn record(decision: &Decision, now: DateTime<Utc>) -> String {
    let winner = decision.winner();
    let priorities: serde_json::Map<String, serde_json::Value> = winner
        .priorities
        .iter()
        .map(|p| {
            (
                p.name.to_string(),
                json!({"score": short(p.score), "weight": short(p.weight)}),
            )
        })
        .collect();
    let rejected: serde_json::Map<String, serde_json::Value> = decision
        .rejected_by_stage
        .iter()
        .map(|(stage, n)| (stage.to_string(), json!(n)))
        .collect();
    json!({
        "v": RECORD_VERSION,
        "profile": decision.profile,
        "time": now.to_rfc3339_opts(SecondsFormat::Secs, true),
        "seed": decision.seed,
        "total": short(winner.total.into_inner()),
        "margin": decision.margin.map(short),
        "priorities": priorities,
        "rejected": rejected,
        "scheduler": env!("CARGO_PKG_VERSION"),
    })
    .to_string()
}

#[cfg(test)]
mod tests {
    use crate::controller::events::record::*;
    use crate::fixtures::{CloudProfileBuilder, SeedBuilder, ShootBuilder};
    use crate::profile::Profile;
    use crate::snapshot::Snapshot;

    #[test]
    fn the_record_names_the_profile_the_seed_its_scores_and_the_version_in_little_room() {
        let mut snap = Snapshot::new();
        snap.upsert_cloud_profile(&CloudProfileBuilder::new("aws").build());
        snap.upsert_seed(&SeedBuilder::new("seed-a").build());
        snap.upsert_seed(&SeedBuilder::new("seed-b").build());
        let shoot = ShootBuilder::new("garden-dev", "web").build();
        let now = DateTime::parse_from_rfc3339("2026-12-03T09:00:00Z")
            .unwrap()
            .to_utc();
        let decision =
            crate::schedule::decide(&shoot, &snap, &Profile::upstream_default(), now).unwrap();
        let text = record(&decision, now);
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["v"], 1);
        assert_eq!(v["profile"], decision.profile.as_str());
        assert_eq!(v["time"], "2026-12-03T09:00:00Z");
        assert_eq!(v["seed"], decision.seed.as_str());
        assert_eq!(v["total"], short(decision.winner().total.into_inner()));
        assert_eq!(v["priorities"]["ShootCount"]["weight"], 1.0);
        // two empty seeds score alike: a tie
        assert_eq!(v["margin"], 0.0);
        assert_eq!(v["scheduler"], env!("CARGO_PKG_VERSION"));
        let other = if decision.seed == "seed-a" {
            "seed-b"
        } else {
            "seed-a"
        };
        assert!(!text.contains(other), "no other seed is named: {text}");
        assert!(text.len() <= 1024, "{} bytes", text.len());
    }

    #[test]
    fn the_record_counts_the_seeds_each_filter_rejected_alike_in_both_modes() {
        let mut snap = Snapshot::new();
        snap.upsert_cloud_profile(&CloudProfileBuilder::new("aws").build());
        snap.upsert_seed(&SeedBuilder::new("seed-a").build());
        snap.upsert_seed(&SeedBuilder::new("seed-b").taint("dedicated", None).build());
        snap.upsert_seed(&SeedBuilder::new("seed-c").taint("dedicated", None).build());
        snap.upsert_seed(&SeedBuilder::new("seed-d").provider("gcp").build());
        let shoot = ShootBuilder::new("garden-dev", "web").build();
        let now = Utc::now();
        let profile = Profile::upstream_default();
        let mut fast = crate::schedule::decide(&shoot, &snap, &profile, now).unwrap();
        assert!(
            fast.rejected_by_stage.is_empty(),
            "fast mode counts only when asked"
        );
        fast.rejected_by_stage =
            crate::schedule::rejections_by_stage(&shoot, &snap, &profile, now).unwrap();
        let explain = crate::schedule::schedule(&shoot, &snap, &profile, now).unwrap();
        assert_eq!(fast.rejected_by_stage, explain.rejected_by_stage);
        let v: serde_json::Value = serde_json::from_str(&record(&fast, now)).unwrap();
        let counts = v["rejected"].as_object().unwrap();
        assert_eq!(counts.values().map(|n| n.as_u64().unwrap()).sum::<u64>(), 3);
        assert_eq!(v["rejected"]["Taints"], 2, "{v}");
    }

    #[test]
    fn fast_and_explain_mode_agree_on_the_margin() {
        let mut snap = Snapshot::new();
        snap.upsert_cloud_profile(&CloudProfileBuilder::new("aws").build());
        snap.upsert_seed(&SeedBuilder::new("seed-a").build());
        snap.upsert_seed(&SeedBuilder::new("seed-b").build());
        snap.upsert_seed(&SeedBuilder::new("seed-c").build());
        for (i, seed) in ["seed-a", "seed-a", "seed-b"].iter().enumerate() {
            snap.upsert_shoot(
                &ShootBuilder::new("garden-x", &format!("s{i}"))
                    .seed(seed)
                    .build(),
            );
        }
        let shoot = ShootBuilder::new("garden-dev", "web").build();
        let now = Utc::now();
        let profile = Profile::upstream_default();
        let fast = crate::schedule::decide(&shoot, &snap, &profile, now).unwrap();
        let explain = crate::schedule::schedule(&shoot, &snap, &profile, now).unwrap();
        assert_eq!(fast.seed, "seed-c");
        let margin = fast.margin.unwrap();
        assert!(margin > 0.0, "{margin}");
        assert_eq!(fast.margin, explain.margin);
        let expected = (explain.ranking[0].total - explain.ranking[1].total).into_inner();
        assert_eq!(margin, expected);
    }
}
