//! Client-side request rate limit, `clientConnection.qps` with `burst`, as client-go applies it:
//! a token bucket in front of every request (a watch counts once, when it starts).

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::time::Instant;
use tower::{Layer, Service};

/// Tokens refill at `qps` per second up to `burst`.
pub struct TokenBucket {
    qps: f64,
    burst: f64,
    state: Mutex<(f64, Instant)>,
}

impl TokenBucket {
    /// `None` when `qps` is 0 (no limit).
    pub fn new(qps: f32, burst: i32) -> Option<Arc<TokenBucket>> {
        if !(qps.is_finite() && qps > 0.0) {
            return None;
        }
        let burst = f64::from(burst.max(1));
        Some(Arc::new(TokenBucket {
            qps: f64::from(qps),
            burst,
            state: Mutex::new((burst, Instant::now())),
        }))
    }

    /// Waits for one token.
    pub async fn acquire(self: Arc<Self>) {
        loop {
            let wait = {
                let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
                let now = Instant::now();
                let (tokens, last) = *st;
                let tokens =
                    (tokens + now.duration_since(last).as_secs_f64() * self.qps).min(self.burst);
                if tokens >= 1.0 {
                    *st = (tokens - 1.0, now);
                    return;
                }
                *st = (tokens, now);
                Duration::from_secs_f64((1.0 - tokens) / self.qps)
            };
            tokio::time::sleep(wait).await;
        }
    }
}

#[derive(Clone)]
pub struct RateLimitLayer(pub Arc<TokenBucket>);

impl<S> Layer<S> for RateLimitLayer {
    type Service = RateLimit<S>;
    fn layer(&self, inner: S) -> RateLimit<S> {
        RateLimit {
            inner,
            bucket: self.0.clone(),
            permit: None,
            has_permit: false,
        }
    }
}

/// Holds a token before it reports ready, so each call spends one. A clone shares the bucket
/// and holds no token of its own.
pub struct RateLimit<S> {
    inner: S,
    bucket: Arc<TokenBucket>,
    permit: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
    has_permit: bool,
}

impl<S: Clone> Clone for RateLimit<S> {
    fn clone(&self) -> Self {
        RateLimit {
            inner: self.inner.clone(),
            bucket: self.bucket.clone(),
            permit: None,
            has_permit: false,
        }
    }
}

impl<S, Req> Service<Req> for RateLimit<S>
where
    S: Service<Req>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        if !self.has_permit {
            let bucket = self.bucket.clone();
            let fut = self
                .permit
                .get_or_insert_with(|| Box::pin(bucket.acquire()));
            match fut.as_mut().poll(cx) {
                Poll::Ready(()) => {
                    self.permit = None;
                    self.has_permit = true;
                }
                Poll::Pending => return Poll::Pending,
            }
        }
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Req) -> S::Future {
        self.has_permit = false;
        self.inner.call(req)
    }
}

#[cfg(test)]
mod tests {
    use crate::controller::client::ratelimit::*;

    #[tokio::test(start_paused = true)]
    async fn a_burst_passes_at_once_and_the_rest_at_qps() {
        let bucket = TokenBucket::new(10.0, 2).unwrap();
        let start = Instant::now();
        for _ in 0..5 {
            bucket.clone().acquire().await;
        }
        let took = start.elapsed().as_secs_f64();
        assert!((took - 0.3).abs() < 0.01, "took {took}");
    }

    #[test]
    fn qps_zero_means_no_limit() {
        assert!(TokenBucket::new(0.0, 10).is_none());
    }
}
