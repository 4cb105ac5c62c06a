//! `/healthz` and `/readyz` on `server.healthProbes`; `/metrics` on `server.metrics`.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

use crate::config::Server;
use crate::controller::shared::Shared;
use axum::Router;
use axum::extract::State as Extract;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use tokio::net::TcpListener;
use tokio::sync::watch;

/// The socket address of a configured server; an empty bind address means all interfaces.
pub fn address(server: &Server) -> SocketAddr {
    let ip = server
        .bind_address
        .parse::<IpAddr>()
        .unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED));
    SocketAddr::new(ip, server.port as u16)
}

/// Healthy while the scheduling runtime still runs tasks (see `liveness`).
async fn healthz(Extract(shared): Extract<Arc<Shared>>) -> impl IntoResponse {
    match shared.heartbeat.stale() {
        None => (StatusCode::OK, "ok".to_string()),
        Some(age) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            format!(
                "the scheduling runtime has run no task for {}s",
                age.as_secs()
            ),
        ),
    }
}

/// Ready once every cache has synced, and while no feed is stale (see `liveness`).
async fn readyz(Extract(shared): Extract<Arc<Shared>>) -> impl IntoResponse {
    let missing = shared.unsynced();
    if !missing.is_empty() {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("caches not synced yet: {}", missing.join(", ")),
        );
    }
    let stale = shared.stale_feeds();
    if !stale.is_empty() {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("feeds stale: {}", stale.join(", ")),
        );
    }
    (StatusCode::OK, "ok".to_string())
}

async fn metrics(Extract(shared): Extract<Arc<Shared>>) -> impl IntoResponse {
    shared
        .metrics
        .refresh(&shared.lock(), shared.leadership.is_leader());
    shared.refresh_feed_metrics();
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        shared.metrics.exposition(shared.leadership.is_leader()),
    )
}

pub(super) fn health_router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .with_state(shared)
}

pub(super) fn metrics_router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/metrics", get(metrics))
        .with_state(shared)
}

/// Serves `router` on an already bound listener until `stop` turns true.
pub(super) async fn serve(listener: TcpListener, router: Router, mut stop: watch::Receiver<bool>) {
    let shutdown = async move {
        while !*stop.borrow_and_update() {
            if stop.changed().await.is_err() {
                break;
            }
        }
    };
    if let Err(e) = axum::serve(listener, router)
        .with_graceful_shutdown(shutdown)
        .await
    {
        tracing::warn!(error = %e, "HTTP server stopped");
    }
}
