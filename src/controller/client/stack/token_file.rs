//! A bearer token read from a file (`tokenFile` in a kubeconfig, the in-cluster ServiceAccount
//! token): read again every [`REREAD_EVERY`], so a token rotated into a mounted Secret is used
//! without a restart, and trimmed as client-go trims it — a file written with a trailing line
//! break (`echo $TOKEN > file`, most Secrets made from files) is a valid token file. When the
//! file cannot be read again, the last token is kept (the file may be removed after start to
//! limit its exposure, as kubernetes#68164 describes).

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use http::{HeaderValue, Request};
use tokio::time::Instant;
use tower::{BoxError, Layer, Service};

/// How often the file is read again.
pub const REREAD_EVERY: Duration = Duration::from_secs(50);

/// What the token file holds, and when it was read.
struct Read {
    header: HeaderValue,
    at: Instant,
}

#[derive(Clone)]
pub struct TokenFileLayer {
    path: PathBuf,
    current: Arc<Mutex<Read>>,
}

#[derive(Debug, thiserror::Error)]
pub enum TokenFileError {
    #[error("reading the token file {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("the token file {path} holds no token (empty, or not one line of text)")]
    Invalid { path: String },
}

fn header_of(path: &PathBuf) -> Result<HeaderValue, TokenFileError> {
    let text = std::fs::read_to_string(path).map_err(|source| TokenFileError::Read {
        path: path.display().to_string(),
        source,
    })?;
    let token = text.trim();
    let invalid = || TokenFileError::Invalid {
        path: path.display().to_string(),
    };
    if token.is_empty() {
        return Err(invalid());
    }
    let mut header = HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| invalid())?;
    header.set_sensitive(true);
    Ok(header)
}

impl TokenFileLayer {
    /// Reads the file now: a file that cannot be read, or holds no token, is an error at start.
    pub fn new(path: impl Into<PathBuf>) -> Result<TokenFileLayer, TokenFileError> {
        let path = path.into();
        let header = header_of(&path)?;
        Ok(TokenFileLayer {
            path,
            current: Arc::new(Mutex::new(Read {
                header,
                at: Instant::now(),
            })),
        })
    }

    /// The header to send now, read again from the file when due.
    fn header(&self) -> HeaderValue {
        let mut current = self.current.lock().unwrap_or_else(|e| e.into_inner());
        if current.at.elapsed() >= REREAD_EVERY {
            match header_of(&self.path) {
                Ok(h) => current.header = h,
                Err(e) => tracing::warn!(error = %e, "keeping the token read before"),
            }
            current.at = Instant::now();
        }
        current.header.clone()
    }
}

impl<S> Layer<S> for TokenFileLayer {
    type Service = TokenFile<S>;
    fn layer(&self, inner: S) -> TokenFile<S> {
        TokenFile {
            inner,
            layer: self.clone(),
        }
    }
}

#[derive(Clone)]
pub struct TokenFile<S> {
    inner: S,
    layer: TokenFileLayer,
}

impl<S, B> Service<Request<B>> for TokenFile<S>
where
    S: Service<Request<B>, Error = BoxError>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: Request<B>) -> Self::Future {
        req.headers_mut()
            .insert(http::header::AUTHORIZATION, self.layer.header());
        Box::pin(self.inner.call(req))
    }
}

#[cfg(test)]
mod tests {
    use crate::controller::client::stack::token_file::*;

    #[tokio::test(start_paused = true)]
    async fn a_token_file_is_trimmed_and_read_again_when_due() {
        let dir = std::env::temp_dir().join(format!("token-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("token");
        std::fs::write(&path, "first\n").unwrap();
        let layer = TokenFileLayer::new(&path).unwrap();
        assert_eq!(layer.header(), "Bearer first");
        std::fs::write(&path, "  second \r\n").unwrap();
        assert_eq!(layer.header(), "Bearer first", "not before it is due");
        tokio::time::advance(REREAD_EVERY).await;
        assert_eq!(layer.header(), "Bearer second");
        std::fs::remove_file(&path).unwrap();
        tokio::time::advance(REREAD_EVERY).await;
        assert_eq!(
            layer.header(),
            "Bearer second",
            "kept when the file is gone"
        );
        std::fs::write(&path, "\n").unwrap();
        assert!(matches!(
            TokenFileLayer::new(&path),
            Err(TokenFileError::Invalid { .. })
        ));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
