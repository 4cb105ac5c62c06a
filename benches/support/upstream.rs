//! Upstream's own decision timed beside ours: a grid cell's landscape is sent to the reference
//! program (`tests/reference/main.go`, timing mode, `timing.go`), which serves it through
//! controller-runtime's informer cache, as upstream's scheduler reads in production, and times
//! Gardener's `DetermineSeed` per decision; the same pending shoots are then decided here.

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use gardener_scheduler::api::Shoot;
use gardener_scheduler::profile::Profile;
use gardener_scheduler::schedule::decide;
use gardener_scheduler::snapshot::Snapshot;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::landscape::{Generator, GridSpec};
use super::memory::with_type_meta;

/// The reference program, built by `tests/reference/ensure.sh` when missing.
pub fn reference_program() -> Result<PathBuf, String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reference/ensure.sh");
    let out = Command::new(&script)
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("{}: {e}", script.display()))?;
    if !out.status.success() {
        return Err(format!("{} failed ({})", script.display(), out.status));
    }
    let path = String::from_utf8(out.stdout).map_err(|e| e.to_string())?;
    Ok(PathBuf::from(path.trim()))
}

/// The objects of `landscape::grid(spec, _)`'s landscape, drawn from the generator in the same
/// order, as the API server hands them out: existing shoots, seeds, CloudProfiles, Projects.
pub fn objects(spec: GridSpec) -> Vec<Value> {
    let mut g = Generator::new(spec);
    let mut out = Vec::with_capacity(spec.shoots + spec.seeds + g.project_count() + 3);
    for i in 0..spec.shoots {
        out.push(with_type_meta(&g.existing(i).0));
    }
    out.extend(g.seeds().iter().map(with_type_meta));
    out.extend(g.cloud_profiles().iter().map(with_type_meta));
    out.extend(g.projects().iter().map(with_type_meta));
    out
}

/// What the reference program is asked to time.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Time {
    pub target_ms: f64,
    pub min: usize,
    pub max: usize,
    /// per pending shoot, the seed chosen here ("" for none): the answer's ties say whether
    /// upstream picks it equally; empty: no check
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub compare: Vec<String>,
}

#[derive(Serialize)]
struct Request<'a> {
    strategy: &'a str,
    objects: &'a [Value],
    pending: &'a [Value],
    time: &'a Time,
}

#[derive(Deserialize)]
struct Answer {
    timing: Option<Timed>,
    invalid: Option<String>,
}

/// Upstream's timed decisions, decision k of pending shoot k mod the number of pending shoots.
#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct Timed {
    /// the client the reconciler read through
    pub reader: String,
    /// the types the informer cache served
    pub informers: Vec<String>,
    /// reads that reached the objects behind the cache while deciding
    pub backing_reads: i64,
    /// listing the objects into the cache, untimed otherwise
    pub fill_ms: f64,
    pub cpu_ns: Vec<u64>,
    pub wall_ns: Vec<u64>,
    pub decisions: Vec<Decided>,
}

#[derive(Deserialize, Debug, Clone)]
pub struct Decided {
    pub shoot: String,
    pub seed: Option<String>,
    /// the seed, and the compared seed when upstream picks it equally
    #[serde(default)]
    pub ties: Vec<String>,
    pub error: Option<String>,
    pub panic: Option<String>,
}

impl Decided {
    /// Whether `ours` (a seed, or none) is a decision upstream makes too.
    pub fn agrees(&self, ours: Option<&str>) -> bool {
        match ours {
            Some(s) => self.ties.iter().any(|t| t == s),
            None => self.seed.is_none(),
        }
    }
}

/// Asks the reference program at `program` to time the `pending` shoots on `objects`.
pub fn time_upstream(
    program: &Path,
    strategy: &str,
    objects: &[Value],
    pending: &[Value],
    time: &Time,
) -> Result<Timed, String> {
    let mut child = Command::new(program)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("{}: {e}", program.display()))?;
    {
        let mut stdin = BufWriter::new(child.stdin.take().expect("piped stdin"));
        let request = Request {
            strategy,
            objects,
            pending,
            time,
        };
        serde_json::to_writer(&mut stdin, &request).map_err(|e| e.to_string())?;
        stdin.write_all(b"\n").map_err(|e| e.to_string())?;
        stdin.flush().map_err(|e| e.to_string())?;
    }
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("piped stdout"))
        .read_line(&mut line)
        .map_err(|e| e.to_string())?;
    let status = child.wait().map_err(|e| e.to_string())?;
    let answer: Answer = serde_json::from_str(&line)
        .map_err(|e| format!("the reference's answer ({status}): {e}: {line:.300}"))?;
    match (answer.timing, answer.invalid) {
        (Some(t), _) => Ok(t),
        (None, Some(why)) => Err(format!("the reference could not read the request: {why}")),
        (None, None) => Err(format!(
            "the reference answered neither timing nor invalid: {line:.300}"
        )),
    }
}

fn process_cpu() -> Duration {
    let t = nix::time::clock_gettime(nix::time::ClockId::CLOCK_PROCESS_CPUTIME_ID)
        .expect("process CPU clock");
    Duration::new(t.tv_sec() as u64, t.tv_nsec() as u32)
}

/// Our decisions of the same shoots: per decision the seed, CPU (process) and wall time.
pub struct Ours {
    pub seeds: Vec<Option<String>>,
    pub cpu: Vec<Duration>,
    pub wall: Vec<Duration>,
}

/// Decides pending shoots 0..n (k mod the number of them), `rounds` times over, each decision
/// timed alone; seeds are those of the first round.
pub fn time_ours(
    pending: &[Shoot],
    n: usize,
    rounds: usize,
    snap: &Snapshot,
    profile: &Profile,
    now: DateTime<Utc>,
) -> Ours {
    let mut out = Ours {
        seeds: Vec::with_capacity(n),
        cpu: Vec::with_capacity(n * rounds),
        wall: Vec::with_capacity(n * rounds),
    };
    for round in 0..rounds {
        for k in 0..n {
            let shoot = &pending[k % pending.len()];
            let (wall, cpu) = (Instant::now(), process_cpu());
            let seed = std::hint::black_box(decide(shoot, snap, profile, now))
                .ok()
                .map(|d| d.seed);
            out.cpu.push(process_cpu() - cpu);
            out.wall.push(wall.elapsed());
            if round == 0 {
                out.seeds.push(seed);
            }
        }
    }
    out
}
