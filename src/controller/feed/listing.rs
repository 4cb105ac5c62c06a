//! How a feed reads its kind: first the kind's whole state, then a watch of its changes.
//!
//! The state comes as one watch that sends it object by object (`sendInitialEvents=true`, a
//! streaming list: no list pages for the server to copy and encode whole, none for this process
//! to hold) and ends it with a bookmark marked `k8s.io/initial-events-end`; only then is the kind
//! complete. An API server that refuses the request (400 or 422: older than Kubernetes 1.27, or
//! the `WatchList` feature off) is listed in pages from then on; a stream that ends twice before
//! its end marker (cut, or slower than [`INITIAL_EVENTS_TIMEOUT`]) has its next list made in
//! pages, and so has a list whose stream the server answered with any other error but 403 and
//! 404 (a 429 while its watch cache initializes after a restart), and a stream past one of its
//! bounds ([`StreamLimits`]: no end marker in time, no object for a while, too many unreadable
//! events or objects), given up with a WARN line. After the state, changes are
//! watched from its resourceVersion, each watch ended by the server every [`WATCH_TIMEOUT`] and
//! resumed where it stopped; a 410 Gone starts over.
//!
//! Either way each object is decoded as its bytes arrive: a watch line by line
//! (`lines.rs`), a page item by item (`pages.rs`); no page is held whole.
//!
//! The items are kube's watcher events, so the feed applies both ways alike: `Init` before each
//! list (streamed or paged), `InitApply` for each object of it, `InitDone` when it is complete.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::controller::client::stack::WATCH_TIMEOUT;
use crate::controller::feed::lines::{self, Wire};
use crate::controller::feed::pages::{self, Page, Piece};
pub use crate::controller::feed::stream_limits::StreamLimits;
use crate::controller::feed::stream_limits::StreamProgress;
pub use crate::controller::metrics::ListMode;
use futures::stream::BoxStream;
use futures::{Stream, StreamExt};
use kube::api::{Api, ListParams, VersionMatch, WatchEvent, WatchParams};
use kube::runtime::watcher::{Error, Event};
use tokio::time::Instant;
use tracing::{info, warn};

/// How long the server may take to stream a kind's state (its `timeoutSeconds` for that
/// watch): long enough for a landscape of 100,000 shoots on a loaded server. The watch that
/// follows asks for [`WATCH_TIMEOUT`] again.
pub const INITIAL_EVENTS_TIMEOUT: Duration = Duration::from_secs(600);

/// The annotation of the bookmark that ends a streamed state.
const INITIAL_EVENTS_END: &str = "k8s.io/initial-events-end";

/// What a feed's lists need to know, kept across the streams a feed makes.
#[derive(Clone)]
pub struct ListSettings {
    pub label_selector: Option<String>,
    pub page_size: u32,
    /// set once the server refused a streaming list: the feed lists in pages from then on
    pub streaming_refused: Arc<AtomicBool>,
    /// told the mode of every list once the server answered its first request
    pub on_list: Arc<dyn Fn(ListMode) + Send + Sync>,
    pub kind: &'static str,
    /// the bounds of one streamed state
    pub stream_limits: StreamLimits,
}

impl ListSettings {
    /// Settings that stream when the server can (`streaming`), or always page.
    pub fn new(
        kind: &'static str,
        label_selector: Option<String>,
        page_size: u32,
        streaming: bool,
        on_list: Arc<dyn Fn(ListMode) + Send + Sync>,
    ) -> ListSettings {
        ListSettings {
            label_selector,
            page_size,
            streaming_refused: Arc::new(AtomicBool::new(!streaming)),
            on_list,
            kind,
            stream_limits: StreamLimits::DEFAULT,
        }
    }

    fn list_params(&self, continue_token: Option<String>) -> ListParams {
        ListParams {
            label_selector: self.label_selector.clone(),
            limit: Some(self.page_size),
            continue_token,
            resource_version: Some("0".into()),
            version_match: Some(VersionMatch::NotOlderThan),
            ..Default::default()
        }
    }

    fn watch_params(&self, initial_events: bool) -> WatchParams {
        WatchParams {
            label_selector: self.label_selector.clone(),
            timeout: Some(if initial_events {
                INITIAL_EVENTS_TIMEOUT.as_secs() as u32
            } else {
                WATCH_TIMEOUT.as_secs() as u32
            }),
            bookmarks: true,
            send_initial_events: initial_events,
            ..Default::default()
        }
    }
}

type Events<I> = BoxStream<'static, kube::Result<WatchEvent<I>>>;

enum State<I> {
    /// the next step lists the kind
    Empty,
    /// a paged list: the next step asks for the page that starts at this continue token (the
    /// first page without one)
    Paging { continue_token: Option<String> },
    /// a page being read, item by item as its bytes arrive
    Page { page: Page<I> },
    /// a streaming list, until its marked bookmark or one of its bounds
    Streaming {
        stream: Events<I>,
        progress: StreamProgress,
    },
    /// the state is complete at this version; the next step watches from it
    Listed { resource_version: String },
    Watching {
        resource_version: String,
        stream: Events<I>,
    },
}

struct Lister<I: Clone + 'static> {
    api: Api<I>,
    settings: ListSettings,
    state: State<I>,
    /// streamed lists in a row that ended before their marker
    unfinished_streams: u32,
}

/// The feed's events: lists (streamed where the server can) and watches, until dropped.
pub fn events<I>(api: Api<I>, settings: ListSettings) -> impl Stream<Item = Result<Event<I>, Error>>
where
    I: kube::Resource + Clone + Wire + std::fmt::Debug + Send + 'static,
{
    let lister = Lister {
        api,
        settings,
        state: State::Empty,
        unfinished_streams: 0,
    };
    futures::stream::unfold(lister, |mut lister| async move {
        let item = lister.next().await;
        Some((item, lister))
    })
}

/// A 400 or 422 to a streaming list: the server does not take its parameters.
fn refuses_streaming(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == 400 || s.code == 422)
}

impl<I> Lister<I>
where
    I: kube::Resource + Clone + Wire + std::fmt::Debug + Send + 'static,
{
    async fn next(&mut self) -> Result<Event<I>, Error> {
        loop {
            if let Some(item) = self.step().await {
                return item;
            }
        }
    }

    /// `obj` as the watch brought it, as `event`: the watch goes on from the object's
    /// resourceVersion; an object without one ends it.
    fn watched(
        &mut self,
        stream: Events<I>,
        obj: I,
        event: fn(I) -> Event<I>,
    ) -> Option<Result<Event<I>, Error>> {
        match obj
            .meta()
            .resource_version
            .clone()
            .filter(|v| !v.is_empty())
        {
            Some(resource_version) => {
                self.state = State::Watching {
                    resource_version,
                    stream,
                };
                Some(Ok(event(obj)))
            }
            None => Some(Err(Error::NoResourceVersion)),
        }
    }

    /// One step: an item to yield, or none when the state moved on without one.
    async fn step(&mut self) -> Option<Result<Event<I>, Error>> {
        match std::mem::replace(&mut self.state, State::Empty) {
            State::Empty => Some(self.begin_list().await),
            State::Paging { continue_token } => {
                let first_page = continue_token.is_none();
                match pages::request(&self.api, &self.settings.list_params(continue_token)).await {
                    Ok(page) => {
                        if first_page {
                            // counted once the server answered, as a stream is
                            (self.settings.on_list)(ListMode::Paged);
                        }
                        self.state = State::Page { page };
                        None
                    }
                    Err(e) => Some(Err(Error::InitialListFailed(e))),
                }
            }
            State::Page { mut page } => match page.next().await {
                Ok(Piece::Item(obj)) => {
                    self.state = State::Page { page };
                    Some(Ok(Event::InitApply(obj)))
                }
                Ok(Piece::End(meta)) => {
                    let resource_version = meta.resource_version.filter(|s| !s.is_empty());
                    let continue_token = meta.continue_.filter(|s| !s.is_empty());
                    match (continue_token, resource_version) {
                        (None, Some(resource_version)) => {
                            self.state = State::Listed { resource_version };
                            Some(Ok(Event::InitDone))
                        }
                        (None, None) => Some(Err(Error::NoResourceVersion)),
                        (Some(continue_token), _) => {
                            self.state = State::Paging {
                                continue_token: Some(continue_token),
                            };
                            None
                        }
                    }
                }
                // what arrived of the list is not the whole state: it is listed again
                Err(e) => Some(Err(Error::InitialListFailed(e))),
            },
            State::Streaming {
                mut stream,
                mut progress,
            } => {
                let limits = self.settings.stream_limits;
                let next = tokio::time::timeout_at(progress.deadline(&limits), stream.next()).await;
                let item = match next {
                    Ok(item) => item,
                    Err(_) => return Some(self.give_up_stream(&progress, &limits)),
                };
                if let Some(Ok(WatchEvent::Added(_) | WatchEvent::Modified(_))) = &item {
                    progress.objects += 1;
                    progress.last_object = Instant::now();
                }
                if let Some(Err(_)) = &item {
                    progress.unreadable += 1;
                }
                if progress.exceeded(Instant::now(), &limits).is_some() {
                    return Some(self.give_up_stream(&progress, &limits));
                }
                self.streamed(item, stream, progress)
            }
            State::Listed { resource_version } => {
                match lines::watch(
                    &self.api,
                    &self.settings.watch_params(false),
                    &resource_version,
                )
                .await
                {
                    Ok(stream) => {
                        self.state = State::Watching {
                            resource_version,
                            stream,
                        };
                        None
                    }
                    Err(e) => {
                        self.state = State::Listed { resource_version };
                        Some(Err(Error::WatchStartFailed(e)))
                    }
                }
            }
            State::Watching {
                resource_version,
                mut stream,
            } => match stream.next().await {
                Some(Ok(WatchEvent::Added(obj) | WatchEvent::Modified(obj))) => {
                    self.watched(stream, obj, Event::Apply)
                }
                Some(Ok(WatchEvent::Deleted(obj))) => self.watched(stream, obj, Event::Delete),
                Some(Ok(WatchEvent::Bookmark(bm))) => {
                    self.state = State::Watching {
                        resource_version: bm.metadata.resource_version,
                        stream,
                    };
                    None
                }
                Some(Ok(WatchEvent::Error(status))) => {
                    if status.code != 410 {
                        self.state = State::Watching {
                            resource_version,
                            stream,
                        };
                    }
                    Some(Err(Error::WatchError(status)))
                }
                Some(Err(e)) => {
                    self.state = State::Watching {
                        resource_version,
                        stream,
                    };
                    Some(Err(Error::WatchFailed(e)))
                }
                None => {
                    self.state = State::Listed { resource_version };
                    None
                }
            },
        }
    }

    /// Takes one item of a streamed state.
    fn streamed(
        &mut self,
        item: Option<kube::Result<WatchEvent<I>>>,
        stream: Events<I>,
        progress: StreamProgress,
    ) -> Option<Result<Event<I>, Error>> {
        match item {
            Some(Ok(WatchEvent::Added(obj) | WatchEvent::Modified(obj))) => {
                self.state = State::Streaming { stream, progress };
                Some(Ok(Event::InitApply(obj)))
            }
            Some(Ok(WatchEvent::Deleted(_))) => {
                // not sent before the marker; nothing to take from the state
                self.state = State::Streaming { stream, progress };
                None
            }
            Some(Ok(WatchEvent::Bookmark(bm))) => {
                if bm.metadata.annotations.contains_key(INITIAL_EVENTS_END) {
                    self.unfinished_streams = 0;
                    // The watch that follows asks for the usual timeout, so that the
                    // server ends it (with a bookmark) as often as every other watch.
                    self.state = State::Listed {
                        resource_version: bm.metadata.resource_version,
                    };
                    Some(Ok(Event::InitDone))
                } else {
                    self.state = State::Streaming { stream, progress };
                    None
                }
            }
            Some(Ok(WatchEvent::Error(status))) => {
                // 410: listed again from scratch; others: the stream goes on, or ends
                if status.code == 410 {
                    self.unfinished_streams += 1;
                } else {
                    self.state = State::Streaming { stream, progress };
                }
                Some(Err(Error::WatchError(status)))
            }
            Some(Err(e)) => {
                // One event that could not be read; a broken connection ends the stream. The
                // first is the feed's error (logged, and backed off from); the others are
                // counted to the stream's bound without a backoff each, which would keep an
                // unreadable stream open for hours.
                let first = progress.unreadable == 1;
                self.state = State::Streaming { stream, progress };
                if first {
                    Some(Err(Error::WatchFailed(e)))
                } else {
                    tracing::debug!(kind = self.settings.kind, error = %crate::controller::client::brief::brief(&e), "an event of the streamed list could not be read");
                    None
                }
            }
            None => {
                // ended before its marker: what arrived is not the whole state
                self.unfinished_streams += 1;
                None
            }
        }
    }

    /// A streamed state past one of its bounds: dropped, and this list made in pages at once,
    /// as client-go's reflector falls back to a list; the next list streams again.
    fn give_up_stream(
        &mut self,
        progress: &StreamProgress,
        limits: &StreamLimits,
    ) -> Result<Event<I>, Error> {
        let why = progress
            .exceeded(Instant::now(), limits)
            .unwrap_or_else(|| "no end marker in time".to_string());
        warn!(
            kind = self.settings.kind,
            reason = %why,
            objects = progress.objects,
            "the streamed list is given up; this list is made in pages"
        );
        self.state = State::Paging {
            continue_token: None,
        };
        Ok(Event::Init)
    }

    /// Starts a list: a streaming one unless the server refused it or the last two ended
    /// unfinished, then in pages.
    async fn begin_list(&mut self) -> Result<Event<I>, Error> {
        let kind = self.settings.kind;
        let refused = self.settings.streaming_refused.load(Ordering::Relaxed);
        if !refused && self.unfinished_streams < 2 {
            match lines::watch(&self.api, &self.settings.watch_params(true), "0").await {
                Ok(stream) => {
                    (self.settings.on_list)(ListMode::Streaming);
                    self.state = State::Streaming {
                        stream,
                        progress: StreamProgress::new(Instant::now()),
                    };
                    return Ok(Event::Init);
                }
                Err(e) if refuses_streaming(&e) => {
                    self.settings
                        .streaming_refused
                        .store(true, Ordering::Relaxed);
                    warn!(
                        kind,
                        error = %crate::controller::client::brief::brief(&e),
                        "the API server does not serve streaming lists; listing in pages"
                    );
                }
                // Any other error answer (a 429 while its watch cache initializes, a 5xx): this
                // list is made in pages now, as client-go's reflector does, and the next one
                // streams again. A 404 or 403 would be the pages' answer too: it is the feed's
                // failed list at once (a kind not served, no permission).
                Err(e) if matches!(&e, kube::Error::Api(s) if s.code != 404 && s.code != 403) => {
                    info!(
                        kind,
                        error = %crate::controller::client::brief::brief(&e),
                        "the streaming list was not served; this list is made in pages"
                    );
                }
                // no answer (the server unreachable), a 404 or 403: a page would fare no better
                Err(e) => return Err(Error::InitialListFailed(e)),
            }
        } else if !refused {
            info!(
                kind,
                "two streamed lists in a row ended before their end; this list is made in pages"
            );
            self.unfinished_streams = 0;
        }
        self.state = State::Paging {
            continue_token: None,
        };
        Ok(Event::Init)
    }
}

#[cfg(test)]
mod tests {
    use crate::controller::feed::listing::*;

    #[test]
    fn a_streamed_state_is_bounded_by_its_deadline_its_stall_its_unreadable_events_and_its_objects()
    {
        let limits = StreamLimits {
            end: Duration::from_secs(100),
            stall: Duration::from_secs(10),
            unreadable: 3,
            objects: 5,
        };
        let t0 = Instant::now();
        let s = Duration::from_secs;
        // (case, now, last object, unreadable, objects, why)
        let cases = [
            ("within every bound", 9, 0, 2, 5, None::<&str>),
            ("objects keep it going", 99, 95, 0, 5, None),
            (
                "past the deadline",
                100,
                99,
                0,
                1,
                Some("no end marker within 100s"),
            ),
            ("stalled", 20, 10, 0, 1, Some("no object for 10s")),
            ("unreadable", 1, 1, 3, 1, Some("3 events could not be read")),
            ("too many objects", 1, 1, 0, 6, Some("more than 5 objects")),
        ];
        for (case, now, last, unreadable, objects, why) in cases {
            let progress = StreamProgress {
                started: t0,
                last_object: t0 + s(last),
                unreadable,
                objects,
            };
            let got = progress.exceeded(t0 + s(now), &limits);
            match (why, got) {
                (None, None) => {}
                (Some(w), Some(g)) => assert!(g.contains(w), "{case}: {g}"),
                (w, g) => panic!("{case}: wanted {w:?}, got {g:?}"),
            }
        }
        let progress = StreamProgress::new(t0);
        assert_eq!(progress.deadline(&limits), t0 + s(10));
    }
}
