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
mod tests;
