//! The loop beside the scheduler: every `checkPeriod`, while this process leads, the seeds are
//! read and judged ([`health`](super::health)); for a seed judged unhealthy a drain plan is
//! computed from the landscape as it is (the planner of `plan drain`) and published
//! ([`publish`](super::publish)), again every `replanPeriod`; once the seed is judged healthy
//! again its plan is withdrawn and a fail-back plan for the shoots that left it is published.
//! What the loop knows is rebuilt from the published ConfigMaps when this process becomes the
//! leader. With `evacuation.mode: automatic` the loop also carries the plans out
//! ([`automatic`](self::automatic)).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use chrono::{DateTime, SecondsFormat, Utc};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams};
use tracing::{info, warn};

use super::health::{Judge, Spans, Transition, observe};
use super::planning::{Inputs, Job, plans};
use super::publish::{self, Kind, Occasion};
use super::{event, write};
use crate::api::Seed;
use crate::config::EvacuationMode;
use crate::controller::{Beside, default_identity};
use crate::plan::{Plan, PlanError};
use crate::regions::Regions;

/// The loop, when `schedulers.shoot.evacuation.enabled`; for
/// [`crate::controller::run_with_signals`].
pub fn task(beside: Beside) -> Option<futures::future::BoxFuture<'static, ()>> {
    if !beside.config.schedulers.shoot.evacuation.enabled {
        return None;
    }
    let loop_ = Evacuator::new(beside);
    Some(Box::pin(loop_.run()))
}

/// What the loop keeps per seed.
#[derive(Debug, Default)]
struct Tracked {
    judge: Judge,
    /// Why the seed fails, as last seen while unhealthy.
    reasons: Vec<String>,
    /// When it was judged unhealthy.
    judged_at: Option<DateTime<Utc>>,
    /// When its evacuation plan was last published.
    planned_at: Option<DateTime<Utc>>,
    /// The published plan's moves, to tell an update from the same plan again.
    fingerprint: Option<u64>,
    /// The shoots the published plan moves off the seed (`namespace/name`).
    left: Vec<String>,
    /// A fail-back plan of the seed is published.
    failback: bool,
    /// `mode: automatic`: the latest plan's moves, in the order they start.
    moves: Vec<crate::plan::Move>,
    /// `mode: automatic`: shoots whose move was refused when checked again, not tried again
    /// until the next plan.
    refused: BTreeSet<String>,
    /// `mode: automatic`: the plan is being carried out (for the log and event of a stop).
    applying: bool,
}

impl Tracked {
    /// Whether the seed's evacuation plan is to be computed now.
    fn due(&self, now: DateTime<Utc>, replan: std::time::Duration) -> bool {
        self.judge.is_unhealthy()
            && self.planned_at.is_none_or(|at| {
                chrono::Duration::from_std(replan).is_ok_and(|replan| now - at >= replan)
            })
    }
}

/// The plans of one round, by job, or why none was computed.
type Planned = Result<BTreeMap<Job, Result<Plan, PlanError>>, String>;

struct Evacuator {
    beside: Beside,
    regions: Arc<Regions>,
    instance: String,
    seeds: BTreeMap<String, Tracked>,
    leading: bool,
    /// `mode: automatic`: what held the moves when last said, so that it is said once.
    held: Option<String>,
}

impl Evacuator {
    fn new(beside: Beside) -> Self {
        let regions = Regions::with_overrides(&beside.config.schedulers.shoot.regions);
        Evacuator {
            beside,
            regions: Arc::new(regions),
            instance: default_identity(),
            seeds: BTreeMap::new(),
            leading: false,
            held: None,
        }
    }

    async fn run(mut self) {
        let period = self.beside.config.schedulers.shoot.evacuation.check_period;
        let mut tick = tokio::time::interval(period);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            self.round(Utc::now()).await;
        }
    }

    fn namespace(&self) -> String {
        self.beside
            .config
            .schedulers
            .shoot
            .evacuation
            .namespace
            .clone()
    }

    /// One look at every seed.
    async fn round(&mut self, now: DateTime<Utc>) {
        if !self.beside.leadership.is_leader() {
            if self.leading {
                for seed in self.seeds.keys() {
                    self.beside.metrics.forget(seed);
                }
                self.seeds.clear();
                self.leading = false;
            }
            return;
        }
        if !self.leading {
            match self.recover().await {
                Ok(()) => self.leading = true,
                Err(e) => {
                    warn!(error = %e, "evacuation: reading the published plans failed; trying again");
                    return;
                }
            }
        }
        let seeds = match Api::<Seed>::all(self.beside.client.clone())
            .list(&ListParams::default())
            .await
        {
            Ok(list) => list.items,
            Err(e) => {
                warn!(error = %e, "evacuation: listing the seeds failed; trying again");
                return;
            }
        };
        let present: BTreeSet<&str> = seeds.iter().map(Seed::name).collect();
        let gone: Vec<String> = (self.seeds.keys())
            .filter(|s| !present.contains(s.as_str()))
            .cloned()
            .collect();
        for seed in gone {
            self.beside.metrics.forget(&seed);
            self.seeds.remove(&seed);
        }
        let (due, recovered) = self.judge(&seeds, now);
        self.stop_recovered(&seeds, now).await;
        let mut jobs: Vec<Job> = due.iter().map(|s| Job::Evacuate(s.name().into())).collect();
        for seed in &recovered {
            let left = &self.seeds[seed.name()].left;
            if !left.is_empty() {
                jobs.push(Job::Failback(seed.name().into(), left.clone()));
            }
        }
        let mut planned = if jobs.is_empty() {
            Ok(BTreeMap::new())
        } else {
            self.compute(jobs, now).await
        };
        for seed in due {
            match &mut planned {
                Ok(plans) => match plans.remove(&Job::Evacuate(seed.name().into())) {
                    Some(Ok(plan)) => self.publish_evacuation(seed, &plan, now).await,
                    Some(Err(e)) => {
                        warn!(seed = %seed.name(), error = %e, "evacuation: planning failed")
                    }
                    None => {}
                },
                Err(e) => {
                    warn!(seed = %seed.name(), error = %e, "evacuation: no plan computed; planning again at the next check")
                }
            }
        }
        for seed in recovered {
            let failback = match &mut planned {
                Ok(plans) => {
                    let job = plans
                        .keys()
                        .find(|j| matches!(j, Job::Failback(s, _) if s == seed.name()))
                        .cloned();
                    job.and_then(|j| plans.remove(&j))
                        .map(|r| r.map_err(|e| e.to_string()))
                }
                Err(e) => Some(Err(e.clone())),
            };
            self.withdraw(seed, failback, now).await;
        }
        self.apply_automatic(now).await;
        // every seed judged has its series: 0 until its plan is published (or its first move)
        let automatic =
            self.beside.config.schedulers.shoot.evacuation.mode == EvacuationMode::Automatic;
        for (name, t) in &self.seeds {
            let ready = t.judge.is_unhealthy() && t.planned_at.is_some();
            self.beside.metrics.set_ready(name, ready);
            self.beside.metrics.set_failback_ready(name, t.failback);
            if automatic {
                self.beside.metrics.serve_moves(name);
            }
        }
    }

    /// Judges every seed: those whose evacuation plan is due, and those just judged healthy.
    fn judge<'s>(
        &mut self,
        seeds: &'s [Seed],
        now: DateTime<Utc>,
    ) -> (Vec<&'s Seed>, Vec<&'s Seed>) {
        let cfg = &self.beside.config.schedulers.shoot;
        let spans = Spans {
            unhealthy_after: cfg.evacuation.after,
            healthy_after: cfg.failback.after,
        };
        let (mut due, mut recovered) = (Vec::new(), Vec::new());
        for seed in seeds {
            if seed.metadata.deletion_timestamp.is_some() {
                continue;
            }
            let name = seed.name();
            let seen = observe(seed, now, cfg.evacuation.heartbeat_timeout);
            let t = self.seeds.entry(name.to_string()).or_default();
            let (judge, change) = t.judge.step(&seen, now, spans);
            t.judge = judge;
            if seen.is_failing() && judge.is_unhealthy() {
                t.reasons = seen.failing.clone();
            }
            match change {
                Some(Transition::BecameUnhealthy) => {
                    warn!(seed = %name, reasons = ?seen.failing, "seed judged unhealthy; computing its evacuation plan");
                    t.judged_at = Some(now);
                }
                Some(Transition::BecameHealthy) => recovered.push(seed),
                None => {}
            }
            if t.due(now, cfg.evacuation.replan_period) {
                due.push(seed);
            }
        }
        (due, recovered)
    }

    /// The plans of `jobs`, off the async workers.
    async fn compute(&self, jobs: Vec<Job>, now: DateTime<Utc>) -> Planned {
        let unhealthy: Vec<String> = (self.seeds.iter())
            .filter(|(_, t)| t.judge.is_unhealthy())
            .map(|(name, _)| name.clone())
            .collect();
        let (client, chain, config, regions) = (
            self.beside.client.clone(),
            self.beside.chain.clone(),
            self.beside.config.clone(),
            self.regions.clone(),
        );
        let handle = tokio::runtime::Handle::current();
        tokio::task::spawn_blocking(move || {
            let inputs = Inputs {
                client: &client,
                chain: &chain,
                config: &config,
                regions: &regions,
                unhealthy: &unhealthy,
                now,
            };
            plans(&handle, &inputs, &jobs)
        })
        .await
        .unwrap_or_else(|e| Err(format!("planning stopped: {e}")))
    }

    /// Publishes `seed`'s evacuation plan; an event when it is new or moves other shoots.
    async fn publish_evacuation(&mut self, seed: &Seed, plan: &Plan, now: DateTime<Utc>) {
        let (name, namespace) = (seed.name(), self.namespace());
        let client = self.beside.client.clone();
        let evacuation = &self.beside.config.schedulers.shoot.evacuation;
        let automatic =
            (evacuation.mode == EvacuationMode::Automatic).then_some(&evacuation.automatic);
        let t = self.seeds.entry(name.to_string()).or_default();
        let at = Occasion {
            seed: name,
            judged_at: t.judged_at.unwrap_or(now),
            reasons: &t.reasons,
            automatic,
        };
        let cm = publish::config_map(&namespace, Kind::Evacuation, &at, plan);
        if let Err(e) = write::apply(&client, &namespace, &cm).await {
            warn!(seed = %name, error = %e, "evacuation: publishing the plan failed; trying again at the next check");
            return;
        }
        if t.failback {
            // the seed failed again: its fail-back plan no longer holds
            let failback = publish::name(Kind::Failback, name);
            match write::delete(&client, &namespace, &failback).await {
                Ok(()) => t.failback = false,
                Err(e) => {
                    warn!(seed = %name, error = %e, "evacuation: removing the fail-back plan failed")
                }
            }
        }
        let fingerprint = publish::fingerprint(plan);
        let reason = match t.fingerprint {
            None => Some(event::REASON_PUBLISHED),
            Some(f) if f != fingerprint => Some(event::REASON_UPDATED),
            Some(_) => None,
        };
        let note = publish::note(Kind::Evacuation, &namespace, &at, plan);
        t.planned_at = Some(now);
        t.fingerprint = Some(fingerprint);
        t.left = plan.moves.iter().map(|m| m.shoot.clone()).collect();
        if automatic.is_some() {
            t.moves = crate::plan::by_start(&plan.moves)
                .into_iter()
                .cloned()
                .collect();
        }
        t.refused.clear();
        info!(seed = %name, configmap = %format!("{namespace}/{}", publish::name(Kind::Evacuation, name)),
              moves = plan.moves.len(), blocked = plan.blocked.len(), "evacuation plan published");
        if let Some(reason) = reason {
            self.event(seed, ("Warning", reason), &note, now).await;
        }
    }

    /// The seed is healthy again: its evacuation plan is withdrawn, and the fail-back plan of
    /// the shoots that left it, if any, published.
    async fn withdraw(
        &mut self,
        seed: &Seed,
        failback: Option<Result<Plan, String>>,
        now: DateTime<Utc>,
    ) {
        let (name, namespace) = (seed.name(), self.namespace());
        let client = self.beside.client.clone();
        let evacuation = publish::name(Kind::Evacuation, name);
        if let Err(e) = write::delete(&client, &namespace, &evacuation).await {
            warn!(seed = %name, error = %e, "evacuation: removing the plan of a recovered seed failed");
        }
        let t = self.seeds.entry(name.to_string()).or_default();
        *t = Tracked {
            failback: t.failback,
            ..Tracked::default()
        };
        let mut note = format!(
            "Seed judged healthy again at {}; its evacuation plan (ConfigMap {namespace}/{evacuation}) \
             is withdrawn",
            now.to_rfc3339_opts(SecondsFormat::Secs, true)
        );
        match failback {
            None => note.push_str("; no shoot had left it"),
            Some(Err(e)) => note.push_str(&format!("; no fail-back plan: {e}")),
            Some(Ok(plan)) => {
                let at = Occasion {
                    seed: name,
                    judged_at: now,
                    reasons: &[],
                    automatic: None,
                };
                let cm = publish::config_map(&namespace, Kind::Failback, &at, &plan);
                match write::apply(&client, &namespace, &cm).await {
                    Ok(()) => {
                        t.failback = true;
                        note.push_str("; ");
                        note.push_str(&publish::note(Kind::Failback, &namespace, &at, &plan));
                    }
                    Err(e) => {
                        note.push_str(&format!("; the fail-back plan was not published: {e}"))
                    }
                }
            }
        }
        info!(seed = %name, "{note}");
        let note = crate::controller::truncate_note(&note, publish::MAX_NOTE);
        self.event(seed, ("Normal", event::REASON_RECOVERED), &note, now)
            .await;
    }

    async fn event(&self, seed: &Seed, kind: (&str, &str), note: &str, now: DateTime<Utc>) {
        let sent = event::post(&self.beside.client, &self.instance, seed, kind, note, now).await;
        if let Err(e) = sent {
            warn!(seed = %seed.name(), error = %e, "evacuation: the event on the seed was not sent");
        }
    }

    /// On becoming the leader: every seed with a published evacuation plan is unhealthy, as
    /// judged then (its plan is computed again at the first check); every seed with a published
    /// fail-back plan keeps it.
    async fn recover(&mut self) -> Result<(), kube::Error> {
        let api: Api<ConfigMap> = Api::namespaced(self.beside.client.clone(), &self.namespace());
        let list = api
            .list(&ListParams::default().labels(publish::LABEL_PLAN))
            .await?;
        self.seeds.clear();
        for cm in list.items {
            let labels = cm.metadata.labels.clone().unwrap_or_default();
            let notes = cm.metadata.annotations.clone().unwrap_or_default();
            let Some(seed) = notes.get(publish::ANNOTATION_SEED) else {
                continue;
            };
            let t = self.seeds.entry(seed.clone()).or_default();
            if labels.get(publish::LABEL_PLAN).map(String::as_str) == Some(Kind::Failback.label()) {
                t.failback = true;
                continue;
            }
            let Some(judged_at) = notes
                .get(publish::ANNOTATION_JUDGED_AT)
                .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
                .map(|t| t.to_utc())
            else {
                continue;
            };
            let plan = cm.data.as_ref().and_then(|d| d.get(publish::PLAN_KEY));
            t.judge = Judge::Unhealthy { since: judged_at };
            t.judged_at = Some(judged_at);
            t.fingerprint = plan.and_then(|p| publish::fingerprint_json(p));
            t.left = plan.map(|p| publish::moved_shoots(p)).unwrap_or_default();
            info!(%seed, "evacuation: a published plan found; the seed is judged unhealthy since it was published");
        }
        Ok(())
    }
}

mod automatic;
