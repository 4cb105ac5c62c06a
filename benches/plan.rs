//! `plan` at scale: the release binary on generated landscapes (the generator of
//! `benches/scheduler.rs`, written as manifests like its memory section), each run measured by
//! `/usr/bin/time -v` (peak RSS, wall time) with the size of its output.
//!
//! `cargo bench --bench plan` runs 2,000 seeds × 20,000 shoots and 10,000 × 100,000;
//! `PLAN_BENCH_SIZES=500x5000` picks others. The report is written to
//! `target/plan-bench-report.md` and into its block of `docs/performance.md` (`BENCH_DOC=0`:
//! not).

#[allow(dead_code)]
mod support;

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use support::landscape::{Generator, GridSpec};
use support::memory;

const NOW: &str = "2026-12-01T12:00:00Z";

/// The biggest seeds of the landscape `write_manifests` writes (same generator, same stream),
/// as many as hold 3 % of the shoots: the drain moves thousands of shoots at 100,000.
fn biggest_seeds(seeds: usize, shoots: usize) -> (Vec<String>, usize) {
    let mut g = Generator::new(GridSpec {
        seeds,
        shoots,
        rng_seed: 11,
    });
    let mut count: HashMap<String, usize> = HashMap::new();
    for i in 0..shoots {
        let s = g.existing(i).0;
        *count
            .entry(s.spec.seed_name.unwrap_or_default())
            .or_default() += 1;
    }
    let mut by_size: Vec<(String, usize)> = count.into_iter().collect();
    by_size.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let (mut names, mut on_them) = (Vec::new(), 0);
    for (name, n) in by_size {
        if on_them * 100 >= shoots * 3 {
            break;
        }
        names.push(name);
        on_them += n;
    }
    (names, on_them)
}

struct Run {
    wall: String,
    rss_kib: u64,
    output_bytes: u64,
    code: i32,
    last_line: String,
}

fn measure(binary: &Path, args: &[String], out: &Path) -> Run {
    let stats = out.with_extension("time");
    let status = Command::new("/usr/bin/time")
        .arg("-v")
        .arg("-o")
        .arg(&stats)
        .arg(binary)
        .args(args)
        .stdout(std::fs::File::create(out).expect("output file"))
        .stderr(std::fs::File::create(out.with_extension("stderr")).expect("stderr file"))
        .status()
        .expect("/usr/bin/time runs");
    let text = std::fs::read_to_string(&stats).unwrap_or_default();
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.trim().strip_prefix(name).map(|v| v.trim().to_string()))
            .unwrap_or_default()
    };
    let stdout = std::fs::read_to_string(out).unwrap_or_default();
    Run {
        wall: field("Elapsed (wall clock) time (h:mm:ss or m:ss):"),
        rss_kib: field("Maximum resident set size (kbytes):")
            .parse()
            .unwrap_or(0),
        output_bytes: std::fs::metadata(out).map(|m| m.len()).unwrap_or(0),
        code: status.code().unwrap_or(-1),
        last_line: stdout
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .chars()
            .take(100)
            .collect(),
    }
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        println!("plan bench: run it with `cargo bench --bench plan`; skipped under cargo test");
        return;
    }
    let sizes =
        std::env::var("PLAN_BENCH_SIZES").unwrap_or_else(|_| "2000x20000,10000x100000".into());
    let binary = PathBuf::from(env!("CARGO_BIN_EXE_gardener-scheduler"));
    let target = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/plan-bench");
    let mut report = String::from(
        "| seeds | shoots | command | exit | wall | peak RSS | output | last line |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n",
    );
    for size in sizes.split(',') {
        let (seeds, shoots) = size.split_once('x').expect("SEEDSxSHOOTS");
        let (seeds, shoots): (usize, usize) = (seeds.parse().unwrap(), shoots.parse().unwrap());
        let dir = target.join(format!("{seeds}x{shoots}"));
        eprintln!(
            "plan bench: writing {seeds} seeds × {shoots} shoots to {}",
            dir.display()
        );
        let bytes = memory::write_manifests(&dir.join("manifests"), seeds, shoots, 0);
        std::fs::create_dir_all(dir.join("out")).unwrap();
        let (drained, on_them) = biggest_seeds(seeds, shoots);
        eprintln!(
            "plan bench: {bytes} bytes of manifests; the {} biggest seeds hold {on_them} shoots",
            drained.len()
        );
        let f = dir.join("manifests").display().to_string();
        let base = |cmd: &[&str]| -> Vec<String> {
            let mut v: Vec<String> = vec!["plan".into()];
            for c in cmd {
                if *c == "SEEDS" {
                    v.extend(drained.iter().cloned());
                } else {
                    v.push(c.to_string());
                }
            }
            v.extend(["--now".into(), NOW.into(), "-f".into(), f.clone()]);
            v
        };
        let what = format!(
            "drain of the {} biggest seeds ({on_them} shoots)",
            drained.len()
        );
        let cases: Vec<(String, Vec<String>)> = vec![
            (
                format!("{what}, -o table"),
                base(&["drain", "SEEDS", "-o", "table"]),
            ),
            (
                format!("{what}, -o json"),
                base(&["drain", "SEEDS", "-o", "json"]),
            ),
            (
                format!("{what}, -o yaml"),
                base(&["drain", "SEEDS", "-o", "yaml"]),
            ),
            (
                format!("{what}, -o html"),
                base(&["drain", "SEEDS", "-o", "html"]),
            ),
            (
                format!("{what}, --max-concurrent 1 --horizon 8760h"),
                base(&[
                    "drain",
                    "SEEDS",
                    "--max-concurrent",
                    "1",
                    "--horizon",
                    "8760h",
                ]),
            ),
            (
                "rebalance --max-moves 5".into(),
                base(&["rebalance", "--max-moves", "5"]),
            ),
            (
                "rebalance --max-moves 5 --objective latency".into(),
                base(&["rebalance", "--max-moves", "5", "--objective", "latency"]),
            ),
        ];
        for (i, (name, args)) in cases.iter().enumerate() {
            eprintln!("plan bench: {seeds} × {shoots}: {name}");
            let r = measure(&binary, args, &dir.join("out").join(format!("{i}.out")));
            let _ = writeln!(
                report,
                "| {seeds} | {shoots} | {name} | {} | {} | {:.0} MiB | {:.1} MiB | {} |",
                r.code,
                r.wall,
                r.rss_kib as f64 / 1024.0,
                r.output_bytes as f64 / (1024.0 * 1024.0),
                r.last_line.replace('|', "\\|"),
            );
            eprint!("{}", report.lines().last().unwrap_or(""));
            eprintln!();
        }
    }
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/plan-bench-report.md");
    std::fs::write(&path, &report).expect("report");
    println!("{report}");
    // The table is the generated block `plan` of docs/performance.md; the rest of the page stays.
    if std::env::var("BENCH_DOC").is_ok_and(|v| v == "0") {
        eprintln!("plan bench: docs/performance.md left as it is (BENCH_DOC=0)");
        return;
    }
    let commit = std::process::Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .output()
        .map_or_else(
            |_| "unknown".into(),
            |o| String::from_utf8_lossy(&o.stdout).trim().to_string(),
        );
    let body = format!(
        "Measured with `PLAN_BENCH_SIZES={sizes} cargo bench --bench plan` at commit `{commit}`.\n\n{report}"
    );
    let page = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/performance.md");
    if let Err(e) = support::report::write_block(&page, "plan", &body) {
        eprintln!("plan bench: {e}");
        std::process::exit(1);
    }
    eprintln!("plan bench: the table of docs/performance.md rewritten");
}
