//! Forecast points: parsed and checked once, then looked up per decision.

use std::collections::BTreeMap;
use std::path::Path;

use chrono::{DateTime, TimeDelta, Utc};
use serde_json::Value;

use super::{CarbonError, MAX_PAYLOAD_BYTES, MAX_POINT_MINUTES, MAX_POINTS};

/// One forecast interval `[start, end)` with its intensity in gCO2eq/kWh.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
    pub value: f64,
}

/// One location's points, sorted by start and free of overlaps (checked when parsed), so that
/// lookups can bisect and the horizon walk can detect gaps.
#[derive(Clone, Debug, PartialEq)]
pub struct Forecast {
    points: Vec<Point>,
}

/// Forecasts by location.
pub type Forecasts = BTreeMap<String, Forecast>;

/// How the expected value was obtained from the points.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Coverage {
    /// The points cover the whole horizon without gaps: their time-weighted mean.
    Horizon,
    /// The points cover only `covered` of the horizon: the current point alone.
    CurrentPoint { covered: TimeDelta },
    /// Every point has ended (`ago`), but the data is not stale yet: the last point.
    LastPoint { ago: TimeDelta },
}

impl Forecast {
    /// Builds a forecast from points in any order; overlapping points are an error (their
    /// indices are those of `points`).
    pub fn new(points: Vec<Point>) -> Result<Forecast, (usize, usize)> {
        let mut indexed: Vec<(usize, Point)> = points.into_iter().enumerate().collect();
        indexed.sort_by(|a, b| a.1.start.cmp(&b.1.start).then(a.0.cmp(&b.0)));
        for w in indexed.windows(2) {
            if w[1].1.start < w[0].1.end {
                return Err((w[0].0.min(w[1].0), w[0].0.max(w[1].0)));
            }
        }
        Ok(Forecast {
            points: indexed.into_iter().map(|(_, p)| p).collect(),
        })
    }

    pub fn points(&self) -> &[Point] {
        &self.points
    }

    pub fn first_start(&self) -> DateTime<Utc> {
        self.points[0].start
    }

    pub fn last(&self) -> &Point {
        &self.points[self.points.len() - 1]
    }

    /// The point with `start <= t < end`.
    pub fn point_at(&self, t: DateTime<Utc>) -> Option<&Point> {
        let i = self.points.partition_point(|p| p.end <= t);
        self.points.get(i).filter(|p| p.start <= t)
    }

    /// Past the last point by `margin` or more: whatever the forecast said no longer applies.
    pub fn ended_before(&self, now: DateTime<Utc>, margin: TimeDelta) -> bool {
        self.last()
            .end
            .checked_add_signed(margin)
            .is_none_or(|limit| now >= limit)
    }

    /// The default staleness limit: two point durations past the end of the last point.
    pub fn default_margin(&self) -> TimeDelta {
        let last = self.last();
        (last.end - last.start) * 2
    }

    /// The expected intensity at `now` over `horizon`: the time-weighted mean of the points
    /// when they cover `[now, now + horizon)` without gaps, else the current point, else (when
    /// every point has ended) the last one. `None` when `now` lies before the first point or in
    /// a gap. Staleness is the caller's business.
    pub fn expected(&self, now: DateTime<Utc>, horizon: TimeDelta) -> Option<(f64, Coverage)> {
        let i = self.points.partition_point(|p| p.end <= now);
        let Some(current) = self.points.get(i).filter(|p| p.start <= now) else {
            let last = self.last();
            return (now >= last.end).then(|| {
                (
                    last.value,
                    Coverage::LastPoint {
                        ago: now - last.end,
                    },
                )
            });
        };
        let Some(until) = now.checked_add_signed(horizon) else {
            return Some((
                current.value,
                Coverage::CurrentPoint {
                    covered: TimeDelta::zero(),
                },
            ));
        };
        let mut t = now;
        let mut weighted = 0.0;
        for p in &self.points[i..] {
            if t >= until || p.start > t {
                break;
            }
            let seg_end = p.end.min(until);
            weighted += p.value * (seg_end - t).num_milliseconds() as f64;
            t = seg_end;
        }
        if t >= until {
            let total = horizon.num_milliseconds() as f64;
            Some((weighted / total, Coverage::Horizon))
        } else {
            Some((current.value, Coverage::CurrentPoint { covered: t - now }))
        }
    }
}

/// Parses a JSON array of exporter points, grouped by location. `base` prefixes every field
/// path in errors (`binaryData.data`, or a file name).
pub fn parse_points(bytes: &[u8], base: &str) -> Result<Forecasts, CarbonError> {
    if bytes.len() > MAX_PAYLOAD_BYTES {
        return Err(CarbonError::forecast(
            base,
            format!(
                "payload is {} bytes, more than the {MAX_PAYLOAD_BYTES} accepted",
                bytes.len()
            ),
        ));
    }
    let items: Vec<Value> = match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Array(items)) => items,
        Ok(other) => {
            return Err(CarbonError::forecast(
                base,
                format!("expected a JSON array of points, got {}", kind_of(&other)),
            ));
        }
        Err(e) => {
            let message = crate::field_error::serde_message(&e.to_string());
            return Err(CarbonError::forecast(
                base,
                format!("not valid JSON: {message}"),
            ));
        }
    };
    if items.is_empty() {
        return Err(CarbonError::forecast(base, "holds no points"));
    }
    if items.len() > MAX_POINTS {
        return Err(CarbonError::forecast(
            base,
            format!(
                "holds {} points, more than the {MAX_POINTS} accepted",
                items.len()
            ),
        ));
    }
    let mut by_location: BTreeMap<String, Vec<(usize, Point)>> = BTreeMap::new();
    for (i, item) in items.iter().enumerate() {
        let (location, point) = parse_point(item, &format!("{base}[{i}]"))?;
        by_location.entry(location).or_default().push((i, point));
    }
    let mut out = Forecasts::new();
    for (location, indexed) in by_location {
        let (idx, points): (Vec<usize>, Vec<Point>) = indexed.into_iter().unzip();
        let forecast = Forecast::new(points).map_err(|(a, b)| {
            CarbonError::forecast(
                format!("{base}[{}]", idx[b]),
                format!(
                    "overlaps {base}[{}] for location {location:?}: points must not overlap",
                    idx[a]
                ),
            )
        })?;
        out.insert(location, forecast);
    }
    Ok(out)
}

fn parse_point(item: &Value, path: &str) -> Result<(String, Point), CarbonError> {
    let Value::Object(obj) = item else {
        return Err(CarbonError::forecast(
            path,
            format!("expected an object, got {}", kind_of(item)),
        ));
    };
    let field = |name: &str| {
        obj.get(name)
            .filter(|v| !v.is_null())
            .ok_or_else(|| CarbonError::forecast(format!("{path}.{name}"), "is required"))
    };
    let bad =
        |name: &str, message: String| CarbonError::forecast(format!("{path}.{name}"), message);

    let location = match field("location")? {
        Value::String(s) if !s.trim().is_empty() => s.clone(),
        Value::String(_) => return Err(bad("location", "must not be empty".into())),
        other => {
            return Err(bad(
                "location",
                format!("must be a string, got {}", render(other)),
            ));
        }
    };
    let start = match field("timestamp")? {
        Value::String(s) => DateTime::parse_from_rfc3339(s)
            .map(|t| t.to_utc())
            .map_err(|e| {
                bad(
                    "timestamp",
                    format!("{s:?} is not an RFC 3339 timestamp: {e}"),
                )
            })?,
        other => {
            return Err(bad(
                "timestamp",
                format!("must be an RFC 3339 string, got {}", render(other)),
            ));
        }
    };
    let duration = field("duration")?;
    let minutes = duration
        .as_i64()
        .or_else(|| {
            duration
                .as_f64()
                .filter(|f| f.fract() == 0.0 && f.abs() < 1e15)
                .map(|f| f as i64)
        })
        .filter(|m| (1..=MAX_POINT_MINUTES).contains(m))
        .ok_or_else(|| {
            bad(
                "duration",
                format!(
                    "must be a whole number of minutes between 1 and {MAX_POINT_MINUTES}, got {}",
                    render(duration)
                ),
            )
        })?;
    let value = match field("value")? {
        Value::Number(n) => n
            .as_f64()
            .filter(|v| v.is_finite())
            .ok_or_else(|| bad("value", format!("must be a finite number, got {n}")))?,
        other => {
            return Err(bad(
                "value",
                format!("must be a number, got {}", render(other)),
            ));
        }
    };
    if value < 0.0 {
        return Err(bad(
            "value",
            crate::field_error::not_negative(format!("{value} gCO2eq/kWh")),
        ));
    }
    let end = start
        .checked_add_signed(TimeDelta::minutes(minutes))
        .ok_or_else(|| bad("timestamp", "is too far in the future".into()))?;
    Ok((location, Point { start, end, value }))
}

/// Reads a JSON points file (`pointsFile`), refusing files larger than the payload limit.
pub fn read_points_file(path: &Path) -> Result<Forecasts, CarbonError> {
    let shown = path.display().to_string();
    let bytes = crate::input::read_bytes(path, MAX_PAYLOAD_BYTES as u64).map_err(|e| {
        CarbonError::ReadPointsFile {
            path: shown.clone(),
            message: e.to_string(),
        }
    })?;
    parse_points(&bytes, &shown)
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A short rendering of an offending value for messages.
fn render(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 40 {
        format!("{}...", s.chars().take(40).collect::<String>())
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().to_utc()
    }

    /// `(start, minutes, value)` points for location "L", as exporter JSON.
    fn json(points: &[(&str, i64, f64)]) -> Vec<u8> {
        let v: Vec<Value> = points
            .iter()
            .map(|(ts, d, v)| serde_json::json!({"location": "L", "timestamp": ts, "duration": d, "value": v}))
            .collect();
        serde_json::to_vec(&v).unwrap()
    }

    fn forecast(points: &[(&str, i64, f64)]) -> Forecast {
        parse_points(&json(points), "data")
            .unwrap()
            .remove("L")
            .unwrap()
    }

    #[test]
    fn point_lookup_is_inclusive_at_the_start_and_exclusive_at_the_end() {
        let f = forecast(&[
            ("2026-12-01T00:00:00Z", 5, 100.0),
            ("2026-12-01T00:05:00Z", 5, 200.0),
        ]);
        let cases = [
            ("2026-11-30T23:59:59Z", None),
            ("2026-12-01T00:00:00Z", Some(100.0)),
            ("2026-12-01T00:04:59.999Z", Some(100.0)),
            ("2026-12-01T00:05:00Z", Some(200.0)),
            ("2026-12-01T00:09:59Z", Some(200.0)),
            ("2026-12-01T00:10:00Z", None),
        ];
        for (at, want) in cases {
            assert_eq!(f.point_at(t(at)).map(|p| p.value), want, "at {at}");
        }
    }

    #[test]
    fn expected_value_per_coverage_of_the_horizon() {
        // Four hourly points from 00:00 to 04:00, a gap, then one from 05:00 to 06:00.
        let f = forecast(&[
            ("2026-12-01T00:00:00Z", 60, 100.0),
            ("2026-12-01T01:00:00Z", 60, 200.0),
            ("2026-12-01T02:00:00Z", 60, 300.0),
            ("2026-12-01T03:00:00Z", 60, 400.0),
            ("2026-12-01T05:00:00Z", 60, 900.0),
        ]);
        let h = TimeDelta::hours;
        type Case<'a> = (&'a str, &'a str, TimeDelta, Option<(f64, Coverage)>);
        let cases: [Case; 8] = [
            (
                "whole horizon covered at a point boundary: plain mean",
                "2026-12-01T00:00:00Z",
                h(2),
                Some((150.0, Coverage::Horizon)),
            ),
            (
                "horizon starting mid-point: the first and last points count partly",
                "2026-12-01T00:30:00Z",
                h(2),
                // 30 min × 100 + 60 min × 200 + 30 min × 300, over 120 min
                Some((200.0, Coverage::Horizon)),
            ),
            (
                "horizon ending exactly where the points end is covered",
                "2026-12-01T01:00:00Z",
                h(3),
                Some((300.0, Coverage::Horizon)),
            ),
            (
                "horizon longer than the points: the current point alone",
                "2026-12-01T01:30:00Z",
                h(24),
                Some((
                    200.0,
                    Coverage::CurrentPoint {
                        covered: TimeDelta::minutes(150),
                    },
                )),
            ),
            (
                "a gap inside the horizon counts as partial coverage",
                "2026-12-01T03:00:00Z",
                h(3),
                Some((
                    400.0,
                    Coverage::CurrentPoint {
                        covered: TimeDelta::hours(1),
                    },
                )),
            ),
            ("now in a gap: no value", "2026-12-01T04:30:00Z", h(1), None),
            (
                "now before the first point: no value",
                "2026-11-30T23:00:00Z",
                h(1),
                None,
            ),
            (
                "after the last point: the last point",
                "2026-12-01T06:10:00Z",
                h(1),
                Some((
                    900.0,
                    Coverage::LastPoint {
                        ago: TimeDelta::minutes(10),
                    },
                )),
            ),
        ];
        for (name, now, horizon, want) in cases {
            assert_eq!(f.expected(t(now), horizon), want, "{name}");
        }
    }

    #[test]
    fn unsorted_points_are_sorted_before_use() {
        let f = forecast(&[
            ("2026-12-01T02:00:00Z", 60, 300.0),
            ("2026-12-01T00:00:00Z", 60, 100.0),
            ("2026-12-01T01:00:00Z", 60, 200.0),
        ]);
        let starts: Vec<_> = f.points().iter().map(|p| p.value).collect();
        assert_eq!(starts, [100.0, 200.0, 300.0]);
        assert_eq!(
            f.expected(t("2026-12-01T00:00:00Z"), TimeDelta::hours(3)),
            Some((200.0, Coverage::Horizon))
        );
    }

    #[test]
    fn value_zero_is_a_valid_reading() {
        let f = forecast(&[("2026-12-01T00:00:00Z", 60, 0.0)]);
        assert_eq!(
            f.expected(t("2026-12-01T00:00:00Z"), TimeDelta::hours(1)),
            Some((0.0, Coverage::Horizon))
        );
    }

    #[test]
    fn points_of_several_locations_are_grouped() {
        let body = br#"[
            {"location": "b", "timestamp": "2026-12-01T00:00:00Z", "duration": 5, "value": 2},
            {"location": "a", "timestamp": "2026-12-01T00:00:00Z", "duration": 5, "value": 1}
        ]"#;
        let f = parse_points(body, "data").unwrap();
        assert_eq!(f.keys().collect::<Vec<_>>(), ["a", "b"]);
    }

    #[test]
    fn offsets_other_than_utc_are_converted() {
        let body = br#"[{"location": "a", "timestamp": "2026-12-01T01:00:00+01:00", "duration": 5, "value": 2}]"#;
        let f = parse_points(body, "data").unwrap();
        assert_eq!(f["a"].first_start(), t("2026-12-01T00:00:00Z"));
    }

    #[test]
    fn malformed_payloads_are_errors_naming_the_field() {
        let p =
            r#"{"location": "a", "timestamp": "2026-12-01T00:00:00Z", "duration": 5, "value": 1}"#;
        let cases: Vec<(String, &str)> = vec![
            ("not json".into(), "binaryData.data: not valid JSON"),
            ("{}".into(), "binaryData.data: expected a JSON array of points, got an object"),
            ("[]".into(), "binaryData.data: holds no points"),
            ("[1]".into(), "binaryData.data[0]: expected an object, got a number"),
            (
                r#"[{"timestamp": "2026-12-01T00:00:00Z", "duration": 5, "value": 1}]"#.into(),
                "binaryData.data[0].location: is required",
            ),
            (
                r#"[{"location": "", "timestamp": "2026-12-01T00:00:00Z", "duration": 5, "value": 1}]"#.into(),
                "binaryData.data[0].location: must not be empty",
            ),
            (
                r#"[{"location": 7, "timestamp": "2026-12-01T00:00:00Z", "duration": 5, "value": 1}]"#.into(),
                "binaryData.data[0].location: must be a string, got 7",
            ),
            (
                format!(r#"[{p}, {{"location": "a", "timestamp": "yesterday", "duration": 5, "value": 1}}]"#),
                "binaryData.data[1].timestamp: \"yesterday\" is not an RFC 3339 timestamp",
            ),
            (
                r#"[{"location": "a", "timestamp": "2026-12-01 00:00:00", "duration": 5, "value": 1}]"#.into(),
                "binaryData.data[0].timestamp: \"2026-12-01 00:00:00\" is not an RFC 3339 timestamp",
            ),
            (
                r#"[{"location": "a", "timestamp": 1764547200, "duration": 5, "value": 1}]"#.into(),
                "binaryData.data[0].timestamp: must be an RFC 3339 string, got 1764547200",
            ),
            (
                r#"[{"location": "a", "timestamp": "2026-12-01T00:00:00Z", "duration": 0, "value": 1}]"#.into(),
                "binaryData.data[0].duration: must be a whole number of minutes between 1 and 10080, got 0",
            ),
            (
                r#"[{"location": "a", "timestamp": "2026-12-01T00:00:00Z", "duration": 2.5, "value": 1}]"#.into(),
                "binaryData.data[0].duration: must be a whole number of minutes between 1 and 10080, got 2.5",
            ),
            (
                r#"[{"location": "a", "timestamp": "2026-12-01T00:00:00Z", "duration": "5m", "value": 1}]"#.into(),
                "binaryData.data[0].duration: must be a whole number of minutes between 1 and 10080, got \"5m\"",
            ),
            (
                r#"[{"location": "a", "timestamp": "2026-12-01T00:00:00Z", "duration": 5, "value": -3}]"#.into(),
                "binaryData.data[0].value: must not be negative, got -3 gCO2eq/kWh",
            ),
            (
                r#"[{"location": "a", "timestamp": "2026-12-01T00:00:00Z", "duration": 5, "value": "NaN"}]"#.into(),
                "binaryData.data[0].value: must be a number, got \"NaN\"",
            ),
            (
                r#"[{"location": "a", "timestamp": "2026-12-01T00:00:00Z", "duration": 5, "value": "212"}]"#.into(),
                "binaryData.data[0].value: must be a number, got \"212\"",
            ),
            (
                r#"[{"location": "a", "timestamp": "2026-12-01T00:00:00Z", "duration": 5, "value": null}]"#.into(),
                "binaryData.data[0].value: is required",
            ),
            (
                format!(r#"[{p}, {{"location": "a", "timestamp": "2026-12-01T00:04:00Z", "duration": 5, "value": 1}}]"#),
                "binaryData.data[1]: overlaps binaryData.data[0] for location \"a\"",
            ),
            (
                format!(r#"[{p}, {p}]"#),
                "binaryData.data[1]: overlaps binaryData.data[0] for location \"a\"",
            ),
        ];
        for (body, want) in cases {
            let err = parse_points(body.as_bytes(), "binaryData.data")
                .unwrap_err()
                .to_string();
            assert!(err.starts_with(want), "{body}\n got: {err}\nwant: {want}");
        }
    }

    #[test]
    fn a_number_out_of_range_is_malformed_not_a_crash() {
        let body = br#"[{"location": "a", "timestamp": "2026-12-01T00:00:00Z", "duration": 5, "value": 1e999}]"#;
        let err = parse_points(body, "binaryData.data")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("binaryData.data: not valid JSON"), "{err}");
        let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        let err = parse_points(deep.as_bytes(), "binaryData.data")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(
                "binaryData.data: not valid JSON: nested deeper than 128 levels at line 1 column"
            ),
            "{err}"
        );
    }

    #[test]
    fn oversized_payloads_are_refused_before_parsing() {
        let big = vec![b' '; MAX_PAYLOAD_BYTES + 1];
        let err = parse_points(&big, "binaryData.data")
            .unwrap_err()
            .to_string();
        assert!(err.contains("more than the 4194304 accepted"), "{err}");
    }

    #[test]
    fn too_many_points_are_refused() {
        // Items are counted before each is parsed, so tiny items reach the limit.
        let body = format!("[{}]", vec!["{}"; MAX_POINTS + 1].join(","));
        assert!(
            body.len() < MAX_PAYLOAD_BYTES,
            "the point limit is what is tested"
        );
        let err = parse_points(body.as_bytes(), "binaryData.data")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("holds 100001 points, more than the 100000 accepted"),
            "{err}"
        );
    }

    #[test]
    fn an_unreadable_points_file_names_the_path() {
        let err = read_points_file(Path::new("/nonexistent/forecast.json"))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("reading /nonexistent/forecast.json: "),
            "{err}"
        );
    }
}
