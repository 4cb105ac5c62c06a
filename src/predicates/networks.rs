use std::fmt;

use ipnet::IpNet;

use crate::cidr::{RESERVED, overlaps, reserved};
use crate::context::{ShootContext, ShootNets};
use crate::reason::{Declared, Reason};
use crate::snapshot::columns::{Column, SeedBit};
use crate::snapshot::{SeedColumns, SeedInfo, Snapshot};

use super::framework::{FastCheck, Predicate, Prepared, Verdict, Why};

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
/// `spec.networking` pods/services take the seed's `shootDefaults` when their IP family matches;
/// a seed listing only one of them fills only that one, as gardener-apiserver's Shoot mutator
/// does (upstream's scheduler panics there: see "Differences from upstream").
/// A shoot with `status.networking` must have its services there, and its pods unless it is
/// workerless (upstream's `ValidateMultiNetworkDisjointedness`); without them it fits no seed.
pub struct Networks;

impl Predicate for Networks {
    fn name(&self) -> &'static str {
        NAME
    }

    fn columns(&self) -> &'static [Column] {
        const COLUMNS: &[Column] = &[Column::Bit(&PLAIN_DEFAULTS)];
        COLUMNS
    }

    /// The shoot's own networks are the same for every seed: checked once per decision.
    fn prepare(&self, cx: &ShootContext) -> Prepared {
        if cx.nets.present {
            Prepared::new(OwnProblems(own_problems(&cx.nets)))
        } else {
            Prepared::default()
        }
    }

    /// Nothing to check without networking; when the shoot's own networks are IPv4, outside
    /// the reserved ranges and without `status.networking`, only a seed's defaults can matter,
    /// and seeds whose defaults are plain IPv4 (a flag) pass.
    fn fast_check<'c>(
        &self,
        cx: &ShootContext,
        _: &Prepared,
        cols: &'c SeedColumns,
        _: bool,
    ) -> FastCheck<'c> {
        let n = &cx.nets;
        if !n.present {
            return FastCheck::Skip;
        }
        let plain = n.status.is_none()
            && [n.nodes, n.pods, n.services]
                .iter()
                .flatten()
                .all(|net| matches!(net, IpNet::V4(_)) && !reserved(net));
        if plain {
            FastCheck::flag(cols, &PLAIN_DEFAULTS)
        } else {
            FastCheck::Ask
        }
    }

    fn check(
        &self,
        cx: &ShootContext,
        state: &Prepared,
        seed: &SeedInfo,
        _: &Snapshot,
        why: Why,
    ) -> Verdict {
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
            why.reject(|| {
                Reason::new(Overlap {
                    detail: problems.join("; "),
                })
            })
        }
    }
}

/// The seed's `shootDefaults` networks are IPv4 (or unset) and outside the reserved ranges: a
/// shoot whose own networks are plain IPv4 passes whichever of them it takes.
static PLAIN_DEFAULTS: SeedBit = SeedBit {
    name: "plainNetworkDefaults",
    of: |seed| {
        let plain = |net: &Option<IpNet>, reserved: bool| {
            !reserved && net.is_none_or(|n| matches!(n, IpNet::V4(_)))
        };
        plain(&seed.nets.default_pods, seed.nets.default_pods_reserved)
            && plain(
                &seed.nets.default_services,
                seed.nets.default_services_reserved,
            )
    },
};

/// The shoot's networks overlap the seed's or a range Gardener reserves.
#[derive(Debug)]
struct Overlap {
    detail: String,
}

impl Declared for Overlap {
    fn name(&self) -> &'static str {
        "networks"
    }

    fn summary(&self) -> &'static str {
        "have networks that overlap the shoot's"
    }
}

impl fmt::Display for Overlap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid networks: {}", self.detail)
    }
}

#[cfg(test)]
mod tests;
