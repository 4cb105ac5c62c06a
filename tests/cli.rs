//! The command line as a user meets it: exit codes, error messages, output formats.

#[path = "support/cli.rs"]
mod cli_support;
use cli_support::{assert_has, assert_success, bin, run, tmp};

const SEED: &str = r#"
apiVersion: core.gardener.cloud/v1beta1
kind: Seed
metadata: {name: s1}
spec:
  provider: {type: aws, region: eu-west-1, zones: [a, b, c]}
status:
  lastOperation: {type: Reconcile, state: Succeeded}
  conditions: [{type: GardenletReady, status: "True"}]
---
apiVersion: core.gardener.cloud/v1beta1
kind: CloudProfile
metadata: {name: aws}
spec: {type: aws}
"#;

const SHOOT: &str = r#"
apiVersion: core.gardener.cloud/v1beta1
kind: Shoot
metadata: {name: web, namespace: garden-dev, creationTimestamp: "2026-11-01T00:00:00Z"}
spec:
  cloudProfile: {name: aws}
  region: eu-west-1
  provider: {type: aws, workers: [{name: w}]}
  kubernetes: {version: "1.33.0"}
"#;

#[test]
fn simulate_places_a_pending_shoot_and_prints_a_table() {
    let f = tmp("ok.yaml", &format!("{SEED}---{SHOOT}"));
    let (code, out, err) = run(bin().args(["simulate", "-f"]).arg(&f));
    assert_eq!(code, 0, "{err}");
    let row = out
        .lines()
        .find(|l| l.starts_with("garden-dev/web"))
        .expect(&out);
    assert!(row.contains(" s1 "), "{row}");
    assert!(out.contains("1/1 pending shoots scheduled"), "{out}");
}

#[test]
fn simulate_yaml_output_is_the_input_shoot_with_seed_name_filled_in() {
    let f = tmp("yaml.yaml", &format!("{SEED}---{SHOOT}"));
    let (code, out, err) = run(bin().args(["simulate", "-o", "yaml", "-f"]).arg(&f));
    assert_eq!(code, 0, "{err}");
    let doc: serde_yaml_ng::Value = serde_yaml_ng::from_str(&out).expect(&out);
    assert_eq!(doc["spec"]["seedName"].as_str(), Some("s1"), "{out}");
    assert_eq!(
        doc["spec"]["kubernetes"]["version"].as_str(),
        Some("1.33.0"),
        "unknown fields survive: {out}"
    );
}

#[test]
fn simulate_json_has_the_documented_shape() {
    let f = tmp("json.yaml", &format!("{SEED}---{SHOOT}"));
    let (code, out, err) = run(bin().args(["simulate", "-o", "json", "-f"]).arg(&f));
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let d = &v["decisions"][0];
    assert_eq!(d["shoot"], "garden-dev/web");
    assert_eq!(d["seed"], "s1");
    assert!(d["error"].is_null());
    assert_eq!(d["scores"]["s1"]["total"], 100.0);
    assert_eq!(d["scores"]["s1"]["priorities"]["ShootCount"], 100.0);
    let keys: Vec<&String> = d.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["error", "scores", "seed", "shoot"]);
}

#[test]
fn unschedulable_shoot_exits_zero_with_reason() {
    let f = tmp(
        "nofit.yaml",
        &format!("{SEED}---{}", SHOOT.replace("eu-west-1", "us-east-1")),
    );
    let (code, out, _) = run(bin().args(["simulate", "-o", "json", "-f"]).arg(&f));
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v["decisions"][0]["seed"].is_null());
    assert_eq!(
        v["decisions"][0]["error"],
        "0/1 seeds are available: 1 seed(s) are in another region."
    );
}

#[test]
fn malformed_document_names_file_and_document_index() {
    let f = tmp(
        "bad.yaml",
        &format!(
            "{SEED}---\napiVersion: core.gardener.cloud/v1beta1\nkind: Seed\nmetadata: {{name: s2}}\nspec:\n  taints: 7\n---{SHOOT}"
        ),
    );
    let (code, _, err) = run(bin().args(["simulate", "--strict", "-f"]).arg(&f));
    assert_eq!(code, 2);
    assert_has(&err, &["bad.yaml: document 2: Seed s2: spec.taints"]);
    // Without --strict the object is skipped, reported, and the rest is scheduled.
    let (code, out, err) = run(bin().args(["simulate", "-f"]).arg(&f));
    assert_eq!(code, 0, "{err}");
    assert_has(
        &err,
        &[
            "warning: skipped ",
            "bad.yaml: document 2: Seed s2: spec.taints",
        ],
    );
    assert!(out.contains("1/1 pending shoots scheduled"), "{out}");
    assert_has(
        &out,
        &["1 object(s) skipped", "document 2: Seed s2: spec.taints"],
    );
}

#[test]
fn unsupported_kind_is_an_error() {
    let f = tmp(
        "kind.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n",
    );
    let (code, _, err) = run(bin().args(["simulate", "--strict", "-f"]).arg(&f));
    assert_eq!(code, 2);
    assert_has(
        &err,
        &["document 0: Deployment x: unsupported object apps/v1/Deployment"],
    );
    let (code, _, err) = run(bin().args(["simulate", "-f"]).arg(&f));
    assert_eq!(code, 0);
    assert!(err.contains("warning: skipped "), "{err}");
}

#[test]
fn shoot_with_missing_fields_fails_alone_with_the_field_named() {
    let broken = "apiVersion: core.gardener.cloud/v1beta1\nkind: Shoot\nmetadata: {name: broken, namespace: garden-dev}\nspec:\n  cloudProfile: {name: aws}\n  provider: {type: aws}\n";
    let f = tmp("partial.yaml", &format!("{SEED}---{SHOOT}---\n{broken}"));
    let (code, out, _) = run(bin().args(["simulate", "-f"]).arg(&f));
    assert_eq!(code, 0);
    assert!(
        out.lines().any(|l| l.starts_with("garden-dev/broken")
            && l.contains("invalid shoot: spec.region: is required")),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.starts_with("garden-dev/web") && l.contains(" s1 ")),
        "{out}"
    );
}

#[test]
fn explain_lists_every_seed_with_its_stage() {
    let second = SEED
        .replace("name: s1", "name: s2")
        .replace("eu-west-1", "us-east-1");
    let f = tmp("explain.yaml", &format!("{SEED}---{second}---{SHOOT}"));
    let (code, out, err) = run(bin()
        .args(["simulate", "--explain", "garden-dev/web", "-f"])
        .arg(&f));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Scheduled to seed \"s1\""), "{out}");
    assert!(
        out.lines()
            .any(|l| l.contains("s2") && l.contains("SameRegion") && l.contains("us-east-1")),
        "{out}"
    );
}

#[test]
fn invalid_config_exits_2_listing_every_error() {
    let cfg = tmp(
        "bad-config.yaml",
        "schedulers:\n  shoot:\n    concurrentSyncs: -1\n    candidateDeterminationStrategy: Foo\n",
    );
    let (code, _, err) = run(bin().args(["--validate-only", "--config"]).arg(&cfg));
    assert_eq!(code, 2);
    assert_has(
        &err,
        &["schedulers.shoot.concurrentSyncs: must be between 1 and 1000, got -1"],
    );
    assert_has(
        &err,
        &["schedulers.shoot.candidateDeterminationStrategy: unsupported value \"Foo\""],
    );
}

#[test]
fn environment_overrides_the_file_and_kubeconfig_env_wins() {
    let cfg = tmp(
        "env-config.yaml",
        "schedulers:\n  shoot:\n    concurrentSyncs: 3\nclientConnection:\n  kubeconfig: /from/file\n",
    );
    let (code, out, err) = run(bin()
        .args(["run", "--validate-only", "--config"])
        .arg(&cfg)
        .env(
            "GARDENER_SCHEDULER_SCHEDULERS__SHOOT__CONCURRENT_SYNCS",
            "9",
        )
        .env("GARDENER_SCHEDULER_LOG_LEVEL", "debug")
        .env("KUBECONFIG", "/from/env"));
    assert_eq!(code, 0, "{err}");
    let v: serde_yaml_ng::Value = serde_yaml_ng::from_str(&out).unwrap();
    assert_eq!(
        v["schedulers"]["shoot"]["concurrentSyncs"].as_i64(),
        Some(9),
        "{out}"
    );
    assert_eq!(v["logLevel"].as_str(), Some("debug"), "{out}");
    assert_eq!(
        v["clientConnection"]["kubeconfig"].as_str(),
        Some("/from/env"),
        "{out}"
    );
}

#[test]
fn kubeconfig_flag_beats_the_environment() {
    let (code, out, err) = run(bin()
        .args(["--validate-only", "--kubeconfig", "/from/flag"])
        .env("KUBECONFIG", "/from/env"));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("kubeconfig: /from/flag"), "{out}");
}

#[test]
fn timeline_prints_one_line_per_active_entry_change() {
    let (code, out, err) = run(bin().args([
        "simulate",
        "--config",
        "example/21-componentconfig-profiles.yaml",
        "-f",
        "example/landscape",
        "--timeline",
        "2026-12-04T00:00:00Z..2026-12-14T00:00:00Z",
    ]));
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines,
        [
            "2026-12-04T00:00:00Z  default",
            "2026-12-04T18:00:00Z  release-weekend (freeze)",
            "2026-12-07T06:00:00Z  default",
            "2026-12-12T21:00:00Z  saturday-maintenance",
            "2026-12-13T03:00:00Z  default",
        ],
        "{out}"
    );
}

#[test]
fn simulate_inside_a_freeze_defers_every_shoot_without_failing() {
    let (code, out, err) = run(bin().args([
        "simulate",
        "--config",
        "example/21-componentconfig-profiles.yaml",
        "-f",
        "example/landscape",
        "--now",
        "2026-12-05T12:00:00Z",
    ]));
    assert_eq!(code, 0, "{err}");
    assert_has(
        &out,
        &["freeze window \"release-weekend\" until 2026-12-07T06:00:00Z"],
    );
}

const RENDERED: &str = "tests/data/upstream-config/operator-rendered-sameregion.yaml";
const OBSOLETE: &str = "tests/data/upstream-config/obsolete-keys.yaml";

#[test]
fn validate_only_prints_upstreams_defaults_for_the_zero_values_of_the_operator_rendered_file() {
    for strict in [false, true] {
        let mut cmd = bin();
        cmd.args(["--validate-only", "--config", RENDERED]);
        if strict {
            cmd.arg("--strict");
        }
        let (code, out, err) = run(&mut cmd);
        assert_eq!(code, 0, "{err}");
        assert_eq!(err, "", "every key of the rendered file is known");
        let loaded: serde_yaml_ng::Value = serde_yaml_ng::from_str(&out).unwrap();
        let le = &loaded["leaderElection"];
        assert_eq!(le["leaseDuration"].as_str(), Some("15s"));
        assert_eq!(le["renewDeadline"].as_str(), Some("10s"));
        assert_eq!(le["retryPeriod"].as_str(), Some("2s"));
        assert_eq!(le["resourceLock"].as_str(), Some("leases"));
        assert_eq!(le["resourceNamespace"].as_str(), Some("kube-system"));
        let shoot = &loaded["schedulers"]["shoot"];
        assert_eq!(shoot["concurrentSyncs"].as_i64(), Some(5));
        assert_eq!(
            shoot["candidateDeterminationStrategy"].as_str(),
            Some("SameRegion")
        );
    }
}

#[test]
fn unknown_keys_are_warnings_and_strict_makes_them_errors() {
    let (code, out, err) = run(bin().args(["--validate-only", "--config", OBSOLETE]));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("retrySyncPeriod: 30s"), "{out}");
    assert_eq!(
        err.lines().collect::<Vec<_>>(),
        [
            "warning: schedulers.backupBucket.retrySyncPeriod: unknown field, ignored (an error with --strict)",
            "warning: server.http: unknown field, ignored (an error with --strict)",
        ]
    );

    let (code, out, err) = run(bin().args(["--validate-only", "--strict", "--config", OBSOLETE]));
    assert_eq!(code, 2, "{out}");
    assert_has(
        &err,
        &[
            "  schedulers.backupBucket.retrySyncPeriod: unknown field",
            "  server.http: unknown field",
        ],
    );

    // simulate reads the configuration the same way.
    let manifests = tmp("strict-simulate.yaml", &format!("{SEED}---{SHOOT}"));
    let (code, out, err) = run(bin()
        .args(["simulate", "--config", OBSOLETE, "-f"])
        .arg(&manifests));
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("warning: server.http"), "{err}");
    assert!(out.contains("garden-dev/web"), "{out}");
    let (code, _, err) = run(bin()
        .args(["simulate", "--strict", "--config", OBSOLETE, "-f"])
        .arg(&manifests));
    assert_eq!(code, 2);
    assert!(err.contains("server.http: unknown field"), "{err}");
}

#[test]
fn profiling_settings_are_answered_with_what_the_scheduler_does_about_them() {
    let cfg = tmp(
        "profiling.yaml",
        "debugging: {enableProfiling: true, enableContentionProfiling: true}\n",
    );
    let (code, _, err) = run(bin().args(["--validate-only", "--config"]).arg(&cfg));
    assert_eq!(code, 0, "{err}");
    assert_has(
        &err,
        &[
            "note: debugging.enableProfiling is set: gardener-scheduler serves no /debug/pprof endpoints",
        ],
    );
    assert_has(
        &err,
        &["note: debugging.enableContentionProfiling is set: it has no effect"],
    );
    let (_, _, err) = run(bin().args(["--validate-only", "--config", RENDERED]));
    assert!(
        !err.contains("debugging"),
        "nothing to say when unset: {err}"
    );
}

#[test]
fn a_config_file_with_a_byte_order_mark_loads() {
    let cfg = tmp("bom.yaml", "\u{feff}logLevel: debug\n");
    let (code, out, err) = run(bin()
        .args(["--validate-only", "--strict", "--config"])
        .arg(&cfg));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("logLevel: debug"), "{out}");
}

#[test]
fn at_start_up_the_scheduler_logs_ignored_keys_and_the_profiling_answer_before_connecting() {
    let cfg = tmp(
        "start-up.yaml",
        "logFormat: text\ndebugging: {enableProfiling: true}\nserver: {http: {port: 1}}\n",
    );
    let (code, _, err) = run(bin()
        .args(["--kubeconfig", "/nonexistent/kubeconfig", "--config"])
        .arg(&cfg)
        .env_remove("RUST_LOG"));
    assert_ne!(code, 0, "no API server to talk to");
    let warn = |needle: &str| {
        err.lines()
            .any(|l| l.contains("WARN") && l.contains(needle))
    };
    assert!(warn("field=server.http"), "{err}");
    assert!(warn("debugging.enableProfiling is set"), "{err}");
    assert_has(&err, &["loading kubeconfig /nonexistent/kubeconfig"]);

    // --strict refuses to start on the same file.
    let (code, _, err) = run(bin()
        .args([
            "--strict",
            "--kubeconfig",
            "/nonexistent/kubeconfig",
            "--config",
        ])
        .arg(&cfg));
    assert_eq!(code, 2);
    assert!(err.contains("server.http: unknown field"), "{err}");
    assert!(!err.contains("loading kubeconfig"), "{err}");
}

#[test]
fn a_config_file_that_is_not_a_mapping_is_named_by_its_path() {
    for (name, text, words) in [
        ("list.yaml", "- just\n- a list\n", "must be a YAML mapping"),
        ("broken.yaml", "logLevel: [debug\n", "line"),
    ] {
        let cfg = tmp(name, text);
        let (code, _, err) = run(bin().args(["--validate-only", "--config"]).arg(&cfg));
        assert_eq!(code, 2);
        assert!(
            err.contains(&format!("  {}: ", cfg.display())) && err.contains(words),
            "{err}"
        );
    }
}

/// What bash offers after `words` (the last one being completed), from the script
/// `completion bash` prints, sourced into a real bash.
fn bash_completes(script: &std::path::Path, words: &[&str]) -> Vec<String> {
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let cword = words.len() - 1;
    let probe = format!(
        "source '{}'\nCOMP_WORDS=({})\nCOMP_CWORD={cword}\n_gardener__scheduler gardener-scheduler '{}' '{}'\nprintf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
        script.display(),
        quoted.join(" "),
        words[cword],
        words[cword - 1],
    );
    let out = std::process::Command::new("bash")
        .args(["--norc", "-c", &probe])
        .output()
        .expect("bash runs");
    assert_success(&out);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect()
}

#[test]
fn the_bash_completion_offers_the_subcommands_and_the_flags_of_each() {
    let (code, script, err) = run(bin().args(["completion", "bash"]));
    assert_eq!(code, 0, "{err}");
    for word in [
        "simulate",
        "rebalance",
        "--filename",
        "--expect-lease",
        "--max-moves",
    ] {
        assert!(script.contains(word), "the script lacks {word}");
    }
    let file = tmp("gardener-scheduler.bash", &script);
    assert_eq!(
        bash_completes(&file, &["gardener-scheduler", "si"]),
        ["simulate"]
    );
    assert_eq!(
        bash_completes(&file, &["gardener-scheduler", "simulate", "--ti"]),
        ["--timeline"],
        "a subcommand's own flags complete after it"
    );
    assert_eq!(
        bash_completes(
            &file,
            &["gardener-scheduler", "plan", "rebalance", "--max-m"]
        ),
        ["--max-moves"]
    );
    assert_eq!(
        bash_completes(&file, &["gardener-scheduler", "plan", "ap"]),
        ["apply"]
    );
    assert_eq!(
        bash_completes(&file, &["gardener-scheduler", "exp"]),
        ["explain"]
    );
    assert_eq!(
        bash_completes(&file, &["gardener-scheduler", "explain", "-o", ""]),
        ["text", "json", "html"]
    );
    assert_eq!(
        bash_completes(&file, &["gardener-scheduler", "plan", "apply", "--max-f"]),
        ["--max-failures"]
    );
    assert_eq!(
        bash_completes(&file, &["gardener-scheduler", "simulate", "-o", ""]),
        ["table", "json", "yaml", "html"]
    );
    assert_eq!(
        bash_completes(&file, &["gardener-scheduler", "--expect-binding-mode", ""]),
        ["Binding", "Patch"]
    );
}

#[test]
fn zsh_and_fish_completions_name_the_command() {
    let (code, zsh, err) = run(bin().args(["completion", "zsh"]));
    assert_eq!(code, 0, "{err}");
    assert!(zsh.starts_with("#compdef gardener-scheduler\n"), "{zsh}");
    assert!(zsh.contains("--expect-lease"), "{zsh}");
    let (code, fish, err) = run(bin().args(["completion", "fish"]));
    assert_eq!(code, 0, "{err}");
    assert!(
        fish.lines()
            .any(|l| l.starts_with("complete -c gardener-scheduler") && l.contains("simulate")),
        "{fish}"
    );
    let (code, _, err) = run(bin().args(["completion", "tcsh"]));
    assert_eq!(code, 2);
    assert!(err.contains("possible values: bash"), "{err}");
}

#[test]
fn the_man_page_is_roff_that_renders_with_the_command_name() {
    let (code, page, err) = run(bin().arg("man"));
    assert_eq!(code, 0, "{err}");
    assert!(page.contains(".TH gardener-scheduler 1"), "{page}");
    assert_has(&page, &[".SH NAME\ngardener\\-scheduler \\- "]);
    for section in [".SH SYNOPSIS", ".SH OPTIONS", ".SH SUBCOMMANDS"] {
        assert!(page.contains(section), "no {section}: {page}");
    }
    // Rendered as man(1) would, by the formatter it uses (groff's nroff).
    let file = tmp("gardener-scheduler.1", &page);
    let out = std::process::Command::new("nroff")
        .args(["-man", "-Tascii", "-ww"])
        .arg(&file)
        .output()
        .expect("nroff runs (Debian package groff-base; make test installs it)");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let plain: String = {
        // nroff -Tascii emboldens by overstriking (c\bc); keep the printed characters.
        let mut s = String::new();
        for c in text.chars() {
            if c == '\u{8}' {
                s.pop();
            } else {
                s.push(c);
            }
        }
        s
    };
    assert!(plain.starts_with("gardener-scheduler(1)"), "{plain}");
    for page in ["run", "simulate", "plan", "completion", "man"] {
        assert!(
            plain.contains(&format!("gardener-scheduler-{page}(1)")),
            "SUBCOMMANDS names {page}'s page: {plain}"
        );
    }
    assert!(plain.contains("--expect-lease"), "{plain}");

    let (code, page, err) = run(bin().args(["man", "simulate"]));
    assert_eq!(code, 0, "{err}");
    assert!(page.contains(".TH gardener-scheduler-simulate 1"), "{page}");
    assert!(page.contains("\\-\\-timeline"), "{page}");
    let (code, _, err) = run(bin().args(["man", "simulat"]));
    assert_eq!(code, 2);
    assert_has(
        &err,
        &["man simulat: no such command; one of: run, simulate, plan"],
    );
}

const OPERATOR_FILE: &str = "apiVersion: scheduler.config.gardener.cloud/v1alpha1\nkind: SchedulerConfiguration\nleaderElection: {resourceNamespace: kube-system}\nserver: {metrics: {port: 19252}}\n";

#[test]
fn a_configuration_other_than_the_installation_expects_stops_the_start_naming_both_values() {
    let cfg = tmp("operator-lease.yaml", OPERATOR_FILE);
    let start = |lease: &str, metrics: &str| {
        run(bin()
            .args([
                "--kubeconfig",
                "/nonexistent/kubeconfig",
                "--expect-lease",
                lease,
                "--expect-health-port",
                "10251",
                "--expect-metrics-port",
                metrics,
                "--expect-binding-mode",
                "Binding",
                "--expect-carbon-intensity",
                "false",
                "--config",
            ])
            .arg(&cfg))
    };
    let (code, out, err) = start("garden/gardener-scheduler-leader-election", "19251");
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty(), "{out}");
    assert!(
        !err.contains("kubeconfig"),
        "stops before connecting: {err}"
    );
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "one line per difference: {err}");
    assert!(
        lines[0].starts_with("error: leaderElection: ")
            && lines[0].contains("uses the Lease kube-system/gardener-scheduler-leader-election")
            && lines[0].contains("may update only garden/gardener-scheduler-leader-election")
            && lines[0].contains("config.leaderElection.resourceNamespace: kube-system"),
        "{err}"
    );
    assert!(
        lines[1].starts_with("error: server.metrics.port: ")
            && lines[1].contains("on port 19252")
            && lines[1].contains("expects port 19251")
            && lines[1].contains("config.server.metrics.port: 19252"),
        "{err}"
    );

    // Expecting what the file says, the start goes on (to the missing kubeconfig).
    let (code, _, err) = start("kube-system/gardener-scheduler-leader-election", "19252");
    assert_eq!(code, 1, "{err}");
    assert!(!err.contains("--expect"), "{err}");
    assert!(err.contains("/nonexistent/kubeconfig"), "{err}");
}

#[test]
fn leader_election_binding_mode_and_carbon_reads_are_checked_both_ways() {
    let elect_off = tmp(
        "no-leader.yaml",
        "leaderElection: {leaderElect: false}\nschedulers: {shoot: {bindingMode: Patch, priorities: [{name: CarbonIntensity, args: {regions: {DE: 300}}}]}}\n",
    );
    let (code, _, err) = run(bin()
        .args([
            "--validate-only",
            "--expect-lease",
            "garden/gardener-scheduler-leader-election",
            "--expect-binding-mode",
            "Binding",
            "--expect-carbon-intensity",
            "false",
            "--config",
        ])
        .arg(&elect_off));
    assert_eq!(code, 2, "{err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 3, "{err}");
    assert!(
        lines[0].contains("leaderElection.leaderElect: the configuration elects no leader")
            && lines[0].contains("config.leaderElection.leaderElect: false"),
        "{err}"
    );
    assert!(
        lines[1].contains("binds with Patch")
            && lines[1].contains("config.schedulers.shoot.bindingMode: Patch"),
        "{err}"
    );
    assert!(
        lines[2].contains("uses the CarbonIntensity priority")
            && lines[2].contains("(--expect-carbon-intensity false)"),
        "{err}"
    );

    let defaults = tmp("defaults.yaml", "logLevel: info\n");
    let (code, _, err) = run(bin()
        .args(["--validate-only", "--expect-lease", "none", "--config"])
        .arg(&defaults));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("elects a leader through the Lease garden/gardener-scheduler-leader-election, but the installation grants no Lease (--expect-lease none)"), "{err}");
    let (code, out, err) = run(bin()
        .args([
            "--validate-only",
            "--expect-lease",
            "garden/gardener-scheduler-leader-election",
            "--expect-carbon-intensity",
            "false",
            "--expect-binding-mode",
            "Binding",
            "--config",
        ])
        .arg(&defaults));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("resourceNamespace: garden"), "{out}");
}

#[test]
fn plan_apply_refuses_a_plan_file_it_cannot_use_naming_the_field_before_reading_a_cluster() {
    // no kubeconfig anywhere: a plan file that cannot be used fails before any connection
    let plan = tmp(
        "apply-bad-plan.json",
        r#"{"moves": [{"shoot": "garden-dev/a", "from": "s1", "to": "s2",
            "migration": {"kind": "classic"},
            "timing": {"state": "at", "start": "tonight", "end": "2026-01-01T23:00:00Z"}}],
            "windows": {"maxConcurrent": 2, "moveDurationSeconds": 1800},
            "stamp": {"landscape": "0", "profile": "default", "liveMigration": false}}"#,
    );
    let (code, out, err) = run(bin().args(["plan", "apply"]).arg(&plan));
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty(), "{out}");
    assert_has(
        &err,
        &["moves[0].timing.start: \"tonight\" is not an RFC 3339 timestamp"],
    );
    let (code, _, err) = run(bin().args(["plan", "apply", "/nonexistent/plan.json"]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("/nonexistent/plan.json"), "{err}");
    // a plan's table output is not a plan file
    let table = tmp("apply-table.txt", "Drain plan for s1\n");
    let (code, _, err) = run(bin().args(["plan", "apply"]).arg(&table));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("apply-table.txt: (document)"), "{err}");
}

#[test]
fn plan_apply_refuses_flags_and_shoot_names_it_cannot_use_before_reading_a_cluster() {
    let plan = tmp(
        "apply-flags-plan.json",
        r#"{"goal": {"kind": "drain"}, "profile": "default", "now": "2026-01-01T10:00:00Z",
            "windows": {"horizonSeconds": 604800, "maxConcurrent": 2, "moveDurationSeconds": 1800},
            "stamp": {"generator": "x", "landscape": "0", "seeds": 1, "shoots": 1,
                      "profile": "default", "liveMigration": false},
            "moves": []}"#,
    );
    for (flag, value, want) in [
        (
            "--lease",
            "../x",
            "namespace: \"..\" is not a lowercase RFC 1123 label",
        ),
        (
            "--lease",
            "Garden/UPPER",
            "namespace: \"Garden\" is not a lowercase RFC 1123 label",
        ),
        (
            "--lease",
            "garden/a\u{1b}b",
            "name: \"a\\u{1b}b\" is not a lowercase RFC 1123",
        ),
        ("--lease-duration", "1ns", "must be between 3s and 1h0m0s"),
        ("--lease-duration", "1000h", "must be between 3s and 1h0m0s"),
        ("--poll-interval", "1ns", "must be between 100ms and 10m0s"),
    ] {
        let (code, out, err) = run(bin().args(["plan", "apply"]).arg(&plan).args([flag, value]));
        assert_eq!(code, 2, "{flag} {value}: {err}");
        assert!(out.is_empty(), "{out}");
        assert!(
            err.contains(flag) && err.contains(want),
            "{flag} {value}: {err}"
        );
    }
    // a plan from the year 9990 would hold the Lease until its start times
    let late = tmp(
        "apply-late-plan.json",
        &std::fs::read_to_string(&plan)
            .unwrap()
            .replace("2026-01-01T10:00:00Z", "9990-01-01T10:00:00Z"),
    );
    let (code, _, err) = run(bin().args(["plan", "apply"]).arg(&late));
    assert_eq!(code, 2, "{err}");
    assert_has(
        &err,
        &["now: 9990-01-01T10:00:00Z is more than ten years from this apply's clock"],
    );
    let bidi = tmp(
        "apply-bidi-plan.json",
        &std::fs::read_to_string(&plan).unwrap().replace(
            "\"moves\": []",
            r#""moves": [{"shoot": "garden-dev/a\u202eb", "from": "s1", "to": "s2",
                "migration": {"kind": "classic"}, "timing": {"state": "unscheduled"}}]"#,
        ),
    );
    let (code, _, err) = run(bin().args(["plan", "apply"]).arg(&bidi));
    assert_eq!(code, 2, "{err}");
    assert_has(
        &err,
        &["moves[0].shoot: name: \"a\\u{202e}b\" is not a lowercase RFC 1123 label"],
    );
}

#[test]
fn plan_apply_names_the_address_it_could_not_reach() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let kubeconfig = tmp(
        "apply-nowhere.kubeconfig",
        &format!(
            "apiVersion: v1\nkind: Config\nclusters: [{{name: c, cluster: {{server: \"http://127.0.0.1:{port}\"}}}}]\n\
             users: [{{name: u, user: {{token: t}}}}]\ncontexts: [{{name: x, context: {{cluster: c, user: u}}}}]\n\
             current-context: x\n"
        ),
    );
    let plan = tmp(
        "apply-nowhere-plan.json",
        r#"{"goal": {"kind": "drain"}, "profile": "default", "now": "2026-01-01T10:00:00Z",
            "windows": {"horizonSeconds": 604800, "maxConcurrent": 2, "moveDurationSeconds": 1800},
            "stamp": {"generator": "x", "landscape": "0", "seeds": 1, "shoots": 1,
                      "profile": "default", "liveMigration": false},
            "moves": []}"#,
    );
    let (code, _, err) = run(bin()
        .args(["plan", "apply"])
        .arg(&plan)
        .arg("--kubeconfig")
        .arg(&kubeconfig));
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("reading the lease: the API server could not be reached, nothing was sent")
            && err.contains(&format!("(API server http://127.0.0.1:{port}/)")),
        "{err}"
    );
    assert!(!err.contains("outcome unknown"), "{err}");
}
