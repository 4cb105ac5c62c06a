//! The requests on the Lease object: each bounded in time, a conflict told apart from a
//! failure, and which failures are worth sending again and after what pause.

use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;

#[derive(Debug, thiserror::Error)]
pub enum LeaseError {
    #[error("reading lease {lease}: {source}")]
    Read { lease: String, source: kube::Error },
    #[error("creating lease {lease}: {source}")]
    Create { lease: String, source: kube::Error },
    #[error("updating lease {lease}: {source}")]
    Update { lease: String, source: kube::Error },
    #[error("{action} lease {lease}: no answer within {limit:?}")]
    Timeout {
        action: &'static str,
        lease: String,
        limit: Duration,
    },
}

/// A write of the lease.
#[derive(Clone, Copy)]
pub(super) enum Write {
    Create,
    Update,
    /// an update that gives the lease up
    Release,
}

/// Reads the lease within `limit`.
pub(super) async fn read<T>(
    lease: &str,
    limit: Duration,
    request: impl Future<Output = kube::Result<T>>,
) -> Result<T, LeaseError> {
    match tokio::time::timeout(limit, request).await {
        Err(_) => Err(LeaseError::Timeout {
            action: "reading",
            lease: lease.to_string(),
            limit,
        }),
        Ok(result) => result.map_err(|source| LeaseError::Read {
            lease: lease.to_string(),
            source,
        }),
    }
}

/// Sends a create or update of the lease within `limit`: the written lease, or `None` when
/// another process wrote it first (409 Conflict).
pub(super) async fn written(
    write: Write,
    lease: &str,
    limit: Duration,
    request: impl Future<Output = kube::Result<Lease>>,
) -> Result<Option<Lease>, LeaseError> {
    let lease = lease.to_string();
    match tokio::time::timeout(limit, request).await {
        Err(_) => Err(LeaseError::Timeout {
            action: match write {
                Write::Create => "creating",
                Write::Update => "updating",
                Write::Release => "releasing",
            },
            lease,
            limit,
        }),
        Ok(Ok(written)) => Ok(Some(written)),
        Ok(Err(kube::Error::Api(s))) if s.code == 409 => Ok(None),
        Ok(Err(source)) => Err(match write {
            Write::Create => LeaseError::Create { lease, source },
            Write::Update | Write::Release => LeaseError::Update { lease, source },
        }),
    }
}

#[derive(Clone, Debug, PartialEq)]
pub(super) struct LeaseRecord {
    pub(super) holder: String,
    renew_time: Option<String>,
    pub(super) duration: Duration,
}

impl LeaseRecord {
    pub(super) fn of(lease: &Lease) -> Self {
        let spec = lease.spec.clone().unwrap_or_default();
        LeaseRecord {
            holder: spec.holder_identity.unwrap_or_default(),
            renew_time: spec.renew_time.map(|t| t.0.to_string()),
            duration: Duration::from_secs(spec.lease_duration_seconds.unwrap_or(0).max(0) as u64),
        }
    }
}

pub(super) fn now_micro() -> MicroTime {
    MicroTime(k8s_openapi::jiff::Timestamp::now())
}

/// Whether a failed lease request is worth sending again within the same attempt: throttled
/// (429), a server or gateway error (5xx), or no answer at all. The resourceVersion on every
/// write keeps a repeated write from applying twice.
pub(super) fn retryable(e: &LeaseError) -> Option<Duration> {
    let source = match e {
        LeaseError::Timeout { .. } => return Some(Duration::ZERO),
        LeaseError::Read { source, .. }
        | LeaseError::Create { source, .. }
        | LeaseError::Update { source, .. } => source,
    };
    match source {
        kube::Error::Api(s) if s.code == 429 || s.code >= 500 => Some(Duration::from_secs(
            s.details
                .as_ref()
                .map_or(0, |d| u64::from(d.retry_after_seconds)),
        )),
        kube::Error::Api(_) => None,
        _ => Some(Duration::ZERO),
    }
}

/// The pause before a lease request is sent again: the server's Retry-After, but at most a
/// quarter of `retryPeriod` — losing the lease costs the whole landscape its scheduling, an
/// early request costs the server little (and real clusters exempt leader election from API
/// priority and fairness). Without a Retry-After: 50 ms, doubling, up to the same cap.
pub(super) fn lease_retry_pause(asked: Duration, tries: u32, retry_period: Duration) -> Duration {
    let cap = (retry_period / 4).max(Duration::from_millis(50));
    let own = Duration::from_millis(50) * 2u32.pow(tries.min(5));
    asked.max(own).min(cap)
}
