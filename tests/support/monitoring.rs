//! The chart's alerts and dashboard as the tests read them: rendered by a real `helm` (from
//! `$HELM` or `hack/tools.sh`, as in tests/chart.rs), `promtool` and `prometheus` from PATH
//! (`hack/ensure-package.sh prometheus promtool` installs them; `make test` runs it first), and
//! the series selectors inside a PromQL expression.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde::Deserialize;
use serde_yaml_ng::Value;

pub const RELEASE: &str = "gardener-scheduler";
pub const NAMESPACE: &str = "garden";

pub fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

pub fn chart() -> PathBuf {
    repo().join("charts/gardener-scheduler")
}

/// What the repository's bash `script` prints; a failure names the script, what it `could_not`
/// do, and its stderr.
pub fn printed_by(script: &str, could_not: &str) -> String {
    let out = Command::new("bash")
        .arg(repo().join(script))
        .output()
        .unwrap_or_else(|e| panic!("running {script}: {e}"));
    assert!(
        out.status.success(),
        "{script} {could_not}:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap_or_else(|e| panic!("{script} prints text: {e}"))
}

pub fn helm() -> &'static Path {
    static HELM: OnceLock<PathBuf> = OnceLock::new();
    HELM.get_or_init(|| {
        if let Some(path) = std::env::var_os("HELM").filter(|p| !p.is_empty()) {
            let path = PathBuf::from(path);
            assert!(path.is_file(), "HELM={} is not a file", path.display());
            return path;
        }
        let bin = printed_by(
            "hack/tools.sh",
            "could not provide helm (set HELM to a helm binary to use another)",
        );
        let path = Path::new(bin.trim()).join("helm");
        assert!(
            path.is_file(),
            "hack/tools.sh printed {bin:?}, which holds no helm"
        );
        path
    })
}

/// A command of Debian's `prometheus` package (`promtool`, `prometheus`); fails the test with
/// the command that installs it when it is missing.
pub fn prometheus_tool(name: &str) -> PathBuf {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
    });
    found.unwrap_or_else(|| {
        panic!(
            "{name} is not on PATH; run hack/ensure-package.sh prometheus promtool \
             (make test does) or install Debian's prometheus package"
        )
    })
}

/// Every object `helm template` renders with these `--set` values.
pub fn render(values: &[PathBuf], set: &[&str]) -> Vec<Value> {
    let mut cmd = Command::new(helm());
    cmd.args(["template", RELEASE])
        .arg(chart())
        .args(["--namespace", NAMESPACE]);
    for v in values {
        cmd.arg("--values").arg(v);
    }
    for s in set {
        cmd.arg("--set").arg(s);
    }
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("running {}: {e}", helm().display()));
    assert!(
        out.status.success(),
        "helm template --set {set:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).expect("helm prints UTF-8");
    serde_yaml_ng::Deserializer::from_str(&text)
        .map(|doc| Value::deserialize(doc).expect("helm renders valid YAML"))
        .filter(|doc| !doc.is_null())
        .collect()
}

/// The objects of the chart with the alerts and the dashboard enabled.
pub fn render_monitoring(values: &[PathBuf], set: &[&str]) -> Vec<Value> {
    let mut all = vec!["prometheusRule.enabled=true", "dashboard.enabled=true"];
    all.extend_from_slice(set);
    render(values, &all)
}

pub fn one<'a>(objects: &'a [Value], kind: &str, name_suffix: &str) -> &'a Value {
    let found: Vec<&Value> = objects
        .iter()
        .filter(|o| o["kind"] == kind)
        .filter(|o| {
            o["metadata"]["name"]
                .as_str()
                .is_some_and(|n| n.ends_with(name_suffix))
        })
        .collect();
    assert_eq!(
        found.len(),
        1,
        "one {kind} named *{name_suffix} is rendered"
    );
    found[0]
}

/// The rule file of the rendered PrometheusRule (its `spec`: `groups: ...`), as promtool reads it.
pub fn rule_file(objects: &[Value]) -> String {
    let rule = one(objects, "PrometheusRule", "");
    serde_yaml_ng::to_string(&rule["spec"]).unwrap()
}

/// One alerting rule: name and expression.
#[derive(Clone, Debug)]
pub struct Alert {
    pub name: String,
    pub expr: String,
    pub rule: Value,
}

pub fn alerts(objects: &[Value]) -> Vec<Alert> {
    let rule = one(objects, "PrometheusRule", "");
    let mut out = Vec::new();
    for group in rule["spec"]["groups"].as_sequence().expect("groups") {
        for r in group["rules"].as_sequence().expect("rules") {
            out.push(Alert {
                name: r["alert"].as_str().expect("only alerting rules").into(),
                expr: r["expr"].as_str().expect("expr").into(),
                rule: r.clone(),
            });
        }
    }
    out
}

/// The dashboard JSON of the rendered ConfigMap.
pub fn dashboard(objects: &[Value]) -> serde_json::Value {
    let cm = one(objects, "ConfigMap", "-dashboard");
    let data = cm["data"].as_mapping().expect("data");
    assert_eq!(data.len(), 1, "one dashboard in the ConfigMap");
    let (_, text) = data.iter().next().unwrap();
    serde_json::from_str(text.as_str().unwrap()).expect("the dashboard is JSON")
}

/// (panel title, expression) of every query of every panel.
pub fn panel_queries(dashboard: &serde_json::Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for panel in dashboard["panels"].as_array().expect("panels") {
        let title = panel["title"].as_str().unwrap_or_default().to_string();
        for target in panel["targets"].as_array().expect("targets") {
            out.push((title.clone(), target["expr"].as_str().unwrap().to_string()));
        }
    }
    out
}

/// An expression as Prometheus can run it outside Grafana: the interval variables replaced.
pub fn without_dashboard_variables(expr: &str) -> String {
    expr.replace("$__rate_interval", "1m")
        .replace("$__interval", "1m")
}

const KEYWORDS: [&str; 14] = [
    "by",
    "without",
    "on",
    "ignoring",
    "group_left",
    "group_right",
    "and",
    "or",
    "unless",
    "offset",
    "bool",
    "inf",
    "nan",
    "atan2",
];

const AGGREGATIONS: [&str; 12] = [
    "sum",
    "min",
    "max",
    "avg",
    "group",
    "stddev",
    "stdvar",
    "count",
    "count_values",
    "bottomk",
    "topk",
    "quantile",
];

/// The series selectors (`name{matchers}`) of a PromQL expression, in order: what must return
/// series for the expression to mean anything. A matcher `=~"a|b"` of plain words becomes one
/// selector per word, so that each value must exist on its own.
pub fn selectors(expr: &str) -> Vec<String> {
    let chars: Vec<char> = expr.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let mut skip_labels = false;
    while i < chars.len() {
        let c = chars[i];
        if c == '"' || c == '\'' || c == '`' {
            i = skip_string(&chars, i);
            continue;
        }
        if c == '[' {
            while i < chars.len() && chars[i] != ']' {
                i += 1;
            }
            i += 1;
            continue;
        }
        if c.is_ascii_digit() || (c == '.' && chars.get(i + 1).is_some_and(char::is_ascii_digit)) {
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '.') {
                i += 1;
            }
            continue;
        }
        if c.is_ascii_alphabetic() || c == '_' || c == ':' {
            let start = i;
            while i < chars.len()
                && (chars[i].is_ascii_alphanumeric() || chars[i] == '_' || chars[i] == ':')
            {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            let mut j = i;
            while j < chars.len() && chars[j].is_whitespace() {
                j += 1;
            }
            let next = chars.get(j).copied();
            if KEYWORDS.contains(&word.to_ascii_lowercase().as_str()) {
                skip_labels = matches!(
                    word.as_str(),
                    "by" | "without" | "on" | "ignoring" | "group_left" | "group_right"
                );
                continue;
            }
            if next == Some('(') || AGGREGATIONS.contains(&word.as_str()) {
                // a function or aggregation: `rate(...)`, `sum by (x) (...)`
                continue;
            }
            let mut selector = word;
            if next == Some('{') {
                let end = matching_brace(&chars, j);
                selector.extend(&chars[j..=end]);
                i = end + 1;
            }
            out.extend(split_alternatives(&selector));
            continue;
        }
        if c == '(' && skip_labels {
            // the label list of by/without/on/ignoring/group_*
            while i < chars.len() && chars[i] != ')' {
                i += 1;
            }
            skip_labels = false;
            i += 1;
            continue;
        }
        i += 1;
    }
    out
}

fn skip_string(chars: &[char], start: usize) -> usize {
    let quote = chars[start];
    let mut i = start + 1;
    while i < chars.len() && chars[i] != quote {
        if chars[i] == '\\' {
            i += 1;
        }
        i += 1;
    }
    i + 1
}

fn matching_brace(chars: &[char], open: usize) -> usize {
    let mut i = open + 1;
    while i < chars.len() && chars[i] != '}' {
        if chars[i] == '"' || chars[i] == '\'' || chars[i] == '`' {
            i = skip_string(chars, i);
        } else {
            i += 1;
        }
    }
    i
}

/// `x{a=~"p|q",b="c"}` → `x{a="p",b="c"}`, `x{a="q",b="c"}`; anything else as it is.
fn split_alternatives(selector: &str) -> Vec<String> {
    let Some(at) = selector.find("=~\"") else {
        return vec![selector.to_string()];
    };
    let value_start = at + 3;
    let Some(len) = selector[value_start..].find('"') else {
        return vec![selector.to_string()];
    };
    let value = &selector[value_start..value_start + len];
    if !value.contains('|')
        || !value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '|')
    {
        return vec![selector.to_string()];
    }
    value
        .split('|')
        .flat_map(|alt| {
            split_alternatives(&format!(
                "{}=\"{alt}\"{}",
                &selector[..at],
                &selector[value_start + len + 1..]
            ))
        })
        .collect()
}
