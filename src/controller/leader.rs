//! Leader election on a `coordination.k8s.io/v1` Lease, with client-go's semantics: the holder
//! renews every `retryPeriod`; it stops binding once `renewDeadline` has passed since its last
//! successful renewal; others take over when the lease record has not changed for
//! `leaseDuration` as measured on their own clock (so clock skew between hosts does not matter).
//!
//! Every write is an update carrying the resourceVersion that was read, so two candidates can
//! never both acquire. (Strategic-merge or apply patches are avoided: Leases are custom
//! resources on development clusters, which do not accept strategic merge patches.)
//!
//! `leadership` holds what the rest of the process asks (leader now? for how long?), `lease` the
//! requests on the Lease object; the [`Elector`] here campaigns and renews.

mod leadership;
mod lease;

use std::time::Duration;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use kube::Client;
use kube::api::{Api, PostParams};
use tokio::sync::watch;
use tokio::time::Instant;
use tracing::{debug, info, warn};

use crate::config::LeaderElection;

pub use leadership::{Budget, Leadership};
pub use lease::LeaseError;
use lease::{LeaseRecord, Write, lease_retry_pause, now_micro, read, retryable, written};

/// Runs the election loop for one identity.
pub struct Elector {
    api: Api<Lease>,
    name: String,
    identity: String,
    lease_duration: Duration,
    renew_deadline: Duration,
    retry_period: Duration,
    tx: watch::Sender<Option<Instant>>,
    /// the last lease record seen and when (on our clock) it last changed
    observed: Option<(LeaseRecord, Instant)>,
}

impl Elector {
    pub fn new(client: Client, cfg: &LeaderElection, identity: String) -> (Elector, Leadership) {
        let (tx, leadership) = Leadership::elected(cfg);
        (Elector::reporting_to(client, cfg, identity, tx), leadership)
    }

    /// An elector reporting to a [`Leadership::elected`] sender.
    pub fn reporting_to(
        client: Client,
        cfg: &LeaderElection,
        identity: String,
        tx: watch::Sender<Option<Instant>>,
    ) -> Elector {
        Elector {
            api: Api::namespaced(client, &cfg.resource_namespace),
            name: cfg.resource_name.clone(),
            identity,
            lease_duration: cfg.lease_duration,
            renew_deadline: cfg.renew_deadline,
            retry_period: cfg.retry_period,
            tx,
            observed: None,
        }
    }

    pub fn identity(&self) -> &str {
        &self.identity
    }

    fn lease_label(&self) -> String {
        format!(
            "{}/{}",
            self.api.resource_url().trim_end_matches('/'),
            self.name
        )
    }

    /// Tries to acquire or renew until it succeeds, another process holds the lease, or
    /// `deadline` passes. Each request that is throttled, fails with a 5xx or gets no answer is
    /// sent again within the deadline; a write that conflicts (409: another process wrote, or
    /// an earlier unanswered write of ours applied) reads the lease again. `Ok(true)` when this
    /// process holds the lease.
    async fn try_until(&mut self, deadline: Instant) -> Result<bool, LeaseError> {
        loop {
            let (name, api) = (self.name.clone(), self.api.clone());
            let got = self
                .retrying(deadline, |limit| {
                    let (name, api) = (name.clone(), api.clone());
                    async move { read(&name, limit, api.get_opt(&name)).await }
                })
                .await?;
            let Some((write, lease)) = self.next_write(got) else {
                return Ok(false);
            };
            let written = self
                .retrying(deadline, |limit| {
                    let (name, api, lease) = (name.clone(), api.clone(), lease.clone());
                    async move {
                        let params = PostParams::default();
                        match write {
                            Write::Create => {
                                let request = api.create(&params, &lease);
                                written(Write::Create, &name, limit, request).await
                            }
                            _ => {
                                let request = api.replace(&name, &params, &lease);
                                written(Write::Update, &name, limit, request).await
                            }
                        }
                    }
                })
                .await?;
            if let Some(held) = self.observe_written(written) {
                return Ok(held);
            }
        }
    }

    /// Sends `request` (given the time left) until it succeeds, fails for good, or `deadline`
    /// would pass before the next try.
    async fn retrying<T, F, Fut>(&self, deadline: Instant, request: F) -> Result<T, LeaseError>
    where
        F: Fn(Duration) -> Fut,
        Fut: Future<Output = Result<T, LeaseError>>,
    {
        let mut tries = 0u32;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left < Duration::from_millis(50) {
                return Err(LeaseError::Timeout {
                    action: "renewing",
                    lease: self.name.clone(),
                    limit: Duration::ZERO,
                });
            }
            match request(left).await {
                Ok(v) => return Ok(v),
                Err(e) => {
                    let Some(asked) = retryable(&e) else {
                        return Err(e);
                    };
                    let pause = lease_retry_pause(asked, tries, self.retry_period);
                    if Instant::now() + pause >= deadline {
                        return Err(e);
                    }
                    debug!(error = %e, ?pause, "lease request failed; trying again");
                    tokio::time::sleep(pause).await;
                    tries += 1;
                }
            }
        }
    }

    /// What to write after reading `got`: a new lease, or the current one renewed or taken
    /// over; `None` when another process holds it.
    fn next_write(&mut self, got: Option<Lease>) -> Option<(Write, Lease)> {
        let seconds = self.lease_duration.as_secs_f64().ceil() as i32;
        let Some(mut current) = got else {
            let new = Lease {
                metadata: kube::api::ObjectMeta {
                    name: Some(self.name.clone()),
                    ..Default::default()
                },
                spec: Some(LeaseSpec {
                    holder_identity: Some(self.identity.clone()),
                    lease_duration_seconds: Some(seconds),
                    acquire_time: Some(now_micro()),
                    renew_time: Some(now_micro()),
                    lease_transitions: Some(0),
                    ..Default::default()
                }),
            };
            return Some((Write::Create, new));
        };
        let record = LeaseRecord::of(&current);
        let now = Instant::now();
        let changed_at = match &self.observed {
            Some((old, at)) if *old == record => *at,
            _ => now,
        };
        self.observed = Some((record.clone(), changed_at));
        let mine = record.holder == self.identity;
        let free = record.holder.is_empty() || now.duration_since(changed_at) >= record.duration;
        if !mine && !free {
            return None;
        }
        let spec = current.spec.get_or_insert_with(Default::default);
        if !mine {
            spec.acquire_time = Some(now_micro());
            spec.lease_transitions = Some(spec.lease_transitions.unwrap_or(0) + 1);
        }
        spec.holder_identity = Some(self.identity.clone());
        spec.lease_duration_seconds = Some(seconds);
        spec.renew_time = Some(now_micro());
        current.metadata.managed_fields = None;
        Some((Write::Update, current))
    }

    /// Records a lease this process wrote; `None` when another process wrote first.
    fn observe_written(&mut self, written: Option<Lease>) -> Option<bool> {
        let lease = written?;
        self.observed = Some((LeaseRecord::of(&lease), Instant::now()));
        Some(true)
    }

    /// Campaigns and renews until `stop` fires; then releases the lease if held. While
    /// `unfit` names a reason (a watch feed gone silent), this process neither campaigns nor
    /// keeps the lease: it gives it up so that a replica that can see the landscape leads.
    pub async fn run(
        mut self,
        mut stop: watch::Receiver<bool>,
        unfit: impl Fn() -> Option<String> + Send,
        on_change: impl Fn(bool) + Send,
    ) {
        let mut leading = false;
        let mut last_renew: Option<Instant> = None;
        loop {
            if *stop.borrow() {
                break;
            }
            let attempt_start = Instant::now();
            if let Some(why) = unfit() {
                if leading {
                    leading = false;
                    last_renew = None;
                    let _ = self.tx.send(None);
                    warn!(lease = %self.lease_label(), reason = %why, "giving up leadership so that another replica can lead");
                    on_change(false);
                    if let Err(e) = self.release().await {
                        warn!(error = %e, "releasing the lease failed; others take over when it expires");
                    }
                } else {
                    debug!(reason = %why, "not campaigning");
                }
            } else {
                // A renewal may take until renewDeadline after the last one started (as in
                // client-go); a campaign, one attempt of a couple of retry periods.
                let deadline = match (leading, last_renew) {
                    (true, Some(t)) => t + self.renew_deadline,
                    _ => attempt_start + (self.retry_period * 2).min(self.renew_deadline),
                };
                match self.try_until(deadline).await {
                    Ok(true) => {
                        last_renew = Some(attempt_start);
                        let _ = self.tx.send(Some(attempt_start));
                        if !leading {
                            leading = true;
                            info!(lease = %self.lease_label(), identity = %self.identity, "acquired leadership");
                            on_change(true);
                        }
                    }
                    Ok(false) => {}
                    Err(e) => warn!(error = %e, "leader election attempt failed"),
                }
            }
            if leading {
                let held = last_renew.is_some_and(|t| Instant::now() < t + self.renew_deadline)
                    && self
                        .observed
                        .as_ref()
                        .is_some_and(|(r, _)| r.holder == self.identity);
                if !held {
                    leading = false;
                    let _ = self.tx.send(None);
                    warn!(lease = %self.lease_label(), "lost leadership; binding stops until it is regained");
                    on_change(false);
                }
            }
            let jitter = if leading {
                Duration::ZERO
            } else {
                // spread candidates' attempts (up to 20% of the period)
                let nanos = (std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap_or_default()
                    .subsec_nanos() as u64)
                    % (self.retry_period.as_nanos() as u64 / 5 + 1);
                Duration::from_nanos(nanos)
            };
            // the next try starts a retry period after this one started
            let next = attempt_start + self.retry_period + jitter;
            tokio::select! {
                _ = tokio::time::sleep_until(next) => {}
                _ = stop.changed() => {}
            }
        }
        if leading {
            let _ = self.tx.send(None);
            on_change(false);
            match self.release().await {
                Ok(()) => info!(lease = %self.lease_label(), "released leadership"),
                Err(e) => {
                    warn!(error = %e, "releasing the lease failed; others take over when it expires")
                }
            }
        }
    }

    /// Gives the lease up so that another candidate can take over at once.
    async fn release(&mut self) -> Result<(), LeaseError> {
        let limit = self.renew_deadline;
        let mut current = read(&self.name, limit, self.api.get(&self.name)).await?;
        if current
            .spec
            .as_ref()
            .and_then(|s| s.holder_identity.as_deref())
            != Some(&self.identity)
        {
            return Ok(());
        }
        let spec = current.spec.get_or_insert_with(Default::default);
        spec.holder_identity = None;
        spec.lease_duration_seconds = Some(1);
        spec.renew_time = Some(now_micro());
        current.metadata.managed_fields = None;
        // A conflict means another process wrote the lease meanwhile: nothing left to give up.
        written(
            Write::Release,
            &self.name,
            limit,
            self.api
                .replace(&self.name, &PostParams::default(), &current),
        )
        .await?;
        Ok(())
    }
}

/// `hostname_<random>`, as client-go builds lease identities.
pub fn default_identity() -> String {
    let host = std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| {
            std::fs::read_to_string("/etc/hostname")
                .ok()
                .map(|h| h.trim().to_string())
        })
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "gardener-scheduler".into());
    let seed = format!(
        "{}-{:?}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
    );
    format!(
        "{host}_{:016x}",
        xxhash_rust::xxh3::xxh3_64(seed.as_bytes())
    )
}
