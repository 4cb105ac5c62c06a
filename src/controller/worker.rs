//! The worker loop: take a key (while leading), process it, apply the one requeue decision the
//! attempt returned, mark the key done.

use std::sync::Arc;

use tokio::time::Instant;
use tracing::{Instrument, info_span};

use super::Shared;
use super::process::{Attempt, Outcome, attempt};

pub(super) async fn worker(shared: Arc<Shared>, id: usize) {
    let mut leadership = shared.leadership.clone();
    loop {
        leadership.wait_until_leader().await;
        let Some(key) = shared.queue.next().await else {
            break;
        };
        let busy = shared.metrics.runtime.reconcile.busy();
        let start = Instant::now();
        let attempt = process(&shared, &key)
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

/// One scheduling attempt for one shoot, its key requeued as the attempt decided: the only
/// place the processed key goes back to the queue.
pub async fn process(shared: &Arc<Shared>, key: &str) -> Attempt {
    let Outcome {
        attempt,
        requeue,
        announce,
    } = attempt(shared, key).await;
    let retry_in = requeue.apply(&shared.queue, key, shared.retry_sync_period);
    if let Some(announce) = announce {
        announce.log(shared, retry_in);
    }
    attempt
}
