//! Sync bookkeeping: which watched kinds have completed their first list. Workers start once
//! every kind has; `/readyz` names the ones still missing.

use crate::controller::cache::WatchedKind;
use crate::controller::shared::Shared;

impl Shared {
    pub(in crate::controller) fn is_synced(&self, kind: WatchedKind) -> bool {
        self.synced
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(&kind)
    }

    pub(in crate::controller) fn mark_synced(&self, kind: WatchedKind) {
        self.synced
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(kind);
        self.synced_notify.notify_waiters();
    }

    /// Kinds whose first list has not completed.
    pub(in crate::controller) fn unsynced(&self) -> Vec<&'static str> {
        let synced = self.synced.lock().unwrap_or_else(|e| e.into_inner());
        WatchedKind::ALL
            .iter()
            .filter(|k| !synced.contains(k))
            .map(WatchedKind::as_str)
            .collect()
    }

    /// Completes once every watched kind has completed its first list.
    pub(in crate::controller) async fn wait_synced(&self) {
        loop {
            let notified = self.synced_notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.unsynced().is_empty() {
                return;
            }
            notified.await;
        }
    }
}
