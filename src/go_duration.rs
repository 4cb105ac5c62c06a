//! Durations in Go's `time.ParseDuration` syntax (`1h30m`, `1.5h`, `300ms`, `0`), the syntax of
//! every duration in upstream Gardener's configuration files.
//!
//! The keys of ours that earlier releases documented with days and spaces (`1d`, `1h 30m`) read
//! them still, through [`parse_with_days`]; everything else is Go's syntax alone.
//!
//! A leaf module: it depends only on the leaf [`crate::field_error`], so any input reader can use
//! it.
//!
//! [`parse_with_days`]: crate::go_duration::parse_with_days

use std::fmt;
use std::time::Duration;

/// Why a text is not a Go duration we accept.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GoDurationError {
    #[error(
        "invalid duration {0:?}: expected Go syntax such as \"15s\", \"1h30m\", \"1.5h\" or \"300ms\""
    )]
    Syntax(String),
    #[error(
        "unknown unit {unit:?} in duration {text:?}: valid units are \"ns\", \"us\" (or \"µs\"), \"ms\", \"s\", \"m\", \"h\"{}",
        if *days { ", \"d\"" } else { "" }
    )]
    Unit {
        text: String,
        unit: String,
        /// Whether `d` was accepted too ([`parse_with_days`]).
        days: bool,
    },
    #[error("duration {0:?} is too large")]
    Overflow(String),
    #[error("{}", crate::field_error::not_negative(format!("{:?}", .0)))]
    Negative(String),
}

const NANOS_PER_DAY: u128 = 86_400_000_000_000;

const NANOS_PER: [(&str, u128); 9] = [
    ("ns", 1),
    ("us", 1_000),
    ("\u{b5}s", 1_000),
    ("\u{3bc}s", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("m", 60_000_000_000),
    ("h", 3_600_000_000_000),
    ("", 0),
];

/// Parses `text` as Go's `time.ParseDuration` does, refusing negative values (nothing in the
/// configuration has a meaning for them) and values beyond Go's range (about 292 years).
pub fn parse(text: &str) -> Result<Duration, GoDurationError> {
    parse_as(text, false)
}

/// [`parse`], also reading the spellings earlier releases documented for some keys of ours: the
/// unit `d` (24 hours) and spaces between the parts (`1d 12h`, `1h 30m`).
pub fn parse_with_days(text: &str) -> Result<Duration, GoDurationError> {
    parse_as(text.trim(), true)
}

fn parse_as(text: &str, days: bool) -> Result<Duration, GoDurationError> {
    let syntax = || GoDurationError::Syntax(text.to_string());
    let (negative, mut rest) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if rest == "0" {
        return Ok(Duration::ZERO);
    }
    if rest.is_empty() {
        return Err(syntax());
    }
    // Go's limit: the total must fit an int64 of nanoseconds.
    const MAX_NANOS: u128 = i64::MAX as u128;
    let mut total: u128 = 0;
    while !rest.is_empty() {
        if days {
            rest = rest.trim_start();
        }
        let int_len = rest.bytes().take_while(u8::is_ascii_digit).count();
        let (int_part, after) = rest.split_at(int_len);
        let (frac_part, after) = match after.strip_prefix('.') {
            Some(f) => {
                let n = f.bytes().take_while(u8::is_ascii_digit).count();
                f.split_at(n)
            }
            None => ("", after),
        };
        if int_part.is_empty() && frac_part.is_empty() {
            return Err(syntax());
        }
        let unit_len = after
            .char_indices()
            .find(|(_, c)| *c == '.' || c.is_ascii_digit() || (days && c.is_whitespace()))
            .map_or(after.len(), |(i, _)| i);
        let (unit, after) = after.split_at(unit_len);
        if unit.is_empty() {
            return Err(GoDurationError::Syntax(text.to_string()));
        }
        let per = NANOS_PER
            .iter()
            .find(|(u, _)| !u.is_empty() && *u == unit)
            .map(|(_, n)| *n)
            .or((days && unit == "d").then_some(NANOS_PER_DAY))
            .ok_or_else(|| GoDurationError::Unit {
                text: text.to_string(),
                unit: unit.to_string(),
                days,
            })?;
        let overflow = || GoDurationError::Overflow(text.to_string());
        let int: u128 = if int_part.is_empty() {
            0
        } else {
            int_part.parse().map_err(|_| overflow())?
        };
        let mut nanos = int.checked_mul(per).ok_or_else(overflow)?;
        // Fractions are truncated to whole nanoseconds, as Go does.
        let mut scale = per;
        for digit in frac_part.bytes().take(30) {
            scale /= 10;
            if scale == 0 {
                break;
            }
            nanos += u128::from(digit - b'0') * scale;
        }
        total = total.checked_add(nanos).ok_or_else(overflow)?;
        if total > MAX_NANOS {
            return Err(overflow());
        }
        rest = after;
    }
    if negative && total > 0 {
        return Err(GoDurationError::Negative(text.to_string()));
    }
    let secs = u64::try_from(total / 1_000_000_000).map_err(|_| syntax())?;
    Ok(Duration::new(secs, (total % 1_000_000_000) as u32))
}

/// Formats as Go's `Duration.String` does (`1h30m0s`, `300ms`, `0s`), so that what we print
/// reads back in upstream's tools.
pub fn format(d: Duration) -> String {
    GoDuration(d).to_string()
}

/// Display adapter with Go's `Duration.String` format.
pub struct GoDuration(pub Duration);

impl fmt::Display for GoDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let nanos = self.0.as_nanos();
        if nanos == 0 {
            return f.write_str("0s");
        }
        if nanos < 1_000_000_000 {
            let (unit, per) = if nanos < 1_000 {
                ("ns", 1)
            } else if nanos < 1_000_000 {
                ("\u{b5}s", 1_000)
            } else {
                ("ms", 1_000_000)
            };
            return write!(f, "{}{unit}", fraction(nanos, per));
        }
        let hours = nanos / 3_600_000_000_000;
        let minutes = (nanos / 60_000_000_000) % 60;
        let secs = nanos % 60_000_000_000;
        if hours > 0 {
            write!(f, "{hours}h")?;
        }
        if hours > 0 || minutes > 0 {
            write!(f, "{minutes}m")?;
        }
        write!(f, "{}s", fraction(secs, 1_000_000_000))
    }
}

/// `value / per` with the shortest exact decimal fraction.
fn fraction(value: u128, per: u128) -> String {
    let whole = value / per;
    let rem = value % per;
    if rem == 0 {
        return whole.to_string();
    }
    let width = per.ilog10() as usize;
    let digits = format!("{rem:0width$}");
    format!("{whole}.{}", digits.trim_end_matches('0'))
}

/// `#[serde(with = "crate::go_duration::serde")]` for `Duration` fields: reads a Go duration
/// string (or the bare number `0`) and writes Go's format.
pub mod serde {
    use std::fmt;
    use std::time::Duration;

    use serde::de::{self, Visitor};
    use serde::{Deserializer, Serializer};

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&super::GoDuration(*d))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        d.deserialize_any(GoDurationVisitor)
    }

    /// `#[serde(default, deserialize_with = "crate::go_duration::serde::option")]` for
    /// `Option<Duration>` fields: absent or `null` is `None`.
    pub fn option<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        struct Present(Duration);
        impl<'de> serde::Deserialize<'de> for Present {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                deserialize(d).map(Present)
            }
        }
        Ok(<Option<Present> as serde::Deserialize>::deserialize(d)?.map(|p| p.0))
    }

    struct GoDurationVisitor;

    fn bare_number<E: de::Error>(shown: &dyn fmt::Display) -> E {
        E::custom(format!(
            "a duration needs a unit, e.g. \"{shown}s\"; a bare number is accepted only for 0"
        ))
    }

    impl Visitor<'_> for GoDurationVisitor {
        type Value = Duration;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a duration such as \"15s\", \"1h30m\" or \"300ms\"")
        }

        fn visit_str<E: de::Error>(self, v: &str) -> Result<Duration, E> {
            super::parse(v).map_err(E::custom)
        }

        fn visit_u64<E: de::Error>(self, v: u64) -> Result<Duration, E> {
            if v == 0 {
                Ok(Duration::ZERO)
            } else {
                Err(bare_number(&v))
            }
        }

        fn visit_i64<E: de::Error>(self, v: i64) -> Result<Duration, E> {
            if v == 0 {
                Ok(Duration::ZERO)
            } else if v < 0 {
                Err(E::custom(crate::field_error::not_negative(v)))
            } else {
                Err(bare_number(&v))
            }
        }

        fn visit_f64<E: de::Error>(self, v: f64) -> Result<Duration, E> {
            if v == 0.0 {
                Ok(Duration::ZERO)
            } else {
                Err(bare_number(&v))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn go_syntax_is_read_as_go_reads_it() {
        for (text, want) in [
            ("0", Duration::ZERO),
            ("0s", Duration::ZERO),
            ("-0", Duration::ZERO),
            ("+5s", ms(5_000)),
            ("300ms", ms(300)),
            ("15s", ms(15_000)),
            ("1h30m", ms(5_400_000)),
            ("1.5h", ms(5_400_000)),
            ("2h45m30.5s", ms(9_930_500)),
            (".5s", ms(500)),
            ("1.s", ms(1_000)),
            ("10us", Duration::from_micros(10)),
            ("10\u{b5}s", Duration::from_micros(10)),
            ("10\u{3bc}s", Duration::from_micros(10)),
            ("7ns", Duration::from_nanos(7)),
            ("1m0s", ms(60_000)),
        ] {
            assert_eq!(parse(text), Ok(want), "{text}");
        }
    }

    #[test]
    fn what_go_rejects_is_rejected() {
        for text in ["", "s", "15", ".s", "-", "1.5.5s", " 1s"] {
            assert!(
                matches!(parse(text), Err(GoDurationError::Syntax(_))),
                "{text}: {:?}",
                parse(text)
            );
        }
        for text in ["1d", "2days", "5sec", "3S", "1h 30m"] {
            assert!(
                matches!(parse(text), Err(GoDurationError::Unit { .. })),
                "{text}: {:?}",
                parse(text)
            );
        }
    }

    #[test]
    fn days_and_spaces_are_read_only_where_asked_for() {
        for (text, want) in [
            ("1d", ms(86_400_000)),
            ("1h 30m", ms(5_400_000)),
            (" 2d 1.5h ", ms(2 * 86_400_000 + 5_400_000)),
            ("1d12h", ms(129_600_000)),
            ("90m", ms(5_400_000)),
            ("0", Duration::ZERO),
        ] {
            assert_eq!(parse_with_days(text), Ok(want), "{text}");
        }
        assert!(matches!(parse("1d"), Err(GoDurationError::Unit { .. })));
        assert!(matches!(parse("1h 30m"), Err(GoDurationError::Unit { .. })));
        for text in ["2days", "1w", "1 h", "d"] {
            assert!(
                parse_with_days(text).is_err(),
                "{text}: {:?}",
                parse_with_days(text)
            );
        }
        assert_eq!(
            parse_with_days("-1d"),
            Err(GoDurationError::Negative("-1d".into()))
        );
    }

    #[test]
    fn negative_and_out_of_range_durations_are_refused() {
        assert_eq!(parse("-1s"), Err(GoDurationError::Negative("-1s".into())));
        assert_eq!(
            parse("-1s").unwrap_err().to_string(),
            "must not be negative, got \"-1s\""
        );
        assert!(matches!(
            parse("3000000h"),
            Err(GoDurationError::Overflow(_))
        ));
        assert!(matches!(
            parse("99999999999999999999999999999999999999999s"),
            Err(GoDurationError::Overflow(_))
        ));
        // Go's maximum, 2562047h47m16.854775807s, is still accepted.
        assert!(parse("2562047h47m16.854775807s").is_ok());
    }

    #[test]
    fn formatting_matches_go_and_reads_back() {
        for (d, want) in [
            (Duration::ZERO, "0s"),
            (ms(300), "300ms"),
            (ms(1_500), "1.5s"),
            (ms(15_000), "15s"),
            (ms(5_400_000), "1h30m0s"),
            (ms(61_000), "1m1s"),
            (Duration::from_micros(10), "10\u{b5}s"),
            (Duration::from_nanos(1_500), "1.5\u{b5}s"),
            (Duration::from_nanos(7), "7ns"),
        ] {
            assert_eq!(format(d), want);
            assert_eq!(parse(want), Ok(d), "{want} reads back");
        }
    }
}
