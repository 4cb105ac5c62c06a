//! `rest_client_requests_total{code,method,host}` as client-go counts it: once per request,
//! with the status code of the final answer (`<error>` when none came: a transport error, or
//! the request was abandoned, e.g. by a timeout), the HTTP method, and the API server's
//! `host[:port]` from the client configuration.
//!
//! The layer sits outside kube's own retry layer, so a retried request counts once, with its
//! final answer, as in client-go.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;
use tower::{Layer, Service};

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    pub code: String,
    pub host: String,
    pub method: String,
}

/// The counter family, shared by the API client's layer and the `/metrics` handler.
#[derive(Clone, Default)]
pub struct RestClientMetrics {
    requests: Family<RequestLabels, Counter>,
}

impl RestClientMetrics {
    pub(in crate::controller) fn register(registry: &mut Registry) -> Self {
        Self::register_as(
            registry,
            "rest_client_requests",
            "Number of HTTP requests, partitioned by status code, method, and host",
        )
    }

    /// The same family under another name.
    pub(in crate::controller) fn register_as(
        registry: &mut Registry,
        name: &str,
        help: &str,
    ) -> Self {
        let m = RestClientMetrics::default();
        registry.register(name, help, m.requests.clone());
        m
    }

    /// The layer counting the requests of a client talking to `host` (`host[:port]` of the
    /// cluster URL).
    pub fn layer(&self, host: &str) -> CountRequestsLayer {
        CountRequestsLayer {
            requests: self.requests.clone(),
            host: host.into(),
        }
    }

    /// Requests counted so far for these labels.
    #[cfg(test)]
    pub fn count(&self, code: &str, method: &str, host: &str) -> u64 {
        self.requests
            .get_or_create(&RequestLabels {
                code: code.into(),
                host: host.into(),
                method: method.into(),
            })
            .get()
    }
}

#[derive(Clone)]
pub struct CountRequestsLayer {
    requests: Family<RequestLabels, Counter>,
    host: Arc<str>,
}

impl<S> Layer<S> for CountRequestsLayer {
    type Service = CountRequests<S>;
    fn layer(&self, inner: S) -> CountRequests<S> {
        CountRequests {
            inner,
            requests: self.requests.clone(),
            host: self.host.clone(),
        }
    }
}

#[derive(Clone)]
pub struct CountRequests<S> {
    inner: S,
    requests: Family<RequestLabels, Counter>,
    host: Arc<str>,
}

/// Counts its request once: with the answer's code, or as `<error>` if dropped without one.
struct Tally {
    requests: Family<RequestLabels, Counter>,
    host: Arc<str>,
    method: String,
    counted: bool,
}

impl Tally {
    fn count(&mut self, code: String) {
        self.counted = true;
        self.requests
            .get_or_create(&RequestLabels {
                code,
                host: self.host.to_string(),
                method: std::mem::take(&mut self.method),
            })
            .inc();
    }
}

impl Drop for Tally {
    fn drop(&mut self) {
        if !self.counted {
            self.count("<error>".into());
        }
    }
}

impl<S, ReqBody, ResBody> Service<http::Request<ReqBody>> for CountRequests<S>
where
    S: Service<http::Request<ReqBody>, Response = http::Response<ResBody>>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<ReqBody>) -> Self::Future {
        let mut tally = Tally {
            requests: self.requests.clone(),
            host: self.host.clone(),
            method: req.method().as_str().to_string(),
            counted: false,
        };
        let answer = self.inner.call(req);
        Box::pin(async move {
            let result = answer.await;
            if let Ok(response) = &result {
                tally.count(response.status().as_u16().to_string());
            }
            result
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::controller::metrics::rest::*;
    use std::time::Duration;
    use tower::ServiceExt;

    type Mock = tower_test::mock::Mock<http::Request<()>, http::Response<()>>;
    type Handle = tower_test::mock::Handle<http::Request<()>, http::Response<()>>;

    fn counted() -> (RestClientMetrics, CountRequests<Mock>, Handle) {
        let mut registry = Registry::default();
        let m = RestClientMetrics::register(&mut registry);
        let (mock, handle) = tower_test::mock::pair();
        let svc = m.layer("10.0.0.1:443").layer(mock);
        (m, svc, handle)
    }

    fn request(method: &str) -> http::Request<()> {
        http::Request::builder()
            .method(method)
            .uri("/api/v1/namespaces")
            .body(())
            .unwrap()
    }

    #[tokio::test]
    async fn each_request_counts_once_with_its_status_method_and_host() {
        let (m, mut svc, mut handle) = counted();
        let answer = tokio::spawn(svc.ready().await.unwrap().call(request("PUT")));
        let (_, respond) = handle.next_request().await.unwrap();
        respond.send_response(http::Response::builder().status(409).body(()).unwrap());
        answer.await.unwrap().unwrap();
        let answer = tokio::spawn(svc.ready().await.unwrap().call(request("GET")));
        let (_, respond) = handle.next_request().await.unwrap();
        respond.send_response(http::Response::new(()));
        answer.await.unwrap().unwrap();

        assert_eq!(m.count("409", "PUT", "10.0.0.1:443"), 1);
        assert_eq!(m.count("200", "GET", "10.0.0.1:443"), 1);
        assert_eq!(m.count("200", "PUT", "10.0.0.1:443"), 0);
    }

    #[tokio::test]
    async fn a_request_without_an_answer_counts_as_error() {
        let (m, mut svc, mut handle) = counted();
        let call = svc.ready().await.unwrap().call(request("POST"));
        let answer = tokio::spawn(call);
        let (_, respond) = handle.next_request().await.unwrap();
        respond.send_error(std::io::Error::other("connection reset"));
        assert!(answer.await.unwrap().is_err());

        // abandoned by a timeout before any answer
        let call = svc.ready().await.unwrap().call(request("POST"));
        let _pending = handle.next_request();
        assert!(
            tokio::time::timeout(Duration::from_millis(10), call)
                .await
                .is_err()
        );
        assert_eq!(m.count("<error>", "POST", "10.0.0.1:443"), 2);
    }
}
