//! The bounds of one streamed state, on this side of the wire: however the server or a proxy
//! between behaves, a streamed list ends in time or is given up (`listing` then lists in pages).

use std::time::Duration;

use tokio::time::Instant;

/// The most a streamed state may take on this side, whatever the server does with its
/// `timeoutSeconds` ((`listing::INITIAL_EVENTS_TIMEOUT`)): a proxy that keeps the stream open past it
/// would keep the kind unsynced, and the process unready, for ever.
pub const STREAM_END_DEADLINE: Duration = Duration::from_secs(660);

/// How long a streamed state may go without an object: bookmarks without the end marker, or
/// lines that cannot be read, do not keep it going. A server streaming a large state sends
/// objects all along.
pub const STREAM_STALL: Duration = Duration::from_secs(60);

/// Events of one streamed state that could not be read before it is given up.
pub const STREAM_UNREADABLE: u32 = 100;

/// Objects one streamed state may bring: ten times the largest landscape the scheduler is
/// sized for (100,000 shoots). A stream that sends more is not a state but an endless answer.
pub const STREAM_OBJECTS: u64 = 1_000_000;

/// The bounds of one streamed state (see the constants above).
#[derive(Clone, Copy, Debug)]
pub struct StreamLimits {
    pub end: Duration,
    pub stall: Duration,
    pub unreadable: u32,
    pub objects: u64,
}

impl StreamLimits {
    pub const DEFAULT: StreamLimits = StreamLimits {
        end: STREAM_END_DEADLINE,
        stall: STREAM_STALL,
        unreadable: STREAM_UNREADABLE,
        objects: STREAM_OBJECTS,
    };
}

/// What one streamed state has brought so far, against its [`StreamLimits`].
#[derive(Debug)]
pub(in crate::controller) struct StreamProgress {
    pub(in crate::controller) started: Instant,
    pub(in crate::controller) last_object: Instant,
    pub(in crate::controller) unreadable: u32,
    pub(in crate::controller) objects: u64,
}

impl StreamProgress {
    pub(in crate::controller) fn new(now: Instant) -> StreamProgress {
        StreamProgress {
            started: now,
            last_object: now,
            unreadable: 0,
            objects: 0,
        }
    }

    /// When the stream is given up unless its end marker arrives first.
    pub(in crate::controller) fn deadline(&self, limits: &StreamLimits) -> Instant {
        (self.started + limits.end).min(self.last_object + limits.stall)
    }

    /// Why the stream is given up now, if it is.
    pub(in crate::controller) fn exceeded(
        &self,
        now: Instant,
        limits: &StreamLimits,
    ) -> Option<String> {
        if now >= self.started + limits.end {
            Some(format!("no end marker within {}s", limits.end.as_secs()))
        } else if now >= self.last_object + limits.stall {
            Some(format!(
                "no object for {}s, and no end marker",
                limits.stall.as_secs()
            ))
        } else if self.unreadable >= limits.unreadable {
            Some(format!("{} events could not be read", self.unreadable))
        } else if self.objects > limits.objects {
            Some(format!("more than {} objects", limits.objects))
        } else {
            None
        }
    }
}
