//! Gardener's region ConfigMaps: `data[<shoot region>]` is YAML `{<seed region>: <distance>}`.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::api::{
    ANNOTATION_CLOUDPROFILES, ConfigMap, LABEL_SCHEDULING_PURPOSE, PURPOSE_REGION_CONFIG,
};

use super::GARDEN_NAMESPACE;
use super::latency::LatencyTable;

/// Largest value accepted for one region's entry; larger entries are rejected unparsed, which
/// also bounds what an alias-expanding YAML document can cost.
const MAX_ENTRY_BYTES: usize = 256 * 1024;

/// One region ConfigMap, each region's row parsed once when the ConfigMap changes.
#[derive(Clone, Debug, PartialEq)]
pub struct RegionConfig {
    /// `namespace/name`, for messages.
    pub name: String,
    pub cloud_profiles: Vec<String>,
    /// shoot region -> (seed region -> distance), or why that row is malformed.
    pub rows: BTreeMap<String, Result<BTreeMap<String, i64>, String>>,
    /// The well-formed rows as a completed latency table (distances read as milliseconds),
    /// built here so that it is rebuilt exactly when the ConfigMap changes.
    pub latency: Arc<LatencyTable>,
}

impl RegionConfig {
    /// `None` unless the ConfigMap is a region config in the garden namespace.
    pub fn from_config_map(cm: &ConfigMap) -> Option<RegionConfig> {
        Self::parse(cm, None)
    }

    /// Like [`RegionConfig::from_config_map`], keeping `previous`'s latency table when the rows
    /// did not change, so that a resync does not redo the completion.
    pub(super) fn parse(cm: &ConfigMap, previous: Option<&RegionConfig>) -> Option<RegionConfig> {
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
        let latency = match previous {
            Some(p) if p.rows == rows => p.latency.clone(),
            _ => Arc::new(latency_table(&rows)),
        };
        Some(RegionConfig {
            name: format!(
                "{}/{}",
                cm.metadata.namespace.as_deref().unwrap_or_default(),
                cm.metadata.name.as_deref().unwrap_or_default()
            ),
            cloud_profiles,
            rows,
            latency,
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

fn latency_table(rows: &BTreeMap<String, Result<BTreeMap<String, i64>, String>>) -> LatencyTable {
    let known: BTreeMap<String, BTreeMap<String, f64>> = rows
        .iter()
        .filter_map(|(from, row)| {
            let row = row.as_ref().ok()?;
            // A negative distance orders seeds for `MinimalDistance` but is no latency.
            Some((
                from.clone(),
                row.iter()
                    .filter(|(_, d)| **d >= 0)
                    .map(|(to, d)| (to.clone(), *d as f64))
                    .collect(),
            ))
        })
        .collect();
    LatencyTable::new(&known)
}

/// Parses one row: a YAML mapping of region name to an integer distance, read as upstream
/// reads it (into Go's `map[string]int`): negative distances are accepted, `null` is 0, and
/// anything that is not a 64-bit integer makes the row malformed.
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
    let raw: BTreeMap<String, serde_yaml_ng::Value> =
        serde_yaml_ng::from_str(yaml).map_err(|e| {
            format!(
                "not a mapping of region to distance: {}",
                crate::field_error::serde_message(&crate::input::yaml_message(&e))
            )
        })?;
    let mut out = BTreeMap::new();
    for (region, v) in raw {
        let d = if v.is_null() {
            0
        } else {
            v.as_i64()
                .ok_or_else(|| format!("{region}: distance {} is not an integer", render(&v)))?
        };
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
    fn rows_read_as_upstream_reads_them() {
        let cases = [
            ("a negative distance is accepted", "a: -5\n", -5),
            ("null is distance 0", "a: null\n", 0),
            (
                "a distance beyond 32 bits is kept",
                "a: 99999999999\n",
                99_999_999_999,
            ),
        ];
        for (name, yaml, want) in cases {
            let d = parse_region_distances(yaml).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(d["a"], want, "{name}");
        }
    }

    #[test]
    fn negative_distances_are_left_out_of_the_latency_table() {
        let mut snap = crate::snapshot::Snapshot::new();
        snap.upsert_config_map(&region_cm(&[("a", "b: -10\nc: 5\n")]));
        let table = snap.region_config_for("aws").unwrap().latency.clone();
        let row = table.row("a").unwrap();
        assert!(row.to("b").is_err(), "a negative distance is no latency");
        assert_eq!(row.to("c").map(|l| l.ms), Ok(5.0));
    }

    #[test]
    fn malformed_rows_are_errors_naming_the_region() {
        let cases = [
            ("a: far\n", "a: distance far is not an integer"),
            ("a: 1.5\n", "a: distance 1.5 is not an integer"),
            ("a: 99999999999999999999\n", "99999999999999999999"),
            ("[1, 2]\n", "not a mapping"),
        ];
        for (yaml, want) in cases {
            let err = parse_region_distances(yaml).unwrap_err();
            assert!(err.contains(want), "{yaml:?}: got {err:?}, want {want:?}");
        }
        // Words, not the parser's: nesting, a number past 2^64, a list where a distance belongs.
        let deep = format!("a: {}{}\n", "[".repeat(10_000), "]".repeat(10_000));
        let cases = [
            (deep.as_str(), "nested deeper than 128 levels"),
            ("a: 18446744073709551616\n", "18446744073709551616"),
            ("a: 1e20\n", "a: distance 1e20 is not an integer"),
            ("a: [1]\n", "a: distance"),
        ];
        for (yaml, want) in cases {
            let err = parse_region_distances(yaml).unwrap_err();
            assert!(err.contains(want), "{want:?}: {err}");
            for words in ["recursion limit", "invalid type", "as u128"] {
                assert!(!err.contains(words), "{err}");
            }
        }
    }

    fn region_cm(rows: &[(&str, &str)]) -> ConfigMap {
        let mut cm = ConfigMap::default();
        cm.metadata.name = Some("regions".into());
        cm.metadata.namespace = Some(GARDEN_NAMESPACE.into());
        cm.metadata.labels = Some(BTreeMap::from([(
            LABEL_SCHEDULING_PURPOSE.to_string(),
            PURPOSE_REGION_CONFIG.to_string(),
        )]));
        cm.metadata.annotations = Some(BTreeMap::from([(
            ANNOTATION_CLOUDPROFILES.to_string(),
            "aws".to_string(),
        )]));
        cm.data = Some(
            rows.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        );
        cm
    }

    #[test]
    fn the_latency_table_is_rebuilt_only_when_the_rows_change() {
        let mut snap = crate::snapshot::Snapshot::new();
        snap.upsert_config_map(&region_cm(&[("a", "b: 10\n"), ("b", "c: 5\n")]));
        let first = snap.region_config_for("aws").unwrap().latency.clone();
        let ms = |t: &LatencyTable| t.row("a").unwrap().to("c").map(|l| l.ms);
        assert_eq!(ms(&first), Ok(15.0));

        let mut resync = region_cm(&[("a", "b: 10\n"), ("b", "c: 5\n")]);
        resync.metadata.resource_version = Some("2".into());
        snap.upsert_config_map(&resync);
        assert!(Arc::ptr_eq(
            &first,
            &snap.region_config_for("aws").unwrap().latency
        ));

        snap.upsert_config_map(&region_cm(&[("a", "b: 10\n"), ("b", "c: 50\n")]));
        let changed = snap.region_config_for("aws").unwrap().latency.clone();
        assert!(!Arc::ptr_eq(&first, &changed));
        assert_eq!(ms(&changed), Ok(60.0));
    }

    #[test]
    fn of_several_region_configmaps_for_one_profile_the_first_by_name_is_used_whatever_the_order_seen()
     {
        // Upstream takes the first its informer cache lists, an order nobody controls; a
        // deliberate difference (docs/concepts/scheduler.md, "Differences from upstream").
        let named = |name: &str, row: &str| {
            let mut cm = region_cm(&[("a", row)]);
            cm.metadata.name = Some(name.into());
            cm
        };
        let first = named("a-regions", "b: 1\n");
        let second = named("b-regions", "b: 2\n");
        for order in [[&first, &second], [&second, &first]] {
            let mut snap = crate::snapshot::Snapshot::new();
            for cm in order {
                snap.upsert_config_map(cm);
            }
            let rc = snap.region_config_for("aws").unwrap();
            assert_eq!(rc.name, "garden/a-regions");
            assert_eq!(rc.distances_from("a").unwrap().unwrap()["b"], 1);
        }
    }

    #[test]
    fn oversized_rows_are_rejected_before_parsing() {
        let yaml = "a: 1\n".repeat(MAX_ENTRY_BYTES / 4);
        assert!(parse_region_distances(&yaml).unwrap_err().contains("bytes"));
    }
}
