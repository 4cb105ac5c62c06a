//! The latency sources of a plugin's `matrix` / `matrixFile` / `useRegionConfigMaps` arguments,
//! shared by `LatencyDistance`, `CapacityPressure` and the `MaxLatency` filter: one parser, one
//! set of messages, and the matrix file read once per plugin when the configuration is compiled.

use std::collections::BTreeMap;
use std::path::Path;

use crate::field_error::{FieldError, MAX_LATENCY_MS};
use crate::snapshot::estimate::LatencySources;
use crate::snapshot::latency::{LatencyTable, MAX_COMPLETED_REGIONS};

/// Matrix files larger than this are refused rather than read into memory.
const MAX_MATRIX_FILE_BYTES: u64 = 16 * 1024 * 1024;
/// The latency sources of `matrix` / `matrixFile` / `useRegionConfigMaps` args at `path`,
/// problems are appended to `errors`.
pub(super) fn sources_from_args(
    matrix: Option<&serde_json::Value>,
    matrix_file: Option<&str>,
    use_region_config_maps: bool,
    path: &str,
    errors: &mut Vec<FieldError>,
) -> LatencySources {
    let before = errors.len();
    let known = match (matrix, matrix_file) {
        (Some(_), Some(_)) => {
            errors.push(FieldError::new(
                format!("{path}.matrixFile"),
                "set either matrix or matrixFile, not both",
            ));
            None
        }
        (Some(m), None) => Some(parse_matrix(m, &format!("{path}.matrix"), "", errors)),
        (None, Some(file)) => read_matrix_file(file, &format!("{path}.matrixFile"), errors),
        (None, None) => None,
    };
    // A refused matrix is never built: the table is dense, regions × regions.
    let known = known.filter(|_| errors.len() == before);
    LatencySources {
        matrix: known.map(|k| LatencyTable::new(&k)),
        use_region_config_maps,
    }
}

fn read_matrix_file(
    file: &str,
    path: &str,
    errors: &mut Vec<FieldError>,
) -> Option<BTreeMap<String, BTreeMap<String, f64>>> {
    let text = crate::input::read_bytes(Path::new(file), MAX_MATRIX_FILE_BYTES)
        .and_then(|b| {
            String::from_utf8(b).map_err(|e| crate::input::ReadError::NotUtf8(e.utf8_error()))
        })
        .and_then(|t| {
            crate::input::check_nesting(&t)
                .map(|()| t)
                .map_err(|e| std::io::Error::other(e.to_string()).into())
        })
        .map_err(|e| errors.push(FieldError::new(path, format!("reading {file}: {e}"))))
        .ok()?;
    let value: serde_json::Value = serde_yaml_ng::from_str(&text)
        .map_err(|e| {
            let message = crate::input::yaml_message(&e);
            errors.push(FieldError::new(path, format!("{file}: {message}")))
        })
        .ok()?;
    let mut inner = Vec::new();
    let known = parse_matrix(&value, "", &format!("{file}: "), &mut inner);
    for e in inner {
        errors.push(FieldError::new(path, format!("{}{}", e.path, e.message)));
    }
    Some(known)
}

/// Checks every entry of a `{from: {to: ms}}` mapping. Problems are reported at
/// `path.from.to` (or, with an empty `path`, prefixed to the message after `prefix`).
fn parse_matrix(
    value: &serde_json::Value,
    path: &str,
    prefix: &str,
    errors: &mut Vec<FieldError>,
) -> BTreeMap<String, BTreeMap<String, f64>> {
    let mut err = |at: String, msg: String| {
        if path.is_empty() {
            let at = if at.is_empty() {
                String::new()
            } else {
                format!("{at}: ")
            };
            errors.push(FieldError::new(String::new(), format!("{prefix}{at}{msg}")));
        } else {
            let p = if at.is_empty() {
                path.to_string()
            } else {
                format!("{path}.{at}")
            };
            errors.push(FieldError::new(p, msg));
        }
    };
    let mut out: BTreeMap<String, BTreeMap<String, f64>> = BTreeMap::new();
    let Some(rows) = value.as_object() else {
        if !value.is_null() {
            err(
                String::new(),
                "must be a mapping of region to {region: latency in ms}".into(),
            );
        }
        return out;
    };
    // Counted before anything is built, in one pass: a row of 100,000 columns is refused
    // without a table of 100,000² cells.
    let mut names: std::collections::HashSet<&str> = std::collections::HashSet::new();
    for (from, row) in rows {
        names.insert(from);
        names.extend(
            row.as_object()
                .into_iter()
                .flat_map(|r| r.keys().map(String::as_str)),
        );
        if names.len() > MAX_COMPLETED_REGIONS {
            err(
                String::new(),
                format!(
                    "lists more than {MAX_COMPLETED_REGIONS} regions, at most {MAX_COMPLETED_REGIONS} are supported"
                ),
            );
            return out;
        }
    }
    for (from, row) in rows {
        if from.is_empty() {
            err(String::new(), "region names must not be empty".into());
            continue;
        }
        let Some(row) = row.as_object() else {
            err(
                from.clone(),
                "must be a mapping of region to latency in ms".into(),
            );
            continue;
        };
        let parsed = out.entry(from.clone()).or_default();
        for (to, v) in row {
            if to.is_empty() {
                err(from.clone(), "region names must not be empty".into());
                continue;
            }
            match v.as_f64() {
                Some(ms) if ms > MAX_LATENCY_MS => err(
                    format!("{from}.{to}"),
                    format!("latency must be at most {MAX_LATENCY_MS} ms, got {v}"),
                ),
                Some(ms) if ms.is_finite() && ms >= 0.0 => {
                    parsed.insert(to.clone(), ms);
                }
                Some(ms) if ms < 0.0 => err(
                    format!("{from}.{to}"),
                    format!("latency {}", crate::field_error::not_negative(v)),
                ),
                _ => err(
                    format!("{from}.{to}"),
                    format!("latency must be a number of ms, got {v}"),
                ),
            }
        }
    }
    let mut regions: Vec<&String> = out
        .iter()
        .flat_map(|(f, r)| std::iter::once(f).chain(r.keys()))
        .collect();
    regions.sort_unstable();
    regions.dedup();
    if regions.len() > MAX_COMPLETED_REGIONS {
        err(
            String::new(),
            format!(
                "lists {} regions, at most {MAX_COMPLETED_REGIONS} are supported",
                regions.len()
            ),
        );
    }
    out
}
