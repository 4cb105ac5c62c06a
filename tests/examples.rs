//! Everything under example/ and config/ that people copy must load.

use std::path::Path;

use gardener_scheduler::compile::load_str;
use gardener_scheduler::simulate::Landscape;
use gardener_scheduler::snapshot::RegionConfig;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn example_component_configs_are_valid() {
    let mut seen = 0;
    for entry in std::fs::read_dir(root().join("example")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if name.contains("componentconfig") {
            let text = std::fs::read_to_string(&path).unwrap();
            load_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
            seen += 1;
        }
    }
    assert!(seen >= 1, "no component config examples found");
}

#[test]
fn example_region_configmaps_have_no_malformed_rows() {
    let mut landscape = Landscape::default();
    for f in [
        "example/31-scheduler-region-configmap.yaml",
        "example/landscape/30-region-config.yaml",
    ] {
        let text = std::fs::read_to_string(root().join(f)).unwrap();
        landscape.add_text(Path::new(f), &text).unwrap();
    }
    assert_eq!(landscape.config_maps.len(), 2);
    for cm in &landscape.config_maps {
        let rc = RegionConfig::from_config_map(cm).expect("labelled region config in garden");
        assert!(!rc.cloud_profiles.is_empty());
        for (region, row) in &rc.rows {
            assert!(row.is_ok(), "{}: {region}: {row:?}", rc.name);
        }
    }
}

#[test]
fn example_landscape_has_the_documented_shape() {
    let l = Landscape::load(&[root().join("example/landscape")]).unwrap();
    let providers: std::collections::BTreeSet<_> = l
        .seeds
        .iter()
        .filter_map(|s| s.spec.provider.as_ref().map(|p| p.type_.clone()))
        .collect();
    let regions: std::collections::BTreeSet<_> = l
        .seeds
        .iter()
        .filter_map(|s| s.spec.provider.as_ref().map(|p| p.region.clone()))
        .collect();
    let projects: std::collections::BTreeSet<_> = l
        .shoots
        .iter()
        .filter_map(|s| s.metadata.namespace.clone())
        .collect();
    assert!(providers.len() >= 3, "{providers:?}");
    assert!(regions.len() >= 12, "{regions:?}");
    assert!(l.seeds.len() >= 20);
    assert!(l.shoots.len() >= 60);
    assert!(projects.len() >= 4, "{projects:?}");
}
