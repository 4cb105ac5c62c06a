//! A deduplicating work queue with per-key delays, in the manner of client-go's workqueue.
//!
//! A key is never handed to two workers at once: a key added while it is being processed is
//! marked dirty and handed out again once [`Queue::done`] is called. A delayed key that is added
//! without delay (a relevant change) jumps the queue but keeps its failure count, so the next
//! backoff still grows.
//!
//! Keys wait for one of two things. A shoot that does not fit waits for its backoff or for a
//! relevant change, whichever comes first ([`Queue::add_backoff`], [`Queue::wake_delayed`]). A
//! shoot whose bind failed on an API error waits out its retry delay only
//! ([`Queue::add_retry`]): a change of the landscape does not make the API server answer
//! differently, so such keys are never woken early.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::controller::metrics::runtime::WorkqueueMetrics;
use tokio::sync::Notify;
use tokio::time::Instant;

/// Exponential backoff per key: `initial × 2^failures`, capped at `max`.
#[derive(Clone, Copy, Debug)]
pub struct BackoffPolicy {
    pub initial: Duration,
    pub max: Duration,
}

impl BackoffPolicy {
    /// The wait after the `failures + 1`-th failed attempt in a row.
    pub fn delay(&self, failures: u32) -> Duration {
        let factor = 2u32.saturating_pow(failures.min(31));
        self.initial.saturating_mul(factor).min(self.max)
    }

    /// The most attempts one key can make within `window` from its first, if every attempt
    /// took no time: the bound that tests and the reliability docs hold retries to.
    pub fn attempts_within(&self, window: Duration) -> usize {
        let mut at = Duration::ZERO;
        (0u32..)
            .take_while(|&failures| {
                at = at.saturating_add(self.delay(failures));
                at <= window
            })
            .count()
            + 1
    }
}

#[derive(Default)]
struct Inner {
    ready: VecDeque<Arc<str>>,
    /// keys in `ready`
    queued: HashSet<Arc<str>>,
    processing: HashSet<Arc<str>>,
    /// added while processing: hand out again on `done`
    dirty: HashSet<Arc<str>>,
    /// being processed when a relevant change woke the waiting keys: the attempt may have
    /// decided on the landscape before the change, so a wait for a change it ends with is not
    /// taken (it is queued again at once)
    changed_while_processing: HashSet<Arc<str>>,
    /// (due, sequence) -> key; `due_of` is the reverse index
    delayed: BTreeMap<(Instant, u64), Arc<str>>,
    due_of: HashMap<Arc<str>, (Instant, u64)>,
    /// delayed keys that a relevant change may queue early (waiting for the landscape, not for
    /// the API server)
    wakeable: HashSet<Arc<str>>,
    failures: HashMap<Arc<str>, u32>,
    /// API errors per key, counted apart so that a transient error after many unschedulable
    /// attempts is not retried only after the long backoff those built up
    api_errors: HashMap<Arc<str>, u32>,
    seq: u64,
    shut_down: bool,
    metrics: Option<Arc<WorkqueueMetrics>>,
}

impl Inner {
    fn cancel_delay(&mut self, key: &str) {
        if let Some(at) = self.due_of.remove(key) {
            self.delayed.remove(&at);
        }
        self.wakeable.remove(key);
    }

    fn push_ready(&mut self, key: Arc<str>) {
        let added = if self.processing.contains(&key) {
            self.dirty.insert(key.clone())
        } else if self.queued.insert(key.clone()) {
            self.ready.push_back(key.clone());
            true
        } else {
            false
        };
        if added && let Some(m) = &self.metrics {
            m.add(&key);
        }
    }

    /// Moves every due delayed key to `ready`; returns the next due instant, if any.
    fn promote_due(&mut self, now: Instant) -> Option<Instant> {
        while let Some((&(at, seq), _)) = self.delayed.first_key_value() {
            if at > now {
                return Some(at);
            }
            let key = self.delayed.remove(&(at, seq)).expect("first key exists");
            self.due_of.remove(&key);
            self.wakeable.remove(&key);
            self.push_ready(key);
        }
        None
    }
}

/// The queue of shoot keys (`namespace/name`) waiting for a decision.
#[derive(Clone)]
pub struct Queue {
    inner: Arc<Mutex<Inner>>,
    notify: Arc<Notify>,
    backoff: BackoffPolicy,
}

impl Queue {
    pub fn new(backoff: BackoffPolicy) -> Self {
        Queue {
            inner: Arc::default(),
            notify: Arc::new(Notify::new()),
            backoff,
        }
    }

    /// A queue that reports to `metrics` as controller-runtime's queue reports.
    pub fn with_metrics(backoff: BackoffPolicy, metrics: Arc<WorkqueueMetrics>) -> Self {
        let q = Queue::new(backoff);
        q.lock().metrics = Some(metrics);
        q
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues a key now (cancelling any pending delay for it).
    pub fn add(&self, key: &str) {
        let mut q = self.lock();
        if q.shut_down {
            return;
        }
        q.cancel_delay(key);
        q.push_ready(key.into());
        drop(q);
        self.notify.notify_one();
    }

    /// Queues a key after `delay`, unless it is already due sooner; a relevant change may queue
    /// it earlier.
    pub fn add_after(&self, key: &str, delay: Duration) {
        self.delay(key, delay, true);
    }

    fn delay(&self, key: &str, delay: Duration, wakeable: bool) {
        if delay.is_zero() {
            return self.add(key);
        }
        let mut q = self.lock();
        if q.shut_down {
            return;
        }
        if let Some(m) = &q.metrics {
            m.retry();
        }
        if q.queued.contains(key) || q.dirty.contains(key) {
            return;
        }
        if wakeable && q.changed_while_processing.remove(key) {
            drop(q);
            return self.add(key);
        }
        let due = Instant::now() + delay;
        if let Some(&(at, _)) = q.due_of.get(key)
            && at <= due
        {
            return;
        }
        q.cancel_delay(key);
        q.seq += 1;
        let slot = (due, q.seq);
        let key: Arc<str> = key.into();
        q.delayed.insert(slot, key.clone());
        if wakeable {
            q.wakeable.insert(key.clone());
        }
        q.due_of.insert(key, slot);
        drop(q);
        // a waiting worker may need to shorten its sleep
        self.notify.notify_one();
    }

    /// Queues a key after its next backoff delay and counts one more failure.
    pub fn add_backoff(&self, key: &str) -> Duration {
        let delay = {
            let mut q = self.lock();
            let n = q.failures.entry(key.into()).or_insert(0);
            let d = self.backoff.delay(*n);
            *n = n.saturating_add(1);
            d
        };
        self.add_after(key, delay);
        delay
    }

    /// Queues a key after an API error: after `first`, then twice as long after each further
    /// error, up to the backoff maximum (or `first`, if that is longer), so that a failing API
    /// server is not asked again at a fixed rate. Nothing but the delay queues it again: no
    /// landscape change, no other shoot's failure.
    pub fn add_retry(&self, key: &str, first: Duration) -> Duration {
        let delay = self.next_retry(key, first, 0);
        self.delay(key, delay, false);
        delay
    }

    /// As [`Queue::add_retry`], but no sooner than `at_least` (the server's `Retry-After`).
    pub fn add_retry_at_least(&self, key: &str, first: Duration, at_least: Duration) -> Duration {
        let delay = self.next_retry(key, first, 0).max(at_least);
        self.delay(key, delay, false);
        delay
    }

    /// Queues a key after a conflict (the shoot changed since it was read): the first one at
    /// once, since deciding again on the fresh version is the fix; when conflicts repeat, as
    /// [`Queue::add_retry`] from `first`.
    pub fn add_conflict_retry(&self, key: &str, first: Duration) -> Duration {
        let delay = self.next_retry(key, first, 1);
        self.delay(key, delay, false);
        delay
    }

    /// The retry delay after the key's next API error, counting it: zero for the first `free`
    /// errors, then `first`, doubling up to the backoff maximum.
    fn next_retry(&self, key: &str, first: Duration, free: u32) -> Duration {
        let mut q = self.lock();
        let n = q.api_errors.entry(key.into()).or_insert(0);
        let policy = BackoffPolicy {
            initial: first,
            max: self.backoff.max.max(first),
        };
        let d = match n.checked_sub(free) {
            Some(k) => policy.delay(k),
            None => Duration::ZERO,
        };
        *n = n.saturating_add(1);
        d
    }

    /// Queues now every key that waits for a relevant change (one happened); keys waiting out
    /// an API error's retry delay keep waiting. Failure counts are kept.
    pub fn wake_delayed(&self) -> usize {
        let mut q = self.lock();
        let processing: Vec<Arc<str>> = q.processing.iter().cloned().collect();
        q.changed_while_processing.extend(processing);
        let keys: Vec<Arc<str>> = q.wakeable.drain().collect();
        let n = keys.len();
        for k in keys {
            if let Some(at) = q.due_of.remove(&k) {
                q.delayed.remove(&at);
            }
            q.push_ready(k);
        }
        drop(q);
        if n > 0 {
            self.notify.notify_waiters();
            self.notify.notify_one();
        }
        n
    }

    /// Queues `key` now if it waits for a relevant change; `false` (and nothing changes) when it
    /// is not delayed or waits out an API error's retry delay.
    pub fn wake(&self, key: &str) -> bool {
        let mut q = self.lock();
        let Some(k) = q.wakeable.take(key) else {
            return false;
        };
        if let Some(at) = q.due_of.remove(key) {
            q.delayed.remove(&at);
        }
        q.push_ready(k);
        drop(q);
        self.notify.notify_one();
        true
    }

    /// Queues `key` now unless it waits out an API error's retry delay (then it keeps waiting).
    pub fn add_unless_retrying(&self, key: &str) {
        {
            let q = self.lock();
            if q.due_of.contains_key(key) && !q.wakeable.contains(key) {
                return;
            }
        }
        self.add(key);
    }

    /// Resets a key's failure count (it was scheduled, or is no longer pending).
    pub fn forget(&self, key: &str) {
        let mut q = self.lock();
        q.failures.remove(key);
        q.api_errors.remove(key);
        q.cancel_delay(key);
    }

    /// Failures counted for a key since it was last forgotten.
    pub fn failures(&self, key: &str) -> u32 {
        self.lock().failures.get(key).copied().unwrap_or(0)
    }

    /// Waits for the next key; `None` once the queue is shut down.
    pub async fn next(&self) -> Option<Arc<str>> {
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let wake_at = {
                let mut q = self.lock();
                if q.shut_down {
                    return None;
                }
                let next_due = q.promote_due(Instant::now());
                if let Some(key) = q.ready.pop_front() {
                    q.queued.remove(&key);
                    q.processing.insert(key.clone());
                    if let Some(m) = &q.metrics {
                        m.get(&key);
                    }
                    if !q.ready.is_empty() {
                        // let another idle worker pick up the rest
                        self.notify.notify_one();
                    }
                    return Some(key);
                }
                next_due
            };
            match wake_at {
                Some(at) => {
                    tokio::select! {
                        _ = &mut notified => {}
                        _ = tokio::time::sleep_until(at) => {}
                    }
                }
                None => notified.await,
            }
        }
    }

    /// Marks a key handed out by [`Queue::next`] as finished.
    pub fn done(&self, key: &str) {
        let mut q = self.lock();
        q.processing.remove(key);
        q.changed_while_processing.remove(key);
        if let Some(m) = &q.metrics {
            m.done(key);
        }
        if let Some(k) = q.dirty.take(key) {
            // counted as added when it was marked dirty
            if q.queued.insert(k.clone()) {
                q.ready.push_back(k);
            }
            drop(q);
            self.notify.notify_one();
        }
    }

    /// Keys waiting now or later (not counting those being processed).
    pub fn len(&self) -> usize {
        let q = self.lock();
        q.ready.len() + q.delayed.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Stops handing out keys; waiting workers get `None`.
    pub fn shut_down(&self) {
        self.lock().shut_down = true;
        self.notify.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use crate::controller::queue::*;

    fn queue() -> Queue {
        Queue::new(BackoffPolicy {
            initial: Duration::from_secs(1),
            max: Duration::from_secs(8),
        })
    }

    #[test]
    fn attempts_within_a_window_follow_the_doubling_delays() {
        let policy = BackoffPolicy {
            initial: Duration::from_secs(1),
            max: Duration::from_secs(4),
        };
        // attempts at 0, 1, 3, 7, 11, 15, 19 s
        let within = |s| policy.attempts_within(Duration::from_secs(s));
        assert_eq!(
            [0, 1, 2, 3, 7, 10, 11, 20].map(within),
            [1, 2, 2, 3, 4, 4, 5, 7]
        );
    }

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let p = BackoffPolicy {
            initial: Duration::from_secs(1),
            max: Duration::from_secs(1000),
        };
        let delays: Vec<u64> = (0..12).map(|n| p.delay(n).as_secs()).collect();
        assert_eq!(delays, [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1000, 1000]);
        assert_eq!(p.delay(u32::MAX), Duration::from_secs(1000));
    }

    #[tokio::test]
    async fn a_key_added_twice_is_handed_out_once() {
        let q = queue();
        q.add("a");
        q.add("a");
        q.add("b");
        assert_eq!(q.next().await.as_deref(), Some("a"));
        assert_eq!(q.next().await.as_deref(), Some("b"));
        assert!(q.is_empty());
    }

    #[tokio::test]
    async fn a_key_added_while_processing_comes_back_after_done() {
        let q = queue();
        q.add("a");
        let k = q.next().await.unwrap();
        q.add("a");
        assert!(
            q.is_empty(),
            "not handed to a second worker while processing"
        );
        q.done(&k);
        assert_eq!(q.next().await.as_deref(), Some("a"));
    }

    /// A change that comes while a key is being processed (its decision may have read the
    /// landscape before it) is not lost: the wait for a change the attempt ends with is not
    /// taken. A retry after an API error is not shortened by it.
    #[tokio::test(start_paused = true)]
    async fn a_change_during_an_attempt_queues_its_key_again_instead_of_a_wait() {
        let q = queue();
        q.add("a");
        let k = q.next().await.unwrap();
        assert_eq!(q.wake_delayed(), 0, "nothing was waiting");
        q.add_backoff(&k);
        q.done(&k);
        let start = Instant::now();
        assert_eq!(q.next().await.as_deref(), Some("a"));
        assert_eq!(
            start.elapsed(),
            Duration::ZERO,
            "at once, not after the backoff"
        );
        q.done("a");
        // without a change meanwhile the backoff holds
        q.add("b");
        let k = q.next().await.unwrap();
        q.add_backoff(&k);
        q.done(&k);
        let start = Instant::now();
        assert_eq!(q.next().await.as_deref(), Some("b"));
        assert!(start.elapsed() >= Duration::from_secs(1));
        q.done("b");
        // an API error's retry is not shortened by a change
        q.add("c");
        let k = q.next().await.unwrap();
        q.wake_delayed();
        q.add_retry(&k, Duration::from_secs(7));
        q.done(&k);
        let start = Instant::now();
        assert_eq!(q.next().await.as_deref(), Some("c"));
        assert_eq!(start.elapsed(), Duration::from_secs(7));
    }

    #[tokio::test(start_paused = true)]
    async fn delayed_keys_come_due_and_backoff_grows() {
        let q = queue();
        assert_eq!(q.add_backoff("a"), Duration::from_secs(1));
        let start = Instant::now();
        let k = q.next().await.unwrap();
        assert_eq!(start.elapsed(), Duration::from_secs(1));
        q.done(&k);
        assert_eq!(q.add_backoff("a"), Duration::from_secs(2));
        assert_eq!(
            q.add_backoff("a"),
            Duration::from_secs(4),
            "a later backoff does not delay an earlier due time"
        );
        let start = Instant::now();
        q.next().await.unwrap();
        assert_eq!(start.elapsed(), Duration::from_secs(2));
        q.forget("a");
        assert_eq!(q.failures("a"), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn api_error_retries_grow_from_their_first_delay_apart_from_unschedulable_backoff() {
        let q = queue(); // backoff 1s..8s
        for _ in 0..5 {
            q.add_backoff("a");
        }
        let delays: Vec<u64> = (0..4)
            .map(|_| q.add_retry("a", Duration::from_secs(3)).as_secs())
            .collect();
        assert_eq!(delays, [3, 6, 8, 8], "capped at backoff.max");
        assert_eq!(
            q.add_retry("b", Duration::from_secs(20)),
            Duration::from_secs(20),
            "a first delay above backoff.max is kept"
        );
        q.forget("a");
        assert_eq!(
            q.add_retry("a", Duration::from_secs(3)),
            Duration::from_secs(3)
        );
    }

    #[tokio::test(start_paused = true)]
    async fn waking_delayed_keys_queues_them_now_and_keeps_the_failure_count() {
        let q = queue();
        q.add_backoff("a");
        q.add_backoff("b");
        assert_eq!(q.wake_delayed(), 2);
        let start = Instant::now();
        let mut got = vec![
            q.next().await.unwrap().to_string(),
            q.next().await.unwrap().to_string(),
        ];
        got.sort();
        assert_eq!(got, ["a", "b"]);
        assert_eq!(start.elapsed(), Duration::ZERO);
        assert_eq!(q.failures("a"), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn keys_waiting_out_an_api_error_are_not_woken_by_changes() {
        let q = queue();
        q.add_backoff("unschedulable");
        q.add_retry("refused", Duration::from_secs(5));
        assert_eq!(q.wake_delayed(), 1);
        assert!(
            !q.wake("refused"),
            "a single wake does not cut the retry short"
        );
        q.add_unless_retrying("refused");
        q.add_unless_retrying("new");
        let start = Instant::now();
        assert_eq!(q.next().await.as_deref(), Some("unschedulable"));
        assert_eq!(q.next().await.as_deref(), Some("new"));
        assert_eq!(start.elapsed(), Duration::ZERO);
        assert_eq!(q.next().await.as_deref(), Some("refused"));
        assert_eq!(start.elapsed(), Duration::from_secs(5));
    }

    #[tokio::test(start_paused = true)]
    async fn a_change_of_the_key_itself_cuts_its_retry_delay_short() {
        let q = queue();
        q.add_retry("refused", Duration::from_secs(5));
        q.add("refused");
        let start = Instant::now();
        assert_eq!(q.next().await.as_deref(), Some("refused"));
        assert_eq!(start.elapsed(), Duration::ZERO);
    }

    #[tokio::test(start_paused = true)]
    async fn a_single_waiting_key_can_be_woken_once() {
        let q = queue();
        q.add_backoff("a");
        assert!(q.wake("a"));
        assert!(!q.wake("a"), "already queued");
        assert_eq!(q.len(), 1);
        assert!(!q.wake("unknown"));
    }

    #[tokio::test(start_paused = true)]
    async fn the_first_conflict_is_retried_at_once_and_repeats_back_off() {
        let q = queue(); // backoff max 8 s
        let delays: Vec<u64> = (0..5)
            .map(|_| q.add_conflict_retry("a", Duration::from_secs(3)).as_secs())
            .collect();
        assert_eq!(delays, [0, 3, 6, 8, 8]);
    }

    #[tokio::test(start_paused = true)]
    async fn an_immediate_add_cancels_a_pending_delay() {
        let q = queue();
        q.add_after("a", Duration::from_secs(100));
        q.add("a");
        let k = q.next().await.unwrap();
        q.done(&k);
        assert!(q.is_empty(), "the delayed copy is gone");
    }

    #[tokio::test]
    async fn shutting_down_releases_waiting_workers() {
        let q = queue();
        let waiter = tokio::spawn({
            let q = q.clone();
            async move { q.next().await }
        });
        tokio::task::yield_now().await;
        q.shut_down();
        assert_eq!(waiter.await.unwrap(), None);
    }
}
