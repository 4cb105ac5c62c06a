//! Leaf helper: CIDR ranges, and the ranges Gardener reserves for its own use. The snapshot
//! marks seeds whose default networks reach into them; the `Networks` filter checks shoots.

use std::sync::LazyLock;

use ipnet::IpNet;

/// Ranges Gardener reserves for its own use; no shoot network may reach into them.
pub static RESERVED: LazyLock<Vec<IpNet>> = LazyLock::new(|| {
    [
        "240.0.0.0/8",
        "241.0.0.0/8",
        "242.0.0.0/8",
        "243.0.0.0/8",
        "244.0.0.0/8",
        "fd8f:6d53:b97a:1::/96",
    ]
    .iter()
    .map(|s| s.parse().expect("static CIDR"))
    .collect()
});

/// A CIDR as gardener-apiserver reads it (Go's `net.ParseCIDR`): an IPv4 part written with a
/// leading zero (`010.0.0.0/8`) is refused, as Go refuses it since 1.17 (others read it as
/// octal). Surrounding spaces are the caller's to trim.
pub fn parse(raw: &str) -> Result<IpNet, String> {
    let address = &raw.as_bytes()[..raw.find('/').unwrap_or(raw.len())];
    // the IPv4 part of `::ffff:10.0.0.0` too
    let v4 = &address[address
        .iter()
        .rposition(|&c| c == b':')
        .map_or(0, |c| c + 1)..];
    // A part of more than one character starting with `0`: one pass over the bytes (this runs
    // for every network of every shoot a decision reads).
    let leading_zero = |k: usize| {
        v4[k] == b'0' && (k == 0 || v4[k - 1] == b'.') && v4.get(k + 1).is_some_and(|&c| c != b'.')
    };
    if v4.contains(&b'.') && (0..v4.len()).any(leading_zero) {
        return Err(format!(
            "invalid CIDR {raw:?}: an IPv4 part has a leading zero, which Gardener refuses"
        ));
    }
    raw.parse::<IpNet>()
        .map_err(|_| format!("invalid CIDR {raw:?}"))
}

/// Two CIDRs share an address: their ranges intersect (never across IP families).
pub fn overlaps(a: &IpNet, b: &IpNet) -> bool {
    match (a, b) {
        (IpNet::V4(a), IpNet::V4(b)) => {
            a.network() <= b.broadcast() && b.network() <= a.broadcast()
        }
        (IpNet::V6(a), IpNet::V6(b)) => {
            a.network() <= b.broadcast() && b.network() <= a.broadcast()
        }
        _ => false,
    }
}

/// Does the CIDR reach into a range Gardener reserves?
pub fn reserved(net: &IpNet) -> bool {
    RESERVED.iter().any(|r| overlaps(r, net))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_leading_zero_in_an_ipv4_part_is_refused_as_go_refuses_it() {
        for bad in ["010.000.000.000/8", "10.0.0.01/32", "::ffff:010.0.0.0/104"] {
            let e = parse(bad).unwrap_err();
            assert!(e.contains("leading zero"), "{bad}: {e}");
        }
        for good in [
            "10.0.0.0/8",
            "0.0.0.0/0",
            "100.64.0.0/10",
            "2001:0db8::/32",
            "::ffff:10.0.0.0/104",
        ] {
            assert!(parse(good).is_ok(), "{good}");
        }
        assert_eq!(
            parse("10.0.0.0/33").unwrap_err(),
            "invalid CIDR \"10.0.0.0/33\""
        );
    }

    /// The leading-zero rule read part by part, as written in words: the one pass over the
    /// bytes must answer as it does.
    fn leading_zero_by_parts(raw: &str) -> bool {
        let address = raw.split('/').next().unwrap_or(raw);
        let v4 = address.rsplit(':').next().unwrap_or(address);
        v4.contains('.')
            && v4
                .split('.')
                .any(|part| part.len() > 1 && part.starts_with('0'))
    }

    proptest::proptest! {
        #[test]
        fn the_leading_zero_pass_reads_as_the_parts_do(raw in "[0-9a.:/]{0,16}") {
            let refused = parse(&raw).is_err_and(|e| e.contains("leading zero"));
            proptest::prop_assert_eq!(refused, leading_zero_by_parts(&raw), "{}", raw);
        }
    }
}
