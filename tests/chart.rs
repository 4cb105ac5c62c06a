//! The Helm chart, rendered by a real `helm` and read back as an operator's cluster would read it.
//!
//! helm comes from `$HELM` or, when that is unset, from `hack/tools.sh` (which installs it into a
//! cache outside the repository). Without helm these tests fail: they are the only check that the
//! chart an operator installs grants the right permissions and carries a configuration the binary
//! accepts.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

#[path = "support/common.rs"]
mod common;
#[path = "support/monitoring.rs"]
mod monitoring_files;
use common::{assert_success, fresh_dir};
use monitoring_files::{chart, helm, printed_by, repo};

use serde::Deserialize;
use serde_yaml_ng::Value;

const RELEASE: &str = "gardener-scheduler";
const NAMESPACE: &str = "garden";
const CONFIG_KEY: &str = "schedulerconfiguration.yaml";

fn all_options() -> PathBuf {
    chart().join("ci/all-options-values.yaml")
}

fn production() -> PathBuf {
    repo().join("example/values-production.yaml")
}

/// The values files the chart ships with or is documented with, by a short name.
fn values_files() -> Vec<(&'static str, Vec<PathBuf>)> {
    vec![
        ("default", vec![]),
        ("all-options", vec![all_options()]),
        ("production", vec![production()]),
    ]
}

fn run_helm(chart: &Path, args: &[&str], files: &[PathBuf], set: &[&str]) -> Output {
    let mut cmd = Command::new(helm());
    cmd.args(args).arg(chart);
    for f in files {
        cmd.arg("--values").arg(f);
    }
    for s in set {
        cmd.arg("--set").arg(s);
    }
    cmd.output()
        .unwrap_or_else(|e| panic!("running {}: {e}", helm().display()))
}

fn template_output(chart: &Path, files: &[PathBuf], set: &[&str]) -> Output {
    run_helm(
        chart,
        &["template", RELEASE, "--namespace", NAMESPACE],
        files,
        set,
    )
}

/// Every object `helm template` renders.
struct Manifests(Vec<Value>);

fn render_chart(chart: &Path, files: &[PathBuf], set: &[&str]) -> Manifests {
    let out = template_output(chart, files, set);
    assert!(
        out.status.success(),
        "helm template {files:?} --set {set:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    parse_manifests(&out)
}

fn parse_manifests(out: &Output) -> Manifests {
    let text = std::str::from_utf8(&out.stdout).expect("helm prints UTF-8");
    let docs = serde_yaml_ng::Deserializer::from_str(text)
        .map(|doc| Value::deserialize(doc).expect("helm renders valid YAML"))
        .filter(|doc| !doc.is_null())
        .collect();
    Manifests(docs)
}

fn render(files: &[PathBuf], set: &[&str]) -> Manifests {
    render_chart(&chart(), files, set)
}

impl Manifests {
    fn of_kind(&self, kind: &str) -> Vec<&Value> {
        self.0
            .iter()
            .filter(|d| d["kind"].as_str() == Some(kind))
            .collect()
    }

    fn one(&self, kind: &str) -> &Value {
        let found = self.of_kind(kind);
        assert_eq!(
            found.len(),
            1,
            "expected exactly one {kind}, found {}",
            found.len()
        );
        found[0]
    }

    /// The one object of `kind` that is the scheduler's own: not the what-if reader's (a role
    /// for people, `whatIfReader`, tested on its own).
    fn scheduler_one(&self, kind: &str) -> &Value {
        let found: Vec<&Value> = self
            .of_kind(kind)
            .into_iter()
            .filter(|d| !is_for_people(d))
            .collect();
        assert_eq!(found.len(), 1, "expected exactly one scheduler {kind}");
        found[0]
    }

    /// The one object of `kind` whose name ends with `suffix`.
    fn named(&self, kind: &str, suffix: &str) -> &Value {
        let found: Vec<&Value> = self
            .of_kind(kind)
            .into_iter()
            .filter(|d| str_at(&d["metadata"], "name").ends_with(suffix))
            .collect();
        assert_eq!(found.len(), 1, "expected one {kind} named *{suffix}");
        found[0]
    }

    fn kinds(&self) -> BTreeSet<String> {
        self.0.iter().map(|d| str_at(d, "kind")).collect()
    }

    fn container(&self) -> &Value {
        let containers = seq(&self.one("Deployment")["spec"]["template"]["spec"]["containers"]);
        assert_eq!(
            containers.len(),
            1,
            "the pod runs exactly the scheduler container"
        );
        &containers[0]
    }

    fn pod_spec(&self) -> &Value {
        &self.one("Deployment")["spec"]["template"]["spec"]
    }

    fn config_mount_path(&self) -> String {
        let mount = seq(&self.container()["volumeMounts"])
            .iter()
            .find(|m| m["name"] == "config")
            .expect("config volume is mounted");
        str_at(mount, "mountPath")
    }

    /// The SchedulerConfiguration text the pod reads, after checking that the pod does read it.
    fn scheduler_config(&self) -> String {
        let cm = self.named("ConfigMap", "-config");
        let container = self.container();
        let mount = seq(&container["volumeMounts"])
            .iter()
            .find(|m| m["name"] == "config")
            .expect("config volume is mounted");
        let config_arg = format!("--config={}/{CONFIG_KEY}", str_at(mount, "mountPath"));
        assert!(
            seq(&container["args"])
                .iter()
                .any(|a| a.as_str() == Some(config_arg.as_str())),
            "container args {:?} lack {config_arg}",
            container["args"]
        );
        let volume = seq(&self.pod_spec()["volumes"])
            .iter()
            .find(|v| v["name"] == "config")
            .expect("config volume exists");
        assert_eq!(volume["configMap"]["name"], cm["metadata"]["name"]);
        str_at(&cm["data"], CONFIG_KEY)
    }

    /// The container's `--expect-*` flags: what the chart made the RBAC and ports for.
    fn expectations(&self) -> Vec<String> {
        let flags: Vec<String> = seq(&self.container()["args"])
            .iter()
            .map(|a| a.as_str().expect("args are strings").to_string())
            .filter(|a| a.starts_with("--expect-"))
            .collect();
        for flag in [
            "--expect-lease=",
            "--expect-health-port=",
            "--expect-metrics-port=",
            "--expect-binding-mode=",
            "--expect-carbon-intensity=",
        ] {
            assert!(
                flags.iter().any(|f| f.starts_with(flag)),
                "the container passes no {flag}: {flags:?}"
            );
        }
        flags
    }

    fn container_port(&self, name: &str) -> i64 {
        let port = seq(&self.container()["ports"])
            .iter()
            .find(|p| p["name"].as_str() == Some(name))
            .unwrap_or_else(|| panic!("container has no port named {name}"));
        port["containerPort"]
            .as_i64()
            .expect("containerPort is a number")
    }
}

fn is_what_if_reader(d: &Value) -> bool {
    str_at(&d["metadata"], "name").contains("-what-if-reader")
}

fn is_plan_applier(d: &Value) -> bool {
    str_at(&d["metadata"], "name").contains("-plan-applier")
}

/// No values file but the all-options one renders the roles `is` picks out.
fn assert_off_by_default(is: fn(&Value) -> bool, what: &str) {
    for (name, files) in values_files()
        .into_iter()
        .filter(|(n, _)| *n != "all-options")
    {
        let m = render(&files, &[]);
        assert!(!m.0.iter().any(is), "{name}: {what} is off by default");
    }
}

/// Roles for people (`whatIfReader`, `planApplier`), not for the pod.
fn is_for_people(d: &Value) -> bool {
    is_what_if_reader(d) || is_plan_applier(d)
}

fn seq(v: &Value) -> &Vec<Value> {
    v.as_sequence()
        .unwrap_or_else(|| panic!("expected a list, got {v:?}"))
}

fn str_at(v: &Value, key: &str) -> String {
    v[key]
        .as_str()
        .unwrap_or_else(|| panic!("expected a string at {key} in {v:?}"))
        .to_string()
}

/// One permission: API group, resource, resource name (None = any), verb.
type Grant = (String, String, Option<String>, String);

fn grants(role: &Value) -> BTreeSet<Grant> {
    let mut out = BTreeSet::new();
    for rule in seq(&role["rules"]) {
        assert!(
            rule["nonResourceURLs"].is_null(),
            "no non-resource URLs are needed: {rule:?}"
        );
        let names: Vec<Option<String>> = match &rule["resourceNames"] {
            Value::Null => vec![None],
            v => seq(v)
                .iter()
                .map(|n| Some(n.as_str().unwrap().to_string()))
                .collect(),
        };
        for group in seq(&rule["apiGroups"]) {
            for resource in seq(&rule["resources"]) {
                for name in &names {
                    for verb in seq(&rule["verbs"]) {
                        out.insert((
                            group.as_str().unwrap().to_string(),
                            resource.as_str().unwrap().to_string(),
                            name.clone(),
                            verb.as_str().unwrap().to_string(),
                        ));
                    }
                }
            }
        }
    }
    out
}

fn expected(table: &[(&str, &str, Option<&str>, &str)]) -> BTreeSet<Grant> {
    table
        .iter()
        .map(|(g, r, n, v)| {
            (
                g.to_string(),
                r.to_string(),
                n.map(str::to_string),
                v.to_string(),
            )
        })
        .collect()
}

/// What every configuration needs: the watches that feed the decision (list, watch; never a
/// single get), reads of a shoot before a binding, after a conflict or an unanswered bind,
/// `lastOperation`, and events (events.k8s.io, core/v1 as the fallback).
const CLUSTER_GRANTS: &[(&str, &str, Option<&str>, &str)] = &[
    ("core.gardener.cloud", "seeds", None, "list"),
    ("core.gardener.cloud", "seeds", None, "watch"),
    ("core.gardener.cloud", "cloudprofiles", None, "list"),
    ("core.gardener.cloud", "cloudprofiles", None, "watch"),
    (
        "core.gardener.cloud",
        "namespacedcloudprofiles",
        None,
        "list",
    ),
    (
        "core.gardener.cloud",
        "namespacedcloudprofiles",
        None,
        "watch",
    ),
    ("core.gardener.cloud", "projects", None, "list"),
    ("core.gardener.cloud", "projects", None, "watch"),
    ("core.gardener.cloud", "shoots", None, "get"),
    ("core.gardener.cloud", "shoots", None, "list"),
    ("core.gardener.cloud", "shoots", None, "watch"),
    ("core.gardener.cloud", "shoots/status", None, "patch"),
    ("", "events", None, "create"),
    ("", "events", None, "patch"),
    ("events.k8s.io", "events", None, "create"),
    ("events.k8s.io", "events", None, "patch"),
];

/// `bindingMode: Binding` (the default) writes the binding subresource.
const BINDING_GRANT: (&str, &str, Option<&str>, &str) =
    ("core.gardener.cloud", "shoots/binding", None, "update");
/// `bindingMode: Patch` patches `spec.seedName` instead.
const PATCH_GRANT: (&str, &str, Option<&str>, &str) =
    ("core.gardener.cloud", "shoots", None, "patch");
/// `CarbonIntensity`: forecasts in ConfigMaps of every namespace.
const CARBON_GRANTS: &[(&str, &str, Option<&str>, &str)] = &[
    ("", "configmaps", None, "list"),
    ("", "configmaps", None, "watch"),
];

/// The ClusterRole a configuration needs.
fn cluster_grants(patch_mode: bool, carbon: bool) -> BTreeSet<Grant> {
    let mut table = CLUSTER_GRANTS.to_vec();
    table.push(if patch_mode {
        PATCH_GRANT
    } else {
        BINDING_GRANT
    });
    if carbon {
        table.extend_from_slice(CARBON_GRANTS);
    }
    expected(&table)
}

fn assert_exact(got: &BTreeSet<Grant>, want: &BTreeSet<Grant>, what: &str) {
    assert_eq!(
        got,
        want,
        "{what}: granted but not needed: {:?}; needed but not granted: {:?}",
        got.difference(want).collect::<Vec<_>>(),
        want.difference(got).collect::<Vec<_>>()
    );
}

fn lease_grants(name: &str) -> BTreeSet<Grant> {
    expected(&[
        ("coordination.k8s.io", "leases", None, "create"),
        ("coordination.k8s.io", "leases", Some(name), "get"),
        ("coordination.k8s.io", "leases", Some(name), "update"),
    ])
}

/// A fresh directory under the target dir, for files the binary reads.
fn scratch_dir() -> PathBuf {
    fresh_dir(Path::new(env!("CARGO_TARGET_TMPDIR")), "chart")
}

/// Runs `gardener-scheduler --config FILE --validate-only`, outside any environment override.
fn run_validate_only(file: &Path) -> Output {
    run_validate_only_with(file, &[])
}

/// [`run_validate_only`] with more flags, such as the container's `--expect-*`.
fn run_validate_only_with(file: &Path, flags: &[String]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_gardener-scheduler"));
    cmd.arg("--config")
        .arg(file)
        .arg("--validate-only")
        .args(flags)
        .env_remove("KUBECONFIG");
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("GARDENER_SCHEDULER_") {
            cmd.env_remove(key);
        }
    }
    cmd.output().expect("running gardener-scheduler")
}

fn validate_with_binary(config: &str) -> Output {
    let dir = scratch_dir();
    let file = dir.join(CONFIG_KEY);
    std::fs::write(&file, config).unwrap();
    let out = run_validate_only(&file);
    let _ = std::fs::remove_dir_all(&dir);
    out
}

/// Validates the rendered configuration as the pod would load it: every file of the ConfigMap in
/// one directory standing in for the volume mount, paths into the mount pointing there, and the
/// container's checks of what the RBAC and ports were made for (`--expect-*`).
fn validate_rendered(m: &Manifests) -> Output {
    let config = m.scheduler_config();
    let mount = m.config_mount_path();
    let dir = scratch_dir();
    for (name, content) in m.named("ConfigMap", "-config")["data"]
        .as_mapping()
        .unwrap()
    {
        let name = name.as_str().unwrap();
        assert!(
            !name.contains('/'),
            "ConfigMap key {name} is not a file name"
        );
        std::fs::write(dir.join(name), content.as_str().unwrap()).unwrap();
    }
    let file = dir.join(CONFIG_KEY);
    std::fs::write(&file, config.replace(&mount, &dir.display().to_string())).unwrap();
    let out = run_validate_only_with(&file, &m.expectations());
    let _ = std::fs::remove_dir_all(&dir);
    out
}

#[test]
fn chart_lints_cleanly_with_default_all_options_and_production_values() {
    for (name, files) in values_files() {
        let out = run_helm(&chart(), &["lint", "--strict"], &files, &[]);
        assert!(
            out.status.success(),
            "helm lint --strict with {name} values failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn cluster_role_grants_exactly_what_the_scheduler_needs() {
    for (name, files) in values_files() {
        let m = render(&files, &[]);
        // the all-options file selects bindingMode Patch
        let want = cluster_grants(name == "all-options", false);
        assert_exact(&grants(m.scheduler_one("ClusterRole")), &want, name);
    }
}

#[test]
fn patch_binding_mode_grants_patch_on_shoots_instead_of_the_binding() {
    let m = render(&[], &["config.schedulers.shoot.bindingMode=Patch"]);
    assert_exact(
        &grants(m.scheduler_one("ClusterRole")),
        &cluster_grants(true, false),
        "Patch",
    );
}

#[test]
fn configmaps_of_every_namespace_are_granted_only_with_a_carbon_intensity_priority() {
    let cases: [(&str, &[&str]); 3] = [
        (
            "priorities",
            &[
                "config.schedulers.shoot.priorities[0].name=ShootCount",
                "config.schedulers.shoot.priorities[1].name=CarbonIntensity",
            ],
        ),
        (
            "a profile of the chain",
            &[
                "config.schedulers.shoot.profiles[0].id=day",
                "config.schedulers.shoot.profiles[0].profile.priorities[0].name=CarbonIntensity",
                "config.schedulers.shoot.bindingMode=Patch",
            ],
        ),
        (
            "other priorities only",
            &["config.schedulers.shoot.priorities[0].name=ShootCount"],
        ),
    ];
    for (what, set) in cases {
        let m = render(&[], set);
        let carbon = what != "other priorities only";
        let patch = set.iter().any(|s| s.ends_with("bindingMode=Patch"));
        assert_exact(
            &grants(m.scheduler_one("ClusterRole")),
            &cluster_grants(patch, carbon),
            what,
        );
    }
}

#[test]
fn region_configmaps_are_read_in_the_garden_namespace_only() {
    for set in [vec![], vec!["config.leaderElection.leaderElect=false"]] {
        let m = render(&[], &set);
        let role = m.named("Role", "-region-config");
        assert_eq!(role["metadata"]["namespace"], "garden", "{set:?}");
        assert_exact(
            &grants(role),
            &expected(&[
                ("", "configmaps", None, "list"),
                ("", "configmaps", None, "watch"),
            ]),
            "region-config Role",
        );
        let binding = m.named("RoleBinding", "-region-config");
        assert_eq!(binding["metadata"]["namespace"], "garden");
        assert_eq!(binding["roleRef"]["name"], role["metadata"]["name"]);
    }
}

#[test]
fn leader_election_role_creates_leases_and_touches_only_the_configured_lease() {
    let cases = [
        // (values, set, lease namespace, lease name)
        (
            vec![],
            vec![],
            NAMESPACE,
            "gardener-scheduler-leader-election",
        ),
        (
            vec![all_options()],
            vec![],
            "garden-system",
            "scheduler-lease-ci",
        ),
        (
            vec![],
            vec![
                "config.leaderElection.resourceNamespace=kube-system",
                "config.leaderElection.resourceName=other",
            ],
            "kube-system",
            "other",
        ),
    ];
    for (files, set, namespace, name) in cases {
        let m = render(&files, &set);
        let role = m.named("Role", "-leader-election");
        assert_eq!(
            role["metadata"]["namespace"].as_str(),
            Some(namespace),
            "{files:?} {set:?}"
        );
        assert_eq!(grants(role), lease_grants(name), "{files:?} {set:?}");
        let binding = m.named("RoleBinding", "-leader-election");
        assert_eq!(binding["metadata"]["namespace"].as_str(), Some(namespace));
        assert_eq!(binding["roleRef"]["kind"], "Role");
        assert_eq!(binding["roleRef"]["name"], role["metadata"]["name"]);

        // The configuration the binary loads names the same Lease.
        let cfg: Value = serde_yaml_ng::from_str(&m.scheduler_config()).unwrap();
        assert_eq!(
            cfg["leaderElection"]["resourceNamespace"].as_str(),
            Some(namespace)
        );
        assert_eq!(cfg["leaderElection"]["resourceName"].as_str(), Some(name));
    }
}

#[test]
fn roles_are_bound_to_the_pods_service_account_and_nothing_else_is_granted() {
    for (name, files) in values_files() {
        let m = render(&files, &[]);
        let sa = m.one("ServiceAccount");
        assert_eq!(
            m.pod_spec()["serviceAccountName"],
            sa["metadata"]["name"],
            "{name}"
        );
        let pairs = [
            (
                m.scheduler_one("ClusterRoleBinding"),
                m.scheduler_one("ClusterRole"),
                "ClusterRoleBinding",
            ),
            (
                m.named("RoleBinding", "-leader-election"),
                m.named("Role", "-leader-election"),
                "leader-election RoleBinding",
            ),
            (
                m.named("RoleBinding", "-region-config"),
                m.named("Role", "-region-config"),
                "region-config RoleBinding",
            ),
        ];
        for (binding, role, binding_kind) in pairs {
            assert_eq!(
                binding["roleRef"]["name"], role["metadata"]["name"],
                "{name}"
            );
            assert_eq!(binding["roleRef"]["kind"], role["kind"], "{name}");
            let subjects = seq(&binding["subjects"]);
            assert_eq!(subjects.len(), 1, "{name} {binding_kind}");
            assert_eq!(subjects[0]["kind"], "ServiceAccount");
            assert_eq!(subjects[0]["name"], sa["metadata"]["name"]);
            assert_eq!(subjects[0]["namespace"].as_str(), Some(NAMESPACE));
        }
        let (reader, rbac): (Vec<_>, Vec<_>) =
            m.0.iter()
                .filter(|d| {
                    d["apiVersion"]
                        .as_str()
                        .is_some_and(|v| v.starts_with("rbac.authorization.k8s.io/"))
                })
                .partition(|d| is_for_people(d));
        // The what-if reader and the plan applier (on in all-options only) grant people, not
        // the pod: two roles each and their bindings to the subjects.
        assert_eq!(
            reader.len(),
            if name == "all-options" { 8 } else { 0 },
            "{name}"
        );
        for d in reader.iter().filter(|d| d["subjects"].is_sequence()) {
            assert!(
                seq(&d["subjects"])
                    .iter()
                    .all(|s| s["kind"] != "ServiceAccount"),
                "{name}: the roles for people are not bound to the pod"
            );
        }
        assert_eq!(
            rbac.len(),
            6,
            "{name}: one ClusterRole, the leader-election and region-config Roles and their bindings, nothing more"
        );
    }
}

#[test]
fn rbac_and_lease_role_can_be_left_out() {
    let m = render(&[], &["rbac.create=false"]);
    for kind in ["ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"] {
        assert!(
            m.of_kind(kind).is_empty(),
            "rbac.create=false still renders a {kind}"
        );
    }
    let m = render(&[], &["config.leaderElection.leaderElect=false"]);
    let names = |kind| {
        m.of_kind(kind)
            .iter()
            .map(|d| str_at(&d["metadata"], "name"))
            .collect::<Vec<_>>()
    };
    for kind in ["Role", "RoleBinding"] {
        let found = names(kind);
        assert!(
            found.len() == 1 && found[0].ends_with("-region-config"),
            "no Lease, no Lease permissions: {kind} {found:?}"
        );
    }
    assert_eq!(m.of_kind("ClusterRole").len(), 1);
}

#[test]
fn rendered_config_passes_the_binarys_own_validation() {
    for (name, files) in values_files() {
        let m = render(&files, &[]);
        let config = m.scheduler_config();
        let out = validate_rendered(&m);
        assert!(
            out.status.success(),
            "{name} values render a config the binary rejects:\n{}\n--- config ---\n{config}",
            String::from_utf8_lossy(&out.stderr)
        );
        // What the binary loaded agrees with the ports the pod exposes and probes.
        let loaded: Value =
            serde_yaml_ng::from_slice(&out.stdout).expect("--validate-only prints YAML");
        assert_eq!(
            loaded["server"]["metrics"]["port"].as_i64(),
            Some(m.container_port("metrics")),
            "{name}"
        );
        assert_eq!(
            loaded["server"]["healthProbes"]["port"].as_i64(),
            Some(m.container_port("healthz")),
            "{name}"
        );
        let service_port = &seq(&m.one("Service")["spec"]["ports"])[0];
        assert_eq!(
            service_port["port"].as_i64(),
            Some(m.container_port("metrics")),
            "{name}"
        );
        assert_eq!(service_port["targetPort"], "metrics");
    }
}

#[test]
fn values_config_is_merged_over_the_defaults_key_by_key() {
    let m = render(
        &[],
        &[
            "config.schedulers.shoot.concurrentSyncs=12",
            "config.logFormat=text",
        ],
    );
    let out = validate_rendered(&m);
    assert_success(&out);
    let loaded: Value = serde_yaml_ng::from_slice(&out.stdout).unwrap();
    assert_eq!(
        loaded["schedulers"]["shoot"]["concurrentSyncs"].as_i64(),
        Some(12)
    );
    assert_eq!(loaded["logFormat"].as_str(), Some("text"));
    // Siblings of the overridden keys keep their defaults.
    assert_eq!(
        loaded["schedulers"]["shoot"]["retrySyncPeriod"].as_str(),
        Some("15s")
    );
    assert_eq!(loaded["logLevel"].as_str(), Some("info"));
    assert_eq!(
        loaded["apiVersion"].as_str(),
        Some("scheduler.config.gardener.cloud/v1alpha1")
    );

    // configFile is merged over config, key by key.
    let m = render(&[all_options()], &[]);
    let out = validate_rendered(&m);
    assert_success(&out);
    let loaded: Value = serde_yaml_ng::from_slice(&out.stdout).unwrap();
    assert_eq!(
        loaded["schedulers"]["shoot"]["concurrentSyncs"].as_i64(),
        Some(25),
        "from configFile"
    );
    assert_eq!(
        loaded["clientConnection"]["qps"].as_f64(),
        Some(100.0),
        "from configFile"
    );
    assert_eq!(
        loaded["clientConnection"]["burst"].as_i64(),
        Some(160),
        "from config"
    );
    // A scheduled profile chain, cron and timestamps included, reaches the binary intact.
    let profiles = &loaded["schedulers"]["shoot"]["profiles"];
    let ids: Vec<String> = seq(profiles).iter().map(|p| str_at(p, "id")).collect();
    assert_eq!(ids, ["release-weekend", "saturday-maintenance", "default"]);
    assert_eq!(
        profiles[0]["schedule"]["between"]["start"].as_str(),
        Some("2026-12-04T18:00:00Z")
    );
    assert_eq!(
        profiles[1]["schedule"]["activePeriod"]["startCron"].as_str(),
        Some("0 22 * * 6")
    );
}

#[test]
fn invalid_config_values_are_caught_by_the_binarys_validation_with_the_field_path() {
    let cases = [
        (
            "config.schedulers.shoot.concurrentSyncs=-1",
            "schedulers.shoot.concurrentSyncs",
        ),
        (
            "config.leaderElection.renewDeadline=20s",
            "leaderElection.leaseDuration",
        ),
        (
            "config.featureGates.DefaultSeccompProfile=true",
            "featureGates.DefaultSeccompProfile",
        ),
        (
            "config.schedulers.shoot.candidateDeterminationStrategy=Nearest",
            "schedulers.shoot.candidateDeterminationStrategy",
        ),
        ("config.server.metrics.port=10251", "server.metrics.port"),
    ];
    for (set, path) in cases {
        let m = render(&[], &[set]);
        let out = validate_rendered(&m);
        assert!(!out.status.success(), "--set {set} was accepted");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(path),
            "--set {set}: error does not name {path}:\n{stderr}"
        );
    }
}

/// A configuration as the upstream gardener-scheduler's chart renders it.
const UPSTREAM_CONFIG: &str = "\
apiVersion: scheduler.config.gardener.cloud/v1alpha1
kind: SchedulerConfiguration
clientConnection:
  qps: 100
  burst: 130
leaderElection:
  leaderElect: true
  leaseDuration: 15s
  renewDeadline: 10s
  retryPeriod: 2s
  resourceLock: leases
  resourceName: gardener-scheduler-leader-election
  resourceNamespace: garden
logLevel: info
logFormat: json
server:
  healthProbes:
    bindAddress: 0.0.0.0
    port: 10251
  metrics:
    port: 19251
schedulers:
  backupBucket:
    concurrentSyncs: 5
  shoot:
    concurrentSyncs: 5
    retrySyncPeriod: 15s
    candidateDeterminationStrategy: MinimalDistance
featureGates: {}
";

#[test]
fn an_existing_config_file_is_reused_as_is_through_config_file() {
    let files = [
        ("upstream", UPSTREAM_CONFIG.to_string()),
        (
            "zero values over non-zero defaults",
            "leaderElection:\n  leaderElect: false\nschedulers:\n  backupBucket:\n    concurrentSyncs: 0\n"
                .to_string(),
        ),
        (
            "annotated example",
            std::fs::read_to_string(
                repo().join("example/20-componentconfig-gardener-scheduler.yaml"),
            )
            .unwrap(),
        ),
        (
            "operator-rendered, SameRegion",
            std::fs::read_to_string(
                repo().join("tests/data/upstream-config/operator-rendered-sameregion.yaml"),
            )
            .unwrap(),
        ),
        (
            "operator-rendered, empty strategy",
            std::fs::read_to_string(
                repo().join("tests/data/upstream-config/operator-rendered-empty-strategy.yaml"),
            )
            .unwrap(),
        ),
        (
            "upstream's example",
            std::fs::read_to_string(repo().join("tests/data/upstream-config/upstream-example.yaml"))
                .unwrap(),
        ),
        (
            "profiles example",
            std::fs::read_to_string(repo().join("example/21-componentconfig-profiles.yaml"))
                .unwrap(),
        ),
    ];
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("chart");
    std::fs::create_dir_all(&dir).unwrap();
    for (i, (name, text)) in files.iter().enumerate() {
        let file = dir.join(format!("config-file-{}-{i}.yaml", std::process::id()));
        std::fs::write(&file, text).unwrap();
        let set_file = format!("configFile={}", file.display());
        let out = run_helm(
            &chart(),
            &[
                "template",
                RELEASE,
                "--namespace",
                NAMESPACE,
                "--set-file",
                &set_file,
            ],
            &[],
            &[],
        );
        let _ = std::fs::remove_file(&file);
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let m = parse_manifests(&out);

        let direct = validate_with_binary(text);
        let through_chart = validate_rendered(&m);
        assert!(
            direct.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&direct.stderr)
        );
        assert!(
            through_chart.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&through_chart.stderr)
        );
        assert_eq!(
            String::from_utf8_lossy(&through_chart.stdout),
            String::from_utf8_lossy(&direct.stdout),
            "{name}: the binary loads the same configuration from the chart as from the file itself"
        );
    }
}

/// Renders the chart with `configFile` set to `text`, as `--set-file configFile=FILE` does.
fn render_with_config_file(text: &str, set: &[&str]) -> Manifests {
    let dir = scratch_dir();
    let file = dir.join(CONFIG_KEY);
    std::fs::write(&file, text).unwrap();
    let set_file = format!("configFile={}", file.display());
    let mut args = vec![
        "template",
        RELEASE,
        "--namespace",
        NAMESPACE,
        "--set-file",
        &set_file,
    ];
    let sets: Vec<String> = set.iter().map(|s| format!("--set={s}")).collect();
    args.extend(sets.iter().map(String::as_str));
    let out = run_helm(&chart(), &args, &[], &[]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_success(&out);
    parse_manifests(&out)
}

#[test]
fn the_operator_rendered_file_drives_the_lease_rbac_and_ports_of_the_manifests() {
    let text = std::fs::read_to_string(
        repo().join("tests/data/upstream-config/operator-rendered-sameregion.yaml"),
    )
    .unwrap();
    let m = render_with_config_file(&text, &[]);
    // gardener-operator puts the Lease into kube-system; the chart grants exactly that Lease.
    let role = m.named("Role", "-leader-election");
    assert_eq!(role["metadata"]["namespace"].as_str(), Some("kube-system"));
    assert_eq!(
        grants(role),
        lease_grants("gardener-scheduler-leader-election")
    );
    assert_eq!(m.container_port("healthz"), 10251);
    assert_eq!(m.container_port("metrics"), 19251);
    let out = validate_rendered(&m);
    assert_success(&out);
    let loaded: Value = serde_yaml_ng::from_slice(&out.stdout).unwrap();
    assert_eq!(
        loaded["leaderElection"]["leaseDuration"].as_str(),
        Some("15s")
    );
    assert_eq!(
        loaded["schedulers"]["shoot"]["concurrentSyncs"].as_i64(),
        Some(5)
    );
    assert_eq!(
        loaded["clientConnection"]["kubeconfig"].as_str(),
        Some("/var/run/secrets/gardener.cloud/shoot/generic-kubeconfig/kubeconfig"),
        "without kubeconfig.secretName the file's kubeconfig path stays"
    );

    // With a kubeconfig Secret, the chart points the file at the mounted Secret instead.
    let m = render_with_config_file(&text, &["kubeconfig.secretName=garden-kubeconfig"]);
    let cfg: Value = serde_yaml_ng::from_str(&m.scheduler_config()).unwrap();
    assert_eq!(
        cfg["clientConnection"]["kubeconfig"].as_str(),
        Some("/etc/gardener-scheduler/kubeconfig/kubeconfig")
    );
}

#[test]
fn zero_ports_and_an_empty_lease_name_in_a_config_file_mean_upstreams_defaults_in_the_manifests() {
    let m = render_with_config_file(
        "apiVersion: scheduler.config.gardener.cloud/v1alpha1\nkind: SchedulerConfiguration\nleaderElection: {resourceName: \"\", resourceNamespace: kube-system}\nserver: {healthProbes: {bindAddress: \"\", port: 0}, metrics: {bindAddress: \"\", port: 0}}\n",
        &[],
    );
    assert_eq!(m.container_port("healthz"), 10251);
    assert_eq!(m.container_port("metrics"), 19251);
    assert_eq!(
        grants(m.named("Role", "-leader-election")),
        lease_grants("gardener-scheduler-leader-election")
    );
    let out = validate_rendered(&m);
    assert_success(&out);
    let loaded: Value = serde_yaml_ng::from_slice(&out.stdout).unwrap();
    assert_eq!(
        loaded["server"]["healthProbes"]["port"].as_i64(),
        Some(10251)
    );
    assert_eq!(loaded["server"]["metrics"]["port"].as_i64(), Some(19251));
}

#[test]
fn a_config_file_of_another_kind_is_refused() {
    let out = template_output(
        &chart(),
        &[],
        &["configFile=kind: KubeSchedulerConfiguration"],
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("configFile: kind"));
}

#[test]
fn kubeconfig_secret_is_mounted_and_named_in_the_config() {
    let m = render(&[all_options()], &[]);
    let cfg: Value = serde_yaml_ng::from_str(&m.scheduler_config()).unwrap();
    let kubeconfig = str_at(&cfg["clientConnection"], "kubeconfig");
    let mount = seq(&m.container()["volumeMounts"])
        .iter()
        .find(|v| v["name"] == "kubeconfig")
        .expect("kubeconfig volume is mounted");
    assert_eq!(
        kubeconfig,
        format!("{}/garden.kubeconfig", str_at(mount, "mountPath"))
    );
    let volume = seq(&m.pod_spec()["volumes"])
        .iter()
        .find(|v| v["name"] == "kubeconfig")
        .unwrap();
    assert_eq!(
        volume["secret"]["secretName"],
        "gardener-scheduler-kubeconfig"
    );
    assert_eq!(
        m.pod_spec()["automountServiceAccountToken"],
        false,
        "the garden is reached by kubeconfig"
    );

    let m = render(&[], &[]);
    assert_eq!(
        m.pod_spec()["automountServiceAccountToken"],
        true,
        "in-cluster needs the token"
    );
}

#[test]
fn pods_run_hardened_with_requests_and_probes() {
    for (name, files) in values_files() {
        let m = render(&files, &[]);
        let pod = m.pod_spec();
        let c = m.container();
        let psc = &pod["securityContext"];
        let csc = &c["securityContext"];
        assert_eq!(psc["runAsNonRoot"], true, "{name}");
        assert_eq!(
            psc["runAsUser"].as_i64(),
            Some(65532),
            "{name}: the image's nonroot user"
        );
        assert_eq!(psc["seccompProfile"]["type"], "RuntimeDefault", "{name}");
        assert_eq!(csc["runAsNonRoot"], true, "{name}");
        assert_eq!(csc["readOnlyRootFilesystem"], true, "{name}");
        assert_eq!(csc["allowPrivilegeEscalation"], false, "{name}");
        assert_eq!(csc["privileged"], false, "{name}");
        assert_eq!(
            seq(&csc["capabilities"]["drop"]),
            &vec![Value::from("ALL")],
            "{name}"
        );
        assert!(
            csc["capabilities"]["add"].is_null(),
            "{name}: no capability is added"
        );
        assert_eq!(csc["seccompProfile"]["type"], "RuntimeDefault", "{name}");
        for resource in ["cpu", "memory"] {
            assert!(
                c["resources"]["requests"][resource].is_string(),
                "{name}: no {resource} request"
            );
        }
        let arenas: Vec<&Value> = seq(&c["env"])
            .iter()
            .filter(|e| e["name"] == "MALLOC_ARENA_MAX")
            .collect();
        assert_eq!(
            arenas.first().map(|e| &e["value"]),
            Some(&Value::from("1")),
            "{name}: one malloc arena"
        );
        for (probe, path) in [("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")] {
            assert_eq!(
                c[probe]["httpGet"]["path"].as_str(),
                Some(path),
                "{name} {probe}"
            );
            assert_eq!(c[probe]["httpGet"]["port"], "healthz", "{name} {probe}");
        }
    }
}

#[test]
fn probes_and_metrics_follow_the_configured_ports() {
    let m = render(
        &[],
        &[
            "config.server.healthProbes.port=9443",
            "config.server.metrics.port=9090",
        ],
    );
    assert_eq!(m.container_port("healthz"), 9443);
    assert_eq!(m.container_port("metrics"), 9090);
    assert_eq!(
        seq(&m.one("Service")["spec"]["ports"])[0]["port"].as_i64(),
        Some(9090)
    );
}

fn config_checksum(m: &Manifests) -> String {
    str_at(
        &m.one("Deployment")["spec"]["template"]["metadata"]["annotations"],
        "checksum/config",
    )
}

#[test]
fn a_config_change_rolls_the_pods_and_nothing_else_does_through_the_checksum() {
    let base = config_checksum(&render(&[], &[]));
    assert_eq!(
        base,
        config_checksum(&render(&[], &[])),
        "rendering is deterministic"
    );
    assert_eq!(
        base,
        config_checksum(&render(&[], &["podLabels.team=a"])),
        "not a config change"
    );
    assert_ne!(
        base,
        config_checksum(&render(&[], &["config.logLevel=debug"]))
    );
    assert_ne!(
        base,
        config_checksum(&render(&[], &["config.schedulers.shoot.concurrentSyncs=7"]))
    );
}

#[test]
fn one_replica_has_no_disruption_budget_and_no_anti_affinity() {
    let m = render(&[], &[]);
    assert!(m.of_kind("PodDisruptionBudget").is_empty());
    assert!(m.pod_spec()["affinity"].is_null());
    assert_eq!(m.one("Deployment")["spec"]["replicas"].as_i64(), Some(1));
}

#[test]
fn several_replicas_get_a_disruption_budget_and_prefer_different_nodes() {
    let m = render(&[], &["replicaCount=2"]);
    let selector = &m.one("Deployment")["spec"]["selector"]["matchLabels"];
    let pdb = m.one("PodDisruptionBudget");
    assert_eq!(pdb["spec"]["maxUnavailable"].as_i64(), Some(1));
    assert_eq!(&pdb["spec"]["selector"]["matchLabels"], selector);
    let preferred = seq(
        &m.pod_spec()["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"],
    );
    assert_eq!(preferred.len(), 1);
    let term = &preferred[0]["podAffinityTerm"];
    assert_eq!(term["topologyKey"], "kubernetes.io/hostname");
    assert_eq!(&term["labelSelector"]["matchLabels"], selector);
    assert!(m.pod_spec()["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"].is_null());
}

#[test]
fn an_explicit_affinity_replaces_the_default_spreading() {
    let m = render(&[all_options()], &[]);
    let affinity = &m.pod_spec()["affinity"];
    assert!(affinity["podAntiAffinity"].is_null());
    assert!(!affinity["nodeAffinity"].is_null());
    assert!(
        m.of_kind("PodDisruptionBudget").len() == 1,
        "three replicas keep their budget"
    );
}

#[test]
fn impossible_values_are_refused_at_render_time_naming_the_value() {
    let cases = [
        (
            vec!["replicaCount=2", "config.leaderElection.leaderElect=false"],
            "config.leaderElection.leaderElect",
        ),
        (
            vec!["config.schedulers.shoot.bindingMode=Bind"],
            "config.schedulers.shoot.bindingMode",
        ),
        (vec!["serviceAccount.create=false"], "serviceAccount.name"),
        (vec!["resources.requests=null"], "resources.requests"),
        (
            vec!["extraFiles.schedulerconfiguration\\.yaml=x"],
            "extraFiles",
        ),
        (
            vec![
                "existingConfigMap.name=gardener-scheduler-config",
                "configFile=logLevel: debug",
            ],
            "existingConfigMap.name and configFile",
        ),
        (
            vec![
                "existingConfigMap.name=gardener-scheduler-config",
                "extraFiles.matrix\\.yaml=a: {}",
            ],
            "extraFiles cannot be combined with existingConfigMap.name",
        ),
    ];
    for (set, value) in cases {
        let out = template_output(&chart(), &[], &set);
        assert!(!out.status.success(), "--set {set:?} rendered");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(value),
            "--set {set:?}: error does not name {value}:\n{stderr}"
        );
    }
}

#[test]
fn service_monitor_and_crds_are_off_by_default() {
    let kinds = render(&[], &[]).kinds();
    let want: BTreeSet<String> = [
        "ServiceAccount",
        "ConfigMap",
        "ClusterRole",
        "ClusterRoleBinding",
        "Role",
        "RoleBinding",
        "Service",
        "Deployment",
    ]
    .map(String::from)
    .into();
    assert_eq!(kinds, want);
}

#[test]
fn all_options_render_the_alerts_and_the_dashboard_too() {
    let m = render(&[all_options()], &[]);
    let rule = m.one("PrometheusRule");
    assert_eq!(rule["apiVersion"], "monitoring.coreos.com/v1");
    assert_eq!(rule["metadata"]["namespace"], NAMESPACE);
    assert!(!seq(&rule["spec"]["groups"]).is_empty());
    let dashboard = m.named("ConfigMap", "-dashboard");
    assert_eq!(dashboard["metadata"]["namespace"], "monitoring");
    let kinds = m.kinds();
    assert!(kinds.contains("PrometheusRule") && kinds.contains("ServiceMonitor"));
}

#[test]
fn service_monitor_scrapes_the_metrics_port() {
    let m = render(&[all_options()], &[]);
    let sm = m.one("ServiceMonitor");
    let endpoint = &seq(&sm["spec"]["endpoints"])[0];
    assert_eq!(endpoint["port"], "metrics");
    assert_eq!(endpoint["path"], "/metrics");
    assert_eq!(endpoint["interval"], "15s");
    assert_eq!(sm["metadata"]["labels"]["release"], "prometheus");
    let service_labels = &m.one("Service")["metadata"]["labels"];
    for (k, v) in sm["spec"]["selector"]["matchLabels"].as_mapping().unwrap() {
        assert_eq!(
            &service_labels[k.as_str().unwrap()],
            v,
            "ServiceMonitor selects the metrics Service"
        );
    }
}

fn crd_names_in(text: &str) -> BTreeSet<String> {
    serde_yaml_ng::Deserializer::from_str(text)
        .map(|d| Value::deserialize(d).unwrap())
        .filter(|d| d["kind"] == "CustomResourceDefinition")
        .map(|d| str_at(&d["metadata"], "name"))
        .collect()
}

#[test]
fn crds_option_installs_exactly_the_crds_of_config_crd() {
    let mut want = BTreeSet::new();
    for entry in std::fs::read_dir(repo().join("config/crd")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "yaml") {
            want.extend(crd_names_in(&std::fs::read_to_string(&path).unwrap()));
        }
    }
    let m = render(&[], &["crds.install=true"]);
    let got: BTreeSet<String> = m
        .of_kind("CustomResourceDefinition")
        .iter()
        .map(|d| str_at(&d["metadata"], "name"))
        .collect();
    assert_eq!(got, want);
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_symlink() {
            continue;
        } else if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

#[test]
fn crds_option_renders_every_definition_in_the_linked_directory() {
    // A copy of the chart whose crds-dev holds a known definition, independent of config/crd/.
    let copy =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("chart-copy-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&copy);
    copy_dir(&chart(), &copy);
    std::fs::create_dir_all(copy.join("crds-dev")).unwrap();
    std::fs::write(
        copy.join("crds-dev/widgets.yaml"),
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\nspec:\n  group: example.com\n",
    )
    .unwrap();
    std::fs::write(copy.join("crds-dev/README.md"), "not a manifest\n").unwrap();

    let off = render_chart(&copy, &[], &[]);
    let on = render_chart(&copy, &[], &["crds.install=true"]);
    let _ = std::fs::remove_dir_all(&copy);
    assert!(off.of_kind("CustomResourceDefinition").is_empty());
    let crds = on.of_kind("CustomResourceDefinition");
    assert_eq!(crds.len(), 1);
    assert_eq!(crds[0]["metadata"]["name"], "widgets.example.com");
}

#[test]
fn chart_app_version_is_the_crate_version() {
    let chart_yaml: Value =
        serde_yaml_ng::from_str(&std::fs::read_to_string(chart().join("Chart.yaml")).unwrap())
            .unwrap();
    assert_eq!(
        chart_yaml["appVersion"].as_str(),
        Some(env!("CARGO_PKG_VERSION"))
    );
    let m = render(&[], &[]);
    assert_eq!(
        str_at(m.container(), "image"),
        format!("gardener-scheduler:{}", env!("CARGO_PKG_VERSION"))
    );
}

/// Paths of the leaves of a values tree (maps are walked, everything else is a leaf).
fn leaf_paths(v: &Value, prefix: &str, out: &mut BTreeMap<String, Value>) {
    match v.as_mapping() {
        Some(map) if !map.is_empty() => {
            for (k, child) in map {
                let key = k.as_str().unwrap();
                let path = if prefix.is_empty() {
                    key.to_string()
                } else {
                    format!("{prefix}.{key}")
                };
                leaf_paths(child, &path, out);
            }
        }
        _ => {
            out.insert(prefix.to_string(), v.clone());
        }
    }
}

fn lookup<'a>(v: &'a Value, path: &str) -> &'a Value {
    path.split('.').fold(v, |v, key| &v[key])
}

#[test]
fn all_options_values_set_every_value_of_the_chart() {
    let read = |p: PathBuf| -> Value {
        serde_yaml_ng::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
    };
    let defaults = read(chart().join("values.yaml"));
    let all = read(all_options());
    let mut leaves = BTreeMap::new();
    leaf_paths(&defaults, "", &mut leaves);
    let missing: Vec<_> = leaves
        .keys()
        .filter(|p| lookup(&all, p).is_null())
        .collect();
    assert!(
        missing.is_empty(),
        "ci/all-options-values.yaml does not set {missing:?}"
    );
}

#[test]
fn every_value_in_values_yaml_is_commented() {
    let text = std::fs::read_to_string(chart().join("values.yaml")).unwrap();
    // (indent, documented) of the enclosing keys.
    let mut stack: Vec<(usize, bool)> = Vec::new();
    let mut previous_is_comment = false;
    let mut undocumented = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        if trimmed.is_empty() {
            previous_is_comment = false;
            continue;
        }
        if trimmed.starts_with('#') {
            previous_is_comment = true;
            continue;
        }
        if trimmed.starts_with("- ") || !trimmed.contains(':') {
            previous_is_comment = false;
            continue;
        }
        while stack.last().is_some_and(|(d, _)| *d >= indent) {
            stack.pop();
        }
        let documented = previous_is_comment || stack.iter().any(|(_, d)| *d);
        let opens_map = trimmed.ends_with(':');
        if !documented && !opens_map {
            undocumented.push(format!("line {}: {trimmed}", i + 1));
        }
        // The keys under `config` are described one by one, like in docs/usage/configuration.md,
        // so its own comment does not cover them.
        let covers_children = documented && !(indent == 0 && trimmed == "config:");
        stack.push((indent, covers_children));
        previous_is_comment = false;
    }
    assert!(
        undocumented.is_empty(),
        "values.yaml keys without a comment: {undocumented:#?}"
    );
}

/// What `simulate --live` lists, and nothing else: no watch, no get, no write.
const WHAT_IF_READER_GRANTS: &[(&str, &str, Option<&str>, &str)] = &[
    ("core.gardener.cloud", "seeds", None, "list"),
    ("core.gardener.cloud", "shoots", None, "list"),
    ("core.gardener.cloud", "cloudprofiles", None, "list"),
    (
        "core.gardener.cloud",
        "namespacedcloudprofiles",
        None,
        "list",
    ),
    ("core.gardener.cloud", "projects", None, "list"),
];

#[test]
fn the_what_if_reader_role_is_off_by_default_and_read_only() {
    assert_off_by_default(is_what_if_reader, "the what-if reader");
    let m = render(&[], &["whatIfReader.create=true"]);
    let role = m.named("ClusterRole", "-what-if-reader");
    assert_exact(
        &grants(role),
        &expected(WHAT_IF_READER_GRANTS),
        "what-if reader ClusterRole",
    );
    let cm = m.named("Role", "-what-if-reader-configmaps");
    assert_eq!(cm["metadata"]["namespace"], "garden");
    assert_exact(
        &grants(cm),
        &expected(&[("", "configmaps", None, "list")]),
        "what-if reader Role",
    );
    // the scheduler's own roles are unchanged beside it
    assert_eq!(m.of_kind("ClusterRole").len(), 2);
    assert!(
        !m.0.iter().any(is_plan_applier),
        "the plan applier stays off"
    );
    assert!(
        !m.of_kind("ClusterRoleBinding")
            .iter()
            .any(|b| str_at(&b["metadata"], "name").contains("what-if")),
        "no subjects, no binding"
    );

    // CarbonIntensity reads forecasts in every namespace: list on ConfigMaps cluster-wide
    let carbon = render(
        &[],
        &[
            "whatIfReader.create=true",
            "config.schedulers.shoot.priorities[0].name=ShootCount",
            "config.schedulers.shoot.priorities[1].name=CarbonIntensity",
        ],
    );
    let mut want = WHAT_IF_READER_GRANTS.to_vec();
    want.push(("", "configmaps", None, "list"));
    assert_exact(
        &grants(carbon.named("ClusterRole", "-what-if-reader")),
        &expected(&want),
        "what-if reader ClusterRole with CarbonIntensity",
    );

    // subjects: both roles bound to them
    let bound = render(
        &[],
        &[
            "whatIfReader.create=true",
            "whatIfReader.subjects[0].kind=Group",
            "whatIfReader.subjects[0].name=landscape-operators",
            "whatIfReader.subjects[0].apiGroup=rbac.authorization.k8s.io",
        ],
    );
    for (kind, suffix, role_kind) in [
        ("ClusterRoleBinding", "-what-if-reader", "ClusterRole"),
        ("RoleBinding", "-what-if-reader-configmaps", "Role"),
    ] {
        let b = bound.named(kind, suffix);
        assert_eq!(b["roleRef"]["kind"], role_kind);
        assert!(str_at(&b["roleRef"], "name").ends_with(suffix));
        assert_eq!(b["subjects"][0]["kind"], "Group");
        assert_eq!(b["subjects"][0]["name"], "landscape-operators");
    }
}

/// What `plan apply` needs beyond the reads of `simulate --live`: single shoots, the binding,
/// Events. No patch or update on shoots themselves.
const PLAN_APPLIER_GRANTS: &[(&str, &str, Option<&str>, &str)] = &[
    ("core.gardener.cloud", "seeds", None, "list"),
    ("core.gardener.cloud", "shoots", None, "list"),
    ("core.gardener.cloud", "shoots", None, "get"),
    ("core.gardener.cloud", "shoots/binding", None, "update"),
    ("core.gardener.cloud", "cloudprofiles", None, "list"),
    (
        "core.gardener.cloud",
        "namespacedcloudprofiles",
        None,
        "list",
    ),
    ("core.gardener.cloud", "projects", None, "list"),
    ("events.k8s.io", "events", None, "create"),
];

#[test]
fn the_plan_applier_role_is_off_by_default_and_grants_what_apply_needs() {
    assert_off_by_default(is_plan_applier, "the plan applier");
    let m = render(&[], &["planApplier.create=true"]);
    assert_exact(
        &grants(m.named("ClusterRole", "-plan-applier")),
        &expected(PLAN_APPLIER_GRANTS),
        "plan applier ClusterRole",
    );
    let garden = m.named("Role", "-plan-applier-garden");
    assert_eq!(garden["metadata"]["namespace"], "garden");
    assert_exact(
        &grants(garden),
        &expected(&[
            ("", "configmaps", None, "list"),
            ("coordination.k8s.io", "leases", None, "create"),
            (
                "coordination.k8s.io",
                "leases",
                Some("gardener-scheduler-plan-apply"),
                "get",
            ),
            (
                "coordination.k8s.io",
                "leases",
                Some("gardener-scheduler-plan-apply"),
                "update",
            ),
            (
                "coordination.k8s.io",
                "leases",
                Some("gardener-scheduler-plan-apply"),
                "delete",
            ),
        ]),
        "plan applier Role",
    );
    assert!(
        !m.of_kind("ClusterRoleBinding")
            .iter()
            .any(|b| str_at(&b["metadata"], "name").contains("plan-applier")),
        "no subjects, no binding"
    );
    let bound = render(
        &[],
        &[
            "planApplier.create=true",
            "planApplier.subjects[0].kind=Group",
            "planApplier.subjects[0].name=landscape-operators",
        ],
    );
    for (kind, suffix, role_kind) in [
        ("ClusterRoleBinding", "-plan-applier", "ClusterRole"),
        ("RoleBinding", "-plan-applier-garden", "Role"),
    ] {
        let b = bound.named(kind, suffix);
        assert_eq!(b["roleRef"]["kind"], role_kind);
        assert!(str_at(&b["roleRef"], "name").ends_with(suffix));
        assert_eq!(b["subjects"][0]["name"], "landscape-operators");
    }
}

/// The operator's ConfigMap as the pod would mount it: its key in a directory of its own.
fn mount_existing(text: &str) -> (PathBuf, PathBuf) {
    let dir = scratch_dir();
    let file = dir.join(CONFIG_KEY);
    std::fs::write(&file, text).unwrap();
    (dir, file)
}

#[test]
fn an_existing_config_map_is_mounted_instead_of_a_rendered_one() {
    let name = "gardener-scheduler-config-5f2a9c";
    let m = render(
        &[],
        &[
            &format!("existingConfigMap.name={name}"),
            "config.leaderElection.resourceNamespace=kube-system",
            "kubeconfig.secretName=garden-kubeconfig",
        ],
    );
    assert!(
        m.of_kind("ConfigMap").is_empty(),
        "no ConfigMap is rendered"
    );
    let volume = seq(&m.pod_spec()["volumes"])
        .iter()
        .find(|v| v["name"] == "config")
        .expect("config volume exists");
    assert_eq!(volume["configMap"]["name"].as_str(), Some(name));
    assert!(
        volume["configMap"]["items"].is_null(),
        "the whole ConfigMap is mounted: files beside the configuration are there too"
    );
    let args: Vec<&str> = seq(&m.container()["args"])
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let mount = m.config_mount_path();
    assert!(
        args.contains(&format!("--config={mount}/{CONFIG_KEY}").as_str()),
        "{args:?}"
    );
    // The file keeps its own clientConnection.kubeconfig; the flag points at the mounted Secret.
    assert!(
        args.contains(&"--kubeconfig=/etc/gardener-scheduler/kubeconfig/kubeconfig"),
        "{args:?}"
    );
    assert!(
        args.contains(&"--expect-lease=kube-system/gardener-scheduler-leader-election"),
        "{args:?}"
    );
    assert!(args.contains(&"--expect-health-port=10251"), "{args:?}");
    assert!(args.contains(&"--expect-metrics-port=19251"), "{args:?}");
    assert!(args.contains(&"--expect-binding-mode=Binding"), "{args:?}");
    assert!(
        args.contains(&"--expect-carbon-intensity=false"),
        "{args:?}"
    );
    let role = m.named("Role", "-leader-election");
    assert_eq!(role["metadata"]["namespace"].as_str(), Some("kube-system"));
    assert_eq!(
        grants(role),
        lease_grants("gardener-scheduler-leader-election")
    );
    assert!(
        m.one("Deployment")["spec"]["template"]["metadata"]["annotations"]["checksum/config"]
            .is_null(),
        "the chart cannot checksum a ConfigMap it does not render"
    );
}

#[test]
fn the_operator_config_map_starts_when_the_values_match_it_and_is_refused_naming_the_value_when_not()
 {
    let text = std::fs::read_to_string(
        repo().join("tests/data/upstream-config/operator-rendered-sameregion.yaml"),
    )
    .unwrap();
    let (dir, file) = mount_existing(&text);
    let existing = "existingConfigMap.name=gardener-scheduler-config";

    // Values that say what the operator's file says (its Lease is in kube-system).
    let m = render(
        &[],
        &[
            existing,
            "config.leaderElection.resourceNamespace=kube-system",
        ],
    );
    let out = run_validate_only_with(&file, &m.expectations());
    assert_success(&out);

    // The default values expect the Lease in the release namespace: the RBAC would not let the
    // scheduler update the operator's Lease, and the start says so.
    let m = render(&[], &[existing]);
    let out = run_validate_only_with(&file, &m.expectations());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(out.stdout.is_empty());
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("uses the Lease kube-system/gardener-scheduler-leader-election")
            && stderr.contains(&format!(
                "may update only {NAMESPACE}/gardener-scheduler-leader-election"
            ))
            && stderr.contains("config.leaderElection.resourceNamespace: kube-system"),
        "{stderr}"
    );

    // A port the Service and probes do not use.
    let m = render(
        &[],
        &[
            existing,
            "config.leaderElection.resourceNamespace=kube-system",
            "config.server.metrics.port=9090",
        ],
    );
    let out = run_validate_only_with(&file, &m.expectations());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("server.metrics.port: the configuration serves /metrics on port 19251")
            && stderr.contains("expects port 9090")
            && stderr.contains("config.server.metrics.port: 19251"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_default_grace_period_outlasts_the_longest_stop() {
    // After SIGTERM: binds, then the queued reports, the Lease release and the health server's
    // end on the control thread, the metrics server, each given all its time (the process's own
    // constants; docs/operations/deployment.md lists them).
    let longest_stop = gardener_scheduler::controller::LONGEST_STOP.as_secs() as i64;
    assert_eq!(
        longest_stop, 65,
        "docs/operations/deployment.md gives the longest stop as 65 s"
    );
    let m = render(&[], &[]);
    let grace = m.pod_spec()["terminationGracePeriodSeconds"]
        .as_i64()
        .expect("terminationGracePeriodSeconds is set");
    assert!(
        grace >= longest_stop + 5,
        "terminationGracePeriodSeconds {grace} leaves no margin over the longest stop ({longest_stop} s)"
    );
}

/// The directory of hack/schema-tools.sh: kubernetes-validate (PyPI) and the prometheus-operator
/// kinds' schemas (npm), installed into a cache outside the clone when missing.
fn schema_tools() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        PathBuf::from(
            printed_by(
                "hack/schema-tools.sh",
                "could not install the schema validators",
            )
            .trim(),
        )
    })
}

/// The Kubernetes releases the manifests are validated against: the chart's lowest (its
/// `kubeVersion`, for `unhealthyPodEvictionPolicy`) and the test API server's.
const SCHEMA_VERSIONS: [&str; 2] = ["1.27.0", "1.36.0"];

/// Problems of `objects` against the Kubernetes schemas (strict: no unknown fields) and, for the
/// monitoring kinds, against prometheus-operator's; empty when every object passes.
fn schema_problems(objects: &[Value]) -> Vec<String> {
    let dir = scratch_dir();
    let yaml_file = dir.join("objects.yaml");
    let json_file = dir.join("objects.json");
    let yaml: Vec<String> = objects
        .iter()
        .map(|o| serde_yaml_ng::to_string(o).unwrap())
        .collect();
    std::fs::write(&yaml_file, yaml.join("---\n")).unwrap();
    std::fs::write(&json_file, serde_json::to_string(objects).unwrap()).unwrap();
    let mut problems = Vec::new();
    for version in SCHEMA_VERSIONS {
        let out = Command::new(schema_tools().join("bin/kubernetes-validate"))
            .args(["--strict", "--quiet", "--kubernetes-version", version])
            .arg(&yaml_file)
            .output()
            .expect("running kubernetes-validate");
        let text = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        for line in text.lines() {
            // the monitoring kinds are not Kubernetes' own; they are checked below
            let monitoring = line.contains("monitoring.coreos.com/v1");
            if (line.starts_with("ERROR") || line.starts_with("WARN")) && !monitoring {
                problems.push(format!("Kubernetes {version}: {line}"));
            }
        }
        if !out.status.success() && problems.is_empty() {
            problems.push(format!("kubernetes-validate {version} failed: {text}"));
        }
    }
    let out = Command::new("node")
        .arg(repo().join("hack/validate-monitoring.mjs"))
        .arg(&json_file)
        .env(
            "SCHEMA_TOOLS_NODE_MODULES",
            schema_tools().join("node_modules"),
        )
        .output()
        .expect("running node hack/validate-monitoring.mjs");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    problems.extend(
        text.lines()
            .filter(|l| l.starts_with("FAIL"))
            .map(str::to_string),
    );
    if !out.status.success() && problems.is_empty() {
        problems.push(format!(
            "hack/validate-monitoring.mjs failed: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let _ = std::fs::remove_dir_all(&dir);
    problems
}

#[test]
fn every_rendered_manifest_matches_the_kubernetes_and_prometheus_operator_schemas() {
    let mut renders = values_files();
    renders.push(("two replicas", vec![]));
    for (name, files) in renders {
        let set: &[&str] = if name == "two replicas" {
            &["replicaCount=2"]
        } else {
            &[]
        };
        let m = render(&files, set);
        if name == "all-options" {
            // every optional part is on, so every template is validated
            let kinds = m.kinds();
            for kind in [
                "ServiceMonitor",
                "PrometheusRule",
                "PodDisruptionBudget",
                "CustomResourceDefinition",
            ] {
                assert!(kinds.contains(kind), "all-options renders no {kind}");
            }
        }
        let problems = schema_problems(&m.0);
        assert!(problems.is_empty(), "{name}: {problems:#?}");
    }
}

#[test]
fn the_schema_check_finds_a_wrong_field_in_each_kind_of_manifest() {
    let m = render(&[all_options()], &[]);
    let mut broken = m.0.clone();
    for object in broken.iter_mut() {
        match object["kind"].as_str() {
            Some("Deployment") => object["spec"]["replicas"] = Value::from("three"),
            Some("ServiceMonitor") => {
                object["spec"]["endpoints"][0]["scheme"] = Value::from("gopher")
            }
            Some("PrometheusRule") => object["spec"]["groups"] = Value::from("none"),
            _ => {}
        }
    }
    let problems = schema_problems(&broken);
    for kind in ["deployment", "ServiceMonitor", "PrometheusRule"] {
        assert!(
            problems.iter().any(|p| p.contains(kind)),
            "{kind} not caught: {problems:#?}"
        );
    }
}

#[test]
fn evacuation_configmaps_are_written_only_when_evacuation_is_on_and_only_in_its_namespace() {
    let m = render(&[], &[]);
    assert!(
        !m.of_kind("Role")
            .iter()
            .any(|r| str_at(&r["metadata"], "name").ends_with("-evacuation")),
        "evacuation is off by default: no Role for its ConfigMaps"
    );
    for (set, namespace) in [
        (
            vec!["config.schedulers.shoot.evacuation.enabled=true"],
            "garden",
        ),
        (
            vec![
                "config.schedulers.shoot.evacuation.enabled=true",
                "config.schedulers.shoot.evacuation.namespace=ops",
            ],
            "ops",
        ),
    ] {
        let m = render(&[], &set);
        let role = m.named("Role", "-evacuation");
        assert_eq!(role["metadata"]["namespace"].as_str(), Some(namespace));
        assert_exact(
            &grants(role),
            &expected(&[
                ("", "configmaps", None, "create"),
                ("", "configmaps", None, "patch"),
                ("", "configmaps", None, "list"),
                ("", "configmaps", None, "delete"),
            ]),
            "evacuation Role",
        );
        let binding = m.named("RoleBinding", "-evacuation");
        assert_eq!(binding["metadata"]["namespace"].as_str(), Some(namespace));
        assert_eq!(binding["roleRef"]["name"], role["metadata"]["name"]);
    }
}
