use num_bigint::BigUint;
use proptest::prelude::*;

use super::{Quantity, nanos, parse, parse_quantity};

/// The magnitude in nanos upstream keeps after parsing (rounded up, binary capped), and the sign.
fn kept(q: &Quantity) -> (bool, BigUint) {
    match q {
        Quantity::Int { value, scale } => (
            *value < 0,
            BigUint::from(value.unsigned_abs()) * BigUint::from(10u32).pow((scale + 9) as u32),
        ),
        Quantity::Dec {
            negative,
            digits,
            scale,
            binary,
        } => {
            let u = nanos(digits, *scale).expect("table values stay below 10^64");
            let cap = BigUint::from(i64::MAX as u64) * BigUint::from(1_000_000_000u32);
            (*negative, if *binary && u > cap { cap } else { u })
        }
    }
}

/// `decQuantity(v, scale)` of upstream's tests, in nanos.
fn nanos_of(v: i128, scale: i32) -> BigUint {
    BigUint::from(v.unsigned_abs()) * BigUint::from(10u32).pow((scale + 9) as u32)
}

const KI: i128 = 1024;

/// apimachinery's `TestQuantityParse` table: each input and the value upstream expects it to
/// parse to, as `decQuantity(value, scale)`.
const UPSTREAM_PARSE: &[(&str, i128, i32)] = &[
    ("0", 0, 0),
    ("0n", 0, 0),
    ("0u", 0, 0),
    ("0m", 0, 0),
    ("0Ki", 0, 0),
    ("0k", 0, 0),
    ("0Mi", 0, 0),
    ("0M", 0, 0),
    ("0Gi", 0, 0),
    ("0G", 0, 0),
    ("0Ti", 0, 0),
    ("0T", 0, 0),
    ("1", 1, 0),
    ("1Ki", KI, 0),
    ("8Ki", 8 * KI, 0),
    ("7Mi", 7 * KI * KI, 0),
    ("6Gi", 6 * KI * KI * KI, 0),
    ("5Ti", 5 * KI * KI * KI * KI, 0),
    ("4Pi", 4 * KI * KI * KI * KI * KI, 0),
    ("3Ei", 3 * KI * KI * KI * KI * KI * KI, 0),
    ("10Ti", 10 * KI * KI * KI * KI, 0),
    ("100Ti", 100 * KI * KI * KI * KI, 0),
    ("5n", 5, -9),
    ("4u", 4, -6),
    ("3m", 3, -3),
    ("9", 9, 0),
    ("8k", 8, 3),
    ("50k", 5, 4),
    ("7M", 7, 6),
    ("6G", 6, 9),
    ("5T", 5, 12),
    ("40T", 4, 13),
    ("300T", 3, 14),
    ("2P", 2, 15),
    ("1E", 1, 18),
    ("1E-3", 1, -3),
    ("1e3", 1, 3),
    ("1E6", 1, 6),
    ("1e9", 1, 9),
    ("1E12", 1, 12),
    ("1e15", 1, 15),
    ("1E18", 1, 18),
    ("1e14", 1, 14),
    ("1e13", 1, 13),
    ("100.035k", 100035, 0),
    ("0.001", 1, -3),
    ("0.0005k", 5, -1),
    ("0.005", 5, -3),
    ("0.05", 5, -2),
    ("0.5", 5, -1),
    ("0.00050k", 5, -1),
    ("0.00500", 5, -3),
    ("0.05000", 5, -2),
    ("0.50000", 5, -1),
    ("0.5e0", 5, -1),
    ("0.5e-1", 5, -2),
    ("0.5e-2", 5, -3),
    ("10.035M", 10035, 3),
    ("1.2e3", 12, 2),
    ("1.3E+6", 13, 5),
    ("1.40e9", 14, 8),
    ("1.53E12", 153, 10),
    ("1.6e15", 16, 14),
    ("1.7E18", 17, 17),
    ("9.01", 901, -2),
    ("8.1k", 81, 2),
    ("7.123456M", 7123456, 0),
    ("6.987654321G", 6987654321, 0),
    ("5.444T", 5444, 9),
    ("40.1T", 401, 11),
    ("300.2T", 3002, 11),
    ("2.5P", 25, 14),
    ("1.01E", 101, 16),
    ("3.001n", 4, -9),
    ("1.1E-9", 2, -9),
    ("0.0000000001", 1, -9),
    ("0.0000000005", 1, -9),
    ("0.00000000050", 1, -9),
    ("0.5e-9", 1, -9),
    ("0.9n", 1, -9),
    ("0.00000012345", 124, -9),
    ("0.00000012354", 124, -9),
    ("9Ei", i64::MAX as i128, 0),
    ("9223372036854775807Ki", i64::MAX as i128, 0),
    ("12E", 12, 18),
    ("100.035Ki", 10243584, -2),
    ("0.5Mi", 512 * KI, 0),
    ("0.05Gi", 536870912, -1),
    ("0.025Ti", 274877906944, -1),
    ("0.000000000001Ki", 2, -9),
    (".001", 1, -3),
    (".0001k", 100, -3),
    ("1.", 1, 0),
    ("1.G", 1, 9),
];

/// apimachinery's `TestQuantityParse` invalid inputs.
const UPSTREAM_INVALID: &[&str] = &[
    "", "1.1.M", "1+1.0M", "0.1mi", "0.1am", "aoeu", ".5i", "1i", "-3.01i", "-3.01e-",
];

/// apimachinery's `TestParseQuantity` table around 18 to 20 digits and the int64 limits: each
/// input and the exact decimal upstream expects (`wantAsDec`); most take the decimal path.
const UPSTREAM_DIGITS: &[(&str, &str)] = &[
    ("-999999999999999999", "-999999999999999999"),
    ("999999999999999999", "999999999999999999"),
    ("999999999999999999.0", "999999999999999999"),
    ("999999999999999999.1", "999999999999999999.1"),
    ("-9999999999999999999", "-9999999999999999999"),
    ("9999999999999999999", "9999999999999999999"),
    ("1E", "1000000000000000000"),
    ("1000000000000000000", "1000000000000000000"),
    ("-1.0E", "-1000000000000000000"),
    ("9999999999999999999000m", "9999999999999999999"),
    ("-9999999999999999999.1", "-9999999999999999999.1"),
    ("1.0000000000000000001E", "1000000000000000000.1"),
    ("1.000000000000000001E", "1000000000000000001"),
    ("10E", "10000000000000000000"),
    ("-10000000000000000000000m", "-10000000000000000000"),
    ("10.0000000000000000001E", "10000000000000000000.1"),
    ("10000000000000000001", "10000000000000000001"),
    ("-9223372036854775809", "-9223372036854775809"),
    ("9223372036854775806.0", "9223372036854775806"),
    ("-9223372036854775808", "-9223372036854775808"),
    ("9223372036854775807000m", "9223372036854775807"),
    ("9223372036854775807.1", "9223372036854775807.1"),
    ("9223372036854775808", "9223372036854775808"),
    ("-9223372036854775807.1", "-9223372036854775807.1"),
];

#[test]
fn upstreams_long_numbers_keep_every_digit() {
    for &(input, decimal) in UPSTREAM_DIGITS {
        let (negative, text) = match decimal.strip_prefix('-') {
            Some(t) => (true, t),
            None => (false, decimal),
        };
        let (int, frac) = text.split_once('.').unwrap_or((text, ""));
        let digits = BigUint::parse_bytes(format!("{int}{frac}").as_bytes(), 10).unwrap();
        let want = digits * BigUint::from(10u32).pow(9 - frac.len() as u32);
        let q = parse_quantity(input).unwrap();
        assert_eq!(kept(&q), (negative, want), "{input}: {q:?}");
    }
}

/// `ceil(v × 10^scale)` for a non-negative table value.
fn ceil_of(v: i128, scale: i32) -> i128 {
    if scale >= 0 {
        v * 10i128.pow(scale as u32)
    } else {
        let d = 10i128.pow(scale.unsigned_abs());
        (v + d - 1) / d
    }
}

#[test]
fn every_value_of_upstreams_parse_table_parses_as_upstream_expects_with_either_sign() {
    for &(input, v, scale) in UPSTREAM_PARSE {
        let want = nanos_of(v, scale);
        for (text, negative) in [
            (input.to_string(), false),
            (format!("+{input}"), false),
            (format!("-{input}"), v != 0),
        ] {
            let q = parse_quantity(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(kept(&q), (negative, want.clone()), "{text}: {q:?}");
        }
        // Beyond int64 (`12E`) `Value()` overflows: the test below pins what it gives.
        let q = parse_quantity(input).unwrap();
        if ceil_of(v, scale) <= i64::MAX as i128 {
            assert_eq!(q.value() as i128, ceil_of(v, scale), "{input}: Value()");
        }
    }
}

#[test]
fn what_upstream_refuses_is_an_error_naming_the_text() {
    for bad in UPSTREAM_INVALID {
        assert!(parse_quantity(bad).is_err(), "{bad:?} should not parse");
    }
    for bad in [
        "abc",
        "12X",
        "--1",
        "1.2.3",
        "1K",
        "1e",
        "1 1",
        "1e99999999999999999999",
    ] {
        let e = parse_quantity(bad).unwrap_err();
        assert!(e.contains(&format!("\"{bad}\"")), "{e}");
    }
    // `.Pi` takes the decimal path, which needs a digit; `.Ti` does not.
    assert!(parse_quantity(".Pi").is_err());
    assert_eq!(parse_quantity(".Ti").unwrap().value(), 0);
}

#[test]
fn white_space_around_a_quantity_is_ignored_as_upstreams_json_decoder_ignores_it() {
    // apimachinery's `TestJSONWhitespace`.
    for (text, want) in [(" 1", 1), ("1 ", 1), (" -1", -1), ("\t1500m\n", 2)] {
        assert_eq!(parse_quantity(text).unwrap().value(), want, "{text:?}");
    }
}

#[test]
fn value_rounds_up_away_from_zero_on_the_int64_path() {
    for (text, want) in [
        ("1500m", 2),
        ("1001m", 2),
        ("1000m", 1),
        ("1m", 1),
        ("-1500m", -2),
        ("1.5", 2),
        ("2.0", 2),
        ("0.5Mi", 524288),
    ] {
        assert_eq!(parse_quantity(text).unwrap().value(), want, "{text}");
    }
}

/// `Value()` beyond `int64`, worked out from upstream's arithmetic (`positiveScaleInt64`,
/// `scaledValue`, the binary cap): what upstream's decision reads for such a seed.
#[test]
fn value_beyond_int64_is_what_upstreams_arithmetic_gives() {
    for (text, want, how) in [
        (
            "9223372036854775807",
            i64::MAX,
            "19 digits: decimal path, exact",
        ),
        (
            "9223372036854775808",
            i64::MIN,
            "2^63: the low 64 bits as int64",
        ),
        ("18446744073709551617", 1, "2^64 + 1: the low 64 bits are 1"),
        (
            "10000000000000000000",
            -8446744073709551616,
            "10^19 wrapped",
        ),
        ("10E", 0, "int64Amount{10, 18}: overflow answers 0"),
        ("12E", 0, "int64Amount{12, 18}: overflow answers 0"),
        ("k", 0, "no digits before a suffix: zero"),
        ("e5", 0, "no digits before an exponent: zero"),
        ("1e19", 0, "int64Amount{1, 19}: overflow answers 0"),
        ("1e100", 0, "int64Amount overflow"),
        (
            "10000000000000000000000e64",
            0,
            "a multiple of 10^64: low bits zero",
        ),
        ("9Ei", i64::MAX, "binary suffix: capped"),
        ("-9Ei", -i64::MAX, "binary suffix: capped, negated"),
        (
            "-0.0000000000001",
            1,
            "decimal path: -1 nano, divided rounding towards +inf",
        ),
        (
            "-1.00000000001",
            0,
            "decimal path: -1000000001 nanos / 10^9 rounds towards +inf",
        ),
    ] {
        assert_eq!(parse_quantity(text).unwrap().value(), want, "{text}: {how}");
    }
}

#[test]
fn the_f64_reading_keeps_decimal_and_binary_suffixes() {
    assert_eq!(parse("250").unwrap(), 250.0);
    assert_eq!(parse("500m").unwrap(), 0.5);
    assert_eq!(parse("2k").unwrap(), 2000.0);
    assert_eq!(parse("16Gi").unwrap(), 16.0 * 1024.0 * 1024.0 * 1024.0);
    assert_eq!(parse("1e3").unwrap(), 1000.0);
    assert_eq!(parse("-3").unwrap(), -3.0);
    assert_eq!(parse("1.5Pi").unwrap(), 1.5 * 1024f64.powi(5));
}

/// Decimal suffixes and exponents, as (text, power of ten).
const DECIMAL: &[(&str, i32)] = &[
    ("n", -9),
    ("u", -6),
    ("m", -3),
    ("", 0),
    ("k", 3),
    ("M", 6),
    ("G", 9),
    ("e-2", -2),
    ("E+1", 1),
    ("e4", 4),
];

proptest! {
    /// Every quantity `<int>[.<frac>]<suffix>` within int64: `Value()` is the exact ceiling,
    /// whichever of upstream's two paths the text takes (many fraction digits take the decimal
    /// path), with or without a sign and surrounding space.
    #[test]
    fn value_is_the_ceiling_of_the_written_decimal(
        int in 0u64..10_000_000,
        frac in proptest::option::of("[0-9]{1,14}"),
        suffix in 0..DECIMAL.len(),
        plus in any::<bool>(),
        pad in any::<bool>(),
    ) {
        let (sfx, pow) = DECIMAL[suffix];
        let f = frac.clone().unwrap_or_default();
        let text = match &frac {
            Some(f) => format!("{int}.{f}{sfx}"),
            None => format!("{int}{sfx}"),
        };
        // int.frac × 10^pow = digits × 10^(pow - len(frac)), as a ratio of integers.
        let digits: u128 = format!("{int}{f}").parse().unwrap();
        let exp = pow - f.len() as i32;
        let want = if exp >= 0 {
            digits * 10u128.pow(exp as u32)
        } else {
            let d = 10u128.pow(exp.unsigned_abs());
            digits.div_ceil(d)
        };
        let shown = format!("{}{}{}", if pad { " " } else { "" }, if plus { "+" } else { "" }, text);
        let q = parse_quantity(&shown).unwrap();
        prop_assert_eq!(q.value() as u128, want, "{} parsed as {:?}", shown, q);
    }

    /// Binary suffixes: `<int>[.<frac>]Ki..Ti` is the exact ceiling too.
    #[test]
    fn binary_suffixes_are_the_ceiling_of_the_written_value(
        int in 0u64..100_000,
        frac in proptest::option::of("[0-9]{1,6}"),
        power in 1u32..=4,
    ) {
        let sfx = ["Ki", "Mi", "Gi", "Ti"][power as usize - 1];
        let f = frac.clone().unwrap_or_default();
        let text = match &frac {
            Some(f) => format!("{int}.{f}{sfx}"),
            None => format!("{int}{sfx}"),
        };
        let digits: u128 = format!("{int}{f}").parse().unwrap();
        let want = (digits << (10 * power)).div_ceil(10u128.pow(f.len() as u32));
        prop_assert_eq!(parse_quantity(&text).unwrap().value() as u128, want, "{}", text);
    }

    /// No text makes the reader panic; what parses has a value.
    #[test]
    fn any_text_is_a_quantity_or_an_error(text in "[-+0-9.eEinumkKMGTP ]{0,30}") {
        if let Ok(q) = parse_quantity(&text) {
            let _ = q.value();
        }
    }
}
