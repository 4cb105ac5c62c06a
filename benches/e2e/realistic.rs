//! Shoots shaped like those of a real landscape, as the API server stores them: the spec of
//! upstream's example manifest (`example/90-shoot.yaml`: provider configs, workers with zones,
//! kubernetes settings, maintenance, extensions) and the status and metadata a reconciled shoot
//! carries (conditions, constraints, lastOperation, annotations, labels and the managedFields of
//! the four managers that write a shoot: the user's client, gardener-apiserver, the gardenlet and
//! the scheduler).

use serde_json::{Value, json};

const TIME: &str = "2026-11-28T09:14:07Z";

fn managed_fields(seed: Option<&str>) -> Value {
    let mut entries = vec![
        json!({"manager": "gardener-dashboard", "operation": "Update", "apiVersion": "core.gardener.cloud/v1beta1",
               "time": TIME, "fieldsType": "FieldsV1", "fieldsV1": {
                   "f:metadata": {"f:annotations": {".": {}, "f:gardener.cloud/created-by": {}}, "f:labels": {".": {}}},
                   "f:spec": {"f:addons": {".": {}, "f:kubernetesDashboard": {".": {}, "f:enabled": {}}, "f:nginxIngress": {".": {}, "f:enabled": {}}},
                              "f:cloudProfile": {".": {}, "f:kind": {}, "f:name": {}}, "f:credentialsBindingName": {},
                              "f:hibernation": {".": {}, "f:schedules": {}},
                              "f:kubernetes": {".": {}, "f:enableStaticTokenKubeconfig": {}, "f:kubeAPIServer": {".": {}, "f:enableAnonymousAuthentication": {}}, "f:version": {}},
                              "f:maintenance": {".": {}, "f:autoUpdate": {".": {}, "f:kubernetesVersion": {}, "f:machineImageVersion": {}}, "f:timeWindow": {".": {}, "f:begin": {}, "f:end": {}}},
                              "f:networking": {".": {}, "f:nodes": {}, "f:type": {}},
                              "f:provider": {".": {}, "f:controlPlaneConfig": {".": {}, "f:apiVersion": {}, "f:kind": {}},
                                             "f:infrastructureConfig": {".": {}, "f:apiVersion": {}, "f:kind": {}, "f:networks": {".": {}, "f:vpc": {".": {}, "f:cidr": {}}, "f:zones": {}}},
                                             "f:type": {}, "f:workers": {}},
                              "f:purpose": {}, "f:region": {}}}}),
        json!({"manager": "gardener-apiserver", "operation": "Update", "apiVersion": "core.gardener.cloud/v1beta1",
               "time": TIME, "fieldsType": "FieldsV1", "fieldsV1": {
                   "f:metadata": {"f:finalizers": {".": {}, "v:\"gardener\"": {}}, "f:labels": {"f:project.gardener.cloud/name": {}}},
                   "f:spec": {"f:kubernetes": {"f:kubeControllerManager": {".": {}, "f:nodeCIDRMaskSize": {}, "f:nodeMonitorGracePeriod": {}},
                                               "f:kubeProxy": {".": {}, "f:enabled": {}, "f:mode": {}}, "f:kubelet": {".": {}, "f:failSwapOn": {}, "f:kubeReserved": {".": {}, "f:cpu": {}, "f:memory": {}, "f:pid": {}}}},
                              "f:networking": {"f:ipFamilies": {}, "f:pods": {}, "f:services": {}}, "f:schedulerName": {},
                              "f:systemComponents": {".": {}, "f:coreDNS": {".": {}, "f:autoscaling": {".": {}, "f:mode": {}}}, "f:nodeLocalDNS": {".": {}, "f:enabled": {}}}}}}),
        json!({"manager": "gardenlet", "operation": "Update", "apiVersion": "core.gardener.cloud/v1beta1",
               "time": TIME, "fieldsType": "FieldsV1", "subresource": "status", "fieldsV1": {
                   "f:status": {".": {}, "f:advertisedAddresses": {}, "f:clusterIdentity": {}, "f:conditions": {}, "f:constraints": {},
                                "f:gardener": {".": {}, "f:id": {}, "f:name": {}, "f:version": {}}, "f:hibernated": {},
                                "f:lastOperation": {".": {}, "f:description": {}, "f:lastUpdateTime": {}, "f:progress": {}, "f:state": {}, "f:type": {}},
                                "f:networking": {".": {}, "f:nodes": {}, "f:pods": {}, "f:services": {}},
                                "f:observedGeneration": {}, "f:seedName": {}, "f:technicalID": {}, "f:uid": {}}}}),
    ];
    if seed.is_some() {
        entries.push(json!({"manager": "gardener-scheduler", "operation": "Update", "apiVersion": "core.gardener.cloud/v1beta1",
               "time": TIME, "fieldsType": "FieldsV1", "subresource": "binding", "fieldsV1": {"f:spec": {"f:seedName": {}}}}));
    }
    Value::Array(entries)
}

fn condition(type_: &str, reason: &str, message: &str) -> Value {
    json!({"type": type_, "status": "True", "lastTransitionTime": TIME, "lastUpdateTime": TIME,
           "reason": reason, "message": message})
}

/// The stored form of shoot `name` of project `project`, bound to `seed` (reconciled, with
/// status) or pending (`None`: as just created, no status). `i` varies the zones and sizes.
pub fn shoot(project: &str, name: &str, seed: Option<&str>, i: usize) -> Value {
    let zones = ["0", "1", "2"];
    let zone = |k: usize| zones[(i + k) % 3];
    let uid = format!(
        "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
        i * 2_654_435_761 % 0xffff_ffff,
        i % 0xffff,
        i % 0xfff,
        (i / 7) % 0xfff,
        i * 40_503
    );
    let worker = |w: usize| {
        json!({"name": format!("worker-{w}"), "minimum": 1 + w, "maximum": 3 + 2 * w, "maxSurge": 1, "maxUnavailable": 0,
               "machine": {"type": "m5.large", "image": {"name": "gardenlinux", "version": "1592.4.0"}, "architecture": "amd64"},
               "volume": {"type": "gp3", "size": "50Gi"}, "cri": {"name": "containerd"},
               "labels": {"pool": format!("worker-{w}")},
               "zones": [zone(w), zone(w + 1)],
               "systemComponents": {"allow": true}, "updateStrategy": "AutoRollingUpdate"})
    };
    let mut metadata = json!({
        "name": name, "namespace": format!("garden-{project}"), "uid": uid, "generation": 4 + i % 5,
        "creationTimestamp": "2026-03-04T05:06:07Z",
        "labels": {"project.gardener.cloud/name": project,
                   "networking.extensions.gardener.cloud/calico": "true",
                   "provider.extensions.gardener.cloud/local": "true",
                   "extensions.extensions.gardener.cloud/shoot-dns-service": "true",
                   "extensions.extensions.gardener.cloud/shoot-cert-service": "true"},
        "annotations": {"gardener.cloud/created-by": format!("user-{}@example.com", i % 97),
                        "shoot.gardener.cloud/cloud-config-execution-max-delay-seconds": "300",
                        "dashboard.gardener.cloud/no-hibernation-schedule": "false",
                        "maintenance.gardener.cloud/operation": "",
                        "shoot.gardener.cloud/infrastructure-cleanup-wait-period-seconds": "300"},
        "finalizers": ["gardener"],
        "managedFields": managed_fields(seed),
    });
    if seed.is_some() {
        metadata["labels"]["shoot.gardener.cloud/status"] = json!("healthy");
        metadata["labels"]["seed.gardener.cloud/name"] = json!(seed);
    }
    let mut spec = json!({
        "cloudProfile": {"kind": "CloudProfile", "name": "local"},
        "region": "local-1", "purpose": "evaluation", "schedulerName": "default-scheduler",
        "credentialsBindingName": format!("{project}-aws"),
        "addons": {"kubernetesDashboard": {"enabled": false}, "nginxIngress": {"enabled": false}},
        "hibernation": {"schedules": [{"start": "00 20 * * 1,2,3,4,5", "end": "00 07 * * 1,2,3,4,5", "location": "Europe/Berlin"}]},
        "kubernetes": {"version": "1.33.2", "enableStaticTokenKubeconfig": false,
                       "kubeAPIServer": {"enableAnonymousAuthentication": false, "requests": {"maxNonMutatingInflight": 400, "maxMutatingInflight": 200}},
                       "kubeControllerManager": {"nodeCIDRMaskSize": 24, "nodeMonitorGracePeriod": "40s"},
                       "kubeProxy": {"enabled": true, "mode": "IPTables"},
                       "kubelet": {"failSwapOn": true, "kubeReserved": {"cpu": "80m", "memory": "1Gi", "pid": "20k"}}},
        "maintenance": {"timeWindow": {"begin": "220000+0100", "end": "230000+0100"},
                        "autoUpdate": {"kubernetesVersion": true, "machineImageVersion": true}},
        "networking": {"type": "calico", "nodes": format!("10.{}.0.0/16", i % 200), "pods": "100.96.0.0/11",
                       "services": "100.64.0.0/13", "ipFamilies": ["IPv4"]},
        "provider": {"type": "local",
                     "controlPlaneConfig": {"apiVersion": "aws.provider.extensions.gardener.cloud/v1alpha1", "kind": "ControlPlaneConfig"},
                     "infrastructureConfig": {"apiVersion": "aws.provider.extensions.gardener.cloud/v1alpha1", "kind": "InfrastructureConfig",
                                              "networks": {"vpc": {"cidr": "10.250.0.0/16"},
                                                           "zones": [{"name": zone(0), "internal": "10.250.112.0/22", "public": "10.250.96.0/22", "workers": "10.250.0.0/19"}]}},
                     "workers": [worker(0), worker(1)]},
        "extensions": [{"type": "shoot-dns-service"}, {"type": "shoot-cert-service"}],
        "systemComponents": {"coreDNS": {"autoscaling": {"mode": "horizontal"}}, "nodeLocalDNS": {"enabled": true}},
    });
    let Some(seed) = seed else {
        return json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
                      "metadata": metadata, "spec": spec});
    };
    spec["seedName"] = json!(seed);
    let status = json!({
        "conditions": [
            condition("APIServerAvailable", "HealthzRequestSucceeded", "API server /healthz endpoint responded with success status code."),
            condition("ControlPlaneHealthy", "ControlPlaneRunning", "All control plane components are healthy."),
            condition("ObservabilityComponentsHealthy", "ObservabilityComponentsRunning", "All observability components are healthy."),
            condition("EveryNodeReady", "EveryNodeReady", "All nodes are ready."),
            condition("SystemComponentsHealthy", "SystemComponentsRunning", "All system components are healthy."),
        ],
        "constraints": [
            condition("HibernationPossible", "NoProblematicWebhooks", "All webhooks are properly configured."),
            condition("MaintenancePreconditionsSatisfied", "NoProblematicWebhooks", "All webhooks are properly configured."),
        ],
        "gardener": {"id": "6cd5a4b1f2e3", "name": "gardenlet-7d9f8c6b5-x2k4q", "version": "v1.110.3"},
        "hibernated": false,
        "lastOperation": {"type": "Reconcile", "state": "Succeeded", "progress": 100, "lastUpdateTime": TIME,
                          "description": "Shoot cluster has been successfully reconciled."},
        "observedGeneration": 4 + i % 5, "seedName": seed,
        "technicalID": format!("shoot--{project}--{name}"), "uid": uid,
        "clusterIdentity": format!("shoot--{project}--{name}-{uid}-landscape"),
        "advertisedAddresses": [
            {"name": "external", "url": format!("https://api.{name}.{project}.shoot.example.com")},
            {"name": "internal", "url": format!("https://api.{name}.{project}.internal.example.com")},
        ],
        "networking": {"nodes": [format!("10.{}.0.0/16", i % 200)], "pods": ["100.96.0.0/11"], "services": ["100.64.0.0/13"]},
    });
    json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
           "metadata": metadata, "spec": spec, "status": status})
}

/// Standard base64 (RFC 4648, padded), for etcd's JSON gateway.
pub fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for k in 0..4 {
            if k <= chunk.len() {
                out.push(ABC[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}
