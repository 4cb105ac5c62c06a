//! With no latency matrix and no region ConfigMap, `Scored` + `LatencyDistance` places shoots on
//! the geographically nearest feasible region, for every provider of the region catalogue, and
//! says so in the explanation. The opt-in filters `MaxLatency` and `Residency` reject what they
//! must.

use chrono::Utc;
use gardener_scheduler::api::{ANNOTATION_RESIDENCY, Project, ProjectSpec};
use gardener_scheduler::compile::load_str;
use gardener_scheduler::fixtures::{CloudProfileBuilder, SeedBuilder, ShootBuilder};
use gardener_scheduler::profile::Profile;
use gardener_scheduler::regions::Regions;
use gardener_scheduler::schedule::{Decision, FitError, schedule};
use gardener_scheduler::snapshot::Snapshot;

const SCORED_LATENCY: &str = "
schedulers:
  shoot:
    candidateDeterminationStrategy: Scored
    priorities:
    - name: LatencyDistance
";

fn profile(yaml: &str) -> (Profile, Regions) {
    let cfg = load_str(yaml).unwrap_or_else(|e| panic!("{e}")).config;
    let shoot = &cfg.schedulers.shoot;
    (
        Profile::from_config("test", shoot).unwrap_or_else(|e| panic!("{e:?}")),
        Regions::with_overrides(&shoot.regions),
    )
}

/// Seeds `(name, provider, region)`; the shoot's CloudProfile allows every provider.
fn landscape(seeds: &[(&str, &str, &str)], regions: Regions) -> Snapshot {
    let mut snap = Snapshot::new();
    snap.set_regions(regions);
    for provider in [
        "aws",
        "gcp",
        "azure",
        "alicloud",
        "hcloud",
        "stackit",
        "openstack",
    ] {
        snap.upsert_cloud_profile(
            &CloudProfileBuilder::new(provider)
                .provider_types(&["*"])
                .build(),
        );
    }
    for (name, provider, region) in seeds {
        snap.upsert_seed(
            &SeedBuilder::new(name)
                .provider(provider)
                .region(region)
                .build(),
        );
    }
    snap
}

fn shoot(provider: &str, region: &str) -> ShootBuilder {
    ShootBuilder::new("garden-dev", "s")
        .provider(provider)
        .cloud_profile(provider)
        .region(region)
}

fn place(
    yaml: &str,
    seeds: &[(&str, &str, &str)],
    shoot: ShootBuilder,
) -> Result<Decision, FitError> {
    let (profile, regions) = profile(yaml);
    let snap = landscape(seeds, regions);
    schedule(&shoot.build(), &snap, &profile, Utc::now())
}

fn winner_detail(d: &Decision) -> String {
    d.winner().priorities[0].detail.to_string()
}

/// `(provider, shoot region, seed regions, expected seed region)`.
#[test]
fn scored_latency_distance_picks_the_geographically_nearest_region_for_every_provider() {
    let cases: &[(&str, &str, &[&str], &str)] = &[
        // The two complaints: a name-alike far away used to win.
        (
            "azure",
            "switzerlandnorth",
            &["westeurope", "northeurope", "australiaeast"],
            "westeurope",
        ),
        (
            "aws",
            "ca-central-1",
            &["us-east-1", "eu-central-1", "ap-south-1"],
            "us-east-1",
        ),
        (
            "aws",
            "eu-central-2",
            &["eu-central-1", "eu-west-1", "us-east-1"],
            "eu-central-1",
        ),
        (
            "aws",
            "ap-southeast-4",
            &["ap-southeast-1", "ap-southeast-2", "ap-south-1"],
            "ap-southeast-2",
        ),
        (
            "gcp",
            "europe-west6",
            &["europe-west1", "europe-west3", "us-east4"],
            "europe-west3",
        ),
        (
            "gcp",
            "us-west2",
            &["us-west1", "us-east4", "us-west4"],
            "us-west4",
        ),
        (
            "azure",
            "germanynorth",
            &["germanywestcentral", "westeurope", "northeurope"],
            "germanywestcentral",
        ),
        (
            "alicloud",
            "cn-shanghai",
            &["cn-hangzhou", "cn-beijing", "cn-shenzhen"],
            "cn-hangzhou",
        ),
        (
            "alicloud",
            "eu-west-1",
            &["eu-central-1", "us-east-1", "me-east-1"],
            "eu-central-1",
        ),
        ("hcloud", "fsn1", &["nbg1", "hel1", "ash"], "nbg1"),
        ("hcloud", "hil", &["ash", "sin", "hel1"], "ash"),
        ("stackit", "eu02", &["eu01"], "eu01"),
    ];
    for (provider, region, seeds, want) in cases {
        let seeds: Vec<(String, &str, &str)> = seeds
            .iter()
            .map(|r| (format!("{provider}-{r}"), *provider, *r))
            .collect();
        let seeds: Vec<(&str, &str, &str)> =
            seeds.iter().map(|(n, p, r)| (n.as_str(), *p, *r)).collect();
        let d = place(SCORED_LATENCY, &seeds, shoot(provider, region)).unwrap();
        assert_eq!(
            d.seed,
            format!("{provider}-{want}"),
            "{provider} shoot in {region}"
        );
        let detail = winner_detail(&d);
        assert!(
            detail.contains("estimated from distance") && detail.ends_with("region catalogue"),
            "{provider} {region}: {detail}"
        );
    }
}

#[test]
fn the_explanation_names_the_cities_the_distance_and_the_catalogue() {
    let d = place(
        SCORED_LATENCY,
        &[
            ("ams", "azure", "westeurope"),
            ("syd", "azure", "australiaeast"),
        ],
        shoot("azure", "switzerlandnorth"),
    )
    .unwrap();
    assert_eq!(
        winner_detail(&d),
        "≈ 11.2 ms, estimated from distance Zurich → Amsterdam (≈ 610 km), region catalogue"
    );
}

#[test]
fn cross_provider_regions_in_one_metro_are_next_to_each_other() {
    let d = place(
        SCORED_LATENCY,
        &[
            ("gcp-fra", "gcp", "europe-west3"),
            ("aws-dub", "aws", "eu-west-1"),
        ],
        shoot("aws", "eu-central-1"),
    )
    .unwrap();
    assert_eq!(d.seed, "gcp-fra");
    assert_eq!(
        winner_detail(&d),
        "≈ 2 ms, estimated from distance Frankfurt → Frankfurt (≈ 0 km), region catalogue"
    );
}

#[test]
fn a_name_two_providers_use_for_different_places_is_not_taken_as_the_same_region() {
    // Alibaba's eu-west-1 is London, AWS's Dublin; AWS eu-west-2 is London.
    let d = place(
        SCORED_LATENCY,
        &[
            ("aws-dub", "aws", "eu-west-1"),
            ("aws-lon", "aws", "eu-west-2"),
        ],
        shoot("alicloud", "eu-west-1"),
    )
    .unwrap();
    assert_eq!(d.seed, "aws-lon");
}

#[test]
fn operator_regions_place_private_sites_and_are_named_in_the_explanation() {
    let yaml = format!(
        "{SCORED_LATENCY}    regions:
    - name: RegionOne
      provider: openstack
      city: Walldorf
      location: {{lat: 49.30, lon: 8.64}}
      country: DE
"
    );
    let d = place(
        &yaml,
        &[("fra", "aws", "eu-central-1"), ("iad", "aws", "us-east-1")],
        shoot("openstack", "RegionOne"),
    )
    .unwrap();
    assert_eq!(d.seed, "fra");
    let detail = winner_detail(&d);
    assert!(
        detail.contains("Walldorf → Frankfurt") && detail.ends_with("schedulers.shoot.regions"),
        "{detail}"
    );
}

#[test]
fn regions_unknown_to_the_catalogue_still_fall_back_to_the_name_distance() {
    let d = place(
        SCORED_LATENCY,
        &[("a", "openstack", "lab-2"), ("b", "openstack", "zzz-9")],
        shoot("openstack", "lab-1"),
    )
    .unwrap();
    assert_eq!(d.seed, "a");
    assert!(winner_detail(&d).contains("fallback: region-name distance"));
}

const MAX_LATENCY: &str = "
schedulers:
  shoot:
    candidateDeterminationStrategy: Scored
    priorities:
    - name: LatencyDistance
    filters:
    - name: MaxLatency
      args:
        maxLatencyMs: 20
";

#[test]
fn max_latency_rejects_seeds_estimated_too_far_and_counts_them() {
    let err = place(
        MAX_LATENCY,
        &[("iad", "aws", "us-east-1"), ("bom", "aws", "ap-south-1")],
        shoot("aws", "eu-central-1"),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "0/2 seeds are available: 2 seed(s) are farther than the maximum latency."
    );
    let FitError::NoFit { rejected, .. } = &err else {
        panic!("{err:?}")
    };
    assert!(
        rejected.iter().all(|r| r.stage == "MaxLatency"),
        "{rejected:?}"
    );
    assert_eq!(
        rejected[0].reason.to_string(),
        "farther than 20 ms (≈ 100.5 ms, estimated from distance Frankfurt → Mumbai (≈ 6560 km), region catalogue)"
    );
    assert!(
        err.hints().iter().any(|h| h.contains("maxLatencyMs")),
        "{:?}",
        err.hints()
    );
    let d = place(
        MAX_LATENCY,
        &[("iad", "aws", "us-east-1"), ("zrh", "aws", "eu-central-2")],
        shoot("aws", "eu-central-1"),
    )
    .unwrap();
    assert_eq!(d.seed, "zrh");
    assert_eq!(d.rejected.len(), 1);
}

const EU_ONLY: &str = "
schedulers:
  shoot:
    candidateDeterminationStrategy: Scored
    priorities:
    - name: LatencyDistance
    filters:
    - name: Residency
      args:
        groups:
        - name: eu
";

#[test]
fn residency_keeps_eu_shoots_on_eu_seeds_even_when_a_nearer_seed_is_outside() {
    // Zurich is nearer to Milan than Frankfurt is, but outside the EU.
    let seeds = [
        ("zrh", "aws", "eu-central-2"),
        ("fra", "aws", "eu-central-1"),
    ];
    let free = place(SCORED_LATENCY, &seeds, shoot("aws", "eu-south-1")).unwrap();
    assert_eq!(free.seed, "zrh");
    let d = place(EU_ONLY, &seeds, shoot("aws", "eu-south-1")).unwrap();
    assert_eq!(d.seed, "fra");
    assert_eq!(d.rejected[0].stage, "Residency");
    assert_eq!(
        d.rejected[0].reason.to_string(),
        "seed region eu-central-2 (Zurich, CH, jurisdiction ch) is outside group eu of the shoot's region eu-south-1"
    );
    // A shoot outside every group is not restricted.
    let us = place(EU_ONLY, &seeds, shoot("aws", "us-east-1")).unwrap();
    assert!(us.rejected.is_empty(), "{:?}", us.rejected);
}

#[test]
fn residency_failure_line_and_hint_name_the_opt_out() {
    let err = place(
        EU_ONLY,
        &[("zrh", "aws", "eu-central-2"), ("iad", "aws", "us-east-1")],
        shoot("aws", "eu-central-1"),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "0/2 seeds are available: 2 seed(s) are outside the shoot's residency group."
    );
    assert!(
        err.hints()
            .iter()
            .any(|h| h.contains(ANNOTATION_RESIDENCY) && h.contains("eu")),
        "{:?}",
        err.hints()
    );
}

#[test]
fn residency_opt_out_on_the_shoot_or_its_project_lifts_the_filter() {
    let seeds = [("zrh", "aws", "eu-central-2")];
    let d = place(
        EU_ONLY,
        &seeds,
        shoot("aws", "eu-central-1").annotation(ANNOTATION_RESIDENCY, "ignore"),
    )
    .unwrap();
    assert_eq!(d.seed, "zrh");

    let (profile, regions) = profile(EU_ONLY);
    let mut snap = landscape(&seeds, regions);
    let mut project = Project {
        spec: ProjectSpec {
            namespace: Some("garden-dev".into()),
        },
        ..Default::default()
    };
    project.metadata.name = Some("dev".into());
    project.metadata.annotations =
        Some([(ANNOTATION_RESIDENCY.to_string(), "ignore".to_string())].into());
    snap.upsert_project(&project);
    let s = shoot("aws", "eu-central-1").build();
    assert_eq!(
        schedule(&s, &snap, &profile, Utc::now()).unwrap().seed,
        "zrh"
    );
    project.metadata.annotations = None;
    snap.upsert_project(&project);
    assert!(schedule(&s, &snap, &profile, Utc::now()).is_err());
}

#[test]
fn residency_groups_may_span_several_jurisdictions() {
    let yaml = "
schedulers:
  shoot:
    candidateDeterminationStrategy: Scored
    priorities:
    - name: LatencyDistance
    filters:
    - name: Residency
      args:
        groups:
        - name: eu-and-switzerland
          jurisdictions: [eu, ch]
";
    let seeds = [("zrh", "aws", "eu-central-2"), ("iad", "aws", "us-east-1")];
    let d = place(yaml, &seeds, shoot("aws", "eu-south-1")).unwrap();
    assert_eq!(d.seed, "zrh");
    let err = place(
        yaml,
        &[("iad", "aws", "us-east-1")],
        shoot("aws", "eu-south-1"),
    )
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("outside the shoot's residency group"),
        "{err}"
    );
}

#[test]
fn residency_rejects_seeds_in_regions_of_unknown_jurisdiction() {
    let err = place(
        EU_ONLY,
        &[("lab", "openstack", "lab-1")],
        shoot("aws", "eu-central-1"),
    )
    .unwrap_err();
    let FitError::NoFit { rejected, .. } = &err else {
        panic!("{err:?}")
    };
    assert!(
        rejected[0]
            .reason
            .to_string()
            .contains("not in the region catalogue"),
        "{}",
        rejected[0].reason
    );
    assert!(
        err.hints()
            .iter()
            .any(|h| h.contains("schedulers.shoot.regions")),
        "{:?}",
        err.hints()
    );
}

#[test]
fn filter_config_errors_name_the_field() {
    for (yaml, want) in [
        (
            "schedulers:\n  shoot:\n    filters:\n    - name: Nope\n",
            "schedulers.shoot.filters[0].name: unsupported value \"Nope\"",
        ),
        (
            "schedulers:\n  shoot:\n    filters:\n    - name: MaxLatency\n      args: {maxLatencyMs: -1}\n",
            "schedulers.shoot.filters[0].args.maxLatencyMs: must be a positive number of at most 1000000, got -1",
        ),
        (
            "schedulers:\n  shoot:\n    filters:\n    - name: Residency\n      args: {groups: []}\n",
            "schedulers.shoot.filters[0].args.groups: must list at least one group",
        ),
        (
            "schedulers:\n  shoot:\n    filters:\n    - name: Residency\n      args: {groups: [{name: eu, jurisdictions: [EU]}]}\n",
            "schedulers.shoot.filters[0].args.groups[0].jurisdictions[0]: must be a lowercase name",
        ),
        (
            "schedulers:\n  shoot:\n    regions:\n    - {name: x, location: {lat: 100, lon: 0}, country: DE}\n",
            "schedulers.shoot.regions[0].location.lat: must be between -90 and 90, got 100",
        ),
        (
            "schedulers:\n  shoot:\n    profiles:\n    - profile:\n        filters:\n        - name: MaxLatency\n          args: {maxLatencyMs: 0}\n",
            "schedulers.shoot.profiles[0].profile.filters[0].args.maxLatencyMs: must be a positive number of at most 1000000, got 0",
        ),
    ] {
        let err = load_str(yaml).unwrap_err().to_string();
        assert!(err.contains(want), "{yaml}\n{err}");
    }
}

#[test]
fn upstream_strategies_ignore_the_catalogue() {
    // MinimalDistance keeps upstream's region-name similarity: for ca-central-1 the name-alike
    // eu-central-1 is nearer than us-east-1, as upstream computes it.
    let yaml = "schedulers:\n  shoot:\n    candidateDeterminationStrategy: MinimalDistance\n";
    let d = place(
        yaml,
        &[
            ("iad", "aws", "us-east-1"),
            ("fra", "aws", "eu-central-1"),
            ("bom", "aws", "ap-south-1"),
        ],
        shoot("aws", "ca-central-1"),
    )
    .unwrap();
    assert_eq!(d.seed, "fra");
}
