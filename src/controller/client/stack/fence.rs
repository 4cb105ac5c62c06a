//! The lease fence: a write (any method but GET and HEAD) is put on the wire only while this
//! process holds the lease, checked when the request is sent — after any rate-limit wait —
//! and it is abandoned once the lease could have passed to another process.
//!
//! The lease is known to be held until `leaseDuration` after the start of the last successful
//! renewal, less [`SAFETY_MARGIN`]: another candidate takes over only once it has seen the same
//! lease record for `leaseDuration` on its own clock, and it can first see the renewal after it
//! was sent. A write that is still unanswered then is abandoned: its outcome is unknown (the
//! server may still apply it), and the caller treats it so.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use crate::controller::leader::{Budget, Leadership};
use http::{Method, Request};
use tower::{BoxError, Layer, Service};

/// Subtracted from the lease's validity for clock-rate differences and the server's own
/// processing time.
pub const SAFETY_MARGIN: Duration = Duration::from_secs(1);

/// Why a write was not sent, or abandoned.
#[derive(Debug, thiserror::Error)]
pub enum Fenced {
    /// Nothing was sent.
    #[error("not sent: this process does not hold the lease")]
    NotLeader,
    /// Sent, unanswered when the lease could have passed on: the outcome is unknown.
    #[error("abandoned after {0:?}: the lease could have passed to another process")]
    LeaseEnded(Duration),
}

impl Fenced {
    /// The fence's verdict on a request that failed with `error`, if the fence caused it.
    pub fn of<'a>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a Fenced> {
        crate::controller::client::stack::body::in_chain(error)
    }
}

#[derive(Clone)]
pub struct FenceLayer(pub Leadership);

impl<S> Layer<S> for FenceLayer {
    type Service = Fence<S>;
    fn layer(&self, inner: S) -> Fence<S> {
        Fence {
            inner,
            leadership: self.0.clone(),
        }
    }
}

#[derive(Clone)]
pub struct Fence<S> {
    inner: S,
    leadership: Leadership,
}

fn is_write(method: &Method) -> bool {
    !matches!(*method, Method::GET | Method::HEAD)
}

impl<S, B> Service<Request<B>> for Fence<S>
where
    S: Service<Request<B>, Error = BoxError>,
    S::Future: Send + 'static,
    S::Response: Send + 'static,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        if !is_write(req.method()) {
            return Box::pin(self.inner.call(req));
        }
        match self.leadership.write_budget(SAFETY_MARGIN) {
            Budget::Unlimited => Box::pin(self.inner.call(req)),
            Budget::None => Box::pin(async { Err(Fenced::NotLeader.into()) }),
            Budget::Until(left) => {
                let answer = self.inner.call(req);
                Box::pin(async move {
                    match tokio::time::timeout(left, answer).await {
                        Ok(r) => r,
                        Err(_) => Err(Fenced::LeaseEnded(left).into()),
                    }
                })
            }
        }
    }
}
