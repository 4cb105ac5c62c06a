//! Gardener's region-name distance, used when no region ConfigMap knows a pair of regions.
//!
//! Each name is split at the first orientation word found (checked in the order north, south,
//! east, west, central); the distance is twice the Levenshtein distance of the remaining parts,
//! plus 0 when both have the same orientation or neither has one, 1 when only one has one, and 2
//! when they differ.

const ORIENTATIONS: [&str; 5] = ["north", "south", "east", "west", "central"];

fn split(name: &str) -> (String, Option<&'static str>) {
    for o in ORIENTATIONS {
        if let Some((before, after)) = name.split_once(o) {
            return (format!("{before}:{after}"), Some(o));
        }
    }
    (name.to_string(), None)
}

/// The region-name distance between a seed region and a shoot region.
pub fn region_distance(seed: &str, shoot: &str) -> i64 {
    let (seed_base, seed_o) = split(seed);
    let (shoot_base, shoot_o) = split(shoot);
    let d = strsim::levenshtein(&seed_base, &shoot_base) as i64 * 2;
    match (seed_o, shoot_o) {
        (None, None) => d,
        (Some(a), Some(b)) if a == b => d,
        (Some(_), Some(_)) => d + 2,
        _ => d + 1,
    }
}

#[cfg(test)]
mod tests {
    use super::region_distance;

    #[test]
    fn region_distance_table() {
        let cases = [
            ("eu-west-1", "eu-west-1", 0),
            ("eu-west-1", "eu-west-2", 2),
            ("eu-west-1", "eu-east-1", 2),
            ("eu-north-1", "eu-central-1", 2),
            ("us-east-1", "eu-east-1", 4),
            ("europe-west1", "eu-west-1", 10),
            ("asia-south1", "asia-south1", 0),
            (
                "westeurope",
                "eastus",
                2 * strsim::levenshtein(":europe", ":us") as i64 + 2,
            ),
            ("local", "local-2", 4),
            (
                "eu-west-1",
                "local",
                2 * strsim::levenshtein("eu-:-1", "local") as i64 + 1,
            ),
        ];
        for (seed, shoot, want) in cases {
            assert_eq!(region_distance(seed, shoot), want, "{seed} vs {shoot}");
        }
    }
}
