//! An admission-like refusal in front of the test API server: a plain-HTTP proxy that forwards
//! every request to the API server, except binding PUTs of shoots carrying a label, which it
//! answers 422 Invalid as an admission webhook would, recording when each came in. Requests go on
//! with their sender's token: the kubeconfig it writes carries the chart's scheduler identity.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::body::Body as AxumBody;
use axum::extract::{Request, State};
use axum::response::Response;
use kube::Client;
use serde_json::{Value, json};

use super::ApiServer;

/// Shoots with this label (any value) have every binding refused.
pub const REFUSE_LABEL: &str = "e2e.gardener.cloud/refuse-binding";

#[derive(Clone)]
struct Forward {
    client: Client,
    refused: Arc<Mutex<Vec<(Instant, String)>>>,
    binds: Arc<Mutex<Vec<(Instant, String)>>>,
}

pub struct RefusingProxy {
    /// kubeconfig pointing at the proxy
    pub kubeconfig: PathBuf,
    refused: Arc<Mutex<Vec<(Instant, String)>>>,
    binds: Arc<Mutex<Vec<(Instant, String)>>>,
    task: tokio::task::JoinHandle<()>,
}

impl RefusingProxy {
    pub async fn start(api: &ApiServer) -> RefusingProxy {
        let forward = Forward {
            client: api.passthrough_client().await,
            refused: Arc::default(),
            binds: Arc::default(),
        };
        let (refused, binds) = (forward.refused.clone(), forward.binds.clone());
        let app = axum::Router::new().fallback(handle).with_state(forward);
        let (port, task) = serve_locally(app).await;
        let kubeconfig = api.state.join("kubeconfig-refusing-proxy");
        std::fs::write(
            &kubeconfig,
            format!(
                "apiVersion: v1\nkind: Config\nclusters:\n- name: proxy\n  cluster: {{server: \"http://127.0.0.1:{port}\"}}\nusers:\n- name: e2e\n  user: {{token: {}}}\ncontexts:\n- name: proxy\n  context: {{cluster: proxy, user: e2e}}\ncurrent-context: proxy\n",
                super::token_of(api.scheduler_identity())
            ),
        )
        .unwrap();
        RefusingProxy {
            kubeconfig,
            refused,
            binds,
            task,
        }
    }

    /// Binding PUTs answered 422: (when, shoot name).
    pub fn refused(&self) -> Vec<(Instant, String)> {
        self.refused.lock().unwrap().clone()
    }

    /// Every binding PUT seen, refused or forwarded: (when, shoot name).
    pub fn binds(&self) -> Vec<(Instant, String)> {
        self.binds.lock().unwrap().clone()
    }
}

impl Drop for RefusingProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Serves `app` on a free port of 127.0.0.1 until the task is aborted: the port and the task.
pub async fn serve_locally(app: axum::Router) -> (u16, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (port, task)
}

/// A request's body, up to 64 MiB; empty when it cannot be read.
pub async fn body_bytes(body: axum::body::Body) -> axum::body::Bytes {
    axum::body::to_bytes(body, 64 << 20)
        .await
        .unwrap_or_default()
}

/// The path and query of a request; its path alone when it has neither.
pub fn path_and_query(parts: &http::request::Parts) -> String {
    parts
        .uri
        .path_and_query()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| parts.uri.path().to_string())
}

/// The bearer token a request carries; empty when it carries none.
pub fn bearer_token(parts: &http::request::Parts) -> String {
    parts
        .headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or_default()
        .to_string()
}

const HOP_BY_HOP: [&str; 4] = ["connection", "transfer-encoding", "keep-alive", "host"];

async fn handle(State(fw): State<Forward>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let bytes = body_bytes(body).await;
    let path = parts.uri.path().to_string();
    if parts.method == http::Method::PUT && path.ends_with("/binding") {
        let shoot: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        let name = shoot["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        fw.binds
            .lock()
            .unwrap()
            .push((Instant::now(), name.clone()));
        if shoot["metadata"]["labels"][REFUSE_LABEL].is_string() {
            fw.refused
                .lock()
                .unwrap()
                .push((Instant::now(), name.clone()));
            let status = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                "reason": "Invalid", "code": 422,
                "message": format!("admission webhook \"e2e.refuse\" denied the request: shoot {name} may not be bound")});
            return Response::builder()
                .status(422)
                .header("content-type", "application/json")
                .body(AxumBody::from(serde_json::to_vec(&status).unwrap()))
                .unwrap();
        }
    }
    forward(&fw.client, parts, bytes).await
}

/// Sends a request received by a test proxy on to the API server through `client` (one without
/// credentials of its own, [`super::ApiServer::passthrough_client`]), with the caller's token,
/// and its answer (streamed: watches stay watches) back; hop-by-hop headers are not passed on.
/// 502 when the API server cannot be reached.
pub async fn forward(
    client: &Client,
    parts: http::request::Parts,
    bytes: axum::body::Bytes,
) -> Response {
    let uri = path_and_query(&parts);
    let mut out = http::Request::builder().method(parts.method).uri(uri);
    for (k, v) in &parts.headers {
        if !HOP_BY_HOP.contains(&k.as_str()) {
            out = out.header(k, v);
        }
    }
    let out = out.body(kube::client::Body::from(bytes.to_vec())).unwrap();
    match client.send(out).await {
        Ok(resp) => {
            let (parts, body) = resp.into_parts();
            let mut r = Response::builder().status(parts.status);
            for (k, v) in &parts.headers {
                if !HOP_BY_HOP.contains(&k.as_str()) {
                    r = r.header(k, v);
                }
            }
            r.body(AxumBody::new(body)).unwrap()
        }
        Err(e) => Response::builder()
            .status(502)
            .body(AxumBody::from(e.to_string()))
            .unwrap(),
    }
}
