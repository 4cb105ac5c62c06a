//! Watches feeding the cache. Objects are decoded one by one (see `incoming`), so a single
//! malformed object is reported (with its field path) and skipped instead of failing the list
//! of its whole kind.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::api::{
    CloudProfile, ConfigMap, LABEL_SCHEDULING_PURPOSE, NamespacedCloudProfile,
    PURPOSE_CARBON_INTENSITY, PURPOSE_REGION_CONFIG, Project, Seed, Shoot, object_key,
};
use crate::controller::cache::{Cache, Change, OtherUpdate, Sent, ShootUpdate, WatchedKind};
use crate::controller::client::brief::brief_watch;
use crate::controller::client::permissions::{feed_forbidden, feed_permission};
use crate::controller::client::stack::{Abandoned, WATCH_TIMEOUT};
use crate::controller::feed::carbon;
use crate::controller::feed::incoming::{Incoming, WatchedShoot};
use crate::controller::feed::listing::{self, ListSettings};
use crate::controller::liveness::FEED_SILENCE;
use crate::controller::shared::Shared;
use crate::snapshot::{GARDEN_NAMESPACE, SeedInfo};
use futures::StreamExt;
use kube::api::{Api, ApiResource, DynamicObject};
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use kube::{Client, Resource};
use tokio::time::Instant;
use tracing::{debug, info, warn};

/// Applies an object to the cache: made ready first (shoots: their JSON kept as sent, their
/// gates parsed; seeds: compiled; the other kinds: compacted, parsed, fingerprinted), then
/// stored under the cache's lock, which it takes itself. The decisions and the other watches
/// wait for that lock, so nothing done under it grows with the object. The JSON is the object
/// as sent, where the kind keeps it.
type Apply<K> = fn(&Shared, &K, Option<&str>) -> Change;

/// How one kind is fed into the cache.
struct Feed<K> {
    kind: WatchedKind,
    apply: Apply<K>,
    key: fn(&K) -> String,
    /// what the object shows, for binds not yet settled (shoots)
    seen: Option<fn(&Shared, &K)>,
}

fn name_of<K: Resource>(o: &K) -> String {
    o.meta().name.clone().unwrap_or_default()
}

fn ns_name_of<K: Resource>(o: &K) -> String {
    object_key(o.meta())
}

fn remove(state: &mut Cache, kind: WatchedKind, key: &str) -> Change {
    match kind {
        WatchedKind::Shoot => state.remove_shoot(key),
        WatchedKind::Seed => state.remove_seed(key),
        other => state.remove_other(other, key),
    }
}

/// kube's jittered backoff (0.8 s doubling to 30 s), started again only when the feed made
/// progress. kube's watcher resets its backoff on every item it yields, and it yields `Init`
/// before each list it tries, so with an unreachable server every try would wait the first
/// 0.8 s again: each feed would ask about once a second forever. Here the watcher's resets are
/// ignored; the feed resets the backoff when an object, a deletion or a list's end arrives.
struct FeedBackoff {
    inner: watcher::DefaultBackoff,
    progressed: Arc<AtomicBool>,
}

impl Iterator for FeedBackoff {
    type Item = Duration;
    fn next(&mut self) -> Option<Duration> {
        if self.progressed.swap(false, Ordering::Relaxed) {
            kube::runtime::utils::Backoff::reset(&mut self.inner);
        }
        self.inner.next()
    }
}

impl kube::runtime::utils::Backoff for FeedBackoff {
    fn reset(&mut self) {}
}

/// What a feed logs at WARN only so often. The last failure: the same failure again is logged
/// at DEBUG until [`REPEAT_WARN_EVERY`] has passed, so an unreachable server is one line per kind
/// and not one per try. Malformed objects of a list: the first [`MALFORMED_LOGGED`] are logged
/// one by one, the rest counted and summed up in one line, so a list of broken objects (a
/// server or proxy sending garbage) is not a line per object.
#[derive(Default)]
struct Repeats {
    last: Option<(String, Instant)>,
    /// malformed objects skipped in the current list
    malformed: u64,
}

/// Malformed objects of one list logged one by one.
const MALFORMED_LOGGED: u64 = 10;

/// How often a failure that keeps repeating is logged at WARN again.
const REPEAT_WARN_EVERY: Duration = Duration::from_secs(300);

impl Repeats {
    /// Whether `failure` is news: a first failure, a different one, or the same one after
    /// [`REPEAT_WARN_EVERY`].
    fn is_news(&mut self, failure: &str) -> bool {
        let news = match &self.last {
            Some((last, at)) => last != failure || at.elapsed() >= REPEAT_WARN_EVERY,
            None => true,
        };
        if news {
            self.last = Some((failure.to_string(), Instant::now()));
        }
        news
    }

    fn clear(&mut self) {
        self.last = None;
    }

    /// One malformed object skipped: whether it is logged on its own.
    fn malformed(&mut self, listing: bool) -> bool {
        if !listing {
            return true;
        }
        self.malformed += 1;
        self.malformed <= MALFORMED_LOGGED
    }

    /// A list ended, complete or not: the malformed objects not logged one by one, summed up.
    fn list_ended(&mut self, kind: WatchedKind) {
        let unlogged = std::mem::take(&mut self.malformed).saturating_sub(MALFORMED_LOGGED);
        if unlogged > 0 {
            warn!(
                kind = kind.as_str(),
                ignored = unlogged,
                "more malformed objects ignored in this list, not logged one by one"
            );
        }
    }
}

/// Whether an item of the watcher's stream is progress: anything but an error or the `Init`
/// the watcher yields before each list it tries.
fn is_progress<I>(item: &Result<Event<I>, watcher::Error>) -> bool {
    matches!(item, Ok(e) if !matches!(e, Event::Init))
}

/// Feeds one kind into the cache until aborted. The watch asks the server to end it every
/// [`WATCH_TIMEOUT`] (with a bookmark, so it resumes without a list); after errors it starts
/// again with kube's jittered backoff (0.8 s doubling to 30 s, see [`FeedBackoff`]). A watch that
/// has delivered nothing for [`FEED_SILENCE`] is dropped and the kind listed again (see
/// `liveness`).
async fn run_feed<K, I>(shared: Arc<Shared>, api: Api<I>, labels: Option<String>, feed: Feed<K>)
where
    I: Incoming<K>,
{
    let kind = feed.kind;
    let path = api.resource_url().trim_end_matches('/').to_string();
    let metrics = shared.clone();
    let settings = ListSettings::new(
        kind.as_str(),
        labels,
        shared.list_page_size,
        shared.streaming_lists,
        Arc::new(move |mode| metrics.metrics.listed_as(kind.as_str(), mode)),
    );
    let mut listing = false;
    // the next list replaces a watch dropped for silence (not a healthy one the server ended)
    let mut for_silence = false;
    let progressed = Arc::new(AtomicBool::new(false));
    let mut repeats = Repeats::default();
    loop {
        let mut stream = listing::events(api.clone(), settings.clone())
            .backoff(FeedBackoff {
                inner: watcher::DefaultBackoff::default(),
                progressed: progressed.clone(),
            })
            .boxed();
        let started = Instant::now();
        // when the last list ended: the watch that follows it gets the whole silence too
        let mut listed = started;
        let mut check = tokio::time::interval(Duration::from_secs(1));
        check.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                item = stream.next() => {
                    let Some(item) = item else { break };
                    if is_progress(&item) {
                        progressed.store(true, Ordering::Relaxed);
                        repeats.clear();
                    }
                    let was_listing = listing;
                    apply_item(&shared, &feed, &path, &mut listing, &mut repeats, item);
                    if !was_listing && listing && !for_silence && shared.is_synced(kind) {
                        shared.note_relisting(kind, true);
                    }
                    if was_listing && !listing {
                        listed = Instant::now();
                        if shared.note_relisting(kind, false) {
                            shared.activity.listed(&path);
                        } else {
                            shared.activity.listed_after_silence(&path);
                        }
                        for_silence = false;
                    }
                }
                _ = check.tick() => {
                    // watches the watcher gave up for silence and replaced without a word
                    for _ in 0..shared.activity.take_silent_drops(&path) {
                        warn!(
                            kind = kind.as_str(),
                            "the watch delivered nothing for over {}s, not even a bookmark; watching again",
                            WATCH_TIMEOUT.as_secs()
                        );
                        shared.metrics.watch_restarted(kind.as_str(), "silent");
                    }
                    // A list in progress is not a silent watch: its pages have deadlines of
                    // their own, and at landscape scale a list may take longer than the silence.
                    let silent = shared.feed_age(kind).map(|a| a.watch);
                    if let Some(silent) = silent
                        && !listing
                        && silent > FEED_SILENCE
                        && listed.elapsed() > FEED_SILENCE
                    {
                        warn!(
                            kind = kind.as_str(),
                            silent_for = ?Duration::from_secs(silent.as_secs()),
                            "the watch delivered nothing, not even a bookmark; listing the kind again"
                        );
                        shared.metrics.watch_restarted(kind.as_str(), "silent");
                        for_silence = true;
                        break;
                    }
                }
            }
        }
    }
}

/// Applies one item of a feed's watcher stream to the cache and the queue.
fn apply_item<K, I: Incoming<K>>(
    shared: &Arc<Shared>,
    feed: &Feed<K>,
    path: &str,
    listing: &mut bool,
    repeats: &mut Repeats,
    item: Result<Event<I>, watcher::Error>,
) {
    let kind = feed.kind;
    let event = match item {
        Ok(ev) => ev,
        Err(watcher::Error::InitialListFailed(kube::Error::Api(s)))
            if s.code == 404 || (s.code == 403 && kind.optional()) =>
        {
            // A kind the API server does not serve, or (for kinds the decision can do
            // without) one this process may not list: schedule without it, keep trying.
            if !shared.is_synced(kind) {
                let why = if s.code == 404 {
                    "the API server does not serve this kind".to_string()
                } else {
                    format!(
                        "no permission to list and watch {} (the chart's roles grant it)",
                        feed_permission(kind).qualified_resource()
                    )
                };
                warn!(
                    kind = kind.as_str(),
                    reason = %why,
                    "treating the kind as empty"
                );
                shared.mark_synced(kind);
            } else {
                debug!(kind = kind.as_str(), code = s.code, "list still failing");
            }
            return;
        }
        Err(e) => {
            if Abandoned::is_silence(&e) {
                shared.metrics.watch_restarted(kind.as_str(), "silent");
                warn!(kind = kind.as_str(), error = %brief_watch(&e), "the watch went silent; watching again");
            } else {
                shared.metrics.watch_restarted(kind.as_str(), "error");
                let error = feed_forbidden(kind, &e).unwrap_or_else(|| brief_watch(&e));
                if repeats.is_news(&error) {
                    warn!(kind = kind.as_str(), error = %error, "watch failed; retrying");
                } else {
                    debug!(kind = kind.as_str(), error = %error, "watch failed again; retrying");
                }
            }
            return;
        }
    };
    match event {
        Event::Init => {
            // what an unfinished list before skipped
            repeats.list_ended(kind);
            *listing = true;
            if shared.is_synced(kind) {
                info!(kind = kind.as_str(), "listing again");
            }
            shared.lock().begin_relist(kind);
        }
        Event::InitApply(obj) | Event::Apply(obj) => {
            let raw_key = match kind {
                WatchedKind::Seed | WatchedKind::CloudProfile | WatchedKind::Project => {
                    obj.meta().name.clone().unwrap_or_default()
                }
                _ => object_key(obj.meta()),
            };
            match obj.decode() {
                Ok((typed, raw)) => {
                    let key = (feed.key)(&typed);
                    let change = (feed.apply)(shared, &typed, raw.as_deref());
                    shared.queue_change(Some(&key), change);
                    if let Some(seen) = feed.seen {
                        seen(shared, &typed);
                    }
                    if kind == WatchedKind::CarbonConfigMap && !*listing {
                        carbon::refresh(shared);
                    }
                }
                Err(e) => {
                    shared.lock().mark_seen(kind, &raw_key);
                    if repeats.malformed(*listing) {
                        warn!(kind = kind.as_str(), object = %raw_key, error = %e, "ignoring malformed object");
                    }
                }
            }
        }
        Event::Delete(obj) => {
            let key = match kind {
                WatchedKind::Seed | WatchedKind::CloudProfile | WatchedKind::Project => {
                    obj.meta().name.clone().unwrap_or_default()
                }
                _ => object_key(obj.meta()),
            };
            let change = remove(&mut shared.lock(), kind, &key);
            shared.queue_change(None, change);
            if kind == WatchedKind::Shoot {
                crate::controller::attempt::settled_by_seen(shared, &key, None, false);
            }
            if kind == WatchedKind::CarbonConfigMap {
                carbon::deleted(shared, &key);
            }
        }
        Event::InitDone => {
            repeats.list_ended(kind);
            let change = shared.lock().end_relist(kind);
            shared.queue_change(None, change);
            if *listing && !shared.is_synced(kind) {
                info!(kind = kind.as_str(), "cache synced");
            } else if *listing {
                info!(kind = kind.as_str(), "listed again");
            }
            *listing = false;
            shared.track_feed(kind, path);
            shared.mark_synced(kind);
            // the first report once every cache is synced, whichever kind comes last
            carbon::refresh(shared);
        }
    }
}

/// A shoot the watch shows settles a bind with an unknown outcome (see `attempt`).
fn shoot_seen(shared: &Shared, shoot: &Shoot) {
    let key = object_key(&shoot.metadata);
    crate::controller::attempt::settled_by_seen(
        shared,
        &key,
        Some(shoot.spec.seed_name.as_deref()),
        false,
    );
}

/// A shoot as the watch delivered it: prepared (its JSON kept, its gates parsed) before the
/// cache's lock is taken, which the decisions and the other watches wait for.
fn apply_watched_shoot(shared: &Shared, shoot: &Shoot, raw: Option<&str>) -> Change {
    let update = ShootUpdate::new(shoot, raw.map(Sent::Text), &shared.scheduler_names);
    shared.lock().apply_shoot_update(update)
}

/// A seed as the watch delivered it: compiled (taints, zones, networks, capacity, labels)
/// before the cache's lock is taken. Seeds change with every gardenlet heartbeat.
fn apply_watched_seed(shared: &Shared, seed: &Seed, _raw: Option<&str>) -> Change {
    let info = Arc::new(SeedInfo::from_seed(seed));
    shared.lock().apply_seed_info(info)
}

fn apply_watched_cloud_profile(shared: &Shared, cp: &CloudProfile, _raw: Option<&str>) -> Change {
    let update = OtherUpdate::cloud_profile(cp);
    shared.lock().apply_other(update)
}

fn apply_watched_namespaced_cloud_profile(
    shared: &Shared,
    ncp: &NamespacedCloudProfile,
    _raw: Option<&str>,
) -> Change {
    let update = OtherUpdate::namespaced_cloud_profile(ncp);
    shared.lock().apply_other(update)
}

fn apply_watched_project(shared: &Shared, project: &Project, _raw: Option<&str>) -> Change {
    let update = OtherUpdate::project(project);
    shared.lock().apply_other(update)
}

/// A region ConfigMap: the version stored before is read under the lock (shared, not copied)
/// so that its latency table is kept when the rows did not change; it is freed, if replaced,
/// after the lock is released.
fn apply_watched_region_config_map(shared: &Shared, cm: &ConfigMap, _raw: Option<&str>) -> Change {
    let previous = shared.lock().region_config(&object_key(&cm.metadata));
    let update = OtherUpdate::region_config_map(cm, previous.as_deref());
    shared.lock().apply_other(update)
}

fn apply_watched_carbon_config_map(shared: &Shared, cm: &ConfigMap, _raw: Option<&str>) -> Change {
    let update = OtherUpdate::carbon_config_map(cm);
    shared.lock().apply_other(update)
}

/// How seeds are fed: compiled outside the cache's lock.
fn seed_feed() -> Feed<Seed> {
    Feed::<Seed> {
        kind: WatchedKind::Seed,
        apply: apply_watched_seed,
        key: name_of,
        seen: None,
    }
}

/// How projects are fed.
fn project_feed() -> Feed<Project> {
    Feed::<Project> {
        kind: WatchedKind::Project,
        apply: apply_watched_project,
        key: name_of,
        seen: None,
    }
}

/// How shoots are fed: kept as sent while pending, settling binds they show.
fn shoot_feed() -> Feed<Shoot> {
    Feed::<Shoot> {
        kind: WatchedKind::Shoot,
        apply: apply_watched_shoot,
        key: ns_name_of,
        seen: Some(shoot_seen),
    }
}

fn untyped<K: Resource<DynamicType = ()>>(client: &Client) -> Api<DynamicObject> {
    Api::all_with(client.clone(), &ApiResource::erase::<K>(&()))
}

/// Starts one watch per kind; they run until aborted. Carbon-intensity ConfigMaps are watched
/// only when a profile uses `CarbonIntensity`; otherwise that kind counts as synced and empty.
pub(in crate::controller) fn spawn_all(shared: &Arc<Shared>) -> Vec<tokio::task::JoinHandle<()>> {
    let client = shared.watches.clone();
    let region_configs = Some(format!(
        "{LABEL_SCHEDULING_PURPOSE}={PURPOSE_REGION_CONFIG}"
    ));
    let mut watches = vec![
        tokio::spawn(run_feed(
            shared.clone(),
            Api::<WatchedShoot>::all(client.clone()),
            None,
            shoot_feed(),
        )),
        tokio::spawn(run_feed(
            shared.clone(),
            untyped::<Seed>(&client),
            None,
            seed_feed(),
        )),
        tokio::spawn(run_feed(
            shared.clone(),
            untyped::<CloudProfile>(&client),
            None,
            Feed::<CloudProfile> {
                kind: WatchedKind::CloudProfile,
                apply: apply_watched_cloud_profile,
                key: name_of,
                seen: None,
            },
        )),
        tokio::spawn(run_feed(
            shared.clone(),
            untyped::<NamespacedCloudProfile>(&client),
            None,
            Feed::<NamespacedCloudProfile> {
                kind: WatchedKind::NamespacedCloudProfile,
                apply: apply_watched_namespaced_cloud_profile,
                key: ns_name_of,
                seen: None,
            },
        )),
        tokio::spawn(run_feed(
            shared.clone(),
            untyped::<Project>(&client),
            None,
            project_feed(),
        )),
        tokio::spawn(run_feed(
            shared.clone(),
            Api::<DynamicObject>::namespaced_with(
                client,
                GARDEN_NAMESPACE,
                &ApiResource::erase::<ConfigMap>(&()),
            ),
            region_configs,
            Feed::<ConfigMap> {
                kind: WatchedKind::ConfigMap,
                apply: apply_watched_region_config_map,
                key: ns_name_of,
                seen: None,
            },
        )),
    ];
    if shared.carbon.is_some() {
        watches.push(tokio::spawn(run_feed(
            shared.clone(),
            untyped::<ConfigMap>(&shared.watches),
            Some(format!(
                "{LABEL_SCHEDULING_PURPOSE}={PURPOSE_CARBON_INTENSITY}"
            )),
            Feed::<ConfigMap> {
                kind: WatchedKind::CarbonConfigMap,
                apply: apply_watched_carbon_config_map,
                key: ns_name_of,
                seen: None,
            },
        )));
    } else {
        shared.mark_synced(WatchedKind::CarbonConfigMap);
    }
    watches
}

/// The seed feed alone, for fault-injection tests.
#[cfg(test)]
pub(in crate::controller) async fn run_seed_feed_for_tests(shared: Arc<Shared>) {
    let api = untyped::<Seed>(&shared.watches);
    run_feed(shared, api, None, seed_feed()).await
}

/// The project feed alone, for fault-injection tests.
#[cfg(test)]
pub(in crate::controller) async fn run_project_feed_for_tests(shared: Arc<Shared>) {
    let api = untyped::<Project>(&shared.watches);
    run_feed(shared, api, None, project_feed()).await
}

/// The shoot feed alone, for tests of how a kind is listed.
#[cfg(test)]
pub(in crate::controller) async fn run_shoot_feed_for_tests(shared: Arc<Shared>) {
    let api = Api::<WatchedShoot>::all(shared.watches.clone());
    run_feed(shared, api, None, shoot_feed()).await
}

#[cfg(test)]
mod tests {
    use crate::controller::feed::watch::*;

    #[test]
    fn malformed_objects_of_a_list_are_logged_one_by_one_up_to_ten_and_of_a_watch_always() {
        let mut repeats = Repeats::default();
        let logged = (0..25).filter(|_| repeats.malformed(true)).count();
        assert_eq!(logged as u64, MALFORMED_LOGGED);
        assert!(
            repeats.malformed(false),
            "a change the watch sends is logged"
        );
        repeats.list_ended(WatchedKind::Shoot);
        assert_eq!(repeats.malformed, 0);
        assert!(repeats.malformed(true), "the next list logs again");
    }
}
