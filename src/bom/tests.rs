use super::*;

#[test]
fn one_leading_mark_is_removed_and_nothing_else() {
    assert_eq!(strip_bom("\u{feff}kind: X"), "kind: X");
    assert_eq!(strip_bom("kind: X"), "kind: X");
    assert_eq!(strip_bom("a\u{feff}b"), "a\u{feff}b");
    assert_eq!(strip_bom("\u{feff}\u{feff}x"), "\u{feff}x");
}
