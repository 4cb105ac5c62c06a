//! Leaf vocabulary: one problem with one field of the configuration (or of a plugin's
//! arguments), named by its path (`schedulers.shoot.priorities[2].weight: must be > 0`), and the
//! messages every check shares, so that the same mistake reads the same wherever it is made (as
//! kube-scheduler's `validation_pluginargs.go` and apimachinery's `field.NotSupported`).

use std::fmt;

/// One problem with one field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    pub path: String,
    pub message: String,
}

impl FieldError {
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// The message of a value that is not one of `supported`, as upstream's validation writes it:
/// `unsupported value "x": supported values: "A", "B"`.
pub fn unsupported<S: AsRef<str>>(value: &str, supported: impl IntoIterator<Item = S>) -> String {
    let supported: Vec<String> = supported
        .into_iter()
        .map(|s| format!("{:?}", s.as_ref()))
        .collect();
    format!(
        "unsupported value {value:?}: supported values: {}",
        supported.join(", ")
    )
}

/// [`unsupported`] for the field at `path`.
pub fn unsupported_value<S: AsRef<str>>(
    path: impl Into<String>,
    value: &str,
    supported: impl IntoIterator<Item = S>,
) -> FieldError {
    FieldError::new(path, unsupported(value, supported))
}

/// `must be a positive number, got 0` unless `value` is finite and above zero.
pub fn positive_number(path: impl Into<String>, value: f64) -> Option<FieldError> {
    (!(value.is_finite() && value > 0.0))
        .then(|| FieldError::new(path, format!("must be a positive number, got {value}")))
}

/// The largest latency any argument or matrix entry takes, in ms (about 17 minutes): sums of a
/// few thousand such values stay exact, and a decision's integer costs cannot overflow.
pub const MAX_LATENCY_MS: f64 = 1_000_000.0;
/// The largest `fallbackFactor` (ms per step of region-name distance): the longest region names
/// are a few hundred steps apart, which stays within [`MAX_LATENCY_MS`].
pub const MAX_FALLBACK_FACTOR: f64 = 1_000.0;
/// The largest weight of a priority or a resource, and the largest demand weight.
pub const MAX_WEIGHT: f64 = 1_000_000.0;

/// `must be a positive number of at most MAX, got V` unless `0 < value <= max`.
pub fn bounded_positive(path: impl Into<String>, value: f64, max: f64) -> Option<FieldError> {
    (!(value.is_finite() && value > 0.0 && value <= max)).then(|| {
        FieldError::new(
            path,
            format!(
                "must be a positive number of at most {max}, got {}",
                number(value)
            ),
        )
    })
}

/// `must be a number from 0 to MAX, got V` unless `0 <= value <= max`.
pub fn bounded_non_negative(path: impl Into<String>, value: f64, max: f64) -> Option<FieldError> {
    (!(value.is_finite() && (0.0..=max).contains(&value))).then(|| {
        FieldError::new(
            path,
            format!("must be a number from 0 to {max}, got {}", number(value)),
        )
    })
}

/// A number as a message shows it: `1e20` rather than 21 digits.
pub fn number(v: f64) -> String {
    if v.is_finite() && v.abs() >= 1e15 {
        format!("{v:e}")
    } else {
        v.to_string()
    }
}

/// What a JSON value is, as messages name it: `a list`, `text`.
pub fn kind_of(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "text",
        serde_json::Value::Array(_) => "a list",
        serde_json::Value::Object(_) => "a mapping",
    }
}

/// The message of a value below zero where only zero and more mean something, in every reader
/// alike: `must not be negative, got "-1s"` (`shown` as the input wrote it, with its unit).
pub fn not_negative(shown: impl fmt::Display) -> String {
    format!("must not be negative, got {shown}")
}

/// The message of a duration or count that must not be zero.
pub const GREATER_THAN_ZERO: &str = "must be greater than zero";
