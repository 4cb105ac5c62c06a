//! `explain NAMESPACE/NAME -f …` as an operator runs it: each output (text, JSON, HTML) says
//! which view it takes, a bound shoot that would go elsewhere is not said to have moved, and a
//! decision record that contradicts the shoot is shown as untrusted, never as its decision.

#[path = "support/cli.rs"]
mod cli_support;
use cli_support::{assert_has, bin, run, tmp};

const NOW: &str = "2026-12-01T12:00:00Z";

/// The CloudProfile aws and two ready seeds of it in eu-west-1, seed-a and seed-b.
fn landscape() -> String {
    let seed = |name: &str| {
        format!(
            "apiVersion: core.gardener.cloud/v1beta1\nkind: Seed\nmetadata: {{name: {name}}}\nspec:\n  provider: {{type: aws, region: eu-west-1, zones: [a, b, c]}}\n  networks: {{nodes: 10.0.0.0/16, pods: 10.96.0.0/11, services: 10.64.0.0/13}}\nstatus:\n  lastOperation: {{type: Reconcile, state: Succeeded}}\n  conditions: [{{type: GardenletReady, status: \"True\"}}]\n"
        )
    };
    format!(
        "\napiVersion: core.gardener.cloud/v1beta1\nkind: CloudProfile\nmetadata: {{name: aws}}\nspec: {{type: aws}}\n---\n{}---\n{}",
        seed("seed-a"),
        seed("seed-b")
    )
}

/// A shoot `name` of garden-dev, bound to `seed` when given, with `record` as its decision record.
fn shoot(name: &str, seed: Option<&str>, record: Option<&str>) -> String {
    let annotations = record.map_or(String::new(), |r| {
        format!(", annotations: {{scheduling.gardener.cloud/decision: '{r}'}}")
    });
    let seed = seed.map_or(String::new(), |s| format!("  seedName: {s}\n"));
    format!(
        "apiVersion: core.gardener.cloud/v1beta1\nkind: Shoot\nmetadata: {{name: {name}, namespace: garden-dev, creationTimestamp: \"2026-11-01T00:00:00Z\"{annotations}}}\nspec:\n  cloudProfile: {{name: aws}}\n  region: eu-west-1\n{seed}  provider: {{type: aws, workers: [{{name: w}}]}}\n  networking: {{nodes: 10.180.0.0/16}}\n"
    )
}

/// A record of seed `seed` at `time` with `total`.
fn record(seed: &str, time: &str, total: &str) -> String {
    format!(
        r#"{{"v":1,"profile":"default","time":"{time}","seed":"{seed}","total":{total},"margin":null,"priorities":{{"ShootCount":{{"score":100.0,"weight":1.0}}}},"rejected":{{}},"scheduler":"0.1.0"}}"#
    )
}

/// `explain garden-dev/NAME -o OUTPUT` on the landscape with `extra` objects: stdout.
fn explain(file: &str, extra: &[String], name: &str, output: &str) -> String {
    let f = tmp(
        file,
        &format!("{}---\n{}", landscape(), extra.join("---\n")),
    );
    let (code, out, err) = run(bin()
        .args([
            "explain",
            &format!("garden-dev/{name}"),
            "--now",
            NOW,
            "-o",
            output,
            "-f",
        ])
        .arg(&f));
    assert_eq!(code, 0, "{err}");
    out
}

fn json(out: &str) -> serde_json::Value {
    serde_json::from_str(out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

#[test]
fn json_output_is_json_with_its_layout() {
    let out = explain(
        "plain.yaml",
        &[shoot("web", Some("seed-a"), None)],
        "web",
        "json",
    );
    let v = json(&out);
    assert_eq!(v["shoot"], "garden-dev/web");
    assert!(out.starts_with("{\n  \"shoot\""), "{out}");
}

#[test]
fn a_record_that_contradicts_the_shoot_is_untrusted_in_every_output() {
    let extra = [
        // bound to seed-a, the record names seed-b
        shoot(
            "other",
            Some("seed-a"),
            Some(&record("seed-b", "2026-11-30T09:00:00Z", "100.0")),
        ),
        // pending, with a record
        shoot(
            "pending",
            None,
            Some(&record("seed-a", "2026-11-30T09:00:00Z", "100.0")),
        ),
        // a time that is not one, a total no weight allows
        shoot(
            "odd",
            Some("seed-a"),
            Some(&record("seed-a", "yesterday", "1e308")),
        ),
        // a time after now
        shoot(
            "ahead",
            Some("seed-a"),
            Some(&record("seed-a", "2027-06-01T00:00:00Z", "100.0")),
        ),
    ];
    let cases = [
        (
            "other",
            "it names seed \"seed-b\", but spec.seedName is \"seed-a\"",
        ),
        (
            "pending",
            "the shoot is pending (no spec.seedName), yet it carries a record",
        ),
        (
            "odd",
            "its time \"yesterday\" is not an RFC 3339 time; its total 1e+308 is not a number from 0 to 100",
        ),
        (
            "ahead",
            "its time 2027-06-01T00:00:00Z is after now (2026-12-01T12:00:00Z)",
        ),
    ];
    for (name, want) in cases {
        let v = json(&explain("untrusted.yaml", &extra, name, "json"));
        assert_eq!(v["record"], serde_json::Value::Null, "{name}: {v:#}");
        assert_eq!(v["untrustedRecord"]["v"], 1, "{name}: {v:#}");
        let problem = v["recordProblem"].as_str().unwrap();
        assert!(problem.contains(want), "{name}: want {want:?} in {problem}");
        let text = explain("untrusted.yaml", &extra, name, "text");
        assert!(
            text.contains("  untrusted: the record contradicts the shoot"),
            "{name}: {text}"
        );
        assert!(
            text.contains("as stored (not this shoot's decision)"),
            "{name}: {text}"
        );
        let html = explain("untrusted.yaml", &extra, name, "html");
        assert!(
            html.contains("<b>Untrusted:</b> the record contradicts the shoot"),
            "{name}: {html}"
        );
    }
    // A record that agrees is the shoot's decision.
    let extra = [shoot(
        "web",
        Some("seed-a"),
        Some(&record("seed-a", "2026-11-30T09:00:00Z", "100.0")),
    )];
    let v = json(&explain("trusted.yaml", &extra, "web", "json"));
    assert_eq!(v["record"]["seed"], "seed-a", "{v:#}");
    assert_eq!(v["recordProblem"], serde_json::Value::Null, "{v:#}");
}

#[test]
fn each_output_says_its_view_and_a_shoot_that_would_go_elsewhere_has_not_moved() {
    // web is bound to seed-a, which holds two shoots more than seed-b.
    let extra = [
        shoot("web", Some("seed-a"), None),
        shoot("busy-1", Some("seed-a"), None),
        shoot("busy-2", Some("seed-a"), None),
        shoot("new", None, None),
    ];
    let bound_view = "this shoot alone, as if pending (its own load taken off its seed), on the landscape as it is";
    let pending_view = "this shoot alone, on the landscape as it is (simulate also counts the capacity taken by the shoots it decided before)";
    let v = json(&explain("elsewhere.yaml", &extra, "web", "json"));
    assert_eq!(v["verdict"], "wouldMove", "{v:#}");
    assert_eq!(v["view"], bound_view, "{v:#}");
    assert_eq!(v["now"]["ranking"][0]["seed"], "seed-b", "{v:#}");
    assert_eq!(v["now"]["ranking"][1]["seed"], "seed-a", "{v:#}");
    assert_eq!(v["now"]["maxTotal"], 100.0, "{v:#}");
    assert_eq!(v["currentSeed"]["rank"], 2, "{v:#}");
    let text = explain("elsewhere.yaml", &extra, "web", "text");
    assert!(text.contains(&format!("\nView: {bound_view}\n")), "{text}");
    assert!(text.contains("\nVerdict: wouldMove\n"), "{text}");
    assert_has(
        &text,
        &["Its seed now: seed-a (fits; rank 2 of 2, total 0.00)"],
    );
    let html = explain("elsewhere.yaml", &extra, "web", "html");
    assert!(html.contains(&format!("View: {bound_view}")), "{html}");
    assert_has(&html, &["<span class=\"badge\">wouldMove</span>"]);
    assert!(html.contains("Its seed seed-a ranks 2 of 2."), "{html}");
    for out in [&text, &html, &v.to_string()] {
        assert!(!out.contains("moved"), "nothing moved: {out}");
    }
    // A pending shoot: the view says what simulate counts that explain does not.
    let v = json(&explain("elsewhere.yaml", &extra, "new", "json"));
    assert_eq!(v["view"], pending_view, "{v:#}");
    let text = explain("elsewhere.yaml", &extra, "new", "text");
    assert!(
        text.contains(&format!("\nView: {pending_view}\n")),
        "{text}"
    );
    let html = explain("elsewhere.yaml", &extra, "new", "html");
    assert!(html.contains(&format!("View: {pending_view}")), "{html}");
}
