//! `simulate --compare` and `--replay` on the example landscape, and their usage errors. (The
//! live read is tested against a real API server in tests/e2e/whatif.rs.)

use std::collections::BTreeMap;

use serde_json::Value;

#[path = "support/cli.rs"]
mod cli_support;
use cli_support::{assert_has, bin, elements, run, string};

const WEIGHTED: &str = "example/20-componentconfig-weighted.yaml";
const DEFAULT: &str = "example/20-componentconfig-gardener-scheduler.yaml";
const NOW: &str = "2026-11-30T12:00:00Z";

fn simulate(args: &[&str]) -> (i32, String, String) {
    run(bin().arg("simulate").args(["--now", NOW]).args(args))
}

fn json(args: &[&str]) -> Value {
    let (code, out, err) = simulate(args);
    assert_eq!(code, 0, "{args:?}: {err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// shoot -> seed (None: unschedulable), from a plain `-o json` run.
fn placements(config: &str, replay: bool) -> BTreeMap<String, Option<String>> {
    let mut args = vec!["-f", "example/landscape", "--config", config, "-o", "json"];
    if replay {
        args.push("--replay");
    }
    json(&args)["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (string(d, "shoot"), d["seed"].as_str().map(str::to_string)))
        .collect()
}

/// The comparison agrees with two separate runs: exactly the shoots they place differently,
/// with the seeds each run chose, and the same placed/unschedulable counts.
fn check_against_separate_runs(replay: bool) {
    let old = placements(DEFAULT, replay);
    let new = placements(WEIGHTED, replay);
    let mut args = vec![
        "-f",
        "example/landscape",
        "--config",
        WEIGHTED,
        "--compare",
        DEFAULT,
        "-o",
        "json",
    ];
    if replay {
        args.push("--replay");
    }
    let c = json(&args);
    let got: BTreeMap<String, (Option<String>, Option<String>)> = elements(&c, "differences")
        .map(|d| {
            (
                string(d, "shoot"),
                (
                    d["old"]["seed"].as_str().map(str::to_string),
                    d["new"]["seed"].as_str().map(str::to_string),
                ),
            )
        })
        .collect();
    let want: BTreeMap<String, (Option<String>, Option<String>)> = new
        .iter()
        .filter(|(shoot, seed)| old.get(*shoot) != Some(seed))
        .map(|(shoot, seed)| (shoot.clone(), (old[shoot].clone(), seed.clone())))
        .collect();
    assert!(!want.is_empty(), "the two configurations differ somewhere");
    assert_eq!(got, want);
    for (summary, run) in [(&c["old"], &old), (&c["new"], &new)] {
        let placed = run.values().filter(|s| s.is_some()).count();
        assert_eq!(summary["placed"], placed);
        assert_eq!(summary["unschedulable"], run.len() - placed);
    }
    // latency is known only where LatencyDistance is configured (the weighted file)
    assert!(c["old"]["latency"].is_null());
    let l = &c["new"]["latency"];
    assert!(
        l["meanMs"].as_f64().unwrap() <= l["p95Ms"].as_f64().unwrap(),
        "{l}"
    );
    // every difference says where the old seed stood under the new configuration
    for d in c["differences"].as_array().unwrap() {
        if d["old"]["seed"].is_string() && d["new"].is_object() {
            let s = d["oldSeedUnderNew"].as_str().unwrap();
            assert!(s.starts_with(d["old"]["seed"].as_str().unwrap()), "{d}");
        }
    }
}

#[test]
fn compare_prints_exactly_the_shoots_two_separate_runs_place_differently() {
    check_against_separate_runs(false);
}

#[test]
fn compare_with_replay_decides_the_whole_landscape_under_both() {
    check_against_separate_runs(true);
}

#[test]
fn compare_table_lists_old_to_new_and_a_summary_per_configuration() {
    let (code, out, err) = simulate(&[
        "-f",
        "example/landscape",
        "--config",
        WEIGHTED,
        "--compare",
        DEFAULT,
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("placed differently (old -> new):"), "{out}");
    assert!(out.contains("\n  under new, old seed "), "{out}");
    for side in ["old", "new"] {
        let at = out
            .find(&format!("\nSummary ({side}):\n  placed "))
            .unwrap();
        let block = &out[at..];
        assert!(block.contains("\n  utilisation: min "), "{block}");
        assert!(block.contains("\n  shoots per region: "), "{block}");
    }
    assert!(out.contains("latency: mean "), "{out}");

    // the same configuration on both sides: nothing differs
    let (code, out, _) = simulate(&[
        "-f",
        "example/landscape",
        "--config",
        DEFAULT,
        "--compare",
        DEFAULT,
    ]);
    assert_eq!(code, 0);
    assert!(out.starts_with("No shoot is placed differently"), "{out}");
}

#[test]
fn replay_decides_the_bound_shoots_again_in_creation_order() {
    let pending = placements(DEFAULT, false);
    let replayed = json(&[
        "-f",
        "example/landscape",
        "--config",
        DEFAULT,
        "-o",
        "json",
        "--replay",
    ]);
    let decisions = replayed["decisions"].as_array().unwrap();
    assert!(decisions.len() > pending.len());
    for shoot in pending.keys() {
        assert!(
            decisions.iter().any(|d| d["shoot"] == shoot.as_str()),
            "{shoot} is decided in the replay too"
        );
    }
    // creation order: read the shoots' timestamps from the manifests
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("example/landscape/20-shoots.yaml"),
    )
    .unwrap();
    let mut created = BTreeMap::new();
    for doc in serde_yaml_ng::Deserializer::from_str(&text) {
        let v: Value = serde::Deserialize::deserialize(doc).unwrap();
        if v.is_null() {
            continue;
        }
        let key = format!(
            "{}/{}",
            v["metadata"]["namespace"].as_str().unwrap(),
            v["metadata"]["name"].as_str().unwrap()
        );
        created.insert(
            key,
            v["metadata"]["creationTimestamp"]
                .as_str()
                .map(str::to_string),
        );
    }
    let order: Vec<(Option<String>, String)> = decisions
        .iter()
        .map(|d| {
            let shoot = string(d, "shoot");
            (created.get(&shoot).cloned().flatten(), shoot)
        })
        .collect();
    let mut sorted = order.clone();
    sorted.sort();
    assert_eq!(order, sorted, "decided in creation order, then by name");
}

#[test]
fn usage_errors_exit_2() {
    // neither manifests nor the cluster
    let (code, _, err) = simulate(&[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--filename"), "{err}");
    // a comparison has no YAML form
    let (code, out, err) = simulate(&[
        "-f",
        "example/landscape",
        "--compare",
        DEFAULT,
        "-o",
        "yaml",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty());
    assert!(err.contains("--compare: -o yaml is not available"), "{err}");
    // the old configuration must load
    let (code, _, err) = simulate(&[
        "-f",
        "example/landscape",
        "--compare",
        "example/does-not-exist.yaml",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("does-not-exist.yaml"), "{err}");
    // --compare explains differences itself
    let (code, _, err) = simulate(&[
        "-f",
        "example/landscape",
        "--compare",
        DEFAULT,
        "--explain",
        "garden/metering",
    ]);
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = simulate(&["--live", "--chunk-size", "0"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--chunk-size"), "{err}");
}

/// `-o html` of `--compare`: one row per shoot the JSON comparison lists, each with its
/// old -> new seeds and an expandable explanation, and both summaries.
#[test]
fn compare_html_shows_every_difference_with_its_explanation_and_both_summaries() {
    let base = [
        "-f",
        "example/landscape",
        "--config",
        WEIGHTED,
        "--compare",
        DEFAULT,
    ];
    let v = json(&[&base[..], &["-o", "json"]].concat());
    let (code, html, err) = simulate(&[&base[..], &["-o", "html"]].concat());
    assert_eq!(code, 0, "{err}");
    assert!(html.starts_with("<!DOCTYPE html>"), "{html}");
    assert!(html.contains("<h1>Configuration comparison: old → new</h1>"));
    let diffs = v["differences"].as_array().unwrap();
    assert!(!diffs.is_empty());
    let at = html.find("<h2>Placed differently (").unwrap();
    let section = &html[at..html.find("<h2>Summary per configuration</h2>").unwrap()];
    assert!(section.starts_with(&format!("<h2>Placed differently ({})</h2>", diffs.len())));
    assert_eq!(
        section.matches("<tr><td class=\"seed\">").count(),
        diffs.len()
    );
    for d in diffs {
        let shoot = d["shoot"].as_str().unwrap();
        let row_at = section
            .find(&format!("<tr><td class=\"seed\">{shoot}</td>"))
            .unwrap_or_else(|| panic!("{shoot} has a row"));
        let row = &section[row_at..];
        let row = &row[..row.find("</tr>").unwrap()];
        if let Some(new) = d["new"]["seed"].as_str() {
            assert!(row.contains(&format!("<b>{new}</b>")), "{row}");
            assert!(
                row.contains(
                    "<details><summary>explanation: every seed under the new configuration"
                ),
                "{row}"
            );
        }
        match d["old"]["seed"].as_str() {
            Some(old) => assert!(
                row.contains(&format!("{old} <span class=\"arrow\">")),
                "{row}"
            ),
            None => assert!(row.contains("unschedulable"), "{row}"),
        }
    }
    for side in ["old", "new"] {
        let s = &v[side];
        assert!(
            html.contains(&format!("{} / {}", s["placed"], s["decided"])),
            "{side} summary: {s}"
        );
    }
    assert!(html.contains("<h3>Shoots per region</h3>"));
}

/// `--replay -o html`: the replayed landscape, every replayed shoot's placement.
#[test]
fn replay_html_shows_the_landscape_after_replay() {
    let args = ["-f", "example/landscape", "--config", DEFAULT, "--replay"];
    let v = json(&[&args[..], &["-o", "json"]].concat());
    let (code, html, err) = simulate(&[&args[..], &["-o", "html"]].concat());
    assert_eq!(code, 0, "{err}");
    assert!(html.contains("<h1>Landscape after replay</h1>"), "{html}");
    // "before" is the landscape as bound, not the emptied one the replay decides on
    let bound_before: usize = html
        .split("<td class=\"num\">")
        .skip(1)
        .filter_map(|cell| cell.split_once(" → <b>"))
        .filter_map(|(before, _)| before.parse::<usize>().ok())
        .sum();
    assert!(bound_before > 0, "{html}");
    let decisions = v["decisions"].as_array().unwrap();
    assert!(html.contains(&format!(
        "<div class=\"n\">{}</div><div class=\"l\">shoots replayed</div>",
        decisions.len()
    )));
    for d in decisions.iter().filter(|d| d["seed"].is_string()) {
        assert!(
            html.contains(&format!(
                "<tr><td class=\"seed\">{}</td><td class=\"seed\">{}</td>",
                d["shoot"].as_str().unwrap(),
                d["seed"].as_str().unwrap()
            )),
            "{d}"
        );
    }
}

/// What a fake cluster answers to every request.
#[derive(Clone, Copy)]
enum Scenario {
    /// Accepts the connection and never answers.
    Silent,
    /// A SeedList whose items never end.
    EndlessList,
    /// A SeedList whose first object holds one string that never ends.
    EndlessString,
    /// A SeedList with one object of 9 MiB.
    HugeObject,
    /// `{"kind": "PodList", "items": null}` to every list.
    PodListNull,
    /// The right kind, `items: null`.
    SeedListNull,
    /// An HTML login page with 200.
    LoginPage,
    /// A 302 to a login page without a body.
    EmptyRedirect,
    /// Bytes that are not JSON, with 200.
    Garbage,
}

/// Serves `scenario` on a local port until the test process ends; the kubeconfig for it.
fn fake_cluster(scenario: Scenario, user: &str) -> std::path::PathBuf {
    use axum::body::Body;
    use axum::http::{Response, header};
    let std_listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    std_listener.set_nonblocking(true).unwrap();
    let port = std_listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(std_listener).unwrap();
            if let Scenario::Silent = scenario {
                let mut held = Vec::new();
                while let Ok((socket, _)) = listener.accept().await {
                    held.push(socket);
                }
                return;
            }
            let head = r#"{"kind":"SeedList","apiVersion":"core.gardener.cloud/v1beta1","metadata":{},"items":["#;
            let answer = move || -> Response<Body> {
                let json = |body: Body| {
                    Response::builder()
                        .header(header::CONTENT_TYPE, "application/json")
                        .body(body)
                        .unwrap()
                };
                let endless = |first: &'static str, repeat: &'static str| {
                    let chunks = futures::stream::once(async move { first.to_string() })
                        .chain(futures::stream::repeat(repeat.repeat(4096)))
                        .map(Ok::<_, std::io::Error>);
                    Body::from_stream(chunks)
                };
                use futures::StreamExt;
                match scenario {
                    Scenario::Silent => unreachable!(),
                    Scenario::EndlessList => {
                        json(endless(head, r#"{"metadata":{"name":"s"}},"#))
                    }
                    Scenario::EndlessString => json(endless(
                        Box::leak(format!(r#"{head}{{"metadata":{{"name":""#).into_boxed_str()),
                        "a",
                    )),
                    Scenario::HugeObject => json(Body::from(format!(
                        r#"{head}{{"metadata":{{"name":"s","annotations":{{"a":"{}"}}}}}}]}}"#,
                        "a".repeat(9 << 20)
                    ))),
                    Scenario::PodListNull => {
                        json(Body::from(r#"{"kind": "PodList", "apiVersion": "v1", "items": null}"#))
                    }
                    Scenario::SeedListNull => json(Body::from(
                        r#"{"kind":"SeedList","apiVersion":"core.gardener.cloud/v1beta1","items":null}"#,
                    )),
                    Scenario::LoginPage => Response::builder()
                        .header(header::CONTENT_TYPE, "text/html")
                        .body(Body::from("<!DOCTYPE html><html><body>Sign in</body></html>"))
                        .unwrap(),
                    Scenario::EmptyRedirect => Response::builder()
                        .status(302)
                        .header(header::LOCATION, "https://login.example.com/")
                        .body(Body::empty())
                        .unwrap(),
                    Scenario::Garbage => Response::builder()
                        .body(Body::from("\u{1}\u{2}garbage"))
                        .unwrap(),
                }
            };
            let app = axum::Router::new().fallback(move || async move { answer() });
            axum::serve(listener, app).await.unwrap();
        });
    });
    let kubeconfig = format!(
        r#"apiVersion: v1
kind: Config
clusters: [{{name: c, cluster: {{server: "http://127.0.0.1:{port}"}}}}]
users: [{{name: u, user: {user}}}]
contexts: [{{name: x, context: {{cluster: c, user: u}}}}]
current-context: x
"#
    );
    cli_support::tmp(&format!("kubeconfig-{port}"), &kubeconfig)
}

fn against(scenario: Scenario, extra: &[&str]) -> (i32, String, String, std::time::Duration) {
    let kc = fake_cluster(scenario, "{token: t}");
    let started = std::time::Instant::now();
    let (code, out, err) = run(bin()
        .args(["simulate", "--kubeconfig"])
        .arg(&kc)
        .args(extra));
    (code, out, err, started.elapsed())
}

#[test]
fn a_cluster_that_never_answers_fails_after_the_request_timeout() {
    for cmd in [
        &["simulate"][..],
        &["plan", "rebalance", "--max-moves", "1"][..],
    ] {
        let kc = fake_cluster(Scenario::Silent, "{token: t}");
        let started = std::time::Instant::now();
        let (code, out, err) = run(bin()
            .args(cmd)
            .arg("--kubeconfig")
            .arg(&kc)
            .args(["--request-timeout", "1s"]));
        assert_eq!(code, 1, "{err}");
        assert!(out.is_empty(), "{out}");
        assert_has(
            &err,
            &["listing Seeds: the cluster did not answer within 1 s"],
        );
        assert!(started.elapsed().as_secs() < 20, "{:?}", started.elapsed());
    }
}

#[test]
fn a_silent_server_is_given_up_on_at_the_request_timeout_above_the_schedulers_own_limit() {
    // The scheduler's own per-request limit is 20 s; a longer --request-timeout is the one
    // that counts, and the message names it. (The one test here that waits that long.)
    let kc = fake_cluster(Scenario::Silent, "{token: t}");
    let (code, out, err) = run(bin()
        .args(["simulate", "--kubeconfig"])
        .arg(&kc)
        .args(["--request-timeout", "21s"]));
    assert_eq!(code, 1, "{err}");
    assert!(out.is_empty(), "{out}");
    assert_has(
        &err,
        &["listing Seeds: the cluster did not answer within 21 s (--request-timeout)"],
    );
}

#[test]
fn an_exec_credential_plugin_that_never_returns_is_named_after_the_timeout() {
    let kc = fake_cluster(
        Scenario::Silent,
        "{exec: {apiVersion: client.authentication.k8s.io/v1beta1, command: sleep, args: ['15']}}",
    );
    // The plugin inherits stderr (its messages reach the user): write it to a file, so that
    // the test waits for the command, not for the plugin it left behind.
    let log = cli_support::tmp("exec-plugin-stderr", "");
    let started = std::time::Instant::now();
    let status = bin()
        .args(["simulate", "--kubeconfig"])
        .arg(&kc)
        .args(["--request-timeout", "1s"])
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .status()
        .unwrap();
    let took = started.elapsed();
    let err = std::fs::read_to_string(&log).unwrap();
    assert_eq!(status.code(), Some(1), "{err}");
    assert_has(
        &err,
        &[
            "the exec credential plugin \"sleep\" (user \"u\"",
            "did not answer within 1 s",
        ],
    );
    assert!(took.as_secs() < 10, "{took:?}");
}

/// Whether process `pid` still runs (a zombie has ended).
fn running(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit(')').next().map(|rest| rest.trim().to_string()))
        .is_some_and(|rest| !rest.starts_with('Z') && !rest.starts_with('X'))
}

#[test]
fn an_exec_plugins_children_do_not_hold_the_callers_output_open() {
    // A plugin that leaves a child behind holding its stdout and stderr: once after answering,
    // once without ever answering. The command is read as `$(…)` reads it, to the end of its
    // output; the child must be gone when it ends.
    for (case, answer) in [
        (
            "answers",
            r#"printf '{"apiVersion": "client.authentication.k8s.io/v1beta1", "kind": "ExecCredential", "status": {"token": "t"}}'"#,
        ),
        ("never-answers", "sleep 60"),
    ] {
        let pid_file = cli_support::tmp(&format!("exec-child-{case}.pid"), "");
        let script = cli_support::tmp(
            &format!("exec-plugin-{case}.sh"),
            &format!(
                "#!/bin/sh\nsleep 60 &\necho $! > {}\n{answer}\n",
                pid_file.display()
            ),
        );
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let kc = fake_cluster(
            Scenario::Garbage,
            &format!(
                "{{exec: {{apiVersion: client.authentication.k8s.io/v1beta1, command: {}}}}}",
                script.display()
            ),
        );
        let mut cmd = bin();
        cmd.args(["simulate", "--kubeconfig"])
            .arg(&kc)
            .args(["--request-timeout", "2s"]);
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(cmd.output().unwrap());
        });
        // a safety net only: without the fix the read ends when the child's `sleep 60` does
        let out = rx
            .recv_timeout(std::time::Duration::from_secs(45))
            .unwrap_or_else(|_| panic!("{case}: the command's output was held open"));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{case}: {err}");
        if case == "answers" {
            assert!(
                err.contains("but not with a Kubernetes list"),
                "{case}: {err}"
            );
        } else {
            assert!(err.contains("did not answer within 2 s"), "{case}: {err}");
        }
        let child = std::fs::read_to_string(&pid_file).unwrap();
        let child = child.trim();
        assert!(!child.is_empty(), "{case}: the plugin ran");
        // The child is killed when the command ends; a killed process is gone once the kernel
        // has run its exit, which on a busy machine can be a moment after the command's end.
        let gone_by = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while running(child) && std::time::Instant::now() < gone_by {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        assert!(
            !running(child),
            "{case}: the plugin's child {child} still runs 10 s after the command ended"
        );
    }
}

#[test]
fn kubeconfig_is_read_as_a_regular_file_of_bounded_size() {
    let (code, _, err) = run(bin().args(["simulate", "--kubeconfig", "/dev/zero"]));
    assert_eq!(code, 2, "{err}");
    assert_has(
        &err,
        &["kubeconfig /dev/zero: is a character device, not a regular file"],
    );
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("whatif-fifo");
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("kubeconfig");
    let _ = std::fs::remove_file(&fifo);
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let (code, _, err) = run(bin()
        .args(["plan", "drain", "x", "--kubeconfig"])
        .arg(&fifo));
    assert_eq!(code, 2, "{err}");
    assert_has(&err, &["is a named pipe (FIFO), not a regular file"]);
    let big = cli_support::tmp("big-kubeconfig", &"#".repeat(5 << 20));
    let (code, _, err) = run(bin().args(["simulate", "--kubeconfig"]).arg(&big));
    assert_eq!(code, 2, "{err}");
    assert_has(&err, &["holds more than the 4194304 bytes accepted"]);
}

#[test]
fn an_endless_answer_stops_at_the_page_or_object_cap_naming_the_kind() {
    for scenario in [Scenario::EndlessList, Scenario::EndlessString] {
        let (code, _, err, took) = against(scenario, &[]);
        assert_eq!(code, 1, "{err}");
        assert_has(
            &err,
            &["listing Seeds: one page of the answer holds more than 67108864 bytes"],
        );
        assert!(took.as_secs() < 30, "{took:?}");
    }
    let (code, _, err, _) = against(Scenario::HugeObject, &[]);
    assert_eq!(code, 1, "{err}");
    assert_has(
        &err,
        &["listing Seeds: object 0 of a page holds more than 8388608 bytes"],
    );
}

#[test]
fn an_answer_that_is_not_a_kubernetes_list_says_so() {
    for (scenario, says) in [
        (
            Scenario::PodListNull,
            "kind \"PodList\", apiVersion \"v1\" where SeedList core.gardener.cloud/v1beta1 was asked for",
        ),
        (Scenario::SeedListNull, "SeedList without items"),
        (Scenario::LoginPage, "an HTML page"),
        (
            Scenario::EmptyRedirect,
            "a redirect to \"https://login.example.com/\"",
        ),
        (Scenario::Garbage, "a body starting"),
    ] {
        let (code, out, err, _) = against(scenario, &[]);
        assert_eq!(code, 1, "{err}");
        assert!(out.is_empty(), "{out}");
        assert_has(
            &err,
            &[
                "listing Seeds: the server answered",
                "but not with a Kubernetes list",
            ],
        );
        assert!(err.contains(says), "{says}: {err}");
        assert!(!err.contains("could not be reached"), "{err}");
    }
}

#[test]
fn timeline_and_a_freeze_answer_in_the_format_asked_for() {
    let profiles = "example/21-componentconfig-profiles.yaml";
    let range = "2026-12-01T00:00:00Z..2026-12-08T00:00:00Z";
    let (code, out, err) = run(bin().args([
        "simulate",
        "-f",
        "example/landscape",
        "--config",
        profiles,
        "--timeline",
        range,
        "-o",
        "json",
    ]));
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert!(
        elements(&v, "changes").any(|c| c["profile"] == "release-weekend (freeze)"),
        "{out}"
    );
    for o in ["html", "yaml"] {
        let (code, out, err) = run(bin().args([
            "simulate",
            "-f",
            "example/landscape",
            "--config",
            profiles,
            "--timeline",
            range,
            "-o",
            o,
        ]));
        assert_eq!(code, 2, "{o}: {err}");
        assert!(out.is_empty(), "{out}");
        assert!(err.contains("--timeline"), "{err}");
    }
    // Inside the freeze: the deferral in the format asked for.
    let inside = "2026-12-05T12:00:00Z";
    for (extra, o) in [
        (&["--replay"][..], "html"),
        (&["--replay"][..], "yaml"),
        (&["--replay"][..], "json"),
        (&["--compare", DEFAULT][..], "html"),
    ] {
        let (code, out, err) = run(bin()
            .args([
                "simulate",
                "-f",
                "example/landscape",
                "--config",
                profiles,
                "--now",
                inside,
            ])
            .args(extra)
            .args(["-o", o]));
        assert_eq!(code, 0, "{o}: {err}");
        match o {
            "html" => assert!(
                out.starts_with("<!DOCTYPE html>") && out.contains("Scheduling deferred"),
                "{out}"
            ),
            "yaml" => assert!(
                out.lines().all(|l| l.starts_with('#')) && out.contains("deferred"),
                "{out}"
            ),
            _ => {
                let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
                assert_eq!(v["deferred"], true, "{out}");
            }
        }
    }
}
