//! A catalogue of hostile inputs. Each case adds one bad object to a healthy landscape and
//! checks that the bad object gets a clear error naming it and its field, and that the healthy
//! shoot is still placed. The same catalogue is described in docs/operations/troubleshooting.md.

use std::path::PathBuf;
use std::process::Command;

#[path = "support/cli.rs"]
mod cli_support;
use cli_support::{assert_has, assert_success, base64};

const GOOD: &str = r#"
apiVersion: core.gardener.cloud/v1beta1
kind: CloudProfile
metadata: {name: aws}
spec: {type: aws}
---
apiVersion: core.gardener.cloud/v1beta1
kind: Seed
metadata: {name: good-seed}
spec:
  provider: {type: aws, region: eu-west-1, zones: [a, b, c]}
  networks: {nodes: 10.0.0.0/16, pods: 10.96.0.0/11, services: 10.64.0.0/13}
status:
  lastOperation: {type: Reconcile, state: Succeeded}
  conditions: [{type: GardenletReady, status: "True"}]
---
apiVersion: core.gardener.cloud/v1beta1
kind: Shoot
metadata: {name: good-shoot, namespace: garden-dev, creationTimestamp: "2026-11-01T00:00:00Z"}
spec:
  cloudProfile: {name: aws}
  region: eu-west-1
  provider: {type: aws, workers: [{name: w}]}
  networking: {nodes: 10.180.0.0/16}
"#;

fn seed(name: &str, body: &str) -> String {
    format!(
        "apiVersion: core.gardener.cloud/v1beta1\nkind: Seed\nmetadata: {{name: {name}}}\n{body}\nstatus:\n  lastOperation: {{type: Reconcile, state: Succeeded}}\n  conditions: [{{type: GardenletReady, status: \"True\"}}]\n"
    )
}

fn shoot(name: &str, spec: &str) -> String {
    format!(
        "apiVersion: core.gardener.cloud/v1beta1\nkind: Shoot\nmetadata: {{name: {name}, namespace: garden-dev, creationTimestamp: \"2026-11-02T00:00:00Z\"}}\nspec:\n{spec}\n"
    )
}

fn simulate(extra: &str, explain: Option<&str>) -> (i32, String, String) {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("hostile");
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join(format!(
        "case-{:x}.yaml",
        xxhash_rust::xxh3::xxh3_64(extra.as_bytes())
    ));
    std::fs::write(&f, format!("{GOOD}---\n{extra}")).unwrap();
    let mut c = Command::new(env!("CARGO_BIN_EXE_gardener-scheduler"));
    c.arg("simulate").arg("-f").arg(&f);
    if let Some(e) = explain {
        c.args(["--explain", e]);
    }
    cli_support::run(&mut c)
}

fn assert_good_shoot_placed(out: &str) {
    assert!(
        out.lines()
            .any(|l| l.starts_with("garden-dev/good-shoot") && l.contains("good-seed")),
        "the healthy shoot must still be placed:\n{out}"
    );
}

#[test]
fn malformed_seeds_are_skipped_with_the_field_named() {
    let cases = [
        (
            "seed without provider",
            seed("bad", "spec: {}"),
            "spec.provider: is required",
        ),
        (
            "seed without region",
            seed("bad", "spec:\n  provider: {type: aws}"),
            "spec.provider.region: is required",
        ),
        (
            "unparsable seed CIDR",
            seed(
                "bad",
                "spec:\n  provider: {type: aws, region: eu-west-1}\n  networks: {pods: 10.0.0.0/33}",
            ),
            "spec.networks.pods: invalid CIDR \"10.0.0.0/33\"",
        ),
        (
            "seed CIDR with a leading zero, which Go refuses",
            seed(
                "bad",
                "spec:\n  provider: {type: aws, region: eu-west-1}\n  networks: {pods: 010.000.000.000/8}",
            ),
            "spec.networks.pods: invalid CIDR \"010.000.000.000/8\": an IPv4 part has a leading zero",
        ),
        (
            "duplicated taints",
            seed(
                "bad",
                "spec:\n  provider: {type: aws, region: eu-west-1}\n  taints: [{key: a, value: b}, {key: a, value: b}]",
            ),
            "spec.taints[1]: duplicate taint \"a=b\"",
        ),
        (
            "allocatable not a quantity",
            seed("bad", "spec:\n  provider: {type: aws, region: eu-west-1}")
                .replace("status:\n", "status:\n  allocatable: {shoots: many}\n"),
            "status.allocatable.shoots: \"many\" is not a quantity",
        ),
        (
            "allocatable with a suffix upstream does not know",
            seed("bad", "spec:\n  provider: {type: aws, region: eu-west-1}")
                .replace("status:\n", "status:\n  allocatable: {shoots: 3K}\n"),
            "status.allocatable.shoots: \"3K\" has an unknown suffix",
        ),
        (
            "unknown zone selection mode",
            seed(
                "bad",
                "spec:\n  provider: {type: aws, region: eu-west-1}\n  settings: {zoneSelection: {mode: Sometimes}}",
            ),
            "spec.settings.zoneSelection.mode: unsupported value \"Sometimes\"",
        ),
    ];
    for (name, extra, want) in cases {
        let (code, out, err) = simulate(&extra, None);
        assert_eq!(code, 0, "{name}: {err}");
        assert_good_shoot_placed(&out);
        let (_, explain, _) = simulate(&extra, Some("garden-dev/good-shoot"));
        assert!(
            explain
                .lines()
                .any(|l| l.contains("bad") && l.contains(want)),
            "{name}: want {want:?} in\n{explain}"
        );
    }
}

#[test]
fn malformed_shoots_fail_alone_with_the_field_named() {
    let cases = [
        (
            "shoot without region",
            shoot(
                "bad",
                "  cloudProfile: {name: aws}\n  provider: {type: aws}",
            ),
            "invalid shoot: spec.region: is required",
        ),
        (
            "shoot without provider",
            shoot("bad", "  cloudProfile: {name: aws}\n  region: eu-west-1"),
            "invalid shoot: spec.provider.type: is required",
        ),
        (
            "shoot without cloud profile",
            shoot("bad", "  region: eu-west-1\n  provider: {type: aws}"),
            "invalid shoot: spec.cloudProfile: is required",
        ),
        (
            "shoot with unknown cloud profile",
            shoot(
                "bad",
                "  cloudProfile: {name: nope}\n  region: eu-west-1\n  provider: {type: aws}",
            ),
            "invalid shoot: spec.cloudProfile: CloudProfile \"nope\" not found",
        ),
        (
            "shoot with unparsable CIDR",
            shoot(
                "bad",
                "  cloudProfile: {name: aws}\n  region: eu-west-1\n  provider: {type: aws}\n  networking: {nodes: 300.1.0.0/16}",
            ),
            "invalid shoot: spec.networking.nodes: invalid CIDR \"300.1.0.0/16\"",
        ),
        (
            "shoot with unparsable selector",
            shoot(
                "bad",
                "  cloudProfile: {name: aws}\n  region: eu-west-1\n  provider: {type: aws}\n  seedSelector: {matchExpressions: [{key: env, operator: In}]}",
            ),
            "invalid shoot: spec.seedSelector: matchExpressions[0]: operator In needs at least one value",
        ),
        (
            "shoot with unknown ip family",
            shoot(
                "bad",
                "  cloudProfile: {name: aws}\n  region: eu-west-1\n  provider: {type: aws}\n  networking: {ipFamilies: [IPv5]}",
            ),
            "invalid shoot: spec.networking.ipFamilies[0]: unsupported value \"IPv5\"",
        ),
    ];
    for (name, extra, want) in cases {
        let (code, out, err) = simulate(&extra, None);
        assert_eq!(code, 0, "{name}: {err}");
        assert_good_shoot_placed(&out);
        let line = out
            .lines()
            .find(|l| l.starts_with("garden-dev/bad"))
            .unwrap_or_else(|| panic!("{name}: no row\n{out}"));
        assert!(line.contains(want), "{name}: want {want:?} in {line:?}");
    }
}

#[test]
fn cloud_profile_with_unparsable_selector_fails_its_shoots_only() {
    let extra = "apiVersion: core.gardener.cloud/v1beta1\nkind: CloudProfile\nmetadata: {name: broken}\nspec:\n  seedSelector: {matchExpressions: [{key: env, operator: Near, values: [x]}]}\n---\n"
        .to_string()
        + &shoot("bad", "  cloudProfile: {name: broken}\n  region: eu-west-1\n  provider: {type: aws}");
    let (code, out, _) = simulate(&extra, None);
    assert_eq!(code, 0);
    assert_good_shoot_placed(&out);
    let line = out
        .lines()
        .find(|l| l.starts_with("garden-dev/bad"))
        .unwrap();
    assert_has(
        line,
        &["CloudProfile/broken has an invalid spec.seedSelector"],
    );
}

#[test]
fn malformed_region_configmap_fails_only_the_affected_region() {
    let cfg = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("hostile-md.yaml");
    std::fs::write(
        &cfg,
        "schedulers:\n  shoot:\n    candidateDeterminationStrategy: MinimalDistance\n",
    )
    .unwrap();
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: regions\n  namespace: garden\n  labels: {scheduling.gardener.cloud/purpose: region-config}\n  annotations: {scheduling.gardener.cloud/cloudprofiles: aws}\ndata:\n  eu-north-1: |\n    eu-west-1: far\n  eu-west-1: |\n    eu-west-2: 1.5\n";
    let extra = format!(
        "{cm}---\n{}",
        shoot(
            "north",
            "  cloudProfile: {name: aws}\n  region: eu-north-1\n  provider: {type: aws}"
        )
    );
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let f = dir.join("hostile-region.yaml");
    std::fs::write(&f, format!("{GOOD}---\n{extra}")).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_gardener-scheduler"))
        .args(["simulate", "--config"])
        .arg(&cfg)
        .arg("-f")
        .arg(&f)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&out.stdout);
    let north = out
        .lines()
        .find(|l| l.starts_with("garden-dev/north"))
        .expect(&out);
    assert!(north.contains("region ConfigMap garden/regions: data[eu-north-1]: eu-west-1: distance far is not an integer"), "{north}");
    let good = out
        .lines()
        .find(|l| l.starts_with("garden-dev/good-shoot"))
        .expect(&out);
    assert!(good.contains("region ConfigMap garden/regions: data[eu-west-1]: eu-west-2: distance 1.5 is not an integer"), "{good}");
}

#[test]
fn names_and_label_values_at_kubernetes_length_limits_work() {
    // Shoot and Seed names are DNS labels (63 characters) for the API server, as namespaces are.
    let long_name = "s".repeat(63);
    let long_value = "v".repeat(63);
    let long_ns = format!("garden-{}", "p".repeat(56));
    let long_seed = "x".repeat(63);
    let extra = format!(
        "apiVersion: core.gardener.cloud/v1beta1\nkind: Shoot\nmetadata: {{name: {long_name}, namespace: {long_ns}, labels: {{k: {long_value}}}}}\nspec:\n  cloudProfile: {{name: aws}}\n  region: eu-west-1\n  provider: {{type: aws}}\n  seedSelector: {{matchLabels: {{tier: {long_value}}}}}\n---\n{}",
        seed(
            &long_seed,
            "spec:\n  provider: {type: aws, region: eu-west-1}"
        )
        .replace(
            &format!("metadata: {{name: {long_seed}}}"),
            &format!("metadata: {{name: {long_seed}, labels: {{tier: {long_value}}}}}")
        )
    );
    let (code, out, err) = simulate(&extra, None);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(&format!("{long_ns}/{long_name}")), "{out}");
    assert!(
        out.contains(&"x".repeat(63)),
        "long-named seed chosen:\n{out}"
    );
}

#[test]
fn a_ten_megabyte_manifest_is_simulated() {
    let mut text = String::from(GOOD);
    let mut i = 0;
    while text.len() < 10 * 1024 * 1024 {
        text.push_str(&format!(
            "---\napiVersion: core.gardener.cloud/v1beta1\nkind: Shoot\nmetadata: {{name: placed-{i}, namespace: garden-bulk, annotations: {{note: \"{}\"}}}}\nspec:\n  seedName: good-seed\n  cloudProfile: {{name: aws}}\n  region: eu-west-1\n  provider: {{type: aws}}\n",
            "n".repeat(200)
        ));
        i += 1;
    }
    let f = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("ten-mb.yaml");
    std::fs::write(&f, &text).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_gardener-scheduler"))
        .args(["simulate", "-o", "json", "-f"])
        .arg(&f)
        .output()
        .unwrap();
    assert_success(&out);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["decisions"][0]["seed"], "good-seed");
    assert!(
        v["explanations"][0]["priorities"]["good-seed"]["ShootCount"]["detail"]
            .as_str()
            .unwrap()
            .starts_with(&format!("{i} shoot"))
    );
}

fn write_tmp(name: &str, content: &str) -> PathBuf {
    let f = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::write(&f, content).unwrap();
    f
}

fn simulate_with(config: &std::path::Path, manifests: &std::path::Path, extra: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_gardener-scheduler"))
        .arg("simulate")
        .arg("--config")
        .arg(config)
        .arg("-f")
        .arg(manifests)
        .args(extra)
        .output()
        .unwrap();
    assert_success(&out);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn latency_matrices_with_cycles_and_unknown_regions_are_accepted() {
    // mars-1 and venus-2 have no seed; eu-west-1 -> mars-1 -> eu-central-1 -> mars-1 and
    // venus-2 <-> mars-1 are cycles; eu-west-1 lists itself.
    let cfg = write_tmp(
        "hostile-latency.yaml",
        "schedulers:\n  shoot:\n    candidateDeterminationStrategy: Scored\n    priorities:\n    - name: LatencyDistance\n      args:\n        matrix:\n          eu-west-1: {mars-1: 5, eu-west-1: 1}\n          mars-1: {eu-central-1: 5, venus-2: 3}\n          eu-central-1: {mars-1: 50, eu-west-1: 400}\n          venus-2: {mars-1: 1}\n",
    );
    let extra = format!(
        "{}---\n{}---\n{}",
        seed(
            "central",
            "spec:\n  provider: {type: aws, region: eu-central-1}"
        ),
        shoot(
            "venus",
            "  cloudProfile: {name: aws}\n  region: venus-2\n  provider: {type: aws}"
        ),
        shoot(
            "pluto",
            "  cloudProfile: {name: aws}\n  region: pluto-9\n  provider: {type: aws}"
        ),
    );
    let f = write_tmp(
        "hostile-latency-landscape.yaml",
        &format!("{GOOD}---\n{extra}"),
    );
    let out = simulate_with(&cfg, &f, &[]);
    assert_good_shoot_placed(&out);
    assert!(out.contains("3/3 pending shoots scheduled"), "{out}");
    let good = simulate_with(&cfg, &f, &["--explain", "garden-dev/good-shoot"]);
    assert!(
        good.contains("1 ms, measured (latency matrix)"),
        "a region listing itself: {good}"
    );
    let venus = simulate_with(&cfg, &f, &["--explain", "garden-dev/venus"]);
    assert!(
        venus.contains("6 ms, derived by path via mars-1 (latency matrix)"),
        "the shortest path through the cycle: {venus}"
    );
    let pluto = simulate_with(&cfg, &f, &["--explain", "garden-dev/pluto"]);
    assert!(
        pluto.contains("fallback: region-name distance"),
        "a region the matrix does not know: {pluto}"
    );
}

#[test]
fn carbon_forecasts_with_nan_negative_values_or_a_million_points_leave_placement_working() {
    let cfg = write_tmp(
        "hostile-carbon.yaml",
        "schedulers:\n  shoot:\n    candidateDeterminationStrategy: Scored\n    priorities:\n    - name: ShootCount\n    - name: CarbonIntensity\n      args:\n        configMapKey: data\n        regionLocations: {eu-west-1: IE}\n",
    );
    let point = |value: &str| {
        format!(
            r#"{{"location":"IE","timestamp":"2026-12-01T00:00:00Z","duration":2880,"value":{value}}}"#
        )
    };
    let cases = [
        ("NaN", format!("[{}]", point("\"NaN\""))),
        ("NaN literal", format!("[{}]", point("NaN"))),
        ("negative", format!("[{}]", point("-40"))),
        ("infinite", format!("[{}]", point("1e999"))),
        (
            "a million points",
            format!("[{}]", vec!["{}"; 1_000_000].join(",")),
        ),
    ];
    for (name, payload) in cases {
        let cm = format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: carbon-ie\n  namespace: kube-system\n  labels: {{scheduling.gardener.cloud/purpose: carbon-intensity}}\ndata:\n  lastHeartbeatTime: \"2026-12-01T05:00:00Z\"\nbinaryData:\n  data: {}\n",
            base64(payload.as_bytes())
        );
        let f = write_tmp("hostile-carbon-landscape.yaml", &format!("{GOOD}---\n{cm}"));
        let out = simulate_with(&cfg, &f, &["--now", "2026-12-01T06:00:00Z"]);
        assert_good_shoot_placed(&out);
        let explain = simulate_with(
            &cfg,
            &f,
            &[
                "--now",
                "2026-12-01T06:00:00Z",
                "--explain",
                "garden-dev/good-shoot",
            ],
        );
        let line = explain
            .lines()
            .find(|l| l.contains("CarbonIntensity"))
            .unwrap_or_else(|| panic!("{name}: {explain}"));
        assert!(
            line.contains(" 50.00 × 1 ") && line.contains("neutral"),
            "{name}: the malformed forecast counts for nothing: {line}"
        );
    }
}

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_gardener-scheduler"));
    c.env_remove("KUBECONFIG");
    c
}

/// Runs `c` and waits at most `HANG`: a hang is a failure, not a stuck test.
fn run_bounded(c: &mut Command) -> (i32, String, String) {
    // far above what the slowest case takes on a machine with both cores busy (the 300 MiB of
    // manifests: about 40 s): the bound tells a hang from slowness, never a slow machine
    const HANG: std::time::Duration = std::time::Duration::from_secs(300);
    use std::io::Read;
    let mut child = c
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let (mut out, mut err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if started.elapsed() > HANG {
            child.kill().unwrap();
            panic!("still running after {HANG:?}: {c:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let mut stderr = String::new();
    err.read_to_string(&mut stderr).unwrap();
    (status.code().unwrap_or(-1), reader.join().unwrap(), stderr)
}

fn landscape_with_pending(n: usize) -> PathBuf {
    let mut text = String::from(GOOD);
    for i in 0..n {
        text.push_str(&format!(
            "---\n{}",
            shoot(
                &format!("p{i}"),
                "  cloudProfile: {name: aws}\n  region: eu-west-1\n  provider: {type: aws}"
            )
        ));
    }
    write_tmp(&format!("pending-{n}.yaml"), &text)
}

#[test]
fn a_closed_pipe_ends_quietly_and_a_full_disk_is_an_error_naming_the_output() {
    let f = landscape_with_pending(300);
    let cases: [&[&str]; 6] = [
        &["simulate", "-f"],
        &[
            "simulate",
            "--timeline",
            "2026-01-01T00:00:00Z..2026-01-02T00:00:00Z",
            "-f",
        ],
        &["simulate", "-o", "json", "-f"],
        &["simulate", "-o", "yaml", "-f"],
        &["simulate", "--explain", "garden-dev/good-shoot", "-f"],
        &["--validate-only"],
    ];
    for args in cases {
        let mut c = bin();
        c.args(args);
        if args.last() == Some(&"-f") {
            c.arg(&f);
        }
        // The reader is gone before anything is written, as with `| head -c0`.
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = c
            .stdout(writer)
            .stderr(std::process::Stdio::piped())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            matches!(out.status.code(), Some(0 | 141)),
            "{args:?}: {:?}\n{err}",
            out.status
        );
        assert!(err.is_empty(), "{args:?}: quiet on a closed pipe: {err}");

        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let mut c = bin();
        c.args(args);
        if args.last() == Some(&"-f") {
            c.arg(&f);
        }
        let out = c
            .stdout(full)
            .stderr(std::process::Stdio::piped())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains("error: writing the output to stdout: No space left on device")
                && !err.contains("panicked"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn special_files_are_refused_and_never_block() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("special");
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("fifo.yaml");
    let _ = std::fs::remove_file(&fifo);
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let good = write_tmp("special-good.yaml", GOOD);
    for special in [
        fifo.as_path(),
        "/dev/zero".as_ref(),
        "/dev/urandom".as_ref(),
    ] {
        let (code, _, err) = run_bounded(bin().args(["simulate", "-f"]).arg(special));
        assert_eq!(code, 2, "-f {special:?}: {err}");
        assert!(
            err.contains(&format!("{}: is a", special.display()))
                && err.contains("not a regular file"),
            "-f {special:?}: {err}"
        );
        let (code, _, err) = run_bounded(
            bin()
                .args(["simulate", "--config"])
                .arg(special)
                .arg("-f")
                .arg(&good),
        );
        assert_eq!(code, 2, "--config {special:?}: {err}");
        assert!(
            err.contains(&format!("reading config file {}: is a", special.display())),
            "--config {special:?}: {err}"
        );
        for (key, priority) in [
            ("matrixFile", "LatencyDistance"),
            ("pointsFile", "CarbonIntensity"),
        ] {
            let cfg = write_tmp(
                &format!("special-{key}.yaml"),
                &format!(
                    "schedulers:\n  shoot:\n    candidateDeterminationStrategy: Scored\n    priorities:\n    - name: {priority}\n      args: {{{key}: {}}}\n",
                    special.display()
                ),
            );
            let (code, _, err) = run_bounded(
                bin()
                    .args(["simulate", "--config"])
                    .arg(&cfg)
                    .arg("-f")
                    .arg(&good),
            );
            assert_eq!(code, 2, "{key} {special:?}: {err}");
            assert!(
                err.contains("not a regular file"),
                "{key} {special:?}: {err}"
            );
        }
    }
}

#[test]
fn each_real_file_is_read_once() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("read-once");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("landscape.yaml");
    std::fs::write(&f, GOOD).unwrap();
    std::os::unix::fs::symlink(&dir, dir.join("loop")).unwrap();
    std::os::unix::fs::symlink(&f, dir.join("again.yaml")).unwrap();
    let (code, out, err) = run_bounded(
        bin()
            .args(["simulate", "-f"])
            .arg(&f)
            .arg("-f")
            .arg(&f)
            .arg("-f")
            .arg(&dir),
    );
    assert_eq!(code, 0, "{err}");
    assert_good_shoot_placed(&out);
    assert!(out.contains("1/1 pending shoots scheduled"), "{out}");
    assert!(err.is_empty(), "nothing is a repeat once read once: {err}");
}

#[test]
fn the_manifest_files_together_are_capped_not_only_each_one() {
    // Five files of 60 MiB each, every one under the 64 MiB cap of a single file, hold more
    // than the 256 MiB accepted in total: the fifth is refused before it is parsed.
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("total-cap");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let blank = vec![b'\n'; 60 * 1024 * 1024];
    for i in 1..=5 {
        std::fs::write(dir.join(format!("part-{i}.yaml")), &blank).unwrap();
    }
    let (code, _out, err) = run_bounded(bin().args(["simulate", "-f"]).arg(&dir));
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(code, 2, "{err}");
    assert_has(&err, &["part-5.yaml", "accepted in total"]);
}

#[test]
fn deep_nesting_fails_before_parsing_with_its_line() {
    let f = write_tmp(
        "deep.yaml",
        &format!("{GOOD}---\nkind: {}", "[".repeat(100_000)),
    );
    let (code, _, err) = run_bounded(bin().args(["simulate", "-f"]).arg(&f));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(
            "deep.yaml: line 26: flow collections ('[', '{') nested deeper than 128 levels"
        ),
        "{err}"
    );
    let f = write_tmp("deep-map.yaml", &"{a: ".repeat(100_000));
    let (code, _, err) = run_bounded(bin().args(["simulate", "-f"]).arg(&f));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("nested deeper than 128 levels"), "{err}");
}

#[test]
fn a_long_profile_chain_is_refused_and_a_truncated_timeline_says_so() {
    let mut cfg = String::from("schedulers:\n  shoot:\n    profiles:\n");
    for i in 0..10_000 {
        cfg.push_str(&format!(
            "    - id: e{i}\n      schedule: {{activePeriod: {{startCron: '{} * * * *', duration: 1m}}}}\n      profile: {{}}\n",
            i % 60
        ));
    }
    let long = write_tmp("chain-long.yaml", &cfg);
    let good = write_tmp("chain-good.yaml", GOOD);
    let (code, _, err) = run_bounded(
        bin()
            .args(["simulate", "--now", "2026-12-01T00:00:00Z", "--config"])
            .arg(&long)
            .arg("-f")
            .arg(&good),
    );
    assert_eq!(code, 2, "{err}");
    assert_has(
        &err,
        &["schedulers.shoot.profiles: holds 10000 entries, more than the 64 accepted"],
    );
    let minutely = write_tmp(
        "chain-minutely.yaml",
        "schedulers:\n  shoot:\n    profiles:\n    - id: odd\n      schedule: {activePeriod: {startCron: '1-59/2 * * * *', duration: 1m}}\n      profile: {}\n    - id: even\n      profile: {}\n",
    );
    let (code, out, err) = run_bounded(
        bin()
            .args([
                "simulate",
                "--timeline",
                "2026-01-01T00:00:00Z..2027-01-01T00:00:00Z",
                "--config",
            ])
            .arg(&minutely)
            .arg("-f")
            .arg(&good),
    );
    assert_eq!(code, 0, "{err}");
    let last = out.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("... truncated: the timeline stops at 2026-03-"),
        "{last}"
    );
}

#[test]
fn one_bad_object_is_skipped_and_reported_and_strict_fails_the_run() {
    let cases = [
        (
            "timestamp overflow",
            "apiVersion: core.gardener.cloud/v1beta1\nkind: Seed\nmetadata: {name: far, creationTimestamp: \"9999-12-31T12:00:00Z\"}\nspec:\n  provider: {type: aws, region: eu-west-1}\n",
            "document 3: Seed far: metadata.creationTimestamp: ",
        ),
        (
            "wrong-typed field",
            "apiVersion: core.gardener.cloud/v1beta1\nkind: Seed\nmetadata: {name: typed}\nspec:\n  provider: {type: aws, region: eu-west-1}\n  taints: 7\n",
            "document 3: Seed typed: spec.taints: must be a list, got 7 (line 31)",
        ),
        (
            ".nan in a string field",
            "apiVersion: core.gardener.cloud/v1beta1\nkind: Seed\nmetadata: {name: nan}\nspec:\n  provider: {type: aws, region: .nan}\n",
            "document 3: Seed nan: spec.provider.region: must be text, got NaN",
        ),
        (
            "type error inside a label selector",
            &shoot(
                "sel",
                "  cloudProfile: {name: aws}\n  region: eu-west-1\n  provider: {type: aws}\n  seedSelector: {matchLabels: {env: [prod]}}",
            ),
            "document 3: Shoot sel: spec.seedSelector.matchLabels.env: must be text, got a list (line 33)",
        ),
        (
            "unknown key inside a label selector",
            &shoot(
                "typo",
                "  cloudProfile: {name: aws}\n  region: eu-west-1\n  provider: {type: aws}\n  seedSelector: {matchLabelz: {env: prod}}",
            ),
            "document 3: Shoot typo: spec.seedSelector.matchLabelz: unknown field `matchLabelz`, expected one of `matchLabels`, `matchExpressions`, `providerTypes`",
        ),
        (
            "unknown key inside a CloudProfile's selector expression",
            "apiVersion: core.gardener.cloud/v1beta1\nkind: CloudProfile\nmetadata: {name: gcp}\nspec:\n  seedSelector: {matchExpressions: [{key: env, operater: In, values: [a]}]}\n",
            "document 3: CloudProfile gcp: spec.seedSelector.matchExpressions[0].operater: unknown field `operater`, expected one of `key`, `operator`, `values`",
        ),
    ];
    for (name, extra, want) in cases {
        let f = write_tmp("one-bad.yaml", &format!("{GOOD}---\n{extra}"));
        let (code, out, err) = run_bounded(bin().args(["simulate", "-f"]).arg(&f));
        assert_eq!(code, 0, "{name}: {err}");
        assert_good_shoot_placed(&out);
        assert!(
            out.contains("1 object(s) skipped") && out.contains(want),
            "{name}: want {want:?} in\n{out}"
        );
        assert!(
            err.contains(&format!("warning: skipped {}", f.display())),
            "{name}: {err}"
        );
        let (code, _, err) = run_bounded(bin().args(["simulate", "--strict", "-f"]).arg(&f));
        assert_eq!(code, 2, "{name}: {err}");
        assert!(err.contains(want), "{name}: want {want:?} in\n{err}");
    }
    let f = write_tmp("bom-first.yaml", &format!("\u{feff}{}", GOOD.trim_start()));
    let (code, out, err) = run_bounded(bin().args(["simulate", "-f"]).arg(&f));
    assert_eq!(code, 0, "{err}");
    assert_good_shoot_placed(&out);
    assert!(
        err.is_empty(),
        "a leading byte-order mark is accepted: {err}"
    );
}

#[test]
fn duplicates_are_reported_with_both_locations_and_the_first_copy_is_kept() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("duplicates");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let a = dir.join("a.yaml");
    std::fs::write(&a, GOOD).unwrap();
    // A malformed second copy of the seed, the cloud profile and the pending shoot.
    let b = dir.join("b.yaml");
    std::fs::write(
        &b,
        format!(
            "{}---\napiVersion: core.gardener.cloud/v1beta1\nkind: CloudProfile\nmetadata: {{name: aws}}\nspec:\n  seedSelector: {{matchLabels: {{nothing: matches}}}}\n---\n{}",
            seed("good-seed", "spec: {}"),
            GOOD.split("---").nth(2).unwrap().trim_start()
        ),
    )
    .unwrap();
    let (code, out, err) = run_bounded(bin().args(["simulate", "-f"]).arg(&a).arg("-f").arg(&b));
    assert_eq!(code, 0, "{err}");
    assert_good_shoot_placed(&out);
    assert!(
        out.contains("1/1 pending shoots scheduled"),
        "scheduled once: {out}"
    );
    for (doc, object, first) in [
        (0, "Seed good-seed", 1),
        (1, "CloudProfile aws", 0),
        (2, "Shoot garden-dev/good-shoot", 2),
    ] {
        let want = format!(
            "{}: document {doc}: {object} repeats the one in {}: document {first}; the first is used, this one is skipped",
            b.display(),
            a.display()
        );
        assert!(out.contains(&want), "want {want:?} in\n{out}");
    }
    let (code, _, _) = run_bounded(
        bin()
            .args(["simulate", "--strict", "-f"])
            .arg(&a)
            .arg("-f")
            .arg(&b),
    );
    assert_eq!(code, 2);
}

#[test]
fn of_two_region_configmaps_the_well_formed_row_is_used_and_conflicts_are_reported() {
    let cfg = write_tmp(
        "hostile-two-regions.yaml",
        "schedulers:\n  shoot:\n    candidateDeterminationStrategy: MinimalDistance\n",
    );
    let cm = |name: &str, rows: &str| {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: garden\n  labels: {{scheduling.gardener.cloud/purpose: region-config}}\n  annotations: {{scheduling.gardener.cloud/cloudprofiles: aws}}\ndata:\n{rows}"
        )
    };
    // No seed in eu-north-1: the region ConfigMap decides between eu-west-1 and eu-central-1.
    let extra = format!(
        "{}---\n{}---\n{}---\n{}---\n{}",
        cm(
            "a-broken",
            "  eu-north-1: |\n    eu-west-1: far\n  eu-west-1: |\n    eu-central-1: 5\n"
        ),
        cm(
            "b-good",
            "  eu-north-1: |\n    eu-central-1: 2\n    eu-west-1: 9\n  eu-west-1: |\n    eu-central-1: 7\n"
        ),
        seed(
            "central",
            "spec:\n  provider: {type: aws, region: eu-central-1}"
        ),
        shoot(
            "north",
            "  cloudProfile: {name: aws}\n  region: eu-north-1\n  provider: {type: aws}"
        ),
        "",
    );
    let f = write_tmp(
        "hostile-two-regions-landscape.yaml",
        &format!("{GOOD}---\n{extra}"),
    );
    let (code, out, err) = run_bounded(
        bin()
            .args(["simulate", "--config"])
            .arg(&cfg)
            .arg("-f")
            .arg(&f),
    );
    assert_eq!(code, 0, "{err}");
    let north = out
        .lines()
        .find(|l| l.starts_with("garden-dev/north"))
        .expect(&out);
    assert!(
        north.contains(" central "),
        "the valid row of b-good applies: {north}"
    );
    assert_has(
        &err,
        &[
            "warning: region ConfigMap garden/a-broken: data[eu-north-1]: eu-west-1: distance far is not an integer; CloudProfile aws uses the row of garden/b-good instead",
        ],
    );
    assert_has(
        &err,
        &[
            "warning: region ConfigMaps garden/a-broken and garden/b-good both list CloudProfile aws and disagree on data[eu-west-1]; garden/a-broken is used",
        ],
    );
}

#[test]
fn near_miss_values_upstream_refuses_are_errors_not_defaults() {
    let base = "  cloudProfile: {name: aws}\n  region: eu-west-1\n";
    let cases = [
        (
            "purpose in the wrong case",
            shoot(
                "purpose",
                &format!("{base}  provider: {{type: aws}}\n  purpose: Testing"),
            ),
            "invalid shoot: spec.purpose: unsupported value \"Testing\": supported values: \"evaluation\", \"testing\", \"development\", \"production\", \"infrastructure\"",
        ),
        (
            "failure tolerance in the wrong case",
            shoot(
                "ha",
                &format!(
                    "{base}  provider: {{type: aws}}\n  controlPlane: {{highAvailability: {{failureTolerance: {{type: Zone}}}}}}"
                ),
            ),
            "invalid shoot: spec.controlPlane.highAvailability.failureTolerance.type: unsupported value \"Zone\": supported values: \"node\", \"zone\"",
        ),
        (
            "an empty purpose",
            shoot(
                "empty-purpose",
                &format!("{base}  provider: {{type: aws}}\n  purpose: \"\""),
            ),
            "invalid shoot: spec.purpose: unsupported value \"\": supported values: \"evaluation\"",
        ),
        (
            "an empty failure tolerance",
            shoot(
                "empty-ha",
                &format!(
                    "{base}  provider: {{type: aws}}\n  controlPlane: {{highAvailability: {{failureTolerance: {{type: \"\"}}}}}}"
                ),
            ),
            "invalid shoot: spec.controlPlane.highAvailability.failureTolerance.type: unsupported value \"\": supported values: \"node\", \"zone\"",
        ),
    ];
    for (name, extra, want) in cases {
        let (code, out, err) = simulate(&extra, None);
        assert_eq!(code, 0, "{name}: {err}");
        assert_good_shoot_placed(&out);
        let row = out
            .lines()
            .find(|l| l.starts_with("garden-dev/") && !l.starts_with("garden-dev/good-shoot"))
            .unwrap_or_else(|| panic!("{name}: no row\n{out}"));
        assert!(row.contains(want), "{name}: want {want:?} in {row:?}");
    }
    // `controlPlane` of a worker is an object upstream: `false` is not "self-hosted".
    let extra = shoot(
        "cp",
        &format!("{base}  provider: {{type: aws, workers: [{{name: w, controlPlane: false}}]}}"),
    );
    let (code, out, err) = simulate(&extra, None);
    assert_eq!(code, 0, "{err}");
    assert_good_shoot_placed(&out);
    assert!(
        out.contains(
            "Shoot cp: spec.provider.workers[0].controlPlane: must be a mapping, got false"
        ),
        "{out}"
    );
}

#[test]
fn an_infinite_carbon_intensity_is_reported_at_load() {
    let cfg = write_tmp(
        "hostile-carbon-inf.yaml",
        "schedulers:\n  shoot:\n    candidateDeterminationStrategy: Scored\n    priorities:\n    - name: CarbonIntensity\n      args:\n        configMapKey: data\n        regionLocations: {eu-west-1: IE}\n",
    );
    let payload =
        r#"[{"location":"IE","timestamp":"2026-12-01T00:00:00Z","duration":2880,"value":1e999}]"#;
    let cm = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: carbon-ie\n  namespace: kube-system\n  labels: {{scheduling.gardener.cloud/purpose: carbon-intensity}}\ndata:\n  lastHeartbeatTime: \"2026-12-01T05:00:00Z\"\nbinaryData:\n  data: {}\n",
        base64(payload.as_bytes())
    );
    let f = write_tmp(
        "hostile-carbon-inf-landscape.yaml",
        &format!("{GOOD}---\n{cm}"),
    );
    let (code, out, err) = run_bounded(
        bin()
            .args(["simulate", "--now", "2026-12-01T06:00:00Z", "--config"])
            .arg(&cfg)
            .arg("-f")
            .arg(&f),
    );
    assert_eq!(code, 0, "{err}");
    assert_good_shoot_placed(&out);
    assert!(
        err.contains(
            "warning: carbon-intensity ConfigMap kube-system/carbon-ie: binaryData.data: not valid JSON: number out of range"
        ) && err.contains("the locations it would serve score neutral (50)"),
        "{err}"
    );
}

/// Every character that steers a terminal or hides in a name: none may reach the output raw.
fn assert_no_hidden_characters(what: &str, text: &str) {
    let hidden: Vec<char> = text
        .chars()
        .filter(|&c| {
            (c.is_control() && c != '\n' && c != '\t') || ('\u{200b}'..='\u{206f}').contains(&c)
        })
        .collect();
    assert!(hidden.is_empty(), "{what} holds {hidden:?}:\n{text}");
}

#[test]
fn names_the_api_server_would_refuse_are_skipped_and_never_reach_plan_yaml() {
    let injected =
        "evil\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: x, namespace: kube-system}\n";
    let extra = [
        // A seed name that ends the `# source -> destination` comment of `plan -o yaml`.
        seed(&format!("{injected:?}"), "spec:\n  provider: {type: aws, region: eu-west-1}"),
        // Displays as `seed-prod-eu1`.
        seed("\"seed-\\u202e1ue-dorp\"", "spec:\n  provider: {type: aws, region: eu-west-1}"),
        seed(
            "ansi",
            "spec:\n  provider: {type: aws, region: \"eu-west-1\\e]0;pwned\\a\"}",
        ),
        seed(
            "taint",
            "spec:\n  provider: {type: aws, region: eu-west-1}\n  taints: [{key: \"a b\"}]",
        ),
        seed(
            "label",
            "spec:\n  provider: {type: aws, region: eu-west-1}",
        )
        .replace("metadata: {name: label}", "metadata: {name: label, labels: {tier: \"prod\\u200b\"}}"),
        shoot(
            "\"Web\"",
            "  cloudProfile: {name: aws}\n  region: eu-west-1\n  provider: {type: aws}",
        ),
        shoot(
            "bound",
            "  cloudProfile: {name: aws}\n  region: eu-west-1\n  provider: {type: aws}\n  seedName: \"good-seed\\n# x\"",
        ),
    ]
    .join("---\n");
    let (code, out, err) = simulate(&extra, None);
    assert_eq!(code, 0, "{err}");
    assert_good_shoot_placed(&out);
    for want in [
        "Seed evil\\u{a}---\\u{a}apiVersion: v1",
        "metadata.name: must be no more than 63 characters",
        "Seed seed-\\u{202e}1ue-dorp: metadata.name: \"seed-\\u{202e}1ue-dorp\" is not a lowercase RFC 1123 label",
        "Seed label: metadata.labels.tier: \"prod\\u{200b}\" is not a valid label value",
        "Shoot Web: metadata.name: \"Web\" is not a lowercase RFC 1123 label",
    ] {
        assert!(out.contains(want), "{want}:\n{out}");
        assert!(err.contains(want), "{want}:\n{err}");
    }
    // gardener-apiserver stores any non-empty region, seed taint key and `spec.seedName`: such
    // objects are read as upstream reads them, and their strings reach the output escaped.
    for stored in ["Seed ansi", "Seed taint", "Shoot bound"] {
        assert!(!out.contains(stored), "{stored} is skipped:\n{out}");
        assert!(!err.contains(stored), "{stored} is skipped:\n{err}");
    }
    assert_no_hidden_characters("the table", &out);
    assert_no_hidden_characters("stderr", &err);

    // The plan of the same landscape as YAML: one document per move and nothing else.
    let seeds = ["src-seed", "dst-seed"].map(|name| {
        seed(
            name,
            "spec:\n  provider: {type: aws, region: eu-west-1}\n  backup: {provider: aws, region: eu-west-1}",
        )
        .replace(
            "status: \"True\"}]",
            "status: \"True\"}, {type: BackupBucketsReady, status: \"True\"}]",
        )
    });
    let f = write_tmp(
        "injected-plan.yaml",
        &format!(
            "{GOOD}---\n{extra}---\n{}---\n{}---\n{}",
            seeds[0],
            seeds[1],
            shoot(
                "moving",
                "  cloudProfile: {name: aws}\n  region: eu-west-1\n  provider: {type: aws}\n  seedName: src-seed"
            )
        ),
    );
    let (code, out, err) = run_bounded(
        bin()
            .args([
                "plan",
                "drain",
                "src-seed",
                "--now",
                "2026-12-01T00:00:00Z",
                "-o",
                "yaml",
                "-f",
            ])
            .arg(&f),
    );
    assert_eq!(code, 0, "{err}");
    let docs: Vec<serde_yaml_ng::Value> = serde_yaml_ng::Deserializer::from_str(&out)
        .map(|d| serde::Deserialize::deserialize(d).unwrap())
        .collect();
    let kinds: Vec<_> = docs.iter().map(|d| d["kind"].as_str()).collect();
    assert_eq!(kinds, [Some("Shoot")], "one Shoot, nothing else:\n{out}");
    assert!(!out.contains("Secret"), "{out}");
}

#[test]
fn control_characters_in_human_readable_output_are_made_visible() {
    // The file name is the one string of the table not checked against Kubernetes rules.
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("hostile");
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("x\u{1b}]0;pwned\u{7}\u{202e}.yaml");
    std::fs::write(
        &f,
        format!(
            "{GOOD}---\n{}",
            seed("Bad", "spec:\n  provider: {type: aws, region: eu-west-1}")
        ),
    )
    .unwrap();
    for args in [
        &["simulate"][..],
        &["simulate", "--explain", "garden-dev/good-shoot"],
    ] {
        let (code, out, err) = run_bounded(bin().args(args).arg("-f").arg(&f));
        assert_eq!(code, 0, "{err}");
        assert_no_hidden_characters("stdout", &out);
        assert_no_hidden_characters("stderr", &err);
        assert_has(
            &err,
            &["x\\u{1b}]0;pwned\\u{7}\\u{202e}.yaml: document 3: Seed Bad"],
        );
    }
    let (_, out, _) = run_bounded(bin().args(["simulate", "-f"]).arg(&f));
    assert_has(&out, &["x\\u{1b}]0;pwned\\u{7}\\u{202e}.yaml: document 3"]);
}

/// `--validate-only` of a configuration that holds `body` after the header: exit status and
/// stderr.
fn validate_config(name: &str, body: &str) -> (i32, String) {
    let f = write_tmp(
        &format!("config-{name}.yaml"),
        &format!(
            "apiVersion: scheduler.config.gardener.cloud/v1alpha1\nkind: SchedulerConfiguration\n{body}\n"
        ),
    );
    let (code, _, err) = run_bounded(bin().arg("--config").arg(&f).arg("--validate-only"));
    (code, err)
}

#[test]
fn configuration_values_that_used_to_load_silently_are_errors_at_the_key_written() {
    let long = "n".repeat(100_000);
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "empty-client-connection",
            "clientConnection: []".into(),
            "clientConnection: must be a mapping, got a list",
        ),
        ("empty-server", "server: []".into(), "server: must be a mapping, got a list"),
        (
            "empty-shoot",
            "schedulers: {shoot: []}".into(),
            "schedulers.shoot: must be a mapping, got a list",
        ),
        (
            "location-pair",
            "schedulers: {shoot: {regions: [{name: x1, location: [1, 2], country: DE}]}}".into(),
            "schedulers.shoot.regions[0].location: must be a mapping {lat: ..., lon: ...}, got a list",
        ),
        (
            "resource-name",
            format!("leaderElection: {{resourceName: {long}}}"),
            "leaderElection.resourceName: must be no more than 253 characters, got 100000",
        ),
        (
            "resource-namespace",
            format!("leaderElection: {{resourceNamespace: {long}}}"),
            "leaderElection.resourceNamespace: must be no more than 63 characters, got 100000",
        ),
        (
            "scheduler-name",
            format!("schedulers: {{shoot: {{schedulerNames: [{long}]}}}}"),
            "schedulers.shoot.schedulerNames[0]: must be no more than 253 characters, got 100000",
        ),
        (
            "residency-uppercase",
            "schedulers: {shoot: {filters: [{name: Residency, args: {groups: [{name: EU}]}}]}}".into(),
            "schedulers.shoot.filters[0].args.groups[0].name: must be a lowercase name",
        ),
        (
            "residency-list",
            "schedulers: {shoot: {filters: [{name: Residency, args: [1]}]}}".into(),
            "schedulers.shoot.filters[0].args: must be a mapping of argument names to values, got a list",
        ),
        (
            "residency-duplicate",
            "schedulers: {shoot: {filters: [{name: Residency, args: {groups: [{name: eu}, {name: eu}]}}]}}".into(),
            "schedulers.shoot.filters[0].args.groups[1].name: duplicate group \"eu\"",
        ),
        (
            "residency-empty",
            "schedulers: {shoot: {filters: [{name: Residency, args: {groups: [{name: eu, jurisdictions: []}]}}]}}".into(),
            "schedulers.shoot.filters[0].args.groups[0].jurisdictions: must list at least one jurisdiction",
        ),
        (
            "residency-unknown",
            "schedulers: {shoot: {filters: [{name: Residency, args: {groups: [{name: x, jurisdictions: [mars]}]}}]}}".into(),
            "schedulers.shoot.filters[0].args.groups[0].jurisdictions[0]: no region lies in jurisdiction \"mars\"",
        ),
        (
            "capacity-pressure-latency",
            "schedulers: {shoot: {candidateDeterminationStrategy: Scored, priorities: [{name: CapacityPressure, weight: 1, args: {maxLatencyMs: 1e20}}]}}".into(),
            "schedulers.shoot.priorities[0].args.maxLatencyMs: must be a positive number of at most 1000000, got 1e20",
        ),
        (
            "bom-inside",
            "logLevel: info\n\u{feff}logFormat: [".into(),
            "byte order mark, U+FEFF, at line 4 column 1",
        ),
    ];
    for (name, body, want) in cases {
        let (code, err) = validate_config(name, &body);
        assert_eq!(code, 2, "{name}: {err}");
        assert!(err.contains(want), "{name}: want {want:?} in\n{err}");
    }
    // A known jurisdiction added by the configuration's own regions is accepted.
    let (code, err) = validate_config(
        "residency-own-region",
        "schedulers: {shoot: {regions: [{name: moon-1, location: {lat: 1, lon: 2}, country: DE, jurisdiction: moon}], filters: [{name: Residency, args: {groups: [{name: moon}]}}]}}",
    );
    assert_eq!(code, 0, "{err}");
}

#[test]
fn a_latency_row_of_100000_columns_and_100000_region_entries_are_refused_quickly() {
    let row: Vec<String> = (0..100_000).map(|i| format!("r{i}: 1")).collect();
    let (code, err) = validate_config(
        "wide-matrix",
        &format!(
            "schedulers: {{shoot: {{candidateDeterminationStrategy: Scored, priorities: [{{name: LatencyDistance, weight: 1, args: {{matrix: {{eu-west-1: {{{}}}}}}}}}]}}}}",
            row.join(", ")
        ),
    );
    assert_eq!(code, 2, "{err}");
    assert_has(
        &err,
        &["schedulers.shoot.priorities[0].args.matrix: lists more than 500 regions"],
    );
    let regions: Vec<String> = (0..100_000)
        .map(|i| format!("{{name: r{i}, location: {{lat: 1, lon: 2}}, country: DE}}"))
        .collect();
    let (code, err) = validate_config(
        "many-regions",
        &format!(
            "schedulers: {{shoot: {{regions: [{}]}}}}",
            regions.join(", ")
        ),
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(
            "schedulers.shoot.regions: holds 100000 entries, more than the 10000 accepted"
        ),
        "{err}"
    );
}

#[test]
fn an_invalid_compare_file_is_named() {
    let bad = write_tmp(
        "compare-bad.yaml",
        "apiVersion: scheduler.config.gardener.cloud/v1alpha1\nkind: SchedulerConfiguration\nschedulers: {shoot: {priorities: [{name: Nope, weight: 1}]}}\n",
    );
    let f = landscape_with_pending(1);
    let (code, _, err) = run_bounded(
        bin()
            .args(["simulate", "-f"])
            .arg(&f)
            .arg("--compare")
            .arg(&bad),
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!(
            "error: --compare {}: invalid config:",
            bad.display()
        )),
        "{err}"
    );
}

/// Upstream reads `status.allocatable.shoots` with `Quantity.Value()`: `1500m` rounds up to
/// room for 2, `1Ei` is room enough, `-3` and `0` mean full. One shoot is bound to the seed
/// already; whether a second is placed there follows.
#[test]
fn allocatable_shoots_are_read_as_upstreams_quantity_value() {
    let only = |q: &str| {
        format!(
            "apiVersion: core.gardener.cloud/v1beta1\nkind: Seed\nmetadata: {{name: only}}\nspec:\n  provider: {{type: aws, region: ap-east-9}}\nstatus:\n  allocatable: {{shoots: \"{q}\"}}\n  lastOperation: {{type: Reconcile, state: Succeeded}}\n  conditions: [{{type: GardenletReady, status: \"True\"}}]\n---\n{}---\n{}",
            shoot(
                "bound",
                "  cloudProfile: {name: aws}\n  region: ap-east-9\n  provider: {type: aws, workers: [{name: w}]}\n  seedName: only",
            ),
            shoot(
                "second",
                "  cloudProfile: {name: aws}\n  region: ap-east-9\n  provider: {type: aws, workers: [{name: w}]}",
            ),
        )
    };
    for (q, placed) in [
        ("1500m", true),
        ("1001m", true),
        ("1Ei", true),
        ("2e0", true),
        (" 2 ", true),
        ("1", false),
        ("1000m", false),
        ("0", false),
        ("-3", false),
    ] {
        let (code, out, err) = simulate(&only(q), Some("garden-dev/second"));
        assert_eq!(code, 0, "{q}: {err}");
        assert!(!out.contains("malformed"), "{q}:\n{out}");
        assert_eq!(
            out.contains("Scheduled to seed \"only\""),
            placed,
            "{q}:\n{out}"
        );
        if !placed {
            assert!(out.contains("have no capacity left"), "{q}:\n{out}");
        }
    }
}

/// gardener-apiserver asks a region to be non-empty, nothing more: a seed and a shoot in
/// `eu-wést-1` are matched as upstream matches them, and an escape sequence in a region reaches
/// no output raw.
#[test]
fn a_region_that_is_not_a_label_value_is_scheduled_as_upstream_schedules_it() {
    let extra = [
        seed("accent", "spec:\n  provider: {type: aws, region: eu-wést-1}"),
        shoot(
            "accented",
            "  cloudProfile: {name: aws}\n  region: eu-wést-1\n  provider: {type: aws, workers: [{name: w}]}",
        ),
        shoot(
            "steering",
            "  cloudProfile: {name: aws}\n  region: \"eu-west-1\\e]0;pwned\\a\"\n  provider: {type: aws, workers: [{name: w}]}",
        ),
    ]
    .join("---\n");
    let (code, out, err) = simulate(&extra, None);
    assert_eq!(code, 0, "{err}");
    assert_good_shoot_placed(&out);
    assert!(
        out.lines()
            .any(|l| l.starts_with("garden-dev/accented") && l.contains("accent")),
        "{out}"
    );
    assert!(
        !out.contains("skipped") && !err.contains("skipped"),
        "{out}\n{err}"
    );
    assert_no_hidden_characters("stdout", &out);
    assert_no_hidden_characters("stderr", &err);
    let (code, out, err) = simulate(&extra, Some("garden-dev/steering"));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("are in another region"), "{out}");
    assert_no_hidden_characters("stdout", &out);
    assert_no_hidden_characters("stderr", &err);
}

#[test]
fn a_byte_order_mark_inside_a_manifest_and_two_projects_for_one_namespace_are_named() {
    let (code, _, err) = simulate("\u{feff}kind: [", None);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("byte order mark, U+FEFF, at line"), "{err}");
    let project = |name: &str| {
        format!(
            "apiVersion: core.gardener.cloud/v1beta1\nkind: Project\nmetadata: {{name: {name}}}\nspec: {{namespace: garden-dev}}\n"
        )
    };
    let (code, out, err) = simulate(&format!("{}---\n{}", project("one"), project("two")), None);
    assert_eq!(code, 0, "{err}");
    assert_good_shoot_placed(&out);
    assert_has(
        &err,
        &[
            "warning: namespace garden-dev is claimed by Projects one, two; upstream's API server allows one, and its shoots count for project two",
        ],
    );
}

#[test]
fn gated_shoots_take_no_seed_and_name_their_gates_or_what_is_wrong_with_them() {
    let gated = |name: &str, gates: &str| {
        format!(
            "apiVersion: core.gardener.cloud/v1beta1\nkind: Shoot\nmetadata: {{name: {name}, namespace: garden-dev, creationTimestamp: \"2026-10-01T00:00:00Z\", annotations: {{scheduling.gardener.cloud/gates: \"{gates}\"}}}}\nspec:\n  cloudProfile: {{name: aws}}\n  region: eu-west-1\n  provider: {{type: aws, workers: [{{name: w}}]}}\n  networking: {{nodes: 10.180.0.0/16}}\n"
        )
    };
    let extra = [
        gated("held", "quota-approval, change-freeze"),
        gated("typo", "quota approval"),
        gated("open", ""),
    ]
    .join("---\n");
    let (code, out, err) = simulate(&extra, None);
    assert_eq!(code, 0, "{err}");
    assert_good_shoot_placed(&out);
    let row = |name: &str| {
        out.lines()
            .find(|l| l.starts_with(&format!("garden-dev/{name} ")))
            .unwrap_or_else(|| panic!("no row for {name}:\n{out}"))
            .to_string()
    };
    let held = row("held");
    assert!(
        held.contains(
            "scheduling gated: waiting for scheduling gate(s) quota-approval, change-freeze"
        ) && !held.contains("good-seed"),
        "{held}"
    );
    let typo = row("typo");
    assert!(
        typo.contains("item 1 \"quota approval\" is not a qualified name")
            && !typo.contains("good-seed"),
        "{typo}"
    );
    assert!(
        row("open").contains("good-seed"),
        "an empty list holds nothing:\n{out}"
    );
}

#[test]
fn numbers_out_of_a_fields_range_and_deep_block_nesting_are_named_plainly() {
    let deep = |indent_from: usize| -> String {
        (0..300)
            .map(|i| format!("{}a:\n", "  ".repeat(indent_from + i)))
            .collect()
    };
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "port-1e20",
            "server: {metrics: {port: 1e20}}".into(),
            "server.metrics.port: must be a whole number, got 1e20",
        ),
        (
            "port-fraction",
            "server: {healthProbes: {port: 80.5}}".into(),
            "server.healthProbes.port: must be a whole number, got 80.5",
        ),
        (
            "burst-2-64",
            "clientConnection: {burst: 18446744073709551616}".into(),
            "clientConnection.burst: the whole number 18446744073709551616 is larger than any field accepts (at most 18446744073709551615), at line 3 column 27",
        ),
        (
            "block-nesting",
            format!("x:\n{}", deep(1)),
            "line 131: nested deeper than 128 levels",
        ),        (
            "flow-nesting-10000",
            format!("x: {}{}", "[".repeat(10_000), "]".repeat(10_000)),
            "line 3: flow collections ('[', '{') nested deeper than 128 levels",
        ),
        (
            "text-for-a-number",
            "clientConnection: {burst: many}".into(),
            "clientConnection.burst: must be a whole number between -2147483648 and 2147483647, got text \"many\"",
        ),
        (
            "number-for-text",
            "leaderElection: {resourceName: 5}".into(),
            "leaderElection.resourceName: must be text, got 5",
        ),
        (
            "plugin-argument-text",
            "schedulers: {shoot: {candidateDeterminationStrategy: Scored, priorities: [{name: LatencyDistance, weight: 1, args: {fallbackFactor: fast}}]}}".into(),
            "schedulers.shoot.priorities[0].args.fallbackFactor: must be a number, got text \"fast\"",
        ),
    ];
    for (name, body, want) in cases {
        let (code, err) = validate_config(name, &body);
        assert_eq!(code, 2, "{name}: {err}");
        assert!(err.contains(want), "{name}: want {want:?} in\n{err}");
        assert!(
            !err.contains("recursion limit")
                && !err.contains("u128")
                && !err.contains("floating point")
                && !err.contains("invalid type"),
            "{name}: {err}"
        );
    }
    // A manifest nested as deep in block style.
    let f = write_tmp(
        "deep-block.yaml",
        &format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: x, namespace: y}}\ndata:\n{}",
            deep(1)
        ),
    );
    let (code, _, err) = run_bounded(bin().args(["simulate", "-f"]).arg(&f));
    assert_eq!(code, 2, "{err}");
    assert_has(
        &err,
        &["document 0: line 132: nested deeper than 128 levels"],
    );
    assert!(!err.contains("recursion limit"), "{err}");
}
