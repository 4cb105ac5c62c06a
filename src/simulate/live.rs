//! `simulate --live`: the landscape read from a cluster, read-only.
//!
//! One paginated list per kind (the same kinds, label selectors and decoding the scheduler
//! process's watches use), so the simulation sees exactly what the scheduler would. A malformed
//! object is skipped with a warning, as the controller skips it. A kind the decision cannot do
//! without (Seeds, Shoots, CloudProfiles) must be listed completely, or the read fails; a kind
//! the controller treats as optional (Projects, NamespacedCloudProfiles, region and carbon
//! ConfigMaps) that the API server does not serve or the user may not list is read as empty,
//! with a warning. One page request, and how its failures read, lives in `page`.

mod page;

use std::time::Duration;

use kube::api::{ApiResource, DynamicObject, ListParams};
use kube::{Client, Resource};
use serde::de::DeserializeOwned;

use page::{Failed, classify};

use super::Landscape;
use super::values::Values;
use crate::api::{
    CloudProfile, ConfigMap, LABEL_SCHEDULING_PURPOSE, NamespacedCloudProfile,
    PURPOSE_CARBON_INTENSITY, PURPOSE_REGION_CONFIG, Project, Seed, Shoot, object_key,
};
use crate::controller::decode;
use crate::controller::permissions::{
    LIST_CARBON_CONFIG_MAPS, LIST_CLOUD_PROFILES, LIST_NAMESPACED_CLOUD_PROFILES, LIST_PROJECTS,
    LIST_REGION_CONFIG_MAPS, LIST_SEEDS, LIST_SHOOTS, Permission,
};
use crate::plugin::ClusterData;
use crate::snapshot::GARDEN_NAMESPACE;

/// The error and each of its causes that adds something: `client error (Connect): tcp connect
/// error: Connection refused (os error 111)`.
pub(crate) fn with_causes(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let part = s.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        source = s.source();
    }
    text
}

/// Objects per list page unless asked otherwise (`simulate --chunk-size`).
pub const PAGE_SIZE: u32 = 500;

/// How long one list request may take, headers and body, unless asked otherwise
/// (`--request-timeout`).
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// The most bytes one list page may hold: as much as one `-f` file.
pub const MAX_PAGE_BYTES: u64 = super::manifests::MAX_FILE_BYTES;
/// The most bytes one object of a list may hold (etcd refuses objects above 1.5 MiB unless told
/// otherwise).
pub const MAX_OBJECT_BYTES: u64 = 8 * 1024 * 1024;

/// Bounds of one list request: a server that never answers, or answers without end, fails the
/// read instead of hanging it or exhausting memory.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub timeout: Duration,
    pub page_bytes: u64,
    pub object_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            timeout: REQUEST_TIMEOUT,
            page_bytes: MAX_PAGE_BYTES,
            object_bytes: MAX_OBJECT_BYTES,
        }
    }
}

/// `30 s`, `1.5 s`, `200 ms`.
pub fn seconds(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else if d.as_secs() == 0 {
        format!("{} ms", d.as_millis())
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    #[error(
        "listing {what}: forbidden ({message}); reading the landscape needs `{verb}` on {resource} \
         (the chart's `whatIfReader` and `planApplier` roles grant every read simulate, plan and plan apply make)"
    )]
    Forbidden {
        what: String,
        verb: &'static str,
        resource: String,
        message: String,
    },
    #[error("listing {what}: the API server answered {code}: {message}")]
    Api {
        what: String,
        code: u16,
        message: String,
    },
    #[error("listing {what}: the cluster could not be reached: {message}")]
    Unreachable { what: String, message: String },
    #[error("listing {what}: the cluster did not answer within {} (--request-timeout)", seconds(*.timeout))]
    Timeout { what: String, timeout: Duration },
    #[error(
        "listing {what}: one page of the answer holds more than {limit} bytes; the read stops \
         here (a smaller --chunk-size makes pages smaller)"
    )]
    PageTooLarge { what: String, limit: u64 },
    #[error(
        "listing {what}: object {index} of a page holds more than {limit} bytes, more than the \
         API server stores for one object"
    )]
    ObjectTooLarge {
        what: String,
        index: usize,
        limit: u64,
    },
    #[error(
        "listing {what}: the server answered (HTTP {code}{content_type}), but not with a \
         Kubernetes list: {why}; is the kubeconfig's server the API server?"
    )]
    NotAList {
        what: String,
        code: u16,
        content_type: String,
        why: String,
    },
}

/// One kind to read.
struct Read {
    /// what a message calls it: `Seeds`, `region ConfigMaps in garden`
    what: &'static str,
    /// its row of the permission table
    permission: Permission,
    /// Read as empty (with a warning) when not served (404) or forbidden (403).
    optional: bool,
}

impl Read {
    /// A kind the decision cannot do without: listed completely, or the read fails.
    const fn required(what: &'static str, permission: Permission) -> Self {
        Read {
            what,
            permission,
            optional: false,
        }
    }

    /// A kind read as empty, with a warning, when not served or not allowed.
    const fn optional(what: &'static str, permission: Permission) -> Self {
        Read {
            what,
            permission,
            optional: true,
        }
    }
}

/// Progress of the read, for a terminal: the kind being listed and the objects read so far.
pub struct Progress<'a> {
    pub what: &'a str,
    pub objects: usize,
    pub done: bool,
}

/// The landscape of the cluster, and what was left out of it (one warning each).
pub struct LiveLandscape {
    pub landscape: Landscape,
    pub warnings: Vec<String>,
}

/// Reads every kind the scheduler watches, `page_size` objects per request, plus the cluster
/// data the profiles declare in `data` (carbon-intensity ConfigMaps when a profile reads them),
/// as the scheduler does. `keep_documents`: keep each Shoot's object as read, for `-o yaml`.
pub async fn read_live(
    client: &Client,
    page_size: u32,
    limits: Limits,
    data: &[ClusterData],
    keep_documents: bool,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<LiveLandscape, LiveError> {
    let mut l = Landscape::default();
    let mut warnings = Vec::new();
    let mut read = Reader {
        client,
        page_size: page_size.max(1),
        limits,
        warnings: &mut warnings,
        progress,
    };
    l.seeds = read.objects::<Seed>(REQUIRED_SEEDS).await?;
    let shoots = read
        .list::<Shoot>(
            (ApiResource::erase::<Shoot>(&()), None),
            ListParams::default(),
            REQUIRED_SHOOTS,
            true,
        )
        .await?;
    for (shoot, doc) in shoots {
        l.shoots.push(shoot);
        if keep_documents && let Some(doc) = doc {
            l.shoot_docs.push(super::manifests::Document::of(&doc));
        }
    }
    l.cloud_profiles = read
        .objects::<CloudProfile>(REQUIRED_CLOUD_PROFILES)
        .await?;
    l.namespaced_cloud_profiles = read
        .objects::<NamespacedCloudProfile>(OPTIONAL_NAMESPACED_CLOUD_PROFILES)
        .await?;
    l.projects = read.objects::<Project>(OPTIONAL_PROJECTS).await?;
    let purpose =
        |p: &str| ListParams::default().labels(&format!("{LABEL_SCHEDULING_PURPOSE}={p}"));
    l.config_maps = read
        .selected::<ConfigMap>(
            Some(GARDEN_NAMESPACE),
            purpose(PURPOSE_REGION_CONFIG),
            OPTIONAL_REGION_CONFIG_MAPS,
        )
        .await?;
    let carbon = data
        .iter()
        .any(|d| matches!(d, ClusterData::CarbonConfigMaps(_)));
    if carbon {
        let carbon_maps = read
            .selected::<ConfigMap>(
                None,
                purpose(PURPOSE_CARBON_INTENSITY),
                OPTIONAL_CARBON_CONFIG_MAPS,
            )
            .await?;
        l.config_maps.extend(carbon_maps);
    }
    Ok(LiveLandscape {
        landscape: l,
        warnings,
    })
}

const REQUIRED_SEEDS: Read = Read::required("Seeds", LIST_SEEDS);
const REQUIRED_SHOOTS: Read = Read::required("Shoots", LIST_SHOOTS);
const REQUIRED_CLOUD_PROFILES: Read = Read::required("CloudProfiles", LIST_CLOUD_PROFILES);
const OPTIONAL_NAMESPACED_CLOUD_PROFILES: Read =
    Read::optional("NamespacedCloudProfiles", LIST_NAMESPACED_CLOUD_PROFILES);
const OPTIONAL_PROJECTS: Read = Read::optional("Projects", LIST_PROJECTS);
const OPTIONAL_REGION_CONFIG_MAPS: Read = Read::optional(
    "region ConfigMaps (namespace garden)",
    LIST_REGION_CONFIG_MAPS,
);
const OPTIONAL_CARBON_CONFIG_MAPS: Read =
    Read::optional("carbon-intensity ConfigMaps", LIST_CARBON_CONFIG_MAPS);

struct Reader<'a, 'p> {
    client: &'a Client,
    page_size: u32,
    limits: Limits,
    warnings: &'a mut Vec<String>,
    progress: &'a mut dyn FnMut(Progress<'p>),
}

impl Reader<'_, '_> {
    /// Every object of one kind in every namespace, without its document.
    async fn objects<K: DeserializeOwned + Resource<DynamicType = ()> + Values>(
        &mut self,
        read: Read,
    ) -> Result<Vec<K>, LiveError> {
        self.selected(None, ListParams::default(), read).await
    }

    /// The objects of one kind that `params` select in `namespace` (every namespace when
    /// `None`), without their documents.
    async fn selected<K: DeserializeOwned + Resource<DynamicType = ()> + Values>(
        &mut self,
        namespace: Option<&str>,
        params: ListParams,
        read: Read,
    ) -> Result<Vec<K>, LiveError> {
        let listed = self
            .list::<K>(
                (ApiResource::erase::<K>(&()), namespace),
                params,
                read,
                false,
            )
            .await?;
        Ok(listed.into_iter().map(|(o, _)| o).collect())
    }

    /// Every object of one kind, page by page; each decoded as the watches decode it.
    /// `with_document`: also the object as read (managed fields dropped), as YAML.
    async fn list<K: DeserializeOwned + Resource<DynamicType = ()> + Values>(
        &mut self,
        (resource, namespace): (ApiResource, Option<&str>),
        params: ListParams,
        read: Read,
        with_document: bool,
    ) -> Result<Vec<(K, Option<serde_yaml_ng::Value>)>, LiveError> {
        let mut out = Vec::new();
        let mut seen = 0usize;
        let mut token: Option<String> = None;
        let url = DynamicObject::url_path(&resource, namespace);
        loop {
            let mut page_params = params.clone().limit(self.page_size);
            if let Some(t) = &token {
                page_params = page_params.continue_token(t);
            }
            let page = match self.page::<K>(&url, &page_params, &read).await {
                Ok(page) => page,
                Err(Failed::Status(s)) if read.optional && (s.code == 404 || s.code == 403) => {
                    let why = if s.code == 404 {
                        "the API server does not serve this kind".to_string()
                    } else {
                        format!(
                            "no permission to {} {} ({})",
                            read.permission.verb,
                            read.permission.qualified_resource(),
                            s.message
                        )
                    };
                    self.warnings.push(format!(
                        "{}: {why}; simulating without them, as the scheduler would",
                        read.what
                    ));
                    (self.progress)(Progress {
                        what: read.what,
                        objects: 0,
                        done: true,
                    });
                    return Ok(Vec::new());
                }
                Err(Failed::Status(s)) => {
                    return Err(classify(&read, kube::Error::Api(s)));
                }
                Err(Failed::Other(e)) => return Err(e),
            };
            for (index, raw) in page.items.unwrap_or_default().into_iter().enumerate() {
                let mut obj = self.object(&raw, index, &read)?;
                obj.metadata.managed_fields = None;
                seen += 1;
                let key = if obj.metadata.namespace.is_some() {
                    object_key(&obj.metadata)
                } else {
                    obj.metadata.name.clone().unwrap_or_default()
                };
                // Items of a list may come without apiVersion and kind (aggregated API
                // servers leave them out): the document for `-o yaml` gets them back.
                let doc = if with_document {
                    serde_json::to_value(&obj).ok().and_then(|mut v| {
                        if let Some(map) = v.as_object_mut() {
                            map.entry("apiVersion")
                                .or_insert_with(|| K::api_version(&()).into());
                            map.entry("kind").or_insert_with(|| K::kind(&()).into());
                        }
                        serde_yaml_ng::to_value(v).ok()
                    })
                } else {
                    None
                };
                match decode::<K>(obj).and_then(|o| o.check_values().map(|()| o)) {
                    Ok(typed) => out.push((typed, doc)),
                    Err(e) => self.warnings.push(format!(
                        "skipped malformed {} {key}: {e}",
                        read.what.trim_end_matches('s')
                    )),
                }
            }
            (self.progress)(Progress {
                what: read.what,
                objects: seen,
                done: false,
            });
            token = page
                .metadata
                .and_then(|m| m.continue_)
                .filter(|t| !t.is_empty());
            if token.is_none() {
                break;
            }
        }
        (self.progress)(Progress {
            what: read.what,
            objects: seen,
            done: true,
        });
        Ok(out)
    }
}
