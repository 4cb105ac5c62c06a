//! How each kind reaches the cache: first its whole state, then a watch of its changes
//! (`listing.rs`), read as the bytes arrive (`pages.rs` for list pages, `lines.rs` for watch
//! events) and decoded one object at a time (`incoming.rs`); `watch.rs` feeds each kind into the
//! cache and `sync.rs` tells when every kind has been listed once. `stream_limits.rs` bounds a
//! streamed list on this side of the wire.

pub(super) mod ages;
pub(super) mod carbon;
pub(super) mod incoming;
pub(super) mod lines;
pub(super) mod listing;
pub(super) mod pages;
pub(super) mod stream_limits;
pub(super) mod sync;
pub(super) mod watch;
