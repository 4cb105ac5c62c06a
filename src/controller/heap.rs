//! Giving the heap back: what a list or a burst of shoots used, glibc's malloc keeps. It returns
//! the top of its heap on its own, but what lies below live objects stays resident until
//! `malloc_trim` hands the free pages back. The feeds count the shoots they apply; the free
//! pages go back when a list of shoots is complete, and at housekeeping (every 10 s) once
//! [`TRIM_AFTER`] shoots were applied since the last time (a burst of new shoots, their binds).
//! Nothing else changes: the same objects stay where they are.
//!
//! The figures (RSS before and after, on the relist after a burst) are in
//! docs/performance.md, section 9.

use std::sync::atomic::{AtomicU64, Ordering};

use tracing::debug;

/// Shoots applied (listed, changed or deleted) after which housekeeping gives the heap back.
pub const TRIM_AFTER: u64 = 1_000;

/// Shoots applied since the heap was last given back.
#[derive(Default)]
pub struct Churn {
    shoots: AtomicU64,
}

impl Churn {
    /// One shoot applied.
    pub fn shoot(&self) {
        self.shoots.fetch_add(1, Ordering::Relaxed);
    }

    /// Gives the heap back if [`TRIM_AFTER`] shoots were applied since the last time.
    pub fn settle(&self) {
        if self.shoots.load(Ordering::Relaxed) >= TRIM_AFTER {
            self.give_back();
        }
    }

    /// Gives the heap back now (a list of shoots is complete).
    pub fn give_back(&self) {
        self.shoots.store(0, Ordering::Relaxed);
        let before = resident_kib();
        trim();
        debug!(
            rss_kib_before = before,
            rss_kib_after = resident_kib(),
            "free heap pages given back"
        );
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
fn trim() {
    // SAFETY: malloc_trim only releases free memory of glibc's own arenas; it takes their
    // locks and touches no live allocation.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn trim() {}

/// The process's resident set in KiB (0 where /proc does not tell).
fn resident_kib() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| pages * 4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_heap_is_given_back_once_enough_shoots_were_applied() {
        let churn = Churn::default();
        for _ in 0..TRIM_AFTER - 1 {
            churn.shoot();
        }
        churn.settle();
        assert_eq!(churn.shoots.load(Ordering::Relaxed), TRIM_AFTER - 1);
        churn.shoot();
        churn.settle();
        assert_eq!(churn.shoots.load(Ordering::Relaxed), 0);
    }

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn free_pages_below_live_objects_go_back() {
        // 64 MiB in 4 KB blocks, all but every sixteenth freed: free pages lie between live
        // ones, below the top of the heap, where malloc's own trimming never reaches
        let mut blocks: Vec<Vec<u8>> = (0..16_384).map(|_| vec![1u8; 4000]).collect();
        let mut kept = Vec::new();
        for (i, b) in blocks.drain(..).enumerate() {
            if i % 16 == 0 {
                kept.push(b);
            }
        }
        let before = resident_kib();
        trim();
        let after = resident_kib();
        assert!(
            after + 16 * 1024 < before,
            "{before} KiB before, {after} KiB after"
        );
        drop(kept);
    }
}
