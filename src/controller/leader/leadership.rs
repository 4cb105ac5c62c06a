//! What the rest of the process asks of the election: whether it leads now, and how long a
//! write sent now is covered by the lease. The [`Elector`](crate::controller::leader::Elector) reports renewals to it.

use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

use crate::config::LeaderElection;

/// How long a write sent now may take (the lease fence of the client stack asks).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Budget {
    /// no leader election
    Unlimited,
    /// not the leader (or too close to the lease's end to send anything)
    None,
    Until(Duration),
}

/// Whether this process may bind, and for how long a write sent now is covered by the lease.
/// Cheap to clone and to ask.
#[derive(Clone)]
pub struct Leadership {
    inner: LeadershipInner,
}

#[derive(Clone)]
enum LeadershipInner {
    /// `leaderElect: false`
    Always,
    /// `Some(t)`: the last successful renewal started at `t`
    Elected {
        renewed: watch::Receiver<Option<Instant>>,
        renew_deadline: Duration,
        lease_duration: Duration,
    },
}

impl Leadership {
    pub fn always() -> Self {
        Leadership {
            inner: LeadershipInner::Always,
        }
    }

    /// A leadership the returned sender reports renewals to (`Some(start of the renewal)`,
    /// `None` when given up).
    pub fn elected(cfg: &LeaderElection) -> (watch::Sender<Option<Instant>>, Leadership) {
        let (tx, rx) = watch::channel(None);
        let leadership = Leadership {
            inner: LeadershipInner::Elected {
                renewed: rx,
                renew_deadline: cfg.renew_deadline,
                lease_duration: cfg.lease_duration,
            },
        };
        (tx, leadership)
    }

    /// Leader now? Turns false by itself once `renewDeadline` passes without a renewal, even
    /// if the renewing task is stuck.
    pub fn is_leader(&self) -> bool {
        match &self.inner {
            LeadershipInner::Always => true,
            LeadershipInner::Elected {
                renewed,
                renew_deadline,
                ..
            } => renewed
                .borrow()
                .is_some_and(|t| Instant::now() < t + *renew_deadline),
        }
    }

    /// How long a write sent now is covered by the lease: while leader, until `leaseDuration`
    /// after the last renewal started, less `margin` (see `stack::fence`).
    pub fn write_budget(&self, margin: Duration) -> Budget {
        match &self.inner {
            LeadershipInner::Always => Budget::Unlimited,
            LeadershipInner::Elected {
                renewed,
                renew_deadline,
                lease_duration,
            } => {
                let Some(t) = *renewed.borrow() else {
                    return Budget::None;
                };
                let now = Instant::now();
                if now >= t + *renew_deadline {
                    return Budget::None;
                }
                match (t + *lease_duration).checked_duration_since(now + margin) {
                    Some(left) if !left.is_zero() => Budget::Until(left),
                    _ => Budget::None,
                }
            }
        }
    }

    /// Waits until this process is the leader.
    pub async fn wait_until_leader(&mut self) {
        let LeadershipInner::Elected {
            renewed,
            renew_deadline,
            ..
        } = &mut self.inner
        else {
            return;
        };
        loop {
            if renewed
                .borrow_and_update()
                .is_some_and(|t| Instant::now() < t + *renew_deadline)
            {
                return;
            }
            if renewed.changed().await.is_err() {
                // the elector stopped: never leader again
                std::future::pending::<()>().await;
            }
        }
    }
}
