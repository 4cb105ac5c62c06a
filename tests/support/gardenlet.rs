//! Plays the gardenlets of a test landscape, through the API only: a shoot whose
//! `spec.seedName` differs from `status.seedName` is moved through `Migrate` (on the source) and
//! `Restore` (on the destination, `status.seedName` set when it begins), each taking half of a
//! configurable duration; a shoot named in `fail` gets `Migrate Failed` instead and stays. A
//! shoot without a status is given one as a first reconcile would (`status.seedName` =
//! `spec.seedName`, `Reconcile Succeeded`). It records every seed change it saw and the most
//! migrations under way at once.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kube::Client;
use kube::api::{ListParams, Patch, PatchParams};
use serde_json::{Value, json};

use gardener_scheduler::api::Shoot;

use super::raw_ns;

#[derive(Default)]
struct Record {
    /// shoot -> every (from, to) it was moved
    moves: BTreeMap<String, Vec<(String, String)>>,
    max_in_flight: usize,
}

pub struct FakeGardenlets {
    record: Arc<Mutex<Record>>,
    task: tokio::task::JoinHandle<()>,
}

struct Migration {
    to: String,
    began: Instant,
    restoring: bool,
}

fn op(type_: &str, state: &str) -> Value {
    json!({"type": type_, "state": state, "progress": 50,
           "description": format!("{type_} {state} (fake gardenlet)"),
           "lastUpdateTime": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)})
}

impl FakeGardenlets {
    /// Watches the shoots of `namespace`; every migration takes `duration`.
    pub fn start(client: Client, namespace: &str, duration: Duration, fail: &[&str]) -> Self {
        let record = Arc::new(Mutex::new(Record::default()));
        let fail: BTreeSet<String> = fail.iter().map(|s| s.to_string()).collect();
        let api = raw_ns::<Shoot>(&client, namespace);
        let rec = record.clone();
        let task = tokio::spawn(async move {
            let mut under_way: HashMap<String, Migration> = HashMap::new();
            let status = |v: Value| Patch::Merge(json!({ "status": v }));
            loop {
                let Ok(list) = api.list(&ListParams::default()).await else {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                };
                for s in list.items {
                    let name = s.metadata.name.clone().unwrap_or_default();
                    let spec = s.data["spec"]["seedName"].as_str().map(str::to_string);
                    let st = s.data["status"]["seedName"].as_str().map(str::to_string);
                    let pp = PatchParams::default();
                    let Some(spec) = spec else { continue };
                    let Some(st) = st else {
                        let _ = api
                            .patch_status(
                                &name,
                                &pp,
                                &status(json!({
                                "seedName": spec, "lastOperation": op("Reconcile", "Succeeded")})),
                            )
                            .await;
                        continue;
                    };
                    if let Some(m) = under_way.get_mut(&name) {
                        let half = duration / 2;
                        if !m.restoring && m.began.elapsed() >= half {
                            if fail.contains(&name) {
                                let _ = api
                                    .patch_status(
                                        &name,
                                        &pp,
                                        &status(json!({
                                        "lastOperation": op("Migrate", "Failed")})),
                                    )
                                    .await;
                                under_way.remove(&name);
                                continue;
                            }
                            let _ = api
                                .patch_status(&name, &pp, &status(json!({
                                    "seedName": m.to, "lastOperation": op("Restore", "Processing")})))
                                .await;
                            m.restoring = true;
                        } else if m.restoring && m.began.elapsed() >= duration {
                            let _ = api
                                .patch_status(
                                    &name,
                                    &pp,
                                    &status(json!({
                                    "lastOperation": op("Restore", "Succeeded")})),
                                )
                                .await;
                            under_way.remove(&name);
                        }
                        continue;
                    }
                    let failed = s.data["status"]["lastOperation"]["state"] == "Failed";
                    if spec != st && !failed {
                        let _ = api
                            .patch_status(
                                &name,
                                &pp,
                                &status(json!({
                                "lastOperation": op("Migrate", "Processing")})),
                            )
                            .await;
                        under_way.insert(
                            name.clone(),
                            Migration {
                                to: spec.clone(),
                                began: Instant::now(),
                                restoring: false,
                            },
                        );
                        let mut r = rec.lock().unwrap();
                        r.moves.entry(name).or_default().push((st, spec));
                        r.max_in_flight = r.max_in_flight.max(under_way.len());
                    }
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        });
        FakeGardenlets { record, task }
    }

    /// shoot -> every (from, to) seen, in order.
    pub fn moves(&self) -> BTreeMap<String, Vec<(String, String)>> {
        self.record.lock().unwrap().moves.clone()
    }

    /// The most migrations under way at once.
    pub fn max_in_flight(&self) -> usize {
        self.record.lock().unwrap().max_in_flight
    }
}

impl Drop for FakeGardenlets {
    fn drop(&mut self) {
        self.task.abort();
    }
}
