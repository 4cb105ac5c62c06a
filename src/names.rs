//! The value rules the Kubernetes API server applies (apimachinery's `IsDNS1123Label`,
//! `IsDNS1123Subdomain`, `IsQualifiedName`, `IsValidLabelValue`).
//!
//! Objects read from files never went through an API server: a name holding a newline, an
//! escape sequence or a bidi override would end a YAML comment, steer the terminal or display
//! as another name. Refusing what the API server would never have stored closes all of that at
//! the edge. A leaf module. Each check returns the message of the first rule broken; the value
//! in it is escaped ([`crate::escape::line`]).

use crate::escape;

/// The longest DNS-1123 label: a Shoot or Seed name, a namespace.
pub const MAX_LABEL: usize = 63;
/// The longest DNS-1123 subdomain: a CloudProfile, Project or ConfigMap name, the prefix of a
/// qualified name.
pub const MAX_SUBDOMAIN: usize = 253;

fn quoted(value: &str) -> String {
    format!("\"{}\"", escape::line(value))
}

fn too_long(value: &str, max: usize) -> Option<String> {
    (value.len() > max).then(|| {
        format!(
            "must be no more than {max} characters, got {}",
            value.chars().count()
        )
    })
}

/// At most `max` bytes and `valid`; else the first rule broken: too long, or `"value" {not}`
/// (what the value is not, in apimachinery's words).
fn check(value: &str, max: usize, valid: fn(&str) -> bool, not: &str) -> Result<(), String> {
    if let Some(m) = too_long(value, max) {
        return Err(m);
    }
    if !valid(value) {
        return Err(format!("{} {not}", quoted(value)));
    }
    Ok(())
}

fn alnum_lower(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit()
}

fn is_label(value: &str) -> bool {
    let b = value.as_bytes();
    !b.is_empty()
        && alnum_lower(b[0])
        && alnum_lower(b[b.len() - 1])
        && b.iter().all(|&c| alnum_lower(c) || c == b'-')
}

/// A lowercase RFC 1123 label: at most 63 of `a-z0-9-`, starting and ending alphanumeric.
pub fn dns1123_label(value: &str) -> Result<(), String> {
    check(
        value,
        MAX_LABEL,
        is_label,
        "is not a lowercase RFC 1123 label: lower case alphanumeric characters or '-', starting and ending with an alphanumeric character (e.g. 'my-name')",
    )
}

/// A lowercase RFC 1123 subdomain: at most 253 characters, labels joined by `.`.
pub fn dns1123_subdomain(value: &str) -> Result<(), String> {
    check(
        value,
        MAX_SUBDOMAIN,
        |v| v.split('.').all(is_label),
        "is not a lowercase RFC 1123 subdomain: lower case alphanumeric characters, '-' or '.', starting and ending with an alphanumeric character (e.g. 'example.com')",
    )
}

/// `[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?`, the name part of a qualified name and a label
/// value.
fn is_name_part(value: &str) -> bool {
    let b = value.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

/// A qualified name (a label key, a taint key): an optional DNS subdomain prefix and `/`, then
/// at most 63 of `A-Za-z0-9-_.`, starting and ending alphanumeric.
pub fn qualified_name(value: &str) -> Result<(), String> {
    let (prefix, name) = match value.split_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, value),
    };
    if let Some(p) = prefix {
        if p.is_empty() {
            return Err(format!("{}: the prefix must be non-empty", quoted(value)));
        }
        dns1123_subdomain(p).map_err(|e| format!("{}: prefix part {e}", quoted(value)))?;
    }
    if name.len() > MAX_LABEL {
        return Err(format!(
            "{}: the name part must be no more than {MAX_LABEL} characters",
            quoted(value)
        ));
    }
    if !is_name_part(name) {
        return Err(format!(
            "{} is not a qualified name: alphanumeric characters, '-', '_' or '.', starting and ending with an alphanumeric character, with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
            quoted(value)
        ));
    }
    Ok(())
}

/// A label value: empty, or at most 63 of `A-Za-z0-9-_.`, starting and ending alphanumeric.
pub fn label_value(value: &str) -> Result<(), String> {
    if value.is_empty() {
        return Ok(());
    }
    check(
        value,
        MAX_LABEL,
        is_name_part,
        "is not a valid label value: alphanumeric characters, '-', '_' or '.', starting and ending with an alphanumeric character (e.g. 'MyValue')",
    )
}

/// The labels of an object: each key a qualified name, each value a label value; the first
/// problem at `path.key`.
pub fn labels<'a>(
    path: &str,
    labels: impl IntoIterator<Item = (&'a String, &'a String)>,
) -> Result<(), String> {
    for (k, v) in labels {
        qualified_name(k).map_err(|e| format!("{path}: key {e}"))?;
        label_value(v).map_err(|e| format!("{path}.{k}: {e}"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_api_server_rules() {
        assert!(dns1123_label("seed-prod-eu1").is_ok());
        assert!(dns1123_label(&"s".repeat(63)).is_ok());
        assert!(dns1123_label(&"s".repeat(64)).is_err());
        for bad in [
            "",
            "Seed",
            "-a",
            "a-",
            "a.b",
            "a\nkind: Secret",
            "seed-\u{202e}1ue-dorp",
            "a\u{200b}b",
            "a\x1b[31m",
        ] {
            assert!(dns1123_label(bad).is_err(), "{bad:?}");
        }
        assert!(dns1123_subdomain("regions.eu-west-1").is_ok());
        assert!(dns1123_subdomain("a..b").is_err());
        assert!(dns1123_subdomain(&"a".repeat(254)).is_err());
    }

    #[test]
    fn label_keys_are_qualified_names_and_values_label_values() {
        for good in [
            "seed.gardener.cloud/protected",
            "Tier",
            "a_b.c-d",
            "example.com/MyName",
        ] {
            assert!(qualified_name(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "/a",
            "a/",
            "Example.com/a",
            "a/b/c",
            "-a",
            "a b",
            "a\nb",
            &"k".repeat(64),
        ] {
            assert!(qualified_name(bad).is_err(), "{bad:?}");
        }
        assert!(label_value("").is_ok());
        assert!(label_value("Prod_1.x").is_ok());
        assert!(label_value(&"v".repeat(63)).is_ok());
        assert!(label_value(&"v".repeat(64)).is_err());
        assert!(label_value("a\u{2028}b").is_err());
        assert!(label_value("a/b").is_err());
    }

    #[test]
    fn the_message_shows_hidden_characters_escaped() {
        let e = dns1123_label("a\n# b").unwrap_err();
        assert!(e.contains("\"a\\u{a}# b\""), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }
}
