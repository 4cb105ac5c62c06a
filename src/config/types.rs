use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub const API_VERSION: &str = "scheduler.config.gardener.cloud/v1alpha1";
pub const KIND: &str = "SchedulerConfiguration";

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", default)]
pub struct SchedulerConfiguration {
    pub api_version: String,
    pub kind: String,
    pub client_connection: ClientConnection,
    pub leader_election: LeaderElection,
    pub log_level: LogLevel,
    pub log_format: LogFormat,
    pub server: ServerConfiguration,
    pub debugging: Debugging,
    pub feature_gates: BTreeMap<String, bool>,
    pub schedulers: Schedulers,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", default)]
pub struct ClientConnection {
    pub kubeconfig: String,
    pub qps: f32,
    pub burst: i32,
    pub accept_content_types: String,
    pub content_type: String,
}

impl Default for ClientConnection {
    fn default() -> Self {
        Self {
            kubeconfig: String::new(),
            qps: 50.0,
            burst: 100,
            accept_content_types: String::new(),
            content_type: String::new(),
        }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", default)]
pub struct LeaderElection {
    pub leader_elect: bool,
    #[serde(with = "crate::go_duration::serde")]
    pub lease_duration: Duration,
    #[serde(with = "crate::go_duration::serde")]
    pub renew_deadline: Duration,
    #[serde(with = "crate::go_duration::serde")]
    pub retry_period: Duration,
    pub resource_lock: String,
    pub resource_name: String,
    pub resource_namespace: String,
}

impl Default for LeaderElection {
    fn default() -> Self {
        Self {
            leader_elect: true,
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
            resource_lock: "leases".into(),
            resource_name: "gardener-scheduler-leader-election".into(),
            resource_namespace: "garden".into(),
        }
    }
}

#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    Debug,
    /// Upstream writes an unset level as `""`, which means `info`.
    #[default]
    #[serde(alias = "")]
    Info,
    Error,
}

#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// Upstream writes an unset format as `""`, which means `json`.
    #[default]
    #[serde(alias = "")]
    Json,
    Text,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", default)]
pub struct ServerConfiguration {
    pub health_probes: Server,
    pub metrics: Server,
}

impl Default for ServerConfiguration {
    fn default() -> Self {
        Self {
            health_probes: Server {
                bind_address: String::new(),
                port: 10251,
            },
            metrics: Server {
                bind_address: String::new(),
                port: 19251,
            },
        }
    }
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", default)]
pub struct Server {
    /// IP address to listen on; empty means all interfaces.
    pub bind_address: String,
    pub port: i64,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", default)]
pub struct Debugging {
    pub enable_profiling: bool,
    pub enable_contention_profiling: bool,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", default)]
pub struct Schedulers {
    pub backup_bucket: BackupBucketScheduler,
    pub shoot: ShootScheduler,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", default)]
pub struct BackupBucketScheduler {
    pub concurrent_syncs: i64,
}

impl Default for BackupBucketScheduler {
    fn default() -> Self {
        Self {
            concurrent_syncs: 2,
        }
    }
}

/// How a decision is written to the API server.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
pub enum BindingMode {
    /// Update the `shoots/binding` subresource (gardener-apiserver).
    #[default]
    Binding,
    /// Patch `spec.seedName` with optimistic concurrency (CRD-only development clusters).
    Patch,
}

/// The default of `schedulers.shoot.listPageSize`.
pub const DEFAULT_LIST_PAGE_SIZE: u32 = 500;

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", default)]
pub struct ShootScheduler {
    pub concurrent_syncs: i64,
    /// Upstream key, kept for compatibility: the requeue period after an API error.
    #[serde(with = "crate::go_duration::serde")]
    pub retry_sync_period: Duration,
    /// How long one decision may take before the attempt gives up (tried again with
    /// backoff): a filter or priority that is slower than it should be cannot hold up the
    /// other shoots.
    #[serde(with = "crate::go_duration::serde")]
    pub decision_budget: Duration,
    /// Objects per page when a watch lists its kind (at start and after a 410): fewer pages
    /// list a large landscape sooner; each page is held whole while it is decoded.
    pub list_page_size: u32,
    /// Whether a watch reads its kind's state as one stream of events where the API server
    /// serves it (`sendInitialEvents`), falling back to pages where it does not; `false`: pages.
    pub streaming_lists: bool,
    /// A region strategy's name; checked when the profile is built.
    pub candidate_determination_strategy: String,
    /// Weighted priorities in evaluation order. Absent: `ShootCount` with weight 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priorities: Option<Vec<PriorityConfig>>,
    /// Opt-in filters run after the built-in ones, in this order (`MaxLatency`, `Residency`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filters: Option<Vec<FilterConfig>>,
    /// Regions added to or overriding the compiled-in region catalogue.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub regions: Vec<crate::regions::RegionOverride>,
    /// `spec.schedulerName` values this scheduler serves.
    pub scheduler_names: Vec<String>,
    pub binding_mode: BindingMode,
    /// Whether each binding request also carries the decision record (the annotation
    /// `scheduling.gardener.cloud/decision`); on by default: it costs binds nothing measurable.
    pub decision_record: bool,
    pub backoff: Backoff,
    /// An ordered chain of profiles with optional time windows; the first active entry applies.
    /// Absent: one unconditional profile built from the keys above.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profiles: Option<Vec<ProfileEntry>>,
    /// Seed health and the evacuation plans kept for unhealthy seeds (off by default).
    pub evacuation: super::Evacuation,
    /// When a seed judged unhealthy counts as healthy again.
    pub failback: super::Failback,
}

impl Default for ShootScheduler {
    fn default() -> Self {
        Self {
            concurrent_syncs: 5,
            retry_sync_period: Duration::from_secs(15),
            decision_budget: Duration::from_secs(5),
            list_page_size: DEFAULT_LIST_PAGE_SIZE,
            streaming_lists: true,
            candidate_determination_strategy: "SameRegion".into(),
            priorities: None,
            filters: None,
            regions: Vec::new(),
            scheduler_names: vec![crate::api::DEFAULT_SCHEDULER_NAME.into()],
            binding_mode: BindingMode::Binding,
            decision_record: true,
            backoff: Backoff::default(),
            profiles: None,
            evacuation: super::Evacuation::default(),
            failback: super::Failback::default(),
        }
    }
}

impl ShootScheduler {
    /// The configured priorities, or the upstream-equivalent default.
    pub fn priorities_or_default(&self) -> Vec<PriorityConfig> {
        self.priorities.clone().unwrap_or_else(|| {
            vec![PriorityConfig {
                name: "ShootCount".into(),
                weight: 1.0,
                args: serde_json::Value::Null,
            }]
        })
    }
}

/// Retry timing for shoots that did not fit.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", default)]
pub struct Backoff {
    #[serde(with = "crate::go_duration::serde")]
    pub initial: Duration,
    #[serde(with = "crate::go_duration::serde")]
    pub max: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Self {
            initial: Duration::from_secs(1),
            max: Duration::from_secs(1000),
        }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct PriorityConfig {
    pub name: String,
    #[serde(default = "one")]
    pub weight: f64,
    #[serde(default, skip_serializing_if = "serde_json::Value::is_null")]
    pub args: serde_json::Value,
}

/// An opt-in filter of a profile.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FilterConfig {
    pub name: String,
    #[serde(default, skip_serializing_if = "serde_json::Value::is_null")]
    pub args: serde_json::Value,
}

fn one() -> f64 {
    1.0
}

/// One entry of `schedulers.shoot.profiles`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", default)]
pub struct ProfileEntry {
    /// Defaults to the entry's index.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schedule: Option<ScheduleConfig>,
    /// No shoot is bound while this entry is the active one.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub freeze: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<ProfileConfig>,
}

/// When an entry is active. Timestamps and durations stay strings here so that validation can
/// name the field of a malformed value.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", default)]
pub struct ScheduleConfig {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub between: Option<BetweenConfig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub active_period: Option<ActivePeriodConfig>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", default)]
pub struct BetweenConfig {
    /// RFC 3339 with an explicit offset; inclusive.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start: Option<String>,
    /// RFC 3339 with an explicit offset; exclusive.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", default)]
pub struct ActivePeriodConfig {
    /// A standard 5-field cron expression or a descriptor such as `@daily`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_cron: Option<String>,
    /// IANA zone the cron is evaluated in; default UTC.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timezone: Option<String>,
    /// How long each window lasts after a fire (`5h`, `90m`); absent: until the next fire.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration: Option<String>,
}

/// The scheduling part of a profile entry; absent keys take the plain `schedulers.shoot` values.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", default)]
pub struct ProfileConfig {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub candidate_determination_strategy: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priorities: Option<Vec<PriorityConfig>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filters: Option<Vec<FilterConfig>>,
}
