use chrono::{SecondsFormat, Utc};

use crate::support::*;

/// A freeze entry active now keeps a new shoot pending with `SchedulingDeferred` (no failure);
/// when the window ends the shoot is bound without any other trigger, by the next entry.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_freeze_window_defers_a_shoot_and_it_is_bound_when_the_window_ends() {
    let (api, client) = ApiServer::start_with_landscape("freeze", "dev").await;
    create_seed(&client, "s1", 10, &[]).await;

    // Short enough to keep the test quick, long enough for a loaded machine to start up.
    let end = Utc::now() + chrono::Duration::seconds(30);
    let end_text = end.to_rfc3339_opts(SecondsFormat::Secs, true);
    let end = chrono::DateTime::parse_from_rfc3339(&end_text)
        .unwrap()
        .to_utc();
    let cfg = api.state.join("scheduler-freeze.yaml");
    std::fs::write(
        &cfg,
        format!(
            r#"apiVersion: scheduler.config.gardener.cloud/v1alpha1
kind: SchedulerConfiguration
logFormat: text
leaderElection:
  leaderElect: false
schedulers:
  shoot:
    backoff: {{initial: 1s, max: 4s}}
    profiles:
    - id: release-freeze
      schedule:
        between:
          end: "{end_text}"
      freeze: true
    - id: weekday
      profile: {{}}
"#
        ),
    )
    .unwrap();
    let mut scheduler = Scheduler::start_with_config(&api, "freeze", &cfg);
    scheduler.wait_ready().await;
    create_shoot(&client, "dev", "frozen").await;

    let deferred = event_with_reason(
        &client,
        "the SchedulingDeferred event",
        "dev",
        "frozen",
        "SchedulingDeferred",
    )
    .await;
    assert!(
        Utc::now() < end,
        "the machine was too slow to observe the freeze before it ended; the test cannot tell"
    );
    assert_eq!(deferred.type_.as_deref(), Some("Normal"));
    let note = deferred.note.unwrap_or_default();
    assert_eq!(
        note,
        format!("Scheduling deferred: freeze window \"release-freeze\" until {end_text}")
    );
    let shoot = get_shoot(&client, "dev", "frozen").await;
    assert_eq!(seed_of(&shoot), None, "no shoot is bound during a freeze");
    assert!(
        shoot
            .status
            .as_ref()
            .and_then(|s| s.last_operation.as_ref())
            .is_none(),
        "deferral is not reported as a failure in the status"
    );

    // Nothing else happens: no seed change, no shoot change. The window's end alone must
    // trigger the bind.
    let seed = seed_when_bound(
        &client,
        "the shoot to be bound after the freeze",
        "dev",
        "frozen",
    )
    .await;
    assert_eq!(seed, "s1");
    assert!(Utc::now() >= end, "bound only after the freeze ended");

    // the success event is published right after the bind, so it may not be there yet
    let success = event_with_reason(
        &client,
        "the success event",
        "dev",
        "frozen",
        "SchedulingSuccessful",
    )
    .await;
    let events = shoot_events(&client, "dev", "frozen").await;
    assert!(
        events
            .iter()
            .all(|e| e.reason.as_deref() != Some("SchedulingFailed")),
        "a freeze never produces a failure event"
    );
    let note = success.note.clone().unwrap_or_default();
    assert!(
        note.starts_with("Scheduled to seed \"s1\" by profile \"weekday\""),
        "{note}"
    );
    assert!(
        scheduler
            .logs()
            .contains("active scheduling profile changed"),
        "the switch from the freeze to the weekday entry is logged"
    );
    let (_, metrics) = http_get(scheduler.metrics_port, "/metrics").expect("metrics");
    assert!(
        metrics.lines().any(|l| l.starts_with(
            "gardener_scheduler_schedule_attempts_total{result=\"deferred\",profile=\"release-freeze\"}"
        )),
        "{metrics}"
    );
    assert!(
        metrics.lines().any(|l| l
            == "gardener_scheduler_schedule_attempts_total{result=\"scheduled\",profile=\"weekday\"} 1"),
        "{metrics}"
    );
}
