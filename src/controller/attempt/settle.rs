//! Settling a bind whose outcome is unknown (no answer, or a 5xx from a gateway): the read
//! after it, sent again when it fails to connect, and, when no read can tell, what the watch or
//! the next attempt's read shows, counted and reported then.

use crate::api::Shoot;
use crate::controller::client::bind;
use crate::controller::client::bind::BindError;
use crate::controller::client::stack::REQUEST_TIMEOUT;
use crate::controller::metrics::AttemptResult;
use crate::controller::shared::Shared;
use tracing::{debug, info};

/// Tries of the read that settles a bind with an unknown outcome, when a try fails at once
/// without an answer (a gateway that answered 502 may close the connection as well).
pub(in crate::controller) const SETTLE_TRIES: u32 = 3;
/// A try that failed without an answer within this time failed to connect; a longer one used
/// up its deadline and is not repeated.
const CONNECTION_ERROR_WITHIN: std::time::Duration = std::time::Duration::from_secs(2);

/// Reads the shoot after a bind whose outcome is unknown, again on a connection error.
pub(super) async fn read_to_settle(
    shared: &Shared,
    ns: &str,
    name: &str,
) -> Result<Option<(Shoot, serde_json::Value)>, BindError> {
    let mut n = 1;
    loop {
        let started = tokio::time::Instant::now();
        match bind::read_shoot(&shared.client, ns, name, REQUEST_TIMEOUT).await {
            Err(e @ (BindError::Unknown { code: None, .. } | BindError::ReadFailed { .. }))
                if n < SETTLE_TRIES && started.elapsed() < CONNECTION_ERROR_WITHIN =>
            {
                debug!(error = %e, "reading the shoot after an unanswered bind failed to connect; again");
                tokio::time::sleep(std::time::Duration::from_millis(200) * 2u32.pow(n - 1)).await;
                n += 1;
            }
            other => return other,
        }
    }
}

/// What the watch or a read shows of `key`: `seen` is `None` when the shoot is gone, else its
/// `spec.seedName`. Bound to the seed of an unsettled bind: the bind was applied, and is
/// counted and reported as scheduled now. Bound elsewhere or gone: forgotten. Pending: the
/// bind was not applied if a read shows it (`read`); a watch event may be older than the bind.
pub(in crate::controller) fn settled_by_seen(
    shared: &Shared,
    key: &str,
    seen: Option<Option<&str>>,
    read: bool,
) {
    let mut unsettled = shared.unsettled.lock().unwrap_or_else(|p| p.into_inner());
    let Some(u) = unsettled.get(key) else {
        return;
    };
    match seen {
        Some(Some(seed)) if seed == u.seed => {
            let Some(u) = unsettled.remove(key) else {
                return;
            };
            drop(unsettled);
            shared.refusals.bound(&shared.metrics);
            shared.metrics.bound(&u.shoot);
            shared.metrics.observe(
                AttemptResult::scheduled,
                &u.profile,
                u.since.elapsed().as_secs_f64(),
            );
            info!(shoot = %key, seed = %u.seed, "scheduled (the bind's answer was lost; the shoot shows it applied)");
            shared.reporter.scheduled_with_note(&u.shoot, u.note);
        }
        Some(None) if !read => {}
        _ => {
            unsettled.remove(key);
        }
    }
}
