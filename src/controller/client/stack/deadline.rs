//! Deadlines on every request: a request answers, with its whole body, within its limit; a
//! watch answers its headers within the limit and then may stay open as long as bytes keep
//! coming, but is cut once it has been silent for longer than [`WATCH_SILENCE`]. A cut watch
//! ends with an error, so the watcher restarts it (from its last resourceVersion).
//!
//! Every response to a registered feed path (a list page, a watch's events and bookmarks)
//! marks the feed as live in [`Activity`], which the readiness check and the elector read. A
//! new watch, and a list that replaced a silent watch, count as the watch's activity too when
//! the watch before them delivered something: a feed recovering from a partition or a frozen
//! process is live as soon as it lists or watches again, while one whose every watch is
//! black-holed (headers, then nothing) is not kept live by its lists.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use crate::controller::client::stack::body::{BoxBody, boxed_answers};
use bytes::Bytes;
use http::{Request, Response};
use http_body::{Body as HttpBody, Frame, SizeHint};
use tokio::time::{Instant, Sleep};
use tower::{BoxError, Layer, Service};

/// Limit for one API request made while scheduling (reads, binds, events, status).
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(20);

/// The server-side timeout every watch asks for (`timeoutSeconds`): a healthy watch ends, with
/// a bookmark, at least this often.
pub const WATCH_TIMEOUT: Duration = Duration::from_secs(30);

/// A watch that delivers no byte for this long is cut: longer than [`WATCH_TIMEOUT`], after
/// which a healthy server has closed it. (kube's watcher already gives up on a watch silent
/// for its timeout plus 5 s and starts another; this is the stack's own bound, whoever reads.)
pub const WATCH_SILENCE: Duration = Duration::from_secs(40);

/// Why a request was abandoned by this layer.
#[derive(Debug, thiserror::Error)]
pub enum Abandoned {
    #[error("no answer within {0:?}")]
    NoAnswer(Duration),
    #[error("the watch delivered nothing for {0:?} (not even a bookmark); restarting it")]
    Silent(Duration),
}

/// When each watched collection last delivered something in a response body: a list page, a
/// watch event, a bookmark, or the clean end of a watch (response headers alone do not count:
/// a black-holed watch sends them). Keyed by the collection's path
/// (`/apis/GROUP/VERSION/shoots`); only registered paths are recorded.
#[derive(Default)]
pub struct Activity {
    last: Mutex<HashMap<String, Seen>>,
}

#[derive(Clone, Copy)]
struct Seen {
    /// anything: a list page or a watch
    any: Instant,
    /// a watch
    watch: Instant,
    /// watches given up by their reader after [`WATCH_TIMEOUT`] and more of silence, not yet
    /// taken by [`Activity::take_silent_drops`]
    silent_drops: u32,
    /// the last watch delivered something (or none has started since the feed was registered)
    proved: bool,
}

/// A watch silent this long when its reader drops it was given up for silence (kube's watcher
/// gives up after its timeout plus 5 s; a healthy server ends a watch at its timeout).
const GIVEN_UP_AFTER: Duration = Duration::from_secs(WATCH_TIMEOUT.as_secs() + 2);

impl Abandoned {
    /// Whether `error`, or one of its sources, is a watch cut here for silence.
    pub fn is_silence(error: &(dyn std::error::Error + 'static)) -> bool {
        matches!(
            crate::controller::client::stack::body::in_chain(error),
            Some(Abandoned::Silent(_))
        )
    }
}

impl Activity {
    /// Starts recording responses to `path`, as if it had answered now.
    pub fn register(&self, path: &str) {
        let now = Instant::now();
        self.lock().insert(
            path.to_string(),
            Seen {
                any: now,
                watch: now,
                silent_drops: 0,
                proved: true,
            },
        );
    }

    /// Time since `path` last delivered anything, and since a watch of it last did; `None`
    /// when it is not registered.
    pub fn ages(&self, path: &str) -> Option<(Duration, Duration)> {
        self.lock()
            .get(path)
            .map(|s| (s.any.elapsed(), s.watch.elapsed()))
    }

    /// A list of `path` that replaced a healthy watch (after 410 Gone) has ended: the watch
    /// following it counts as live from now, as it did before the list.
    pub fn listed(&self, path: &str) {
        self.touch(path, true);
    }

    /// A list of `path` that replaced a silent watch has ended: the watch counts as live from
    /// now if the watch before the list had delivered something (the feed recovers from a
    /// partition), not if it never did (a black hole that lists do not hide).
    pub fn listed_after_silence(&self, path: &str) {
        if let Some(s) = self.lock().get_mut(path)
            && s.proved
        {
            s.watch = Instant::now();
        }
    }

    /// A new watch of `path` answered with its headers: live from now if the watch before it
    /// delivered something; it has to deliver something itself before the next one counts.
    fn watch_started(&self, path: &str) {
        if let Some(s) = self.lock().get_mut(path) {
            if s.proved {
                s.watch = Instant::now();
            }
            s.proved = false;
        }
    }

    fn touch(&self, path: &str, watch: bool) {
        if let Some(s) = self.lock().get_mut(path) {
            let now = Instant::now();
            s.any = now;
            if watch {
                s.watch = now;
                s.proved = true;
            }
        }
    }

    /// How many watches of `path` were given up for silence since the last call.
    pub fn take_silent_drops(&self, path: &str) -> u32 {
        self.lock()
            .get_mut(path)
            .map_or(0, |s| std::mem::take(&mut s.silent_drops))
    }

    fn silent_drop(&self, path: &str) {
        if let Some(s) = self.lock().get_mut(path) {
            s.silent_drops += 1;
        }
    }

    fn is_registered(&self, path: &str) -> bool {
        self.lock().contains_key(path)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Seen>> {
        self.last.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[derive(Clone)]
pub struct DeadlineLayer {
    pub limit: Duration,
    pub silence: Duration,
    pub activity: Arc<Activity>,
}

impl<S> Layer<S> for DeadlineLayer {
    type Service = Deadline<S>;
    fn layer(&self, inner: S) -> Deadline<S> {
        Deadline {
            inner,
            layer: self.clone(),
        }
    }
}

#[derive(Clone)]
pub struct Deadline<S> {
    inner: S,
    layer: DeadlineLayer,
}

/// Whether a request is a watch (`watch=true` in its query).
pub(super) fn is_watch(query: Option<&str>) -> bool {
    query.is_some_and(|q| q.split('&').any(|kv| kv == "watch=true" || kv == "watch=1"))
}

impl<S, B> Service<Request<B>> for Deadline<S>
where
    S: Service<Request<B>, Response = Response<BoxBody>, Error = BoxError>,
    S::Future: Send + 'static,
{
    boxed_answers!();

    fn call(&mut self, req: Request<B>) -> Self::Future {
        let watch = is_watch(req.uri().query());
        let path = req.uri().path().to_string();
        let activity = self
            .layer
            .activity
            .is_registered(&path)
            .then(|| (self.layer.activity.clone(), path));
        let limit = self.layer.limit;
        let silence = self.layer.silence;
        let start = Instant::now();
        let answer = self.inner.call(req);
        Box::pin(async move {
            let response = match tokio::time::timeout(limit, answer).await {
                Ok(r) => r?,
                Err(_) => return Err(Abandoned::NoAnswer(limit).into()),
            };
            if watch
                && response.status().is_success()
                && let Some((a, p)) = &activity
            {
                a.watch_started(p);
            }
            let clock = if watch {
                Clock::Silence(silence)
            } else {
                Clock::Total(limit, start + limit)
            };
            Ok(response.map(|body| Box::new(DeadlineBody::new(body, clock, activity)) as BoxBody))
        })
    }
}

#[derive(Clone, Copy)]
enum Clock {
    /// the whole answer by this instant
    Total(Duration, Instant),
    /// a byte at least this often
    Silence(Duration),
}

/// A response body held to its deadline.
struct DeadlineBody {
    inner: BoxBody,
    clock: Clock,
    sleep: Pin<Box<Sleep>>,
    activity: Option<(Arc<Activity>, String)>,
    /// the last frame, or the start
    last: Instant,
    /// ended, with its end or an error
    done: bool,
}

impl Drop for DeadlineBody {
    /// A watch dropped unfinished after a long silence was given up by its reader: recorded,
    /// so that the feed says so (the reader itself may say nothing).
    fn drop(&mut self) {
        if let (Clock::Silence(_), false, Some((a, p))) = (self.clock, self.done, &self.activity)
            && self.last.elapsed() >= GIVEN_UP_AFTER
        {
            a.silent_drop(p);
        }
    }
}

impl DeadlineBody {
    fn new(inner: BoxBody, clock: Clock, activity: Option<(Arc<Activity>, String)>) -> Self {
        let at = match clock {
            Clock::Total(_, at) => at,
            Clock::Silence(d) => Instant::now() + d,
        };
        DeadlineBody {
            inner,
            clock,
            sleep: Box::pin(tokio::time::sleep_until(at)),
            activity,
            last: Instant::now(),
            done: false,
        }
    }
}

impl HttpBody for DeadlineBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(frame) => {
                this.last = Instant::now();
                this.done = !matches!(frame, Some(Ok(_)));
                if let Clock::Silence(d) = this.clock {
                    this.sleep.as_mut().reset(Instant::now() + d);
                }
                if let Some((a, p)) = &this.activity {
                    a.touch(p, matches!(this.clock, Clock::Silence(_)));
                }
                Poll::Ready(frame)
            }
            Poll::Pending => match this.sleep.as_mut().poll(cx) {
                Poll::Ready(()) => {
                    // cut here: the error tells the reader why, so no drop is recorded
                    this.done = true;
                    Poll::Ready(Some(Err(match this.clock {
                        Clock::Total(limit, _) => Abandoned::NoAnswer(limit).into(),
                        Clock::Silence(d) => Abandoned::Silent(d).into(),
                    })))
                }
                Poll::Pending => Poll::Pending,
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use crate::controller::client::stack::deadline::*;
    use http_body_util::BodyExt;
    use tower::ServiceExt;

    type Mock = tower_test::mock::Mock<Request<()>, Response<BoxBody>>;
    type Handle = tower_test::mock::Handle<Request<()>, Response<BoxBody>>;

    fn layered(activity: Arc<Activity>) -> (Deadline<Mock>, Handle) {
        let (mock, handle): (Mock, Handle) = tower_test::mock::pair();
        let layer = DeadlineLayer {
            limit: Duration::from_secs(20),
            silence: Duration::from_secs(40),
            activity,
        };
        (layer.layer(mock), handle)
    }

    fn get(uri: &str) -> Request<()> {
        Request::builder().uri(uri).body(()).unwrap()
    }

    /// A body that sends what the test pushes into its channel.
    fn channel_body() -> (tokio::sync::mpsc::Sender<Bytes>, BoxBody) {
        let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(4);
        let stream = futures::stream::unfold(rx, |mut rx| async move {
            rx.recv()
                .await
                .map(|b| (Ok::<_, BoxError>(Frame::data(b)), rx))
        });
        (
            tx,
            Box::new(http_body_util::StreamBody::new(Box::pin(stream))),
        )
    }

    #[tokio::test(start_paused = true)]
    async fn a_request_without_headers_is_abandoned_at_its_limit() {
        let (svc, mut handle) = layered(Arc::default());
        let call = tokio::spawn(svc.oneshot(get("/apis/g/v1/shoots")));
        let (_req, _respond) = handle.next_request().await.unwrap();
        let Err(err) = call.await.unwrap() else {
            panic!("answered")
        };
        assert_eq!(err.to_string(), "no answer within 20s");
    }

    #[tokio::test(start_paused = true)]
    async fn a_silent_watch_is_cut_and_a_talking_one_is_not() {
        let activity = Arc::new(Activity::default());
        activity.register("/apis/g/v1/shoots");
        let (svc, mut handle) = layered(activity.clone());
        let call = tokio::spawn(svc.oneshot(get("/apis/g/v1/shoots?watch=true&timeoutSeconds=30")));
        let (_req, respond) = handle.next_request().await.unwrap();
        let (tx, body) = channel_body();
        respond.send_response(Response::new(body));
        let mut body = call.await.unwrap().unwrap().into_body();
        // bytes every 35 s keep it open well past the silence limit
        for _ in 0..3 {
            tokio::time::sleep(Duration::from_secs(35)).await;
            tx.send(Bytes::from_static(b"{}\n")).await.unwrap();
            let frame = body.frame().await.unwrap().unwrap();
            assert_eq!(frame.into_data().unwrap(), "{}\n");
            let (any, watch) = activity.ages("/apis/g/v1/shoots").unwrap();
            assert!(any.is_zero() && watch.is_zero());
        }
        let before = Instant::now();
        let err = body.frame().await.unwrap().unwrap_err();
        assert_eq!(before.elapsed(), Duration::from_secs(40));
        assert!(
            matches!(err.downcast_ref::<Abandoned>(), Some(Abandoned::Silent(_))),
            "{err}"
        );
        let (any, watch) = activity.ages("/apis/g/v1/shoots").unwrap();
        assert_eq!(
            (any, watch),
            (Duration::from_secs(40), Duration::from_secs(40))
        );
        drop(tx);
    }

    /// A watch its reader drops after a long silence (kube's watcher gives up on its own) is
    /// recorded for the feed to report; one dropped early, or one that ended, is not.
    #[tokio::test(start_paused = true)]
    async fn a_watch_given_up_for_silence_is_recorded() {
        let activity = Arc::new(Activity::default());
        activity.register("/apis/g/v1/shoots");
        let (mut svc, mut handle) = layered(activity.clone());
        for (silent_for, ends, recorded) in [(33, false, 1), (5, false, 0), (33, true, 0)] {
            let (tx, mut body) = watch(&mut svc, &mut handle, false).await;
            if ends {
                drop(tx);
                assert!(body.frame().await.is_none());
                tokio::time::sleep(Duration::from_secs(silent_for)).await;
            } else {
                tokio::time::sleep(Duration::from_secs(silent_for)).await;
                drop(tx);
            }
            drop(body);
            assert_eq!(
                activity.take_silent_drops("/apis/g/v1/shoots"),
                recorded,
                "silent for {silent_for}s, ended: {ends}"
            );
        }
    }

    /// After a partition or a freeze, a new watch and a relist make the feed live at once when
    /// the watch before them delivered something; a watch that never delivered anything (a
    /// black hole) lends no such credit to the next one, nor to a list.
    #[tokio::test(start_paused = true)]
    async fn a_new_watch_or_a_relist_counts_as_activity_only_after_a_watch_that_delivered() {
        let path = "/apis/g/v1/shoots";
        let activity = Arc::new(Activity::default());
        activity.register(path);
        let (mut svc, mut handle) = layered(activity.clone());
        let watch_age = || activity.ages(path).unwrap().1;
        // a watch that talks, then a partition: 50 s without a byte
        let _first = watch(&mut svc, &mut handle, true).await;
        tokio::time::sleep(Duration::from_secs(50)).await;
        assert_eq!(watch_age(), Duration::from_secs(50));
        // healed: the relist that replaced the silent watch counts
        activity.listed_after_silence(path);
        assert_eq!(watch_age(), Duration::ZERO);
        tokio::time::sleep(Duration::from_secs(5)).await;
        // and so does the new watch's start, before its first byte
        let _second = watch(&mut svc, &mut handle, false).await;
        assert_eq!(watch_age(), Duration::ZERO);
        // that watch never delivers: neither the next list nor the next watch count
        tokio::time::sleep(Duration::from_secs(45)).await;
        activity.listed_after_silence(path);
        let _third = watch(&mut svc, &mut handle, false).await;
        assert_eq!(watch_age(), Duration::from_secs(45));
    }

    /// A watch answered with headers, after one frame if `delivers`: its body and sender.
    async fn watch(
        svc: &mut Deadline<Mock>,
        handle: &mut Handle,
        delivers: bool,
    ) -> (tokio::sync::mpsc::Sender<Bytes>, BoxBody) {
        let call = tokio::spawn(
            svc.ready()
                .await
                .unwrap()
                .call(get("/apis/g/v1/shoots?watch=true&timeoutSeconds=30")),
        );
        let (_req, respond) = handle.next_request().await.unwrap();
        let (tx, body) = channel_body();
        respond.send_response(Response::new(body));
        let mut body = call.await.unwrap().unwrap().into_body();
        if delivers {
            tx.send(Bytes::from_static(b"{}\n")).await.unwrap();
            body.frame().await.unwrap().unwrap();
        }
        (tx, body)
    }

    #[tokio::test(start_paused = true)]
    async fn a_list_must_deliver_its_whole_body_within_the_limit() {
        let (svc, mut handle) = layered(Arc::default());
        let call = tokio::spawn(svc.oneshot(get("/apis/g/v1/shoots?limit=500")));
        let (_req, respond) = handle.next_request().await.unwrap();
        let (tx, body) = channel_body();
        tokio::time::sleep(Duration::from_secs(5)).await;
        respond.send_response(Response::new(body));
        let mut body = call.await.unwrap().unwrap().into_body();
        tx.send(Bytes::from_static(b"{")).await.unwrap();
        body.frame().await.unwrap().unwrap();
        let err = body.frame().await.unwrap().unwrap_err();
        assert_eq!(err.to_string(), "no answer within 20s");
        assert!(matches!(
            err.downcast_ref::<Abandoned>(),
            Some(Abandoned::NoAnswer(_))
        ));
        drop(tx);
    }

    #[test]
    fn only_watch_queries_are_watches() {
        assert!(is_watch(Some("allowWatchBookmarks=true&watch=true")));
        assert!(!is_watch(Some("watch=false")));
        assert!(!is_watch(Some("labelSelector=watch%3Dtrue")));
        assert!(!is_watch(None));
    }
}
