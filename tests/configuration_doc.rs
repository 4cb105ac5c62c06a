//! docs/usage/configuration.md is the operator's reference: it must name every key the binary
//! accepts, every registered priority and opt-in filter, and its environment examples must do
//! what it says. docs/concepts/scheduler.md must describe every built-in filter and every region
//! strategy, so that a plugin registered without its documentation fails here.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use gardener_scheduler::compile::load_str;
use serde_json::Value;

fn read(path: &str) -> String {
    let full = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("reading {}: {e}", full.display()))
}

fn reference() -> String {
    read("docs/usage/configuration.md")
}

/// A configuration that sets every key, so that serializing it shows every key path.
const EVERY_KEY: &str = r#"
schedulers:
  shoot:
    priorities:
      - name: ShootCount
        weight: 1
        args: {relativeToCapacity: true}
    filters:
      - name: MaxLatency
        args: {maxLatencyMs: 50}
    regions:
      - name: RegionOne
        provider: openstack
        city: Walldorf
        location: {lat: 49.29, lon: 8.64}
        country: DE
        jurisdiction: eu
    profiles:
      - id: window
        schedule:
          between: {start: "2026-12-04T18:00:00Z", end: "2026-12-07T06:00:00Z"}
          activePeriod: {startCron: "0 22 * * 6", timezone: Europe/Berlin, duration: 6h}
        profile:
          candidateDeterminationStrategy: Scored
          priorities:
            - name: ShootCount
              weight: 1
          filters:
            - name: Residency
              args: {groups: [{name: eu}]}
      - id: frozen
        freeze: true
"#;

/// Leaf paths, list items written `[i]`; `args` belong to each priority's own documentation.
fn leaf_paths(v: &Value, prefix: &str, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(map) if !map.is_empty() => {
            for (k, child) in map {
                if k == "args" {
                    continue;
                }
                let path = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                leaf_paths(child, &path, out);
            }
        }
        Value::Array(items) if items.iter().any(Value::is_object) => {
            for item in items {
                leaf_paths(item, &format!("{prefix}[i]"), out);
            }
        }
        _ => {
            out.insert(prefix.to_string());
        }
    }
}

#[test]
fn every_configuration_key_is_in_the_reference() {
    let cfg = load_str(EVERY_KEY)
        .expect("the example sets valid values")
        .config;
    let mut paths = BTreeSet::new();
    leaf_paths(&serde_json::to_value(&cfg).unwrap(), "", &mut paths);
    assert!(paths.contains("schedulers.shoot.profiles[i].schedule.activePeriod.timezone"));

    let doc = reference();
    let missing: Vec<_> = paths
        .iter()
        .map(|p| {
            // A profile's priorities and filters share the schema of schedulers.shoot's.
            let list = [".profile.priorities", ".profile.filters"]
                .iter()
                .find_map(|l| p.find(l).map(|at| at + l.len()));
            match list {
                Some(end) => p[..end].to_string(),
                None => p.clone(),
            }
        })
        .filter(|p| !doc.contains(&format!("`{p}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/usage/configuration.md does not describe {missing:#?}"
    );
}

#[test]
fn every_registered_priority_is_listed_with_where_its_args_are_documented() {
    let doc = reference();
    for name in gardener_scheduler::priorities::names() {
        let row = doc
            .lines()
            .find(|l| l.starts_with(&format!("| `{name}` |")))
            .unwrap_or_else(|| panic!("configuration.md lists no row for priority {name}"));
        let link = row
            .split("](../")
            .nth(1)
            .and_then(|rest| rest.split(')').next())
            .unwrap_or_else(|| panic!("the row of {name} links to no concept doc: {row}"));
        let (file, anchor) = link.split_once('#').expect("the link names a section");
        assert_eq!(anchor, name.to_lowercase(), "{row}");
        let concept = read(&format!("docs/{file}"));
        assert!(
            concept.lines().any(|l| l.trim() == format!("### {name}")),
            "docs/{file} has no section ### {name}"
        );
    }
}

#[test]
fn every_opt_in_filter_is_listed_with_its_concept_section() {
    let doc = reference();
    let concept = read("docs/concepts/scheduler.md");
    for (name, ..) in gardener_scheduler::predicates::OPT_IN {
        let row = doc
            .lines()
            .find(|l| l.starts_with(&format!("| `{name}` |")))
            .unwrap_or_else(|| panic!("configuration.md lists no row for filter {name}"));
        assert!(
            row.contains(&format!("scheduler.md#{}", name.to_lowercase())),
            "{row}"
        );
        assert!(
            concept.lines().any(|l| l.trim() == format!("### {name}")),
            "docs/concepts/scheduler.md has no section ### {name}"
        );
    }
}

#[test]
fn every_built_in_filter_is_a_row_of_the_filtering_table() {
    let concept = read("docs/concepts/scheduler.md");
    let section = concept
        .split("\n## Filtering\n")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("docs/concepts/scheduler.md has a section ## Filtering");
    for (name, _) in gardener_scheduler::predicates::BUILT_IN {
        assert!(
            section.lines().any(
                |l| l.starts_with("| ") && l.contains(&format!(" | `{name}` ("))
                    || l.contains(&format!(" | `{name}` |"))
            ),
            "docs/concepts/scheduler.md ## Filtering has no row for the filter {name}"
        );
    }
}

#[test]
fn every_region_strategy_is_described() {
    let concept = read("docs/concepts/scheduler.md");
    let section = concept
        .split("\n## Region strategies\n")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("docs/concepts/scheduler.md has a section ## Region strategies");
    for name in gardener_scheduler::strategies::names() {
        assert!(
            section.contains(&format!("- **`{name}`**")),
            "docs/concepts/scheduler.md ## Region strategies does not describe {name}"
        );
    }
}

fn lookup<'a>(v: &'a serde_yaml_ng::Value, path: &str) -> &'a serde_yaml_ng::Value {
    path.split('.').fold(v, |v, key| &v[key])
}

#[test]
fn environment_examples_override_the_keys_the_table_names() {
    let doc = reference();
    let rows: Vec<(String, String, String)> = doc
        .lines()
        .filter(|l| l.starts_with("| `GARDENER_SCHEDULER_") || l.starts_with("| `KUBECONFIG="))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(|c| c.trim().trim_matches('`')).collect();
            let (var, value) = cells[1].split_once('=').expect("VAR=value");
            (var.to_string(), value.to_string(), cells[2].to_string())
        })
        .collect();
    assert!(rows.len() >= 5, "the environment table was not found");

    for (var, value, key) in rows {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_gardener-scheduler"));
        cmd.arg("--validate-only").env_remove("KUBECONFIG");
        for (k, _) in std::env::vars_os() {
            if k.to_string_lossy().starts_with("GARDENER_SCHEDULER_") {
                cmd.env_remove(k);
            }
        }
        let out = cmd.env(&var, &value).output().unwrap();
        assert!(
            out.status.success(),
            "{var}={value}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let loaded: serde_yaml_ng::Value = serde_yaml_ng::from_slice(&out.stdout).unwrap();
        let got = lookup(&loaded, &key);
        let matches = match got {
            serde_yaml_ng::Value::Number(n) => n.as_f64() == value.parse::<f64>().ok(),
            serde_yaml_ng::Value::Bool(b) => Some(*b) == value.parse::<bool>().ok(),
            serde_yaml_ng::Value::String(s) => *s == value,
            _ => false,
        };
        assert!(matches, "{var}={value} left {key} at {got:?}");
    }
}

/// The file a test path of the differences table points at, and whether it defines the test:
/// `module::path::name` under `src/`, `file::name` under `tests/`, `e2e::file::name` under
/// `tests/e2e/`; a path ending in `tests` names a test module.
fn test_exists(path: &str) -> bool {
    let parts: Vec<&str> = path.split("::").collect();
    let (name, modules) = parts.split_last().expect("a path");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    if modules[0] == "e2e" && modules.len() == 2 {
        files.push(root.join(format!("tests/e2e/{}.rs", modules[1])));
    } else if modules.len() == 1 && root.join(format!("tests/{}.rs", modules[0])).exists() {
        files.push(root.join(format!("tests/{}.rs", modules[0])));
    } else {
        // A module's tests live in the module's file, its `tests.rs`, or `tests/<name>.rs`.
        let without_tests: Vec<&str> = modules.iter().copied().filter(|m| *m != "tests").collect();
        let base = root.join("src").join(without_tests.join("/"));
        files.push(base.with_extension("rs"));
        files.push(base.join("tests.rs"));
        files.push(base.join("mod.rs"));
        let all = root.join("src").join(modules.join("/"));
        files.push(all.with_extension("rs"));
        if let Some((last, rest)) = modules.split_last() {
            files.push(
                root.join("src")
                    .join(rest.join("/"))
                    .join(format!("tests/{last}.rs")),
            );
        }
    }
    files.iter().any(|f| {
        std::fs::read_to_string(f).is_ok_and(|text| {
            text.contains(&format!("fn {name}("))
                || (*name == "tests" && text.contains("mod tests"))
        })
    })
}

/// Every row of "Differences from upstream" names at least one test, and every test it names
/// exists: a difference nobody pins is a difference nobody notices losing.
#[test]
fn every_difference_from_upstream_names_a_test_that_exists() {
    let concept = read("docs/concepts/scheduler.md");
    let section = concept
        .split("\n## Differences from upstream\n")
        .nth(1)
        .expect("docs/concepts/scheduler.md has a section ## Differences from upstream");
    let section = section.split("\n## ").next().unwrap();
    let mut rows = 0;
    // the tables of differences, whose header begins `| Upstream |` (other tables in the
    // section hold other figures)
    let mut in_differences = false;
    let mut previous = "";
    let mut table = Vec::new();
    for line in section.lines() {
        if line.starts_with('|') && !previous.starts_with('|') {
            in_differences = line.starts_with("| Upstream |");
        }
        if in_differences && line.starts_with("| ") {
            table.push(line);
        }
        previous = line;
    }
    for row in table {
        if row.starts_with("| Upstream |") {
            continue;
        }
        rows += 1;
        let test_cell = row.trim_end_matches('|').rsplit('|').next().unwrap();
        let paths: Vec<&str> = test_cell
            .split('`')
            .skip(1)
            .step_by(2)
            .filter(|p| p.contains("::") || p.starts_with("tests/"))
            .collect();
        assert!(!paths.is_empty(), "a row names no test: {row}");
        for p in paths {
            if let Some(file) = p.strip_prefix("tests/") {
                assert!(
                    Path::new(env!("CARGO_MANIFEST_DIR"))
                        .join("tests")
                        .join(file)
                        .exists(),
                    "{p} does not exist"
                );
            } else {
                assert!(test_exists(p), "no test {p} (row: {row})");
            }
        }
    }
    assert!(rows >= 20, "the table has {rows} rows");
}
