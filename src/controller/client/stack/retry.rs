//! Reads that the server turned away for now — 429 Too Many Requests, 503 Service Unavailable,
//! 504 Gateway Timeout — are sent again, at most [`READ_RETRIES`] times, after the server's
//! `Retry-After` (at most [`READ_RETRY_MAX`]) or a short doubling pause. Only plain reads
//! (GET, not watches) are: nothing they do can apply twice. Writes are never sent again by the
//! stack: their callers decide (the queue, the elector); a write's `Retry-After` header is carried
//! into its answer's `details.retryAfterSeconds` for them. The layer is the outermost, so each
//! try waits for the rate limit, is counted and has its own deadline.

use std::time::Duration;

use crate::controller::client::stack::body::{BoxBody, boxed_answers};
use http::{Method, Request, Response, StatusCode};
use http_body_util::BodyExt;
use kube::client::Body;
use tower::{BoxError, Layer, Service, ServiceExt};

/// How often a read is sent again.
pub const READ_RETRIES: u32 = 4;
/// The longest pause before a read is sent again, whatever `Retry-After` says.
pub const READ_RETRY_MAX: Duration = Duration::from_secs(5);

/// `retry_reads: false` (the Lease's client, whose elector retries within its own deadline):
/// reads are sent once too, and only `Retry-After` is carried into the answers.
#[derive(Clone, Copy)]
pub struct ReadRetryLayer {
    pub retry_reads: bool,
}

impl<S> Layer<S> for ReadRetryLayer {
    type Service = ReadRetry<S>;
    fn layer(&self, inner: S) -> ReadRetry<S> {
        ReadRetry {
            inner,
            retry_reads: self.retry_reads,
        }
    }
}

#[derive(Clone)]
pub struct ReadRetry<S> {
    inner: S,
    retry_reads: bool,
}

fn retried(status: StatusCode) -> bool {
    matches!(
        status,
        StatusCode::TOO_MANY_REQUESTS
            | StatusCode::SERVICE_UNAVAILABLE
            | StatusCode::GATEWAY_TIMEOUT
    )
}

/// The pause before try `n` (from 0): `Retry-After` in seconds if given, else 250 ms doubling.
fn pause(retry_after: Option<&http::HeaderValue>, n: u32) -> Duration {
    let asked = retry_after
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_secs);
    asked
        .unwrap_or(Duration::from_millis(250) * 2u32.pow(n.min(4)))
        .min(READ_RETRY_MAX)
}

fn is_plain_read<B>(req: &Request<B>) -> bool {
    req.method() == Method::GET
        && !crate::controller::client::stack::deadline::is_watch(req.uri().query())
}

/// The largest error answer whose `Retry-After` is carried into its body.
const MAX_ERROR_BODY: usize = 64 * 1024;

/// An answer that is not sent again, turned away with a `Retry-After` header: the header's
/// seconds are put into the
/// answer's `details.retryAfterSeconds`, where kube-apiserver puts them too, so the caller (the
/// queue, for a bind) honours a gateway's header as it honours the API server's body. An
/// answer that is not a `Status` becomes one carrying its text.
async fn carry_retry_after(response: Response<BoxBody>) -> Result<Response<BoxBody>, BoxError> {
    let seconds = response
        .headers()
        .get(http::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let (Some(seconds), true) = (seconds, retried(response.status())) else {
        return Ok(response);
    };
    let (parts, mut body) = response.into_parts();
    let mut bytes = Vec::new();
    while let Some(frame) = body.frame().await {
        match frame {
            Ok(frame) => {
                if let Some(data) = frame.data_ref() {
                    bytes.extend_from_slice(data);
                }
            }
            Err(e) => return Err(e),
        }
        if bytes.len() > MAX_ERROR_BODY {
            bytes.truncate(MAX_ERROR_BODY);
            break;
        }
    }
    let mut status: serde_json::Value = match serde_json::from_slice(&bytes) {
        Ok(v @ serde_json::Value::Object(_)) if v["kind"] == "Status" => v,
        _ => serde_json::json!({
            "kind": "Status", "apiVersion": "v1", "status": "Failure",
            "code": parts.status.as_u16(),
            "reason": parts.status.canonical_reason().unwrap_or_default().replace(' ', ""),
            "message": String::from_utf8_lossy(&bytes).trim(),
        }),
    };
    if status["details"]["retryAfterSeconds"].as_u64().unwrap_or(0) == 0 {
        if !status["details"].is_object() {
            status["details"] = serde_json::json!({});
        }
        status["details"]["retryAfterSeconds"] = seconds.into();
    }
    let mut parts = parts;
    parts.headers.remove(http::header::CONTENT_LENGTH);
    parts.headers.insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    let json = serde_json::to_vec(&status).unwrap_or_default();
    let body = http_body_util::Full::new(bytes::Bytes::from(json))
        .map_err(|never| -> BoxError { match never {} });
    Ok(Response::from_parts(parts, Box::new(body) as BoxBody))
}

impl<S> Service<Request<Body>> for ReadRetry<S>
where
    S: Service<Request<Body>, Response = Response<BoxBody>, Error = BoxError>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
{
    boxed_answers!();

    fn call(&mut self, req: Request<Body>) -> Self::Future {
        if !(self.retry_reads && is_plain_read(&req)) {
            let answer = self.inner.call(req);
            return Box::pin(async move {
                match answer.await {
                    Ok(r) => carry_retry_after(r).await,
                    Err(e) => Err(e),
                }
            });
        }
        // the ready clone takes this call; later tries use fresh clones
        let spare = self.inner.clone();
        let first = std::mem::replace(&mut self.inner, spare.clone());
        let (parts, _) = req.into_parts();
        let again = move || {
            let mut r = Request::new(Body::empty());
            *r.method_mut() = parts.method.clone();
            *r.uri_mut() = parts.uri.clone();
            *r.headers_mut() = parts.headers.clone();
            *r.version_mut() = parts.version;
            *r.extensions_mut() = parts.extensions.clone();
            r
        };
        Box::pin(async move {
            let mut answer = { first }.call(again()).await?;
            for n in 0..READ_RETRIES {
                if !retried(answer.status()) {
                    break;
                }
                let wait = pause(answer.headers().get(http::header::RETRY_AFTER), n);
                tracing::debug!(
                    status = answer.status().as_u16(),
                    ?wait,
                    "read turned away; sending it again"
                );
                drop(answer);
                tokio::time::sleep(wait).await;
                answer = spare.clone().oneshot(again()).await?;
            }
            Ok(answer)
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::controller::client::stack::retry::*;

    #[test]
    fn pauses_follow_retry_after_within_a_cap() {
        let v = |s: &str| http::HeaderValue::from_str(s).unwrap();
        assert_eq!(pause(Some(&v("2")), 0), Duration::from_secs(2));
        assert_eq!(pause(Some(&v("120")), 0), READ_RETRY_MAX);
        assert_eq!(pause(None, 0), Duration::from_millis(250));
        assert_eq!(pause(None, 2), Duration::from_secs(1));
        assert_eq!(pause(Some(&v("soon")), 1), Duration::from_millis(500));
    }

    #[test]
    fn only_plain_reads_are_sent_again() {
        let req = |m: Method, uri: &str| Request::builder().method(m).uri(uri).body(()).unwrap();
        assert!(is_plain_read(&req(
            Method::GET,
            "/apis/g/v1/shoots?limit=500"
        )));
        assert!(!is_plain_read(&req(
            Method::GET,
            "/apis/g/v1/shoots?watch=true"
        )));
        assert!(!is_plain_read(&req(
            Method::PUT,
            "/apis/g/v1/namespaces/a/shoots/s/binding"
        )));
        assert!(!is_plain_read(&req(
            Method::POST,
            "/apis/events.k8s.io/v1/namespaces/a/events"
        )));
    }
}
