//! Kubernetes resource quantities (`250`, `1500m`, `16Gi`, `1e3`), read exactly as apimachinery's
//! `resource.Quantity` reads them: `ParseQuantity` after the JSON decoder's trimming of white
//! space, then `Value()`.
//!
//! Upstream's decision compares a seed's usage with `status.allocatable.shoots.Value()`, so the
//! scheduler must take the same integer from every quantity gardener-apiserver stores: fractions
//! round up (`1500m` → 2, `-1500m` → -2), binary suffixes beyond `int64` saturate at 2^63-1
//! (`9Ei`), and decimal values beyond it give what `Value()` gives there (0, or the value
//! wrapped to 64 bits, often negative). Parsing follows upstream's two paths: small numbers as an
//! `int64` with a decimal scale, the others as an arbitrary-precision decimal rounded up to
//! nanos. Only what `ParseQuantity` refuses is an error. A leaf module.

use num_bigint::BigUint;
use num_traits::{ToPrimitive, Zero};

/// The decimal digits an `int64` holds in upstream's fast path (`maxInt64Factors`).
const MAX_INT64_FACTORS: i32 = 18;
/// Upstream's smallest scale (`resource.Nano`): every value is rounded up to nanos.
const NANO: i32 = -9;

/// A parsed quantity, in the representation upstream keeps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Quantity {
    /// `value × 10^scale`, what upstream keeps as an `int64Amount`.
    Int { value: i64, scale: i32 },
    /// `±digits × 10^-scale`, what upstream keeps as an `inf.Dec` (`binary`: a binary suffix,
    /// whose magnitude upstream caps at 2^63-1).
    Dec {
        negative: bool,
        digits: BigUint,
        scale: i64,
        binary: bool,
    },
}

/// Why a quantity does not parse, as `ParseQuantity` reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Refusal {
    /// `ErrFormatWrong`: not `[+-]number[suffix]`.
    Format,
    /// `ErrNumeric`: no digit where upstream needs one (`.Pi`).
    Numeric,
    /// `ErrSuffix`: a suffix upstream does not know (`1K`, `1mi`, `1e`).
    Suffix,
}

impl Refusal {
    fn explain(self, input: &str) -> String {
        let q = crate::escape::line(input);
        match self {
            Refusal::Format => format!(
                "\"{q}\" is not a quantity: a number with an optional sign, fraction and suffix (e.g. 250, 1500m, 16Gi, 1e3)"
            ),
            Refusal::Numeric => format!("\"{q}\" is not a quantity: its number has no digits"),
            Refusal::Suffix => format!(
                "\"{q}\" has an unknown suffix: n, u, m, k, M, G, T, P, E, Ki, Mi, Gi, Ti, Pi, Ei or an exponent such as e3"
            ),
        }
    }
}

/// Parses a quantity as a JSON or YAML string field holds it: white space around it is ignored,
/// as upstream's JSON decoder ignores it. Errors name what is wrong; the caller adds the field.
pub fn parse_quantity(input: &str) -> Result<Quantity, String> {
    // Go's `strings.TrimSpace` and Rust's `trim` both trim Unicode White_Space.
    parse_exact(input.trim()).map_err(|r| r.explain(input))
}

/// A quantity as an `f64` (approximate beyond 2^53), for the scores that weigh resources.
pub fn parse(input: &str) -> Result<f64, String> {
    parse_quantity(input).map(|q| q.to_f64())
}

/// The parts `parseQuantityString` splits a quantity into.
struct Parts<'a> {
    positive: bool,
    /// The number as written (sign, leading zeros and point included), for the decimal path.
    value: &'a str,
    /// The integer digits without leading zeros (`"0"` when there are none).
    num: &'a str,
    denom: &'a str,
    suffix: &'a str,
}

/// Upstream's scanner, byte by byte: `[+-]? 0* digits* (. digits*)? [eEinumkKMGTP]* [+-]? digits*`.
fn split(s: &str) -> Result<Parts<'_>, Refusal> {
    let b = s.as_bytes();
    let end = b.len();
    let mut p = Parts {
        positive: true,
        value: "",
        num: "",
        denom: "",
        suffix: "",
    };
    let mut pos = 0;
    match b.first() {
        Some(b'-') => {
            p.positive = false;
            pos = 1;
        }
        Some(b'+') => pos = 1,
        _ => {}
    }
    while pos < end && b[pos] == b'0' {
        pos += 1;
    }
    if pos >= end {
        // Only a sign and zeros: zero, whatever the sign.
        p.num = "0";
        p.value = "0";
        return Ok(p);
    }
    let start = pos;
    while pos < end && b[pos].is_ascii_digit() {
        pos += 1;
    }
    p.num = if pos == start { "0" } else { &s[start..pos] };
    if pos >= end {
        p.value = s;
        return Ok(p);
    }
    if b[pos] == b'.' {
        pos += 1;
        let start = pos;
        while pos < end && b[pos].is_ascii_digit() {
            pos += 1;
        }
        p.denom = &s[start..pos];
        if pos >= end {
            p.value = s;
            return Ok(p);
        }
    }
    p.value = &s[..pos];
    let suffix_start = pos;
    while pos < end && b"eEinumkKMGTP".contains(&b[pos]) {
        pos += 1;
    }
    if pos < end && matches!(b[pos], b'-' | b'+') {
        pos += 1;
    }
    while pos < end && b[pos].is_ascii_digit() {
        pos += 1;
    }
    if pos < end {
        return Err(Refusal::Format);
    }
    p.suffix = &s[suffix_start..];
    Ok(p)
}

/// The base (10 or 2) and exponent a suffix stands for, as upstream's suffixer reads it.
fn interpret(suffix: &str) -> Option<(u32, i32)> {
    Some(match suffix {
        "" => (10, 0),
        "n" => (10, -9),
        "u" => (10, -6),
        "m" => (10, -3),
        "k" => (10, 3),
        "M" => (10, 6),
        "G" => (10, 9),
        "T" => (10, 12),
        "P" => (10, 15),
        "E" => (10, 18),
        "Ki" => (2, 10),
        "Mi" => (2, 20),
        "Gi" => (2, 30),
        "Ti" => (2, 40),
        "Pi" => (2, 50),
        "Ei" => (2, 60),
        _ if suffix.len() > 1 && suffix.starts_with(['e', 'E']) => {
            // Go's `strconv.ParseInt(…, 10, 64)`, then a conversion to int32 that wraps.
            let exponent: i64 = parse_go_int(&suffix[1..])?;
            (10, exponent as i32)
        }
        _ => return None,
    })
}

/// `strconv.ParseInt(s, 10, 64)`: an optional sign and at least one digit, within `i64`.
fn parse_go_int(s: &str) -> Option<i64> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// `ParseQuantity`, for a string already trimmed.
fn parse_exact(s: &str) -> Result<Quantity, Refusal> {
    if s.is_empty() {
        return Err(Refusal::Format);
    }
    let p = split(s)?;
    let (base, exponent) = interpret(p.suffix).ok_or(Refusal::Suffix)?;
    let (num_len, denom_len) = (p.num.len() as i32, p.denom.len() as i32);
    let binary = base == 2;
    // Upstream's fast path: a value whose digits fit an int64 and whose scale is at least nano.
    let (mut scale, mantissa, precision) = if binary {
        if p.denom.is_empty() {
            // `float32(exponent)*3/10` is exact for the exponents 10..60.
            let precision = 15 - num_len - exponent * 3 / 10 - 1;
            (0i32, 1i64 << exponent, precision)
        } else {
            (0, 1, -1)
        }
    } else {
        (
            exponent,
            1,
            MAX_INT64_FACTORS.wrapping_sub(num_len + denom_len),
        )
    };
    if precision >= 0 {
        scale = scale.wrapping_sub(denom_len);
        if scale >= NANO {
            // At most 18 digits: always an int64.
            let shifted: i64 = format!("{}{}", p.num, p.denom)
                .parse()
                .map_err(|_| Refusal::Numeric)?;
            if let Some(v) = shifted.checked_mul(mantissa) {
                let value = if p.positive { v } else { -v };
                return Ok(Quantity::Int { value, scale });
            }
        }
    }
    // The decimal path: `inf.Dec.SetString(value)` needs a digit.
    let digits_text: String = p.value.chars().filter(char::is_ascii_digit).collect();
    if digits_text.is_empty() {
        return Err(Refusal::Numeric);
    }
    let mut digits = BigUint::parse_bytes(digits_text.as_bytes(), 10).ok_or(Refusal::Numeric)?;
    let written_scale = denom_len;
    let scale = if binary {
        digits <<= exponent as u32;
        i64::from(written_scale)
    } else {
        // Both are int32 in upstream: the sum wraps.
        i64::from(written_scale.wrapping_add(exponent.wrapping_neg()))
    };
    if digits.is_zero() {
        return Ok(Quantity::Int { value: 0, scale: 0 });
    }
    Ok(Quantity::Dec {
        negative: !p.positive,
        digits,
        scale,
        binary,
    })
}

/// The nanos a decimal value holds after upstream's rounding up (away from zero), as magnitude.
/// `None` when the value is a multiple of 10^64: the low 64 bits `Value()` keeps are zero, so
/// its value is 0 however many digits follow (which spares building 10^2147483648).
fn nanos(digits: &BigUint, scale: i64) -> Option<BigUint> {
    if scale <= 9 {
        if -scale >= 64 {
            return None;
        }
        return Some(digits * BigUint::from(10u32).pow((9 - scale) as u32));
    }
    let drop = scale - 9;
    // Fewer digits than places to drop: the value is below one nano, rounded up to one.
    if drop > digits.bits() as i64 {
        return Some(BigUint::from(1u32));
    }
    let divisor = BigUint::from(10u32).pow(drop as u32);
    let (q, r) = (digits / &divisor, digits % &divisor);
    Some(if r.is_zero() { q } else { q + 1u32 })
}

/// The low 64 bits of `n`, as Go's `big.Int.Int64` and `uint64` conversions keep them.
fn low64(n: &BigUint) -> u64 {
    n.iter_u64_digits().next().unwrap_or(0)
}

impl Quantity {
    /// Upstream's `Quantity.Value()`: the integer value rounded up, and beyond `int64` what
    /// upstream's arithmetic gives there (0 for an overflowing `int64Amount`, the value wrapped to
    /// 64 bits for a decimal, 2^63-1 for a binary suffix).
    pub fn value(&self) -> i64 {
        match self {
            Quantity::Int { value, scale } if *scale < 0 => {
                let divisor = 10i64.pow(scale.unsigned_abs());
                let (q, r) = (value / divisor, value % divisor);
                if r == 0 { q } else { q + value.signum() }
            }
            Quantity::Int { value, scale } => 10i64
                .checked_pow(*scale as u32)
                .and_then(|f| value.checked_mul(f))
                // Upstream's `positiveScaleInt64` answers 0 when the product overflows.
                .unwrap_or(0),
            Quantity::Dec {
                negative,
                digits,
                scale,
                binary,
            } => {
                let Some(u) = nanos(digits, *scale) else {
                    return 0;
                };
                const BILLION: i64 = 1_000_000_000;
                let cap = BigUint::from(i64::MAX as u64) * BigUint::from(BILLION as u64);
                if *binary && u > cap {
                    return if *negative { -i64::MAX } else { i64::MAX };
                }
                if *negative {
                    // `scaledValue`'s fast path: Go's int64 of the big value, then a division
                    // rounding towards +∞.
                    let v = (low64(&u) as i64).wrapping_neg();
                    let (q, r) = (v / BILLION, v % BILLION);
                    return if r == 0 { q } else { q.wrapping_add(1) };
                }
                if u < BigUint::from(i64::MAX as u64) {
                    let v = low64(&u) as i64;
                    let (q, r) = (v / BILLION, v % BILLION);
                    return if r == 0 { q } else { q + 1 };
                }
                let billion = BigUint::from(BILLION as u64);
                let (q, r) = (&u / &billion, &u % &billion);
                let v = low64(&q) as i64;
                if r.is_zero() { v } else { v.wrapping_add(1) }
            }
        }
    }

    /// The value as an `f64`, unrounded: for weighing, never for a seed's capacity.
    pub fn to_f64(&self) -> f64 {
        match self {
            Quantity::Int { value, scale } => *value as f64 * 10f64.powi(*scale),
            Quantity::Dec {
                negative,
                digits,
                scale,
                binary,
            } => {
                let magnitude =
                    digits.to_f64().unwrap_or(f64::INFINITY) * 10f64.powf(-*scale as f64);
                let magnitude = if *binary {
                    magnitude.min(i64::MAX as f64)
                } else {
                    magnitude
                };
                if *negative { -magnitude } else { magnitude }
            }
        }
    }
}

#[cfg(test)]
mod tests;
