//! The documentation reads in minutes: every page of README.md and docs/ opens, right after its
//! title, with a short paragraph saying what the page is for, and no paragraph or list item is
//! longer than a reader takes in at once.
//!
//! - A paragraph or a list item has at most `MAX_WORDS` words. Code blocks, tables and HTML are
//!   not counted; the text of a nested list counts for its own items, not for the item it sits
//!   in. A long item becomes a short lead with bullets, or a table.
//! - The first block after the `# Title` is a paragraph of at most `MAX_OPENING_WORDS` words
//!   (two to five lines), not a list, a table, a code block, a generated block or a heading.

use std::path::{Path, PathBuf};

use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};

const MAX_WORDS: usize = 150;
const MAX_OPENING_WORDS: usize = 80;

/// README.md and every Markdown page under docs/.
fn pages() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = vec![root.join("README.md")];
    let mut dirs = vec![root.join("docs")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                pages.push(path);
            }
        }
    }
    pages.sort();
    pages
}

/// A paragraph or a list item's own text, with the line it starts on.
#[derive(Debug)]
struct Block {
    line: usize,
    kind: &'static str,
    words: usize,
    start: String,
}

/// What a page consists of, as this test sees it.
#[derive(Debug, Default)]
struct Page {
    blocks: Vec<Block>,
    /// The first block after the title: its kind, and its word count when it is a paragraph.
    opening: Option<(String, usize)>,
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset].matches('\n').count() + 1
}

fn read(text: &str) -> Page {
    let mut page = Page::default();
    // Open paragraphs and list items: (kind, line, text). Text goes to the innermost one.
    let mut open: Vec<(&'static str, usize, String)> = Vec::new();
    let mut skip = 0usize; // inside a code block or a table
    let mut seen_title = false;
    let mut in_title = false;
    let mut depth = 0usize; // nesting of container blocks, to find top-level blocks
    let opts = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_FOOTNOTES;
    for (event, range) in Parser::new_ext(text, opts).into_offset_iter() {
        let top = depth == 0;
        match event {
            Event::Start(tag) => {
                if top && seen_title && !in_title && page.opening.is_none() {
                    let kind = match &tag {
                        Tag::Paragraph => "paragraph",
                        Tag::Heading { .. } => "heading",
                        Tag::List(_) => "list",
                        Tag::Table(_) => "table",
                        Tag::CodeBlock(_) => "code block",
                        Tag::HtmlBlock => "HTML or comment",
                        Tag::BlockQuote(_) => "quote",
                        _ => "other block",
                    };
                    page.opening = Some((kind.to_string(), 0));
                }
                match tag {
                    Tag::Heading {
                        level: HeadingLevel::H1,
                        ..
                    } if !seen_title => {
                        seen_title = true;
                        in_title = true;
                    }
                    Tag::CodeBlock(_) | Tag::Table(_) | Tag::HtmlBlock => skip += 1,
                    // A paragraph inside a list item is part of that item.
                    Tag::Paragraph
                        if skip == 0 && !matches!(open.last(), Some(("list item", _, _))) =>
                    {
                        open.push(("paragraph", line_of(text, range.start), String::new()));
                    }
                    Tag::Item if skip == 0 => {
                        open.push(("list item", line_of(text, range.start), String::new()))
                    }
                    _ => {}
                }
                depth += 1;
            }
            Event::End(tag) => {
                depth -= 1;
                match tag {
                    TagEnd::Heading(HeadingLevel::H1) if in_title => in_title = false,
                    TagEnd::CodeBlock | TagEnd::Table | TagEnd::HtmlBlock => skip -= 1,
                    TagEnd::Paragraph if skip == 0 => {
                        if matches!(open.last(), Some(("paragraph", _, _))) {
                            close(&mut page, open.pop().unwrap());
                        } else if let Some((_, _, own)) = open.last_mut() {
                            own.push(' ');
                        }
                    }
                    TagEnd::Item if skip == 0 => close(&mut page, open.pop().unwrap()),
                    _ => {}
                }
            }
            Event::Text(t) | Event::Code(t) if skip == 0 => {
                if let Some((_, _, own)) = open.last_mut() {
                    own.push_str(&t);
                }
            }
            Event::SoftBreak | Event::HardBreak if skip == 0 => {
                if let Some((_, _, own)) = open.last_mut() {
                    own.push(' ');
                }
            }
            _ => {}
        }
    }
    page
}

fn close(page: &mut Page, (kind, line, own): (&'static str, usize, String)) {
    let words = own.split_whitespace().count();
    if let Some((opening_kind, opening_words)) = &mut page.opening
        && opening_kind == "paragraph"
        && *opening_words == 0
        && kind == "paragraph"
    {
        *opening_words = words;
    }
    let start: String = own.split_whitespace().take(8).collect::<Vec<_>>().join(" ");
    page.blocks.push(Block {
        line,
        kind,
        words,
        start,
    });
}

fn relative(path: &Path) -> String {
    path.strip_prefix(env!("CARGO_MANIFEST_DIR"))
        .unwrap_or(path)
        .display()
        .to_string()
}

#[test]
fn no_paragraph_or_list_item_is_over_the_word_limit() {
    let mut long = Vec::new();
    let mut counted = 0;
    for path in pages() {
        let text = std::fs::read_to_string(&path).unwrap();
        for block in read(&text).blocks {
            counted += 1;
            if block.words > MAX_WORDS {
                long.push(format!(
                    "{}:{}: {} of {} words ({} …)",
                    relative(&path),
                    block.line,
                    block.kind,
                    block.words,
                    block.start
                ));
            }
        }
    }
    assert!(
        counted > 100,
        "only {counted} paragraphs and list items found: is the parser reading the pages?"
    );
    assert!(
        long.is_empty(),
        "{} paragraph(s) or list item(s) over {MAX_WORDS} words; split them into shorter ones, \
         a short lead with bullets, or a table:\n{}",
        long.len(),
        long.join("\n")
    );
}

#[test]
fn every_page_opens_with_a_short_paragraph_saying_what_it_is_for() {
    let mut wrong = Vec::new();
    for path in pages() {
        let text = std::fs::read_to_string(&path).unwrap();
        match read(&text).opening {
            None => wrong.push(format!("{}: no title, or nothing after it", relative(&path))),
            Some((kind, _)) if kind != "paragraph" => wrong.push(format!(
                "{}: opens with a {kind} after its title, not with a paragraph saying what the page is for",
                relative(&path)
            )),
            Some((_, words)) if words > MAX_OPENING_WORDS || words == 0 => wrong.push(format!(
                "{}: its opening paragraph has {words} words (at most {MAX_OPENING_WORDS}: two to five lines)",
                relative(&path)
            )),
            Some(_) => {}
        }
    }
    assert!(
        wrong.is_empty(),
        "pages that do not open with what they are for:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_reader_counts_a_list_item_without_its_nested_list_and_skips_code_and_tables() {
    let many = "word ".repeat(100);
    let text = format!(
        "# T\n\nWhat this is for.\n\n- lead {many}\n  - nested {many}\n\n```\n{many}{many}\n```\n\n| a |\n| - |\n| {many}{many} |\n\n{many}\n{many}\n"
    );
    let page = read(&text);
    let words: Vec<(&str, usize)> = page.blocks.iter().map(|b| (b.kind, b.words)).collect();
    assert_eq!(
        words,
        vec![
            ("paragraph", 4),
            ("list item", 101),
            ("list item", 101),
            ("paragraph", 200)
        ]
    );
    assert_eq!(page.opening, Some(("paragraph".to_string(), 4)));
}
