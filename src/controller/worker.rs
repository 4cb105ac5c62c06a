//! The worker loop: take a key (while leading), make one attempt, apply the one requeue decision
//! the attempt returned, count it, mark the key done.

use std::sync::Arc;

use crate::controller::attempt::{self, Attempt, Outcome};
use crate::controller::shared::Shared;
use tokio::time::Instant;
use tracing::{Instrument, info_span};

pub(super) async fn worker(shared: Arc<Shared>, id: usize) {
    let mut leadership = shared.leadership.clone();
    loop {
        leadership.wait_until_leader().await;
        let Some(key) = shared.queue.next().await else {
            break;
        };
        let busy = shared.metrics.runtime.reconcile.busy();
        let start = Instant::now();
        let attempt = schedule_one(&shared, &key)
            .instrument(info_span!(
                "schedule",
                shoot = %key,
                worker = id,
                profile = tracing::field::Empty
            ))
            .await;
        shared
            .metrics
            .runtime
            .reconcile
            .reconciled(attempt.reconcile_result(), start.elapsed());
        drop(busy);
        shared.queue.done(&key);
    }
}

/// One scheduling attempt for one shoot, its key requeued as the attempt decided (the only
/// place the processed key goes back to the queue) and the attempt counted (the only place
/// attempts are counted: `attempts_total` and `attempt_duration_seconds`, under the profile
/// that decided).
pub async fn schedule_one(shared: &Arc<Shared>, key: &str) -> Attempt {
    let start = Instant::now();
    let Outcome {
        attempt,
        requeue,
        announce,
        profile,
    } = attempt::run(shared, key).await;
    if let (Some(result), Some(profile)) = (attempt.metric(), profile) {
        shared
            .metrics
            .observe(result, &profile, start.elapsed().as_secs_f64());
    }
    let retry_in = requeue.apply(&shared.queue, key, shared.retry_sync_period);
    if let Some(announce) = announce {
        announce.log(shared, retry_in);
    }
    attempt
}
