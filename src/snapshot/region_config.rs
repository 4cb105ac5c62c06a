//! Gardener's region ConfigMaps: `data[<shoot region>]` is YAML `{<seed region>: <distance>}`.

use std::collections::BTreeMap;

use crate::api::{
    ANNOTATION_CLOUDPROFILES, ConfigMap, LABEL_SCHEDULING_PURPOSE, PURPOSE_REGION_CONFIG,
};

use super::GARDEN_NAMESPACE;

/// Largest value accepted for one region's entry; larger entries are rejected unparsed, which
/// also bounds what an alias-expanding YAML document can cost.
const MAX_ENTRY_BYTES: usize = 256 * 1024;
/// Largest distance accepted: upstream compares against a 32-bit maximum.
const MAX_DISTANCE: i64 = i32::MAX as i64 - 1;

/// One region ConfigMap, each region's row parsed once when the ConfigMap changes.
#[derive(Clone, Debug, PartialEq)]
pub struct RegionConfig {
    /// `namespace/name`, for messages.
    pub name: String,
    pub cloud_profiles: Vec<String>,
    /// shoot region -> (seed region -> distance), or why that row is malformed.
    pub rows: BTreeMap<String, Result<BTreeMap<String, i64>, String>>,
}

impl RegionConfig {
    /// `None` unless the ConfigMap is a region config in the garden namespace.
    pub fn from_config_map(cm: &ConfigMap) -> Option<RegionConfig> {
        let labelled = cm
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(LABEL_SCHEDULING_PURPOSE))
            .is_some_and(|v| v == PURPOSE_REGION_CONFIG);
        if !labelled || cm.metadata.namespace.as_deref() != Some(GARDEN_NAMESPACE) {
            return None;
        }
        let cloud_profiles = cm
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(ANNOTATION_CLOUDPROFILES))
            .map(|v| {
                v.split(',')
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect()
            })
            .unwrap_or_default();
        let rows = cm
            .data
            .iter()
            .flatten()
            .filter(|(_, yaml)| !yaml.is_empty())
            .map(|(region, yaml)| (region.clone(), parse_region_distances(yaml)))
            .collect();
        Some(RegionConfig {
            name: format!(
                "{}/{}",
                cm.metadata.namespace.as_deref().unwrap_or_default(),
                cm.metadata.name.as_deref().unwrap_or_default()
            ),
            cloud_profiles,
            rows,
        })
    }

    /// The distances from a shoot region, with the region itself at 0 unless listed.
    /// `None` when the ConfigMap has no row for the region.
    pub fn distances_from(&self, region: &str) -> Option<Result<BTreeMap<String, i64>, String>> {
        let row = self.rows.get(region)?;
        Some(row.clone().map(|mut d| {
            d.entry(region.to_string()).or_insert(0);
            d
        }))
    }
}

/// Parses one row: a YAML mapping of region name to a non-negative integer distance.
pub fn parse_region_distances(yaml: &str) -> Result<BTreeMap<String, i64>, String> {
    if yaml.len() > MAX_ENTRY_BYTES {
        return Err(format!(
            "entry is {} bytes, more than the {MAX_ENTRY_BYTES} accepted",
            yaml.len()
        ));
    }
    if yaml.trim().is_empty() {
        return Ok(BTreeMap::new());
    }
    let raw: BTreeMap<String, serde_yaml_ng::Value> = serde_yaml_ng::from_str(yaml)
        .map_err(|e| format!("not a mapping of region to distance: {e}"))?;
    let mut out = BTreeMap::new();
    for (region, v) in raw {
        let d = v
            .as_i64()
            .ok_or_else(|| format!("{region}: distance {} is not an integer", render(&v)))?;
        if d < 0 {
            return Err(format!("{region}: distance {d} is negative"));
        }
        if d > MAX_DISTANCE {
            return Err(format!(
                "{region}: distance {d} is larger than {MAX_DISTANCE}"
            ));
        }
        out.insert(region, d);
    }
    Ok(out)
}

fn render(v: &serde_yaml_ng::Value) -> String {
    serde_yaml_ng::to_string(v)
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "?".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn well_formed_row_parses() {
        let d = parse_region_distances("eu-west-1: 20\nus-east-1: 80\n").unwrap();
        assert_eq!(d["eu-west-1"], 20);
        assert_eq!(d["us-east-1"], 80);
    }

    #[test]
    fn malformed_rows_are_errors_naming_the_region() {
        let cases = [
            ("a: far\n", "a: distance far is not an integer"),
            ("a: -1\n", "a: distance -1 is negative"),
            ("a: 1.5\n", "a: distance 1.5 is not an integer"),
            ("a: 99999999999\n", "a: distance 99999999999 is larger than"),
            ("[1, 2]\n", "not a mapping"),
        ];
        for (yaml, want) in cases {
            let err = parse_region_distances(yaml).unwrap_err();
            assert!(err.contains(want), "{yaml:?}: got {err:?}, want {want:?}");
        }
    }

    #[test]
    fn oversized_rows_are_rejected_before_parsing() {
        let yaml = "a: 1\n".repeat(MAX_ENTRY_BYTES / 4);
        assert!(parse_region_distances(&yaml).unwrap_err().contains("bytes"));
    }
}
