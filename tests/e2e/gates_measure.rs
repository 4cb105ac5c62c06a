//! How a shoot with the most gates the API server accepts, changed twice a second, affects
//! other shoots' binds.

use std::time::{Duration, Instant};

use crate::support::*;
use gardener_scheduler::api::Shoot;
use kube::api::{Patch, PatchParams};
use serde_json::json;

async fn bind_latencies(client: &kube::Client, prefix: &str, n: usize) -> Vec<f64> {
    let mut out = Vec::new();
    for i in 0..n {
        let name = format!("{prefix}-{i}");
        let t = Instant::now();
        create_shoot(client, "dev", &name).await;
        loop {
            if seed_of(&get_shoot(client, "dev", &name).await).is_some() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        out.push(t.elapsed().as_secs_f64() * 1000.0);
        tokio::time::sleep(Duration::from_millis(137)).await;
    }
    out.sort_by(|a, b| a.partial_cmp(b).unwrap());
    out
}

/// A measurement, not a check (run by hand, see docs/performance.md "The largest object"): the
/// time from creating a shoot to reading it bound, 40 shoots one after the other, while nothing
/// else changes, while a shoot with a 228 KB annotation that is not gates is relabelled every
/// 0.5 s (what the API servers' own work costs), and while a shoot with 38,000 gates is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement: prints figures, asserts none"]
async fn measure_bind_times_beside_a_shoot_with_38000_gates_relabelled_every_half_second() {
    let (api, client) = ApiServer::start_with_landscape("gmeasure", "dev").await;
    create_seed(&client, "s1", 1000, &[]).await;
    let mut s = Scheduler::start(
        &api,
        "gm",
        SchedulerOptions {
            rust_log: Some("info"),
            ..Default::default()
        },
    );
    s.wait_ready().await;
    let gates: Vec<String> = (0..38_000).map(|i| format!("g{:04x}", i)).collect();
    let value = gates.join(",");
    println!("gates bytes {}", value.len());
    let mut m = shoot_manifest("dev", "hostile");
    m["metadata"]["annotations"] = json!({"scheduling.gardener.cloud/gates": value.clone()});
    create(&raw_ns::<Shoot>(&client, "garden-dev"), m).await;
    let mut m = shoot_manifest("dev", "control");
    m["metadata"]["annotations"] = json!({"example.com/notes": value});
    create(&raw_ns::<Shoot>(&client, "garden-dev"), m).await;
    let base = bind_latencies(&client, "base", 40).await;
    let mut results = vec![("baseline", base)];
    for who in ["control", "hostile"] {
        let c2 = client.clone();
        let w = who.to_string();
        let task = tokio::spawn(async move {
            for i in 0.. {
                let _ = raw_ns::<Shoot>(&c2, "garden-dev")
                    .patch(
                        &w,
                        &PatchParams::default(),
                        &Patch::Merge(&json!({"metadata": {"labels": {"tick": i.to_string()}}})),
                    )
                    .await;
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        });
        tokio::time::sleep(Duration::from_secs(2)).await;
        results.push((who, bind_latencies(&client, who, 40).await));
        task.abort();
    }
    let med = |v: &Vec<f64>| v[v.len() / 2];
    let p90 = |v: &Vec<f64>| v[v.len() * 9 / 10];
    for (who, v) in &results {
        println!(
            "RESULT {who:9} median {:.1} ms p90 {:.1} max {:.1}",
            med(v),
            p90(v),
            v[v.len() - 1]
        );
    }
    println!(
        "RESULT load {}",
        std::fs::read_to_string("/proc/loadavg").unwrap()
    );
}
