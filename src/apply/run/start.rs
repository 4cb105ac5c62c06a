//! Starting a move: read the shoot, check its window and the move again, bind; a conflict
//! means read and check again, never overwrite.

use chrono::{DateTime, Utc};

use super::{Apply, MAX_CONFLICTS, Step, Summary, context};
use crate::apply::check::recheck;
use crate::apply::cluster::{self, WriteError};
use crate::apply::pace::{self, Observed, Pick, State};
use crate::plan::windows::window_of;
use crate::simulate::Landscape;
use crate::snapshot::Snapshot;

/// What became of one attempt to start a move.
enum Started {
    /// Bound (or, dry, accepted).
    Bound,
    /// Stays waiting: its window closed meanwhile.
    NotNow,
    /// Final or in flight already: the state to record.
    State(State),
}

impl Apply<'_, '_> {
    /// Starts the moves `picked` (in order) on a fresh read of the landscape. Returns whether
    /// any move reached a state that frees its place (so the caller looks again at once). When
    /// the landscape cannot be read, nothing starts this time; the migrations in flight are
    /// still followed.
    pub(super) async fn start(&mut self, picked: &[usize], now: DateTime<Utc>) -> bool {
        let landscape = match self.read_landscape().await {
            Ok(l) => l,
            Err(e) => {
                tracing::warn!(error = %e, "reading the landscape to start moves; trying again");
                return false;
            }
        };
        self.refresh_windows(&landscape, now);
        let env = self.env;
        let Some(cx) = context(env, self.live_migration, &landscape, now) else {
            return false;
        };
        let mut snap = cx.snapshot();
        let mut freed = false;
        for &i in picked {
            if self.states[i] != State::Waiting || self.stopping.is_some() {
                continue;
            }
            let outcome = self.try_start(i, &cx, &mut snap, now).await;
            match outcome {
                Started::Bound => {
                    self.settle(i, now, State::InFlight { since: now }).await;
                }
                Started::NotNow => {}
                Started::State(s) => {
                    freed |= !matches!(s, State::InFlight { .. });
                    self.settle(i, now, s).await;
                }
            }
        }
        freed
    }

    /// Reads the shoot, checks and binds it, up to [`MAX_CONFLICTS`] times.
    async fn try_start(
        &mut self,
        i: usize,
        cx: &crate::plan::Context<'_>,
        snap: &mut Snapshot,
        now: DateTime<Utc>,
    ) -> Started {
        let m = &self.moves[i];
        let timeout = self.settings.request_timeout;
        for attempt in 1..=MAX_CONFLICTS {
            let (shoot, raw) =
                match cluster::read(self.env.client, &m.namespace, &m.name, timeout).await {
                    Ok(Some(s)) => s,
                    Ok(None) => return Started::State(pace::initial(&Observed::Gone, m, now)),
                    Err(e) => {
                        tracing::warn!(shoot = %m.shoot, error = %e, "reading the shoot to start");
                        return Started::NotNow;
                    }
                };
            self.shoots[i] = Some(shoot.clone());
            let observed = pace::observe(Some(&shoot), m);
            if observed != Observed::OnSource {
                return Started::State(pace::initial(&observed, m, now));
            }
            let doc = serde_yaml_ng::to_value(&raw).ok();
            match window_of(&m.shoot, doc.as_ref()) {
                Err(e) => {
                    return Started::State(State::Skipped {
                        reason: e.to_string(),
                    });
                }
                Ok(w) => {
                    let open = self.settings.dry_run
                        || pace::window_gate(&w, now, self.settings.limits.move_duration).is_ok();
                    self.windows[i] = Some(w);
                    if !open {
                        return Started::NotNow;
                    }
                }
            }
            if let Err(reason) = recheck(cx, &shoot, m, snap) {
                return Started::State(State::Skipped { reason });
            }
            let written =
                cluster::bind(self.env.client, m, &raw, self.settings.dry_run, timeout).await;
            match written {
                Ok(()) => return Started::Bound,
                Err(e) => {
                    // not bound (or not known to be): the shoot counts where it was
                    snap.upsert_shoot(&shoot);
                    match e {
                        WriteError::Conflict => {
                            self.sink.step(
                                now,
                                &Step::Conflict {
                                    shoot: m.shoot.clone(),
                                    attempt,
                                },
                            );
                        }
                        // the next read tells whether it was written
                        WriteError::Unknown { .. } | WriteError::Unreachable { .. } => {
                            tracing::warn!(shoot = %m.shoot, error = %e, "binding");
                        }
                        WriteError::Forbidden { .. } => {
                            self.stop(now, e.to_string());
                            return Started::State(State::Skipped {
                                reason: e.to_string(),
                            });
                        }
                        other => {
                            return Started::State(State::Skipped {
                                reason: format!("the API server refused the binding: {other}"),
                            });
                        }
                    }
                }
            }
        }
        Started::State(State::Skipped {
            reason: format!(
                "the shoot changed {MAX_CONFLICTS} times while it was being bound; not forced"
            ),
        })
    }

    /// `--dry-run`: every waiting move checked in order on the landscape as it is, each
    /// counted for the next, its binding sent with `dryRun=All`; nothing waits for a window.
    pub(super) async fn dry_run(&mut self, landscape: &Landscape) -> usize {
        let env = self.env;
        let now = (env.clock)();
        let Some(cx) = context(env, self.live_migration, landscape, now) else {
            if let crate::chain::Selection::Deferred { reason, .. } = env.chain.select(now) {
                self.sink.step(now, &Step::Frozen { reason });
            }
            return 0;
        };
        let mut snap = cx.snapshot();
        let mut order: Vec<usize> = (0..self.moves.len())
            .filter(|&i| self.states[i] == State::Waiting)
            .collect();
        order.sort_by_key(|&i| {
            (
                self.moves[i].start.clone().ok(),
                self.moves[i].shoot.clone(),
            )
        });
        let mut would = 0;
        for i in order {
            match self.try_start(i, &cx, &mut snap, now).await {
                Started::Bound => {
                    would += 1;
                    let m = &self.moves[i];
                    let step = Step::WouldStart {
                        shoot: m.shoot.clone(),
                        from: m.from.clone(),
                        to: m.to.clone(),
                        live: m.live(),
                        start: m.start.clone().unwrap_or(now),
                    };
                    self.sink.step(now, &step);
                }
                Started::NotNow => {}
                Started::State(s) => self.settle(i, now, s).await,
            }
        }
        would
    }

    pub(super) fn summary(&self, pick: &Pick, would_start: usize) -> Summary {
        Summary {
            counts: pace::counts(&self.states, pick),
            states: self
                .moves
                .iter()
                .zip(&self.states)
                .map(|(m, s)| (m.shoot.clone(), s.clone()))
                .collect(),
            would_start,
            stopped: self.stopping.clone().filter(|_| !self.on_request),
        }
    }
}
