//! The cases of upstream's `shoot_test.go` as this project carries them, and their objects
//! completed the way gardener-apiserver requires them of a user ([`for_gardener`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{Value, json};

/// What this test reads of a case file (the rest is `tests/upstream.rs`'s).
#[derive(Deserialize)]
struct Case {
    strategy: Option<String>,
    expect: Expect,
    objects: Vec<Value>,
}

#[derive(Deserialize)]
pub struct Expect {
    pub considered: Option<bool>,
    pub seed: Option<String>,
    pub candidates: Option<Vec<String>>,
    pub fails: Option<Failure>,
    pub rejected: Option<BTreeMap<String, String>>,
}

#[derive(Deserialize)]
pub struct Failure {
    pub kind: String,
    pub message: Option<String>,
}

/// One case, its objects as a user creates them for Gardener.
pub struct Prepared {
    /// the case file's name
    pub file: String,
    /// the Project's (and CloudProfile's) name
    pub id: String,
    pub strategy: String,
    pub expect: Expect,
    /// created before any phase, in this order: the project's namespace, the Project, its
    /// credentials, the CloudProfile, the region ConfigMaps
    pub setup: Vec<Value>,
    /// each seed without its status, and its status
    pub seeds: Vec<(Value, Value)>,
    pub shoot: Value,
    /// `namespace/name` of each region ConfigMap, as in the case and as created here
    pub renamed: Vec<(String, String)>,
    /// the case's seeds, with their statuses: which cases share a phase
    pub landscape: String,
    /// the case's objects as written
    pub written: Vec<Value>,
}

impl Prepared {
    pub fn namespace(&self) -> String {
        format!("garden-{}", self.id)
    }

    /// A text of the case with its region ConfigMaps named as created here.
    pub fn text(&self, text: &str) -> String {
        self.renamed
            .iter()
            .fold(text.to_string(), |t, (from, to)| t.replace(from, to))
    }
}

/// The provider type of upstream's test, for its CredentialsBinding.
const PROVIDER: &str = "provider-type";

/// Completes a case's objects with what gardener-apiserver requires of a user and the case
/// leaves out (the refusals of the objects as written name it; the end-to-end test checks that),
/// as upstream's test completes them (`createCloudProfile`, `createSeed`, `createShoot` and its
/// suite's Project and credentials). Nothing the scheduler reads changes:
/// - Project: gardener-apiserver takes names of at most 10 bytes (upstream's are generated,
///   `test-` and 5 characters); the case's `test-project` becomes `id`, its namespace
///   `garden-<id>`, created first. The shoot's domain names its project
///   (`<shoot>.<project>.<default domain>`), so `.test-project.` there becomes `.<id>.`; a domain
///   of another project (`shoot.invalid.example.com`) stays one.
/// - Credentials: a Secret and a CredentialsBinding `<id>` of the provider type, which the shoot
///   names (upstream's suite makes a SecretBinding, which Gardener deprecates).
/// - CloudProfile: named `id` (cases differ in regions and zones, and CloudProfiles are
///   cluster-scoped), with a Kubernetes version, a machine image and the machine type the
///   shoot's workers use. A region ConfigMap is named after its CloudProfile as upstream names it
///   (`a` and `b` become `<id>-a`, `<id>-b`, in the same order) and lists the CloudProfile by its
///   name here.
/// - Seeds keep their names; each gets an ingress domain and the DNS provider an ingress needs,
///   an internal domain, and a type and credentials for each default domain. The status is written through `/status`.
/// - Shoot: the CredentialsBinding, and each worker's machine type, minimum 1 and maximum 1 (3
///   with zones). gardener-apiserver defaults the rest (the Kubernetes version and machine image
///   from the CloudProfile).
fn for_gardener(file: &str, case: Case, id: &str) -> Prepared {
    let ns = format!("garden-{id}");
    let mut setup = vec![
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
        json!({"apiVersion": "v1", "kind": "Secret",
               "metadata": {"name": id, "namespace": ns}, "stringData": {"token": "upstream"}}),
        json!({"apiVersion": "security.gardener.cloud/v1alpha1", "kind": "CredentialsBinding",
               "metadata": {"name": id, "namespace": ns}, "provider": {"type": PROVIDER},
               "credentialsRef": {"apiVersion": "v1", "kind": "Secret", "name": id, "namespace": ns}}),
    ];
    let (mut seeds, mut shoot, mut renamed, mut landscape) =
        (Vec::new(), None, Vec::new(), Vec::new());
    let secret =
        json!({"apiVersion": "v1", "kind": "Secret", "name": "seed-dns", "namespace": "garden"});
    let profile_of = |name: &str| {
        if name == "profile" {
            id.to_string()
        } else {
            name.to_string()
        }
    };
    let written = case.objects.clone();
    for mut o in case.objects {
        match o["kind"].as_str().unwrap_or_default() {
            "Project" => {
                o["metadata"]["name"] = id.into();
                o["spec"]["namespace"] = ns.clone().into();
                setup.insert(1, o);
            }
            "CloudProfile" => {
                o["metadata"]["name"] = id.into();
                o["spec"]["kubernetes"] = json!({"versions": [{"version": "1.31.1"}]});
                o["spec"]["machineImages"] = json!([{"name": "some-OS", "versions": [
                    {"version": "1.1.1", "cri": [{"name": "containerd"}]}]}]);
                o["spec"]["machineTypes"] =
                    json!([{"name": "large", "cpu": "2", "gpu": "0", "memory": "8Gi"}]);
                setup.push(o);
            }
            "ConfigMap" => {
                let meta = &mut o["metadata"];
                let (cm_ns, name) = (
                    meta["namespace"].as_str().unwrap().to_string(),
                    meta["name"].as_str().unwrap().to_string(),
                );
                let new = if name == "profile" {
                    id.to_string()
                } else {
                    format!("{id}-{name}")
                };
                renamed.push((format!("{cm_ns}/{name}"), format!("{cm_ns}/{new}")));
                meta["name"] = new.into();
                let key = "scheduling.gardener.cloud/cloudprofiles";
                let listed: Vec<String> = meta["annotations"][key]
                    .as_str()
                    .unwrap_or_default()
                    .split(',')
                    .map(|p| profile_of(p.trim()))
                    .collect();
                meta["annotations"][key] = listed.join(",").into();
                setup.push(o);
            }
            "Seed" => {
                landscape.push(o.to_string());
                let status = o
                    .as_object_mut()
                    .unwrap()
                    .remove("status")
                    .unwrap_or(Value::Null);
                let name = o["metadata"]["name"].as_str().unwrap().to_string();
                let spec = &mut o["spec"];
                spec["ingress"] = json!({"domain": format!("ingress.{name}.seed.example.com"),
                                         "controller": {"kind": "nginx"}});
                spec["dns"]["provider"] = json!({"type": PROVIDER, "credentialsRef": secret});
                spec["dns"]["internal"] = json!({"type": PROVIDER, "domain": "internal.example.com",
                                                 "credentialsRef": secret});
                for default in spec["dns"]["defaults"].as_array_mut().into_iter().flatten() {
                    default["type"] = PROVIDER.into();
                    default["credentialsRef"] = secret.clone();
                }
                seeds.push((o, status));
            }
            "Shoot" => {
                o["metadata"]["namespace"] = ns.clone().into();
                let spec = &mut o["spec"];
                let profile = spec["cloudProfileName"].as_str().map(profile_of);
                spec["cloudProfileName"] = profile.into();
                spec["credentialsBindingName"] = id.into();
                for worker in spec["provider"]["workers"]
                    .as_array_mut()
                    .into_iter()
                    .flatten()
                {
                    let zoned = worker.get("zones").is_some();
                    worker["machine"] = json!({"type": "large"});
                    worker["minimum"] = 1.into();
                    worker["maximum"] = (if zoned { 3 } else { 1 }).into();
                }
                if let Some(domain) = spec["dns"]["domain"].as_str() {
                    spec["dns"]["domain"] =
                        domain.replace(".test-project.", &format!(".{id}.")).into();
                }
                shoot = Some(o);
            }
            other => panic!("{file}: an object of kind {other}, which this test does not create"),
        }
    }
    landscape.sort();
    Prepared {
        file: file.to_string(),
        id: id.to_string(),
        strategy: case.strategy.unwrap_or_else(|| "SameRegion".into()),
        expect: case.expect,
        setup,
        seeds,
        shoot: shoot.unwrap_or_else(|| panic!("{file}: no Shoot")),
        renamed,
        landscape: landscape.join("\n"),
        written,
    }
}

/// Every case, in file order, each with its Project `upNN`.
pub fn cases() -> Vec<Prepared> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/upstream/integration");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 30, "upstream's shoot_test.go has 30 cases");
    files
        .iter()
        .enumerate()
        .map(|(i, path)| {
            let file = path.file_name().unwrap().to_string_lossy().to_string();
            let text = std::fs::read_to_string(path).unwrap();
            let case: Case =
                serde_yaml_ng::from_str(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
            for_gardener(&file, case, &format!("up{:02}", i + 1))
        })
        .collect()
}

/// The cases that share a landscape of seeds (and a strategy), in file order of their first.
pub fn phases(cases: &[Prepared]) -> Vec<Vec<&Prepared>> {
    let mut phases: Vec<Vec<&Prepared>> = Vec::new();
    for case in cases {
        match phases
            .iter_mut()
            .find(|p| p[0].landscape == case.landscape && p[0].strategy == case.strategy)
        {
            Some(phase) => phase.push(case),
            None => phases.push(vec![case]),
        }
    }
    phases
}
