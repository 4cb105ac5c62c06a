//! A token rotated into a `tokenFile` is used without a restart. Both tokens are real tokens of
//! the chart's ServiceAccount, each bound to a Secret of its own: deleting the first token's
//! Secret revokes it, and kube-apiserver answers 401 Unauthorized to it from then on. A proxy in
//! front of the API server only records which token each request carried. The scheduler's
//! kubeconfig names the token by `tokenFile`, as a mounted Secret does.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{Request, State};
use axum::response::Response;
use kube::Client;
use serde_json::json;

use crate::support::*;

#[derive(Clone)]
struct Gate {
    client: Client,
    /// every request: when, and the token it carried
    seen: Arc<Mutex<Vec<(Instant, String)>>>,
}

async fn authenticate(State(gate): State<Gate>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let token = crate::support::proxy::bearer_token(&parts);
    gate.seen
        .lock()
        .unwrap()
        .push((Instant::now(), token.clone()));
    let bytes = crate::support::proxy::body_bytes(body).await;
    crate::support::proxy::forward(&gate.client, parts, bytes).await
}

async fn bound_within(client: &Client, name: &str, limit: Duration) -> Option<Duration> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if seed_of(&get_shoot(client, "tok", name).await).is_some() {
            return Some(start.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    None
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_rotated_into_its_token_file_is_used_without_a_restart() {
    let (api, client) = ApiServer::start_with_landscape("token-rotation", "tok").await;
    create_seed(&client, "s1", 10, &[]).await;

    // the chart's ServiceAccount and roles, and a token bound to each holder Secret
    let account = account_of(api.scheduler_identity());
    let token = |holder: &str| {
        api.kubectl(&[
            "apply",
            "-f",
            &write_json(
                &api.state.join(format!("{holder}.json")),
                &json!({"apiVersion": "v1", "kind": "Secret",
                        "metadata": {"name": holder, "namespace": "garden"}}),
            ),
        ]);
        api.kubectl(&[
            "create",
            "token",
            &account,
            "-n",
            "garden",
            "--duration",
            "1h",
            "--bound-object-kind",
            "Secret",
            "--bound-object-name",
            holder,
        ])
        .trim()
        .to_string()
    };
    let (token_one, token_two) = (token("token-one-holder"), token("token-two-holder"));
    let token_file = api.state.join("token");
    std::fs::write(&token_file, format!("{token_one}\n")).unwrap();
    let gate = Gate {
        client: api.passthrough_client().await,
        seen: Arc::default(),
    };
    let app = axum::Router::new()
        .fallback(authenticate)
        .with_state(gate.clone());
    let (port, proxy) = crate::support::proxy::serve_locally(app).await;
    let kubeconfig = api.state.join("kubeconfig-token-file");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: gate\n  cluster: {{server: \"http://127.0.0.1:{port}\"}}\nusers:\n- name: e2e\n  user: {{tokenFile: \"{}\"}}\ncontexts:\n- name: gate\n  context: {{cluster: gate, user: e2e}}\ncurrent-context: gate\n",
            token_file.display()
        ),
    )
    .unwrap();
    let mut scheduler = Scheduler::start(
        &api,
        "token-rotation",
        SchedulerOptions {
            kubeconfig: Some(kubeconfig),
            ..Default::default()
        },
    );
    scheduler.wait_ready().await;
    create_shoot(&client, "tok", "before").await;
    assert!(
        bound_within(&client, "before", Duration::from_secs(30))
            .await
            .is_some(),
        "{}",
        scheduler.logs()
    );

    // the Secret is updated: the file holds a new token, and the old one is revoked
    let rotated = Instant::now();
    std::fs::write(&token_file, format!("{token_two}\n")).unwrap();
    api.kubectl(&["delete", "secret", "token-one-holder", "-n", "garden"]);
    // revoked once kube-apiserver refuses it
    let old = api.state.join("kubeconfig-old-token");
    std::fs::write(
        &old,
        std::fs::read_to_string(api.scheduler_identity())
            .unwrap()
            .replace(&token_of(api.scheduler_identity()), &token_one),
    )
    .unwrap();
    eventually("the first token to be refused", || async {
        let kc = kube::config::Kubeconfig::read_from(&old).unwrap();
        let cfg = kube::Config::from_custom_kubeconfig(kc, &Default::default())
            .await
            .unwrap();
        let c = Client::try_from(cfg).unwrap();
        match kube::Api::<gardener_scheduler::api::Seed>::all(c)
            .list(&Default::default())
            .await
        {
            Err(kube::Error::Api(s)) if s.code == 401 => Some(()),
            _ => None,
        }
    })
    .await;
    create_shoot(&client, "tok", "after").await;
    let bound = bound_within(&client, "after", Duration::from_secs(120)).await;
    let first_new = gate
        .seen
        .lock()
        .unwrap()
        .iter()
        .find(|(at, token)| *at >= rotated && *token == token_two)
        .map(|(at, _)| at.duration_since(rotated));
    let refused = gate
        .seen
        .lock()
        .unwrap()
        .iter()
        .filter(|(at, token)| *at >= rotated && *token == token_one)
        .count();
    eprintln!(
        "token rotation: first request with the new token {first_new:?} after the rotation, {refused} requests with the revoked one meanwhile, shoot created after the rotation bound after {bound:?}"
    );
    let first_new = first_new.expect("the new token was never sent");
    assert!(
        first_new <= Duration::from_secs(75),
        "the new token took {first_new:?}"
    );
    assert!(bound.is_some(), "not bound:\n{}", scheduler.logs());
    assert!(scheduler.is_running(), "the process restarted or exited");
    proxy.abort();
}
