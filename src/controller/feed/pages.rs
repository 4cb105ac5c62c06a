//! A list page read as its bytes arrive: each item of `items` is decoded as soon as its last
//! byte is in, and its bytes are dropped then, so a page is never held whole (kube's own list
//! collects the answer into one string first). The page's `metadata` (its resourceVersion and
//! continue token) is read wherever it stands in the answer.
//!
//! [`Items`] finds where the items begin and end without parsing them: it follows strings
//! (jumping to their next quote or backslash) and nesting, nothing else. Each item is then
//! decoded by serde_json, which checks it whole; an answer that is not a list (an item that is
//! not an object, brackets that do not close) fails the page as a decoding error.

use crate::controller::feed::lines::{Wire, send};
use bytes::{Buf, Bytes, BytesMut};
use http_body_util::BodyExt;
use kube::api::{Api, ListParams};
use kube::client::Body;
use kube::core::{ListMeta, Request};
use serde::de::Error as _;

/// What a page holds, in the order it arrives.
pub enum Piece<I> {
    Item(I),
    /// the page is complete: its resourceVersion and continue token
    End(ListMeta),
}

/// A page of `api`'s kind being read.
pub struct Page<I> {
    body: Body,
    items: Items,
    meta: Option<ListMeta>,
    ended: bool,
    _kind: std::marker::PhantomData<fn() -> I>,
}

/// Asks for a page; its items are read with [`Page::next`].
pub async fn request<I: kube::Resource + Clone>(
    api: &Api<I>,
    params: &ListParams,
) -> kube::Result<Page<I>> {
    let request = Request::new(api.resource_url())
        .list(params)
        .map_err(kube::Error::BuildRequest)?;
    Ok(Page {
        body: send(api, request).await?,
        items: Items::default(),
        meta: None,
        ended: false,
        _kind: std::marker::PhantomData,
    })
}

impl<I: Wire> Page<I> {
    /// The next item, decoded, or the page's metadata once it is complete.
    pub async fn next(&mut self) -> kube::Result<Piece<I>> {
        loop {
            match self.items.next().map_err(kube::Error::SerdeError)? {
                Some(Found::Item(bytes)) => {
                    return I::read_item(&bytes)
                        .map(Piece::Item)
                        .map_err(kube::Error::SerdeError);
                }
                Some(Found::Meta(bytes)) => {
                    self.meta =
                        Some(serde_json::from_slice(&bytes).map_err(kube::Error::SerdeError)?);
                    continue;
                }
                None => {}
            }
            if self.ended {
                self.items.finish().map_err(kube::Error::SerdeError)?;
                return Ok(Piece::End(self.meta.take().unwrap_or_default()));
            }
            match self.body.frame().await {
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        self.items.push(&data);
                    }
                }
                Some(Err(e)) => return Err(e),
                None => self.ended = true,
            }
        }
    }
}

/// What [`Items`] found complete.
#[derive(Debug, PartialEq)]
enum Found {
    Item(Bytes),
    Meta(Bytes),
}

/// Where the scan of a list answer stands.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
enum At {
    /// before the answer's opening brace
    #[default]
    Start,
    /// in the answer's object, between its entries
    Answer,
    /// in the answer's object, reading a key
    Key,
    /// after a key of the answer, before its value
    Value,
    /// in a value of the answer that is neither `items` nor `metadata` (a string, a number)
    Skip,
    /// in `items`, between its elements
    Items,
    /// in an item or in `metadata`: `depth` brackets deep
    Inside,
    /// after the answer's closing brace
    Done,
}

/// The items of a list answer, found as its bytes arrive.
#[derive(Default)]
struct Items {
    /// the bytes not yet consumed: from the start of the item, metadata or key being read
    buf: BytesMut,
    /// how far `buf` has been scanned
    pos: usize,
    at: At,
    /// within a string, and after a backslash in it
    in_string: bool,
    escaped: bool,
    /// brackets open within the current item or metadata
    depth: u32,
    /// the key whose value comes next (or is being read)
    key: Key,
    /// the current value is metadata rather than an item
    meta: bool,
    /// the nesting of a skipped value of the answer (`{` or `[`: depth)
    skip_depth: u32,
}

#[derive(Clone, Copy, Debug, Default, PartialEq)]
enum Key {
    #[default]
    Other,
    Items,
    Metadata,
}

fn malformed(what: &str) -> serde_json::Error {
    serde_json::Error::custom(format!("the list answer is malformed: {what}"))
}

impl Items {
    fn push(&mut self, data: &[u8]) {
        self.buf.extend_from_slice(data);
    }

    /// At the answer's end: whether it was whole.
    fn finish(&self) -> serde_json::Result<()> {
        match self.at {
            At::Done => Ok(()),
            At::Start => Err(malformed("it is empty")),
            _ => Err(malformed("it ends before its closing brace")),
        }
    }

    /// Moves the scan past a string's next quote or backslash: whether the string ended.
    fn in_string(&mut self) -> bool {
        loop {
            if self.escaped {
                if self.pos >= self.buf.len() {
                    return false;
                }
                self.escaped = false;
                self.pos += 1;
            }
            match memchr::memchr2(b'"', b'\\', &self.buf[self.pos..]) {
                None => {
                    self.pos = self.buf.len();
                    return false;
                }
                Some(i) => {
                    self.pos += i + 1;
                    if self.buf[self.pos - 1] == b'"' {
                        self.in_string = false;
                        return true;
                    }
                    self.escaped = true;
                }
            }
        }
    }

    /// Drops what was scanned: nothing of it is needed again.
    fn consume(&mut self) {
        self.buf.advance(self.pos);
        self.pos = 0;
    }

    /// Keeps the bytes from the one just scanned on.
    fn keep_from_last(&mut self) {
        self.pos -= 1;
        self.consume();
        self.pos = 1;
    }

    /// An object begins at the byte just scanned: an item, or the metadata, kept whole.
    fn keep_object(&mut self, meta: bool) {
        self.keep_from_last();
        self.depth = 1;
        self.meta = meta;
        self.at = At::Inside;
    }

    /// The rest of a value of the answer that is neither `items` nor `metadata` (after `]`, the
    /// rest of `items`), `depth` brackets deep, is skipped.
    fn skip(&mut self, depth: u32) {
        self.skip_depth = depth;
        self.at = At::Skip;
        self.consume();
    }

    /// The next item or metadata complete in what arrived; `None` until more arrives.
    fn next(&mut self) -> serde_json::Result<Option<Found>> {
        loop {
            if self.in_string {
                let key_start = self.at == At::Key;
                if !self.in_string() {
                    if !key_start && self.at != At::Inside {
                        self.consume();
                    }
                    return Ok(None);
                }
                if key_start {
                    // buf holds the key's text, quotes included
                    self.key = match &self.buf[..self.pos] {
                        b"\"items\"" => Key::Items,
                        b"\"metadata\"" => Key::Metadata,
                        _ => Key::Other,
                    };
                    self.consume();
                    self.at = At::Value;
                }
                continue;
            }
            let Some(&b) = self.buf.get(self.pos) else {
                if self.at != At::Inside {
                    self.consume();
                }
                return Ok(None);
            };
            self.pos += 1;
            if b.is_ascii_whitespace() {
                if self.at != At::Inside {
                    self.consume();
                }
                continue;
            }
            match self.at {
                At::Start => match b {
                    b'{' => {
                        self.at = At::Answer;
                        self.consume();
                    }
                    _ => return Err(malformed("it is not an object")),
                },
                At::Answer => match b {
                    b',' => self.consume(),
                    b'"' => {
                        // the key's text is kept from its opening quote
                        self.keep_from_last();
                        self.in_string = true;
                        self.at = At::Key;
                    }
                    b'}' => {
                        self.at = At::Done;
                        self.consume();
                    }
                    _ => return Err(malformed("an entry of the answer without a key")),
                },
                At::Key => return Err(malformed("a key without its value")),
                At::Value => match b {
                    b':' => self.consume(),
                    b'[' if self.key == Key::Items => {
                        self.at = At::Items;
                        self.consume();
                    }
                    b'{' if self.key == Key::Metadata => self.keep_object(true),
                    b'{' | b'[' => self.skip(1),
                    b'"' => {
                        self.in_string = true;
                        self.skip(0);
                    }
                    // a number, true, false or null: up to the next `,` or `}`
                    _ => self.skip(0),
                },
                At::Skip => match b {
                    b'"' => {
                        self.in_string = true;
                        self.consume();
                    }
                    b'{' | b'[' => {
                        self.skip_depth += 1;
                        self.consume();
                    }
                    b'}' | b']' if self.skip_depth > 0 => {
                        self.skip_depth -= 1;
                        self.consume();
                    }
                    b',' if self.skip_depth == 0 => {
                        self.at = At::Answer;
                        self.consume();
                    }
                    b'}' => {
                        self.at = At::Done;
                        self.consume();
                    }
                    _ => self.consume(),
                },
                At::Items => match b {
                    b',' => self.consume(),
                    b']' => self.skip(0),
                    b'{' => self.keep_object(false),
                    _ => return Err(malformed("an item of `items` that is not an object")),
                },
                At::Inside => match b {
                    b'"' => self.in_string = true,
                    b'{' | b'[' => self.depth += 1,
                    b'}' | b']' => {
                        self.depth -= 1;
                        if self.depth == 0 {
                            let bytes = self.buf.split_to(self.pos).freeze();
                            self.pos = 0;
                            return Ok(Some(if self.meta {
                                self.skip(0);
                                Found::Meta(bytes)
                            } else {
                                self.at = At::Items;
                                Found::Item(bytes)
                            }));
                        }
                    }
                    _ => {}
                },
                At::Done => return Err(malformed("bytes after its closing brace")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::controller::feed::pages::*;
    use proptest::prelude::*;
    use serde_json::{Value, json};

    /// What `Items` finds in `answer` fed in pieces of the given sizes, and how it ends.
    fn scan(answer: &[u8], sizes: &[usize]) -> (Vec<Value>, Option<Value>, serde_json::Result<()>) {
        let (mut items, mut meta) = (Vec::new(), None);
        let mut scanner = Items::default();
        let mut rest = answer;
        let mut sizes = sizes.iter().cycle();
        loop {
            loop {
                match scanner.next() {
                    Ok(Some(Found::Item(b))) => items.push(serde_json::from_slice(&b).unwrap()),
                    Ok(Some(Found::Meta(b))) => meta = Some(serde_json::from_slice(&b).unwrap()),
                    Ok(None) => break,
                    Err(e) => return (items, meta, Err(e)),
                }
            }
            if rest.is_empty() {
                return (items, meta, scanner.finish());
            }
            let n = (*sizes.next().unwrap()).clamp(1, rest.len());
            scanner.push(&rest[..n]);
            rest = &rest[n..];
        }
    }

    fn answers() -> Vec<Value> {
        let shoot = |name: &str| {
            json!({"metadata": {"name": name, "namespace": "garden-p",
                                "annotations": {"note": "braces } ] { [ and \"quotes\" \\ in text"}},
                   "spec": {"seedName": "s1", "tolerations": [{"key": "a"}], "x": [1, 2.5, null, true]},
                   "status": {"conditions": []}})
        };
        vec![
            json!({"kind": "ShootList", "apiVersion": "core.gardener.cloud/v1beta1",
                   "metadata": {"resourceVersion": "12", "continue": "abc"},
                   "items": [shoot("a"), shoot("b"), shoot("c")]}),
            json!({"items": [shoot("a")], "metadata": {"resourceVersion": "3"}, "kind": "ShootList"}),
            json!({"kind": "ShootList", "metadata": {"resourceVersion": "3"}, "items": []}),
            json!({"kind": "ShootList", "metadata": {"resourceVersion": "3"}, "items": null}),
            json!({"extra": {"items": [1], "metadata": {"x": "}"}}, "n": -1.5e3, "t": true,
                   "s": "\"items\"", "metadata": {"resourceVersion": "4"}, "items": [shoot("a")],
                   "after": [[], {}, "]"]}),
        ]
    }

    #[test]
    fn every_item_and_the_metadata_are_found_however_the_bytes_arrive() {
        for answer in answers() {
            let expected_items = answer["items"].as_array().cloned().unwrap_or_default();
            let expected_meta = answer.get("metadata").cloned();
            for text in [
                answer.to_string(),
                serde_json::to_string_pretty(&answer).unwrap(),
            ] {
                for sizes in [vec![usize::MAX], vec![1], vec![2, 3, 5, 7], vec![4096]] {
                    let (items, meta, end) = scan(text.as_bytes(), &sizes);
                    end.unwrap();
                    assert_eq!(items, expected_items, "{text} in pieces of {sizes:?}");
                    assert_eq!(meta, expected_meta, "{text} in pieces of {sizes:?}");
                }
            }
        }
    }

    proptest! {
        #[test]
        fn any_split_of_the_answer_finds_the_same(
            which in 0usize..5,
            sizes in proptest::collection::vec(1usize..64, 1..16),
        ) {
            let answer = &answers()[which];
            let text = answer.to_string();
            let (items, meta, end) = scan(text.as_bytes(), &sizes);
            prop_assert!(end.is_ok());
            prop_assert_eq!(items, answer["items"].as_array().cloned().unwrap_or_default());
            prop_assert_eq!(meta, answer.get("metadata").cloned());
        }
    }

    #[test]
    fn an_answer_that_is_not_a_list_fails_naming_what_is_wrong() {
        for (text, what) in [
            ("", "it is empty"),
            ("[1, 2]", "it is not an object"),
            (
                r#"{"items": [1]}"#,
                "an item of `items` that is not an object",
            ),
            (r#"{"items": [{"a": 1}"#, "it ends before its closing brace"),
            (r#"{"items": []} {"#, "bytes after its closing brace"),
        ] {
            let (_, _, end) = scan(text.as_bytes(), &[3]);
            let error = end.unwrap_err().to_string();
            assert!(error.contains(what), "{text}: {error}");
        }
    }
}
