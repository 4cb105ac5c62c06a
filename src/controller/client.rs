//! The API clients: kubeconfig or in-cluster configuration, request counting, the client-side
//! rate limit.

use kube::Client;
use tracing::info;

use super::rest_metrics::RestClientMetrics;
use super::{ControllerError, ratelimit, redact};

/// Builds the API client: `kubeconfig` (a path, or a `:`-separated list merged as kubectl
/// merges `$KUBECONFIG`), else in-cluster config, else `~/.kube/config`; requests are limited to
/// `qps` with `burst` (0 qps: no limit); every request is counted in `requests`.
pub async fn client_from_kubeconfig(
    kubeconfig: &str,
    qps: f32,
    burst: i32,
    requests: &RestClientMetrics,
) -> Result<Client, ControllerError> {
    build_client(kubeconfig, qps, burst, &[requests]).await
}

/// As [`client_from_kubeconfig`], counting every request in each of `counters`.
pub(super) async fn build_client(
    kubeconfig: &str,
    qps: f32,
    burst: i32,
    counters: &[&RestClientMetrics],
) -> Result<Client, ControllerError> {
    // The path is logged, never the file's content: it holds credentials.
    if kubeconfig.is_empty() {
        info!("API client: in-cluster configuration, else ~/.kube/config");
    } else {
        info!(kubeconfig, "API client: kubeconfig");
    }
    let config = if kubeconfig.is_empty() {
        kube::Config::infer()
            .await
            .map_err(|e| ControllerError::BuildClient(redact::without_content(&e.to_string())))?
    } else {
        let mut merged = kube::config::Kubeconfig::default();
        for path in std::env::split_paths(kubeconfig).filter(|p| !p.as_os_str().is_empty()) {
            let kc = kube::config::Kubeconfig::read_from(&path).map_err(|e| {
                ControllerError::LoadKubeconfig {
                    path: path.display().to_string(),
                    message: redact::without_content(&e.to_string()),
                }
            })?;
            merged = merged
                .merge(kc)
                .map_err(|e| ControllerError::LoadKubeconfig {
                    path: kubeconfig.to_string(),
                    message: redact::without_content(&e.to_string()),
                })?;
        }
        kube::Config::from_custom_kubeconfig(merged, &Default::default())
            .await
            .map_err(|e| ControllerError::LoadKubeconfig {
                path: kubeconfig.to_string(),
                message: redact::without_content(&e.to_string()),
            })?
    };
    let host = config
        .cluster_url
        .authority()
        .map_or_else(|| "none".to_string(), |a| a.to_string());
    let builder = kube::client::ClientBuilder::try_from(config)
        .map_err(|e| ControllerError::BuildClient(redact::without_content(&e.to_string())))?;
    let bucket = ratelimit::TokenBucket::new(qps, burst);
    let builder = builder.with_layer(&counters[0].layer(&host));
    Ok(match (counters.get(1), bucket) {
        (None, None) => builder.build(),
        (None, Some(bucket)) => builder
            .with_layer(&ratelimit::RateLimitLayer(bucket))
            .build(),
        (Some(also), None) => builder.with_layer(&also.layer(&host)).build(),
        (Some(also), Some(bucket)) => builder
            .with_layer(&also.layer(&host))
            .with_layer(&ratelimit::RateLimitLayer(bucket))
            .build(),
    })
}
