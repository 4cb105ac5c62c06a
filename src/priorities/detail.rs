//! What a raw value means (`12 shoots`, `38 ms (measured)`), rendered only when it is shown.
//!
//! A decision carries a detail for every feasible seed and priority, and most of them are never
//! read: the controller shows the winner's, `simulate` the ones it prints. Formatting them all
//! eagerly cost more than the scoring itself, so a detail keeps its values and formats them on
//! demand (`Display`, `Serialize`).

use std::fmt;
use std::sync::Arc;

use serde::{Serialize, Serializer};

type Render = dyn Fn(&mut fmt::Formatter<'_>) -> fmt::Result + Send + Sync;

#[derive(Clone)]
pub struct Detail(Inner);

#[derive(Clone)]
enum Inner {
    Static(&'static str),
    Text(Arc<str>),
    Lazy(Arc<Render>),
}

impl Detail {
    /// A detail written by `render` when shown; `render` owns the values it needs.
    pub fn lazy(
        render: impl Fn(&mut fmt::Formatter<'_>) -> fmt::Result + Send + Sync + 'static,
    ) -> Self {
        Detail(Inner::Lazy(Arc::new(render)))
    }
}

impl Default for Detail {
    fn default() -> Self {
        Detail(Inner::Static(""))
    }
}

impl From<&'static str> for Detail {
    fn from(s: &'static str) -> Self {
        Detail(Inner::Static(s))
    }
}

impl From<String> for Detail {
    fn from(s: String) -> Self {
        Detail(Inner::Text(s.into()))
    }
}

impl fmt::Display for Detail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Inner::Static(s) => f.write_str(s),
            Inner::Text(s) => f.write_str(s),
            Inner::Lazy(render) => render(f),
        }
    }
}

impl fmt::Debug for Detail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.to_string(), f)
    }
}

/// Details are equal when they read the same.
impl PartialEq for Detail {
    fn eq(&self, other: &Self) -> bool {
        self.to_string() == other.to_string()
    }
}

impl PartialEq<&str> for Detail {
    fn eq(&self, other: &&str) -> bool {
        self.to_string().as_str() == *other
    }
}

impl Serialize for Detail {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lazy_detail_reads_like_the_text_it_renders() {
        let n = 3;
        let lazy = Detail::lazy(move |f| write!(f, "{n} shoots"));
        assert_eq!(lazy.to_string(), "3 shoots");
        assert_eq!(lazy, Detail::from("3 shoots".to_string()));
        assert_eq!(lazy, "3 shoots");
        assert_eq!(format!("{lazy:?}"), "\"3 shoots\"");
        assert_eq!(serde_json::to_value(&lazy).unwrap(), "3 shoots");
        assert_ne!(lazy, Detail::from("4 shoots"));
    }

    #[test]
    fn a_detail_renders_only_when_shown() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let rendered = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&rendered);
        let d = Detail::lazy(move |f| {
            counter.fetch_add(1, Ordering::Relaxed);
            f.write_str("x")
        });
        let copy = d.clone();
        assert_eq!(rendered.load(Ordering::Relaxed), 0);
        assert_eq!(copy.to_string(), "x");
        assert_eq!(rendered.load(Ordering::Relaxed), 1);
    }
}
