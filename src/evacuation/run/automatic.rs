//! `evacuation.mode: automatic`: the leader carries out the plans it publishes, with the
//! machinery of `plan apply` ([`crate::apply`]). Each check, while a seed is judged unhealthy and
//! its conditions still fail, the landscape is read once; the limits are counted on its shoots
//! ([`limits`](crate::evacuation::limits)), so a new leader counts what the last one started;
//! then the plan's moves start in order while there is room, each decided again on the
//! landscape as it is ([`recheck`]) and bound with the shoot's current resourceVersion through
//! the scheduler's fenced client. The moment the seed's conditions are healthy again, no move
//! starts; those started are not reverted.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use tracing::{info, warn};

use super::Evacuator;
use crate::api::{Seed, Shoot, object_key};
use crate::apply::check::recheck;
use crate::apply::cluster::{self, WriteError};
use crate::apply::saved::{Kind, Planned};
use crate::chain::Selection;
use crate::config::EvacuationMode;
use crate::controller::REQUEST_TIMEOUT;
use crate::controller::{MOVE_REFUSED, MOVE_STARTED};
use crate::evacuation::event;
use crate::evacuation::health::{Judge, observe};
use crate::evacuation::limits::{self, ANNOTATION_EVACUATED};
use crate::plan::{self, Context, Move, SeedIndex};
use crate::simulate::Landscape;
use crate::snapshot::Snapshot;

/// `reportingController` of the events on the shoots the automatic evacuation moves.
const REPORTING_CONTROLLER: &str = "gardener-scheduler/seed-evacuation";
/// Conflicts on one move before it waits for the next check: a shoot rewritten that often is
/// being worked on.
const MAX_CONFLICTS: usize = 3;

/// What became of one move tried.
enum Tried {
    /// Bound; or the binding's outcome is unknown, and counted as bound until the next read.
    Started,
    /// Checked again and no longer possible; not tried again until the next plan.
    Refused,
    /// Not now (the shoot moved meanwhile, a read failed, the lease is gone).
    NotNow,
}

impl Evacuator {
    fn automatic(&self) -> bool {
        self.beside.config.schedulers.shoot.evacuation.mode == EvacuationMode::Automatic
    }

    /// Every seed whose plan was being carried out and whose conditions are healthy again,
    /// by the judgement of this check: no move of it starts from now on.
    pub(super) async fn stop_recovered(&mut self, seeds: &[Seed], now: DateTime<Utc>) {
        for seed in seeds {
            let Some(t) = self.seeds.get_mut(seed.name()) else {
                continue;
            };
            if t.applying && !matches!(t.judge, Judge::Unhealthy { .. }) {
                t.applying = false;
                self.stopped(seed, now).await;
            }
        }
    }

    async fn stopped(&self, seed: &Seed, now: DateTime<Utc>) {
        let note = format!(
            "Seed {}'s conditions are healthy again: the automatic evacuation stops, no further \
             move starts; moves already started are not reverted",
            seed.name()
        );
        info!(seed = %seed.name(), "{note}");
        self.event(seed, ("Normal", event::REASON_STOPPED), &note, now)
            .await;
    }

    /// One step of the automatic evacuation: the moves that fit the limits now, started.
    pub(super) async fn apply_automatic(&mut self, now: DateTime<Utc>) {
        if !self.automatic() {
            return;
        }
        let mut active: Vec<String> = (self.seeds.iter())
            .filter(|(_, t)| {
                matches!(t.judge, Judge::Unhealthy { .. })
                    && t.moves.iter().any(|m| !t.refused.contains(&m.shoot))
            })
            .map(|(name, _)| name.clone())
            .collect();
        if active.is_empty() {
            return;
        }
        let cfg = self.beside.config.clone();
        let evacuation = &cfg.schedulers.shoot.evacuation;
        let landscape = match self.read_landscape().await {
            Ok(l) => l,
            Err(e) => {
                warn!(error = %e, "automatic evacuation: reading the landscape failed; trying again at the next check");
                return;
            }
        };
        // Stop at once: a seed whose conditions are healthy by this read moves nothing more.
        let mut kept = Vec::with_capacity(active.len());
        for name in active {
            let seed = landscape.seeds.iter().find(|s| s.name() == name);
            let failing =
                seed.is_some_and(|s| observe(s, now, evacuation.heartbeat_timeout).is_failing());
            if failing {
                kept.push(name);
            } else if let Some(seed) = seed
                && let Some(t) = self.seeds.get_mut(&name)
                && std::mem::take(&mut t.applying)
            {
                self.stopped(seed, now).await;
            }
        }
        active = kept;
        let mut tally = limits::tally(&landscape.shoots, now);
        let mut room = limits::room(&evacuation.automatic, &tally);
        for name in &active {
            if let Some(t) = self.seeds.get_mut(name)
                && !std::mem::replace(&mut t.applying, true)
            {
                info!(seed = %name, "automatic evacuation: carrying out the seed's plan within the limits");
            }
        }
        if let Some(held) = room.held {
            // nothing starts: the decision's snapshot is not built
            self.say_held(limits::held_line(&evacuation.automatic, &tally, held));
            return;
        }
        let chain = self.beside.chain.clone();
        let Selection::Profile { profile, .. } = chain.select(now) else {
            self.say_held("no profile is active (a freeze of the profile chain)".into());
            return;
        };
        let cx = Context {
            landscape: &landscape,
            profile,
            scheduler_names: &cfg.schedulers.shoot.scheduler_names,
            regions: &self.regions,
            now,
            explain: Some(plan::EXPLAIN_TOP),
            live_migration: false,
            prefer_live: false,
            seed_index: SeedIndex::default(),
        };
        let mut snap = cx.snapshot();
        let shoots: HashMap<String, &Shoot> = (landscape.shoots.iter())
            .map(|s| (object_key(&s.metadata), s))
            .collect();
        for name in active {
            let Some(t) = self.seeds.get_mut(&name) else {
                continue;
            };
            // a shoot gone or off its source is done with: no read for it any more
            t.moves.retain(|m| {
                shoots
                    .get(&m.shoot)
                    .is_some_and(|s| s.spec.seed_name.as_deref() == Some(m.from.as_str()))
            });
            let moves: Vec<Move> = (t.moves.iter())
                .filter(|m| !t.refused.contains(&m.shoot))
                .filter(|m| shoots.get(&m.shoot).is_some_and(|s| !limits::in_flight(s)))
                .cloned()
                .collect();
            for m in moves {
                if let Some(held) = room.held {
                    self.say_held(limits::held_line(&evacuation.automatic, &tally, held));
                    return;
                }
                match self.try_move(&cx, &mut snap, &m, now).await {
                    Tried::Started => {
                        // in flight from now on, and one more within the hour
                        tally.in_flight += 1;
                        tally.last_hour += 1;
                        room = limits::room(&evacuation.automatic, &tally);
                    }
                    Tried::Refused => {
                        if let Some(t) = self.seeds.get_mut(&name) {
                            t.refused.insert(m.shoot.clone());
                        }
                    }
                    Tried::NotNow => {}
                }
            }
        }
        self.held = None;
    }

    /// The landscape as `simulate --live` reads it, on the blocking pool (the read is not
    /// `Send`; the planning reads it there too).
    async fn read_landscape(&self) -> Result<Landscape, String> {
        let (client, data) = (self.beside.client.clone(), self.beside.chain.cluster_data());
        let handle = tokio::runtime::Handle::current();
        tokio::task::spawn_blocking(move || {
            handle.block_on(crate::simulate::read_live(
                &client,
                crate::simulate::PAGE_SIZE,
                crate::simulate::Limits::default(),
                &data,
                false,
                &mut |_| {},
            ))
        })
        .await
        .map_err(|e| format!("the read stopped: {e}"))?
        .map(|l| l.landscape)
        .map_err(|e| e.to_string())
    }

    /// Logs what holds the moves when it changes.
    fn say_held(&mut self, why: String) {
        if self.held.as_deref() != Some(why.as_str()) {
            info!(
                held = %why,
                "automatic evacuation: no move starts now; trying again at the next check"
            );
            self.held = Some(why);
        }
    }

    /// Reads the shoot of `m`, decides its move again and binds it, up to [`MAX_CONFLICTS`]
    /// times; the outcome is logged, evented on the shoot and counted.
    async fn try_move(
        &self,
        cx: &Context<'_>,
        snap: &mut Snapshot,
        m: &Move,
        now: DateTime<Utc>,
    ) -> Tried {
        let client = &self.beside.client;
        let (namespace, name) = m.shoot.split_once('/').unwrap_or(("", &m.shoot));
        let planned = Planned {
            shoot: m.shoot.clone(),
            namespace: namespace.into(),
            name: name.into(),
            from: m.from.clone(),
            to: m.to.clone(),
            kind: if m.migration.is_live() {
                Kind::Live
            } else {
                Kind::Classic
            },
            start: Ok(now),
        };
        for _ in 0..MAX_CONFLICTS {
            let (shoot, mut raw) = match cluster::read(client, namespace, name, REQUEST_TIMEOUT)
                .await
            {
                Ok(Some(read)) => read,
                Ok(None) => return Tried::NotNow,
                Err(e) => {
                    warn!(shoot = %m.shoot, error = %e, "automatic evacuation: reading the shoot");
                    return Tried::NotNow;
                }
            };
            if shoot.spec.seed_name.as_deref() != Some(m.from.as_str()) || limits::in_flight(&shoot)
            {
                return Tried::NotNow;
            }
            if let Err(reason) = recheck(cx, &shoot, &planned, snap) {
                self.refused(&shoot, m, &reason).await;
                return Tried::Refused;
            }
            if !self.beside.leadership.is_leader() {
                snap.upsert_shoot(&shoot);
                return Tried::NotNow;
            }
            if let Some(meta) = raw.get_mut("metadata").and_then(|v| v.as_object_mut()) {
                let notes = meta
                    .entry("annotations")
                    .or_insert_with(|| serde_json::json!({}));
                if !notes.is_object() {
                    *notes = serde_json::json!({});
                }
                notes[ANNOTATION_EVACUATED] = limits::stamp(now, &m.from).into();
            }
            match cluster::bind(client, &planned, &raw, false, REQUEST_TIMEOUT).await {
                Ok(()) => {
                    self.started(&shoot, m).await;
                    return Tried::Started;
                }
                Err(WriteError::Conflict) => snap.upsert_shoot(&shoot),
                // it may have been written: counted as started; the next read tells
                Err(e @ (WriteError::Unknown { .. } | WriteError::Unreachable { .. })) => {
                    warn!(shoot = %m.shoot, error = %e, "automatic evacuation: binding");
                    return Tried::Started;
                }
                Err(e) => {
                    snap.upsert_shoot(&shoot);
                    let reason = format!("the API server refused the binding: {e}");
                    self.refused(&shoot, m, &reason).await;
                    return Tried::Refused;
                }
            }
        }
        warn!(shoot = %m.shoot, "automatic evacuation: the shoot changed {MAX_CONFLICTS} times while it was being bound; trying again at the next check");
        Tried::NotNow
    }

    async fn started(&self, shoot: &Shoot, m: &Move) {
        let note = format!(
            "bound to {} (from {}) by the automatic evacuation of seed {}; {} migration",
            m.to,
            m.from,
            m.from,
            m.migration.label()
        );
        info!(shoot = %m.shoot, from = %m.from, to = %m.to, "automatic evacuation: move started");
        self.beside.metrics.count_move(&m.from, MOVE_STARTED);
        self.shoot_event(shoot, ("Normal", "EvacuationMoveStarted"), &note)
            .await;
    }

    async fn refused(&self, shoot: &Shoot, m: &Move, reason: &str) {
        let note = format!(
            "the automatic evacuation of seed {} does not move it to {}: {reason}",
            m.from, m.to
        );
        warn!(shoot = %m.shoot, from = %m.from, to = %m.to, %reason, "automatic evacuation: move refused when checked again");
        self.beside.metrics.count_move(&m.from, MOVE_REFUSED);
        self.shoot_event(shoot, ("Warning", "EvacuationMoveRefused"), &note)
            .await;
    }

    async fn shoot_event(&self, shoot: &Shoot, kind: (&str, &str), note: &str) {
        let client = &self.beside.client;
        cluster::event_as(
            REPORTING_CONTROLLER,
            client,
            shoot,
            kind,
            note,
            false,
            REQUEST_TIMEOUT,
        )
        .await;
    }
}
