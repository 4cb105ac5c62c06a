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
