use std::sync::LazyLock;

use ipnet::IpNet;

use crate::context::ShootContext;
use crate::reason::Reason;
use crate::snapshot::{SeedInfo, Snapshot};

use super::Predicate;

/// Ranges Gardener reserves for its own use; no shoot network may reach into them.
static RESERVED: LazyLock<Vec<IpNet>> = LazyLock::new(|| {
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

fn overlaps(a: &IpNet, b: &IpNet) -> bool {
    a.contains(&b.network()) || b.contains(&a.network())
}

/// Shoot networks must stay out of the reserved ranges, and the shoot's IPv6 networks must not
/// overlap the seed's networks (IPv4 overlap is allowed: shoot traffic is tunnelled). Missing
/// shoot pod/service networks take the seed's `shootDefaults` when their IP family matches.
pub struct Networks;

impl Predicate for Networks {
    fn name(&self) -> &'static str {
        "Networks"
    }

    fn filter(&self, cx: &ShootContext, seed: &SeedInfo, _: &Snapshot) -> Result<(), Reason> {
        let nets = &cx.nets;
        if !nets.present {
            return Ok(());
        }
        let family_matches = |n: &IpNet| match n {
            IpNet::V4(_) => nets.ipv4,
            IpNet::V6(_) => nets.ipv6,
        };
        let mut shoot_nets: Vec<(&str, IpNet)> = Vec::new();
        shoot_nets.extend(nets.nodes.iter().map(|n| ("nodes", *n)));
        shoot_nets.extend(nets.pods.iter().map(|n| ("pods", *n)));
        shoot_nets.extend(nets.services.iter().map(|n| ("services", *n)));
        if nets.pods.is_empty()
            && !nets.workerless
            && let Some(d) = seed.nets.default_pods.filter(family_matches)
        {
            shoot_nets.push(("pods (seed default)", d));
        }
        if nets.services.is_empty()
            && let Some(d) = seed.nets.default_services.filter(family_matches)
        {
            shoot_nets.push(("services (seed default)", d));
        }

        let mut problems = Vec::new();
        for (what, net) in &shoot_nets {
            if let Some(r) = RESERVED.iter().find(|r| overlaps(r, net)) {
                problems.push(format!("shoot {what} {net} overlaps reserved range {r}"));
            }
        }
        let seed_nets = [
            ("nodes", seed.nets.nodes),
            ("pods", seed.nets.pods),
            ("services", seed.nets.services),
        ];
        for (what, net) in shoot_nets.iter().filter(|(_, n)| matches!(n, IpNet::V6(_))) {
            for (seed_what, seed_net) in &seed_nets {
                if let Some(s) = seed_net
                    && overlaps(s, net)
                {
                    problems.push(format!("shoot {what} {net} overlaps seed {seed_what} {s}"));
                }
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(Reason::Networks {
                detail: problems.join("; "),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{SeedBuilder, ShootBuilder};
    use crate::predicates::testing::run;

    fn v6_seed() -> SeedBuilder {
        SeedBuilder::new("s1").networks("10.0.0.0/16", "2001:db8:1::/48", "2001:db8:2::/108")
    }

    #[test]
    fn networks_table() {
        let cases = [
            (
                "ipv4 overlap with the seed is allowed",
                ShootBuilder::new("garden-a", "s").nodes("10.250.0.0/16"),
                SeedBuilder::new("s1").networks("10.250.0.0/16", "100.96.0.0/11", "100.64.0.0/13"),
                true,
            ),
            (
                "ipv6 nodes overlapping seed pods are rejected",
                ShootBuilder::new("garden-a", "s")
                    .ip_families(&["IPv6"])
                    .nodes("2001:db8:1:5::/64"),
                v6_seed(),
                false,
            ),
            (
                "ipv6 nodes disjoint from seed are accepted",
                ShootBuilder::new("garden-a", "s")
                    .ip_families(&["IPv6"])
                    .nodes("2001:db8:9::/64"),
                v6_seed(),
                true,
            ),
            (
                "shoot pods in reserved range are rejected",
                ShootBuilder::new("garden-a", "s").pods("240.1.0.0/16"),
                SeedBuilder::new("s1"),
                false,
            ),
            (
                "shoot services in 244/8 are rejected",
                ShootBuilder::new("garden-a", "s").services("244.0.0.0/16"),
                SeedBuilder::new("s1"),
                false,
            ),
            (
                "shoot network in reserved ipv6 range is rejected",
                ShootBuilder::new("garden-a", "s")
                    .ip_families(&["IPv6"])
                    .nodes("fd8f:6d53:b97a:1::/112"),
                SeedBuilder::new("s1"),
                false,
            ),
            (
                "245/8 is not reserved",
                ShootBuilder::new("garden-a", "s").pods("245.0.0.0/16"),
                SeedBuilder::new("s1"),
                true,
            ),
            (
                "ipv6 seed default pods fill a missing shoot pods network",
                ShootBuilder::new("garden-a", "s")
                    .ip_families(&["IPv6"])
                    .nodes("2001:db8:9::/64"),
                v6_seed().shoot_defaults(Some("2001:db8:1:1::/64"), None),
                false,
            ),
            (
                "ipv6 seed default is ignored for an ipv4 shoot",
                ShootBuilder::new("garden-a", "s").nodes("10.1.0.0/16"),
                v6_seed().shoot_defaults(Some("2001:db8:1:1::/64"), None),
                true,
            ),
            (
                "status networking is checked too",
                ShootBuilder::new("garden-a", "s")
                    .ip_families(&["IPv6"])
                    .nodes("2001:db8:9::/64")
                    .status_pods("2001:db8:2::/112"),
                v6_seed(),
                false,
            ),
            (
                "shoot without networking is not checked",
                ShootBuilder::new("garden-a", "s").no_networking(),
                v6_seed(),
                true,
            ),
        ];
        for (name, shoot, seed, ok) in cases {
            let got = run(&Networks, &shoot.build(), &seed.build(), &[], &[]);
            assert_eq!(got.is_ok(), ok, "{name}: {got:?}");
        }
    }
}
