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
