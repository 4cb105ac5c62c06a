//! The committed CRDs in config/crd/ match what `gardener_scheduler::crds::render()` produces.
//! Regenerate with `make crds` (`UPDATE_CRDS=1 cargo test --test crds`).

use std::collections::BTreeSet;
use std::path::PathBuf;

#[test]
fn committed_crds_match_the_rendered_ones() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("config/crd");
    let rendered = gardener_scheduler::crds::render();
    if std::env::var_os("UPDATE_CRDS").is_some() {
        std::fs::create_dir_all(&dir).unwrap();
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "yaml") {
                std::fs::remove_file(path).unwrap();
            }
        }
        for (file, yaml) in &rendered {
            std::fs::write(dir.join(file), yaml).unwrap();
        }
    }
    let mut problems = Vec::new();
    for (file, yaml) in &rendered {
        match std::fs::read_to_string(dir.join(file)) {
            Ok(committed) if committed == *yaml => {}
            Ok(_) => problems.push(format!("{file} differs")),
            Err(e) => problems.push(format!("{file}: {e}")),
        }
    }
    let expected: BTreeSet<&str> = rendered.iter().map(|(f, _)| f.as_str()).collect();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().to_string();
        if name.ends_with(".yaml") && !expected.contains(name.as_str()) {
            problems.push(format!("{name} is not rendered by crds::render()"));
        }
    }
    assert!(
        problems.is_empty(),
        "config/crd/ is out of date ({}); run `make crds`",
        problems.join(", ")
    );
}
