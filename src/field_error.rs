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

/// serde's message for a value of the wrong type or out of a field's range, in the words of
/// the field's rule, as the config file, plan files, manifests and plugin arguments say it:
/// `invalid type: floating point `1e20`, expected u16` becomes `must be a whole number between
/// 0 and 65535, got 1e20`, `invalid type: integer `5`, expected a string` becomes `must be text,
/// got the number 5`, and the JSON reader's `recursion limit exceeded` is named as nesting. The
/// position the parser adds (` at line L column C`) is kept; other messages are kept as they are.
pub fn serde_message(message: &str) -> String {
    let (core, at) = split_position(message);
    if core == "recursion limit exceeded" {
        return format!(
            "nested deeper than {} levels{at}",
            crate::input::MAX_NESTING
        );
    }
    let rewritten = (|| {
        let (found, expected) = core
            .strip_prefix("invalid type: ")
            .or_else(|| core.strip_prefix("invalid value: "))?
            .rsplit_once(", expected ")?;
        let got = got(found)?;
        let rule = match expected {
            "a string" | "a borrowed string" | "string or map" => "must be text".to_string(),
            "a boolean" => "must be true or false".to_string(),
            "a sequence" => "must be a list".to_string(),
            "a map" => "must be a mapping".to_string(),
            e if e.starts_with("a mapping") => format!("must be {e}"),
            e if e.starts_with("struct ") => "must be a mapping".to_string(),
            "f32" | "f64" => "must be a number".to_string(),
            e => format!("must be a whole number{}", whole_range(e)?),
        };
        Some(format!("{rule}, got {got}{at}"))
    })();
    rewritten.unwrap_or_else(|| message.to_string())
}

/// `(message, " at line L column C")`: the position serde_json and serde_yaml add, apart.
fn split_position(message: &str) -> (&str, &str) {
    match message.rfind(" at line ") {
        Some(i) if message[i..].contains(" column ") => message.split_at(i),
        _ => (message, ""),
    }
}

/// What a value was, from serde's `Unexpected` as its messages write it.
fn got(found: &str) -> Option<String> {
    let quoted = |prefix: &str| {
        found
            .strip_prefix(prefix)
            .and_then(|r| r.strip_prefix('`'))
            .and_then(|r| r.split_once('`'))
            .map(|(v, _)| v.to_string())
    };
    if let Some(v) = quoted("floating point ") {
        return Some(v.replace("e+", "e"));
    }
    if let Some(v) = quoted("integer ") {
        return Some(v);
    }
    if let Some(v) = quoted("boolean ") {
        return Some(v);
    }
    if let Some(text) = found.strip_prefix("string ") {
        return Some(format!("text {}", crate::escape::line(text)));
    }
    match found {
        "sequence" => Some("a list".into()),
        "map" => Some("a mapping".into()),
        "unit value" | "null" => Some("null".into()),
        _ => None,
    }
}

/// ` between MIN and MAX` for serde's name of an integer type (empty for 64 bits).
fn whole_range(ty: &str) -> Option<String> {
    let (min, max): (i128, i128) = match ty {
        "u8" => (0, u8::MAX.into()),
        "u16" => (0, u16::MAX.into()),
        "u32" => (0, u32::MAX.into()),
        // a range of 64 bits says nothing an operator needs: the field's own check names its
        // range once the value is a whole number
        "u64" | "usize" | "i64" | "isize" => return Some(String::new()),
        "i8" => (i8::MIN.into(), i8::MAX.into()),
        "i16" => (i16::MIN.into(), i16::MAX.into()),
        "i32" => (i32::MIN.into(), i32::MAX.into()),
        _ => return None,
    };
    Some(format!(" between {min} and {max}"))
}

#[cfg(test)]
mod tests {
    use super::serde_message;

    #[test]
    fn a_whole_number_s_range_is_named_only_where_the_type_is_narrower_than_64_bits() {
        assert_eq!(
            serde_message("invalid type: floating point `1e20`, expected u16 at line 3 column 9"),
            "must be a whole number between 0 and 65535, got 1e20 at line 3 column 9"
        );
        assert_eq!(
            serde_message("invalid type: floating point `80.5`, expected i64"),
            "must be a whole number, got 80.5"
        );
        assert_eq!(
            serde_message("invalid type: string \"week\", expected u64"),
            "must be a whole number, got text \"week\""
        );
        assert_eq!(
            serde_message("recursion limit exceeded at line 1 column 129"),
            "nested deeper than 128 levels at line 1 column 129"
        );
    }
}
