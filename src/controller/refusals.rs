//! Binds refused for a reason that is the same for every shoot (a missing permission, no
//! `binding` subresource): said once, loudly, instead of once per request.
//!
//! The first refusal of a kind is logged at ERROR with the fix; repeats are logged at debug
//! level, with an ERROR reminder (counting the refusals since) at most every
//! [`REMINDER_EVERY`]. `gardener_scheduler_binds_forbidden` is 1 from the first 403 until a bind
//! succeeds again.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;
use tracing::{debug, error, info};

use super::bind::BindError;
use super::metrics::Metrics;

/// How often a refusal that keeps happening is repeated at ERROR level.
pub const REMINDER_EVERY: Duration = Duration::from_secs(600);

struct Ongoing {
    last_logged: Instant,
    /// refusals since the last ERROR line
    since_logged: u64,
}

/// How a refusal was logged.
#[derive(Debug, PartialEq, Eq)]
pub enum Said {
    /// the first of its kind: ERROR
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

    /// Records a refused bind and logs it: at ERROR the first time and then at most every
    /// [`REMINDER_EVERY`], else at debug level.
    pub fn refused(&self, e: &BindError, retry_in: Duration, metrics: &Metrics) -> Said {
        let Some(kind) = kind(e) else {
            return Said::NotTracked;
        };
        if matches!(e, BindError::Forbidden { .. }) {
            metrics.binds_forbidden.set(1);
        }
        let now = Instant::now();
        let mut ongoing = self.ongoing.lock().unwrap_or_else(|p| p.into_inner());
        match ongoing.get_mut(&kind) {
            None => {
                ongoing.insert(
                    kind,
                    Ongoing {
                        last_logged: now,
                        since_logged: 0,
                    },
                );
                error!(error = %e, ?retry_in, "bind failed; every bind will fail the same way until this is fixed (repeats are logged at debug level, with a reminder every 10 minutes)");
                Said::Loudly
            }
            Some(o) if now.duration_since(o.last_logged) >= REMINDER_EVERY => {
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
        let fixed: Vec<String> = std::mem::take(&mut *ongoing).into_keys().collect();
        drop(ongoing);
        metrics.binds_forbidden.set(0);
        info!(fixed = %fixed.join("; "), "binds succeed again");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn forbidden(permission: &'static str) -> BindError {
        BindError::Forbidden {
            action: "updating shoots/binding",
            permission,
            message: "denied".into(),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_refusal_is_said_once_then_reminded_and_cleared_by_a_successful_bind() {
        let (r, m) = (Refusals::default(), Metrics::new());
        let d = Duration::from_secs(15);
        let e = forbidden("update shoots/binding");
        assert_eq!(r.refused(&e, d, &m), Said::Loudly);
        assert_eq!(m.binds_forbidden.get(), 1);
        for _ in 0..50 {
            assert_eq!(r.refused(&e, d, &m), Said::Quietly);
        }
        assert_eq!(
            r.refused(&forbidden("patch shoots"), d, &m),
            Said::Loudly,
            "another permission is news"
        );
        assert_eq!(
            r.refused(&BindError::NoBindingSubresource, d, &m),
            Said::Loudly
        );
        tokio::time::advance(REMINDER_EVERY).await;
        assert_eq!(r.refused(&e, d, &m), Said::Reminder);
        assert_eq!(r.refused(&e, d, &m), Said::Quietly);
        r.bound(&m);
        assert_eq!(m.binds_forbidden.get(), 0);
        assert_eq!(r.refused(&e, d, &m), Said::Loudly, "broken again");
        let e500 = BindError::Unknown {
            action: "x",
            code: Some(500),
            message: "y".into(),
        };
        assert_eq!(r.refused(&e500, d, &m), Said::NotTracked);
    }
}
