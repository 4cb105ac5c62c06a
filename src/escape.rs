//! Text read from input files, shown to a person, never steers the terminal or the output's
//! structure.
//!
//! A name or message may hold ANSI/OSC escape sequences (retitle, recolour or clear the
//! terminal), other C0/C1 control characters, line breaks that YAML reads as the end of a comment
//! (`\n`, `\r`, NEL, U+2028, U+2029), or bidi and zero-width characters that make one name display
//! as another (`seed-\u{202e}1ue-dorp` shows as `seed-prod-eu1`). Each such character is written
//! as `\u{…}`, visible and unambiguous. A leaf module: every writer of human-readable output uses
//! it.

use std::borrow::Cow;
use std::io::{self, Write};

/// Is `c` written as `\u{…}` by [`line`](fn@line)?
pub fn is_hidden(c: char) -> bool {
    c.is_control() // C0, DEL, C1 (NEL, CSI)
        || matches!(
            c,
            '\u{00ad}' // soft hyphen
                | '\u{034f}' // combining grapheme joiner
                | '\u{061c}' // Arabic letter mark
                | '\u{115f}' | '\u{1160}' | '\u{3164}' | '\u{ffa0}' // Hangul fillers
                | '\u{180e}' // Mongolian vowel separator
                | '\u{200b}'..='\u{200f}' // zero-width space, (non-)joiner, LRM, RLM
                | '\u{2028}'..='\u{202e}' // line/paragraph separator, bidi embeddings and overrides
                | '\u{2060}'..='\u{206f}' // word joiner, invisible operators, bidi isolates
                | '\u{feff}' // zero-width no-break space (byte order mark)
                | '\u{fff9}'..='\u{fffb}' // interlinear annotations
                | '\u{e0000}'..='\u{e007f}' // tags
        )
}

/// `text` as one line: every control, line-break, bidi and zero-width character as `\u{…}`.
/// For names and values shown in a table cell, a comment or a single-line message.
pub fn line(text: &str) -> Cow<'_, str> {
    escape(text, is_hidden)
}

/// One YAML (or shell) comment line, `# text\n`, whatever `text` holds: a line break in it
/// would end the comment and make the rest a YAML document of its own.
pub fn comment(text: &str) -> String {
    format!("# {}\n", line(text))
}

/// `text` as lines: like [`line`](fn@line), but `\n` and `\t` stay (a message of several lines, a
/// table). For whole messages and human-readable outputs.
pub fn text(text: &str) -> Cow<'_, str> {
    escape(text, |c| c != '\n' && c != '\t' && is_hidden(c))
}

fn escape(text: &str, hide: impl Fn(char) -> bool) -> Cow<'_, str> {
    let Some(first) = text.find(&hide) else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len() + 8);
    out.push_str(&text[..first]);
    for c in text[first..].chars() {
        if hide(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// JSON text as serde_json wrote it, with every character [`is_hidden`] finds and serde_json
/// leaves raw (bidi, zero-width, line separators) written as a JSON `\uXXXX` escape: the same
/// JSON value, shown unambiguously. Such characters appear in JSON text only inside strings,
/// where the escape means the same character. The whitespace of pretty JSON's layout (line
/// breaks, tabs) stays: serde_json escapes it inside strings, so raw it is layout.
pub fn json(text: &str) -> Cow<'_, str> {
    let is_hidden = |c: char| is_hidden(c) && !matches!(c, '\n' | '\r' | '\t');
    let Some(first) = text.find(is_hidden) else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len() + 12);
    out.push_str(&text[..first]);
    let mut units = [0u16; 2];
    for c in text[first..].chars() {
        if is_hidden(c) {
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A writer for human-readable output (tables, text, explanations): what passes through it is
/// escaped as [`text`] does, so no input string reaches the terminal raw, whichever code wrote
/// it. Bytes that are not UTF-8 are written as `\x{…}`. Call [`Write::flush`] at the end: a
/// character cut between two writes waits for its last bytes until then.
pub struct TextWriter<W: Write> {
    inner: W,
    pending: Vec<u8>,
}

impl<W: Write> TextWriter<W> {
    pub fn new(inner: W) -> Self {
        Self {
            inner,
            pending: Vec::new(),
        }
    }

    fn drain(&mut self, at_end: bool) -> io::Result<()> {
        let mut rest: &[u8] = &self.pending;
        let mut out = String::new();
        loop {
            match std::str::from_utf8(rest) {
                Ok(s) => {
                    out.push_str(&text(s));
                    rest = &[];
                    break;
                }
                Err(e) => {
                    let (good, bad) = rest.split_at(e.valid_up_to());
                    // `good` is the prefix from_utf8 just found valid.
                    out.push_str(&text(std::str::from_utf8(good).unwrap_or_default()));
                    match e.error_len() {
                        Some(n) => {
                            for b in &bad[..n] {
                                out.push_str(&format!("\\x{{{b:02x}}}"));
                            }
                            rest = &bad[n..];
                        }
                        // An incomplete character at the end: wait for the rest of it.
                        None if !at_end => {
                            rest = bad;
                            break;
                        }
                        None => {
                            for b in bad {
                                out.push_str(&format!("\\x{{{b:02x}}}"));
                            }
                            rest = &[];
                            break;
                        }
                    }
                }
            }
        }
        let keep = rest.to_vec();
        self.pending = keep;
        self.inner.write_all(out.as_bytes())
    }
}

impl<W: Write> Write for TextWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        // The common case, plain text written whole: no copy.
        if self.pending.is_empty()
            && let Ok(s) = std::str::from_utf8(buf)
            && let Cow::Borrowed(_) = text(s)
        {
            self.inner.write_all(buf)?;
            return Ok(buf.len());
        }
        self.pending.extend_from_slice(buf);
        self.drain(false)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.drain(true)?;
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn json_output_escapes_bidi_and_zero_width_characters_and_keeps_its_value() {
        let value = serde_json::json!({"seed": "seed-\u{202e}1ue", "tag": "a\u{e0041}", "esc": "\u{1b}[31m"});
        let raw = serde_json::to_string(&value).unwrap();
        assert!(raw.contains('\u{202e}'), "serde_json leaves it raw: {raw}");
        let shown = json(&raw);
        assert!(!shown.chars().any(is_hidden), "{shown}");
        assert!(shown.contains("seed-\\u202e1ue"), "{shown}");
        let back: serde_json::Value = serde_json::from_str(&shown).unwrap();
        assert_eq!(back, value);
        // Pretty JSON keeps its layout: its line breaks are not written as escapes.
        let pretty = serde_json::to_string_pretty(&value).unwrap();
        let shown = json(&pretty);
        assert!(shown.contains("{\n  \""), "{shown}");
        assert!(!shown.contains("\\u000a"), "{shown}");
        let back: serde_json::Value = serde_json::from_str(&shown).unwrap();
        assert_eq!(back, value);
    }

    use super::*;

    #[test]
    fn terminal_escapes_line_breaks_bidi_and_zero_width_characters_become_visible() {
        assert_eq!(line("seed-\u{202e}1ue-dorp"), "seed-\\u{202e}1ue-dorp");
        assert_eq!(line("a\x1b]0;pwned\x07b"), "a\\u{1b}]0;pwned\\u{7}b");
        assert_eq!(line("x\u{9b}31my"), "x\\u{9b}31my");
        assert_eq!(line("a\nkind: Secret"), "a\\u{a}kind: Secret");
        assert_eq!(line("a\u{2028}b\u{85}c\rd"), "a\\u{2028}b\\u{85}c\\u{d}d");
        assert_eq!(
            line("zero\u{200b}width\u{feff}"),
            "zero\\u{200b}width\\u{feff}"
        );
        assert_eq!(line("eu-west-1 ✓ Zürich"), "eu-west-1 ✓ Zürich");
        assert!(matches!(line("plain"), Cow::Borrowed(_)));
        assert_eq!(text("a\tb\nc\x1b[2J"), "a\tb\nc\\u{1b}[2J");
        let c = comment("evil\n---\nkind: Secret -> s2");
        assert_eq!(c, "# evil\\u{a}---\\u{a}kind: Secret -> s2\n");
        let docs: Vec<serde_yaml_ng::Value> = serde_yaml_ng::Deserializer::from_str(&c)
            .map(|d| serde::Deserialize::deserialize(d).unwrap())
            .collect();
        assert!(docs.iter().all(serde_yaml_ng::Value::is_null), "{docs:?}");
    }

    #[test]
    fn the_writer_escapes_across_writes_and_shows_bytes_that_are_not_utf8() {
        let mut out = TextWriter::new(Vec::new());
        let rlo = "\u{202e}".as_bytes();
        out.write_all(b"seed-").unwrap();
        out.write_all(&rlo[..1]).unwrap();
        out.write_all(&rlo[1..]).unwrap();
        out.write_all(b"x\x1b[31m\xff\n").unwrap();
        out.write_all(&"é".as_bytes()[..1]).unwrap();
        out.flush().unwrap();
        assert_eq!(
            String::from_utf8(out.inner).unwrap(),
            "seed-\\u{202e}x\\u{1b}[31m\\x{ff}\n\\x{c3}"
        );
    }
}
