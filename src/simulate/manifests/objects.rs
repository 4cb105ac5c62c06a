//! One YAML object into the [`Landscape`]: its kind picks the type, the object must fit the
//! type (a type error gets its line), name its identity and hold valid values, and a repeat of
//! an object already read is skipped. Each Shoot and Seed gets upstream's defaults unless the
//! landscape reads objects as written.

use serde::de::DeserializeOwned;

use super::{Document, Landscape, Location, Skipped};
use crate::api::defaults::{self, Applied, AppliedSet};
use crate::api::{CloudProfile, ConfigMap, NamespacedCloudProfile, Project, Seed, Shoot};
use crate::simulate::values::Values;

impl Landscape {
    fn skip(&mut self, location: Location, message: String) {
        self.skipped.push(Skipped { location, message });
    }

    /// Records the object's identity; a repeat is skipped, the first copy stays.
    fn first_copy(&mut self, kind: &'static str, key: String, location: &Location) -> bool {
        match self.seen.get(&(kind, key.clone())) {
            Some(first) => {
                let message = format!(
                    "{kind} {key} repeats the one in {first}; the first is used, this one is skipped"
                );
                self.skip(location.clone(), message);
                false
            }
            None => {
                self.seen.insert((kind, key), location.clone());
                true
            }
        }
    }

    /// `text`: the file the document came from (not for the items of a List), to give a type
    /// error its line.
    pub(super) fn add_value(
        &mut self,
        value: serde_yaml_ng::Value,
        location: Location,
        text: Option<&str>,
    ) {
        let field = |name: &str| value.get(name).and_then(|v| v.as_str()).map(str::to_string);
        let Some(api_version) = field("apiVersion") else {
            return self.skip(location, "apiVersion: is required".into());
        };
        let Some(kind) = field("kind") else {
            return self.skip(location, "kind: is required".into());
        };
        let name = value
            .get("metadata")
            .and_then(|m| m.get("name"))
            .and_then(|n| n.as_str())
            .unwrap_or_default()
            .to_string();
        let result = match (api_version.as_str(), kind.as_str()) {
            ("core.gardener.cloud/v1beta1", "Shoot") => self
                .typed::<Shoot>(&value, "Shoot", true, &location, text)
                .map(|mut shoot| {
                    if let Some(set) = self.defaulted(&mut shoot, defaults::shoot) {
                        let key = crate::api::object_key(&shoot.metadata);
                        self.shoot_defaults.insert(key.into(), set);
                    }
                    self.shoots.push(shoot);
                    if self.keep_documents {
                        self.shoot_docs.push(Document::of(&value));
                    }
                }),
            ("core.gardener.cloud/v1beta1", "Seed") => self
                .typed::<Seed>(&value, "Seed", false, &location, text)
                .map(|mut seed| {
                    if let Some(set) = self.defaulted(&mut seed, defaults::seed) {
                        self.seed_defaults.insert(seed.name().to_string(), set);
                    }
                    self.seeds.push(seed);
                }),
            ("core.gardener.cloud/v1beta1", "CloudProfile") => self
                .typed::<CloudProfile>(&value, "CloudProfile", false, &location, text)
                .map(|o| self.cloud_profiles.push(o)),
            ("core.gardener.cloud/v1beta1", "NamespacedCloudProfile") => self
                .typed::<NamespacedCloudProfile>(
                    &value,
                    "NamespacedCloudProfile",
                    true,
                    &location,
                    text,
                )
                .map(|o| self.namespaced_cloud_profiles.push(o)),
            ("core.gardener.cloud/v1beta1", "Project") => self
                .typed::<Project>(&value, "Project", false, &location, text)
                .map(|o| self.projects.push(o)),
            ("v1", "ConfigMap") => self
                .typed::<ConfigMap>(&value, "ConfigMap", true, &location, text)
                .map(|o| self.config_maps.push(o)),
            ("v1", "List") => {
                let Some(items) = value.get("items").and_then(|i| i.as_sequence()) else {
                    return;
                };
                for (i, item) in items.iter().enumerate() {
                    let at = Location {
                        item: Some(i),
                        ..location.clone()
                    };
                    self.add_value(item.clone(), at, None);
                }
                return;
            }
            (api_version, kind) => Err(Some(format!(
                "unsupported object {api_version}/{kind}: expected core.gardener.cloud/v1beta1 Shoot, Seed, CloudProfile, NamespacedCloudProfile, Project or v1 ConfigMap"
            ))),
        };
        if let Err(Some(message)) = result {
            let object = if name.is_empty() {
                kind
            } else {
                format!("{kind} {}", crate::escape::line(&name))
            };
            self.skip(location, format!("{object}: {message}"));
        }
    }

    /// Gardener's defaults for `object` (unless the files are read as written): the set applied,
    /// when any was.
    fn defaulted<T>(
        &self,
        object: &mut T,
        default: fn(&mut T) -> Vec<Applied>,
    ) -> Option<AppliedSet> {
        if self.as_written {
            return None;
        }
        let applied = default(object);
        (!applied.is_empty()).then(|| AppliedSet::of(&applied))
    }

    /// The typed object, or `Err(Some(message))` naming the field, or `Err(None)` for a repeat
    /// (already recorded).
    fn typed<T: DeserializeOwned + kube::Resource + Values>(
        &mut self,
        value: &serde_yaml_ng::Value,
        kind: &'static str,
        namespaced: bool,
        location: &Location,
        text: Option<&str>,
    ) -> Result<T, Option<String>> {
        let object: T = typed(value).map_err(|message| {
            match text.and_then(|t| line_of_error::<T>(t, location.document)) {
                Some(line) => format!("{message} (line {line})"),
                None => message,
            }
        })?;
        if let Some(selector) = value.get("spec").and_then(|s| s.get("seedSelector")) {
            check_selector_keys(selector)?;
        }
        let meta = object.meta();
        require_name(meta, namespaced)?;
        object.check_values()?;
        let key = if namespaced {
            crate::api::object_key(meta)
        } else {
            meta.name.clone().unwrap_or_default()
        };
        if self.first_copy(kind, key, location) {
            Ok(object)
        } else {
            Err(None)
        }
    }
}

fn typed<T: DeserializeOwned>(value: &serde_yaml_ng::Value) -> Result<T, String> {
    serde_path_to_error::deserialize(value.clone()).map_err(|e| {
        let path = e.path().to_string();
        let message = crate::field_error::serde_message(&e.into_inner().to_string());
        format!("{path}: {message}")
    })
}

/// Unknown keys in a `seedSelector` (`matchLabelz`, `operater`): ignored, the selector would
/// match every seed, so a manifest that has them is refused. (Objects from the API server are
/// read leniently; see [`crate::api::SeedSelector`].)
fn check_selector_keys(selector: &serde_yaml_ng::Value) -> Result<(), String> {
    use crate::api::{SEED_SELECTOR_KEYS, SELECTOR_REQUIREMENT_KEYS};
    fn unknown(map: &serde_yaml_ng::Value, path: &str, known: &[&str]) -> Result<(), String> {
        for key in map.as_mapping().into_iter().flat_map(|m| m.keys()) {
            let name = key.as_str().unwrap_or_default();
            if !known.contains(&name) {
                let expected: Vec<String> = known.iter().map(|k| format!("`{k}`")).collect();
                return Err(format!(
                    "{path}.{name}: unknown field `{name}`, expected one of {}",
                    expected.join(", ")
                ));
            }
        }
        Ok(())
    }
    unknown(selector, "spec.seedSelector", SEED_SELECTOR_KEYS)?;
    let expressions = selector
        .get("matchExpressions")
        .and_then(|e| e.as_sequence())
        .into_iter()
        .flatten();
    for (i, requirement) in expressions.enumerate() {
        unknown(
            requirement,
            &format!("spec.seedSelector.matchExpressions[{i}]"),
            SELECTOR_REQUIREMENT_KEYS,
        )?;
    }
    Ok(())
}

/// The line of the type error in document `index` of `text`, found by reading the document
/// again straight into `T` (only when a document failed, so the second read costs nothing
/// otherwise).
fn line_of_error<T: DeserializeOwned>(text: &str, index: usize) -> Option<usize> {
    let doc = serde_yaml_ng::Deserializer::from_str(text).nth(index)?;
    let err = serde_path_to_error::deserialize::<_, T>(doc).err()?;
    err.inner().location().map(|l| l.line())
}

fn require_name(meta: &crate::api::ObjectMeta, namespaced: bool) -> Result<(), String> {
    if meta.name.as_deref().is_none_or(str::is_empty) {
        return Err("metadata.name: is required".into());
    }
    if namespaced && meta.namespace.as_deref().is_none_or(str::is_empty) {
        return Err("metadata.namespace: is required".into());
    }
    Ok(())
}
