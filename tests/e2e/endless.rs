//! Answers that never end, through the fault proxy: a list whose items never stop, a watch event
//! that is one endless line, an object with an endless string. Each fails at its byte cap
//! (64 MiB per list page, 8 MiB per watch event and per object; a list page read slower than
//! 64 MiB in 20 s ends at its request deadline first), the process says which kind and which
//! bound, backs off and tries again, and its memory stays bounded: the peak resident
//! memory of the process is read from `/proc/<pid>/status` (`VmHWM`).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::Lease;
use kube::api::Api;

use crate::apply::{NS, apply_args, of, reconciled, save_plan, shoot_on, steps};
use crate::plan::migratable_seed;
use crate::support::fault_proxy::{Class, Endless, EndlessOf, FaultProxy, Faults};
use crate::support::gardenlet::FakeGardenlets;
use crate::support::*;

/// The most resident memory a process may reach against endless answers. The scheduler on a
/// small landscape stays well under 100 MiB; a list page at its cap adds 64 MiB, a watch event
/// and an object 8 MiB each. Without caps the process reads the proxy's whole 512 MiB answer.
const PEAK_RSS_KIB: u64 = 320 * 1024;

const PROJECT: &str = "en";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn endless_answers_fail_at_their_caps_and_the_scheduler_stays_up_with_bounded_memory() {
    let (api, client) = ApiServer::start_with_landscape("endless-scheduler", PROJECT).await;
    create_seed(&client, "s1", 10, &[]).await;
    let proxy = FaultProxy::start(&api).await;
    proxy.set(Faults {
        endless: vec![
            Endless {
                of: EndlessOf::List,
                resource: "shoots",
            },
            Endless {
                of: EndlessOf::Watch,
                resource: "seeds",
            },
            Endless {
                of: EndlessOf::Object,
                resource: "leases",
            },
        ],
        ..Default::default()
    });
    let mut scheduler = Scheduler::start(
        &api,
        "endless",
        SchedulerOptions {
            kubeconfig: Some(proxy.kubeconfig_for("endless")),
            leader_elect: true,
            // lists in pages, so that the endless list is met; the seeds' endless watch is met
            // by their streamed list
            shoot_config: "streamingLists: false\n",
            ..Default::default()
        },
    );

    // Each endless answer met three times: after each, the feed or the elector backs off and
    // tries again; the process stays up and within its memory all along.
    let met = [
        (Class::List, "shoots"),
        (Class::Watch, "seeds"),
        (Class::LeaseGet, "leases"),
    ];
    let start = Instant::now();
    while !met
        .iter()
        .all(|(class, res)| proxy.endless_answers(*class, res) >= 3)
    {
        assert!(
            scheduler.is_running(),
            "the scheduler exited:\n{}",
            scheduler.logs()
        );
        let peak = scheduler.peak_rss_kib();
        assert!(
            peak < PEAK_RSS_KIB,
            "peak RSS {} MiB against endless answers",
            peak / 1024
        );
        assert!(
            start.elapsed() < DEADLINE,
            "endless answers met: {:?}",
            met.map(|(c, r)| proxy.endless_answers(c, r))
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let peak = scheduler.peak_rss_kib();
    eprintln!("peak RSS against endless answers: {} MiB", peak / 1024);
    assert!(peak < PEAK_RSS_KIB, "peak RSS {} MiB", peak / 1024);
    let logs = scheduler.logs();
    for says in [
        "a watch event of seeds holds more than 8 MiB, the cap on one watch event",
        "the answer about one object of leases holds more than 8 MiB, the cap on one object",
    ] {
        assert!(logs.contains(says), "{says}:\n{logs}");
    }
    // The endless list ends at its 64 MiB cap, or, when the machine reads slower than 64 MiB in
    // the request's 20 s, at that deadline: both bound it, and the log says which.
    let cap = "a list page of shoots holds more than 64 MiB, the cap on one list page";
    let deadline = logs
        .lines()
        .any(|l| l.contains("Shoot") && l.contains("no answer within 20s"));
    assert!(
        logs.contains(cap) || deadline,
        "the endless list of shoots ended neither at its cap nor at its deadline:\n{logs}"
    );
    eprintln!(
        "the endless list of shoots ended at {}",
        match (logs.contains(cap), deadline) {
            (true, true) => "its cap and at its deadline",
            (true, false) => "its cap",
            _ => "its deadline",
        }
    );

    // the server behaves again: the scheduler takes the lease, syncs and binds
    proxy.clear();
    scheduler.wait_ready().await;
    create_shoot(&client, PROJECT, "after").await;
    eventually("the shoot is bound once the answers end", || async {
        seed_of(&get_shoot(&client, PROJECT, "after").await).map(|_| ())
    })
    .await;
    assert!(scheduler.is_running());
}

/// A finished run of the binary, and the highest peak resident memory seen while it ran.
struct Run {
    success: bool,
    stdout: String,
    stderr: String,
    peak_rss_kib: u64,
}

/// Starts the binary with `args`, reading its peak resident memory every 10 ms until it exits.
/// A process that passes [`PEAK_RSS_KIB`] is killed there: the test has failed.
fn run_watching_memory(args: Vec<String>, dir: &Path, name: &str) -> tokio::task::JoinHandle<Run> {
    let (out_path, err_path) = (
        dir.join(format!("{name}.stdout")),
        dir.join(format!("{name}.stderr")),
    );
    tokio::task::spawn_blocking(move || {
        let mut child = Command::new(env!("CARGO_BIN_EXE_gardener-scheduler"))
            .args(&args)
            .env_remove("KUBECONFIG")
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&out_path).unwrap())
            .stderr(std::fs::File::create(&err_path).unwrap())
            .spawn()
            .unwrap();
        let mut peak = 0;
        let start = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            peak = peak.max(proc_status_kib(child.id(), "VmHWM").unwrap_or(0));
            if peak >= PEAK_RSS_KIB || start.elapsed() > DEADLINE {
                let _ = child.kill();
                break child.wait().unwrap();
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        Run {
            success: status.success(),
            stdout: std::fs::read_to_string(out_path).unwrap_or_default(),
            stderr: std::fs::read_to_string(err_path).unwrap_or_default(),
            peak_rss_kib: peak,
        }
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_apply_stops_at_the_cap_of_an_endless_lease_or_shoot_answer_with_bounded_memory() {
    let (api, client) = ApiServer::start_with_landscape("endless-apply", "ap").await;
    migratable_seed(&client, "s1", 10).await;
    migratable_seed(&client, "s2", 10).await;
    shoot_on(&client, "a", "s1", 0, 2400).await;
    let _gardenlets = FakeGardenlets::start(client.clone(), NS, Duration::from_millis(400), &[]);
    reconciled(&client).await;
    let plan = save_plan(&api, "endless", "s1", &[]).await;
    let proxy = FaultProxy::start(&api).await;
    let kubeconfig = proxy.kubeconfig_as("apply", &api.plan_applier_identity());

    // the Lease read never ends: the apply stops before any move, saying why
    proxy.set(Faults {
        endless: vec![Endless {
            of: EndlessOf::Object,
            resource: "leases",
        }],
        ..Default::default()
    });
    let run = run_watching_memory(apply_args(&kubeconfig, &plan, &[]), &api.state, "lease")
        .await
        .unwrap();
    eprintln!("peak RSS, endless Lease: {} MiB", run.peak_rss_kib / 1024);
    assert!(
        run.peak_rss_kib < PEAK_RSS_KIB,
        "peak RSS {} MiB",
        run.peak_rss_kib / 1024
    );
    assert!(!run.success, "{}", run.stdout);
    assert!(
        run.stderr
            .contains("the answer about one object of leases holds more than 8 MiB"),
        "{}",
        run.stderr
    );
    assert_eq!(proxy.endless_answers(Class::LeaseGet, "leases"), 1);
    assert_eq!(proxy.count(Class::Bind), 0);

    // The shoot's read never ends: the move waits and tries again at each poll; once the
    // server answers again, it is carried out, and the apply ends and gives the Lease back.
    proxy.set(Faults {
        endless: vec![Endless {
            of: EndlessOf::Object,
            resource: "shoots",
        }],
        ..Default::default()
    });
    let run = run_watching_memory(apply_args(&kubeconfig, &plan, &[]), &api.state, "shoot");
    eventually("three endless answers to the shoot's read", || async {
        (proxy.endless_answers(Class::Other, "shoots") >= 3).then_some(())
    })
    .await;
    assert_eq!(proxy.count(Class::Bind), 0);
    proxy.clear();
    let run = run.await.unwrap();
    eprintln!("peak RSS, endless shoot: {} MiB", run.peak_rss_kib / 1024);
    assert!(
        run.peak_rss_kib < PEAK_RSS_KIB,
        "peak RSS {} MiB",
        run.peak_rss_kib / 1024
    );
    assert!(run.success, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains(
            "the answer about one object of shoots holds more than 8 MiB, the cap on one object"
        ),
        "{}",
        run.stderr
    );
    let log = steps(run.stdout.as_bytes());
    assert_eq!(of(&log, "done").len(), 1, "{log:#?}");
    assert_eq!(proxy.count(Class::Bind), 1);
    let lease = Api::<Lease>::namespaced(client.clone(), "garden")
        .get_opt("gardener-scheduler-plan-apply")
        .await
        .unwrap();
    assert!(
        lease.is_none(),
        "the Lease is given back at the end: {lease:?}"
    );
}
