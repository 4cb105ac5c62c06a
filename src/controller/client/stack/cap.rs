//! Byte caps on every answer: a server or proxy that answers without end (a list whose items
//! never stop, a watch event or an object with a string that never closes) fails the request
//! once the answer passes its cap, instead of filling memory until the process is killed.
//!
//! The bytes are counted as they arrive, frame by frame, before the reader sees them; a frame
//! that would pass the cap is not passed on, and the connection is dropped. What the cap is
//! depends on what was asked for:
//!
//! | Answer | Cap | Why this size |
//! |--------|-----|---------------|
//! | one list page | [`LIST_PAGE_BYTES`] | as much as one `-f` file of `simulate` |
//! | one watch event (one line of the stream) | [`WATCH_EVENT_BYTES`] | etcd stores at most 1.5 MiB per object, and the API server takes at most 3 MiB in one write |
//! | one object (a read of a named object, the answer to a write) | [`OBJECT_BYTES`] | as a watch event |

use std::pin::Pin;
use std::task::{Context, Poll};

use crate::controller::client::stack::body::{BoxBody, boxed_answers};
use crate::controller::client::stack::deadline::is_watch;
use bytes::Bytes;
use http::{Request, Response};
use http_body::{Body as HttpBody, Frame, SizeHint};
use tower::{BoxError, Layer, Service};

/// The most bytes one page of a list may hold.
pub const LIST_PAGE_BYTES: u64 = 64 * 1024 * 1024;
/// The most bytes one event of a watch may hold: over five times the 1.5 MiB etcd stores for
/// one object, and over twice the 3 MiB the API server takes in one write.
pub const WATCH_EVENT_BYTES: u64 = 8 * 1024 * 1024;
/// The most bytes the answer about one object may hold (as [`WATCH_EVENT_BYTES`]).
pub const OBJECT_BYTES: u64 = 8 * 1024 * 1024;

/// What a request asks for, as far as its cap goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    /// a `GET` of a collection
    ListPage,
    /// a `GET` with `watch=true`: capped per line, one event a line
    WatchEvent,
    /// anything about one named object: a read, a write's answer, a subresource
    Object,
    /// a path outside the resource API (`/version`, discovery): capped as a list page
    Other,
}

impl Answer {
    fn cap(self, caps: &Caps) -> u64 {
        match self {
            Answer::ListPage | Answer::Other => caps.list_page,
            Answer::WatchEvent => caps.watch_event,
            Answer::Object => caps.object,
        }
    }

    fn noun(self) -> &'static str {
        match self {
            Answer::ListPage => "list page",
            Answer::WatchEvent => "watch event",
            Answer::Object => "object",
            Answer::Other => "answer",
        }
    }
}

/// What a request asks for, and of which resource (`shoots`, `leases`; the path for one
/// outside the resource API).
pub fn classify(path: &str, query: Option<&str>) -> (Answer, String) {
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    let rest: &[&str] = match segs.first() {
        Some(&"api") if segs.len() >= 3 => &segs[2..],
        Some(&"apis") if segs.len() >= 4 => &segs[3..],
        _ => return (Answer::Other, path.to_string()),
    };
    let (resource, name) = if rest.len() >= 3 && rest[0] == "namespaces" {
        (rest[2], rest.get(3))
    } else {
        (rest[0], rest.get(1))
    };
    let answer = if is_watch(query) {
        Answer::WatchEvent
    } else if name.is_some() {
        Answer::Object
    } else {
        Answer::ListPage
    };
    (answer, resource.to_string())
}

/// An answer passed its cap; the rest of it was not read.
#[derive(Debug, thiserror::Error)]
#[error("{} holds more than {}, the cap on one {}; the rest of the answer is not read", self.what(), mib(self.cap), self.answer.noun())]
pub struct TooLarge {
    pub answer: Answer,
    /// `shoots`, `leases`...
    pub resource: String,
    pub cap: u64,
}

impl TooLarge {
    fn what(&self) -> String {
        match self.answer {
            Answer::ListPage => format!("a list page of {}", self.resource),
            Answer::WatchEvent => format!("a watch event of {}", self.resource),
            Answer::Object => format!("the answer about one object of {}", self.resource),
            Answer::Other => format!("the answer to {}", self.resource),
        }
    }
}

/// `64 MiB`, or the bytes when not a whole number of MiB.
fn mib(bytes: u64) -> String {
    if bytes.is_multiple_of(1024 * 1024) {
        format!("{} MiB", bytes / (1024 * 1024))
    } else {
        format!("{bytes} bytes")
    }
}

/// The caps in force; [`Caps::default`] everywhere but in this module's tests.
#[derive(Clone, Copy, Debug)]
pub struct Caps {
    pub list_page: u64,
    pub watch_event: u64,
    pub object: u64,
}

impl Default for Caps {
    fn default() -> Self {
        Caps {
            list_page: LIST_PAGE_BYTES,
            watch_event: WATCH_EVENT_BYTES,
            object: OBJECT_BYTES,
        }
    }
}

#[derive(Clone, Copy)]
pub struct CapLayer(pub Caps);

impl<S> Layer<S> for CapLayer {
    type Service = Cap<S>;
    fn layer(&self, inner: S) -> Cap<S> {
        Cap {
            inner,
            caps: self.0,
        }
    }
}

#[derive(Clone)]
pub struct Cap<S> {
    inner: S,
    caps: Caps,
}

impl<S, B> Service<Request<B>> for Cap<S>
where
    S: Service<Request<B>, Response = Response<BoxBody>, Error = BoxError>,
    S::Future: Send + 'static,
{
    boxed_answers!();

    fn call(&mut self, req: Request<B>) -> Self::Future {
        let (answer, resource) = classify(req.uri().path(), req.uri().query());
        let cap = answer.cap(&self.caps);
        let call = self.inner.call(req);
        Box::pin(async move {
            let response = call.await?;
            Ok(response.map(|inner| {
                Box::new(CappedBody {
                    inner: Some(inner),
                    answer,
                    resource,
                    cap,
                    counted: 0,
                }) as BoxBody
            }))
        })
    }
}

/// A response body counted as it arrives.
struct CappedBody {
    /// `None` once the cap was passed: the connection is dropped with it
    inner: Option<BoxBody>,
    answer: Answer,
    resource: String,
    cap: u64,
    /// bytes so far: of the whole answer, or of the current line of a watch
    counted: u64,
}

impl CappedBody {
    /// Counts `data`; whether the answer stays within its cap.
    fn count(&mut self, data: &[u8]) -> bool {
        if self.answer != Answer::WatchEvent {
            self.counted += data.len() as u64;
            return self.counted <= self.cap;
        }
        let mut line_start = 0;
        for newline in memchr::memchr_iter(b'\n', data) {
            self.counted += (newline - line_start) as u64;
            if self.counted > self.cap {
                return false;
            }
            self.counted = 0;
            line_start = newline + 1;
        }
        // the last piece is the start of the next line
        self.counted += (data.len() - line_start) as u64;
        self.counted <= self.cap
    }
}

impl HttpBody for CappedBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = &mut *self;
        let Some(inner) = this.inner.as_mut() else {
            return Poll::Ready(None);
        };
        let frame = match Pin::new(inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => frame,
            other => return other,
        };
        if let Some(data) = frame.data_ref()
            && !this.count(data)
        {
            this.inner = None;
            return Poll::Ready(Some(Err(TooLarge {
                answer: this.answer,
                resource: std::mem::take(&mut this.resource),
                cap: this.cap,
            }
            .into())));
        }
        Poll::Ready(Some(Ok(frame)))
    }

    fn is_end_stream(&self) -> bool {
        self.inner.as_ref().is_none_or(|b| b.is_end_stream())
    }

    fn size_hint(&self) -> SizeHint {
        self.inner
            .as_ref()
            .map_or_else(|| SizeHint::with_exact(0), |b| b.size_hint())
    }
}

#[cfg(test)]
mod tests {
    use crate::controller::client::stack::cap::*;
    use futures::StreamExt;
    use http_body_util::BodyExt;
    use tower::ServiceExt;

    const CAPS: Caps = Caps {
        list_page: 100,
        watch_event: 10,
        object: 20,
    };

    /// The answer of `chunks` to a GET of `uri`, through the cap, read frame by frame: the
    /// data passed on, and the error that ended it.
    async fn through(uri: &str, chunks: Vec<&'static str>) -> (String, Option<String>) {
        let svc = tower::service_fn(move |_req: Request<()>| {
            let chunks = chunks.clone();
            async move {
                let stream = futures::stream::iter(chunks)
                    .map(|c| Ok::<_, BoxError>(Frame::data(Bytes::from_static(c.as_bytes()))));
                let body: BoxBody = Box::new(http_body_util::StreamBody::new(stream));
                Ok::<_, BoxError>(Response::new(body))
            }
        });
        let response = CapLayer(CAPS)
            .layer(svc)
            .oneshot(Request::builder().uri(uri).body(()).unwrap())
            .await
            .unwrap();
        let mut body = response.into_body();
        let mut passed = String::new();
        while let Some(frame) = body.frame().await {
            match frame {
                Ok(f) => passed.push_str(std::str::from_utf8(&f.into_data().unwrap()).unwrap()),
                Err(e) => {
                    assert!(body.frame().await.is_none(), "nothing after the error");
                    return (passed, Some(e.to_string()));
                }
            }
        }
        (passed, None)
    }

    #[test]
    fn requests_are_classified_by_their_path_and_query() {
        for (path, query, answer, resource) in [
            (
                "/apis/core.gardener.cloud/v1beta1/shoots",
                None,
                Answer::ListPage,
                "shoots",
            ),
            (
                "/apis/core.gardener.cloud/v1beta1/namespaces/garden-a/shoots",
                Some("limit=500"),
                Answer::ListPage,
                "shoots",
            ),
            (
                "/apis/core.gardener.cloud/v1beta1/seeds",
                Some("watch=true&resourceVersion=5"),
                Answer::WatchEvent,
                "seeds",
            ),
            (
                "/apis/coordination.k8s.io/v1/namespaces/garden/leases/x",
                None,
                Answer::Object,
                "leases",
            ),
            (
                "/apis/core.gardener.cloud/v1beta1/namespaces/garden-a/shoots/s/binding",
                None,
                Answer::Object,
                "shoots",
            ),
            (
                "/api/v1/namespaces/garden",
                None,
                Answer::Object,
                "namespaces",
            ),
            ("/api/v1/namespaces", None, Answer::ListPage, "namespaces"),
            ("/version", None, Answer::Other, "/version"),
            ("/apis", None, Answer::Other, "/apis"),
        ] {
            assert_eq!(
                classify(path, query),
                (answer, resource.to_string()),
                "{path}?{query:?}"
            );
        }
    }

    #[tokio::test]
    async fn a_list_page_over_its_cap_fails_naming_the_kind_and_the_cap_before_passing_it_on() {
        let chunk = "0123456789012345678901234567890123456789";
        let (passed, err) = through(
            "/apis/g/v1/shoots?limit=500",
            vec![chunk, chunk, chunk, chunk],
        )
        .await;
        assert_eq!(
            passed.len(),
            80,
            "only what fits within the cap is passed on"
        );
        assert_eq!(
            err.as_deref(),
            Some(
                "a list page of shoots holds more than 100 bytes, the cap on one list page; the \
                 rest of the answer is not read"
            )
        );
        let (passed, err) = through("/apis/g/v1/shoots", vec![chunk, chunk]).await;
        assert_eq!((passed.len(), err), (80, None), "within the cap");
    }

    #[tokio::test]
    async fn an_object_read_has_the_object_cap() {
        let (passed, err) = through(
            "/apis/coordination.k8s.io/v1/namespaces/garden/leases/x",
            vec!["0123456789", "0123456789", "0"],
        )
        .await;
        assert_eq!(passed, "01234567890123456789");
        assert_eq!(
            err.as_deref(),
            Some(
                "the answer about one object of leases holds more than 20 bytes, the cap on one \
                 object; the rest of the answer is not read"
            )
        );
    }

    #[tokio::test]
    async fn a_watch_is_capped_per_line_however_the_lines_fall_into_frames() {
        let uri = "/apis/g/v1/seeds?watch=true";
        // many short lines, far more than the cap in total: all passed on
        let many: Vec<&'static str> = std::iter::repeat_n("{\"a\":1}\n", 50).collect();
        let (passed, err) = through(uri, many).await;
        assert_eq!((passed.len(), err), (400, None));
        // a line of exactly the cap, split over frames, then a line one byte over it
        let (passed, err) = through(uri, vec!["01234", "56789\n0123", "456789", "0\n"]).await;
        assert_eq!(passed, "0123456789\n0123456789");
        assert_eq!(
            err.as_deref(),
            Some(
                "a watch event of seeds holds more than 10 bytes, the cap on one watch event; the \
                 rest of the answer is not read"
            )
        );
        // a long line in the middle of one frame
        let (passed, err) = through(uri, vec!["ab\n0123456789012\ncd\n"]).await;
        assert_eq!((passed.as_str(), err.is_some()), ("", true));
        // a line that never ends
        let endless: Vec<&'static str> = std::iter::repeat_n("xxx", 100).collect();
        let (passed, err) = through(uri, endless).await;
        assert_eq!((passed.len(), err.is_some()), (9, true));
    }

    #[test]
    fn the_caps_are_stated_in_mib() {
        assert_eq!(mib(LIST_PAGE_BYTES), "64 MiB");
        assert_eq!(mib(WATCH_EVENT_BYTES), "8 MiB");
        assert_eq!(mib(OBJECT_BYTES), "8 MiB");
    }
}
