//! Scheduling gates: the annotation [`ANNOTATION_GATES`] on a Shoot lists gates, comma-separated;
//! a shoot with one is not decided (nor moved by `plan apply`) until the list is empty, as
//! kube-scheduler's `spec.schedulingGates` hold a Pod. Each gate is a qualified name, as a label
//! key; a malformed value holds the shoot too (it was meant to hold) and says what is wrong.

use super::ObjectMeta;

/// On a Shoot: the gates that hold its placement, comma-separated (`quota-approval,change-freeze`).
pub const ANNOTATION_GATES: &str = "scheduling.gardener.cloud/gates";

/// The gates a reason names; the others are counted (an event's note or a log line stays short).
const LISTED: usize = 10;

/// What a shoot's gates annotation says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Gates {
    /// no annotation, or an empty list: the shoot may be placed
    Open,
    /// the gates still listed, in the annotation's order
    Closed(Vec<String>),
    /// a value that is not a list of gate names: what is wrong with it
    Malformed(String),
}

impl Gates {
    /// The gates of an object's metadata.
    pub fn of(meta: &ObjectMeta) -> Gates {
        match meta
            .annotations
            .as_ref()
            .and_then(|a| a.get(ANNOTATION_GATES))
        {
            Some(value) => Gates::parse(value),
            None => Gates::Open,
        }
    }

    /// Parses an annotation value: gate names separated by commas, spaces around them ignored;
    /// an empty (or blank) value lists none. Linear in the value's length: a 256 KiB annotation
    /// (the most the API server takes) lists some 38,000 gates.
    pub fn parse(value: &str) -> Gates {
        if value.trim().is_empty() {
            return Gates::Open;
        }
        let mut gates: Vec<String> = Vec::new();
        let mut seen: std::collections::HashSet<&str> = std::collections::HashSet::new();
        for (i, item) in value.split(',').map(str::trim).enumerate() {
            let problem = if item.is_empty() {
                Some("is empty".to_string())
            } else if !seen.insert(item) {
                Some(format!("repeats gate {item:?}"))
            } else {
                crate::names::qualified_name(item).err()
            };
            if let Some(p) = problem {
                return Gates::Malformed(format!(
                    "metadata.annotations[{ANNOTATION_GATES}]: item {} {p}",
                    i + 1
                ));
            }
            gates.push(item.to_string());
        }
        Gates::Closed(gates)
    }

    /// Whether the shoot is held.
    pub fn hold(&self) -> bool {
        !matches!(self, Gates::Open)
    }

    /// Why the shoot waits, for an event or a report; `None` when it does not.
    pub fn reason(&self) -> Option<String> {
        match self {
            Gates::Open => None,
            Gates::Closed(_) => Some(format!("waiting for {}", self.listed())),
            Gates::Malformed(problem) => Some(format!(
                "held by a malformed scheduling gates annotation ({problem}); fix or remove it"
            )),
        }
    }

    /// `scheduling gate(s) a, b`, the first ten named and the rest counted; empty unless
    /// closed.
    pub fn listed(&self) -> String {
        match self {
            Gates::Closed(gates) if gates.len() > LISTED => format!(
                "scheduling gate(s) {} and {} more",
                gates[..LISTED].join(", "),
                gates.len() - LISTED
            ),
            Gates::Closed(gates) => format!("scheduling gate(s) {}", gates.join(", ")),
            _ => String::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(value: Option<&str>) -> ObjectMeta {
        ObjectMeta {
            annotations: value.map(|v| [(ANNOTATION_GATES.to_string(), v.to_string())].into()),
            ..Default::default()
        }
    }

    #[test]
    fn a_shoot_without_the_annotation_or_with_an_empty_list_is_open() {
        assert_eq!(Gates::of(&meta(None)), Gates::Open);
        assert_eq!(Gates::of(&meta(Some(""))), Gates::Open);
        assert_eq!(Gates::of(&meta(Some("  "))), Gates::Open);
        assert!(!Gates::Open.hold());
        assert_eq!(Gates::Open.reason(), None);
    }

    #[test]
    fn listed_gates_hold_in_their_order_with_spaces_ignored() {
        let g = Gates::of(&meta(Some("quota-approval, example.com/change-freeze")));
        assert_eq!(
            g,
            Gates::Closed(vec![
                "quota-approval".into(),
                "example.com/change-freeze".into()
            ])
        );
        assert!(g.hold());
        assert_eq!(
            g.reason().unwrap(),
            "waiting for scheduling gate(s) quota-approval, example.com/change-freeze"
        );
    }

    #[test]
    fn a_malformed_value_holds_and_names_the_item_and_the_rule() {
        for (value, wanted) in [
            ("a,,b", "item 2 is empty"),
            ("a,b,", "item 3 is empty"),
            ("a,a", "item 2 repeats gate \"a\""),
            (
                "Quota Approval",
                "item 1 \"Quota Approval\" is not a qualified name",
            ),
            ("-x", "item 1 \"-x\" is not a qualified name"),
            ("/x", "the prefix must be non-empty"),
        ] {
            let g = Gates::parse(value);
            let Gates::Malformed(problem) = &g else {
                panic!("{value:?}: {g:?}");
            };
            assert!(problem.contains(wanted), "{value:?}: {problem}");
            assert!(problem.starts_with("metadata.annotations[scheduling.gardener.cloud/gates]"));
            assert!(g.hold());
            assert!(g.reason().unwrap().contains("fix or remove it"));
        }
    }

    /// The most gates an annotation holds: 256 KiB of annotations, the API server's limit.
    fn largest_annotation() -> String {
        let mut value = String::new();
        let mut i = 0;
        while value.len() + 16 < 256 * 1024 {
            if i > 0 {
                value.push(',');
            }
            value.push_str(&format!("g{i}"));
            i += 1;
        }
        value
    }

    #[test]
    fn the_largest_annotation_parses_every_gate_and_finds_a_repeat_at_its_end() {
        let value = largest_annotation();
        let listed = value.split(',').count();
        assert!(listed > 35_000, "{listed}");
        let Gates::Closed(gates) = Gates::parse(&value) else {
            panic!("not closed")
        };
        assert_eq!(gates.len(), listed);
        assert_eq!(
            gates.last().map(String::as_str),
            Some(value.rsplit(',').next().unwrap())
        );
        let repeated = format!("{value},g7");
        let Gates::Malformed(problem) = Gates::parse(&repeated) else {
            panic!("a repeat must be found")
        };
        assert!(
            problem.contains(&format!("item {} repeats gate \"g7\"", listed + 1)),
            "{problem}"
        );
    }

    #[test]
    fn a_reason_names_ten_gates_and_counts_the_others() {
        let value = largest_annotation();
        let listed = value.split(',').count();
        let reason = Gates::parse(&value).reason().unwrap();
        assert_eq!(
            reason,
            format!(
                "waiting for scheduling gate(s) {} and {} more",
                (0..10)
                    .map(|i| format!("g{i}"))
                    .collect::<Vec<_>>()
                    .join(", "),
                listed - 10
            )
        );
        let ten = (0..10)
            .map(|i| format!("g{i}"))
            .collect::<Vec<_>>()
            .join(",");
        assert!(!Gates::parse(&ten).reason().unwrap().contains("more"));
    }

    #[test]
    fn a_control_character_in_a_gate_is_escaped_in_the_message() {
        let Gates::Malformed(problem) = Gates::parse("a\u{1b}[31m") else {
            panic!()
        };
        assert!(!problem.contains('\u{1b}'), "{problem}");
    }
}
