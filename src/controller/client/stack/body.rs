//! What every layer of the stack passes on: the response body, and the errors a caller finds
//! in a failed request's chain.

use bytes::Bytes;
use tower::BoxError;

/// A response body of any transport.
pub type BoxBody = Box<dyn http_body::Body<Data = Bytes, Error = BoxError> + Send + Unpin>;

/// What every layer wrapping a service (its `inner`) declares alike: it answers with a [`BoxBody`]
/// or a boxed error, from a boxed future, and is ready when the service it wraps is.
macro_rules! boxed_answers {
    () => {
        type Response = http::Response<$crate::controller::client::stack::body::BoxBody>;
        type Error = tower::BoxError;
        type Future = std::pin::Pin<
            Box<dyn std::future::Future<Output = Result<Self::Response, Self::Error>> + Send>,
        >;

        fn poll_ready(
            &mut self,
            cx: &mut std::task::Context<'_>,
        ) -> std::task::Poll<Result<(), Self::Error>> {
            self.inner.poll_ready(cx)
        }
    };
}

pub(crate) use boxed_answers;

/// The first error of type `T` in `error`'s chain of sources (itself included): how a caller
/// learns that a layer of the stack, beneath kube's own error types, ended a request.
pub fn in_chain<'a, T: std::error::Error + 'static>(
    error: &'a (dyn std::error::Error + 'static),
) -> Option<&'a T> {
    let mut e = Some(error);
    while let Some(err) = e {
        if let Some(t) = err.downcast_ref::<T>() {
            return Some(t);
        }
        e = err.source();
    }
    None
}
