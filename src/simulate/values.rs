//! Names, namespaces, label keys and values and toleration keys of objects read from files or
//! listed for a what-if, checked as the API server checks them before storing an object (see
//! [`crate::names`]). An object that breaks a rule is skipped with the field named, like any
//! other malformed object.
//!
//! Only the rules gardener-apiserver applies are checked here: a value it stores is decided as
//! upstream decides it, whatever characters it holds. Regions (`spec.provider.region`,
//! `spec.region`), seed taint keys and `spec.seedName` need only be non-empty there; such a
//! value reaches the output escaped ([`crate::escape`]), never raw.

use std::collections::BTreeMap;

use crate::api::{
    CloudProfile, ConfigMap, NamespacedCloudProfile, ObjectMeta, Project, Seed, Shoot,
};
use crate::names;

/// An object whose identifying strings can be checked.
pub trait Values {
    /// The first value the API server would have refused, as `field: message`.
    fn check_values(&self) -> Result<(), String>;
}

fn at(path: &str, r: Result<(), String>) -> Result<(), String> {
    r.map_err(|e| format!("{path}: {e}"))
}

/// `metadata`: the name by `name_rule`, the namespace as a DNS label, the labels.
fn meta(m: &ObjectMeta, name_rule: fn(&str) -> Result<(), String>) -> Result<(), String> {
    if let Some(name) = m.name.as_deref().filter(|n| !n.is_empty()) {
        at("metadata.name", name_rule(name))?;
    }
    if let Some(ns) = m.namespace.as_deref().filter(|n| !n.is_empty()) {
        at("metadata.namespace", names::dns1123_label(ns))?;
    }
    labels("metadata.labels", m.labels.as_ref())
}

fn labels(path: &str, l: Option<&BTreeMap<String, String>>) -> Result<(), String> {
    l.map_or(Ok(()), |l| names::labels(path, l))
}

fn optional_subdomain(path: &str, value: Option<&str>) -> Result<(), String> {
    match value.filter(|v| !v.is_empty()) {
        Some(v) => at(path, names::dns1123_subdomain(v)),
        None => Ok(()),
    }
}

impl Values for Seed {
    fn check_values(&self) -> Result<(), String> {
        // Upstream's Seed validation asks a non-empty region and taint key, nothing more.
        meta(&self.metadata, names::dns1123_label)
    }
}

impl Values for Shoot {
    fn check_values(&self) -> Result<(), String> {
        meta(&self.metadata, names::dns1123_label)?;
        let spec = &self.spec;
        // `spec.region`, `spec.seedName` and `status.seedName` need only be non-empty upstream.
        optional_subdomain("spec.cloudProfileName", spec.cloud_profile_name.as_deref())?;
        optional_subdomain(
            "spec.cloudProfile.name",
            spec.cloud_profile.as_ref().map(|c| c.name.as_str()),
        )?;
        if let Some(s) = &spec.seed_selector {
            labels(
                "spec.seedSelector.matchLabels",
                s.label_selector.match_labels.as_ref(),
            )?;
        }
        for (i, t) in spec.tolerations.iter().enumerate() {
            at(
                &format!("spec.tolerations[{i}].key"),
                names::qualified_name(&t.key),
            )?;
        }
        Ok(())
    }
}

// Gardener validates these names as DNS subdomains (its `ValidateName`); Shoots and Seeds as
// DNS labels.
impl Values for CloudProfile {
    fn check_values(&self) -> Result<(), String> {
        meta(&self.metadata, names::dns1123_subdomain)
    }
}

impl Values for NamespacedCloudProfile {
    fn check_values(&self) -> Result<(), String> {
        meta(&self.metadata, names::dns1123_subdomain)?;
        optional_subdomain("spec.parent.name", Some(&self.spec.parent.name))
    }
}

impl Values for Project {
    fn check_values(&self) -> Result<(), String> {
        // Upstream's Project validation asks only that `spec.namespace` be `garden` or start
        // with `garden-`; a namespace that can never exist holds no shoots.
        meta(&self.metadata, names::dns1123_subdomain)
    }
}

impl Values for ConfigMap {
    fn check_values(&self) -> Result<(), String> {
        meta(&self.metadata, names::dns1123_subdomain)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{SeedBuilder, ShootBuilder};

    #[test]
    fn a_seed_name_that_would_end_a_yaml_comment_is_refused_at_its_field() {
        let s = SeedBuilder::new("evil\nkind: Secret").build();
        let e = s.check_values().unwrap_err();
        assert!(
            e.starts_with("metadata.name: \"evil\\u{a}kind: Secret\""),
            "{e}"
        );
        assert!(SeedBuilder::new("aws-eu1").build().check_values().is_ok());
    }

    /// gardener-apiserver stores any non-empty region, seed taint key and `spec.seedName`, so
    /// upstream decides such objects: they are read, never skipped.
    #[test]
    fn regions_taint_keys_and_seed_names_gardener_apiserver_stores_are_read() {
        for region in ["eu-wést-1", "eu west 1", "eu-west-1\u{202e}", "EU_WEST_1."] {
            let s = SeedBuilder::new("s1")
                .region(region)
                .taint("a b", None)
                .build();
            assert_eq!(s.check_values(), Ok(()), "{region:?}");
            let s = ShootBuilder::new("garden-dev", "web")
                .region(region)
                .seed("Seed\n# x")
                .build();
            assert_eq!(s.check_values(), Ok(()), "{region:?}");
        }
    }

    #[test]
    fn a_shoot_with_a_bidi_override_in_a_label_or_a_control_character_in_its_namespace_is_refused()
    {
        let mut s = ShootBuilder::new("garden-dev", "web").build();
        s.metadata.labels = Some([("tier".to_string(), "prod\u{200b}".to_string())].into());
        let e = s.check_values().unwrap_err();
        assert!(e.starts_with("metadata.labels.tier: "), "{e}");
        let s = ShootBuilder::new("garden\x1b[2J", "web").build();
        assert!(
            s.check_values()
                .unwrap_err()
                .starts_with("metadata.namespace: ")
        );
        assert!(
            ShootBuilder::new("garden-dev", "web")
                .build()
                .check_values()
                .is_ok()
        );
    }
}
