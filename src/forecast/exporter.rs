//! The carbon-intensity exporter's ConfigMap, read as the exporter writes it.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use super::{CarbonError, Forecasts, parse_points};
use crate::api::ConfigMap;

/// The `data` key holding the exporter's last successful refresh.
pub const HEARTBEAT_KEY: &str = "lastHeartbeatTime";
/// The `data` key holding the exporter's note to users, if any.
pub const MESSAGE_KEY: &str = "message";

/// One exporter ConfigMap, parsed once when it changes. Every `binaryData` key is parsed, so
/// that the key a priority reads (`configMapKey`) needs no coordination with the snapshot.
#[derive(Clone, Debug, PartialEq)]
pub struct ExporterData {
    /// `namespace/name`, for messages.
    pub name: String,
    /// `data.lastHeartbeatTime`; `Ok(None)` when absent.
    pub heartbeat: Result<Option<DateTime<Utc>>, CarbonError>,
    /// `data.message`, when not empty.
    pub message: Option<String>,
    /// `binaryData` key -> forecasts by location, or why that payload is malformed.
    pub payloads: BTreeMap<String, Result<Forecasts, CarbonError>>,
}

impl ExporterData {
    pub fn from_config_map(cm: &ConfigMap) -> ExporterData {
        let data = cm.data.as_ref();
        let get = |k: &str| data.and_then(|d| d.get(k)).filter(|v| !v.trim().is_empty());
        let heartbeat = match get(HEARTBEAT_KEY) {
            None => Ok(None),
            Some(raw) => {
                parse_heartbeat(raw)
                    .map(Some)
                    .ok_or_else(|| CarbonError::ParseHeartbeat {
                        field: format!("data.{HEARTBEAT_KEY}"),
                        message: format!(
                            "{raw:?} is not a timestamp (RFC 3339 or Go's time format)"
                        ),
                    })
            }
        };
        let payloads = cm
            .binary_data
            .iter()
            .flatten()
            .map(|(k, v)| (k.clone(), parse_points(&v.0, &format!("binaryData.{k}"))))
            .collect();
        ExporterData {
            name: format!(
                "{}/{}",
                cm.metadata.namespace.as_deref().unwrap_or_default(),
                cm.metadata.name.as_deref().unwrap_or_default()
            ),
            heartbeat,
            message: get(MESSAGE_KEY).cloned(),
            payloads,
        }
    }

    /// The forecasts under `key`, or why there are none.
    pub fn forecasts(&self, key: &str) -> Result<&Forecasts, CarbonError> {
        match self.payloads.get(key) {
            Some(Ok(f)) => {
                self.heartbeat.as_ref().map_err(Clone::clone)?;
                Ok(f)
            }
            Some(Err(e)) => Err(e.clone()),
            None => Err(CarbonError::forecast(
                format!("binaryData.{key}"),
                if self.payloads.is_empty() {
                    "is missing (the ConfigMap has no binaryData)".to_string()
                } else {
                    format!(
                        "is missing (binaryData has {})",
                        self.payloads
                            .keys()
                            .map(|k| format!("{k:?}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                },
            )),
        }
    }

    /// The locations of every payload that parsed.
    pub fn locations(&self) -> impl Iterator<Item = &String> {
        self.payloads
            .values()
            .filter_map(|p| p.as_ref().ok())
            .flat_map(|f| f.keys())
    }

    pub fn heartbeat(&self) -> Option<DateTime<Utc>> {
        self.heartbeat.as_ref().ok().copied().flatten()
    }
}

/// Parses a heartbeat: RFC 3339, or what Go's `time.Time.String()` prints
/// (`2023-03-30 23:57:26.041158869 +0000 UTC m=+10.861427049`), which the exporter writes.
pub fn parse_heartbeat(raw: &str) -> Option<DateTime<Utc>> {
    let raw = raw.trim();
    if let Ok(t) = DateTime::parse_from_rfc3339(raw) {
        return Some(t.to_utc());
    }
    // Drop the monotonic clock reading and the zone abbreviation; the numeric offset decides.
    let without_mono = raw.split(" m=").next().unwrap_or(raw);
    let fields: Vec<&str> = without_mono.split_whitespace().collect();
    let [date, time, offset, ..] = fields[..] else {
        return None;
    };
    if fields.len() > 4 {
        return None;
    }
    DateTime::parse_from_str(
        &format!("{date} {time} {offset}"),
        "%Y-%m-%d %H:%M:%S%.f %z",
    )
    .ok()
    .map(|t| t.to_utc())
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::ByteString;

    fn cm(data: &[(&str, &str)], binary: &[(&str, &str)]) -> ConfigMap {
        let mut cm = ConfigMap::default();
        cm.metadata.name = Some("carbon-eu".into());
        cm.metadata.namespace = Some("kube-system".into());
        cm.data = Some(
            data.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        );
        cm.binary_data = Some(
            binary
                .iter()
                .map(|(k, v)| (k.to_string(), ByteString(v.as_bytes().to_vec())))
                .collect(),
        );
        cm
    }

    const POINTS: &str =
        r#"[{"location":"eu","timestamp":"2026-12-01T00:00:00Z","duration":5,"value":212}]"#;

    #[test]
    fn heartbeats_in_rfc3339_and_go_format_parse() {
        let want = DateTime::parse_from_rfc3339("2023-03-30T23:57:26.041158869Z")
            .unwrap()
            .to_utc();
        for raw in [
            "2023-03-30T23:57:26.041158869Z",
            "2023-03-30 23:57:26.041158869 +0000 UTC m=+10.861427049",
            "2023-03-30 23:57:26.041158869 +0000 UTC",
            "2023-03-31 01:57:26.041158869 +0200 CEST",
            "2023-03-30 23:57:26.041158869 +0000",
        ] {
            assert_eq!(parse_heartbeat(raw), Some(want), "{raw}");
        }
        for raw in [
            "",
            "yesterday",
            "2023-03-30",
            "2023-03-30 23:57:26 +0000 UTC extra",
        ] {
            assert_eq!(parse_heartbeat(raw), None, "{raw}");
        }
    }

    #[test]
    fn the_exporters_configmap_is_read_as_is() {
        let d = ExporterData::from_config_map(&cm(
            &[
                (
                    "lastHeartbeatTime",
                    "2026-12-01 00:07:00.5 +0000 UTC m=+1.0",
                ),
                ("message", ""),
                ("numOfRecords", "1"),
                ("forecastDateTime", "2026-12-01 00:00:00 +0000 UTC"),
                ("minForecast", "212.000000"),
                ("maxForecast", "212.000000"),
            ],
            &[("data", POINTS)],
        ));
        assert_eq!(d.name, "kube-system/carbon-eu");
        assert_eq!(
            d.heartbeat().unwrap().to_rfc3339(),
            "2026-12-01T00:07:00.500+00:00"
        );
        assert_eq!(d.message, None);
        let f = d.forecasts("data").unwrap();
        assert_eq!(f["eu"].points()[0].value, 212.0);
        assert_eq!(d.locations().collect::<Vec<_>>(), ["eu"]);
    }

    #[test]
    fn a_missing_key_names_the_keys_present() {
        let d = ExporterData::from_config_map(&cm(&[], &[("data", POINTS)]));
        assert_eq!(
            d.forecasts("forecast").unwrap_err().to_string(),
            "binaryData.forecast: is missing (binaryData has \"data\")"
        );
        let empty = ExporterData::from_config_map(&cm(&[], &[]));
        assert_eq!(
            empty.forecasts("data").unwrap_err().to_string(),
            "binaryData.data: is missing (the ConfigMap has no binaryData)"
        );
    }

    #[test]
    fn a_malformed_heartbeat_makes_the_payload_unusable() {
        let d = ExporterData::from_config_map(&cm(
            &[("lastHeartbeatTime", "soon")],
            &[("data", POINTS)],
        ));
        let err = d.forecasts("data").unwrap_err().to_string();
        assert!(
            err.starts_with("data.lastHeartbeatTime: \"soon\" is not a timestamp"),
            "{err}"
        );
        assert_eq!(d.locations().count(), 1, "its locations are still known");
    }

    #[test]
    fn a_malformed_payload_keeps_its_error_per_key() {
        let d = ExporterData::from_config_map(&cm(&[], &[("data", "[{]"), ("other", POINTS)]));
        assert!(
            d.forecasts("data")
                .unwrap_err()
                .to_string()
                .starts_with("binaryData.data: not valid JSON")
        );
        assert!(d.forecasts("other").is_ok());
    }
}
