//! Why a seed was rejected, and how rejections add up into one line a person can act on.
//!
//! Every reason is declared by the plugin that produces it, in the plugin's own file: a type
//! implementing [`Declared`] with its name (as `simulate -o json` and the metrics write it), its
//! per-seed message (`Display`), the phrase counted across seeds (`3 seed(s) are in another
//! region`) and what the user could change ([`Declared::hint`]). Nothing here knows which
//! reasons exist. A [`Reason`] is one such value, shared by the seeds it is the same for.
//! [`Tally`] counts rejections by phrase and hint, as the one-line failure message reads them.
//!
//! [`Declared`]: crate::reason::Declared
//! [`Declared::hint`]: crate::reason::Declared::hint
//! [`Reason`]: crate::reason::Reason
//! [`Tally`]: crate::reason::Tally

use std::any::Any;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use rustc_hash::FxHashMap;
use serde::Serialize;
use serde::ser::SerializeMap;

/// A reason declared by the plugin that produces it, in the plugin's own file.
pub trait Declared: fmt::Debug + fmt::Display + Send + Sync + Any {
    /// Its name in `simulate -o json`, in the metrics and among a fit error's reason names
    /// (camelCase).
    fn name(&self) -> &'static str;
    /// The phrase counted across seeds (`are in another region`), as [`Reason::summary`].
    fn summary(&self) -> &'static str;
    /// What the shoot's owner or the operator could change, as [`Reason::hint`].
    fn hint(&self) -> Option<String> {
        None
    }
    /// The seed turned the shoot away for lack of room: a slot freed there may let it in.
    fn lacks_room(&self) -> bool {
        false
    }
}

/// Declares a reason in its plugin's file: [`Declared`] with its name, phrase and, where given,
/// hint and lack of room, and `Display` with its per-seed message. `self` (and the formatter)
/// are named where the hint and the message read them.
///
/// ```ignore
/// declared!(Stopped {
///     name: "emergencyStop",
///     summary: "have reconciliations stopped",
///     message(self, f): f.write_str("seed has emergency-stop-reconciliations set"),
/// });
/// ```
macro_rules! declared {
    ($ty:ident {
        name: $name:literal,
        summary: $summary:literal,
        $(hint($hint_self:ident): $hint:expr,)?
        $(lacks_room: $room:literal,)?
        message($self:ident, $f:ident): $message:expr $(,)?
    }) => {
        impl $crate::reason::Declared for $ty {
            fn name(&self) -> &'static str {
                $name
            }

            fn summary(&self) -> &'static str {
                $summary
            }

            $(fn hint(&$hint_self) -> Option<String> {
                $hint
            })?

            $(fn lacks_room(&self) -> bool {
                $room
            })?
        }

        impl std::fmt::Display for $ty {
            fn fmt(&$self, $f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                $message
            }
        }
    };
}

pub(crate) use declared;

/// A [`Declared`] reason, shared by the seeds it is the same for (cloning it copies a pointer).
#[derive(Clone)]
pub struct Reason(Arc<dyn Declared>);

impl Reason {
    pub fn new(reason: impl Declared + 'static) -> Reason {
        Reason(Arc::new(reason))
    }

    /// Its name (camelCase), as `simulate -o json` and the metrics write it.
    pub fn name(&self) -> &'static str {
        self.0.name()
    }

    /// The phrase counted across seeds in the one-line failure message.
    pub fn summary(&self) -> &'static str {
        self.0.summary()
    }

    /// What the shoot's owner or the operator could change, when there is a clear answer.
    pub fn hint(&self) -> Option<String> {
        self.0.hint()
    }

    /// The seed turned the shoot away for lack of room.
    pub fn lacks_room(&self) -> bool {
        self.0.lacks_room()
    }

    /// The declared value, if it is a `T` (for the declaring plugin's own tests).
    pub fn get<T: Declared>(&self) -> Option<&T> {
        let any: &dyn Any = &*self.0;
        any.downcast_ref()
    }

    /// The same value (not only an equal one): seeds sharing one reason.
    fn same(&self, other: &Reason) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl fmt::Debug for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

/// Equal when of the same name with the same message.
impl PartialEq for Reason {
    fn eq(&self, other: &Self) -> bool {
        self.same(other) || (self.name() == other.name() && self.to_string() == other.to_string())
    }
}

impl Eq for Reason {}

/// Its name under `reason`, its message under `message`.
impl Serialize for Reason {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("reason", self.name())?;
        map.serialize_entry("message", &self.to_string())?;
        map.end()
    }
}

/// Rejections counted: seeds per phrase, seeds per hint, and the seeds that lacked room. What
/// the one-line failure message, the hints, the reason names and the controller's capacity
/// refusals read; a decision in either mode builds it, explain mode also lists each rejection.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Tally {
    /// (phrase, reason name, seeds), by phrase and name.
    phrases: Vec<(&'static str, &'static str, usize)>,
    /// (hint, seeds), by hint.
    hints: Vec<(String, usize)>,
    /// The seeds that turned the shoot away for lack of room, by name.
    full: Vec<Arc<str>>,
}

impl Tally {
    /// The seeds counted.
    pub fn seeds(&self) -> usize {
        self.phrases.iter().map(|p| p.2).sum()
    }

    /// The seeds that turned the shoot away for lack of room.
    pub fn full(&self) -> &[Arc<str>] {
        &self.full
    }

    /// `0/N seeds are available: …`, phrases ordered by count (most first), then
    /// alphabetically, so the line is deterministic.
    pub fn message(&self, total: usize) -> String {
        if total == 0 {
            return "0/0 seeds are available: no seeds are registered.".into();
        }
        let mut counts: BTreeMap<&'static str, usize> = BTreeMap::new();
        for (phrase, _, n) in &self.phrases {
            *counts.entry(phrase).or_default() += n;
        }
        let mut parts: Vec<(&str, usize)> = counts.into_iter().collect();
        parts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        let phrases: Vec<String> = parts
            .iter()
            .map(|(phrase, n)| format!("{n} seed(s) {phrase}"))
            .collect();
        format!("0/{total} seeds are available: {}.", phrases.join(", "))
    }

    /// Hints on what to change, deduplicated, most common first, at most three.
    pub fn hints(&self) -> Vec<String> {
        let mut hints = self.hints.clone();
        hints.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        hints.into_iter().map(|(h, _)| h).take(3).collect()
    }

    /// The distinct names of the reasons counted, sorted.
    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.phrases.iter().map(|p| p.1.to_string()).collect();
        names.sort();
        names.dedup();
        names
    }
}

/// Builds a [`Tally`] one rejected seed, or one group of seeds sharing a reason, at a time; each
/// reason value is looked at once (its phrase, hint and room), so counting another seed that
/// shares it costs a lookup. The tally does not depend on the order of counting.
#[derive(Default)]
pub struct Counter {
    tally: Tally,
    /// Per reason value seen, by its address (the clone kept here keeps that address its own):
    /// the index of its phrase and of its hint, and whether it lacked room.
    seen: FxHashMap<usize, (Reason, Entry)>,
    /// The address of the last reason counted (kept alive in `seen`) and its entry: runs of
    /// seeds sharing one skip the lookup.
    last: Option<(usize, Entry)>,
}

/// A reason's phrase index, hint index and room.
type Entry = (usize, Option<usize>, bool);

impl Counter {
    /// Counts `seed` as rejected for `reason`.
    pub fn add(&mut self, seed: &Arc<str>, reason: &Reason) {
        self.add_many(reason, 1, std::iter::once(seed));
    }

    /// Counts `n` seeds as rejected for one `reason`; `seeds` names them, read only when the
    /// reason is a lack of room.
    pub fn add_many<'s>(
        &mut self,
        reason: &Reason,
        n: usize,
        seeds: impl IntoIterator<Item = &'s Arc<str>>,
    ) {
        let key = Arc::as_ptr(&reason.0) as *const () as usize;
        let (phrase, hint, full) = match self.last {
            Some((last, entry)) if last == key => entry,
            _ => {
                let entry = match self.seen.get(&key) {
                    Some((_, entry)) => *entry,
                    None => {
                        let entry = self.entry_of(reason);
                        self.seen.insert(key, (reason.clone(), entry));
                        entry
                    }
                };
                self.last = Some((key, entry));
                entry
            }
        };
        self.tally.phrases[phrase].2 += n;
        if let Some(h) = hint {
            self.tally.hints[h].1 += n;
        }
        if full {
            self.tally.full.extend(seeds.into_iter().map(Arc::clone));
        }
    }

    fn entry_of(&mut self, reason: &Reason) -> Entry {
        let (summary, name) = (reason.summary(), reason.name());
        let phrases = &mut self.tally.phrases;
        let phrase = match phrases
            .iter()
            .position(|p| (std::ptr::eq(p.0, summary) || p.0 == summary) && p.1 == name)
        {
            Some(i) => i,
            None => {
                phrases.push((summary, name, 0));
                phrases.len() - 1
            }
        };
        let hint = reason.hint().map(|h| {
            let hints = &mut self.tally.hints;
            match hints.iter().position(|(x, _)| *x == h) {
                Some(i) => i,
                None => {
                    hints.push((h, 0));
                    hints.len() - 1
                }
            }
        });
        (phrase, hint, reason.lacks_room())
    }

    /// The tally, in an order of its own (phrases, hints and full seeds sorted), whatever the
    /// order the seeds were counted in.
    pub fn finish(mut self) -> Tally {
        let t = &mut self.tally;
        t.phrases
            .sort_unstable_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
        t.hints.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        t.full.sort_unstable();
        self.tally
    }
}

/// Counts `(seed, reason)` rejections into a [`Tally`].
pub fn tally<'a>(rejections: impl IntoIterator<Item = (&'a Arc<str>, &'a Reason)>) -> Tally {
    let mut counter = Counter::default();
    for (seed, reason) in rejections {
        counter.add(seed, reason);
    }
    counter.finish()
}

/// Reasons for tests of code that reads reasons without producing them.
#[cfg(test)]
pub(crate) mod testing {
    use super::{Declared, Reason};

    /// A reason with a name and a phrase; its message is `name`, its hint `hint`.
    #[derive(Debug)]
    pub struct Example {
        pub name: &'static str,
        pub summary: &'static str,
        pub hint: Option<&'static str>,
        pub lacks_room: bool,
    }

    impl Declared for Example {
        fn name(&self) -> &'static str {
            self.name
        }

        fn summary(&self) -> &'static str {
            self.summary
        }

        fn hint(&self) -> Option<String> {
            self.hint.map(str::to_string)
        }

        fn lacks_room(&self) -> bool {
            self.lacks_room
        }
    }

    impl std::fmt::Display for Example {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.name)
        }
    }

    /// As a full seed says it.
    pub fn full() -> Reason {
        Reason::new(Example {
            name: "capacity",
            summary: "have no capacity left",
            hint: Some("raise status.allocatable.shoots or add a seed"),
            lacks_room: true,
        })
    }

    /// As a seed of another region says it.
    pub fn elsewhere() -> Reason {
        Reason::new(Example {
            name: "otherRegion",
            summary: "are in another region",
            hint: None,
            lacks_room: false,
        })
    }
}

#[cfg(test)]
mod tests;
