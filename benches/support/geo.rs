//! Where regions are and how far apart they are in milliseconds.
//!
//! 27 AWS regions with the coordinates of their metro area, and for some of them the GCP and
//! Azure region in the same metro. Latency model (round trip):
//! `great-circle distance × 2 / 200,000 km/s × 1.5 (route factor) + 2 ms`, i.e.
//! `0.015 ms/km × distance + 2 ms`; a region to itself is 2 ms.

use std::collections::BTreeMap;

/// A metro area hosting cloud regions.
#[derive(Clone, Copy, Debug)]
pub struct Location {
    pub aws: &'static str,
    pub city: &'static str,
    pub lat: f64,
    pub lon: f64,
    pub gcp: Option<&'static str>,
    pub azure: Option<&'static str>,
}

const fn loc(
    aws: &'static str,
    city: &'static str,
    lat: f64,
    lon: f64,
    gcp: Option<&'static str>,
    azure: Option<&'static str>,
) -> Location {
    Location {
        aws,
        city,
        lat,
        lon,
        gcp,
        azure,
    }
}

/// Ordered by demand in the generated landscapes: the first is the most popular region.
pub const LOCATIONS: [Location; 27] = [
    loc(
        "eu-central-1",
        "Frankfurt",
        50.11,
        8.68,
        Some("europe-west3"),
        Some("germanywestcentral"),
    ),
    loc(
        "us-east-1",
        "Ashburn, Virginia",
        39.04,
        -77.49,
        Some("us-east4"),
        Some("eastus"),
    ),
    loc(
        "eu-west-1",
        "Dublin",
        53.35,
        -6.26,
        None,
        Some("northeurope"),
    ),
    loc(
        "ap-northeast-1",
        "Tokyo",
        35.68,
        139.69,
        Some("asia-northeast1"),
        Some("japaneast"),
    ),
    loc(
        "us-west-2",
        "Boardman, Oregon",
        45.84,
        -119.70,
        Some("us-west1"),
        None,
    ),
    loc(
        "eu-west-2",
        "London",
        51.51,
        -0.13,
        Some("europe-west2"),
        Some("uksouth"),
    ),
    loc(
        "ap-southeast-1",
        "Singapore",
        1.35,
        103.82,
        Some("asia-southeast1"),
        Some("southeastasia"),
    ),
    loc(
        "eu-north-1",
        "Stockholm",
        59.33,
        18.07,
        None,
        Some("swedencentral"),
    ),
    loc(
        "ap-south-1",
        "Mumbai",
        19.08,
        72.88,
        Some("asia-south1"),
        Some("westindia"),
    ),
    loc(
        "sa-east-1",
        "São Paulo",
        -23.55,
        -46.63,
        Some("southamerica-east1"),
        Some("brazilsouth"),
    ),
    loc(
        "ap-southeast-2",
        "Sydney",
        -33.87,
        151.21,
        Some("australia-southeast1"),
        Some("australiaeast"),
    ),
    loc(
        "us-east-2",
        "Columbus, Ohio",
        39.96,
        -83.00,
        Some("us-east5"),
        None,
    ),
    loc(
        "ca-central-1",
        "Montreal",
        45.50,
        -73.57,
        Some("northamerica-northeast1"),
        None,
    ),
    loc(
        "eu-west-3",
        "Paris",
        48.86,
        2.35,
        Some("europe-west9"),
        Some("francecentral"),
    ),
    loc(
        "eu-central-2",
        "Zurich",
        47.37,
        8.54,
        Some("europe-west6"),
        Some("switzerlandnorth"),
    ),
    loc(
        "ap-northeast-2",
        "Seoul",
        37.57,
        126.98,
        Some("asia-northeast3"),
        Some("koreacentral"),
    ),
    loc(
        "eu-south-1",
        "Milan",
        45.46,
        9.19,
        Some("europe-west8"),
        Some("italynorth"),
    ),
    loc(
        "us-west-1",
        "San Francisco",
        37.77,
        -122.42,
        None,
        Some("westus"),
    ),
    loc(
        "ap-east-1",
        "Hong Kong",
        22.32,
        114.17,
        Some("asia-east2"),
        Some("eastasia"),
    ),
    loc(
        "ap-southeast-3",
        "Jakarta",
        -6.21,
        106.85,
        Some("asia-southeast2"),
        None,
    ),
    loc("me-south-1", "Manama, Bahrain", 26.23, 50.59, None, None),
    loc("af-south-1", "Cape Town", -33.92, 18.42, None, None),
    loc("eu-south-2", "Zaragoza", 41.65, -0.88, None, None),
    loc(
        "il-central-1",
        "Tel Aviv",
        32.09,
        34.78,
        Some("me-west1"),
        Some("israelcentral"),
    ),
    loc(
        "me-central-1",
        "Dubai",
        25.20,
        55.27,
        None,
        Some("uaenorth"),
    ),
    loc("ap-south-2", "Hyderabad", 17.39, 78.49, None, None),
    loc("ca-west-1", "Calgary", 51.05, -114.07, None, None),
];

pub const EARTH_RADIUS_KM: f64 = 6371.0;
/// Light in fibre, km per second.
pub const FIBRE_KM_PER_S: f64 = 200_000.0;
/// Real routes are longer than the great circle.
pub const ROUTE_FACTOR: f64 = 1.5;
/// Switching and last-mile cost of any round trip.
pub const BASE_RTT_MS: f64 = 2.0;

/// Haversine distance in km.
pub fn great_circle_km(a: &Location, b: &Location) -> f64 {
    let (la1, la2) = (a.lat.to_radians(), b.lat.to_radians());
    let dlat = la2 - la1;
    let dlon = (b.lon - a.lon).to_radians();
    let h = (dlat / 2.0).sin().powi(2) + la1.cos() * la2.cos() * (dlon / 2.0).sin().powi(2);
    2.0 * EARTH_RADIUS_KM * h.sqrt().min(1.0).asin()
}

/// Round-trip time between two locations in ms, by the model above.
pub fn rtt_ms(a: &Location, b: &Location) -> f64 {
    great_circle_km(a, b) * 2.0 / FIBRE_KM_PER_S * 1000.0 * ROUTE_FACTOR + BASE_RTT_MS
}

/// The location of a region name of any of the three providers.
pub fn location_of(region: &str) -> Option<&'static Location> {
    LOCATIONS
        .iter()
        .find(|l| l.aws == region || l.gcp == Some(region) || l.azure == Some(region))
}

/// The region names a provider has, in demand order.
pub fn regions_of(provider: &str) -> Vec<&'static str> {
    LOCATIONS
        .iter()
        .filter_map(|l| match provider {
            "aws" => Some(l.aws),
            "gcp" => l.gcp,
            "azure" => l.azure,
            _ => None,
        })
        .collect()
}

/// Latency between two region names; `None` when either is unknown.
pub fn region_rtt_ms(a: &str, b: &str) -> Option<f64> {
    Some(rtt_ms(location_of(a)?, location_of(b)?))
}

/// `{from: {to: ms}}` over the given regions, rounded to whole ms, the region itself included.
pub fn latency_matrix(regions: &[&str]) -> BTreeMap<String, BTreeMap<String, u32>> {
    regions
        .iter()
        .map(|a| {
            let row = regions
                .iter()
                .map(|b| {
                    let ms = region_rtt_ms(a, b).expect("known region").round() as u32;
                    (b.to_string(), ms)
                })
                .collect();
            (a.to_string(), row)
        })
        .collect()
}
