//! Reads multi-document YAML manifests (files or directories) into typed objects.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde::de::DeserializeOwned;

use crate::api::{CloudProfile, ConfigMap, NamespacedCloudProfile, Project, Seed, Shoot};

/// Files larger than this are refused rather than read into memory.
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    #[error("{path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: file is {size} bytes, larger than the {MAX_FILE_BYTES} accepted")]
    TooLarge { path: PathBuf, size: u64 },
    #[error("{path}: document {index}: {message}")]
    Document {
        path: PathBuf,
        index: usize,
        message: String,
    },
}

/// Everything read from the manifests. With [`Landscape::load_with_documents`], `shoot_docs`
/// keeps each Shoot's original document so `-o yaml` can reproduce it with only
/// `spec.seedName` added; otherwise it stays empty (the documents cost more memory than
/// everything else together).
#[derive(Default)]
pub struct Landscape {
    pub seeds: Vec<Seed>,
    pub shoots: Vec<Shoot>,
    pub shoot_docs: Vec<serde_yaml_ng::Value>,
    keep_documents: bool,
    pub cloud_profiles: Vec<CloudProfile>,
    pub namespaced_cloud_profiles: Vec<NamespacedCloudProfile>,
    pub projects: Vec<Project>,
    pub config_maps: Vec<ConfigMap>,
}

impl Landscape {
    /// Loads every path (files, or directories read recursively in name order).
    pub fn load(paths: &[PathBuf]) -> Result<Landscape, ManifestError> {
        Self::load_into(Landscape::default(), paths)
    }

    /// Loads like [`Landscape::load`] and keeps each Shoot's original document in `shoot_docs`.
    pub fn load_with_documents(paths: &[PathBuf]) -> Result<Landscape, ManifestError> {
        Self::load_into(
            Landscape {
                keep_documents: true,
                ..Default::default()
            },
            paths,
        )
    }

    fn load_into(mut landscape: Landscape, paths: &[PathBuf]) -> Result<Landscape, ManifestError> {
        let mut files = Vec::new();
        for p in paths {
            collect(p, &mut files)?;
        }
        for f in files {
            landscape.add_file(&f)?;
        }
        Ok(landscape)
    }

    fn add_file(&mut self, path: &Path) -> Result<(), ManifestError> {
        let read_err = |source| ManifestError::Read {
            path: path.to_path_buf(),
            source,
        };
        let size = std::fs::metadata(path).map_err(read_err)?.len();
        if size > MAX_FILE_BYTES {
            return Err(ManifestError::TooLarge {
                path: path.to_path_buf(),
                size,
            });
        }
        let text = std::fs::read_to_string(path).map_err(read_err)?;
        self.add_text(path, &text)
    }

    /// Adds the documents of one YAML text; `path` names it in errors.
    pub fn add_text(&mut self, path: &Path, text: &str) -> Result<(), ManifestError> {
        for (index, doc) in serde_yaml_ng::Deserializer::from_str(text).enumerate() {
            let err = |message: String| ManifestError::Document {
                path: path.to_path_buf(),
                index,
                message,
            };
            let value = serde_yaml_ng::Value::deserialize(doc).map_err(|e| err(e.to_string()))?;
            if value.is_null() {
                continue;
            }
            self.add_value(value).map_err(err)?;
        }
        Ok(())
    }

    fn add_value(&mut self, value: serde_yaml_ng::Value) -> Result<(), String> {
        let field = |name: &str| value.get(name).and_then(|v| v.as_str()).map(str::to_string);
        let api_version = field("apiVersion").ok_or("apiVersion: is required")?;
        let kind = field("kind").ok_or("kind: is required")?;
        match (api_version.as_str(), kind.as_str()) {
            ("core.gardener.cloud/v1beta1", "Shoot") => {
                let shoot: Shoot = typed(&value)?;
                require_name(&shoot.metadata, true)?;
                self.shoots.push(shoot);
                if self.keep_documents {
                    self.shoot_docs.push(value);
                }
            }
            ("core.gardener.cloud/v1beta1", "Seed") => {
                let seed: Seed = typed(&value)?;
                require_name(&seed.metadata, false)?;
                self.seeds.push(seed);
            }
            ("core.gardener.cloud/v1beta1", "CloudProfile") => {
                let cp: CloudProfile = typed(&value)?;
                require_name(&cp.metadata, false)?;
                self.cloud_profiles.push(cp);
            }
            ("core.gardener.cloud/v1beta1", "NamespacedCloudProfile") => {
                let ncp: NamespacedCloudProfile = typed(&value)?;
                require_name(&ncp.metadata, true)?;
                self.namespaced_cloud_profiles.push(ncp);
            }
            ("core.gardener.cloud/v1beta1", "Project") => {
                let p: Project = typed(&value)?;
                require_name(&p.metadata, false)?;
                self.projects.push(p);
            }
            ("v1", "ConfigMap") => {
                let cm: ConfigMap = typed(&value)?;
                require_name(&cm.metadata, true)?;
                self.config_maps.push(cm);
            }
            ("v1", "List") => {
                let items = value
                    .get("items")
                    .and_then(|i| i.as_sequence())
                    .cloned()
                    .unwrap_or_default();
                for (i, item) in items.into_iter().enumerate() {
                    self.add_value(item)
                        .map_err(|e| format!("items[{i}]: {e}"))?;
                }
            }
            (api_version, kind) => {
                return Err(format!(
                    "unsupported object {api_version}/{kind}: expected core.gardener.cloud/v1beta1 Shoot, Seed, CloudProfile, NamespacedCloudProfile, Project or v1 ConfigMap"
                ));
            }
        }
        Ok(())
    }
}

fn typed<T: DeserializeOwned>(value: &serde_yaml_ng::Value) -> Result<T, String> {
    serde_path_to_error::deserialize(value.clone()).map_err(|e| {
        let path = e.path().to_string();
        format!("{path}: {}", e.into_inner())
    })
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

fn collect(path: &Path, out: &mut Vec<PathBuf>) -> Result<(), ManifestError> {
    let meta = std::fs::metadata(path).map_err(|source| ManifestError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    if !meta.is_dir() {
        out.push(path.to_path_buf());
        return Ok(());
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
        .map_err(|source| ManifestError::Read {
            path: path.to_path_buf(),
            source,
        })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for e in entries {
        if e.is_dir() {
            collect(&e, out)?;
        } else if matches!(
            e.extension().and_then(|x| x.to_str()),
            Some("yaml" | "yml" | "json")
        ) {
            out.push(e);
        }
    }
    Ok(())
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
            with.shoot_docs[0]["spec"]["kubernetes"]["version"].as_str(),
            Some("1.33.0"),
            "the original document, unknown fields included"
        );
    }
}
