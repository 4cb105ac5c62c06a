//! Carbon-intensity forecasts: parsing, validation and the expected intensity of a location.
//!
//! A shoot control plane runs for months, so what counts is the intensity it will see, not the
//! current five-minute reading. The data comes in the carbon-intensity exporter's format: a JSON
//! array of points `{"location", "timestamp" (RFC 3339), "duration" (minutes), "value"
//! (gCO2eq/kWh)}`, read from labelled ConfigMaps (`binaryData.<key>`, heartbeat in
//! `data.lastHeartbeatTime`), from a file, or replaced by a static table.
//!
//! Everything here is pure: `now` is always passed in. Malformed input becomes a
//! [`CarbonError`] naming the field, never a panic; the priority turns it into a neutral score.

mod assess;
mod exporter;
mod points;

pub use assess::{
    Assessment, Basis, CarbonReport, CarbonSettings, DataStatus, LocationReport, Neutral, Origin,
    Scale, SeedReport, SourceProblem, StatusChange, StatusChanges,
};
pub use exporter::{ExporterData, parse_heartbeat};
pub use points::{Forecast, Forecasts, Point, parse_points, read_points_file};

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

/// `45s`, `7m`, `3h12m`, `2d4h`: the two largest units, for explanations.
pub fn format_age(d: chrono::TimeDelta) -> String {
    let secs = d.num_seconds().max(0);
    let (days, hours, mins, s) = (
        secs / 86_400,
        secs % 86_400 / 3600,
        secs % 3600 / 60,
        secs % 60,
    );
    match (days, hours, mins) {
        (0, 0, 0) => format!("{s}s"),
        (0, 0, m) if s == 0 => format!("{m}m"),
        (0, 0, m) => format!("{m}m{s}s"),
        (0, h, 0) => format!("{h}h"),
        (0, h, m) => format!("{h}h{m}m"),
        (d, 0, _) => format!("{d}d"),
        (d, h, _) => format!("{d}d{h}h"),
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
            (420, "7m"),
            (425, "7m5s"),
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
