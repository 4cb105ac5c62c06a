//! The largest object gardener-apiserver accepts, of each kind the scheduler reads, for the test
//! that feeds it through every parser (tests/largest_object.rs) and the benchmark that records
//! the cost (benches/scheduler.rs, section `inputs`). `scale` 2 is the largest; 1 is half of it.

use std::collections::BTreeMap;

use gardener_scheduler::api::{ANNOTATION_GATES, ConfigMap};
use serde_json::{Value, json};

/// The most annotation bytes (keys and values) gardener-apiserver accepts on one object.
pub const ANNOTATION_LIMIT: usize = 256 * 1024;
/// The largest object etcd stores.
pub const OBJECT_LIMIT: usize = 1536 * 1024;

/// Gate `i`: three characters, so that 38,000 fit beside the other annotations.
pub fn gate(i: usize) -> String {
    const A: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    [i / 1296, i / 36 % 36, i % 36]
        .iter()
        .map(|&d| A[d] as char)
        .collect()
}

/// 19,000 gates per `scale`: the largest object (`scale` 2) lists 38,000.
pub fn gates(scale: usize) -> String {
    (0..19_000 * scale).map(gate).collect::<Vec<_>>().join(",")
}

/// Annotations: the gates and many notes, 256 KiB in all at `scale` 2.
pub fn annotations(scale: usize, extra: &[(&str, String)]) -> BTreeMap<String, String> {
    let mut a: BTreeMap<String, String> = extra
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    a.insert(ANNOTATION_GATES.into(), gates(scale));
    let mut size: usize = a.iter().map(|(k, v)| k.len() + v.len()).sum();
    let mut i = 0;
    while size + 140 < ANNOTATION_LIMIT * scale / 2 {
        let key = format!("notes.example.com/n{i:06}");
        size += key.len() + 110;
        a.insert(key, "v".repeat(110));
        i += 1;
    }
    a
}

/// Labels at their limits: a 253-character prefix is a DNS subdomain; here keys of 63-character
/// names under a prefix, and 63-character values.
pub fn labels(scale: usize) -> BTreeMap<String, String> {
    (0..500 * scale)
        .map(|i| {
            (
                format!("labels.example.com/{:a>57}{i:06}", ""),
                format!("{:v>57}{i:06}", ""),
            )
        })
        .collect()
}

pub fn metadata(
    scale: usize,
    name: &str,
    namespace: Option<&str>,
    extra: &[(&str, String)],
) -> Value {
    let mut m = json!({
        "name": name,
        "uid": "6c0f3a5e-0000-4000-8000-000000000001",
        "resourceVersion": "100",
        "creationTimestamp": "2026-11-01T00:00:00Z",
        "labels": labels(scale),
        "annotations": annotations(scale, extra),
    });
    if let Some(ns) = namespace {
        m["namespace"] = ns.into();
    }
    m
}

/// The rest of the object: worker pools, to about 1.5 MiB at `scale` 2.
pub fn workers(scale: usize) -> Vec<Value> {
    (0..2_600 * scale)
        .map(|i| {
            json!({
                "name": format!("w{i:06}"),
                "machine": {"type": "m5.large", "image": {"name": "gardenlinux", "version": "1592.1.0"}},
                "minimum": 1, "maximum": 3,
                "zones": ["eu-west-1a", "eu-west-1b", "eu-west-1c"],
            })
        })
        .collect()
}

pub fn shoot_json(scale: usize, extra: &[(&str, String)]) -> String {
    serde_json::to_string(&json!({
        "apiVersion": "core.gardener.cloud/v1beta1",
        "kind": "Shoot",
        "metadata": metadata(scale, "largest", Some("garden-dev"), extra),
        "spec": {
            "cloudProfile": {"name": "aws"},
            "region": "eu-west-1",
            "provider": {"type": "aws", "workers": workers(scale)},
            "networking": {"nodes": "10.180.0.0/16"},
        },
    }))
    .unwrap()
}

pub fn seed_json(scale: usize) -> String {
    let taints: Vec<Value> = (0..6_500 * scale)
        .map(|i| json!({"key": format!("example.com/t{i:06}"), "value": "v"}))
        .collect();
    let allocatable: BTreeMap<String, String> = (0..4_000 * scale)
        .map(|i| (format!("example.com/r{i:06}"), format!("{}Mi", 1000 + i)))
        .collect();
    serde_json::to_string(&json!({
        "apiVersion": "core.gardener.cloud/v1beta1",
        "kind": "Seed",
        "metadata": metadata(scale, "largest-seed", None, &[]),
        "spec": {
            "provider": {"type": "aws", "region": "eu-west-1", "zones": ["a", "b", "c"]},
            "networks": {"nodes": "10.0.0.0/16", "pods": "10.96.0.0/11", "services": "10.64.0.0/13"},
            "taints": taints,
        },
        "status": {
            "allocatable": allocatable,
            "conditions": [{"type": "GardenletReady", "status": "True"}],
            "lastOperation": {"type": "Reconcile", "state": "Succeeded"},
        },
    }))
    .unwrap()
}

pub fn machine_types(scale: usize) -> Vec<Value> {
    (0..3_400 * scale)
        .map(|i| json!({"name": format!("m{i:06}.large"), "cpu": "2", "gpu": "0", "memory": "8Gi", "usable": true}))
        .collect()
}

pub fn cloud_profile_json(scale: usize) -> String {
    let regions: Vec<Value> = (0..1_000 * scale)
        .map(|i| json!({"name": format!("region-{i:06}"), "zones": [{"name": "a"}, {"name": "b"}]}))
        .collect();
    serde_json::to_string(&json!({
        "apiVersion": "core.gardener.cloud/v1beta1",
        "kind": "CloudProfile",
        "metadata": metadata(scale, "aws", None, &[]),
        "spec": {"type": "aws", "regions": regions, "machineTypes": machine_types(scale),
                 "seedSelector": {"matchLabels": labels(scale)}},
    }))
    .unwrap()
}

pub fn namespaced_cloud_profile_json(scale: usize) -> String {
    serde_json::to_string(&json!({
        "apiVersion": "core.gardener.cloud/v1beta1",
        "kind": "NamespacedCloudProfile",
        "metadata": metadata(scale, "aws-dev", Some("garden-dev"), &[]),
        "spec": {"parent": {"kind": "CloudProfile", "name": "aws"}, "machineTypes": machine_types(scale)},
    }))
    .unwrap()
}

pub fn project_json(scale: usize) -> String {
    serde_json::to_string(&json!({
        "apiVersion": "core.gardener.cloud/v1beta1",
        "kind": "Project",
        "metadata": metadata(scale, "dev", None, &[]),
        "spec": {"namespace": "garden-dev"},
    }))
    .unwrap()
}

/// A region ConfigMap of about 1.5 MiB at `scale` 2: 500 rows per `scale`, each naming 100
/// regions of its own, so that the regions known grow with the object (100,000 at the largest).
pub fn region_config_map(scale: usize) -> ConfigMap {
    let data: BTreeMap<String, String> = (0..500 * scale)
        .map(|row| {
            let yaml: String = (0..100)
                .map(|j| format!("r{row:05}-{j:02}: {j}\n"))
                .collect();
            (format!("r{row:05}"), yaml)
        })
        .collect();
    serde_json::from_value(json!({
        "metadata": {
            "name": "regions", "namespace": "garden",
            "labels": {"scheduling.gardener.cloud/purpose": "region-config"},
            "annotations": {"scheduling.gardener.cloud/cloudprofiles": "aws"},
        },
        "data": data,
    }))
    .unwrap()
}

/// A carbon-intensity ConfigMap of about 0.5 MiB per `scale` (the API server takes 1 MiB of
/// data): 2,750 forecast points per `scale` over 50 locations, as the exporter writes them.
pub fn carbon_config_map(scale: usize) -> ConfigMap {
    let points: Vec<Value> = (0..2_750 * scale)
        .map(|i| {
            json!({
                "location": format!("L{:02}", i % 50),
                "timestamp": format!("2026-12-{:02}T{:02}:00:00Z", 1 + i / 50 / 24, i / 50 % 24),
                "duration": 60,
                "value": 30.0 + (i % 97) as f64,
            })
        })
        .collect();
    let payload = serde_json::to_vec(&points).unwrap();
    serde_json::from_value(json!({
        "metadata": {
            "name": "carbon", "namespace": "garden",
            "labels": {"scheduling.gardener.cloud/purpose": "carbon-intensity"},
        },
        "data": {"lastHeartbeatTime": "2026-12-01T00:00:00Z"},
        "binaryData": {"forecast": base64::Engine::encode(&base64::engine::general_purpose::STANDARD, &payload)},
    }))
    .unwrap()
}
