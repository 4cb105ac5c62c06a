use ipnet::IpNet;

use crate::api::Shoot;
use crate::cidr::{RESERVED, overlaps, reserved};
use crate::context::ShootContext;
use crate::field_error::unsupported;
use crate::outcome::FitError;
use crate::reason::{Reason, declared};
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

/// What `prepare` keeps for a shoot with `spec.networking`: its networks, and what is wrong
/// with them whatever the seed.
struct Networking {
    nets: ShootNets,
    own_problems: Vec<String>,
}

/// The shoot's CIDRs, from `spec.networking` and `status.networking`, kept apart because
/// upstream checks them apart: seed defaults fill only missing `spec` networks, and
/// `status.networking`, when present, must name its services (and pods, unless workerless).
#[derive(Clone, Debug, Default)]
struct ShootNets {
    /// `spec.networking` is set (upstream checks networks only then).
    present: bool,
    nodes: Option<IpNet>,
    pods: Option<IpNet>,
    services: Option<IpNet>,
    /// `status.networking`, when the shoot has it.
    status: Option<StatusNets>,
    /// The shoot's IP families (`IPv4` when unset).
    ipv4: bool,
    ipv6: bool,
    workerless: bool,
}

/// `status.networking`: lists, since a dual-stack shoot has one CIDR per family.
#[derive(Clone, Debug, Default)]
struct StatusNets {
    nodes: Vec<IpNet>,
    pods: Vec<IpNet>,
    services: Vec<IpNet>,
}

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
    /// A network that does not parse refuses the shoot, naming its field.
    fn prepare(&self, cx: &ShootContext) -> Result<Prepared, FitError> {
        let nets = parse_nets(cx.shoot)
            .map_err(|(field, message)| FitError::InvalidShoot { field, message })?;
        if !nets.present {
            return Ok(Prepared::default());
        }
        let own_problems = own_problems(&nets);
        Ok(Prepared::new(Networking { nets, own_problems }))
    }

    /// Nothing to check without networking; when the shoot's own networks are IPv4, outside
    /// the reserved ranges and without `status.networking`, only a seed's defaults can matter,
    /// and seeds whose defaults are plain IPv4 (a flag) pass.
    fn fast_check<'c>(
        &self,
        _: &ShootContext,
        state: &Prepared,
        cols: &'c SeedColumns,
        _: bool,
    ) -> FastCheck<'c> {
        let Some(Networking { nets: n, .. }) = state.get() else {
            return FastCheck::Skip;
        };
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
        _: &ShootContext,
        state: &Prepared,
        seed: &SeedInfo,
        _: &Snapshot,
        why: Why,
    ) -> Verdict {
        let Some(Networking { nets, own_problems }) = state.get() else {
            return Ok(());
        };
        let family_matches = |n: &IpNet| match n {
            IpNet::V4(_) => nets.ipv4,
            IpNet::V6(_) => nets.ipv6,
        };
        let own = own_networks(nets);
        let mut problems = own_problems.clone();
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

declared!(Overlap {
    name: "networks",
    summary: "have networks that overlap the shoot's",
    message(self, f): write!(f, "invalid networks: {}", self.detail),
});

/// `spec.networking` and `status.networking` parsed, or the field that does not parse and why.
fn parse_nets(shoot: &Shoot) -> Result<ShootNets, (String, String)> {
    let workerless = shoot
        .spec
        .provider
        .as_ref()
        .is_none_or(|p| p.workers.is_empty());
    let Some(n) = &shoot.spec.networking else {
        return Ok(ShootNets {
            workerless,
            ipv4: true,
            ..Default::default()
        });
    };
    let parse = |field: String, raw: &str| -> Result<IpNet, (String, String)> {
        crate::cidr::parse(raw.trim()).map_err(|e| (field, e))
    };
    let mut nets = ShootNets {
        present: true,
        workerless,
        ..Default::default()
    };
    for (i, fam) in n.ip_families.iter().enumerate() {
        match fam.as_str() {
            "IPv4" => nets.ipv4 = true,
            "IPv6" => nets.ipv6 = true,
            other => {
                return Err((
                    format!("spec.networking.ipFamilies[{i}]"),
                    unsupported(other, ["IPv4", "IPv6"]),
                ));
            }
        }
    }
    if n.ip_families.is_empty() {
        nets.ipv4 = true;
    }
    nets.nodes = n
        .nodes
        .as_deref()
        .map(|v| parse("spec.networking.nodes".into(), v))
        .transpose()?;
    nets.pods = n
        .pods
        .as_deref()
        .map(|v| parse("spec.networking.pods".into(), v))
        .transpose()?;
    nets.services = n
        .services
        .as_deref()
        .map(|v| parse("spec.networking.services".into(), v))
        .transpose()?;
    if let Some(status) = shoot.status.as_ref().and_then(|s| s.networking.as_ref()) {
        let list = |field: &str, values: &[String]| -> Result<Vec<IpNet>, (String, String)> {
            values
                .iter()
                .enumerate()
                .map(|(i, v)| parse(format!("{field}[{i}]"), v))
                .collect()
        };
        nets.status = Some(StatusNets {
            nodes: list("status.networking.nodes", &status.nodes)?,
            pods: list("status.networking.pods", &status.pods)?,
            services: list("status.networking.services", &status.services)?,
        });
    }
    Ok(nets)
}

#[cfg(test)]
mod tests;
