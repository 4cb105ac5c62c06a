//! Reading input files (manifests, the configuration, matrix and forecast files): regular files
//! only, at most a given number of bytes, and YAML whose flow nesting is checked before parsing.
//!
//! A FIFO would block the reader forever and a character device (`/dev/zero`) reports length 0
//! and never ends, so the file type is checked before opening and the bytes read are capped,
//! whatever length the file system reports.

use std::io::Read;
use std::path::Path;

/// Flow collections (`[`, `{`) nested deeper than this are refused before parsing, naming the
/// line: the YAML parser's own recursion limit (128 levels, block nesting included), which it
/// needs time quadratic in the depth to reach.
pub const MAX_NESTING: usize = 128;

/// Why an input file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("is {0}, not a regular file")]
    NotRegular(&'static str),
    #[error("holds more than the {0} bytes accepted")]
    TooLarge(u64),
    #[error("is not UTF-8 text: {0}")]
    NotUtf8(std::str::Utf8Error),
}

/// What a path is when it is not a regular file (after following symlinks).
fn file_type_name(meta: &std::fs::Metadata) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_file() {
        None
    } else if t.is_dir() {
        Some("a directory")
    } else if t.is_fifo() {
        Some("a named pipe (FIFO)")
    } else if t.is_char_device() {
        Some("a character device")
    } else if t.is_block_device() {
        Some("a block device")
    } else if t.is_socket() {
        Some("a socket")
    } else {
        Some("not a file")
    }
}

/// Reads at most `limit` bytes of a regular file; more is an error, whatever size is reported.
pub fn read_bytes(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    #[cfg(test)]
    reads::note(path);
    // Checked before opening: opening a FIFO for reading blocks until a writer appears.
    if let Some(kind) = file_type_name(&std::fs::metadata(path)?) {
        return Err(ReadError::NotRegular(kind));
    }
    let file = std::fs::File::open(path)?;
    // And again on the handle, in case the path was replaced in between.
    if let Some(kind) = file_type_name(&file.metadata()?) {
        return Err(ReadError::NotRegular(kind));
    }
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge(limit));
    }
    Ok(bytes)
}

/// Reads a regular file as UTF-8 text (see [`read_bytes`]), as it is: a leading byte order mark
/// stays for the parser to drop ([`crate::bom::strip_bom`]), which text from the API server
/// reaches too.
pub fn read_text(path: &Path, limit: u64) -> Result<String, ReadError> {
    let bytes = read_bytes(path, limit)?;
    String::from_utf8(bytes).map_err(|e| ReadError::NotUtf8(e.utf8_error()))
}

/// A YAML parser's error in words a reader of the file understands: block nesting past the
/// parser's limit and a whole number past the largest it holds are named as such (the parser
/// says `recursion limit exceeded` and `integer … as u128`), with the line.
pub fn yaml_message(e: &serde_yaml_ng::Error) -> String {
    let text = e.to_string();
    let (line, column) = e.location().map_or((0, 0), |l| (l.line(), l.column()));
    if text.contains("recursion limit exceeded") {
        return format!("line {line}: nested deeper than {MAX_NESTING} levels");
    }
    // `clientConnection.burst: invalid type: integer `18446744073709551616` as u128, …`
    if let Some((path, rest)) = text.split_once("invalid type: integer `")
        && let Some((number, tail)) = rest.split_once('`')
        && tail.starts_with(" as u128")
    {
        return format!(
            "{path}the whole number {number} is larger than any field accepts (at most {}), at \
             line {line} column {column}",
            u64::MAX
        );
    }
    text
}

/// Flow collections nested deeper than [`MAX_NESTING`], found by a linear scan.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: flow collections ('[', '{{') nested deeper than {MAX_NESTING} levels")]
pub struct TooDeep {
    pub line: usize,
}

/// Checks in one pass that no flow collection nests deeper than [`MAX_NESTING`]. Brackets in
/// comments and quoted scalars do not count; one inside a plain scalar does, which only errs on
/// the side of refusing a document nobody writes (hundreds of unclosed brackets in values).
pub fn check_nesting(text: &str) -> Result<(), TooDeep> {
    #[derive(PartialEq)]
    enum State {
        Plain,
        Single,
        Double,
        Comment,
    }
    let mut state = State::Plain;
    let mut depth = 0usize;
    let mut line = 1;
    // Whether the previous byte may precede a comment or a quoted scalar.
    let mut prev_blank = true;
    let mut prev_indicator = true;
    let mut bytes = text.bytes();
    while let Some(b) = bytes.next() {
        if b == b'\n' {
            line += 1;
        }
        match state {
            State::Comment if b == b'\n' => state = State::Plain,
            State::Comment => {}
            State::Single if b == b'\'' => state = State::Plain,
            State::Single => {}
            State::Double if b == b'\\' => {
                if bytes.next() == Some(b'\n') {
                    line += 1;
                }
            }
            State::Double if b == b'"' => state = State::Plain,
            State::Double => {}
            State::Plain => match b {
                b'#' if prev_blank => state = State::Comment,
                b'\'' if prev_indicator => state = State::Single,
                b'"' if prev_indicator => state = State::Double,
                b'[' | b'{' => {
                    depth += 1;
                    if depth > MAX_NESTING {
                        return Err(TooDeep { line });
                    }
                }
                b']' | b'}' => depth = depth.saturating_sub(1),
                _ => {}
            },
        }
        prev_blank = matches!(b, b' ' | b'\t' | b'\n' | b'\r');
        prev_indicator = prev_blank || matches!(b, b'[' | b'{' | b',');
    }
    Ok(())
}

/// How often each file was read, for tests that prove a file is read once.
#[cfg(test)]
pub(crate) mod reads {
    use std::collections::BTreeMap;
    use std::path::{Path, PathBuf};
    use std::sync::Mutex;

    static READS: Mutex<BTreeMap<PathBuf, usize>> = Mutex::new(BTreeMap::new());

    pub(super) fn note(path: &Path) {
        let mut reads = READS.lock().unwrap_or_else(|e| e.into_inner());
        *reads.entry(path.to_path_buf()).or_default() += 1;
    }

    /// Reads of `path` through [`super::read_bytes`] so far.
    pub fn count(path: &Path) -> usize {
        let reads = READS.lock().unwrap_or_else(|e| e.into_inner());
        reads.get(path).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deep_flow_nesting_is_refused_with_its_line() {
        assert_eq!(
            check_nesting(&format!("a: 1\nb: {}", "[".repeat(100_000))),
            Err(TooDeep { line: 2 })
        );
        assert_eq!(
            check_nesting(&"{a: ".repeat(MAX_NESTING + 1)),
            Err(TooDeep { line: 1 })
        );
        // An apostrophe inside a plain scalar opens no quoted string that could hide brackets.
        let apostrophe = format!("a: don't\nb: {}", "{".repeat(1000));
        assert_eq!(check_nesting(&apostrophe), Err(TooDeep { line: 2 }));
    }

    #[test]
    fn nesting_up_to_the_limit_and_brackets_in_strings_or_comments_pass() {
        let ok = format!("{}{}", "[".repeat(MAX_NESTING), "]".repeat(MAX_NESTING));
        assert_eq!(check_nesting(&ok), Ok(()));
        let quoted = format!(
            "a: \"{}\"\nb: '{}'\n# {}\nc: [x]\n",
            "[".repeat(1000),
            "{".repeat(1000),
            "[".repeat(1000)
        );
        assert_eq!(check_nesting(&quoted), Ok(()));
        let balanced = "[[]]".repeat(10_000);
        assert_eq!(check_nesting(&balanced), Ok(()));
    }

    #[test]
    fn special_files_are_refused_and_reads_are_capped() {
        let err = read_bytes(Path::new("/dev/zero"), 1024).unwrap_err();
        assert_eq!(err.to_string(), "is a character device, not a regular file");
        let err = read_bytes(Path::new("/"), 1024).unwrap_err();
        assert_eq!(err.to_string(), "is a directory, not a regular file");
        let dir = std::env::temp_dir().join(format!("gs-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("big");
        std::fs::write(&f, vec![b'x'; 2000]).unwrap();
        assert!(matches!(
            read_bytes(&f, 1999),
            Err(ReadError::TooLarge(1999))
        ));
        assert_eq!(read_bytes(&f, 2000).unwrap().len(), 2000);
        std::fs::write(&f, b"kind: Seed\n").unwrap();
        assert_eq!(read_text(&f, 100).unwrap(), "kind: Seed\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
