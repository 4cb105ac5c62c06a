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

/// The message of a duration or count that must not be zero.
pub const GREATER_THAN_ZERO: &str = "must be greater than zero";
