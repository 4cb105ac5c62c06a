//! Seeded landscapes for the differential test: seeds, shoots, CloudProfiles,
//! NamespacedCloudProfiles, Projects and region ConfigMaps drawn from small pools, so that the
//! values the filters read collide often (same regions, overlapping networks, matching labels).
//! The same seed always gives the same landscape.

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{Map, Value, json};

/// One generated landscape.
pub struct Generated {
    /// `SameRegion` or `MinimalDistance`.
    pub strategy: &'static str,
    /// The manifests, as a user would write them (gardener-apiserver's defaults not applied).
    pub objects: Vec<Value>,
}

const PROVIDERS: &[&str] = &["aws", "gcp", "azure"];
/// Regions, some sharing a prefix, one that is no label value.
const REGIONS: &[&str] = &[
    "eu-west-1",
    "eu-west-2",
    "eu-central-1",
    "us-east-1",
    "ap-south-1",
    "EU-WEST-1",
    "Europe West/1",
];
const ZONES: &[&str] = &["z1", "z2", "z3", "z4"];
const TAINT_KEYS: &[&str] = &["seed.gardener.cloud/protected", "dedicated", "gpu"];
const TAINT_VALUES: &[&str] = &["a", "b"];
const LABEL_KEYS: &[&str] = &["env", "tier"];
const LABEL_VALUES: &[&str] = &["prod", "dev", "edge"];
const ACCESS: &[&str] = &[
    "eu-access-only",
    "support.gardener.cloud/eu-access-for-cluster-nodes",
];
/// Namespaces with the Project that claims each (`garden` is the garden namespace).
const NAMESPACES: &[(&str, &str)] = &[
    ("garden-dev", "dev"),
    ("garden-ops", "ops"),
    ("garden", "garden"),
];
const DOMAINS: &[&str] = &["a.example.com", "b.example.com"];
/// `status.allocatable.shoots` in the forms apimachinery accepts.
const QUANTITIES: &[&str] = &[
    "0", "1", "2", "3", "5", "1e1", "1500m", "0.5", "2k", "1Ki", "+2", "3.0", "2e0", "1E1", "100m",
    "-1", "9Ei",
];
const SEED_PODS: &[&str] = &[
    "100.96.0.0/11",
    "10.96.0.0/11",
    "10.0.0.0/16",
    "fd00:10:1::/56",
];
const SEED_SERVICES: &[&str] = &["100.64.0.0/13", "10.112.0.0/13", "fd00:10:2::/112"];
const SEED_NODES: &[&str] = &["10.250.0.0/16", "10.0.0.0/16", "fd00:10:3::/64"];
const DEFAULT_PODS: &[&str] = &["100.128.0.0/11", "10.96.0.0/11", "fd00:20::/56"];
const DEFAULT_SERVICES: &[&str] = &["100.72.0.0/13", "10.112.0.0/13", "fd00:30::/112"];
const SHOOT_NODES: &[&str] = &[
    "10.250.0.0/16",
    "10.180.0.0/16",
    "10.0.0.0/24",
    "fd00:40::/64",
    "fd00:10:3::/80",
];
const SHOOT_PODS: &[&str] = &[
    "100.96.0.0/11",
    "100.128.0.0/11",
    "10.200.0.0/16",
    "fd00:50::/56",
];
const SHOOT_SERVICES: &[&str] = &[
    "100.64.0.0/13",
    "100.72.0.0/13",
    "10.210.0.0/16",
    "fd00:60::/112",
];

fn pick<T: Copy>(rng: &mut ChaCha8Rng, from: &[T]) -> T {
    *from.choose(rng).expect("a pool is never empty")
}

fn chance(rng: &mut ChaCha8Rng, p: f64) -> bool {
    rng.gen_bool(p)
}

fn some<T: Copy>(rng: &mut ChaCha8Rng, from: &[T], max: usize) -> Vec<T> {
    let n = rng.gen_range(0..=max.min(from.len()));
    from.choose_multiple(rng, n).copied().collect()
}

fn timestamp(minute: usize) -> String {
    format!("2026-11-01T{:02}:{:02}:00Z", minute / 60 % 24, minute % 60)
}

fn labels(rng: &mut ChaCha8Rng) -> Map<String, Value> {
    let mut m = Map::new();
    for k in LABEL_KEYS {
        if chance(rng, 0.6) {
            m.insert((*k).into(), pick(rng, LABEL_VALUES).into());
        }
    }
    m
}

/// A label selector: matchLabels, matchExpressions of every operator, or both.
fn label_selector(rng: &mut ChaCha8Rng) -> Value {
    let mut sel = Map::new();
    if chance(rng, 0.5) {
        sel.insert(
            "matchLabels".into(),
            json!({ pick(rng, LABEL_KEYS): pick(rng, LABEL_VALUES) }),
        );
    }
    if chance(rng, 0.5) {
        let op = pick(rng, &["In", "NotIn", "Exists", "DoesNotExist"]);
        let mut e = json!({"key": pick(rng, LABEL_KEYS), "operator": op});
        if op == "In" || op == "NotIn" {
            e["values"] = json!(
                some(rng, LABEL_VALUES, 2)
                    .into_iter()
                    .chain([pick(rng, LABEL_VALUES)])
                    .collect::<Vec<_>>()
            );
        }
        sel.insert("matchExpressions".into(), json!([e]));
    }
    Value::Object(sel)
}

fn condition(kind: &str, status: &str) -> Value {
    json!({
        "type": kind, "status": status, "reason": "Generated", "message": "generated",
        "lastTransitionTime": "2026-11-01T00:00:00Z", "lastUpdateTime": "2026-11-01T00:00:00Z",
    })
}

fn condition_status(rng: &mut ChaCha8Rng) -> Option<&'static str> {
    match rng.gen_range(0..20) {
        0 => None,
        1 => Some("False"),
        2 => Some("Unknown"),
        _ => Some("True"),
    }
}

fn seed_object(
    rng: &mut ChaCha8Rng,
    i: usize,
    providers: &[&'static str],
    regions: &[&'static str],
) -> Value {
    let name = format!("seed-{i}");
    let mut meta = json!({"name": name, "labels": labels(rng)});
    if chance(rng, 0.05) {
        meta["deletionTimestamp"] = json!("2026-11-30T00:00:00Z");
        meta["finalizers"] = json!(["gardener"]);
    }
    if chance(rng, 0.05) {
        meta["annotations"] = json!({"shoot.gardener.cloud/emergency-stop-reconciliations": pick(rng, &["true", "false"])});
    }
    let mut provider = json!({"type": pick(rng, providers), "region": pick(rng, regions)});
    let zones = some(rng, ZONES, 4);
    if !zones.is_empty() {
        provider["zones"] = json!(zones);
    }
    let mut networks = json!({"pods": pick(rng, SEED_PODS), "services": pick(rng, SEED_SERVICES)});
    if chance(rng, 0.5) {
        networks["nodes"] = json!(pick(rng, SEED_NODES));
    }
    match rng.gen_range(0..100) {
        0..50 => {}
        50 => networks["shootDefaults"] = json!({"pods": pick(rng, DEFAULT_PODS)}),
        51 => networks["shootDefaults"] = json!({"services": pick(rng, DEFAULT_SERVICES)}),
        _ => {
            networks["shootDefaults"] = json!({
                "pods": pick(rng, DEFAULT_PODS),
                "services": pick(rng, DEFAULT_SERVICES),
            })
        }
    }
    let mut spec = json!({
        "provider": provider,
        "networks": networks,
        "ingress": {"domain": format!("ingress.{name}.example.com"), "controller": {"kind": "nginx"}},
    });
    if chance(rng, 0.3) {
        spec["dns"] = json!({"defaults": [{
            "type": "aws-route53", "domain": pick(rng, DOMAINS),
            "credentialsRef": {"apiVersion": "v1", "kind": "Secret", "name": "dns", "namespace": "garden"},
        }]});
    }
    let max = if chance(rng, 0.5) { 0 } else { 2 };
    let taints: Vec<Value> = some(rng, TAINT_KEYS, max)
        .into_iter()
        .map(|k| match chance(rng, 0.5) {
            true => json!({"key": k}),
            false => json!({"key": k, "value": pick(rng, TAINT_VALUES)}),
        })
        .collect();
    if !taints.is_empty() {
        spec["taints"] = json!(taints);
    }
    let access = some(rng, ACCESS, 2);
    if !access.is_empty() && chance(rng, 0.6) {
        spec["accessRestrictions"] = json!(
            access
                .iter()
                .map(|a| json!({"name": a}))
                .collect::<Vec<_>>()
        );
    }
    let mut settings = Map::new();
    if chance(rng, 0.1) {
        settings.insert("scheduling".into(), json!({"visible": chance(rng, 0.3)}));
    }
    if chance(rng, 0.4) {
        settings.insert(
            "zoneSelection".into(),
            json!({"mode": pick(rng, &["Prefer", "Enforce"])}),
        );
    }
    if !settings.is_empty() {
        spec["settings"] = Value::Object(settings);
    }
    let backup = chance(rng, 0.3);
    if backup {
        spec["backup"] = json!({"provider": pick(rng, providers),
            "credentialsRef": {"apiVersion": "v1", "kind": "Secret", "name": "backup", "namespace": "garden"}});
    }
    let mut status = Map::new();
    if chance(rng, 0.95) {
        status.insert(
            "lastOperation".into(),
            json!({
                "type": "Reconcile", "state": "Succeeded", "progress": 100, "description": "done",
                "lastUpdateTime": "2026-11-01T00:00:00Z",
            }),
        );
    }
    let mut conditions = Vec::new();
    if let Some(s) = condition_status(rng) {
        conditions.push(condition("GardenletReady", s));
    }
    if (backup || chance(rng, 0.1))
        && let Some(s) = condition_status(rng)
    {
        conditions.push(condition("BackupBucketsReady", s));
    }
    status.insert("conditions".into(), json!(conditions));
    if chance(rng, 0.4) {
        status.insert(
            "allocatable".into(),
            json!({"shoots": pick(rng, QUANTITIES)}),
        );
    }
    json!({
        "apiVersion": "core.gardener.cloud/v1beta1", "kind": "Seed",
        "metadata": meta, "spec": spec, "status": status,
    })
}

fn cloud_profile_spec(rng: &mut ChaCha8Rng, provider: &str, regions: &[&'static str]) -> Value {
    let mut spec = json!({
        "type": provider,
        "kubernetes": {"versions": [{"version": "1.31.1"}]},
        "machineImages": [{"name": "gardenlinux", "versions": [{"version": "1.0.0"}]}],
        "machineTypes": [{"name": "m5.large", "cpu": "2", "gpu": "0", "memory": "8Gi"}],
        "regions": regions.iter().map(|r| json!({"name": r})).collect::<Vec<_>>(),
    });
    if chance(rng, 0.25) {
        let mut sel = label_selector(rng);
        if chance(rng, 0.5) {
            let types: Vec<&str> = match chance(rng, 0.2) {
                true => vec!["*"],
                false => some(rng, PROVIDERS, 2),
            };
            sel["providerTypes"] = json!(types);
        }
        spec["seedSelector"] = sel;
    }
    spec
}

fn shoot(
    rng: &mut ChaCha8Rng,
    i: usize,
    profiles: &[(String, &'static str, Option<String>)],
    seeds: &[String],
    regions: &[&'static str],
    bound: bool,
) -> Value {
    let (ns, _) = pick(rng, NAMESPACES);
    let name = format!("shoot-{i}");
    let mut meta = json!({"name": name, "namespace": ns, "creationTimestamp": timestamp(rng.gen_range(0..50))});
    if chance(rng, 0.04) {
        meta["deletionTimestamp"] = json!("2026-11-30T00:00:00Z");
        meta["finalizers"] = json!(["gardener"]);
    }
    let (profile, provider, namespaced) = profiles.choose(rng).expect("a profile").clone();
    let provider = if chance(rng, 0.15) {
        pick(rng, PROVIDERS)
    } else {
        provider
    };
    let workerless = chance(rng, 0.1);
    let mut spec = json!({
        "region": pick(rng, regions),
        "kubernetes": {"version": "1.31.1"},
        "provider": {"type": provider},
    });
    match (&namespaced, rng.gen_range(0..3)) {
        (Some(ncp), 0) if ns == "garden-dev" => {
            spec["cloudProfile"] = json!({"kind": "NamespacedCloudProfile", "name": ncp})
        }
        (_, 1) => spec["cloudProfile"] = json!({"kind": "CloudProfile", "name": profile}),
        _ => spec["cloudProfileName"] = json!(profile),
    }
    if !workerless {
        let pools = rng.gen_range(1..=2);
        let workers: Vec<Value> = (0..pools)
            .map(|p| {
                let mut w = json!({"name": format!("pool-{p}"), "machine": {"type": "m5.large"}, "minimum": 1, "maximum": 2});
                let zones = some(rng, ZONES, 2);
                if !zones.is_empty() {
                    w["zones"] = json!(zones);
                }
                w
            })
            .collect();
        spec["provider"]["workers"] = json!(workers);
    }
    let mut networking = Map::new();
    if !workerless {
        networking.insert("type".into(), json!("calico"));
    }
    if chance(rng, 0.7) {
        networking.insert("nodes".into(), json!(pick(rng, SHOOT_NODES)));
    }
    if chance(rng, 0.3) {
        networking.insert("pods".into(), json!(pick(rng, SHOOT_PODS)));
    }
    if chance(rng, 0.3) {
        networking.insert("services".into(), json!(pick(rng, SHOOT_SERVICES)));
    }
    match rng.gen_range(0..10) {
        0 => {
            networking.insert("ipFamilies".into(), json!(["IPv6"]));
        }
        1 => {
            networking.insert("ipFamilies".into(), json!(["IPv4", "IPv6"]));
        }
        _ => {}
    }
    spec["networking"] = Value::Object(networking);
    if chance(rng, 0.2) {
        spec["purpose"] = json!(pick(
            rng,
            &["testing", "evaluation", "production", "development"]
        ));
    }
    if chance(rng, 0.12) {
        let mut sel = label_selector(rng);
        if chance(rng, 0.3) {
            sel["providerTypes"] = json!(some(rng, PROVIDERS, 2));
        }
        spec["seedSelector"] = sel;
    }
    let tolerations: Vec<Value> = some(rng, TAINT_KEYS, 2)
        .into_iter()
        .map(|k| match chance(rng, 0.5) {
            true => json!({"key": k}),
            false => json!({"key": k, "value": pick(rng, TAINT_VALUES)}),
        })
        .collect();
    if !tolerations.is_empty() {
        spec["tolerations"] = json!(tolerations);
    }
    let access = some(rng, ACCESS, 1);
    if !access.is_empty() && chance(rng, 0.3) {
        spec["accessRestrictions"] = json!(
            access
                .iter()
                .map(|a| json!({"name": a}))
                .collect::<Vec<_>>()
        );
    }
    if chance(rng, 0.2) {
        spec["controlPlane"] = json!({"highAvailability": {"failureTolerance": {"type": pick(rng, &["zone", "node"])}}});
    }
    if chance(rng, 0.2) {
        let project = NAMESPACES
            .iter()
            .find(|(n, _)| *n == ns)
            .map(|(_, p)| *p)
            .unwrap_or("dev");
        let domain = match rng.gen_range(0..4) {
            0 => format!("{name}.{project}.{}", pick(rng, DOMAINS)),
            1 => format!("other.{project}.{}", pick(rng, DOMAINS)),
            2 => format!("{name}.{project}.custom.example.org"),
            _ => pick(rng, DOMAINS).to_string(),
        };
        spec["dns"] = json!({"domain": domain});
    }
    if chance(rng, 0.03) {
        spec["schedulerName"] = json!(pick(rng, &["default-scheduler", "other-scheduler"]));
    }
    let mut status = Map::new();
    if bound {
        spec["seedName"] = json!(seeds.choose(rng).expect("a seed"));
        if chance(rng, 0.1) {
            status.insert("seedName".into(), json!(seeds.choose(rng).expect("a seed")));
        }
        if chance(rng, 0.1) {
            status.insert("networking".into(), json!({
                "nodes": [pick(rng, SHOOT_NODES)], "pods": [pick(rng, SHOOT_PODS)], "services": [pick(rng, SHOOT_SERVICES)],
            }));
        }
    } else if chance(rng, 0.05) {
        status.insert("networking".into(), json!({
            "nodes": [pick(rng, SHOOT_NODES)], "pods": [pick(rng, SHOOT_PODS)], "services": [pick(rng, SHOOT_SERVICES)],
        }));
    }
    let mut out = json!({
        "apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
        "metadata": meta, "spec": spec,
    });
    if !status.is_empty() {
        out["status"] = Value::Object(status);
    }
    out
}

/// A region ConfigMap row: distances from one region to some others (sometimes malformed).
fn region_row(rng: &mut ChaCha8Rng, regions: &[&'static str]) -> String {
    if chance(rng, 0.03) {
        return "not: [a, distance".into();
    }
    let mut row = String::new();
    for r in some(rng, regions, regions.len()) {
        row.push_str(&format!(
            "{}: {}\n",
            serde_json::to_string(r).expect("a string"),
            rng.gen_range(0..4) * 10
        ));
    }
    row
}

/// The landscape of `seed`.
pub fn generate(seed: u64) -> Generated {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let rng = &mut rng;
    let strategy = if chance(rng, 0.5) {
        "SameRegion"
    } else {
        "MinimalDistance"
    };
    // a few providers and regions per landscape, so that they meet
    let mut providers = some(rng, PROVIDERS, 2);
    if providers.is_empty() {
        providers.push(pick(rng, PROVIDERS));
    }
    let mut regions = some(rng, REGIONS, 3);
    if regions.is_empty() {
        regions.push(pick(rng, REGIONS));
    }
    let mut objects = Vec::new();
    for (ns, project) in NAMESPACES {
        if *ns != "garden-ops" || chance(rng, 0.97) {
            objects.push(json!({
                "apiVersion": "core.gardener.cloud/v1beta1", "kind": "Project",
                "metadata": {"name": project}, "spec": {"namespace": ns},
            }));
        }
    }
    let mut profiles = Vec::new();
    for p in 0..rng.gen_range(1..=2) {
        let name = format!("profile-{p}");
        let provider = pick(rng, &providers);
        let spec = cloud_profile_spec(rng, provider, &regions);
        let namespaced = chance(rng, 0.3).then(|| format!("{name}-dev"));
        if let Some(ncp) = &namespaced {
            let mut status = cloud_profile_spec(rng, provider, &regions);
            if chance(rng, 0.5) {
                status = spec.clone();
            }
            objects.push(json!({
                "apiVersion": "core.gardener.cloud/v1beta1", "kind": "NamespacedCloudProfile",
                "metadata": {"name": ncp, "namespace": "garden-dev"},
                "spec": {"parent": {"kind": "CloudProfile", "name": name}},
                "status": {"cloudProfileSpec": status},
            }));
            // a NamespacedCloudProfile whose spec is not computed yet
            if chance(rng, 0.05) {
                let last = objects.last_mut().expect("just pushed");
                last.as_object_mut().expect("an object").remove("status");
            }
        }
        objects.push(json!({
            "apiVersion": "core.gardener.cloud/v1beta1", "kind": "CloudProfile",
            "metadata": {"name": name}, "spec": spec,
        }));
        profiles.push((name, provider, namespaced));
    }
    if strategy == "MinimalDistance" && chance(rng, 0.8) {
        // a second ConfigMap for some of the same profiles, sometimes
        let count = if chance(rng, 0.1) { 2 } else { 1 };
        for c in 0..count {
            let mut names: Vec<String> = profiles.iter().map(|p| p.0.clone()).collect();
            names.extend(profiles.iter().filter_map(|p| p.2.clone()));
            let listed: Vec<String> = names.into_iter().filter(|_| chance(rng, 0.8)).collect();
            let mut data = Map::new();
            for r in &regions {
                if chance(rng, 0.8) {
                    data.insert((*r).into(), json!(region_row(rng, &regions)));
                }
            }
            let name = ["region-config", "region-config-b"][c];
            objects.push(json!({
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {
                    "name": name, "namespace": "garden",
                    "labels": {"scheduling.gardener.cloud/purpose": "region-config"},
                    "annotations": {"scheduling.gardener.cloud/cloudprofiles": listed.join(", ")},
                },
                "data": data,
            }));
        }
    }
    let seed_names: Vec<String> = (0..rng.gen_range(1..=8))
        .map(|i| format!("seed-{i}"))
        .collect();
    for i in 0..seed_names.len() {
        objects.push(seed_object(rng, i, &providers, &regions));
    }
    let bound = rng.gen_range(0..=6);
    let pending = rng.gen_range(1..=4);
    for i in 0..bound + pending {
        objects.push(shoot(rng, i, &profiles, &seed_names, &regions, i < bound));
    }
    Generated { strategy, objects }
}
