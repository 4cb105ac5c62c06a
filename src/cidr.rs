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
