//! Builders for test objects: `SeedBuilder::new("s1").region("eu-west-1").build()`.
//!
//! Defaults describe the common case: an `aws` seed in `eu-west-1` that is ready and visible,
//! and a pending `aws` shoot in `eu-west-1` using CloudProfile `aws`.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelectorRequirement, Time};

use crate::api::*;

#[derive(Clone)]
pub struct SeedBuilder(Seed);

impl SeedBuilder {
    pub fn new(name: &str) -> Self {
        let mut seed = Seed::default();
        seed.metadata.name = Some(name.into());
        seed.spec.provider = Some(SeedProvider {
            type_: "aws".into(),
            region: "eu-west-1".into(),
            zones: vec!["a".into(), "b".into(), "c".into()],
        });
        seed.status.last_operation = Some(LastOperation {
            type_: "Reconcile".into(),
            state: "Succeeded".into(),
            ..Default::default()
        });
        seed.status.conditions.push(Condition {
            type_: "GardenletReady".into(),
            status: "True".into(),
            ..Default::default()
        });
        SeedBuilder(seed)
    }

    fn provider_mut(&mut self) -> &mut SeedProvider {
        self.0.spec.provider.get_or_insert_with(Default::default)
    }

    pub fn provider(mut self, t: &str) -> Self {
        self.provider_mut().type_ = t.into();
        self
    }
    pub fn region(mut self, r: &str) -> Self {
        self.provider_mut().region = r.into();
        self
    }
    pub fn zones(mut self, zones: &[&str]) -> Self {
        self.provider_mut().zones = zones.iter().map(|z| z.to_string()).collect();
        self
    }
    pub fn no_provider(mut self) -> Self {
        self.0.spec.provider = None;
        self
    }
    pub fn label(mut self, k: &str, v: &str) -> Self {
        insert(&mut self.0.metadata.labels, k, v);
        self
    }
    pub fn annotation(mut self, k: &str, v: &str) -> Self {
        insert(&mut self.0.metadata.annotations, k, v);
        self
    }
    pub fn deleting(mut self) -> Self {
        self.0.metadata.deletion_timestamp = Some(Time(k8s_openapi::jiff::Timestamp::now()));
        self
    }
    pub fn visible(mut self, v: bool) -> Self {
        self.0.spec.settings.scheduling = Some(crate::api::SeedScheduling { visible: Some(v) });
        self
    }
    pub fn no_last_operation(mut self) -> Self {
        self.0.status.last_operation = None;
        self
    }
    /// Sets (or replaces) a status condition.
    pub fn condition(mut self, type_: &str, status: &str) -> Self {
        self.0.status.conditions.retain(|c| c.type_ != type_);
        self.0.status.conditions.push(Condition {
            type_: type_.into(),
            status: status.into(),
            ..Default::default()
        });
        self
    }
    /// Adds `spec.backup` with a ready `BackupBucketsReady` condition.
    pub fn backup(mut self) -> Self {
        self.0.spec.backup = Some(SeedBackup {
            provider: Some("aws".into()),
        });
        self.condition("BackupBucketsReady", "True")
    }
    pub fn allocatable(mut self, resource: &str, q: &str) -> Self {
        self.0
            .status
            .allocatable
            .insert(resource.into(), Quantity(q.into()));
        self
    }
    pub fn taint(mut self, key: &str, value: Option<&str>) -> Self {
        self.0.spec.taints.push(SeedTaint {
            key: key.into(),
            value: value.map(Into::into),
        });
        self
    }
    pub fn zone_mode(mut self, mode: &str) -> Self {
        self.0.spec.settings.zone_selection = Some(ZoneSelection { mode: mode.into() });
        self
    }
    pub fn access_restriction(mut self, name: &str) -> Self {
        restrict(&mut self.0.spec.access_restrictions, name);
        self
    }
    pub fn default_domain(mut self, domain: &str) -> Self {
        self.0
            .spec
            .dns
            .get_or_insert_with(Default::default)
            .defaults
            .push(SeedDnsDefault {
                domain: domain.into(),
            });
        self
    }
    pub fn networks(mut self, nodes: &str, pods: &str, services: &str) -> Self {
        self.0.spec.networks.nodes = Some(nodes.into());
        self.0.spec.networks.pods = Some(pods.into());
        self.0.spec.networks.services = Some(services.into());
        self
    }
    pub fn shoot_defaults(mut self, pods: Option<&str>, services: Option<&str>) -> Self {
        self.0.spec.networks.shoot_defaults = Some(ShootNetworkDefaults {
            pods: pods.map(Into::into),
            services: services.map(Into::into),
        });
        self
    }
    pub fn build(self) -> Seed {
        self.0
    }
}

#[derive(Clone)]
pub struct ShootBuilder(Shoot);

impl ShootBuilder {
    pub fn new(namespace: &str, name: &str) -> Self {
        let mut shoot = Shoot::default();
        shoot.metadata.name = Some(name.into());
        shoot.metadata.namespace = Some(namespace.into());
        shoot.metadata.uid = Some(format!("uid-{namespace}-{name}"));
        shoot.spec.region = Some("eu-west-1".into());
        shoot.spec.cloud_profile = Some(CloudProfileReference {
            kind: Some("CloudProfile".into()),
            name: "aws".into(),
        });
        shoot.spec.provider = Some(ShootProvider {
            type_: "aws".into(),
            workers: vec![Worker {
                name: "worker".into(),
                ..Default::default()
            }],
        });
        shoot.spec.networking = Some(ShootNetworking {
            nodes: Some("10.180.0.0/16".into()),
            ..Default::default()
        });
        ShootBuilder(shoot)
    }

    fn provider_mut(&mut self) -> &mut ShootProvider {
        self.0.spec.provider.get_or_insert_with(Default::default)
    }
    fn networking_mut(&mut self) -> &mut ShootNetworking {
        self.0.spec.networking.get_or_insert_with(Default::default)
    }

    pub fn annotation(mut self, k: &str, v: &str) -> Self {
        insert(&mut self.0.metadata.annotations, k, v);
        self
    }
    pub fn seed(mut self, s: &str) -> Self {
        self.0.spec.seed_name = Some(s.into());
        self
    }
    pub fn status_seed(mut self, s: &str) -> Self {
        self.0.status.get_or_insert_with(Default::default).seed_name = Some(s.into());
        self
    }
    pub fn last_operation(mut self, type_: &str, state: &str) -> Self {
        self.0
            .status
            .get_or_insert_with(Default::default)
            .last_operation = Some(crate::api::LastOperation {
            type_: type_.into(),
            state: state.into(),
            ..Default::default()
        });
        self
    }
    pub fn provider(mut self, t: &str) -> Self {
        self.provider_mut().type_ = t.into();
        self
    }
    pub fn region(mut self, r: &str) -> Self {
        self.0.spec.region = Some(r.into());
        self
    }
    pub fn purpose(mut self, p: &str) -> Self {
        self.0.spec.purpose = Some(p.into());
        self
    }
    pub fn cloud_profile(mut self, name: &str) -> Self {
        self.0.spec.cloud_profile = Some(CloudProfileReference {
            kind: Some("CloudProfile".into()),
            name: name.into(),
        });
        self
    }
    pub fn scheduler_name(mut self, n: &str) -> Self {
        self.0.spec.scheduler_name = Some(n.into());
        self
    }
    pub fn created(mut self, rfc3339: &str) -> Self {
        let t: k8s_openapi::jiff::Timestamp = rfc3339.parse().expect("timestamp");
        self.0.metadata.creation_timestamp = Some(Time(t));
        self
    }
    /// `""` means no high availability.
    pub fn failure_tolerance(mut self, t: &str) -> Self {
        self.0
            .spec
            .control_plane
            .get_or_insert_with(Default::default)
            .high_availability = (!t.is_empty()).then(|| HighAvailability {
            failure_tolerance: FailureTolerance { type_: t.into() },
        });
        self
    }
    pub fn control_plane_zones(mut self, zones: &[&str]) -> Self {
        self.0
            .spec
            .control_plane
            .get_or_insert_with(Default::default)
            .zones = zones.iter().map(|z| z.to_string()).collect();
        self
    }
    pub fn worker_zones(mut self, zones: &[&str]) -> Self {
        let p = self.provider_mut();
        if p.workers.is_empty() {
            p.workers.push(Worker::default());
        }
        p.workers[0].zones = zones.iter().map(|z| z.to_string()).collect();
        self
    }
    pub fn access_restriction(mut self, name: &str) -> Self {
        restrict(&mut self.0.spec.access_restrictions, name);
        self
    }
    pub fn toleration(mut self, key: &str, value: Option<&str>) -> Self {
        self.0.spec.tolerations.push(Toleration {
            key: key.into(),
            value: value.map(Into::into),
        });
        self
    }
    pub fn seed_selector(mut self, k: &str, v: &str) -> Self {
        let sel = self
            .0
            .spec
            .seed_selector
            .get_or_insert_with(Default::default);
        insert(&mut sel.label_selector.match_labels, k, v);
        self
    }
    pub fn seed_selector_provider_types(mut self, types: &[&str]) -> Self {
        let sel = self
            .0
            .spec
            .seed_selector
            .get_or_insert_with(Default::default);
        sel.provider_types = types.iter().map(|t| t.to_string()).collect();
        self
    }
    pub fn domain(mut self, d: &str) -> Self {
        self.0.spec.dns = Some(ShootDns {
            domain: Some(d.into()),
        });
        self
    }
    pub fn nodes(mut self, cidr: &str) -> Self {
        self.networking_mut().nodes = Some(cidr.into());
        self
    }
    pub fn pods(mut self, cidr: &str) -> Self {
        self.networking_mut().pods = Some(cidr.into());
        self
    }
    pub fn services(mut self, cidr: &str) -> Self {
        self.networking_mut().services = Some(cidr.into());
        self
    }
    pub fn ip_families(mut self, fams: &[&str]) -> Self {
        self.networking_mut().ip_families = fams.iter().map(|f| f.to_string()).collect();
        self
    }
    fn status_networking_mut(&mut self) -> &mut StatusNetworking {
        let status = self.0.status.get_or_insert_with(Default::default);
        status.networking.get_or_insert_with(Default::default)
    }
    pub fn status_pods(mut self, cidr: &str) -> Self {
        self.status_networking_mut().pods.push(cidr.into());
        self
    }
    pub fn status_services(mut self, cidr: &str) -> Self {
        self.status_networking_mut().services.push(cidr.into());
        self
    }
    /// `status.networking: {}`: present, naming no network.
    pub fn empty_status_networking(mut self) -> Self {
        let status = self.0.status.get_or_insert_with(Default::default);
        status.networking = Some(Default::default());
        self
    }
    /// No worker pools.
    pub fn workerless(mut self) -> Self {
        if let Some(p) = self.0.spec.provider.as_mut() {
            p.workers.clear();
        }
        self
    }
    pub fn no_networking(mut self) -> Self {
        self.0.spec.networking = None;
        self
    }
    pub fn build(self) -> Shoot {
        self.0
    }
}

/// Sets `k` to `v` in a label, annotation or selector map, the map made when absent.
fn insert(map: &mut Option<BTreeMap<String, String>>, k: &str, v: &str) {
    map.get_or_insert_with(BTreeMap::new)
        .insert(k.into(), v.into());
}

/// Adds an access restriction by name to a seed's or a shoot's list.
fn restrict(restrictions: &mut Vec<AccessRestriction>, name: &str) {
    restrictions.push(AccessRestriction { name: name.into() });
}

#[derive(Clone)]
pub struct CloudProfileBuilder(CloudProfile);

impl CloudProfileBuilder {
    pub fn new(name: &str) -> Self {
        let mut cp = CloudProfile::default();
        cp.metadata.name = Some(name.into());
        cp.spec.type_ = name.into();
        CloudProfileBuilder(cp)
    }
    fn selector_mut(&mut self) -> &mut SeedSelector {
        self.0
            .spec
            .seed_selector
            .get_or_insert_with(Default::default)
    }
    pub fn match_label(mut self, k: &str, v: &str) -> Self {
        insert(&mut self.selector_mut().label_selector.match_labels, k, v);
        self
    }
    pub fn match_expression(mut self, key: &str, op: &str, values: &[&str]) -> Self {
        self.selector_mut()
            .label_selector
            .match_expressions
            .get_or_insert_with(Vec::new)
            .push(LabelSelectorRequirement {
                key: key.into(),
                operator: op.into(),
                values: (!values.is_empty())
                    .then(|| values.iter().map(|v| v.to_string()).collect()),
            });
        self
    }
    pub fn provider_types(mut self, types: &[&str]) -> Self {
        self.selector_mut().provider_types = types.iter().map(|t| t.to_string()).collect();
        self
    }
    pub fn build(self) -> CloudProfile {
        self.0
    }
}

/// An exporter ConfigMap: namespace `kube-system`, labelled as a carbon-intensity forecast,
/// points under `binaryData.data`.
#[derive(Clone)]
pub struct CarbonConfigMapBuilder {
    cm: ConfigMap,
    points: Vec<serde_json::Value>,
    raw: BTreeMap<String, String>,
}

impl CarbonConfigMapBuilder {
    pub fn new(name: &str) -> Self {
        let mut cm = ConfigMap::default();
        cm.metadata.name = Some(name.into());
        cm.metadata.namespace = Some("kube-system".into());
        cm.metadata.labels = Some(BTreeMap::from([(
            LABEL_SCHEDULING_PURPOSE.to_string(),
            PURPOSE_CARBON_INTENSITY.to_string(),
        )]));
        CarbonConfigMapBuilder {
            cm,
            points: Vec::new(),
            raw: BTreeMap::new(),
        }
    }
    pub fn namespace(mut self, ns: &str) -> Self {
        self.cm.metadata.namespace = Some(ns.into());
        self
    }
    pub fn unlabelled(mut self) -> Self {
        self.cm.metadata.labels = None;
        self
    }
    /// Sets `data.lastHeartbeatTime` verbatim.
    pub fn heartbeat(mut self, t: &str) -> Self {
        self.cm
            .data
            .get_or_insert_with(BTreeMap::new)
            .insert("lastHeartbeatTime".into(), t.into());
        self
    }
    /// Adds a point to `binaryData.data`.
    pub fn point(mut self, location: &str, timestamp: &str, minutes: i64, value: f64) -> Self {
        self.points.push(serde_json::json!({
            "location": location, "timestamp": timestamp, "duration": minutes, "value": value
        }));
        self
    }
    /// Adds `count` consecutive points of the same value, starting at `timestamp`.
    pub fn points(
        mut self,
        location: &str,
        timestamp: &str,
        minutes: i64,
        count: usize,
        value: f64,
    ) -> Self {
        let start = chrono::DateTime::parse_from_rfc3339(timestamp).expect("RFC 3339");
        for i in 0..count {
            let t = start + chrono::TimeDelta::minutes(minutes * i as i64);
            self = self.point(location, &t.to_rfc3339(), minutes, value);
        }
        self
    }
    /// Sets `binaryData.<key>` to these bytes verbatim (replaces the points for `data`).
    pub fn raw(mut self, key: &str, text: &str) -> Self {
        self.raw.insert(key.into(), text.into());
        self
    }
    pub fn build(self) -> ConfigMap {
        let mut cm = self.cm;
        let mut binary = BTreeMap::new();
        if !self.points.is_empty() {
            binary.insert(
                "data".to_string(),
                k8s_openapi::ByteString(serde_json::to_vec(&self.points).expect("JSON")),
            );
        }
        for (k, v) in self.raw {
            binary.insert(k, k8s_openapi::ByteString(v.into_bytes()));
        }
        cm.binary_data = Some(binary);
        cm
    }
}
