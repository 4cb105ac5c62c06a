//! Memory: bytes the cache keeps per shoot and per seed (counted by the bench's global
//! allocator), and the peak RSS of the `simulate` command on a large manifest set.

use std::fs;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use gardener_scheduler::snapshot::Snapshot;
use kube::Resource;
use serde::Serialize;

use super::landscape::{Generator, GridSpec};

/// Bytes held per cached shoot after upserting `count` shoots over `seeds` seeds.
pub fn bytes_per_shoot(allocated: fn() -> usize, seeds: usize, count: usize) -> f64 {
    let mut g = Generator::new(GridSpec {
        seeds,
        shoots: count,
        rng_seed: 7,
    });
    let mut snap = Snapshot::new();
    let before = allocated();
    for i in 0..count {
        let (shoot, _) = g.existing(i);
        snap.upsert_shoot(&shoot);
    }
    let after = allocated();
    assert_eq!(snap.usage().placed_shoots(), count);
    (after.saturating_sub(before)) as f64 / count as f64
}

/// Bytes the scheduler process's cache (`controller::Cache`: the usage index, the shoot map, and
/// for a pending shoot its compact form and the object as sent, kept to bind from) holds per
/// shoot after applying `count` generated shoots as the watch delivers them; `pending`: with
/// `spec.seedName` cleared.
pub fn bytes_per_controller_shoot(
    allocated: fn() -> usize,
    seeds: usize,
    count: usize,
    pending: bool,
) -> f64 {
    let mut g = Generator::new(GridSpec {
        seeds,
        shoots: count,
        rng_seed: 7,
    });
    let shoots: Vec<(gardener_scheduler::api::Shoot, serde_json::Value)> = (0..count)
        .map(|i| {
            let (mut shoot, _) = g.existing(i);
            if pending {
                shoot.spec.seed_name = None;
            }
            let mut raw = serde_json::to_value(&shoot).expect("shoot to JSON");
            raw["apiVersion"] = "core.gardener.cloud/v1beta1".into();
            raw["kind"] = "Shoot".into();
            (shoot, raw)
        })
        .collect();
    let mut state = gardener_scheduler::controller::Cache::new(vec!["default-scheduler".into()]);
    let before = allocated();
    for (shoot, raw) in &shoots {
        state.apply_raw_shoot(shoot, raw);
    }
    let after = allocated();
    assert_eq!(state.known_shoots(), count);
    assert_eq!(state.raw_count(), if pending { count } else { 0 });
    drop(shoots);
    (after.saturating_sub(before)) as f64 / count as f64
}

/// Bytes held per cached seed after upserting `count` generated seeds.
pub fn bytes_per_seed(allocated: fn() -> usize, count: usize) -> f64 {
    let g = Generator::new(GridSpec {
        seeds: count,
        shoots: 0,
        rng_seed: 7,
    });
    let seeds = g.seeds();
    let mut snap = Snapshot::new();
    let before = allocated();
    for s in &seeds {
        snap.upsert_seed(s);
    }
    let after = allocated();
    assert_eq!(snap.seeds().len(), count);
    (after.saturating_sub(before)) as f64 / count as f64
}

/// What one `simulate` run cost.
pub struct SimulateRun {
    pub shoots: usize,
    pub pending: usize,
    pub seeds: usize,
    pub manifest_bytes: u64,
    pub wall: Duration,
    pub peak_rss_kib: i64,
    /// The bench's own peak RSS when it started the child. Linux charges the parent's peak to a
    /// child spawned with a shared address space (vfork) when it execs, so `peak_rss_kib` is the
    /// child's own only when it is larger than this.
    pub bench_rss_kib: i64,
    pub summary: String,
    pub command: String,
}

pub fn with_type_meta<K: Resource<DynamicType = ()> + Serialize>(obj: &K) -> serde_json::Value {
    let mut v = serde_json::to_value(obj).expect("object serializes");
    let map = v.as_object_mut().expect("object");
    map.insert("apiVersion".into(), K::api_version(&()).into());
    map.insert("kind".into(), K::kind(&()).into());
    v
}

fn write_docs<K: Resource<DynamicType = ()> + Serialize>(path: &Path, objs: &[K]) -> u64 {
    let mut w = BufWriter::new(fs::File::create(path).expect("create manifest"));
    for o in objs {
        let doc = serde_yaml_ng::to_string(&with_type_meta(o)).expect("yaml");
        w.write_all(b"---\n").expect("write");
        w.write_all(doc.as_bytes()).expect("write");
    }
    w.flush().expect("flush");
    fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

/// Writes a landscape of `shoots` shoots (`pending` of them unassigned) as manifests under `dir`.
pub fn write_manifests(dir: &Path, seeds: usize, shoots: usize, pending: usize) -> u64 {
    let _ = fs::remove_dir_all(dir);
    fs::create_dir_all(dir).expect("manifest dir");
    let mut g = Generator::new(GridSpec {
        seeds,
        shoots,
        rng_seed: 11,
    });
    let existing = shoots - pending;
    let mut bytes = 0;
    let mut batch = Vec::new();
    let mut file = 0;
    for i in 0..shoots {
        let shoot = if i < existing {
            g.existing(i).0
        } else {
            g.shoot(i)
        };
        batch.push(shoot);
        if batch.len() == 10_000 || i + 1 == shoots {
            bytes += write_docs(&dir.join(format!("20-shoots-{file:03}.yaml")), &batch);
            batch.clear();
            file += 1;
        }
    }
    bytes += write_docs(&dir.join("00-cloudprofiles.yaml"), &g.cloud_profiles());
    bytes += write_docs(&dir.join("01-projects.yaml"), &g.projects());
    bytes += write_docs(&dir.join("10-seeds.yaml"), &g.seeds());
    bytes
}

/// Runs `binary simulate` on the manifests and reads its peak RSS from the kernel's account
/// of waited-for children (the bench starts no other child before this), with the bench's own
/// peak RSS at the start.
pub fn run_simulate(
    binary: &Path,
    config: &Path,
    manifests: &Path,
    out: &Path,
) -> (Duration, i64, i64, String) {
    let own = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_SELF)
        .expect("getrusage")
        .max_rss();
    let start = Instant::now();
    let status = Command::new(binary)
        .args([
            "simulate",
            "-o",
            "table",
            "--now",
            "2026-12-01T00:00:00Z",
            "--config",
        ])
        .arg(config)
        .arg("-f")
        .arg(manifests)
        .stdout(Stdio::from(fs::File::create(out).expect("output file")))
        .status()
        .expect("simulate runs");
    let wall = start.elapsed();
    assert!(status.success(), "simulate failed: {status}");
    let usage = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN)
        .expect("getrusage");
    let text = fs::read_to_string(out).unwrap_or_default();
    let summary = text
        .lines()
        .rev()
        .find(|l| l.contains("pending shoots scheduled"))
        .unwrap_or("")
        .to_string();
    (wall, usage.max_rss(), own, summary)
}

pub fn simulate_rss(
    target: &Path,
    config_text: &str,
    seeds: usize,
    shoots: usize,
    pending: usize,
) -> SimulateRun {
    let dir: PathBuf = target.join("bench-simulate");
    let manifests = dir.join("manifests");
    let manifest_bytes = write_manifests(&manifests, seeds, shoots, pending);
    let config = dir.join("config.yaml");
    fs::write(&config, config_text).expect("config");
    let binary = PathBuf::from(env!("CARGO_BIN_EXE_gardener-scheduler"));
    let (wall, peak_rss_kib, bench_rss_kib, summary) =
        run_simulate(&binary, &config, &manifests, &dir.join("output.txt"));
    SimulateRun {
        shoots,
        pending,
        seeds,
        manifest_bytes,
        wall,
        peak_rss_kib,
        bench_rss_kib,
        summary,
        command: format!(
            "gardener-scheduler simulate -o table --config {} -f {}",
            config
                .strip_prefix(target.parent().unwrap_or(target))
                .unwrap_or(&config)
                .display(),
            manifests
                .strip_prefix(target.parent().unwrap_or(target))
                .unwrap_or(&manifests)
                .display()
        ),
    }
}

/// Set when the bench runs itself as the parent of one measured `simulate` (see
/// [`measure_child_main`]). Not under `GARDENER_SCHEDULER_`: the scheduler reads those as
/// configuration overrides.
pub const MEASURE_ENV: &str = "BENCH_MEASURE_RSS";

/// The bench binary started with [`MEASURE_ENV`]: runs the command in its arguments, reads and
/// counts its stdout (discarding it: `-o json` of a large landscape is gigabytes), waits, and
/// prints `exit-code peak-rss-KiB output-bytes wall-ms` and then the output's summary line.
/// A fresh small parent per measurement makes `RUSAGE_CHILDREN` that one child's peak, not the
/// largest of several, and keeps the peak Linux charges from the parent at exec small.
pub fn measure_child_main() {
    use std::io::Read;
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let start = Instant::now();
    let mut child = Command::new(&args[0])
        .args(&args[1..])
        .env_remove(MEASURE_ENV)
        .stdout(Stdio::piped())
        .spawn()
        .expect("measured command starts");
    let mut stdout = child.stdout.take().expect("piped stdout");
    let mut buf = vec![0u8; 1 << 16];
    let (mut total, mut tail) = (0u64, Vec::new());
    loop {
        let n = stdout.read(&mut buf).expect("read child output");
        if n == 0 {
            break;
        }
        total += n as u64;
        tail.extend_from_slice(&buf[..n]);
        if tail.len() > 1 << 20 {
            tail.drain(..tail.len() - 8192);
        }
    }
    let status = child.wait().expect("wait for the measured command");
    let wall = start.elapsed();
    let rss = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN)
        .expect("getrusage")
        .max_rss();
    let text = String::from_utf8_lossy(&tail);
    let summary = text
        .lines()
        .rev()
        .find(|l| l.contains("pending shoots scheduled"))
        .unwrap_or("");
    println!(
        "{} {rss} {total} {}\n{summary}",
        status.code().unwrap_or(-1),
        wall.as_millis()
    );
}

/// One `simulate` of the large landscape in one output format.
pub struct LargeRun {
    pub output: &'static str,
    pub peak_rss_kib: i64,
    pub output_bytes: u64,
    pub wall: Duration,
    pub summary: String,
}

/// `simulate -o table` and `-o json` on `seeds` × `shoots` with `pending` unassigned, each
/// measured by a fresh copy of the bench binary (`bench`) as its parent.
pub fn simulate_large_rss(
    bench: &Path,
    target: &Path,
    config_text: &str,
    (seeds, shoots, pending): (usize, usize, usize),
) -> (u64, Vec<LargeRun>) {
    let dir: PathBuf = target.join("bench-simulate-large");
    let manifests = dir.join("manifests");
    let manifest_bytes = write_manifests(&manifests, seeds, shoots, pending);
    let config = dir.join("config.yaml");
    fs::write(&config, config_text).expect("config");
    let binary = PathBuf::from(env!("CARGO_BIN_EXE_gardener-scheduler"));
    let runs = ["table", "json"]
        .into_iter()
        .map(|output| {
            let out = Command::new(bench)
                .env(MEASURE_ENV, "1")
                .arg(&binary)
                .args(["simulate", "-o", output, "--now", "2026-12-01T00:00:00Z"])
                .arg("--config")
                .arg(&config)
                .arg("-f")
                .arg(&manifests)
                .output()
                .expect("measuring parent runs");
            let text = String::from_utf8_lossy(&out.stdout);
            let mut lines = text.lines();
            let head: Vec<i64> = lines
                .next()
                .unwrap_or_default()
                .split(' ')
                .map(|n| n.parse().expect("a number"))
                .collect();
            assert_eq!(head[0], 0, "simulate -o {output} failed: {text}");
            LargeRun {
                output,
                peak_rss_kib: head[1],
                output_bytes: head[2] as u64,
                wall: Duration::from_millis(head[3] as u64),
                summary: lines.next().unwrap_or_default().to_string(),
            }
        })
        .collect();
    (manifest_bytes, runs)
}
