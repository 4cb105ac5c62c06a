//! The I/O loop of `plan apply`: read, ask [`super::pace`] what may start, check each move again
//! ([`super::check`]), bind ([`super::cluster`]), follow the migrations, repeat. Every step goes
//! to a [`Sink`] (a terminal's progress line, or JSON lines).

use std::time::Duration;

use chrono::{DateTime, Utc};
use kube::Client;
use serde::Serialize;

use super::cluster::{self, LeaseRef, WriteError};
use super::pace::{self, Counts, Limits, Pick, State};
use super::saved::{Planned, SavedPlan};
use super::stamp;
use crate::api::{Shoot, object_key};
use crate::chain::{ProfileChain, Selection};
use crate::plan::windows::{Window, window_of};
use crate::plan::{self, Context, SeedIndex};
use crate::plugin::ClusterData;
use crate::regions::Regions;
use crate::simulate::{self, Landscape, Limits as ReadLimits};

/// Conflicts on one move before it is skipped: a shoot rewritten that often is being worked on.
const MAX_CONFLICTS: usize = 3;

#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    #[error("{0}")]
    ReadLandscape(#[from] simulate::LiveError),
    #[error("{0}")]
    Lease(WriteError),
    /// The plan looks computed on another garden (see [`super::stamp`]).
    #[error("{0}")]
    Foreign(String),
}

/// How the apply runs.
pub struct Settings {
    pub limits: Limits,
    /// A migration not finished this long after its binding has failed.
    pub move_timeout: chrono::Duration,
    /// How often migrations in flight are looked at.
    pub poll: Duration,
    pub request_timeout: Duration,
    pub chunk_size: u32,
    pub dry_run: bool,
    pub lease: LeaseRef,
    /// Apply a plan that looks computed on another garden.
    pub force: bool,
}

/// What the apply works with besides the plan: the cluster, the configuration, a clock and the
/// stop signal (Ctrl-C / SIGTERM: no move starts after it; those in flight are followed).
pub struct Env<'a> {
    pub client: &'a Client,
    pub chain: &'a ProfileChain,
    pub scheduler_names: &'a [String],
    pub regions: &'a Regions,
    pub data: &'a [ClusterData],
    pub clock: &'a (dyn Fn() -> DateTime<Utc> + Sync),
    pub stop: tokio::sync::watch::Receiver<bool>,
}

/// One thing that happened, for the log.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "step", rename_all = "camelCase")]
pub enum Step {
    /// The move's state when the apply began, when it was not waiting (a restart).
    #[serde(rename_all = "camelCase")]
    Found { shoot: String, state: State },
    #[serde(rename_all = "camelCase")]
    Started {
        shoot: String,
        from: String,
        to: String,
        live: bool,
    },
    /// `--dry-run`: the move passed every check and the API server accepted its binding.
    #[serde(rename_all = "camelCase")]
    WouldStart {
        shoot: String,
        from: String,
        to: String,
        live: bool,
        #[serde(serialize_with = "crate::plan::windows::rfc3339")]
        start: DateTime<Utc>,
    },
    #[serde(rename_all = "camelCase")]
    Conflict { shoot: String, attempt: usize },
    #[serde(rename_all = "camelCase")]
    Done { shoot: String, to: String },
    #[serde(rename_all = "camelCase")]
    Skipped { shoot: String, reason: String },
    #[serde(rename_all = "camelCase")]
    Failed {
        shoot: String,
        reason: String,
        last_operation: String,
    },
    /// No move starts: a freeze of the profile chain, or no active profile.
    #[serde(rename_all = "camelCase")]
    Frozen { reason: String },
    /// No more moves start (a signal, failures, the lease lost).
    #[serde(rename_all = "camelCase")]
    Stopping { reason: String },
    /// Something the operator should know that changes nothing (another profile than the
    /// plan's).
    #[serde(rename_all = "camelCase")]
    Note { message: String },
}

/// Where the steps and the progress go.
pub trait Sink {
    fn step(&mut self, at: DateTime<Utc>, step: &Step);
    fn progress(&mut self, at: DateTime<Utc>, counts: &Counts);
}

/// The end of an apply: every move's state.
pub struct Summary {
    pub counts: Counts,
    pub states: Vec<(String, State)>,
    /// `--dry-run`: moves whose binding the API server accepted.
    pub would_start: usize,
    /// Why the apply stopped before its plan was carried out (a binding the identity may not
    /// make, a lease it could not renew, too many failures); `None` when it ran to its end or was
    /// stopped on request (SIGINT, SIGTERM), as a rollout stops it.
    pub stopped: Option<String>,
}

struct Apply<'a, 'e> {
    env: &'a Env<'e>,
    settings: &'a Settings,
    moves: &'a [Planned],
    live_migration: bool,
    states: Vec<State>,
    windows: Vec<Option<Window>>,
    /// The shoots as last read, for the Events.
    shoots: Vec<Option<Shoot>>,
    sink: &'a mut dyn Sink,
    stopping: Option<String>,
    /// The stop was asked for (a signal), not forced by what happened.
    on_request: bool,
}

/// Carries out `plan`. Returns when every move is final, or, once stopping, when nothing is in
/// flight any more.
pub async fn apply(
    env: &Env<'_>,
    plan: &SavedPlan,
    settings: &Settings,
    sink: &mut dyn Sink,
) -> Result<Summary, ApplyError> {
    let (client, timeout) = (env.client, settings.request_timeout);
    cluster::hold(client, &settings.lease, settings.dry_run, timeout)
        .await
        .map_err(ApplyError::Lease)?;
    let result = run(env, plan, settings, sink).await;
    cluster::release(client, &settings.lease, settings.dry_run, timeout).await;
    result
}

async fn run(
    env: &Env<'_>,
    plan: &SavedPlan,
    settings: &Settings,
    sink: &mut dyn Sink,
) -> Result<Summary, ApplyError> {
    let n = plan.moves.len();
    let mut a = Apply {
        env,
        settings,
        moves: &plan.moves,
        live_migration: plan.live_migration,
        states: vec![State::Waiting; n],
        windows: vec![None; n],
        shoots: vec![None; n],
        sink,
        stopping: None,
        on_request: false,
    };
    let landscape = a.read_landscape().await?;
    let now = (env.clock)();
    let by_key: std::collections::HashMap<String, &Shoot> = landscape
        .shoots
        .iter()
        .map(|s| (object_key(&s.metadata), s))
        .collect();
    let observed = stamp::Observed {
        digest: plan::landscape_digest(&landscape),
        seeds: landscape.seeds.len(),
        shoots: landscape.shoots.len(),
        found: plan
            .moves
            .iter()
            .filter(|m| {
                by_key.get(&m.shoot).is_some_and(|s| {
                    let seed = s.spec.seed_name.as_deref();
                    seed == Some(m.from.as_str()) || seed == Some(m.to.as_str())
                })
            })
            .count(),
    };
    let verdict = stamp::compare(plan, &observed, settings.force);
    if let Some(why) = verdict.foreign {
        return Err(ApplyError::Foreign(why));
    }
    for message in verdict.notes {
        a.sink.step(now, &Step::Note { message });
    }
    for (i, m) in plan.moves.iter().enumerate() {
        let shoot = by_key.get(&m.shoot).copied();
        a.states[i] = pace::initial(&pace::observe(shoot, m), m, now);
        a.shoots[i] = shoot.cloned();
        if a.states[i] != State::Waiting {
            let step = Step::Found {
                shoot: m.shoot.clone(),
                state: a.states[i].clone(),
            };
            a.sink.step(now, &step);
        }
    }
    a.refresh_windows(&landscape, now);
    if let Selection::Profile { profile, .. } = env.chain.select(now) {
        let message = if profile.name != plan.profile {
            Some(format!(
                "the plan was computed with profile {:?}; its moves are checked with profile \
                 {:?}, active now in --config",
                plan.profile, profile.name
            ))
        } else if !plan.profile_fingerprint.is_empty()
            && plan.profile_fingerprint != profile.fingerprint
        {
            Some(format!(
                "the plan was computed with profile {:?} configured otherwise (strategy, \
                 filters or priorities); its moves are checked with profile {:?} as --config \
                 configures it now",
                plan.profile, profile.name
            ))
        } else {
            None
        };
        if let Some(message) = message {
            a.sink.step(now, &Step::Note { message });
        }
    }
    if settings.dry_run {
        let would_start = a.dry_run(&landscape).await;
        return Ok(a.summary(&Pick::default(), would_start));
    }
    let mut renewed = tokio::time::Instant::now();
    let mut frozen_logged = false;
    loop {
        let now = (env.clock)();
        a.follow(now).await;
        a.check_stop(now);
        let mut pick = Pick::default();
        match env.chain.select(now) {
            Selection::Deferred { reason, .. } => {
                if !frozen_logged && a.stopping.is_none() {
                    a.sink.step(now, &Step::Frozen { reason });
                }
                frozen_logged = true;
            }
            Selection::Profile { .. } => {
                frozen_logged = false;
                pick = pace::pick(
                    a.moves,
                    &a.states,
                    &a.windows,
                    now,
                    &settings.limits,
                    a.stopping.is_some(),
                );
            }
        }
        let mut decided = false;
        if !pick.start.is_empty() {
            decided = a.start(&pick.start, now).await;
        }
        a.sink.progress(now, &pace::counts(&a.states, &pick));
        if pace::finished(&a.states, a.stopping.is_some()) {
            return Ok(a.summary(&pick, 0));
        }
        if renewed.elapsed() >= settings.lease.duration / 3 {
            match cluster::hold(env.client, &settings.lease, false, settings.request_timeout).await
            {
                Ok(()) => renewed = tokio::time::Instant::now(),
                Err(e) => a.stop(now, format!("the lease could not be renewed: {e}")),
            }
        }
        if decided {
            continue;
        }
        let mut wait = settings.poll.min(settings.lease.duration / 3);
        if let Some(next) = pick.next_start()
            && let Ok(d) = (next - now).to_std()
        {
            wait = wait.min(d.max(Duration::from_millis(50)));
        }
        let mut stop = env.stop.clone();
        tokio::select! {
            () = tokio::time::sleep(wait) => {}
            changed = stop.changed() => {
                // no sender any more: nothing can stop the apply but its end; just wait
                if changed.is_err() {
                    tokio::time::sleep(wait).await;
                }
            }
        }
    }
}

impl Apply<'_, '_> {
    async fn read_landscape(&mut self) -> Result<Landscape, ApplyError> {
        let limits = ReadLimits {
            timeout: self.settings.request_timeout,
            ..ReadLimits::default()
        };
        let read = simulate::read_live(
            self.env.client,
            self.settings.chunk_size,
            limits,
            self.env.data,
            true,
            &mut |_| {},
        )
        .await?;
        for w in &read.warnings {
            tracing::warn!("{w}");
        }
        Ok(read.landscape)
    }

    /// Every move's maintenance window from the shoots just read; a move whose window cannot
    /// be read is skipped, naming the field.
    fn refresh_windows(&mut self, landscape: &Landscape, now: DateTime<Utc>) {
        let docs: std::collections::HashMap<String, Option<serde_yaml_ng::Value>> = landscape
            .shoots
            .iter()
            .zip(&landscape.shoot_docs)
            .map(|(s, d)| (object_key(&s.metadata), d.value()))
            .collect();
        for (i, m) in self.moves.iter().enumerate() {
            let Some(doc) = docs.get(&m.shoot) else {
                continue;
            };
            match window_of(&m.shoot, doc.as_ref()) {
                Ok(w) => self.windows[i] = Some(w),
                Err(e) if self.states[i] == State::Waiting => {
                    let reason = e.to_string();
                    self.sink.step(
                        now,
                        &Step::Skipped {
                            shoot: m.shoot.clone(),
                            reason: reason.clone(),
                        },
                    );
                    self.states[i] = State::Skipped { reason };
                }
                Err(_) => {}
            }
        }
    }

    fn stop(&mut self, now: DateTime<Utc>, reason: String) {
        if self.stopping.is_none() {
            self.sink.step(
                now,
                &Step::Stopping {
                    reason: reason.clone(),
                },
            );
            self.stopping = Some(reason);
        }
    }

    fn check_stop(&mut self, now: DateTime<Utc>) {
        if *self.env.stop.borrow() {
            if self.stopping.is_none() {
                self.on_request = true;
            }
            self.stop(
                now,
                "interrupted: moves in flight are followed to their end".into(),
            );
        }
        let failed = self
            .states
            .iter()
            .filter(|s| matches!(s, State::Failed { .. }))
            .count();
        if failed >= self.settings.limits.max_failures {
            self.stop(
                now,
                format!(
                    "{failed} move(s) failed (--max-failures {})",
                    self.settings.limits.max_failures
                ),
            );
        }
    }

    /// Reads every shoot in flight and moves its state on.
    async fn follow(&mut self, now: DateTime<Utc>) {
        for i in 0..self.moves.len() {
            let State::InFlight { since } = self.states[i] else {
                continue;
            };
            let m = &self.moves[i];
            let shoot = match cluster::read(
                self.env.client,
                &m.namespace,
                &m.name,
                self.settings.request_timeout,
            )
            .await
            {
                Ok(s) => s.map(|(s, _)| s),
                Err(e) => {
                    tracing::warn!(shoot = %m.shoot, error = %e, "reading a shoot in flight");
                    continue;
                }
            };
            let observed = pace::observe(shoot.as_ref(), m);
            let next = pace::follow(&observed, m, since, now, self.settings.move_timeout);
            if let Some(s) = shoot {
                self.shoots[i] = Some(s);
            }
            self.settle(i, now, next).await;
        }
    }

    /// Records a move's new state; a final one is logged and published as an Event.
    async fn settle(&mut self, i: usize, now: DateTime<Utc>, state: State) {
        if state == self.states[i] {
            return;
        }
        let m = &self.moves[i];
        let last = self.shoots[i]
            .as_ref()
            .map(pace::last_operation)
            .unwrap_or_else(|| "none".into());
        let (step, event) = match &state {
            State::Waiting => {
                self.states[i] = state;
                return;
            }
            State::Done => (
                Step::Done {
                    shoot: m.shoot.clone(),
                    to: m.to.clone(),
                },
                (
                    "MigrationSucceeded",
                    "Normal",
                    format!("control plane moved from {} to {}", m.from, m.to),
                ),
            ),
            State::Failed { reason } => (
                Step::Failed {
                    shoot: m.shoot.clone(),
                    reason: reason.clone(),
                    last_operation: last,
                },
                (
                    "MigrationFailed",
                    "Warning",
                    format!(
                        "moving the control plane from {} to {}: {reason}",
                        m.from, m.to
                    ),
                ),
            ),
            State::Skipped { reason } => (
                Step::Skipped {
                    shoot: m.shoot.clone(),
                    reason: reason.clone(),
                },
                (
                    "MigrationSkipped",
                    "Normal",
                    format!(
                        "planned move from {} to {} not carried out: {reason}",
                        m.from, m.to
                    ),
                ),
            ),
            State::InFlight { .. } => (
                Step::Started {
                    shoot: m.shoot.clone(),
                    from: m.from.clone(),
                    to: m.to.clone(),
                    live: m.live(),
                },
                (
                    "MigrationStarted",
                    "Normal",
                    format!(
                        "bound to {} (from {}) by plan apply; {} migration",
                        m.to,
                        m.from,
                        if m.live() { "live" } else { "classic" }
                    ),
                ),
            ),
        };
        self.states[i] = state;
        self.sink.step(now, &step);
        let (reason, type_, note) = event;
        if let Some(shoot) = self.shoots[i].as_ref() {
            cluster::event(
                self.env.client,
                shoot,
                reason,
                type_,
                &note,
                self.settings.dry_run,
                self.settings.request_timeout,
            )
            .await;
        }
    }
}

/// The decision's inputs over `landscape` at `now`; `None` when no profile is active (a freeze).
fn context<'l>(
    env: &'l Env<'_>,
    live_migration: bool,
    landscape: &'l Landscape,
    now: DateTime<Utc>,
) -> Option<Context<'l>> {
    let Selection::Profile { profile, .. } = env.chain.select(now) else {
        return None;
    };
    Some(Context {
        landscape,
        profile,
        scheduler_names: env.scheduler_names,
        regions: env.regions,
        now,
        explain: Some(plan::EXPLAIN_TOP),
        live_migration,
        prefer_live: false,
        seed_index: SeedIndex::default(),
    })
}

mod start;
