//! The loop beside the scheduler: every `checkPeriod`, while this process leads, the seeds are
//! read and judged ([`health`](super::health)); for a seed judged unhealthy a drain plan is
//! computed from the landscape as it is (the planner of `plan drain`) and published
//! ([`publish`](super::publish)), again every `replanPeriod`; once the seed is judged healthy
//! again its plan is withdrawn. What the loop knows is rebuilt from the published ConfigMaps
//! when this process becomes the leader.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, SecondsFormat, Utc};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams};
use tracing::{info, warn};

use super::event;
use super::health::{Judge, Spans, Transition, observe};
use super::publish::{self, Kind, Occasion};
use crate::api::Seed;
use crate::chain::Selection;
use crate::controller::{Beside, FIELD_MANAGER, default_identity};
use crate::plan;
use crate::regions::Regions;
use crate::simulate;

/// The drain settings of a published plan: those of `plan drain` without flags.
pub const PLAN_SETTINGS: plan::windows::Settings = plan::windows::Settings {
    horizon_seconds: 168 * 3600,
    max_concurrent: 2,
    move_duration_seconds: 30 * 60,
};

/// The loop, when `schedulers.shoot.evacuation.enabled`; for
/// [`crate::controller::run_with_signals`].
pub fn task(beside: Beside) -> Option<futures::future::BoxFuture<'static, ()>> {
    if !beside.config.schedulers.shoot.evacuation.enabled {
        return None;
    }
    let loop_ = Evacuator::new(beside);
    Some(Box::pin(loop_.run()))
}

/// The landscape read once, and a drain plan for each of `seeds` (the `unhealthy` seeds drained) (the planner of `plan drain`,
/// its explanations cut to the best seeds). Runs on the blocking pool.
fn plans(
    handle: &tokio::runtime::Handle,
    client: &kube::Client,
    chain: &crate::chain::ProfileChain,
    config: &crate::config::SchedulerConfiguration,
    regions: &Regions,
    (seeds, unhealthy): (&[String], &[String]),
    now: DateTime<Utc>,
) -> Result<BTreeMap<String, Result<plan::Plan, plan::PlanError>>, String> {
    let live = handle.block_on(simulate::read_live(
        client,
        simulate::PAGE_SIZE,
        simulate::Limits::default(),
        &chain.cluster_data(),
        true,
        &mut |_| {},
    ));
    let landscape = live
        .map_err(|e| format!("reading the landscape: {e}"))?
        .landscape;
    let profile = match chain.select(now) {
        Selection::Profile { profile, .. } => profile,
        Selection::Deferred { reason, .. } => {
            return Err(format!("no profile is active: {reason}"));
        }
    };
    let cx = plan::Context {
        landscape: &landscape,
        profile,
        scheduler_names: &config.schedulers.shoot.scheduler_names,
        regions,
        now,
        explain: Some(plan::EXPLAIN_TOP),
        live_migration: false,
        prefer_live: false,
        seed_index: plan::SeedIndex::default(),
    };
    // Every unhealthy seed is drained in each plan: none is a destination, and the shoots of
    // the others take their room on the destinations too. Each seed's plan keeps its own moves.
    Ok(seeds
        .iter()
        .map(|seed| {
            let plan = plan::drain(&cx, unhealthy, PLAN_SETTINGS.clone())
                .map(|p| publish::leaving(p, seed));
            (seed.clone(), plan)
        })
        .collect())
}

/// What the loop keeps per seed.
#[derive(Debug, Default)]
struct Tracked {
    judge: Judge,
    /// Why the seed fails, as last seen while unhealthy.
    reasons: Vec<String>,
    /// When it was judged unhealthy.
    judged_at: Option<DateTime<Utc>>,
    /// When its plan was last published.
    planned_at: Option<DateTime<Utc>>,
    /// The published plan's moves, to tell an update from the same plan again.
    fingerprint: Option<u64>,
}

impl Tracked {
    /// Whether the seed's plan is to be computed now.
    fn due(&self, now: DateTime<Utc>, replan: std::time::Duration) -> bool {
        self.judge.is_unhealthy()
            && self.planned_at.is_none_or(|at| {
                chrono::Duration::from_std(replan).is_ok_and(|replan| now - at >= replan)
            })
    }
}

struct Evacuator {
    beside: Beside,
    regions: Regions,
    instance: String,
    seeds: BTreeMap<String, Tracked>,
    leading: bool,
}

impl Evacuator {
    fn new(beside: Beside) -> Self {
        let regions = Regions::with_overrides(&beside.config.schedulers.shoot.regions);
        Evacuator {
            beside,
            regions,
            instance: default_identity(),
            seeds: BTreeMap::new(),
            leading: false,
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

    fn namespace(&self) -> &str {
        &self.beside.config.schedulers.shoot.evacuation.namespace
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
        let cfg = &self.beside.config.schedulers.shoot;
        let spans = Spans {
            unhealthy_after: cfg.evacuation.after,
            healthy_after: cfg.failback.after,
        };
        let present: BTreeSet<&str> = seeds.iter().map(Seed::name).collect();
        let gone: Vec<String> = self
            .seeds
            .keys()
            .filter(|s| !present.contains(s.as_str()))
            .cloned()
            .collect();
        for seed in gone {
            self.beside.metrics.forget(&seed);
            self.seeds.remove(&seed);
        }
        let mut due = Vec::new();
        let mut recovered = Vec::new();
        for seed in &seeds {
            if seed.metadata.deletion_timestamp.is_some() {
                continue;
            }
            let name = seed.name().to_string();
            let seen = observe(seed, now, cfg.evacuation.heartbeat_timeout);
            let t = self.seeds.entry(name.clone()).or_default();
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
        if !due.is_empty() {
            self.publish_plans(&due, now).await;
        }
        for seed in recovered {
            self.withdraw(seed, now).await;
        }
        // every seed judged has its series: 0 until its plan is published
        for (name, t) in &self.seeds {
            let ready = t.judge.is_unhealthy() && t.planned_at.is_some();
            self.beside.metrics.set_ready(name, ready);
        }
    }

    /// Computes and publishes the plans of `due`, from one read of the landscape.
    async fn publish_plans(&mut self, due: &[&Seed], now: DateTime<Utc>) {
        let names: Vec<String> = due.iter().map(|s| s.name().to_string()).collect();
        let unhealthy: Vec<String> = self
            .seeds
            .iter()
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
        // The read and the plans off the async workers: a plan of a large seed is CPU work.
        let job = tokio::task::spawn_blocking(move || {
            plans(
                &handle,
                &client,
                &chain,
                &config,
                &regions,
                (&names, &unhealthy),
                now,
            )
        });
        let mut plans = match job.await {
            Ok(Ok(plans)) => plans,
            Ok(Err(e)) => {
                warn!(error = %e, "evacuation: no plan computed; planning again at the next check");
                return;
            }
            Err(e) => {
                warn!(error = %e, "evacuation: planning stopped; planning again at the next check");
                return;
            }
        };
        let cfg = &self.beside.config.schedulers.shoot;
        for seed in due {
            let name = seed.name();
            let plan = match plans.remove(name) {
                Some(Ok(p)) => p,
                Some(Err(e)) => {
                    warn!(seed = %name, error = %e, "evacuation: planning failed");
                    continue;
                }
                None => continue,
            };
            let t = self.seeds.entry(name.to_string()).or_default();
            let at = Occasion {
                seed: name,
                judged_at: t.judged_at.unwrap_or(now),
                reasons: &t.reasons,
            };
            let namespace = &cfg.evacuation.namespace;
            let cm = publish::config_map(namespace, Kind::Evacuation, &at, &plan);
            let cm_name = publish::name(Kind::Evacuation, name);
            let pp = PatchParams::apply(FIELD_MANAGER).force();
            let api: Api<ConfigMap> = Api::namespaced(self.beside.client.clone(), namespace);
            if let Err(e) = api.patch(&cm_name, &pp, &Patch::Apply(&cm)).await {
                warn!(seed = %name, configmap = %format!("{namespace}/{cm_name}"), error = %e,
                      "evacuation: publishing the plan failed; trying again at the next check");
                continue;
            }
            let fingerprint = publish::fingerprint(&plan);
            let reason = match t.fingerprint {
                None => Some(event::REASON_PUBLISHED),
                Some(f) if f != fingerprint => Some(event::REASON_UPDATED),
                Some(_) => None,
            };
            let note = publish::note(Kind::Evacuation, namespace, &at, &plan);
            t.planned_at = Some(now);
            t.fingerprint = Some(fingerprint);
            self.beside.metrics.set_ready(name, true);
            info!(seed = %name, configmap = %format!("{namespace}/{cm_name}"), moves = plan.moves.len(),
                  blocked = plan.blocked.len(), "evacuation plan published");
            if let Some(reason) = reason {
                let sent = event::post(
                    &self.beside.client,
                    &self.instance,
                    seed,
                    ("Warning", reason),
                    &note,
                    now,
                )
                .await;
                if let Err(e) = sent {
                    warn!(seed = %name, error = %e, "evacuation: the event on the seed was not sent");
                }
            }
        }
    }

    /// The seed is healthy again: its evacuation plan is withdrawn.
    async fn withdraw(&mut self, seed: &Seed, now: DateTime<Utc>) {
        let name = seed.name();
        let namespace = self.namespace().to_string();
        let cm_name = publish::name(Kind::Evacuation, name);
        let api: Api<ConfigMap> = Api::namespaced(self.beside.client.clone(), &namespace);
        match api.delete(&cm_name, &DeleteParams::default()).await {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 404 => {}
            Err(e) => {
                warn!(seed = %name, error = %e, "evacuation: removing the plan of a recovered seed failed");
            }
        }
        self.beside.metrics.set_ready(name, false);
        if let Some(t) = self.seeds.get_mut(name) {
            *t = Tracked::default();
        }
        info!(seed = %name, "seed judged healthy again; its evacuation plan is withdrawn");
        let note = format!(
            "Seed judged healthy again at {}; its evacuation plan (ConfigMap {namespace}/{cm_name}) \
             is withdrawn",
            now.to_rfc3339_opts(SecondsFormat::Secs, true)
        );
        let sent = event::post(
            &self.beside.client,
            &self.instance,
            seed,
            ("Normal", event::REASON_RECOVERED),
            &note,
            now,
        )
        .await;
        if let Err(e) = sent {
            warn!(seed = %name, error = %e, "evacuation: the event on the seed was not sent");
        }
    }

    /// On becoming the leader: every seed with a published evacuation plan is unhealthy, as
    /// judged then; its plan is computed again at the first check.
    async fn recover(&mut self) -> Result<(), kube::Error> {
        let api: Api<ConfigMap> = Api::namespaced(self.beside.client.clone(), self.namespace());
        let selector = format!("{}={}", publish::LABEL_PLAN, Kind::Evacuation.label());
        let list = api.list(&ListParams::default().labels(&selector)).await?;
        self.seeds.clear();
        for cm in list.items {
            let notes = cm.metadata.annotations.unwrap_or_default();
            let Some(seed) = notes.get(publish::ANNOTATION_SEED) else {
                continue;
            };
            let Some(judged_at) = notes
                .get(publish::ANNOTATION_JUDGED_AT)
                .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
                .map(|t| t.to_utc())
            else {
                continue;
            };
            let plan = cm.data.as_ref().and_then(|d| d.get(publish::PLAN_KEY));
            self.seeds.insert(
                seed.clone(),
                Tracked {
                    judge: Judge::Unhealthy { since: judged_at },
                    judged_at: Some(judged_at),
                    fingerprint: plan.and_then(|p| publish::fingerprint_json(p)),
                    ..Tracked::default()
                },
            );
            info!(%seed, "evacuation: a published plan found; the seed is judged unhealthy since it was published");
        }
        Ok(())
    }
}
