use super::*;

fn site(provider: &str, region: &str) -> Arc<Site> {
    Regions::builtin()
        .locate(provider, region)
        .unwrap_or_else(|| panic!("{provider}/{region} is in the catalogue"))
}

/// The problems [`validate`] finds with `list`, as printed.
fn messages(list: &[RegionOverride], path: &str) -> Vec<String> {
    validate(list, path)
        .iter()
        .map(ToString::to_string)
        .collect()
}

fn km(a: (&str, &str), b: (&str, &str)) -> f64 {
    site(a.0, a.1).distance_km(&site(b.0, b.1))
}

#[test]
fn the_compiled_in_catalogue_parses_and_lists_every_provider() {
    let entries = Regions::builtin().entries();
    for provider in ["aws", "gcp", "azure", "alicloud", "hcloud", "stackit"] {
        assert!(
            entries.iter().any(|(p, _, _)| p == provider),
            "no {provider} regions"
        );
    }
    for (p, r, s) in &entries {
        assert!(
            (-90.0..=90.0).contains(&s.lat) && (-180.0..=180.0).contains(&s.lon),
            "{p}/{r}"
        );
        assert!(
            s.country.len() == 2 && s.country.bytes().all(|b| b.is_ascii_uppercase()),
            "{p}/{r}: {}",
            s.country
        );
    }
}

#[test]
fn well_known_regions_are_in_the_right_metro_and_jurisdiction() {
    for (provider, region, city, country, jurisdiction) in [
        ("aws", "eu-central-1", "Frankfurt", "DE", "eu"),
        ("aws", "eu-central-2", "Zurich", "CH", "ch"),
        ("aws", "ca-central-1", "Montreal", "CA", "ca"),
        ("gcp", "europe-west3", "Frankfurt", "DE", "eu"),
        ("gcp", "europe-west6", "Zurich", "CH", "ch"),
        ("azure", "switzerlandnorth", "Zurich", "CH", "ch"),
        ("azure", "westeurope", "Amsterdam", "NL", "eu"),
        ("azure", "northeurope", "Dublin", "IE", "eu"),
        ("alicloud", "eu-central-1", "Frankfurt", "DE", "eu"),
        ("alicloud", "eu-west-1", "London", "GB", "gb"),
        ("hcloud", "fsn1", "Falkenstein", "DE", "eu"),
        ("hcloud", "nbg1", "Nuremberg", "DE", "eu"),
        ("hcloud", "hel1", "Helsinki", "FI", "eu"),
        ("hcloud", "ash", "Ashburn, Virginia", "US", "us"),
        ("hcloud", "hil", "Hillsboro, Oregon", "US", "us"),
        ("hcloud", "sin", "Singapore", "SG", "sg"),
        ("stackit", "eu01", "Neckarsulm/Heilbronn", "DE", "eu"),
        ("stackit", "eu02", "Vienna", "AT", "eu"),
    ] {
        let s = site(provider, region);
        assert_eq!(
            (s.city.as_str(), s.country.as_str(), s.jurisdiction.as_str()),
            (city, country, jurisdiction),
            "{provider}/{region}"
        );
    }
}

#[test]
fn providers_reusing_a_name_for_different_places_are_told_apart() {
    let r = Regions::builtin();
    assert_eq!(r.locate("aws", "eu-west-1").unwrap().city, "Dublin");
    assert_eq!(r.locate("alicloud", "eu-west-1").unwrap().city, "London");
    assert!(
        r.locate("openstack", "eu-west-1").is_none(),
        "an ambiguous name does not resolve for another provider"
    );
    assert_eq!(
        r.locate("openstack", "eu-central-1").unwrap().city,
        "Frankfurt",
        "a name every provider means the same by resolves for any provider"
    );
}

#[test]
fn great_circle_distances_match_known_city_pairs() {
    // Frankfurt - Amsterdam ≈ 365 km, Zurich - Amsterdam ≈ 610 km, Montreal - Ashburn ≈ 810 km.
    let near = |got: f64, want: f64| (got - want).abs() < want * 0.05;
    let fra_ams = km(("aws", "eu-central-1"), ("azure", "westeurope"));
    assert!(near(fra_ams, 365.0), "{fra_ams}");
    let zrh_ams = km(("azure", "switzerlandnorth"), ("azure", "westeurope"));
    assert!(near(zrh_ams, 610.0), "{zrh_ams}");
    let yul_iad = km(("aws", "ca-central-1"), ("aws", "us-east-1"));
    assert!(near(yul_iad, 810.0), "{yul_iad}");
    assert_eq!(
        km(("aws", "eu-central-1"), ("gcp", "europe-west3")),
        0.0,
        "both in Frankfurt"
    );
    assert!((estimate_ms(600.0) - 11.0).abs() < 1e-9);
}

#[test]
fn operator_entries_add_and_override_regions() {
    let r = Regions::with_overrides(&[
        RegionOverride {
            name: "RegionOne".into(),
            provider: Some("openstack".into()),
            city: Some("Walldorf".into()),
            location: Some(LocationOverride {
                lat: 49.30,
                lon: 8.64,
            }),
            country: Some("DE".into()),
            jurisdiction: None,
        },
        RegionOverride {
            name: "eu-central-2".into(),
            provider: Some("aws".into()),
            jurisdiction: Some("eu-adequate".into()),
            ..Default::default()
        },
    ]);
    let one = r.locate("openstack", "RegionOne").unwrap();
    assert_eq!(
        (one.city.as_str(), one.jurisdiction.as_str(), one.origin),
        ("Walldorf", "eu", Origin::Configuration)
    );
    let zrh = r.locate("aws", "eu-central-2").unwrap();
    assert_eq!(
        (zrh.city.as_str(), zrh.jurisdiction.as_str()),
        ("Zurich", "eu-adequate"),
        "fields left out keep the catalogue's values"
    );
    assert_eq!(
        r.locate("gcp", "europe-west6").unwrap().jurisdiction,
        "ch",
        "other providers are untouched"
    );
    assert!(
        Regions::builtin()
            .locate("openstack", "RegionOne")
            .is_none()
    );
}

#[test]
fn invalid_operator_entries_are_reported_with_their_field_paths() {
    let got = messages(
        &[
            RegionOverride {
                name: "onprem".into(),
                location: Some(LocationOverride {
                    lat: 91.0,
                    lon: -181.0,
                }),
                country: Some("Germany".into()),
                jurisdiction: Some("EU".into()),
                ..Default::default()
            },
            RegionOverride {
                name: "lab".into(),
                provider: Some("openstack".into()),
                ..Default::default()
            },
            RegionOverride {
                name: "onprem".into(),
                location: Some(LocationOverride { lat: 1.0, lon: 1.0 }),
                country: Some("DE".into()),
                ..Default::default()
            },
        ],
        "schedulers.shoot.regions",
    );
    assert_eq!(
        got,
        vec![
            "schedulers.shoot.regions[0].location.lat: must be between -90 and 90, got 91",
            "schedulers.shoot.regions[0].location.lon: must be between -180 and 180, got -181",
            "schedulers.shoot.regions[0].country: must be an ISO 3166-1 alpha-2 code such as \"DE\", got \"Germany\"",
            "schedulers.shoot.regions[0].jurisdiction: must be a lowercase name such as \"eu\", got \"EU\"",
            "schedulers.shoot.regions[1].location: is required: the region catalogue does not know openstack region \"lab\"",
            "schedulers.shoot.regions[1].country: is required: the region catalogue does not know openstack region \"lab\"",
            "schedulers.shoot.regions[2].name: duplicate region \"onprem\" (also schedulers.shoot.regions[0])",
        ]
    );
    assert!(
        validate(
            &[RegionOverride {
                name: "eu-central-1".into(),
                provider: Some("aws".into()),
                city: Some("Frankfurt am Main".into()),
                ..Default::default()
            }],
            "r"
        )
        .is_empty()
    );
}

#[test]
fn an_entry_without_provider_for_a_name_providers_share_must_place_it() {
    let got = messages(
        &[RegionOverride {
            name: "eu-west-1".into(),
            jurisdiction: Some("eu".into()),
            ..Default::default()
        }],
        "r",
    );
    assert_eq!(
        got[0],
        "r[0].location: is required: the region catalogue does not know one place for region \"eu-west-1\", a name providers use for different places (set provider)"
    );
}
