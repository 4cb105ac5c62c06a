//! The benchmark's own code on small inputs, so `make bench` cannot rot: the generator is
//! deterministic, the recount-per-decision baseline decides exactly like the indexed scheduler,
//! the optimum is optimal, and the generated manifests load in `simulate`.

#[allow(dead_code)]
#[path = "../benches/support/mod.rs"]
mod support;

use chrono::{DateTime, Utc};
use gardener_scheduler::priorities;
use gardener_scheduler::schedule::schedule;

use support::baseline::{self, Placed};
use support::carbon;
use support::geo;
use support::landscape::{self, Generator, GridSpec};
use support::profiles::{self, LatencyArgs, WEIGHTED};
use support::quality::{self, QSeed, QShoot, QualityLandscape, QualitySpec};
use support::report::{self, Point, Report};

fn now() -> DateTime<Utc> {
    "2026-12-01T00:00:00Z".parse().unwrap()
}

fn latency_args() -> LatencyArgs {
    LatencyArgs {
        matrix: geo::latency_matrix(&Generator::regions()),
        max_latency_ms: 300,
    }
}

#[test]
fn the_same_spec_generates_the_same_landscape_and_another_seed_a_different_one() {
    let spec = GridSpec {
        seeds: 30,
        shoots: 500,
        rng_seed: 1,
    };
    let (a, b) = (landscape::grid(spec, 50), landscape::grid(spec, 50));
    assert_eq!(a.seed_names, b.seed_names);
    assert_eq!(
        serde_json::to_string(&a.pending).unwrap(),
        serde_json::to_string(&b.pending).unwrap()
    );
    for name in &a.seed_names {
        assert_eq!(
            a.snapshot.usage().shoots_on(name),
            b.snapshot.usage().shoots_on(name),
            "{name}"
        );
    }
    // Another number of existing shoots keeps the seeds and what the pending shoots ask for.
    let d = landscape::grid(
        GridSpec {
            shoots: 900,
            ..spec
        },
        50,
    );
    assert_eq!(a.seed_names, d.seed_names);
    let asks = |g: &landscape::Grid| -> Vec<_> {
        g.pending
            .iter()
            .map(|s| {
                (
                    s.spec.region.clone(),
                    s.spec.provider.clone(),
                    s.spec.tolerations.clone(),
                )
            })
            .collect()
    };
    assert_eq!(asks(&a), asks(&d));
    let c = landscape::grid(
        GridSpec {
            rng_seed: 2,
            ..spec
        },
        50,
    );
    assert_ne!(
        serde_json::to_string(&a.pending).unwrap(),
        serde_json::to_string(&c.pending).unwrap()
    );
}

#[test]
fn generated_landscapes_have_every_provider_and_respect_the_seed_count() {
    let g = landscape::grid(
        GridSpec {
            seeds: 100,
            shoots: 2_000,
            rng_seed: 3,
        },
        10,
    );
    assert_eq!(g.snapshot.seeds().len(), 100);
    assert_eq!(g.snapshot.usage().placed_shoots(), 2_000);
    for (provider, _) in landscape::PROVIDERS {
        assert!(
            g.snapshot.seeds().any(|s| s.provider == provider),
            "{provider}"
        );
    }
    let regions: std::collections::BTreeSet<_> =
        g.snapshot.seeds().map(|s| s.region.clone()).collect();
    assert!(regions.len() > 10, "seeds spread over regions: {regions:?}");
    assert!(g.snapshot.seeds().any(|s| !s.taints.is_empty()));
    assert!(g.snapshot.seeds().any(|s| s.allocatable_shoots().is_some()));
}

#[test]
fn recounting_every_shoot_gives_the_incremental_index() {
    let g = landscape::grid(
        GridSpec {
            seeds: 40,
            shoots: 3_000,
            rng_seed: 4,
        },
        0,
    );
    let recounted = baseline::recount(&g.placed, &g.seed_names);
    assert_eq!(
        recounted.placed_shoots(),
        g.snapshot.usage().placed_shoots()
    );
    for name in &g.seed_names {
        assert_eq!(
            recounted.seed(name),
            g.snapshot.usage().seed(name),
            "{name}"
        );
    }
}

#[test]
fn baseline_and_indexed_scheduler_choose_the_same_seeds_along_a_stream_of_bindings() {
    let seed_index = |names: &[String], n: &str| names.iter().position(|s| s == n).unwrap() as u32;
    for built in [
        profiles::weighted("w", "Scored", &latency_args()),
        profiles::upstream("SameRegion"),
    ] {
        let spec = GridSpec {
            seeds: 60,
            shoots: 3_000,
            rng_seed: 5,
        };
        let mut g = landscape::grid(spec, 200);
        let mut placed = 0;
        for shoot in g.pending.clone() {
            let ours = schedule(&shoot, &g.snapshot, &built.profile, now()).map(|d| d.seed);
            let base = baseline::decide(
                &shoot,
                &mut g.snapshot,
                &g.placed,
                &g.seed_names,
                &built.profile,
                now(),
            )
            .map(|d| d.seed);
            let name = shoot.metadata.name.as_deref().unwrap();
            assert_eq!(
                ours.as_ref().ok(),
                base.as_ref().ok(),
                "{}: {name}",
                built.describe()
            );
            if let Ok(seed) = ours {
                let mut bound = shoot.clone();
                bound.spec.seed_name = Some(seed.clone());
                g.snapshot.upsert_shoot(&bound);
                g.placed
                    .push(Placed::of(&bound, seed_index(&g.seed_names, &seed)));
                placed += 1;
            }
        }
        assert!(
            placed > 80,
            "{}: only {placed}/200 placed",
            built.describe()
        );
    }
}

#[test]
fn weighted_profile_contains_exactly_the_registered_priorities_it_wants() {
    let built = profiles::weighted("w", "Scored", &latency_args());
    let registered = priorities::names();
    for w in WEIGHTED {
        let included = built.has(w.name);
        let missing = built.not_registered.iter().any(|n| n == w.name);
        let rejected = built.rejected.iter().any(|(n, _)| n == w.name);
        assert_eq!(
            included as u8 + missing as u8 + rejected as u8,
            1,
            "{}",
            w.name
        );
        assert_eq!(missing, !registered.contains(&w.name), "{}", w.name);
    }
    assert_eq!(built.profile.priorities.len(), built.included.len());
    assert!(
        built
            .config
            .contains("candidateDeterminationStrategy: Scored"),
        "{}",
        built.config
    );
}

#[test]
fn latency_model_follows_great_circle_distance() {
    let fra = geo::location_of("eu-central-1").unwrap();
    let dub = geo::location_of("eu-west-1").unwrap();
    let km = geo::great_circle_km(fra, dub);
    assert!((1_070.0..1_110.0).contains(&km), "Frankfurt-Dublin {km} km");
    let ms = geo::rtt_ms(fra, dub);
    assert!((km * 0.015 + 2.0 - ms).abs() < 1e-9);
    assert_eq!(
        geo::region_rtt_ms("eu-central-1", "europe-west3"),
        Some(2.0),
        "same metro, other provider"
    );
    assert_eq!(
        geo::region_rtt_ms("us-east-1", "ap-southeast-2"),
        geo::region_rtt_ms("ap-southeast-2", "us-east-1")
    );
    let syd_virginia = geo::region_rtt_ms("us-east-1", "ap-southeast-2").unwrap();
    assert!((230.0..270.0).contains(&syd_virginia), "{syd_virginia}");
    assert_eq!(geo::LOCATIONS.len(), 27);
}

fn tiny_landscape() -> QualityLandscape {
    let seed = |name: &str, region, capacity| QSeed {
        name: name.into(),
        region,
        capacity,
    };
    let shoot = |i: usize, region| QShoot {
        project: i % 2,
        name: format!("q{i}"),
        region,
    };
    QualityLandscape {
        spec: QualitySpec {
            shoots: 5,
            projects: 2,
            load: 1.0,
            zipf: 1.0,
            home_share: 1.0,
            rng_seed: 0,
        },
        seeds: vec![
            seed("fra", "eu-central-1", 2),
            seed("dub", "eu-west-1", 1),
            seed("iad", "us-east-1", 2),
        ],
        shoots: vec![
            shoot(0, "eu-central-1"),
            shoot(1, "eu-central-1"),
            shoot(2, "eu-west-2"),
            shoot(3, "eu-central-1"),
            shoot(4, "us-east-2"),
        ],
    }
}

fn brute_force_total(land: &QualityLandscape) -> f64 {
    fn go(land: &QualityLandscape, i: usize, left: &mut Vec<u32>) -> f64 {
        if i == land.shoots.len() {
            return 0.0;
        }
        let mut best = f64::INFINITY;
        for s in 0..land.seeds.len() {
            if left[s] > 0 {
                left[s] -= 1;
                let ms = geo::region_rtt_ms(land.shoots[i].region, land.seeds[s].region).unwrap();
                best = best.min(ms + go(land, i + 1, left));
                left[s] += 1;
            }
        }
        best
    }
    go(
        land,
        0,
        &mut land.seeds.iter().map(|s| s.capacity).collect(),
    )
}

#[test]
fn optimum_matches_brute_force_on_a_tiny_landscape() {
    let land = tiny_landscape();
    let opt = quality::optimum(&land);
    let total: f64 = opt.latencies.iter().sum();
    assert!(
        (total - brute_force_total(&land)).abs() < 0.01,
        "{total} vs {}",
        brute_force_total(&land)
    );
    assert!(opt.utilisation.iter().all(|u| *u <= 1.0));
    // Frankfurt holds two of the three eu-central-1 shoots; the third goes to Dublin.
    assert_eq!(opt.placement.iter().filter(|p| **p == Some(0)).count(), 2);
}

#[test]
fn strategies_respect_capacity_and_no_strategy_beats_the_optimum_when_all_are_placed() {
    let spec = QualitySpec {
        shoots: 150,
        projects: 20,
        load: 0.87,
        zipf: 1.0,
        home_share: 0.8,
        rng_seed: 9,
    };
    let land = quality::landscape(spec);
    let opt = quality::optimum(&land);
    let same_region = quality::run(
        &land,
        "SameRegion",
        &profiles::upstream("SameRegion"),
        now(),
    );
    assert!(
        same_region.latencies.iter().all(|l| *l == 2.0),
        "SameRegion places in the shoot's region only"
    );
    assert!(
        same_region.unschedulable > 0,
        "demand in the busiest regions exceeds their capacity"
    );
    let runs = [
        same_region,
        quality::run(
            &land,
            "MinimalDistance",
            &profiles::upstream("MinimalDistance"),
            now(),
        ),
        quality::run(
            &land,
            "RegionPrefix",
            &profiles::upstream("RegionPrefix"),
            now(),
        ),
        quality::run(
            &land,
            "Scored",
            &profiles::weighted("w", "Scored", &latency_args()),
            now(),
        ),
        quality::run(
            &land,
            "Scored, capacity-aware",
            &profiles::scored("c", "Scored", &profiles::capacity_aware(), &latency_args()),
            now(),
        ),
        quality::run(
            &land,
            "Scored, capacity-aware + spreading",
            &profiles::scored(
                "cs",
                "Scored",
                &profiles::capacity_aware_spread(),
                &latency_args(),
            ),
            now(),
        ),
    ];
    for r in &runs {
        assert_eq!(
            r.latencies.len() + r.unschedulable,
            spec.shoots,
            "{}",
            r.label
        );
        assert!(
            r.utilisation.iter().all(|u| *u <= 1.0),
            "{}: over capacity",
            r.label
        );
        if r.unschedulable == 0 {
            assert!(
                r.mean_latency() >= opt.mean_latency() - 1e-9,
                "{} beats the optimum",
                r.label
            );
        }
        let (flagged, multi) = r.needless_colocation.unwrap();
        assert!(flagged <= multi);
    }
}

#[test]
fn report_numbers_sections_and_the_chart_has_a_point_per_strategy() {
    let mut r = Report {
        header: "# T\n".into(),
        ..Default::default()
    };
    r.push(
        "First",
        report::table(&[vec!["a".into(), "b".into()], vec!["1".into(), "2".into()]]),
    );
    r.push("Second", "text");
    let text = r.render();
    assert!(
        text.contains("## 1. First\n\n| a | b |\n| --- | --- |\n| 1 | 2 |"),
        "{text}"
    );
    assert!(text.contains("## 2. Second"), "{text}");
    let svg = report::svg_chart(
        "t",
        "x",
        "y",
        &[
            Point {
                label: "A<B".into(),
                x: 0.1,
                y: 40.0,
            },
            Point {
                label: "C".into(),
                x: 0.2,
                y: 20.0,
            },
        ],
    );
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    assert_eq!(
        svg.matches("<circle").count(),
        4,
        "a dot and a legend dot per point"
    );
    assert!(svg.contains("A&lt;B"));
}

#[test]
fn generated_manifests_load_and_schedule_in_the_simulate_binary() {
    let dir = std::env::temp_dir().join(format!("bench-smoke-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let weighted = profiles::weighted("w", "Scored", &latency_args());
    let run = support::memory::simulate_rss(&dir, &weighted.config, 20, 300, 30);
    let placed: usize = run.summary.split('/').next().unwrap().parse().unwrap_or(0);
    assert!(
        run.summary.contains("/30 pending shoots scheduled"),
        "{}",
        run.summary
    );
    assert!(placed > 0, "{}", run.summary);
    assert!(run.peak_rss_kib > 0);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn nearest_rank_percentiles_and_counts() {
    use support::stats::{fmt_count, percentile};
    let xs: Vec<u32> = (1..=100).collect();
    assert_eq!(percentile(&xs, 50.0), Some(50));
    assert_eq!(percentile(&xs, 99.0), Some(99));
    assert_eq!(percentile(&xs, 100.0), Some(100));
    assert_eq!(percentile(&[7u32], 99.0), Some(7));
    assert_eq!(percentile::<u32>(&[], 50.0), None);
    assert_eq!(fmt_count(999), "999");
    assert_eq!(fmt_count(1_000_000), "1,000,000");
}

#[test]
fn the_carbon_section_places_the_example_landscape_and_a_carbon_weight_lowers_the_mean_intensity() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let inputs = carbon::inputs(root);
    assert!(inputs.range.0 <= inputs.now && inputs.now < inputs.range.1);
    let without = carbon::run(&inputs, 0);
    let heavy = carbon::run(&inputs, 10);
    for r in [&without, &heavy] {
        assert!(r.pending > 0, "{r:?}");
        assert!(r.placed > 0 && r.placed <= r.pending, "{r:?}");
        assert!(r.neutral < r.placed, "{r:?}");
        assert!(
            r.mean_intensity.is_finite() && r.mean_latency_ms.is_finite(),
            "{r:?}"
        );
    }
    // CarbonIntensity is a preference, never a filter: the same shoots find a seed.
    assert_eq!(heavy.placed, without.placed);
    assert!(
        heavy.mean_intensity < without.mean_intensity,
        "weight 10 {heavy:?} vs without {without:?}"
    );
}

/// `docs/performance.md` has every block the benchmarks write, and writing one block changes
/// that block alone: a bench run keeps the sections other runs wrote.
#[test]
fn a_bench_run_rewrites_its_own_blocks_of_the_performance_page_and_nothing_else() {
    let page = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/performance.md");
    let original = std::fs::read_to_string(&page).unwrap();
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bench-doc");
    std::fs::create_dir_all(&dir).unwrap();
    for (key, _) in report::DOC_BLOCKS {
        let begin = original
            .find(&format!("<!-- begin generated: {key} "))
            .unwrap_or_else(|| panic!("docs/performance.md lacks the block {key}"));
        let begin = begin + original[begin..].find('\n').unwrap() + 1;
        let end = original
            .find(&format!("<!-- end generated: {key} -->"))
            .unwrap_or_else(|| panic!("docs/performance.md lacks the end of the block {key}"));
        assert!(begin <= end, "{key}: the block ends before it begins");
        let copy = dir.join(format!("{key}.md"));
        std::fs::write(&copy, &original).unwrap();
        report::write_block(&copy, key, "| new | figures |").unwrap();
        let written = std::fs::read_to_string(&copy).unwrap();
        assert_eq!(
            written,
            format!(
                "{}\n| new | figures |\n\n{}",
                &original[..begin],
                &original[end..]
            ),
            "{key}"
        );
    }
    // A page without the block is left as it is, and the error names the block.
    let copy = dir.join("missing.md");
    std::fs::write(&copy, "# Page\n\ntext\n").unwrap();
    let err = report::write_block(&copy, "latency", "x").unwrap_err();
    assert!(err.contains("'latency'"), "{err}");
    assert_eq!(std::fs::read_to_string(&copy).unwrap(), "# Page\n\ntext\n");
}
