//! A leading UTF-8 byte order mark, as some editors on Windows write it, is not part of the text.
//!
//! A leaf module: any reader of user files can use it.

/// The byte order mark as a `char`.
pub const BOM: char = '\u{feff}';

/// `text` without one leading byte order mark.
pub fn strip_bom(text: &str) -> &str {
    text.strip_prefix(BOM).unwrap_or(text)
}

#[cfg(test)]
mod tests;

/// A note for a parser error when `text`, its leading mark already stripped ([`strip_bom`]),
/// still holds one (files concatenated with `cat`, each saved with one; or two at the start):
/// the parser's own message never names it.
pub fn note_inside(text: &str) -> Option<String> {
    let at = text.char_indices().find(|&(_, c)| c == BOM)?.0;
    let line = text[..at].matches('\n').count() + 1;
    let column = text[..at].rfind('\n').map_or(at, |nl| at - nl - 1) + 1;
    Some(format!(
        " (the text holds a byte order mark, U+FEFF, at line {line} column {column}: remove it; only one at the very start of a file is accepted)"
    ))
}
