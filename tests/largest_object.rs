//! The largest object gardener-apiserver accepts, through every parser the scheduler process and
//! the commands run on one object or one file: 256 KiB of annotations over many keys (38,000
//! scheduling gates among them), labels at their length limits, about 1.5 MiB in all.
//!
//! Each parser must give the right outcome (parsed, or an error naming the field) and do work
//! linear in the input. Work is counted, not timed: the allocations and bytes allocated on the
//! parsing thread, which do not move with the machine's load. Each parser reads the object at
//! half its largest size and at its largest; twice the input may cost at most 2.5 times the work
//! (sorting by key adds a logarithm), where a quadratic parser costs four times. Allocation
//! counts cannot see a quadratic loop that allocates nothing (comparing each seed taint with
//! every earlier one was such a loop): the CPU time of the same objects is the `inputs` section
//! of `make bench`, where such a loop shows as a row far slower than its size.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::Path;

use gardener_scheduler::api::{
    ANNOTATION_DECISION, ANNOTATION_GATES, CloudProfile, ConfigMap, Gates, NamespacedCloudProfile,
    Project, Seed, Shoot,
};
use gardener_scheduler::controller::{
    Cache, OtherUpdate, PendingShoot, Sent, ShootUpdate, WatchedShoot,
};
use kube::api::DynamicObject;

#[path = "support/largest.rs"]
mod largest;
use largest::*;
use serde_json::{Value, json};

/// Counts the allocations of the thread that makes them, so that tests running beside each
/// other do not add to each other's counts.
struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
    static BYTES: Cell<u64> = const { Cell::new(0) };
}

fn note(bytes: usize) {
    // `try_with`: a thread being torn down no longer has its counters.
    let _ = ALLOCATIONS.try_with(|a| a.set(a.get() + 1));
    let _ = BYTES.try_with(|b| b.set(b.get() + bytes as u64));
}

// SAFETY: every call is passed on unchanged to the system allocator; only counters are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: the caller's contract for `alloc` is the system allocator's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from this allocator, that is from the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        // SAFETY: as for `dealloc`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// The work one call did on this thread.
#[derive(Clone, Copy, Debug)]
struct Work {
    allocations: u64,
    bytes: u64,
}

fn counted<T>(f: impl FnOnce() -> T) -> (T, Work) {
    let (a, b) = (ALLOCATIONS.with(Cell::get), BYTES.with(Cell::get));
    let out = f();
    let work = Work {
        allocations: ALLOCATIONS.with(Cell::get) - a,
        bytes: BYTES.with(Cell::get) - b,
    };
    (out, work)
}

/// Runs `parse` on the input at half its largest size and at its largest, checks each outcome,
/// and checks that the work at most about doubled.
fn linear<I, T>(
    what: &str,
    input: impl Fn(usize) -> I,
    parse: impl Fn(&I) -> T,
    check: impl Fn(&T),
) {
    let (half, full) = (input(1), input(2));
    let (out_half, w_half) = counted(|| parse(&half));
    check(&out_half);
    let (out_full, w_full) = counted(|| parse(&full));
    check(&out_full);
    let grew = |h: u64, f: u64, slack: u64| f <= h * 5 / 2 + slack;
    assert!(
        grew(w_half.allocations, w_full.allocations, 64)
            && grew(w_half.bytes, w_full.bytes, 64 * 1024),
        "{what}: work grew faster than the input: half {w_half:?}, largest {w_full:?}"
    );
    assert!(
        w_full.allocations > 0,
        "{what}: nothing counted, the measure would not see a regression"
    );
}

#[test]
fn the_largest_object_is_within_the_api_servers_limits() {
    let shoot: Value = serde_json::from_str(&shoot_json(2, &[])).unwrap();
    let annotations: usize = shoot["metadata"]["annotations"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| k.len() + v.as_str().unwrap().len())
        .sum();
    assert!(
        (ANNOTATION_LIMIT - 1024..=ANNOTATION_LIMIT).contains(&annotations),
        "{annotations}"
    );
    let listed = shoot["metadata"]["annotations"][ANNOTATION_GATES]
        .as_str()
        .unwrap()
        .split(',')
        .count();
    assert_eq!(listed, 38_000);
    for (what, size) in [
        ("shoot", shoot_json(2, &[]).len()),
        ("seed", seed_json(2).len()),
        ("cloud profile", cloud_profile_json(2).len()),
        (
            "region ConfigMap",
            serde_json::to_string(&region_config_map(2)).unwrap().len(),
        ),
    ] {
        assert!(
            (OBJECT_LIMIT * 3 / 4..=OBJECT_LIMIT).contains(&size),
            "{what}: {size} bytes"
        );
    }
}

// ---- the scheduler process: decoding, the cache, gates, region ConfigMaps

#[test]
fn the_process_decodes_each_kind_of_the_largest_object_in_linear_work() {
    linear(
        "Shoot from a watch",
        |s| shoot_json(s, &[]),
        |raw| {
            (
                WatchedShoot::from_raw(raw),
                serde_json::from_str::<Shoot>(raw),
            )
        },
        |(watched, typed)| {
            let typed = typed.as_ref().expect("the largest shoot decodes");
            assert!(
                typed.spec.provider.as_ref().map_or(0, |p| p.workers.len()) >= 2_600,
                "{:?}",
                typed.spec.provider.as_ref().map_or(0, |p| p.workers.len())
            );
            assert!(!format!("{watched:?}").contains("error: Some"));
        },
    );
    linear(
        "Seed",
        seed_json,
        |raw| decode::<Seed>(raw),
        |s| {
            let s = s.as_ref().expect("the largest seed decodes");
            assert!(s.spec.taints.len() >= 6_000);
        },
    );
    let decoded = |r: &Result<_, String>| assert!(r.is_ok(), "{:?}", r.as_ref().err());
    linear(
        "CloudProfile",
        cloud_profile_json,
        |raw| decode::<CloudProfile>(raw).map(|_| ()),
        decoded,
    );
    linear(
        "NamespacedCloudProfile",
        namespaced_cloud_profile_json,
        |raw| decode::<NamespacedCloudProfile>(raw).map(|_| ()),
        decoded,
    );
    linear(
        "Project",
        project_json,
        |raw| decode::<Project>(raw).map(|_| ()),
        decoded,
    );
    linear(
        "ConfigMap",
        |s| serde_json::to_string(&region_config_map(s)).unwrap(),
        |raw| decode::<ConfigMap>(raw).map(|_| ()),
        decoded,
    );
}

/// An object of a kind the process watches untyped, decoded as the watch decodes it.
fn decode<K: serde::de::DeserializeOwned>(raw: &str) -> Result<K, String> {
    let object: DynamicObject = serde_json::from_str(raw).map_err(|e| e.to_string())?;
    gardener_scheduler::controller::decode(object)
}

fn names() -> Vec<String> {
    vec!["default-scheduler".into()]
}

#[test]
fn the_cache_prepares_the_largest_shoot_outside_its_lock_and_tells_a_relabelling_from_a_change() {
    let shoot = |scale: usize, note: &str| {
        let raw = shoot_json(scale, &[("example.com/edited", note.to_string())]);
        let typed: Shoot = serde_json::from_str(&raw).unwrap();
        (typed, raw)
    };
    // Prepared outside the lock: the JSON kept, the gates parsed.
    linear(
        "a shoot prepared for the cache",
        |s| shoot(s, "a"),
        |(typed, raw)| {
            let update = ShootUpdate::new(typed, Some(Sent::Text(raw)), &names());
            let mut cache = Cache::new(names());
            (
                cache.apply_shoot_update(update).enqueue,
                cache.pending_with_gates("garden-dev/largest"),
            )
        },
        |(enqueued, pending)| {
            assert!(enqueued);
            let (_, gates) = pending.as_ref().expect("pending");
            assert!(matches!(&**gates, Gates::Closed(g) if g.len() >= 19_000));
        },
    );
    // Under the lock only what was prepared is stored: its work does not grow with the object.
    let under_lock = |scale: usize| {
        let (typed, raw) = shoot(scale, "a");
        let mut cache = Cache::new(names());
        let update = ShootUpdate::new(&typed, Some(Sent::Text(&raw)), &names());
        counted(|| cache.apply_shoot_update(update)).1
    };
    let (half, full) = (under_lock(1), under_lock(2));
    assert!(
        full.allocations <= half.allocations + 8 && full.bytes <= half.bytes + 4096,
        "work under the cache's lock grew with the object: half {half:?}, largest {full:?}"
    );
    // The relevance check: a new annotation value is no reason to decide again; a gate less is.
    linear(
        "the relevance check of a new version",
        |s| {
            let (old, _) = shoot(s, "a");
            let (relabelled, _) = shoot(s, "b");
            let mut ungated = relabelled.clone();
            let a = ungated.metadata.annotations.as_mut().unwrap();
            let g = a.get_mut(ANNOTATION_GATES).unwrap();
            let cut = g.rfind(',').unwrap();
            g.truncate(cut);
            (old, relabelled, ungated)
        },
        |(old, relabelled, ungated)| {
            let mut cache = Cache::new(names());
            cache.apply_shoot(old);
            let mut relabelled = relabelled.clone();
            relabelled.metadata.resource_version = Some("101".into());
            let mut ungated = ungated.clone();
            ungated.metadata.resource_version = Some("102".into());
            (
                cache.apply_shoot(&relabelled).enqueue,
                cache.apply_shoot(&ungated).enqueue,
            )
        },
        |&(relabelled, ungated)| {
            assert!(!relabelled, "an unrelated annotation enqueued the shoot");
            assert!(ungated, "a gate removed did not enqueue the shoot");
        },
    );
    // The compact form a decision reads keeps the gates, not the other annotations.
    let (typed, _) = shoot(2, "a");
    let p = PendingShoot::new(&typed);
    let kept = p.shoot.metadata.annotations.as_ref().unwrap();
    assert_eq!(kept.len(), 1, "{:?}", kept.keys().collect::<Vec<_>>());
}

#[test]
fn scheduling_gates_names_and_labels_of_the_largest_object_are_checked_in_linear_work() {
    linear(
        "scheduling gates",
        gates,
        |v| Gates::parse(v),
        |g| {
            assert!(matches!(g, Gates::Closed(l) if l.len() >= 19_000), "{g:?}");
        },
    );
    linear(
        "a repeated gate at the end",
        |s| format!("{},aaa", gates(s)),
        |v| Gates::parse(v),
        |g| {
            assert!(
                matches!(g, Gates::Malformed(m) if m.contains("repeats gate \"aaa\"")),
                "{g:?}"
            );
        },
    );
    // Each key and value is checked in one pass, its length capped first; a well-formed set
    // costs no allocation at all, whatever its size, so no per-label copy can creep in.
    for scale in [1, 2] {
        let l = labels(scale);
        let (r, w) = counted(|| gardener_scheduler::names::labels("metadata.labels", &l));
        assert_eq!(r, Ok(()));
        assert_eq!(w.allocations, 0, "checking {} labels allocated", l.len());
    }
    linear(
        "labels with one too long at the end",
        |s| {
            let mut l = labels(s);
            l.insert("zz".into(), "v".repeat(64));
            l
        },
        |l| gardener_scheduler::names::labels("metadata.labels", l),
        |r| {
            let e = r.as_ref().unwrap_err();
            assert!(e.starts_with("metadata.labels.zz: "), "{e}");
        },
    );
    // Quantities: a value of 750 KiB of digits is a number too large, named as such.
    linear(
        "a quantity of many digits",
        |s| format!("{}Mi", "9".repeat(384 * 1024 * s)),
        |q| gardener_scheduler::quantity::parse_quantity(q),
        |r| {
            assert!(
                r.is_ok() || r.as_ref().unwrap_err().contains("9999"),
                "{:?}",
                r.as_ref().err().map(|e| &e[..e.len().min(200)])
            )
        },
    );
}

#[test]
fn the_cache_applies_the_other_kinds_of_the_largest_object_in_linear_work() {
    // The seed read for decisions: usable as it is; a taint repeated after 13,000 others is
    // found and named (each taint once against the pairs seen, not against every earlier one).
    linear(
        "a seed read for decisions",
        |s| serde_json::from_str::<Seed>(&seed_json(s)).unwrap(),
        gardener_scheduler::snapshot::SeedInfo::from_seed,
        |info| {
            assert!(info.usable.is_ok(), "{:?}", info.usable);
            assert!(info.taints.len() >= 6_500);
        },
    );
    let mut seed: Seed = serde_json::from_str(&seed_json(2)).unwrap();
    let first = seed.spec.taints[0].clone();
    seed.spec.taints.push(first);
    let info = gardener_scheduler::snapshot::SeedInfo::from_seed(&seed);
    let why = format!("{:?}", info.usable.unwrap_err());
    assert!(
        why.contains("spec.taints[13000]") && why.contains("duplicate taint"),
        "{why}"
    );

    // Compiled before the watch takes the cache's lock; under it only stored, in work that does
    // not grow with the seed.
    let under_lock = |scale: usize| {
        let seed: Seed = serde_json::from_str(&seed_json(scale)).unwrap();
        let info = std::sync::Arc::new(gardener_scheduler::snapshot::SeedInfo::from_seed(&seed));
        let mut cache = Cache::new(names());
        counted(|| cache.apply_seed_info(info)).1
    };
    let (half, full) = (under_lock(1), under_lock(2));
    assert!(
        full.allocations <= half.allocations + 8 && full.bytes <= half.bytes + 4096,
        "work under the cache's lock grew with the seed: half {half:?}, largest {full:?}"
    );
    linear(
        "a seed in the cache",
        |s| serde_json::from_str::<Seed>(&seed_json(s)).unwrap(),
        |seed| {
            let mut cache = Cache::new(names());
            cache.apply_seed(seed);
            cache.known_shoots()
        },
        |_| {},
    );
    linear(
        "a cloud profile in the cache",
        |s| serde_json::from_str::<CloudProfile>(&cloud_profile_json(s)).unwrap(),
        |cp| Cache::new(names()).apply_cloud_profile(cp).retry_waiting,
        |&r| assert!(r),
    );
    linear(
        "a project in the cache",
        |s| serde_json::from_str::<Project>(&project_json(s)).unwrap(),
        |p| Cache::new(names()).apply_project(p).retry_waiting,
        |&r| assert!(r),
    );
    linear(
        "a region ConfigMap in the cache",
        region_config_map,
        |cm| {
            let mut cache = Cache::new(names());
            cache.apply_config_map(cm).retry_waiting
        },
        |&r| assert!(r),
    );
    linear(
        "a region ConfigMap read",
        region_config_map,
        gardener_scheduler::snapshot::RegionConfig::from_config_map,
        |rc| {
            let rc = rc.as_ref().expect("a region config");
            assert!(rc.rows.values().all(Result::is_ok));
            let row = rc.latency.row("r00000").expect("a row");
            assert_eq!(row.to("r00000-07").map(|l| l.ms), Ok(7.0));
            assert_eq!(
                rc.latency
                    .row("r00001-07")
                    .unwrap()
                    .to("r00001")
                    .map(|l| l.ms),
                Ok(7.0)
            );
        },
    );
}

#[test]
fn the_other_kinds_are_made_ready_before_the_cache_s_lock_and_only_stored_under_it() {
    // What the watch does for a cloud profile, project or ConfigMap: compacted, parsed and
    // fingerprinted (OtherUpdate) without the cache; stored under its lock in work that does
    // not grow with the object.
    fn under_lock(what: &str, update: impl Fn(usize, &Cache) -> OtherUpdate) {
        let work = |scale: usize| {
            let mut cache = Cache::new(names());
            // a version stored before, as on a resync or a change
            let before = update(scale, &cache);
            cache.apply_other(before);
            let next = update(scale, &cache);
            counted(|| cache.apply_other(next)).1
        };
        let (half, full) = (work(1), work(2));
        assert!(
            full.allocations <= half.allocations + 8 && full.bytes <= half.bytes + 4096,
            "{what}: work under the cache's lock grew with the object: half {half:?}, largest {full:?}"
        );
    }
    under_lock("a cloud profile", |s, _| {
        OtherUpdate::cloud_profile(&serde_json::from_str(&cloud_profile_json(s)).unwrap())
    });
    under_lock("a namespaced cloud profile", |s, _| {
        OtherUpdate::namespaced_cloud_profile(
            &serde_json::from_str(&namespaced_cloud_profile_json(s)).unwrap(),
        )
    });
    under_lock("a project", |s, _| {
        OtherUpdate::project(&serde_json::from_str(&project_json(s)).unwrap())
    });
    under_lock("a region ConfigMap", |s, cache| {
        let previous = cache.region_config("garden/regions");
        OtherUpdate::region_config_map(&region_config_map(s), previous.as_deref())
    });
    under_lock("a carbon-intensity ConfigMap", |s, _| {
        OtherUpdate::carbon_config_map(&carbon_config_map(s))
    });

    // A resync of the same region ConfigMap keeps its latency table; a change builds a new one.
    let mut cache = Cache::new(names());
    cache.apply_config_map(&region_config_map(1));
    let first = cache.region_config("garden/regions").unwrap();
    cache.apply_config_map(&region_config_map(1));
    let again = cache.region_config("garden/regions").unwrap();
    assert!(std::sync::Arc::ptr_eq(&first.latency, &again.latency));
    cache.apply_config_map(&region_config_map(2));
    let changed = cache.region_config("garden/regions").unwrap();
    assert!(!std::sync::Arc::ptr_eq(&first.latency, &changed.latency));

    // The largest forecast is read, all of it, in linear work.
    linear(
        "a carbon-intensity ConfigMap in the cache",
        carbon_config_map,
        |cm| {
            let mut cache = Cache::new(names());
            cache.apply_carbon_config_map(cm);
            cache
                .snapshot
                .carbon_sources()
                .iter()
                .map(|source| {
                    let forecasts = source.data.forecasts("forecast").expect("parsed");
                    (forecasts.len(), source.locations.len())
                })
                .collect::<Vec<_>>()
        },
        |read| assert_eq!(read.iter().map(|r| r.1).collect::<Vec<_>>(), [50]),
    );
}

// ---- the commands: manifests, plan files, the configuration, decision records

fn yaml_of(json: &str) -> String {
    serde_yaml_ng::to_string(&serde_json::from_str::<Value>(json).unwrap()).unwrap()
}

#[test]
fn simulate_reads_manifests_of_the_largest_objects_in_linear_work() {
    linear(
        "manifests for simulate",
        |s| {
            [
                shoot_json(s, &[]),
                seed_json(s),
                cloud_profile_json(s),
                project_json(s),
            ]
            .iter()
            .map(|j| yaml_of(j))
            .collect::<Vec<_>>()
            .join("---\n")
        },
        |text| {
            let mut l = gardener_scheduler::simulate::Landscape::default();
            l.add_text(Path::new("largest.yaml"), text).map(|()| l)
        },
        |l| {
            let l = l.as_ref().expect("the manifests load");
            assert_eq!(l.shoots.len(), 1);
            assert_eq!(l.seeds.len(), 1);
        },
    );
}

/// A saved plan of `n` moves, as `plan drain -o json` writes one.
fn plan_text(moves: usize) -> String {
    let moves: Vec<Value> = (0..moves)
        .map(|i| {
            json!({"shoot": format!("garden-dev/s{i:06}"), "from": "seed-a", "to": "seed-b",
                   "migration": {"kind": "live"},
                   "timing": {"state": "at", "start": "2026-12-01T01:00:00Z", "end": "2026-12-01T01:30:00Z"}})
        })
        .collect();
    serde_json::to_string(&json!({
        "goal": {"kind": "drain", "seeds": ["seed-a"]}, "profile": "default",
        "now": "2026-12-01T00:00:00Z",
        "windows": {"horizonSeconds": 86400, "maxConcurrent": 5, "moveDurationSeconds": 1800},
        "stamp": {"generator": "gardener-scheduler", "landscape": "00ff", "seeds": 2,
                  "shoots": 1, "profile": "default", "liveMigration": true},
        "moves": moves,
    }))
    .unwrap()
}

#[test]
fn plan_apply_reads_a_plan_file_of_the_largest_size_in_linear_work() {
    linear(
        "a saved plan",
        |s| plan_text(6_000 * s),
        |text| gardener_scheduler::apply::parse("plan.json", text),
        |p| {
            let p = p.as_ref().expect("the plan reads");
            assert!(p.moves.len() >= 6_000);
        },
    );
}

#[test]
fn the_bind_writes_its_decision_record_onto_the_largest_shoot_in_linear_work_and_loses_nothing() {
    let record = json!({"v": 1, "seed": "seed-a", "time": "2026-12-06T00:00:00Z", "total": 1.0,
        "priorities": {}, "rejected": {}, "scheduler": "0"})
    .to_string();
    linear(
        "the binding update of the largest shoot",
        |s| serde_json::from_str::<DynamicObject>(&shoot_json(s, &[])).unwrap(),
        |shoot| {
            gardener_scheduler::controller::binding_object(
                shoot.clone(),
                "101".into(),
                "seed-a",
                Some(&record),
            )
        },
        |bound| {
            let bound = bound.as_ref().expect("a pending shoot binds");
            assert_eq!(bound.data["spec"]["seedName"], "seed-a");
            assert_eq!(bound.metadata.resource_version.as_deref(), Some("101"));
            let annotations = bound.metadata.annotations.as_ref().unwrap();
            assert_eq!(annotations[ANNOTATION_DECISION], record);
            // every other annotation kept as sent: the gates and the notes
            assert!(annotations[ANNOTATION_GATES].split(',').count() >= 19_000);
            assert!(annotations.len() > 400, "{}", annotations.len());
        },
    );
}

#[test]
fn the_configuration_file_of_the_largest_size_is_read_in_linear_work() {
    linear(
        "the SchedulerConfiguration",
        |s| {
            let regions: Vec<String> = (0..5_000 * s)
                .map(|i| format!("{{name: r{i:06}, location: {{lat: 1, lon: 2}}, country: DE}}"))
                .collect();
            format!(
                "schedulers: {{shoot: {{regions: [{}]}}}}\n",
                regions.join(", ")
            )
        },
        |text| {
            gardener_scheduler::config::read_str_with(
                text,
                gardener_scheduler::config::UnknownKeys::Reject,
            )
        },
        |d| {
            let d = d.as_ref().expect("the configuration reads");
            assert!(d.problems.is_empty(), "{:?}", d.problems);
        },
    );
}

#[test]
fn explain_reads_back_a_decision_record_as_large_as_the_annotations_allow_in_linear_work() {
    let compiled = gardener_scheduler::compile::load_str("").expect("the defaults compile");
    let profile = gardener_scheduler::profile::Profile::from_config(
        "default",
        &compiled.config.schedulers.shoot,
    )
    .expect("the default profile");
    let regions = gardener_scheduler::regions::Regions::builtin();
    let now = "2026-12-01T00:00:00Z".parse().unwrap();
    let landscape = |scale: usize| {
        // A record from another version: its notes are kept as written, not trusted blindly.
        let notes: Vec<String> = (0..9_000 * scale).map(|i| format!("note {i:06}")).collect();
        let record = json!({"v": 1, "seed": "largest-seed", "time": "2026-11-30T00:00:00Z",
                            "notes": notes});
        let mut shoot: Value = serde_json::from_str(&shoot_json(1, &[])).unwrap();
        shoot["metadata"]["annotations"] = json!({ANNOTATION_DECISION: record.to_string()});
        shoot["spec"]["seedName"] = "largest-seed".into();
        let text = [
            serde_json::to_string(&shoot).unwrap(),
            seed_json(1),
            cloud_profile_json(1),
        ]
        .iter()
        .map(|j| yaml_of(j))
        .collect::<Vec<_>>()
        .join("---\n");
        let mut l = gardener_scheduler::simulate::Landscape::default();
        l.add_text(Path::new("record.yaml"), &text).expect("loads");
        l
    };
    linear(
        "a decision record read back",
        landscape,
        |l| gardener_scheduler::explain::explain(l, "garden-dev/largest", &profile, &regions, now),
        |e| {
            let e = e.as_ref().expect("explained");
            let json = serde_json::to_string(&(&e.record, &e.untrusted_record)).unwrap();
            assert!(
                json.contains("note 008999"),
                "{}",
                &json[..json.len().min(300)]
            );
        },
    );
}
