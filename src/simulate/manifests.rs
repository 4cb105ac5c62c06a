//! Reads multi-document YAML manifests (files or directories) into typed objects.
//!
//! Each real file is read once (paths are compared after resolving symlinks, so a directory
//! linking to itself ends), special files are refused, and the bytes read are capped per file and
//! in total. A file that cannot be read or parsed as YAML stops the load; one object that does
//! not fit its type, or repeats an object already read, is skipped and reported with its file and
//! document index (as the controller skips a malformed object of a watch), and the rest loads.
//! Each Shoot and Seed read gets the defaults gardener-apiserver would apply when storing it
//! ([`crate::api::defaults`]), unless the landscape reads objects as written. How one object is
//! read into its type lives in `objects`.

mod objects;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::api::defaults::{Applied, AppliedSet};
use crate::api::{CloudProfile, ConfigMap, NamespacedCloudProfile, Project, Seed, Shoot};
use crate::input::{self, ReadError};

/// Files larger than this are refused rather than read into memory.
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;
/// All manifest files together may hold at most this many bytes.
pub const MAX_TOTAL_BYTES: u64 = 256 * 1024 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    #[error("{path}: {source}")]
    Read { path: PathBuf, source: ReadError },
    #[error(
        "{path}: the manifest files hold more than the {MAX_TOTAL_BYTES} bytes accepted in total"
    )]
    TotalTooLarge { path: PathBuf },
    #[error("{path}: document {index}: {message}")]
    Document {
        path: PathBuf,
        index: usize,
        message: String,
    },
}

/// Where an object was read: file, document index, and the item of a `kind: List`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    pub path: PathBuf,
    pub document: usize,
    pub item: Option<usize>,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: document {}", self.path.display(), self.document)?;
        if let Some(i) = self.item {
            write!(f, ": items[{i}]")?;
        }
        Ok(())
    }
}

/// An object left out of the landscape, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    pub location: Location,
    pub message: String,
}

impl fmt::Display for Skipped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.location, self.message)
    }
}

/// A Shoot's document as it was read, kept as YAML text: a fraction of the memory of the parsed
/// value (at 100,000 shoots, the parsed values took about 730 MiB), parsed again only where a
/// document is written out or its maintenance window read.
#[derive(Clone, Debug, PartialEq)]
pub struct Document(Box<str>);

impl Document {
    pub fn of(value: &serde_yaml_ng::Value) -> Document {
        Document(serde_yaml_ng::to_string(value).unwrap_or_default().into())
    }

    /// The document parsed again; `None` if it cannot be (callers then write the typed shoot).
    pub fn value(&self) -> Option<serde_yaml_ng::Value> {
        serde_yaml_ng::from_str::<serde_yaml_ng::Value>(&self.0)
            .ok()
            .filter(|v| !v.is_null())
    }
}

/// Everything read from the manifests. With [`Landscape::load_with_documents`], `shoot_docs`
/// keeps each Shoot's original document so `-o yaml` can reproduce it with only
/// `spec.seedName` added; otherwise it stays empty (the documents cost more memory than
/// everything else together).
#[derive(Default)]
pub struct Landscape {
    pub seeds: Vec<Seed>,
    pub shoots: Vec<Shoot>,
    pub shoot_docs: Vec<Document>,
    keep_documents: bool,
    pub cloud_profiles: Vec<CloudProfile>,
    pub namespaced_cloud_profiles: Vec<NamespacedCloudProfile>,
    pub projects: Vec<Project>,
    pub config_maps: Vec<ConfigMap>,
    /// Objects not loaded: malformed, unsupported or repeated, in reading order.
    pub skipped: Vec<Skipped>,
    /// The defaults applied to the shoots read from files ([`crate::api::defaults`]), by
    /// `namespace/name`; shoots without any are not listed.
    pub shoot_defaults: HashMap<Box<str>, AppliedSet>,
    /// The defaults applied to the seeds read from files, by name.
    pub seed_defaults: BTreeMap<String, AppliedSet>,
    /// Objects from files are decided on exactly as written, without upstream's defaults.
    as_written: bool,
    /// kind/namespace/name -> where it was first read
    seen: HashMap<(&'static str, String), Location>,
    bytes_read: u64,
}

impl Landscape {
    /// Loads every path (files, or directories read recursively in name order), each object
    /// as gardener-apiserver would store it (upstream's defaults applied).
    pub fn load(paths: &[PathBuf]) -> Result<Landscape, ManifestError> {
        Self::load_as(paths, false, false)
    }

    /// Loads like [`Landscape::load`] and keeps each Shoot's original document in `shoot_docs`.
    pub fn load_with_documents(paths: &[PathBuf]) -> Result<Landscape, ManifestError> {
        Self::load_as(paths, true, false)
    }

    /// Loads like [`Landscape::load`]; `documents` keeps each Shoot's original document, and
    /// `as_written` leaves every object exactly as written (no defaults applied).
    pub fn load_as(
        paths: &[PathBuf],
        documents: bool,
        as_written: bool,
    ) -> Result<Landscape, ManifestError> {
        Self::load_into(
            Landscape {
                keep_documents: documents,
                ..Landscape::reading_as_written(as_written)
            },
            paths,
        )
    }

    /// An empty landscape whose [`Landscape::add_text`] reads objects as written (`true`) or
    /// with upstream's defaults (`false`, as [`Landscape::default`]).
    pub fn reading_as_written(as_written: bool) -> Landscape {
        Landscape {
            as_written,
            ..Default::default()
        }
    }

    /// The defaults that change how the decision reads this shoot or the landscape's seeds, one
    /// line each with upstream's source file, for an explanation. `spec.networking` added counts
    /// only where there is something to check: the shoot's `status.networking`, or a seed's
    /// `shootDefaults`.
    pub fn default_notes(&self, shoot_key: &str) -> Vec<String> {
        let seed_defaults = || {
            self.seeds
                .iter()
                .any(|s| s.spec.networks.shoot_defaults.is_some())
        };
        let mut notes = Vec::new();
        let shoot = self.shoot_defaults.get(shoot_key);
        for a in shoot
            .map(AppliedSet::applied)
            .unwrap_or_default()
            .into_iter()
            .filter(Applied::decides)
        {
            if a == (Applied::Networking { status: false }) && !seed_defaults() {
                continue;
            }
            notes.push(format!("{a} ({})", a.source()));
        }
        for (name, applied) in &self.seed_defaults {
            for a in applied.applied().into_iter().filter(Applied::decides) {
                notes.push(format!("seed {name}: {a} ({})", a.source()));
            }
        }
        notes
    }

    fn load_into(mut landscape: Landscape, paths: &[PathBuf]) -> Result<Landscape, ManifestError> {
        let mut files = Files::default();
        for p in paths {
            files.collect(p, true)?;
        }
        for f in files.list {
            landscape.add_file(&f)?;
        }
        Ok(landscape)
    }

    fn add_file(&mut self, path: &Path) -> Result<(), ManifestError> {
        let read_err = |source| ManifestError::Read {
            path: path.to_path_buf(),
            source,
        };
        let left = MAX_TOTAL_BYTES - self.bytes_read;
        let text = input::read_text(path, MAX_FILE_BYTES.min(left)).map_err(|e| match e {
            ReadError::TooLarge(limit) if limit < MAX_FILE_BYTES => ManifestError::TotalTooLarge {
                path: path.to_path_buf(),
            },
            e => read_err(e),
        })?;
        self.bytes_read += text.len() as u64;
        self.add_text(path, &text)
    }

    /// Adds the documents of one YAML text; `path` names it in errors. Text that is not YAML
    /// is an error; a document that does not make a supported object is skipped and recorded in
    /// [`Landscape::skipped`].
    pub fn add_text(&mut self, path: &Path, text: &str) -> Result<(), ManifestError> {
        let text = crate::bom::strip_bom(text);
        input::check_nesting(text).map_err(|e| ManifestError::Read {
            path: path.to_path_buf(),
            source: ReadError::Io(std::io::Error::other(e.to_string())),
        })?;
        for (index, doc) in serde_yaml_ng::Deserializer::from_str(text).enumerate() {
            let value =
                serde_yaml_ng::Value::deserialize(doc).map_err(|e| ManifestError::Document {
                    path: path.to_path_buf(),
                    index,
                    message: format!(
                        "{}{}",
                        input::yaml_message(&e),
                        crate::bom::note_inside(text).unwrap_or_default()
                    ),
                })?;
            if value.is_null() {
                continue;
            }
            let location = Location {
                path: path.to_path_buf(),
                document: index,
                item: None,
            };
            self.add_value(value, location, Some(text));
        }
        Ok(())
    }

    /// Lays `top` over this landscape: an object of the same kind, namespace and name is
    /// replaced, others are added. Returns `Kind namespace/name` of each replaced object, in
    /// order. `top`'s skipped objects are kept. Shoot documents follow their shoots when both
    /// landscapes kept them.
    pub fn overlay(&mut self, top: Landscape) -> Vec<String> {
        let mut replaced = Vec::new();
        let keep_docs = !self.shoot_docs.is_empty() || self.shoots.is_empty();
        let mut docs = top.shoot_docs.into_iter();
        for shoot in top.shoots {
            let doc = docs.next();
            let key = crate::api::object_key(&shoot.metadata);
            match self
                .shoots
                .iter()
                .position(|s| crate::api::object_key(&s.metadata) == key)
            {
                Some(i) => {
                    replaced.push(format!("Shoot {key}"));
                    if keep_docs && let (Some(slot), Some(doc)) = (self.shoot_docs.get_mut(i), doc)
                    {
                        *slot = doc;
                    }
                    self.shoots[i] = shoot;
                }
                None => {
                    self.shoots.push(shoot);
                    if keep_docs && let Some(doc) = doc {
                        self.shoot_docs.push(doc);
                    }
                }
            }
        }
        lay(&mut self.seeds, top.seeds, "Seed", false, &mut replaced);
        lay(
            &mut self.cloud_profiles,
            top.cloud_profiles,
            "CloudProfile",
            false,
            &mut replaced,
        );
        lay(
            &mut self.namespaced_cloud_profiles,
            top.namespaced_cloud_profiles,
            "NamespacedCloudProfile",
            true,
            &mut replaced,
        );
        lay(
            &mut self.projects,
            top.projects,
            "Project",
            false,
            &mut replaced,
        );
        lay(
            &mut self.config_maps,
            top.config_maps,
            "ConfigMap",
            true,
            &mut replaced,
        );
        self.skipped.extend(top.skipped);
        self.shoot_defaults.extend(top.shoot_defaults);
        self.seed_defaults.extend(top.seed_defaults);
        replaced
    }

    /// Namespaces more than one Project claims (upstream's API server refuses the second
    /// claim; a landscape put together from files may still hold both): one line each, naming
    /// the project the shoots there count for, the last one read, as the snapshot reads them.
    pub fn project_conflicts(&self) -> Vec<String> {
        let mut claims: std::collections::BTreeMap<&str, Vec<&str>> = Default::default();
        for p in &self.projects {
            if let Some(ns) = p.spec.namespace.as_deref().filter(|n| !n.is_empty()) {
                claims
                    .entry(ns)
                    .or_default()
                    .push(p.metadata.name.as_deref().unwrap_or_default());
            }
        }
        claims
            .into_iter()
            .filter(|(_, projects)| projects.len() > 1)
            .map(|(ns, projects)| {
                format!(
                    "namespace {ns} is claimed by Projects {}; upstream's API server allows one, and its shoots count for project {}",
                    projects.join(", "),
                    projects[projects.len() - 1]
                )
            })
            .collect()
    }
}

/// Replaces or adds each object of `top` in `base`, by name (and namespace).
fn lay<T: kube::Resource>(
    base: &mut Vec<T>,
    top: Vec<T>,
    kind: &str,
    namespaced: bool,
    replaced: &mut Vec<String>,
) {
    let key = |o: &T| {
        if namespaced {
            crate::api::object_key(o.meta())
        } else {
            o.meta().name.clone().unwrap_or_default()
        }
    };
    for object in top {
        let k = key(&object);
        match base.iter().position(|b| key(b) == k) {
            Some(i) => {
                replaced.push(format!("{kind} {k}"));
                base[i] = object;
            }
            None => base.push(object),
        }
    }
}

/// The files to read, each real file once, in the order given (directories in name order).
#[derive(Default)]
struct Files {
    list: Vec<PathBuf>,
    seen: HashSet<PathBuf>,
}

impl Files {
    /// `explicit`: the path was given on the command line (read whatever its extension).
    fn collect(&mut self, path: &Path, explicit: bool) -> Result<(), ManifestError> {
        let read_err = |source: std::io::Error| ManifestError::Read {
            path: path.to_path_buf(),
            source: source.into(),
        };
        let manifest = explicit
            || matches!(
                path.extension().and_then(|x| x.to_str()),
                Some("yaml" | "yml" | "json")
            );
        let meta = match std::fs::metadata(path) {
            Ok(meta) => meta,
            // A dangling link or unreadable entry that would not be read anyway.
            Err(_) if !manifest => return Ok(()),
            Err(e) => return Err(read_err(e)),
        };
        if !meta.is_dir() && !manifest {
            return Ok(());
        }
        let real = std::fs::canonicalize(path).map_err(read_err)?;
        if !self.seen.insert(real) {
            // Read already: a file given twice, or a symlink back into a directory being read.
            return Ok(());
        }
        if !meta.is_dir() {
            self.list.push(path.to_path_buf());
            return Ok(());
        }
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(read_err)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        entries.sort();
        for e in entries {
            self.collect(&e, false)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHOOT: &str = "apiVersion: core.gardener.cloud/v1beta1
kind: Shoot
metadata: {name: web, namespace: garden-dev}
spec: {region: eu-west-1, cloudProfileName: aws, provider: {type: aws}, kubernetes: {version: 1.33.0}}
";

    fn loaded(with_documents: bool) -> Landscape {
        let dir = std::env::temp_dir().join(format!(
            "gardener-scheduler-manifests-{}-{with_documents}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("shoot.yaml");
        std::fs::write(&file, SHOOT).unwrap();
        let l = if with_documents {
            Landscape::load_with_documents(&[file])
        } else {
            Landscape::load(&[file])
        };
        std::fs::remove_dir_all(&dir).unwrap();
        l.unwrap()
    }

    #[test]
    fn shoot_documents_are_kept_only_when_asked_for() {
        let plain = loaded(false);
        assert_eq!(plain.shoots.len(), 1);
        assert!(plain.shoot_docs.is_empty());
        let with = loaded(true);
        assert_eq!(with.shoots.len(), 1);
        assert_eq!(
            with.shoot_docs[0].value().unwrap()["spec"]["kubernetes"]["version"].as_str(),
            Some("1.33.0"),
            "the original document, unknown fields included"
        );
    }

    #[test]
    fn an_overlay_replaces_by_kind_namespace_and_name_and_adds_the_rest() {
        let mut base = Landscape::default();
        base.add_text(
            Path::new("live"),
            &format!(
                "{SHOOT}---\napiVersion: core.gardener.cloud/v1beta1\nkind: Seed\nmetadata: {{name: s1}}\n---\napiVersion: core.gardener.cloud/v1beta1\nkind: Seed\nmetadata: {{name: s2}}\n"
            ),
        )
        .unwrap();
        let mut top = Landscape::default();
        top.add_text(
            Path::new("overlay"),
            &format!(
                "{}---\n{}---\napiVersion: core.gardener.cloud/v1beta1\nkind: Seed\nmetadata: {{name: s1, labels: {{replaced: \"yes\"}}}}\n",
                SHOOT.replace("eu-west-1", "eu-central-1"),
                SHOOT.replace("name: web", "name: api"),
            ),
        )
        .unwrap();
        let replaced = base.overlay(top);
        assert_eq!(replaced, ["Shoot garden-dev/web", "Seed s1"]);
        let names: Vec<_> = base
            .shoots
            .iter()
            .map(|s| {
                (
                    s.metadata.name.clone().unwrap(),
                    s.spec.region.clone().unwrap_or_default(),
                )
            })
            .collect();
        assert_eq!(
            names,
            [
                ("web".to_string(), "eu-central-1".to_string()),
                ("api".to_string(), "eu-west-1".to_string())
            ]
        );
        assert_eq!(base.seeds.len(), 2);
        assert_eq!(
            base.seeds[0].metadata.labels.as_ref().unwrap()["replaced"],
            "yes"
        );
    }
}
