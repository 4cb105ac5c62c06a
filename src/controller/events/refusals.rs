//! Binds refused for a reason that is the same for every shoot (a missing permission, no
//! `binding` subresource): said once, loudly, instead of once per request.
//!
//! The first refusal of a kind is logged at WARN: an API server that has just started refuses
//! requests for a moment, before its authorizer is ready, so a single 403 is no missing
//! permission. Once the refusal persists ([`PERSISTS_AFTER`] after the first, with no bind
//! succeeding between) it is logged at ERROR with the fix; repeats are logged at debug level,
//! with an ERROR reminder (counting the refusals since) at most every [`REMINDER_EVERY`].
//! `gardener_scheduler_binds_forbidden` is 1 from the ERROR line until a bind succeeds again.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use crate::controller::client::bind::BindError;
use crate::controller::metrics::Metrics;
use tokio::time::Instant;
use tracing::{debug, error, info, warn};

/// How often a refusal that keeps happening is repeated at ERROR level.
pub const REMINDER_EVERY: Duration = Duration::from_secs(600);
/// A refusal seen again this long after the first, with no successful bind between, persists.
pub const PERSISTS_AFTER: Duration = Duration::from_secs(5);

struct Ongoing {
    first: Instant,
    /// said at ERROR: it persists
    persists: bool,
    last_logged: Instant,
    /// refusals since the last ERROR line
    since_logged: u64,
}

/// How a refusal was logged.
#[derive(Debug, PartialEq, Eq)]
pub enum Said {
    /// the first of its kind: WARN, not yet taken for a fault of the configuration
    Tentatively,
    /// the same again, [`PERSISTS_AFTER`] after the first: ERROR
    Loudly,
    /// the same again, [`REMINDER_EVERY`] after the last ERROR: ERROR with the count
    Reminder,
    /// debug level
    Quietly,
    /// not a refusal this tracker reports
    NotTracked,
}

/// Refusals of binds that point at the scheduler's configuration or RBAC.
#[derive(Default)]
pub struct Refusals {
    ongoing: Mutex<BTreeMap<String, Ongoing>>,
}

/// What is wrong, the same for every shoot; `None` for failures of one shoot or one request.
fn kind(e: &BindError) -> Option<String> {
    match e {
        BindError::Forbidden { permission, .. } => Some(format!("forbidden: {permission}")),
        BindError::NoBindingSubresource => Some("no binding subresource".into()),
        _ => None,
    }
}

impl Refusals {
    /// Whether `e` is a refusal this tracker reports (else the caller logs it).
    pub fn tracks(e: &BindError) -> bool {
        kind(e).is_some()
    }

    /// Records a refused bind and logs it: at WARN the first time, at ERROR once it persists
    /// and then at most every [`REMINDER_EVERY`], else at debug level.
    pub fn refused(&self, e: &BindError, retry_in: Duration, metrics: &Metrics) -> Said {
        let Some(kind) = kind(e) else {
            return Said::NotTracked;
        };
        let now = Instant::now();
        let mut ongoing = self.ongoing.lock().unwrap_or_else(|p| p.into_inner());
        match ongoing.get_mut(&kind) {
            None => {
                ongoing.insert(
                    kind,
                    Ongoing {
                        first: now,
                        persists: false,
                        last_logged: now,
                        since_logged: 0,
                    },
                );
                warn!(error = %e, ?retry_in, "bind refused; an API server that has just started refuses for a moment, so this is said at ERROR only if it persists");
                Said::Tentatively
            }
            Some(o) if !o.persists && now.duration_since(o.first) >= PERSISTS_AFTER => {
                o.persists = true;
                o.last_logged = now;
                o.since_logged = 0;
                if matches!(e, BindError::Forbidden { .. }) {
                    metrics.binds_forbidden.set(1);
                }
                error!(error = %e, ?retry_in, "bind failed; every bind will fail the same way until this is fixed (repeats are logged at debug level, with a reminder every 10 minutes)");
                Said::Loudly
            }
            Some(o) if o.persists && now.duration_since(o.last_logged) >= REMINDER_EVERY => {
                let refused = o.since_logged + 1;
                o.last_logged = now;
                o.since_logged = 0;
                error!(error = %e, refused, "binds still failing the same way");
                Said::Reminder
            }
            Some(o) => {
                o.since_logged += 1;
                debug!(error = %e, ?retry_in, "bind failed");
                Said::Quietly
            }
        }
    }

    /// A bind succeeded: whatever was refused is evidently fixed.
    pub fn bound(&self, metrics: &Metrics) {
        let mut ongoing = self.ongoing.lock().unwrap_or_else(|p| p.into_inner());
        if ongoing.is_empty() {
            return;
        }
        let fixed: Vec<String> = std::mem::take(&mut *ongoing)
            .into_iter()
            .filter(|(_, o)| o.persists)
            .map(|(k, _)| k)
            .collect();
        drop(ongoing);
        metrics.binds_forbidden.set(0);
        if !fixed.is_empty() {
            info!(fixed = %fixed.join("; "), "binds succeed again");
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::controller::client::permissions::{PATCH_SHOOT, Permission, UPDATE_SHOOT_BINDING};
    use crate::controller::events::refusals::*;

    fn forbidden(permission: Permission) -> BindError {
        BindError::Forbidden {
            action: "updating shoots/binding",
            permission,
            message: "denied".into(),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_refusal_is_said_once_it_persists_then_reminded_and_cleared_by_a_successful_bind() {
        let (r, m) = (Refusals::default(), Metrics::new());
        let d = Duration::from_secs(15);
        let e = forbidden(UPDATE_SHOOT_BINDING);
        assert_eq!(r.refused(&e, d, &m), Said::Tentatively);
        assert_eq!(m.binds_forbidden.get(), 0, "not yet a missing permission");
        for _ in 0..5 {
            assert_eq!(r.refused(&e, d, &m), Said::Quietly);
        }
        tokio::time::advance(PERSISTS_AFTER).await;
        assert_eq!(r.refused(&e, d, &m), Said::Loudly);
        assert_eq!(m.binds_forbidden.get(), 1);
        for _ in 0..50 {
            assert_eq!(r.refused(&e, d, &m), Said::Quietly);
        }
        assert_eq!(
            r.refused(&forbidden(PATCH_SHOOT), d, &m),
            Said::Tentatively,
            "another permission is news"
        );
        assert_eq!(
            r.refused(&BindError::NoBindingSubresource, d, &m),
            Said::Tentatively
        );
        tokio::time::advance(REMINDER_EVERY).await;
        assert_eq!(r.refused(&e, d, &m), Said::Reminder);
        assert_eq!(r.refused(&e, d, &m), Said::Quietly);
        r.bound(&m);
        assert_eq!(m.binds_forbidden.get(), 0);
        assert_eq!(r.refused(&e, d, &m), Said::Tentatively, "broken again");
        let e500 = BindError::Unknown {
            action: "x",
            code: Some(500),
            message: "y".into(),
        };
        assert_eq!(r.refused(&e500, d, &m), Said::NotTracked);
    }

    /// An API server that has just started answers 403 for about a second: one refusal, then
    /// a bind that succeeds, is never said at ERROR.
    #[tokio::test(start_paused = true)]
    async fn a_single_403_followed_by_a_bind_is_no_missing_permission() {
        let (r, m) = (Refusals::default(), Metrics::new());
        let e = forbidden(UPDATE_SHOOT_BINDING);
        assert_eq!(r.refused(&e, Duration::from_secs(1), &m), Said::Tentatively);
        tokio::time::advance(Duration::from_secs(1)).await;
        r.bound(&m);
        tokio::time::advance(PERSISTS_AFTER).await;
        assert_eq!(r.refused(&e, Duration::from_secs(1), &m), Said::Tentatively);
        assert_eq!(m.binds_forbidden.get(), 0);
    }
}
