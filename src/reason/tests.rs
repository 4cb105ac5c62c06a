use std::sync::Arc;

use super::testing::{Example, elsewhere, full};
use super::*;

fn seed(name: &str) -> Arc<str> {
    name.into()
}

fn tainted(hint: &'static str) -> Reason {
    Reason::new(Example {
        name: "taints",
        summary: "had taints that the shoot does not tolerate",
        hint: Some(hint),
        lacks_room: false,
    })
}

#[test]
fn the_message_counts_phrases_most_frequent_first() {
    let region = elsewhere();
    let rejections = [
        (seed("a"), full()),
        (seed("b"), region.clone()),
        (seed("c"), tainted("add a toleration for x")),
        (seed("d"), region.clone()),
        (seed("e"), tainted("add a toleration for y")),
        (seed("f"), region),
        (seed("g"), full()),
    ];
    let t = tally(rejections.iter().map(|(s, r)| (s, r)));
    assert_eq!(
        t.message(7),
        "0/7 seeds are available: 3 seed(s) are in another region, \
         2 seed(s) had taints that the shoot does not tolerate, 2 seed(s) have no capacity left."
    );
    assert_eq!(t.seeds(), 7);
    assert_eq!(t.names(), ["capacity", "otherRegion", "taints"]);
    assert_eq!(
        t.hints(),
        [
            "raise status.allocatable.shoots or add a seed",
            "add a toleration for x",
            "add a toleration for y"
        ]
    );
    assert_eq!(t.full(), [seed("a"), seed("g")]);
}

#[test]
fn no_seeds_at_all_says_so() {
    assert_eq!(
        Tally::default().message(0),
        "0/0 seeds are available: no seeds are registered."
    );
}

#[test]
fn a_shared_reason_counts_the_same_as_one_per_seed() {
    // Shared (one value for many seeds, looked at once) and unshared (a value per seed) give
    // the same tally, however the seeds interleave.
    let shared = [full(), elsewhere(), tainted("add a toleration for x")];
    let order = [0, 1, 1, 2, 0, 1, 2, 2, 0, 1];
    let names: Vec<Arc<str>> = (0..order.len()).map(|i| seed(&format!("s{i}"))).collect();
    let once: Vec<(Arc<str>, Reason)> = order
        .iter()
        .zip(&names)
        .map(|(&k, s)| (Arc::clone(s), shared[k].clone()))
        .collect();
    let each: Vec<(Arc<str>, Reason)> = order
        .iter()
        .zip(&names)
        .map(|(&k, s)| {
            let fresh = match k {
                0 => full(),
                1 => elsewhere(),
                _ => tainted("add a toleration for x"),
            };
            (Arc::clone(s), fresh)
        })
        .collect();
    let a = tally(once.iter().map(|(s, r)| (s, r)));
    let b = tally(each.iter().map(|(s, r)| (s, r)));
    assert_eq!(a, b);
    assert_eq!(a.seeds(), 10);
    assert_eq!(a.full().len(), 3);
    assert_eq!(a.hints().len(), 2);
}

#[test]
fn reasons_are_equal_by_name_and_message_and_serialize_both() {
    assert_eq!(full(), full());
    assert_ne!(full(), elsewhere());
    assert_eq!(
        serde_json::to_value(full()).unwrap(),
        serde_json::json!({"reason": "capacity", "message": "capacity"})
    );
    assert!(full().get::<Example>().is_some_and(|e| e.lacks_room));
}
