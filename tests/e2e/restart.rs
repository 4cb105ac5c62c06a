use std::time::Duration;

use crate::burst::{assert_bound_once_within_capacity, record_transitions};
use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_scheduler_rides_out_an_api_server_restart_and_misses_no_shoot() {
    let (api, client) = ApiServer::start_with_landscape("restart", "rs").await;
    create_seed(&client, "s-a", 50, &[]).await;
    let mut scheduler = Scheduler::start(&api, "restart", SchedulerOptions::default());
    scheduler.wait_ready().await;
    let pid = scheduler.pid();

    for i in 0..10 {
        create_shoot(&client, "rs", &format!("before-{i}")).await;
    }
    eventually("the first shoots to be bound", || async {
        list_shoots(&client, "rs")
            .await
            .iter()
            .all(|s| seed_of(s).is_some())
            .then_some(())
    })
    .await;

    let args = api.kill_apiserver();
    // the scheduler keeps running while the server is gone
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(
        scheduler.is_running(),
        "exited while the API server was down:\n{}",
        scheduler.logs()
    );
    api.relaunch_apiserver(&args);
    let client = answering_client(&api).await;
    // created as soon as the server is back, likely before the scheduler's watch is
    for i in 0..20 {
        create_shoot(&client, "rs", &format!("after-{i}")).await;
    }
    let (seen, watch) = record_transitions(&client, "garden-rs");
    eventually("every shoot to be bound after the restart", || async {
        let shoots = list_shoots(&client, "rs").await;
        (shoots.len() == 30 && shoots.iter().all(|s| seed_of(s).is_some())).then_some(())
    })
    .await;
    eventually("the recorder to see every bind", || async {
        (seen.lock().unwrap().len() == 30).then_some(())
    })
    .await;
    assert_bound_once_within_capacity(&client, "rs", &seen, 30).await;
    assert!(scheduler.is_running());
    assert_eq!(scheduler.pid(), pid, "same process, no restart");
    assert!(
        scheduler.logs().contains("watch failed; retrying"),
        "the outage was noticed"
    );
    watch.abort();
}
