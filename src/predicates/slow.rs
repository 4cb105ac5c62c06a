//! `TestSlow` (tests only, the `test-util` feature): keeps every seed, but takes `delayMs` for
//! each seed it is asked about when the shoot is one of `shoots` — a filter slower than it
//! should be, for the tests of the decision budget. Counts its slow calls in [`SLOW_CALLS`].

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde::Deserialize;

use crate::context::ShootContext;
use crate::field_error::FieldError;
use crate::plugin::parse_args;
use crate::snapshot::{SeedInfo, Snapshot};

use super::framework::{Predicate, Prepared, Verdict, Why};

pub const NAME: &str = "TestSlow";

/// Arguments for generated landscapes: slow for no shoot.
pub const EXAMPLE: &str = "{}";

/// Slow calls made so far, by every `TestSlow` filter of the process.
pub static SLOW_CALLS: AtomicUsize = AtomicUsize::new(0);

struct TestSlow {
    delay: Duration,
    shoots: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
struct Args {
    delay_ms: u64,
    /// `namespace/name` of the shoots it is slow for
    shoots: Vec<String>,
}

pub(super) fn build(
    args: &serde_json::Value,
    path: &str,
) -> Result<Box<dyn Predicate>, Vec<FieldError>> {
    let a: Args = parse_args(args, path)?;
    Ok(Box::new(TestSlow {
        delay: Duration::from_millis(a.delay_ms.min(60_000)),
        shoots: a.shoots,
    }))
}

impl Predicate for TestSlow {
    fn name(&self) -> &'static str {
        NAME
    }

    fn check(
        &self,
        cx: &ShootContext,
        _state: &Prepared,
        _seed: &SeedInfo,
        _snap: &Snapshot,
        _why: Why,
    ) -> Verdict {
        if self.shoots.contains(&cx.key) {
            SLOW_CALLS.fetch_add(1, Ordering::SeqCst);
            std::thread::sleep(self.delay);
        }
        Ok(())
    }
}
