//! Kubernetes resource quantities (`250`, `500m`, `16Gi`, `1e3`) as `f64`.

/// Parses a Kubernetes quantity. Errors name what is wrong; the caller adds the field path.
pub fn parse(input: &str) -> Result<f64, String> {
    let s = input.trim();
    if s.is_empty() {
        return Err("empty quantity".into());
    }
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+' || c == '-'))
        .unwrap_or(s.len());
    let (number, suffix) = s.split_at(split);
    let base: f64 = number
        .parse()
        .map_err(|_| format!("{input:?} is not a quantity"))?;
    let factor = match suffix {
        "" => 1.0,
        "n" => 1e-9,
        "u" => 1e-6,
        "m" => 1e-3,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        "Ki" => 1024.0,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        "Ei" => 1024f64.powi(6),
        e if e.starts_with(['e', 'E']) => {
            let exp: i32 = e[1..]
                .parse()
                .map_err(|_| format!("{input:?} is not a quantity"))?;
            if exp.abs() > 18 {
                return Err(format!("{input:?} is out of range"));
            }
            10f64.powi(exp)
        }
        _ => return Err(format!("{input:?} has an unknown suffix {suffix:?}")),
    };
    let value = base * factor;
    if !value.is_finite() {
        return Err(format!("{input:?} is out of range"));
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn plain_decimal_and_binary_suffixes_parse() {
        assert_eq!(parse("250").unwrap(), 250.0);
        assert_eq!(parse("500m").unwrap(), 0.5);
        assert_eq!(parse("2k").unwrap(), 2000.0);
        assert_eq!(parse("16Gi").unwrap(), 16.0 * 1024.0 * 1024.0 * 1024.0);
        assert_eq!(parse("1e3").unwrap(), 1000.0);
        assert_eq!(parse("-3").unwrap(), -3.0);
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        for bad in ["", "abc", "12X", "1e999", "--1", "1.2.3", "e5"] {
            assert!(parse(bad).is_err(), "{bad} should not parse");
        }
    }
}
