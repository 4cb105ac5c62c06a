//! The modules of the library import each other in one direction only.
//!
//! The layers are api → snapshot → (predicates, strategies, priorities) → schedule →
//! profile/chain → simulate/controller → main, with shared vocabulary (outcomes, reasons, field
//! errors, region distance) in leaf modules. This test reads every production file under `src/`,
//! collects the modules each one names (`use crate::…`, `use super::…`, `crate::x::y` in code, a
//! child module's `x::y`), and fails when the graph of files has a cycle, printing the cycle with
//! the line that makes each step. Test code (`#[cfg(test)]` items, `tests.rs`, `tests/`) is left
//! out: tests may reach anywhere.
//!
//! A file stands for its module: `src/a/mod.rs` is `a` (its re-exports included), `src/a/b.rs` is
//! `a::b`. A path resolves to the longest prefix that is a file, so `crate::config::FieldError`
//! points at `config/mod.rs`, and a folder's `mod.rs` that re-exports a child also points at it.
//! `make lint` runs this test; docs/development/architecture.md explains it.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use petgraph::algo::tarjan_scc;
use petgraph::graph::{DiGraph, NodeIndex};

/// One production source file and the module it is.
struct File {
    path: PathBuf,
    module: Vec<String>,
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    Path, // `::`
    Punct(char),
}

/// Every `.rs` file of the library tree (not `main.rs`, not test files), with its module path.
fn library_files(src: &Path) -> Vec<File> {
    let mut out = Vec::new();
    walk(src, src, &mut out);
    out.sort_by(|a, b| a.module.cmp(&b.module));
    out
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<File>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if name != "tests" {
                walk(root, &path, out);
            }
            continue;
        }
        if !name.ends_with(".rs") || name == "tests.rs" || name.starts_with("tests_") {
            continue;
        }
        let rel = path.strip_prefix(root).unwrap();
        if rel == Path::new("main.rs") {
            continue;
        }
        let mut module: Vec<String> = rel
            .parent()
            .unwrap()
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        let stem = name.trim_end_matches(".rs");
        if stem != "mod" && stem != "lib" {
            module.push(stem.to_string());
        }
        out.push(File { path, module });
    }
}

/// Source text without comments, string and char literals (their contents never name modules),
/// keeping line breaks so that token lines stay right.
fn strip(src: &str) -> String {
    let b: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == '/' && b.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == '*' && b.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if b[i] == '\n' {
                        out.push('\n');
                    }
                    i += 1;
                }
            }
        } else if c == 'r' && (next == Some('"') || next == Some('#')) && !prev_is_ident(&b, i) {
            // raw string r"…" / r#"…"#
            let mut j = i + 1;
            let mut hashes = 0;
            while j < b.len() && b[j] == '#' {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= b.len() {
                    break;
                }
                if b[j] == '"' && (0..hashes).all(|k| b.get(j + 1 + k) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                if b[j] == '\n' {
                    out.push('\n');
                }
                j += 1;
            }
            out.push_str("\"\"");
            i = j;
        } else if c == '"' {
            i += 1;
            while i < b.len() && b[i] != '"' {
                if b[i] == '\\' {
                    i += 1;
                } else if b[i] == '\n' {
                    out.push('\n');
                }
                i += 1;
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == '\'' {
            // a char literal ('x', '\n', '\u{..}') or a lifetime ('a)
            if next == Some('\\') {
                i += 2;
                while i < b.len() && b[i] != '\'' {
                    i += 1;
                }
                i += 1;
                out.push_str("' '");
            } else if b.get(i + 2) == Some(&'\'') {
                i += 3;
                out.push_str("' '");
            } else {
                out.push(c);
                i += 1;
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn prev_is_ident(b: &[char], i: usize) -> bool {
    i > 0 && (b[i - 1].is_alphanumeric() || b[i - 1] == '_')
}

fn tokenize(src: &str) -> Vec<(Tok, usize)> {
    let b: Vec<char> = src.chars().collect();
    let mut toks = Vec::new();
    let mut line = 1;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < b.len() && (b[i].is_alphanumeric() || b[i] == '_') {
                i += 1;
            }
            toks.push((Tok::Ident(b[start..i].iter().collect()), line));
        } else if c == ':' && b.get(i + 1) == Some(&':') {
            toks.push((Tok::Path, line));
            i += 2;
        } else {
            toks.push((Tok::Punct(c), line));
            i += 1;
        }
    }
    toks
}

/// Removes `#[cfg(test)]` items: the attribute, further attributes, and the item up to its `;`
/// or its closing brace.
fn drop_test_items(toks: Vec<(Tok, usize)>) -> Vec<(Tok, usize)> {
    let is = |t: &Tok, s: &str| matches!(t, Tok::Ident(x) if x == s);
    let p = |t: &Tok, c: char| *t == Tok::Punct(c);
    let mut out = Vec::with_capacity(toks.len());
    let mut i = 0;
    while i < toks.len() {
        let cfg_test = i + 6 < toks.len()
            && p(&toks[i].0, '#')
            && p(&toks[i + 1].0, '[')
            && is(&toks[i + 2].0, "cfg")
            && p(&toks[i + 3].0, '(')
            && is(&toks[i + 4].0, "test")
            && p(&toks[i + 5].0, ')')
            && p(&toks[i + 6].0, ']');
        if !cfg_test {
            out.push(toks[i].clone());
            i += 1;
            continue;
        }
        i += 7;
        // further attributes
        while i + 1 < toks.len() && p(&toks[i].0, '#') && p(&toks[i + 1].0, '[') {
            let mut depth = 0;
            while i < toks.len() {
                if p(&toks[i].0, '[') {
                    depth += 1;
                } else if p(&toks[i].0, ']') {
                    depth -= 1;
                    if depth == 0 {
                        i += 1;
                        break;
                    }
                }
                i += 1;
            }
        }
        let mut depth = 0;
        while i < toks.len() {
            let t = &toks[i].0;
            i += 1;
            if p(t, '{') {
                depth += 1;
            } else if p(t, '}') {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            } else if p(t, ';') && depth == 0 {
                break;
            }
        }
    }
    out
}

/// A module path named in a file, with the line naming it.
struct Named {
    segments: Vec<String>,
    line: usize,
}

/// Expands a use tree starting at `toks[i]` (after `use`) into full paths relative to `prefix`.
fn use_tree(toks: &[(Tok, usize)], i: &mut usize, prefix: Vec<String>, out: &mut Vec<Named>) {
    let mut path = prefix;
    let line = toks.get(*i).map(|t| t.1).unwrap_or(0);
    loop {
        match toks.get(*i).map(|t| &t.0) {
            Some(Tok::Path) => *i += 1,
            Some(Tok::Punct('{')) => {
                *i += 1;
                loop {
                    match toks.get(*i).map(|t| &t.0) {
                        Some(Tok::Punct('}')) => {
                            *i += 1;
                            return;
                        }
                        Some(Tok::Punct(',')) => *i += 1,
                        None => return,
                        _ => use_tree(toks, i, path.clone(), out),
                    }
                }
            }
            Some(Tok::Ident(x)) if x == "as" => {
                *i += 2;
                out.push(Named {
                    segments: path,
                    line,
                });
                return;
            }
            Some(Tok::Ident(x)) => {
                path.push(x.clone());
                *i += 1;
            }
            Some(Tok::Punct('*')) => {
                *i += 1;
            }
            _ => {
                out.push(Named {
                    segments: path,
                    line,
                });
                return;
            }
        }
    }
}

/// The module paths a file names, each relative to where it is written (its first segment is
/// `crate`, `super`, `self` or a name), plus the module it is written in (inline `mod x { … }`).
fn named_paths(toks: &[(Tok, usize)]) -> Vec<(Vec<String>, Named)> {
    let mut out = Vec::new();
    // stack of (inline module name, brace depth at which it closes)
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < toks.len() {
        let (t, line) = (&toks[i].0, toks[i].1);
        match t {
            Tok::Punct('{') => depth += 1,
            Tok::Punct('}') => {
                depth -= 1;
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
            }
            Tok::Ident(k) if k == "mod" => {
                if let (Some((Tok::Ident(name), _)), Some((Tok::Punct('{'), _))) =
                    (toks.get(i + 1), toks.get(i + 2))
                {
                    inline.push((name.clone(), depth));
                    depth += 1;
                    i += 3;
                    continue;
                }
            }
            Tok::Ident(k) if k == "use" => {
                i += 1;
                let mut found = Vec::new();
                use_tree(toks, &mut i, Vec::new(), &mut found);
                let here: Vec<String> = inline.iter().map(|(n, _)| n.clone()).collect();
                for n in found {
                    out.push((here.clone(), n));
                }
                continue;
            }
            // a path in code: the first segment, not itself after `::`, followed by `::`
            Tok::Ident(first)
                if !matches!(toks.get(i.wrapping_sub(1)), Some((Tok::Path, _)))
                    && toks.get(i + 1).map(|t| &t.0) == Some(&Tok::Path) =>
            {
                let mut segments = vec![first.clone()];
                let mut j = i + 1;
                while let (Some((Tok::Path, _)), Some((Tok::Ident(x), _))) =
                    (toks.get(j), toks.get(j + 1))
                {
                    segments.push(x.clone());
                    j += 2;
                }
                let here: Vec<String> = inline.iter().map(|(n, _)| n.clone()).collect();
                out.push((here, Named { segments, line }));
                i = j;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// The absolute module path a path written in module `at` refers to, if it is inside the crate.
fn absolute(
    at: &[String],
    segments: &[String],
    modules: &BTreeSet<Vec<String>>,
) -> Option<Vec<String>> {
    let first = segments.first()?;
    let mut base: Vec<String>;
    let mut rest = segments;
    match first.as_str() {
        "crate" => {
            base = Vec::new();
            rest = &rest[1..];
        }
        "self" => {
            base = at.to_vec();
            rest = &rest[1..];
        }
        "super" => {
            base = at.to_vec();
            while rest.first().map(String::as_str) == Some("super") {
                base.pop()?;
                rest = &rest[1..];
            }
        }
        name => {
            // a child module of the one it is written in
            let mut child = at.to_vec();
            child.push(name.to_string());
            if !modules.contains(&child) {
                return None;
            }
            base = at.to_vec();
        }
    }
    base.extend(rest.iter().cloned());
    Some(base)
}

/// The file module a path lands in: its longest prefix that is a file.
fn owning_file(path: &[String], files: &BTreeMap<Vec<String>, usize>) -> Option<usize> {
    (0..=path.len())
        .rev()
        .find_map(|n| files.get(&path[..n]).copied())
}

struct Edge {
    line: usize,
    written: String,
}

/// The library's files and which file names which (the first line doing so, per pair).
struct Graph {
    src: PathBuf,
    files: Vec<File>,
    edges: BTreeMap<(usize, usize), Edge>,
}

impl Graph {
    fn read() -> Graph {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let files = library_files(&src);
        let index: BTreeMap<Vec<String>, usize> = files
            .iter()
            .enumerate()
            .map(|(i, f)| (f.module.clone(), i))
            .collect();
        let modules: BTreeSet<Vec<String>> = index.keys().cloned().collect();
        let mut edges: BTreeMap<(usize, usize), Edge> = BTreeMap::new();
        for (from, file) in files.iter().enumerate() {
            let text = fs::read_to_string(&file.path).unwrap();
            let toks = drop_test_items(tokenize(&strip(&text)));
            for (inline, named) in named_paths(&toks) {
                let mut at = file.module.clone();
                at.extend(inline);
                let Some(abs) = absolute(&at, &named.segments, &modules) else {
                    continue;
                };
                let Some(to) = owning_file(&abs, &index) else {
                    continue;
                };
                if to == from || files[to].module.is_empty() {
                    continue;
                }
                edges.entry((from, to)).or_insert(Edge {
                    line: named.line,
                    written: named.segments.join("::"),
                });
            }
        }
        Graph { src, files, edges }
    }

    fn name(&self, i: usize) -> String {
        let rel = self.files[i].path.strip_prefix(&self.src).unwrap();
        format!("src/{}", rel.display())
    }

    fn why(&self, from: usize, to: usize) -> String {
        let e = &self.edges[&(from, to)];
        format!(
            "{}:{} uses {} -> {}",
            self.name(from),
            e.line,
            e.written,
            self.name(to)
        )
    }
}

/// The direct child of `parent` that `module` is or lies in, if it lies below `parent`.
fn child_of<'a>(parent: &[String], module: &'a [String]) -> Option<&'a String> {
    if module.len() > parent.len() && module[..parent.len()] == *parent {
        Some(&module[parent.len()])
    } else {
        None
    }
}

/// Cycles among the children of every module, each child standing for itself and everything
/// below it: the top-level modules (`api`, `snapshot`, …), the files of one folder, and so on.
fn cycles(g: &Graph) -> Vec<String> {
    let parents: BTreeSet<Vec<String>> = g
        .files
        .iter()
        .filter(|f| !f.module.is_empty())
        .map(|f| f.module[..f.module.len() - 1].to_vec())
        .collect();
    let mut report = Vec::new();
    for parent in parents {
        // one node per child of `parent`; edges between different children
        let mut graph: DiGraph<String, ()> = DiGraph::new();
        let mut node: BTreeMap<String, NodeIndex> = BTreeMap::new();
        let mut witness: BTreeMap<(String, String), (usize, usize)> = BTreeMap::new();
        for &(from, to) in g.edges.keys() {
            let (Some(a), Some(b)) = (
                child_of(&parent, &g.files[from].module),
                child_of(&parent, &g.files[to].module),
            ) else {
                continue;
            };
            if a == b {
                continue;
            }
            for x in [a, b] {
                if !node.contains_key(x) {
                    node.insert(x.clone(), graph.add_node(x.clone()));
                }
            }
            if witness.insert((a.clone(), b.clone()), (from, to)).is_none() {
                graph.add_edge(node[a], node[b], ());
            }
        }
        for scc in tarjan_scc(&graph) {
            if scc.len() < 2 {
                continue;
            }
            let members: BTreeSet<String> = scc.iter().map(|n| graph[*n].clone()).collect();
            let cycle = shortest_cycle(&members, &witness);
            let scope = if parent.is_empty() {
                "crate".to_string()
            } else {
                format!("crate::{}", parent.join("::"))
            };
            let mut text = format!(
                "cycle among the modules of {scope}: {}\n",
                members.iter().cloned().collect::<Vec<_>>().join(", ")
            );
            for pair in cycle.windows(2) {
                let (from, to) = witness[&(pair[0].clone(), pair[1].clone())];
                text.push_str(&format!("  {}\n", g.why(from, to)));
            }
            report.push(text);
        }
    }
    report
}

/// The shortest cycle through the first member of one strongly connected component.
fn shortest_cycle(
    members: &BTreeSet<String>,
    edges: &BTreeMap<(String, String), (usize, usize)>,
) -> Vec<String> {
    let start = members.iter().next().unwrap().clone();
    let mut prev: BTreeMap<String, String> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start.clone()]);
    while let Some(n) = queue.pop_front() {
        for (a, b) in edges.keys() {
            if *a != n || !members.contains(b) {
                continue;
            }
            if *b == start {
                let mut path = vec![start.clone(), n.clone()];
                let mut cur = n.clone();
                while cur != start {
                    cur = prev[&cur].clone();
                    path.push(cur.clone());
                }
                path.reverse();
                return path;
            }
            if !prev.contains_key(b) && *b != start {
                prev.insert(b.clone(), n.clone());
                queue.push_back(b.clone());
            }
        }
    }
    vec![start]
}

/// Folders whose files are plugins: the shared trait and types live in a leaf module of the
/// folder (`framework.rs`), and `mod.rs` only registers the plugins.
const PLUGIN_FOLDERS: &[&str] = &["predicates", "priorities", "strategies"];

#[test]
fn modules_at_every_level_import_each_other_in_one_direction_only() {
    let g = Graph::read();
    let report = cycles(&g);
    assert!(
        report.is_empty(),
        "the module graph has cycles; move the shared items into a leaf module \
         (see docs/development/architecture.md):\n{}",
        report.join("\n")
    );
}

#[test]
fn plugins_import_their_folders_framework_not_its_registry() {
    let g = Graph::read();
    let mut report = Vec::new();
    for &(from, to) in g.edges.keys() {
        let (a, b) = (&g.files[from].module, &g.files[to].module);
        let in_plugin_folder = a.len() >= 2 && PLUGIN_FOLDERS.contains(&a[0].as_str());
        if in_plugin_folder && b.len() == 1 && b[0] == a[0] {
            report.push(g.why(from, to));
        }
    }
    assert!(
        report.is_empty(),
        "plugin files name their folder's mod.rs (the registry); name the framework module \
         instead:\n{}",
        report.join("\n")
    );
}

/// The check itself can fail: a made-up pair of modules naming each other is a cycle.
#[test]
fn a_cycle_is_found_and_printed() {
    let mut g = Graph::read();
    let find = |g: &Graph, m: &[&str]| {
        g.files
            .iter()
            .position(|f| f.module.iter().map(String::as_str).eq(m.iter().copied()))
            .unwrap()
    };
    let (api, snapshot) = (find(&g, &["api"]), find(&g, &["snapshot"]));
    g.edges.insert(
        (api, snapshot),
        Edge {
            line: 1,
            written: "crate::snapshot::Snapshot".into(),
        },
    );
    let report = cycles(&g).join("\n");
    assert!(
        report.contains("cycle among the modules of crate: api, ")
            && report
                .contains("src/api/mod.rs:1 uses crate::snapshot::Snapshot -> src/snapshot/mod.rs"),
        "{report}"
    );
}
