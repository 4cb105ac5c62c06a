//! Where regions are: the region catalogue compiled into the binary (`catalogue.yaml`), merged
//! with the regions an operator adds or overrides in `schedulers.shoot.regions`.
//!
//! A region is looked up by provider type and region name, because providers reuse names for
//! different places (`eu-west-1` is Dublin on AWS and London on Alibaba Cloud). A name alone
//! resolves only where every provider listing it means the same metro area. Distances are
//! great-circle distances between metro areas, and [`estimate_ms`] turns them into a round-trip
//! latency estimate.
//!
//! [`estimate_ms`]: crate::regions::estimate_ms

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, LazyLock};

use serde::{Deserialize, Serialize};

use crate::field_error::FieldError;

/// The catalogue text, one list of regions per Gardener provider type.
const CATALOGUE: &str = include_str!("catalogue.yaml");

/// Round-trip latency model: light in fibre covers 200,000 km/s, routes are 1.5 × the
/// great-circle distance, and 2 ms go to switching and the last mile.
pub const MS_PER_KM: f64 = 0.015;
pub const BASE_MS: f64 = 2.0;

/// Mean Earth radius (IUGG), for the haversine formula.
const EARTH_RADIUS_KM: f64 = 6371.0;

/// EU member states (ISO 3166-1 alpha-2): their regions get the jurisdiction `eu`.
const EU_MEMBERS: [&str; 27] = [
    "AT", "BE", "BG", "CY", "CZ", "DE", "DK", "EE", "ES", "FI", "FR", "GR", "HR", "HU", "IE", "IT",
    "LT", "LU", "LV", "MT", "NL", "PL", "PT", "RO", "SE", "SI", "SK",
];

/// Where a region's data centres are, and under which law.
#[derive(Clone, Debug, PartialEq)]
pub struct Site {
    /// Metro area, for explanations.
    pub city: String,
    /// ISO 3166-1 alpha-2, upper case.
    pub country: String,
    /// `eu` for EU member states, otherwise the lowercase country code, unless set explicitly.
    pub jurisdiction: String,
    pub lat: f64,
    pub lon: f64,
    /// Where the entry comes from, named in explanations.
    pub origin: Origin,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    Catalogue,
    Configuration,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Origin::Catalogue => "region catalogue",
            Origin::Configuration => "schedulers.shoot.regions",
        })
    }
}

impl Site {
    /// Great-circle distance in kilometres (haversine).
    pub fn distance_km(&self, other: &Site) -> f64 {
        let (p1, p2) = (self.lat.to_radians(), other.lat.to_radians());
        let dp = p2 - p1;
        let dl = (other.lon - self.lon).to_radians();
        let a = (dp / 2.0).sin().powi(2) + p1.cos() * p2.cos() * (dl / 2.0).sin().powi(2);
        2.0 * EARTH_RADIUS_KM * a.sqrt().min(1.0).asin()
    }
}

/// The round-trip latency estimate for a great-circle distance.
pub fn estimate_ms(km: f64) -> f64 {
    MS_PER_KM * km + BASE_MS
}

/// The jurisdiction of a country when none is given.
pub fn default_jurisdiction(country: &str) -> String {
    if EU_MEMBERS.contains(&country) {
        "eu".into()
    } else {
        country.to_ascii_lowercase()
    }
}

/// One region an operator adds or overrides (`schedulers.shoot.regions[i]`). Fields left out
/// keep the catalogue's values; a region the catalogue does not know needs `location` and
/// `country`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RegionOverride {
    pub name: String,
    /// A Gardener provider type; absent: the entry applies to the region name of every provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub city: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<LocationOverride>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub country: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jurisdiction: Option<String>,
}

#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq)]
pub struct LocationOverride {
    pub lat: f64,
    pub lon: f64,
}

/// Only a mapping `{lat, lon}`: serde would also read the list `[1, 2]` as a coordinate pair,
/// and a list in the wrong order would put the region elsewhere without a word.
impl<'de> Deserialize<'de> for LocationOverride {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Raw {
            lat: f64,
            lon: f64,
        }
        struct Mapping;
        impl<'de> serde::de::Visitor<'de> for Mapping {
            type Value = LocationOverride;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a mapping {lat: ..., lon: ...}")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<Self::Value, A::Error> {
                let r = Raw::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                Ok(LocationOverride {
                    lat: r.lat,
                    lon: r.lon,
                })
            }
        }
        d.deserialize_map(Mapping)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CatalogueEntry {
    region: String,
    city: String,
    country: String,
    lat: f64,
    lon: f64,
    #[serde(default)]
    jurisdiction: Option<String>,
}

#[derive(Default)]
struct Inner {
    /// provider -> region -> site
    by_provider: HashMap<String, HashMap<String, Arc<Site>>>,
    /// Region name -> the site, when every provider listing the name means the same metro.
    by_name: HashMap<String, Option<Arc<Site>>>,
    /// Operator entries without a provider, consulted before the catalogue.
    any_provider: HashMap<String, Arc<Site>>,
}

/// The region catalogue with the operator's entries applied. Cheap to clone.
#[derive(Clone)]
pub struct Regions(Arc<Inner>);

impl fmt::Debug for Regions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let listed: usize = self.0.by_provider.values().map(HashMap::len).sum();
        write!(
            f,
            "Regions({listed} by provider, {} for any provider)",
            self.0.any_provider.len()
        )
    }
}

static BUILTIN: LazyLock<Regions> = LazyLock::new(|| {
    Regions::parse(CATALOGUE).unwrap_or_else(|e| panic!("the compiled-in catalogue is valid: {e}"))
});

impl Default for Regions {
    /// The compiled-in catalogue.
    fn default() -> Self {
        BUILTIN.clone()
    }
}

impl Regions {
    /// The compiled-in catalogue.
    pub fn builtin() -> Regions {
        Regions::default()
    }

    /// No regions at all: latencies fall back to the region-name distance and no region has a
    /// jurisdiction.
    pub fn empty() -> Regions {
        Regions(Arc::new(Inner::default()))
    }

    fn parse(text: &str) -> Result<Regions, String> {
        let lists: std::collections::BTreeMap<String, Vec<CatalogueEntry>> =
            serde_yaml_ng::from_str(text).map_err(|e| e.to_string())?;
        let mut inner = Inner::default();
        for (provider, entries) in lists {
            for e in entries {
                let site = Arc::new(Site {
                    jurisdiction: e
                        .jurisdiction
                        .unwrap_or_else(|| default_jurisdiction(&e.country)),
                    city: e.city,
                    country: e.country,
                    lat: e.lat,
                    lon: e.lon,
                    origin: Origin::Catalogue,
                });
                let listed = inner.by_provider.entry(provider.clone()).or_default();
                if listed.insert(e.region.clone(), Arc::clone(&site)).is_some() {
                    return Err(format!("{provider}: region {} is listed twice", e.region));
                }
                inner
                    .by_name
                    .entry(e.region)
                    .and_modify(|known| {
                        if known.as_ref().is_some_and(|k| k.city != site.city) {
                            *known = None;
                        }
                    })
                    .or_insert(Some(site));
            }
        }
        Ok(Regions(Arc::new(inner)))
    }

    /// The catalogue with `overrides` applied (validated beforehand with [`validate`]; invalid
    /// entries are skipped).
    pub fn with_overrides(overrides: &[RegionOverride]) -> Regions {
        let base = Regions::builtin();
        if overrides.is_empty() {
            return base;
        }
        let mut inner = Inner {
            by_provider: base.0.by_provider.clone(),
            by_name: base.0.by_name.clone(),
            any_provider: HashMap::new(),
        };
        for o in overrides {
            let known = match &o.provider {
                Some(p) => base.locate(p, &o.name),
                None => base.0.by_name.get(&o.name).cloned().flatten(),
            };
            let Some(site) = merge(known.as_deref(), o) else {
                continue;
            };
            let site = Arc::new(site);
            match &o.provider {
                Some(p) => {
                    inner
                        .by_provider
                        .entry(p.clone())
                        .or_default()
                        .insert(o.name.clone(), site);
                }
                None => {
                    inner.any_provider.insert(o.name.clone(), site);
                }
            }
        }
        Regions(Arc::new(inner))
    }

    /// Where `region` of provider type `provider` is: an operator entry for the provider, an
    /// operator entry for the name, the catalogue entry for the provider, then the catalogue
    /// entry for the name if it is unambiguous.
    pub fn locate(&self, provider: &str, region: &str) -> Option<Arc<Site>> {
        let i = &self.0;
        let by_provider = i.by_provider.get(provider).and_then(|m| m.get(region));
        if let Some(s) = by_provider.filter(|s| s.origin == Origin::Configuration) {
            return Some(Arc::clone(s));
        }
        i.any_provider
            .get(region)
            .or(by_provider)
            .cloned()
            .or_else(|| i.by_name.get(region).cloned().flatten())
    }

    /// Every jurisdiction some region lies in, sorted.
    pub fn jurisdictions(&self) -> Vec<String> {
        let i = &self.0;
        let mut all: Vec<String> = i
            .by_provider
            .values()
            .flat_map(HashMap::values)
            .chain(i.any_provider.values())
            .map(|s| s.jurisdiction.clone())
            .collect();
        all.sort_unstable();
        all.dedup();
        all
    }

    /// Every `(provider, region)` of the catalogue, sorted (tests, docs).
    pub fn entries(&self) -> Vec<(String, String, Arc<Site>)> {
        let mut v: Vec<_> = self
            .0
            .by_provider
            .iter()
            .flat_map(|(p, m)| {
                m.iter()
                    .map(move |(r, s)| (p.clone(), r.clone(), Arc::clone(s)))
            })
            .collect();
        v.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
        v
    }
}

/// An operator entry over what the catalogue knows; `None` when a new region lacks location or
/// country.
fn merge(known: Option<&Site>, o: &RegionOverride) -> Option<Site> {
    let (lat, lon) = match (o.location, known) {
        (Some(l), _) => (l.lat, l.lon),
        (None, Some(k)) => (k.lat, k.lon),
        (None, None) => return None,
    };
    let country = o
        .country
        .clone()
        .or_else(|| known.map(|k| k.country.clone()))?;
    let jurisdiction = o.jurisdiction.clone().unwrap_or_else(|| {
        match known.filter(|k| o.country.is_none() || k.country == country) {
            Some(k) => k.jurisdiction.clone(),
            None => default_jurisdiction(&country),
        }
    });
    Some(Site {
        city: o
            .city
            .clone()
            .or_else(|| known.map(|k| k.city.clone()))
            .unwrap_or_else(|| o.name.clone()),
        country,
        jurisdiction,
        lat,
        lon,
        origin: Origin::Configuration,
    })
}

/// The most entries `schedulers.shoot.regions` takes: the catalogue lists a few hundred regions,
/// an operator adds or corrects a handful.
pub const MAX_OVERRIDES: usize = 10_000;

/// Every problem of `schedulers.shoot.regions`, each with its field path; linear in the entries.
pub fn validate(list: &[RegionOverride], path: &str) -> Vec<FieldError> {
    if list.len() > MAX_OVERRIDES {
        return vec![FieldError::new(
            path,
            format!(
                "holds {} entries, more than the {MAX_OVERRIDES} accepted",
                list.len()
            ),
        )];
    }
    let base = Regions::builtin();
    let mut errors = Vec::new();
    let mut first: HashMap<(&str, Option<&str>), usize> = HashMap::with_capacity(list.len());
    for (i, o) in list.iter().enumerate() {
        let at = |field: &str| format!("{path}[{i}].{field}");
        if o.name.trim().is_empty() {
            errors.push(FieldError::new(at("name"), "is required"));
        } else if let Err(e) = crate::names::label_value(&o.name) {
            errors.push(FieldError::new(at("name"), e));
        }
        if let Some(p) = &o.provider
            && p.trim().is_empty()
        {
            errors.push(FieldError::new(
                at("provider"),
                "must not be empty (omit it to match every provider)",
            ));
        }
        let j = *first
            .entry((o.name.as_str(), o.provider.as_deref()))
            .or_insert(i);
        if j != i {
            errors.push(FieldError::new(
                at("name"),
                format!("duplicate region {:?} (also {path}[{j}])", o.name),
            ));
        }
        if let Some(l) = o.location {
            if !(l.lat.is_finite() && (-90.0..=90.0).contains(&l.lat)) {
                errors.push(FieldError::new(
                    at("location.lat"),
                    format!("must be between -90 and 90, got {}", l.lat),
                ));
            }
            if !(l.lon.is_finite() && (-180.0..=180.0).contains(&l.lon)) {
                errors.push(FieldError::new(
                    at("location.lon"),
                    format!("must be between -180 and 180, got {}", l.lon),
                ));
            }
        }
        if let Some(c) = &o.country
            && !(c.len() == 2 && c.bytes().all(|b| b.is_ascii_uppercase()))
        {
            errors.push(FieldError::new(
                at("country"),
                format!("must be an ISO 3166-1 alpha-2 code such as \"DE\", got {c:?}"),
            ));
        }
        if let Some(j) = &o.jurisdiction
            && (j.is_empty()
                || !j
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'))
        {
            errors.push(FieldError::new(
                at("jurisdiction"),
                format!("must be a lowercase name such as \"eu\", got {j:?}"),
            ));
        }
        let known = match &o.provider {
            Some(p) => base.locate(p, &o.name).is_some(),
            None => base.0.by_name.get(&o.name).is_some_and(Option::is_some),
        };
        if !known {
            let what = match (&o.provider, base.0.by_name.get(&o.name)) {
                (Some(p), _) => format!("{p} region {:?}", o.name),
                (None, Some(None)) => format!(
                    "one place for region {:?}, a name providers use for different places (set provider)",
                    o.name
                ),
                (None, _) => format!("region {:?}", o.name),
            };
            if o.location.is_none() {
                errors.push(FieldError::new(
                    at("location"),
                    format!("is required: the region catalogue does not know {what}"),
                ));
            }
            if o.country.is_none() {
                errors.push(FieldError::new(
                    at("country"),
                    format!("is required: the region catalogue does not know {what}"),
                ));
            }
        }
    }
    errors
}

#[cfg(test)]
mod tests;
