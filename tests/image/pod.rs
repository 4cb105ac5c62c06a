//! The chart's Deployment, read as the kubelet reads it: what the one container runs (image, args,
//! env, user and group, the security context, mounts, probes, ports, memory limit, grace period),
//! and the files its volumes hold. Only what the Deployment says is used; a key this reader does
//! not know fails the check, so a chart change that would change the pod changes the run or
//! breaks this test.

use std::collections::BTreeMap;

use serde_yaml_ng::Value;

/// An HTTP probe of the container, with the kubelet's timing fields.
#[derive(Clone, Debug)]
pub struct Probe {
    pub path: String,
    pub port: u16,
    pub initial_delay: u64,
    pub timeout: u64,
}

/// A volume mounted into the container, with the files the kubelet would write into it.
#[derive(Clone, Debug)]
pub struct Mount {
    pub volume: String,
    pub path: String,
    pub read_only: bool,
    /// file name -> content
    pub files: BTreeMap<String, String>,
}

/// How the pod's one container runs.
#[derive(Clone, Debug)]
pub struct PodRun {
    pub image: String,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    pub user: u32,
    pub group: u32,
    pub fs_group: Option<u32>,
    pub run_as_non_root: bool,
    pub read_only_root: bool,
    pub drop_all_capabilities: bool,
    pub allow_privilege_escalation: bool,
    pub privileged: bool,
    pub seccomp_runtime_default: bool,
    pub memory_limit: Option<String>,
    pub mounts: Vec<Mount>,
    /// the service account token is mounted at the standard path
    pub service_account_token: bool,
    pub namespace: String,
    pub liveness: Probe,
    pub readiness: Probe,
    /// container port name -> number
    pub ports: BTreeMap<String, u16>,
    pub grace_seconds: u64,
}

/// The one object of `kind` among the rendered ones.
pub fn one<'a>(objects: &'a [Value], kind: &str) -> &'a Value {
    let found: Vec<&Value> = objects.iter().filter(|o| o["kind"] == kind).collect();
    assert_eq!(
        found.len(),
        1,
        "expected one {kind}, the chart rendered {}",
        found.len()
    );
    found[0]
}

fn str_at(v: &Value, path: &str) -> String {
    let mut at = v;
    for key in path.split('.') {
        at = &at[key];
    }
    at.as_str()
        .unwrap_or_else(|| panic!("{path} is not a string: {at:?}"))
        .to_string()
}

fn int_at(v: &Value, key: &str, what: &str) -> u64 {
    v[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{what}.{key} is not a number: {:?}", v[key]))
}

fn keys(v: &Value) -> Vec<String> {
    v.as_mapping()
        .map(|m| {
            m.keys()
                .filter_map(|k| k.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Fails when `v` has a key outside `known`: this reader would not run what the chart asks.
fn only_known(v: &Value, known: &[&str], what: &str) {
    for key in keys(v) {
        assert!(
            known.contains(&key.as_str()),
            "{what}.{key} is rendered by the chart but not understood by the image check \
             (tests/image/pod.rs); teach it how the kubelet runs it"
        );
    }
}

/// The run of the Deployment's container, its volumes filled from the rendered ConfigMaps.
pub fn from_manifests(objects: &[Value]) -> PodRun {
    let deployment = one(objects, "Deployment");
    let namespace = str_at(deployment, "metadata.namespace");
    let pod = &deployment["spec"]["template"]["spec"];
    only_known(
        pod,
        &[
            "serviceAccountName",
            "automountServiceAccountToken",
            "securityContext",
            "terminationGracePeriodSeconds",
            "containers",
            "volumes",
            // where the pod is placed; nothing in how the container runs
            "affinity",
            "nodeSelector",
            "tolerations",
            "topologySpreadConstraints",
            "priorityClassName",
            "imagePullSecrets",
        ],
        "spec.template.spec",
    );
    let containers = pod["containers"].as_sequence().expect("containers");
    assert_eq!(containers.len(), 1, "the pod has one container");
    let c = &containers[0];
    only_known(
        c,
        &[
            "name",
            "image",
            "imagePullPolicy",
            "args",
            "env",
            "ports",
            "livenessProbe",
            "readinessProbe",
            "resources",
            "securityContext",
            "volumeMounts",
        ],
        "containers[0]",
    );

    let psc = &pod["securityContext"];
    only_known(
        psc,
        &[
            "runAsNonRoot",
            "runAsUser",
            "runAsGroup",
            "fsGroup",
            "seccompProfile",
        ],
        "spec.template.spec.securityContext",
    );
    let csc = &c["securityContext"];
    only_known(
        csc,
        &[
            "allowPrivilegeEscalation",
            "privileged",
            "readOnlyRootFilesystem",
            "runAsNonRoot",
            "runAsUser",
            "runAsGroup",
            "capabilities",
            "seccompProfile",
        ],
        "containers[0].securityContext",
    );
    // the container's own field wins over the pod's, as in the kubelet
    let either = |key: &str| -> &Value {
        if csc[key].is_null() {
            &psc[key]
        } else {
            &csc[key]
        }
    };
    let user = either("runAsUser")
        .as_u64()
        .expect("runAsUser is set (the kubelet would take the image's user otherwise)")
        as u32;
    let group = either("runAsGroup").as_u64().unwrap_or(u64::from(user)) as u32;
    only_known(&csc["capabilities"], &["drop", "add"], "capabilities");
    assert!(
        csc["capabilities"]["add"].is_null(),
        "capabilities.add is not run by the image check"
    );
    let drop_all = csc["capabilities"]["drop"]
        .as_sequence()
        .is_some_and(|d| d.iter().any(|c| c == "ALL"));
    let seccomp = either("seccompProfile");
    only_known(seccomp, &["type"], "seccompProfile");

    // gardener-operator's Deployment declares no ports: its probes name the number
    let ports: BTreeMap<String, u16> = c["ports"]
        .as_sequence()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|p| {
            assert_eq!(p["protocol"], "TCP");
            (
                str_at(p, "name"),
                int_at(p, "containerPort", "ports") as u16,
            )
        })
        .collect();
    let probe = |key: &str| -> Probe {
        let p = &c[key];
        only_known(
            p,
            &[
                "httpGet",
                "initialDelaySeconds",
                "periodSeconds",
                "timeoutSeconds",
                "failureThreshold",
            ],
            key,
        );
        assert_eq!(
            p["httpGet"]["scheme"], "HTTP",
            "{key}: only HTTP probes are run"
        );
        let port = match &p["httpGet"]["port"] {
            Value::String(name) => *ports
                .get(name)
                .unwrap_or_else(|| panic!("{key} names port {name}, which the container lacks")),
            Value::Number(n) => n.as_u64().unwrap() as u16,
            other => panic!("{key}.httpGet.port: {other:?}"),
        };
        Probe {
            path: str_at(p, "httpGet.path"),
            port,
            initial_delay: p["initialDelaySeconds"].as_u64().unwrap_or(0),
            timeout: p["timeoutSeconds"].as_u64().unwrap_or(1),
        }
    };

    let env = c["env"]
        .as_sequence()
        .map(|e| {
            e.iter()
                .map(|v| {
                    only_known(v, &["name", "value"], "env[]");
                    (str_at(v, "name"), str_at(v, "value"))
                })
                .collect()
        })
        .unwrap_or_default();

    let volumes = pod["volumes"].as_sequence().cloned().unwrap_or_default();
    let mounts = c["volumeMounts"]
        .as_sequence()
        .expect("volumeMounts")
        .iter()
        .map(|m| {
            only_known(m, &["name", "mountPath", "readOnly"], "volumeMounts[]");
            let name = str_at(m, "name");
            let volume = volumes
                .iter()
                .find(|v| v["name"] == name.as_str())
                .unwrap_or_else(|| panic!("volumeMount {name} has no volume"));
            Mount {
                files: volume_files(objects, volume),
                path: str_at(m, "mountPath"),
                read_only: m["readOnly"].as_bool().unwrap_or(false),
                volume: name,
            }
        })
        .collect();

    let memory_limit = c["resources"]["limits"]["memory"]
        .as_str()
        .map(str::to_string);
    PodRun {
        image: str_at(c, "image"),
        args: c["args"]
            .as_sequence()
            .expect("args")
            .iter()
            .map(|a| a.as_str().expect("args are strings").to_string())
            .collect(),
        env,
        user,
        group,
        fs_group: psc["fsGroup"].as_u64().map(|g| g as u32),
        run_as_non_root: either("runAsNonRoot").as_bool().unwrap_or(false),
        read_only_root: csc["readOnlyRootFilesystem"].as_bool().unwrap_or(false),
        drop_all_capabilities: drop_all,
        allow_privilege_escalation: csc["allowPrivilegeEscalation"].as_bool().unwrap_or(true),
        privileged: csc["privileged"].as_bool().unwrap_or(false),
        seccomp_runtime_default: seccomp["type"] == "RuntimeDefault",
        memory_limit,
        mounts,
        // the ServiceAccount admission mounts the token unless the pod opts out
        service_account_token: pod["automountServiceAccountToken"]
            .as_bool()
            .unwrap_or(true),
        namespace,
        liveness: probe("livenessProbe"),
        readiness: probe("readinessProbe"),
        ports,
        grace_seconds: pod["terminationGracePeriodSeconds"].as_u64().unwrap_or(30),
    }
}

/// The files a volume holds: a ConfigMap's keys (or its `items`), from the rendered ConfigMap;
/// or, for a projected volume, the `items` of each Secret it projects, from the rendered Secrets
/// (gardener-operator's Deployment projects its kubeconfig and token this way).
fn volume_files(objects: &[Value], volume: &Value) -> BTreeMap<String, String> {
    only_known(volume, &["name", "configMap", "projected"], "volumes[]");
    if !volume["projected"].is_null() {
        let projected = &volume["projected"];
        only_known(
            projected,
            &["sources", "defaultMode"],
            "volumes[].projected",
        );
        let mut files = BTreeMap::new();
        for source in projected["sources"]
            .as_sequence()
            .expect("projected sources")
        {
            only_known(source, &["secret"], "volumes[].projected.sources[]");
            let secret = &source["secret"];
            only_known(secret, &["name", "items", "optional"], "projected secret");
            let data = data_of(objects, "Secret", &str_at(secret, "name"));
            for item in secret["items"]
                .as_sequence()
                .expect("projected secret items")
            {
                files.insert(str_at(item, "path"), data[&str_at(item, "key")].clone());
            }
        }
        return files;
    }
    let source = &volume["configMap"];
    only_known(source, &["name", "items"], "volumes[].configMap");
    let data = data_of(objects, "ConfigMap", &str_at(source, "name"));
    match source["items"].as_sequence() {
        None => data,
        Some(items) => items
            .iter()
            .map(|i| (str_at(i, "path"), data[&str_at(i, "key")].clone()))
            .collect(),
    }
}

/// The data of the rendered ConfigMap or Secret `name` (a Secret's `data` decoded from base64,
/// its `stringData` as written).
fn data_of(objects: &[Value], kind: &str, name: &str) -> BTreeMap<String, String> {
    use base64::Engine;
    let object = objects
        .iter()
        .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("the pod mounts {kind} {name}, which is not rendered"));
    let mut data = BTreeMap::new();
    for (key, value) in object["data"].as_mapping().cloned().unwrap_or_default() {
        let text = value.as_str().unwrap().to_string();
        let text = if kind == "Secret" {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(text.trim())
                .unwrap_or_else(|e| panic!("{kind} {name}: {key:?} is not base64: {e}"));
            String::from_utf8(bytes).unwrap()
        } else {
            text
        };
        data.insert(key.as_str().unwrap().to_string(), text);
    }
    for (key, value) in object["stringData"]
        .as_mapping()
        .cloned()
        .unwrap_or_default()
    {
        data.insert(
            key.as_str().unwrap().to_string(),
            value.as_str().unwrap().to_string(),
        );
    }
    data
}

/// A Kubernetes memory quantity as podman's `--memory` takes it (bytes).
pub fn memory_bytes(quantity: &str) -> u64 {
    let units = [
        ("Ki", 1u64 << 10),
        ("Mi", 1 << 20),
        ("Gi", 1 << 30),
        ("K", 1000),
        ("M", 1_000_000),
        ("G", 1_000_000_000),
    ];
    for (suffix, factor) in units {
        if let Some(n) = quantity.strip_suffix(suffix) {
            return n.parse::<u64>().expect("memory limit") * factor;
        }
    }
    quantity.parse().expect("memory limit in bytes")
}
