//! Adding a filter touches its own file and its lines in `src/predicates/mod.rs` (its `mod`
//! line and its registry line), nothing else (docs/development/architecture.md, "Adding a
//! filter"): `TestLabel`, the walkthrough's example (its reason, the per-seed index its fast
//! answer reads, its example arguments and its tests in its file), is named nowhere else in the
//! code, and the fast-path generator builds every registered filter from the registry.

use std::fs;
use std::path::{Path, PathBuf};

use gardener_scheduler::config::FilterConfig;
use gardener_scheduler::predicates;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every line of the project's Rust code (src, tests, benches) naming one of `words`, but for
/// the files under `own` and this test, as `file: text`.
fn lines_naming(words: &[&str], own: &[&str]) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["src", "tests", "benches"] {
        rust_files(&root.join(dir), &mut files);
    }
    let mut found = Vec::new();
    for file in files {
        let rel = file
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if rel == "tests/plugin_files.rs" || own.iter().any(|o| rel.starts_with(o)) {
            continue;
        }
        let text = fs::read_to_string(&file).unwrap();
        for line in text.lines() {
            if words.iter().any(|w| line.contains(w)) {
                found.push(format!("{rel}: {}", line.trim()));
            }
        }
    }
    found
}

#[test]
fn the_example_filter_is_named_only_in_its_file_and_its_two_registry_lines() {
    let found = lines_naming(
        &["test_label", "TestLabel", "labelKeys", "\"unlabelled\""],
        &["src/predicates/test_label"],
    );
    assert_eq!(
        found,
        [
            "src/predicates/mod.rs: mod test_label;",
            "src/predicates/mod.rs: (test_label::NAME, test_label::build, test_label::EXAMPLE),",
        ],
        "adding a filter must need nothing outside its file but its `mod` and registry lines"
    );
}

/// The fast-path generator takes the filters from the registry: it names none of them.
#[test]
fn the_fast_path_generator_names_no_filter() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let generator = fs::read_to_string(root.join("tests/fast_path.rs")).unwrap();
    let named: Vec<&str> = predicates::configurable()
        .map(|(name, _)| name)
        .filter(|name| generator.contains(name))
        .collect();
    assert!(named.is_empty(), "tests/fast_path.rs names {named:?}");
    assert!(
        predicates::configurable().any(|(name, _)| name == "TestLabel"),
        "the example filter is registered"
    );
}

/// Every registered filter builds with the example arguments it declares.
#[test]
fn every_registered_filter_builds_with_its_example_arguments() {
    for (name, example) in predicates::configurable() {
        let args: serde_json::Value = serde_yaml_ng::from_str(example)
            .unwrap_or_else(|e| panic!("{name}'s example {example:?}: {e}"));
        let config = [FilterConfig {
            name: name.into(),
            args,
        }];
        let built = predicates::build_filters(&config, "filters");
        assert!(built.is_ok(), "{name}: {:?}", built.err());
    }
}

/// Adding a priority touches its own file and its lines in `src/priorities/mod.rs` (its `mod`
/// line and its registry entry), nothing else: `TestPreferLabel`, the walkthrough's example, is
/// named nowhere else in the code, and the test generators take it from the registry.
#[test]
fn the_example_priority_is_named_only_in_its_file_and_its_registry_lines() {
    let found = lines_naming(
        &["test_prefer_label", "TestPreferLabel"],
        &["src/priorities/test_prefer_label"],
    );
    let outside: Vec<&String> = found
        .iter()
        .filter(|line| {
            let Some(code) = line.strip_prefix("src/priorities/mod.rs: ") else {
                return true;
            };
            let registry_item = ["NAME", "build", "EXAMPLE"].iter().any(|item| {
                code.trim_matches(|c| "(),".contains(c)) == format!("test_prefer_label::{item}")
            });
            !(code == "mod test_prefer_label;" || registry_item || code.starts_with("(test_prefer_label::NAME, test_prefer_label::build, test_prefer_label::EXAMPLE)"))
        })
        .collect();
    assert!(
        outside.is_empty() && found.iter().any(|l| l.ends_with("mod test_prefer_label;")),
        "adding a priority must need nothing outside its file but its `mod` and registry lines: {found:#?}"
    );
    assert!(
        gardener_scheduler::priorities::configurable().any(|(name, _)| name == "TestPreferLabel"),
        "the example priority is registered"
    );
}
