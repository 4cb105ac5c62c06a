use ipnet::IpNet;

use crate::cidr::{RESERVED, overlaps};
use crate::context::{ShootContext, ShootNets};
use crate::reason::Reason;
use crate::snapshot::{SeedInfo, Snapshot};

use super::framework::{Predicate, Prepared};

/// The name in the configuration, in explanations and in events.
pub const NAME: &str = "Networks";

/// The problem of a shoot network (`what`, CIDR) that reaches into a reserved range.
fn reserved_overlap((what, net): (&str, IpNet)) -> Option<String> {
    RESERVED
        .iter()
        .find(|r| overlaps(r, &net))
        .map(|r| format!("shoot {what} {net} overlaps reserved range {r}"))
}

/// What is wrong with the shoot's own networks whatever the seed (what `prepare` keeps).
struct OwnProblems(Vec<String>);

/// The shoot's own networks, `spec` and `status`, each with what it is.
fn own_networks(nets: &ShootNets) -> impl Iterator<Item = (&'static str, IpNet)> + Clone + '_ {
    let status = nets.status.as_ref();
    nets.nodes
        .iter()
        .map(|n| ("nodes", *n))
        .chain(nets.pods.iter().map(|n| ("pods", *n)))
        .chain(nets.services.iter().map(|n| ("services", *n)))
        .chain(status.into_iter().flat_map(|s| {
            let nodes = s.nodes.iter().map(|n| ("nodes (status)", *n));
            let pods = s.pods.iter().map(|n| ("pods (status)", *n));
            let services = s.services.iter().map(|n| ("services (status)", *n));
            nodes.chain(pods).chain(services)
        }))
}

/// The problems of the shoot's own networks: reserved ranges, and `status.networking` without
/// its services (or pods, unless workerless).
fn own_problems(nets: &ShootNets) -> Vec<String> {
    let mut problems: Vec<String> = own_networks(nets).filter_map(reserved_overlap).collect();
    if let Some(s) = &nets.status {
        if s.services.is_empty() {
            problems.push("status.networking.services is required".into());
        }
        if s.pods.is_empty() && !nets.workerless {
            problems.push("status.networking.pods is required".into());
        }
    }
    problems
}

/// Shoot networks must stay out of the reserved ranges, and the shoot's IPv6 networks must not
/// overlap the seed's networks (IPv4 overlap is allowed: shoot traffic is tunnelled). Missing
/// `spec.networking` pods/services take the seed's `shootDefaults` when their IP family matches.
/// A shoot with `status.networking` must have its services there, and its pods unless it is
/// workerless (upstream's `ValidateMultiNetworkDisjointedness`); without them it fits no seed.
pub struct Networks;

impl Predicate for Networks {
    fn name(&self) -> &'static str {
        NAME
    }

    /// The shoot's own networks are the same for every seed: checked once per decision.
    fn prepare(&self, cx: &ShootContext) -> Prepared {
        if cx.nets.present {
            Prepared::new(OwnProblems(own_problems(&cx.nets)))
        } else {
            Prepared::default()
        }
    }

    fn filter(
        &self,
        cx: &ShootContext,
        state: &Prepared,
        seed: &SeedInfo,
        _: &Snapshot,
    ) -> Result<(), Reason> {
        let nets = &cx.nets;
        if !nets.present {
            return Ok(());
        }
        let family_matches = |n: &IpNet| match n {
            IpNet::V4(_) => nets.ipv4,
            IpNet::V6(_) => nets.ipv6,
        };
        let own = own_networks(nets);
        let mut problems = match state.get::<OwnProblems>() {
            Some(OwnProblems(problems)) => problems.clone(),
            None => own_problems(nets),
        };
        let default_pods = (nets.pods.is_none() && !nets.workerless)
            .then(|| seed.nets.default_pods.filter(family_matches))
            .flatten()
            .map(|d| ("pods (seed default)", d));
        let default_services = nets
            .services
            .is_none()
            .then(|| seed.nets.default_services.filter(family_matches))
            .flatten()
            .map(|d| ("services (seed default)", d));
        let defaults = default_pods.into_iter().chain(default_services);
        // Which defaults reach into a reserved range is known per seed: only those are named.
        if (default_pods.is_some() && seed.nets.default_pods_reserved)
            || (default_services.is_some() && seed.nets.default_services_reserved)
        {
            problems.extend(defaults.clone().filter_map(reserved_overlap));
        }
        let shoot_nets = own.chain(defaults);
        let seed_nets = [
            ("nodes", seed.nets.nodes),
            ("pods", seed.nets.pods),
            ("services", seed.nets.services),
        ];
        for (what, net) in shoot_nets.filter(|(_, n)| matches!(n, IpNet::V6(_))) {
            for (seed_what, seed_net) in &seed_nets {
                if let Some(s) = seed_net
                    && overlaps(s, &net)
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
    fn overlap_is_any_shared_address() {
        let net = |s: &str| s.parse::<IpNet>().unwrap();
        let cases = [
            ("10.0.0.0/8", "10.1.0.0/16", true),
            ("10.1.0.0/16", "10.0.0.0/8", true),
            ("10.0.0.0/16", "10.1.0.0/16", false),
            ("10.0.0.0/16", "10.0.255.255/32", true),
            ("10.0.0.0/16", "10.1.0.0/32", false),
            ("240.0.0.0/8", "239.0.0.0/8", false),
            ("0.0.0.0/0", "244.1.2.0/24", true),
            ("2001:db8::/32", "2001:db8:ffff::/48", true),
            ("2001:db8::/32", "2001:db9::/32", false),
            ("10.0.0.0/8", "::/0", false),
        ];
        for (a, b, want) in cases {
            assert_eq!(overlaps(&net(a), &net(b)), want, "{a} {b}");
        }
    }

    #[test]
    fn networks_table() {
        let cases = [
            (
                "a seed default in a reserved range rejects a shoot that would take it",
                ShootBuilder::new("garden-a", "s").nodes("10.250.0.0/16"),
                SeedBuilder::new("s1").shoot_defaults(Some("240.1.0.0/16"), None),
                false,
            ),
            (
                "a seed default in a reserved range does not matter to a shoot with its own",
                ShootBuilder::new("garden-a", "s")
                    .nodes("10.250.0.0/16")
                    .pods("100.96.0.0/11"),
                SeedBuilder::new("s1").shoot_defaults(Some("240.1.0.0/16"), None),
                true,
            ),
            (
                "an IPv6 services default in the reserved range rejects an IPv6 shoot",
                ShootBuilder::new("garden-a", "s")
                    .ip_families(&["IPv6"])
                    .nodes("2001:db8:1:5::/64")
                    .pods("2001:db8:3::/48"),
                SeedBuilder::new("s1").shoot_defaults(None, Some("fd8f:6d53:b97a:1::/112")),
                false,
            ),
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
                "status networking with services and pods is accepted",
                ShootBuilder::new("garden-a", "s")
                    .status_services("100.64.0.0/13")
                    .status_pods("100.96.0.0/11"),
                SeedBuilder::new("s1"),
                true,
            ),
            (
                "status networking without services fits no seed",
                ShootBuilder::new("garden-a", "s").status_pods("100.96.0.0/11"),
                SeedBuilder::new("s1"),
                false,
            ),
            (
                "status networking without pods fits no seed",
                ShootBuilder::new("garden-a", "s").status_services("100.64.0.0/13"),
                SeedBuilder::new("s1"),
                false,
            ),
            (
                "status networking of a workerless shoot needs no pods",
                ShootBuilder::new("garden-a", "s")
                    .workerless()
                    .status_services("100.64.0.0/13"),
                SeedBuilder::new("s1"),
                true,
            ),
            (
                "an empty status networking fits no seed",
                ShootBuilder::new("garden-a", "s").empty_status_networking(),
                SeedBuilder::new("s1"),
                false,
            ),
            (
                "status networking is not required when the shoot has no spec networking",
                ShootBuilder::new("garden-a", "s")
                    .no_networking()
                    .empty_status_networking(),
                SeedBuilder::new("s1"),
                true,
            ),
            (
                "a seed default fills missing spec pods even when status names pods",
                ShootBuilder::new("garden-a", "s")
                    .ip_families(&["IPv6"])
                    .nodes("2001:db8:9::/64")
                    .services("2001:db8:a::/108")
                    .status_services("2001:db8:a::/108")
                    .status_pods("2001:db8:b::/64"),
                v6_seed().shoot_defaults(Some("2001:db8:1:1::/64"), None),
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
