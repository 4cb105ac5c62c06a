//! Carbon-intensity forecasts: parsing, validation and the expected intensity of a location.
//! A leaf below the snapshot; what a forecast means for a seed is [`crate::carbon`]'s.
//!
//! A shoot control plane runs for months, so what counts is the intensity it will see, not the
//! current five-minute reading. The data comes in the carbon-intensity exporter's format: a JSON
//! array of points `{"location", "timestamp" (RFC 3339), "duration" (minutes), "value"
//! (gCO2eq/kWh)}`, read from labelled ConfigMaps (`binaryData.<key>`, heartbeat in
//! `data.lastHeartbeatTime`), from a file, or replaced by a static table.
//!
//! Everything here is pure: `now` is always passed in. Malformed input becomes a
//! [`CarbonError`] naming the field, never a panic; the priority turns it into a neutral score.
//!
//! [`CarbonError`]: crate::forecast::CarbonError

mod exporter;
mod points;

pub use exporter::{ExporterData, parse_heartbeat};
pub use points::{Coverage, Forecast, Forecasts, Point, parse_points, read_points_file};

/// More points than this in one payload are refused: 24 h of 5-minute points are 288.
pub const MAX_POINTS: usize = 100_000;
/// Larger payloads are refused before parsing (a ConfigMap holds at most 1 MiB anyway).
pub const MAX_PAYLOAD_BYTES: usize = 4 * 1024 * 1024;
/// Longest accepted point duration, in minutes (one week).
pub const MAX_POINT_MINUTES: i64 = 7 * 24 * 60;

/// Why carbon data could not be used. Cloneable so that the snapshot can keep it and every
/// decision can show it.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CarbonError {
    /// The forecast payload or one of its points is malformed.
    #[error("{field}: {message}")]
    ParseForecast { field: String, message: String },
    /// The exporter's heartbeat is not a timestamp.
    #[error("{field}: {message}")]
    ParseHeartbeat { field: String, message: String },
    /// A points file could not be read.
    #[error("reading {path}: {message}")]
    ReadPointsFile { path: String, message: String },
}

impl CarbonError {
    pub(crate) fn forecast(field: impl Into<String>, message: impl Into<String>) -> Self {
        CarbonError::ParseForecast {
            field: field.into(),
            message: message.into(),
        }
    }
}

/// `45s`, `7m`, `3h12m`, `2d4h`: rounded to the smallest unit shown, for explanations.
pub fn format_age(d: chrono::TimeDelta) -> String {
    let secs = (d.num_milliseconds().max(0) + 500) / 1000;
    if secs < 60 {
        return format!("{secs}s");
    }
    let mins = (secs + 30) / 60;
    if mins < 60 {
        return format!("{mins}m");
    }
    let (h, m) = (mins / 60, mins % 60);
    if h < 24 {
        return if m == 0 {
            format!("{h}h")
        } else {
            format!("{h}h{m}m")
        };
    }
    let hours = (mins + 30) / 60;
    let (d, h) = (hours / 24, hours % 24);
    if h == 0 {
        format!("{d}d")
    } else {
        format!("{d}d{h}h")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeDelta;

    #[test]
    fn ages_are_shown_with_the_two_largest_units() {
        let cases = [
            (0, "0s"),
            (-5, "0s"),
            (45, "45s"),
            (59, "59s"),
            (60, "1m"),
            (419, "7m"),
            (420, "7m"),
            (449, "7m"),
            (3599, "1h"),
            (3600, "1h"),
            (3600 * 24, "1d"),
            (3600 * 3 + 12 * 60 + 9, "3h12m"),
            (86_400 * 2 + 3600 * 4 + 5, "2d4h"),
        ];
        for (secs, want) in cases {
            assert_eq!(format_age(TimeDelta::seconds(secs)), want, "{secs}s");
        }
    }
}
