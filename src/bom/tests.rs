use super::*;

#[test]
fn one_leading_mark_is_removed_and_nothing_else() {
    assert_eq!(strip_bom("\u{feff}kind: X"), "kind: X");
    assert_eq!(strip_bom("kind: X"), "kind: X");
    assert_eq!(strip_bom("a\u{feff}b"), "a\u{feff}b");
    assert_eq!(strip_bom("\u{feff}\u{feff}x"), "\u{feff}x");
}

#[test]
fn a_byte_order_mark_inside_the_text_is_named_with_its_line() {
    let note = note_inside("a: 1\n---\n\u{feff}b: 2\n").unwrap();
    assert!(note.contains("line 3 column 1"), "{note}");
    // a second mark at the start, the first one stripped
    let note = note_inside(strip_bom("\u{feff}\u{feff}a: 1\n")).unwrap();
    assert!(note.contains("line 1 column 1"), "{note}");
    assert_eq!(note_inside("a: 1\n"), None);
}
