//! The modules of the library import each other in one direction only.
//!
//! The layers are api → snapshot → (predicates, strategies, priorities) → schedule →
//! profile/chain → simulate/controller → main, with shared vocabulary (outcomes, reasons, field
//! errors, region distance) in leaf modules. This test parses every production file under
//! `src/` with `syn`, collects the modules each one names (`use` trees, paths in code and in
//! macro bodies), and fails when the modules under any one parent form a cycle, printing the
//! lines that make it. Test code (`#[cfg(test)]` items, `tests.rs`, `tests/`) is left out. It
//! also holds every production file to 550 lines before its tests.
//!
//! A file stands for its module: `src/a/mod.rs` is `a`, `src/a/b.rs` is `a::b`; a path lands
//! in its longest prefix that is a file. Why this is a test and not a workspace of crates:
//! docs/development/architecture.md, "Layers".

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use petgraph::algo::tarjan_scc;
use petgraph::graph::DiGraph;
use proc_macro2::{TokenStream, TokenTree};
use syn::visit::{self, Visit};
use syn::{Attribute, ImplItem, Item, UseTree};

/// Where a file names another module: the line and the path as written.
type Edge = (usize, String);

struct Graph {
    /// `src/…` path and module path of every library file
    files: Vec<(String, Vec<String>)>,
    /// (from, to) file indices → the first line naming `to`
    edges: BTreeMap<(usize, usize), Edge>,
}

/// Every `.rs` file under `dir` except `main.rs` and test files, with its module path.
fn walk(src: &Path, dir: &Path, out: &mut Vec<(PathBuf, Vec<String>)>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() && name != "tests" {
            walk(src, &path, out);
        } else if name.ends_with(".rs") && name != "tests.rs" && !name.starts_with("tests_") {
            let rel = path.strip_prefix(src).unwrap().with_extension("");
            let mut module: Vec<String> = rel.iter().map(|c| c.to_string_lossy().into()).collect();
            if matches!(module.last().map(String::as_str), Some("mod" | "lib")) {
                module.pop();
            }
            if rel != Path::new("main") {
                out.push((path, module));
            }
        }
    }
}

fn is_cfg_test(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg") && a.parse_args::<syn::Ident>().is_ok_and(|i| i == "test")
    })
}

/// The module paths one file names, each with the inline module it is written in.
#[derive(Default)]
struct Names {
    inline: Vec<String>,
    found: Vec<(Vec<String>, Vec<String>, usize)>,
}

impl Names {
    /// A path in code names a module only with `::` in it (or as `crate`, `super`, `self`).
    fn add(&mut self, segments: Vec<String>, line: usize) {
        if segments.len() > 1 || matches!(segments[0].as_str(), "crate" | "super" | "self") {
            self.add_use(segments, line);
        }
    }

    fn add_use(&mut self, segments: Vec<String>, line: usize) {
        self.found.push((self.inline.clone(), segments, line));
    }

    fn use_tree(&mut self, tree: &UseTree, mut prefix: Vec<String>) {
        match tree {
            UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(&p.tree, prefix);
            }
            UseTree::Name(n) => self.use_leaf(prefix, &n.ident),
            UseTree::Rename(r) => self.use_leaf(prefix, &r.ident),
            UseTree::Glob(g) => self.add_use(prefix, g.star_token.spans[0].start().line),
            UseTree::Group(g) => g
                .items
                .iter()
                .for_each(|t| self.use_tree(t, prefix.clone())),
        }
    }

    fn use_leaf(&mut self, mut prefix: Vec<String>, ident: &syn::Ident) {
        if ident != "self" {
            prefix.push(ident.to_string());
        }
        self.add_use(prefix, ident.span().start().line);
    }

    /// `a::b::c` sequences in a macro's tokens (macro bodies are not parsed as code).
    fn tokens(&mut self, tokens: TokenStream) {
        let tokens: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < tokens.len() {
            match &tokens[i] {
                TokenTree::Group(g) => self.tokens(g.stream()),
                TokenTree::Ident(first) => {
                    let mut segments = vec![first.to_string()];
                    while let [
                        TokenTree::Punct(a),
                        TokenTree::Punct(b),
                        TokenTree::Ident(x),
                        ..,
                    ] = &tokens[i + 1..]
                        && a.as_char() == ':'
                        && b.as_char() == ':'
                    {
                        segments.push(x.to_string());
                        i += 3;
                    }
                    if segments.len() > 1 {
                        self.add(segments, first.span().start().line);
                    }
                }
                _ => {}
            }
            i += 1;
        }
    }
}

impl Visit<'_> for Names {
    fn visit_item(&mut self, item: &Item) {
        let attrs = match item {
            Item::Const(i) => &i.attrs,
            Item::Enum(i) => &i.attrs,
            Item::Fn(i) => &i.attrs,
            Item::Impl(i) => &i.attrs,
            Item::Macro(i) => &i.attrs,
            Item::Mod(i) => &i.attrs,
            Item::Static(i) => &i.attrs,
            Item::Struct(i) => &i.attrs,
            Item::Trait(i) => &i.attrs,
            Item::Type(i) => &i.attrs,
            Item::Use(i) => &i.attrs,
            _ => return visit::visit_item(self, item),
        };
        if is_cfg_test(attrs) {
            return;
        }
        match item {
            Item::Use(u) => self.use_tree(&u.tree, Vec::new()),
            Item::Mod(m) if m.content.is_some() => {
                self.inline.push(m.ident.to_string());
                visit::visit_item(self, item);
                self.inline.pop();
            }
            _ => visit::visit_item(self, item),
        }
    }

    fn visit_impl_item(&mut self, item: &ImplItem) {
        if let ImplItem::Fn(f) = item
            && is_cfg_test(&f.attrs)
        {
            return;
        }
        visit::visit_impl_item(self, item);
    }

    fn visit_path(&mut self, path: &syn::Path) {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        if let Some(first) = path.segments.first() {
            self.add(segments, first.ident.span().start().line);
        }
        visit::visit_path(self, path);
    }

    /// `pub(super)` and `pub(in …)` restrict visibility; they name no module to use.
    fn visit_visibility(&mut self, _: &syn::Visibility) {}

    fn visit_macro(&mut self, mac: &syn::Macro) {
        self.tokens(mac.tokens.clone());
        visit::visit_macro(self, mac);
    }
}

/// The absolute module path of `segments` written in module `at`, if inside the crate.
fn absolute(
    at: &[String],
    segments: &[String],
    modules: &BTreeSet<&[String]>,
) -> Option<Vec<String>> {
    let (mut base, rest) = match segments[0].as_str() {
        "crate" => (Vec::new(), &segments[1..]),
        "self" => (at.to_vec(), &segments[1..]),
        "super" => {
            let supers = segments.iter().take_while(|s| *s == "super").count();
            (
                at[..at.len().checked_sub(supers)?].to_vec(),
                &segments[supers..],
            )
        }
        // a child module of the one it is written in
        name => {
            let child = [at, &[name.to_string()]].concat();
            modules
                .contains(child.as_slice())
                .then(|| (at.to_vec(), segments))?
        }
    };
    base.extend(rest.iter().cloned());
    Some(base)
}

impl Graph {
    fn read() -> Graph {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut found = Vec::new();
        walk(&src, &src, &mut found);
        found.sort_by(|a, b| a.1.cmp(&b.1));
        let modules: BTreeSet<&[String]> = found.iter().map(|f| f.1.as_slice()).collect();
        let index: BTreeMap<&[String], usize> = found
            .iter()
            .enumerate()
            .map(|(i, f)| (f.1.as_slice(), i))
            .collect();
        let mut edges = BTreeMap::new();
        for (from, (path, module)) in found.iter().enumerate() {
            let text = fs::read_to_string(path).unwrap();
            let file = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let mut names = Names::default();
            names.visit_file(&file);
            for (inline, segments, line) in names.found {
                let at = [module.as_slice(), &inline].concat();
                let Some(abs) = absolute(&at, &segments, &modules) else {
                    continue;
                };
                // the longest prefix that is a file
                let Some(to) = (0..=abs.len())
                    .rev()
                    .find_map(|n| index.get(&abs[..n]).copied())
                else {
                    continue;
                };
                if to != from && !found[to].1.is_empty() {
                    edges
                        .entry((from, to))
                        .or_insert((line, segments.join("::")));
                }
            }
        }
        let files = found
            .into_iter()
            .map(|(p, m)| {
                (
                    format!("src/{}", p.strip_prefix(&src).unwrap().display()),
                    m,
                )
            })
            .collect();
        Graph { files, edges }
    }

    fn why(&self, from: usize, to: usize) -> String {
        let (line, written) = &self.edges[&(from, to)];
        format!(
            "{}:{line} uses {written} -> {}",
            self.files[from].0, self.files[to].0
        )
    }

    /// Cycles among the children of every module, each child standing for itself and
    /// everything below it: the top-level modules, the files of one folder, and so on.
    fn cycles(&self) -> Vec<String> {
        let parents: BTreeSet<&[String]> = self
            .files
            .iter()
            .filter_map(|(_, m)| m.split_last().map(|(_, parent)| parent))
            .collect();
        let mut report = Vec::new();
        for parent in parents {
            let child = |i: usize| {
                let m = &self.files[i].1;
                (m.len() > parent.len() && m.starts_with(parent)).then(|| m[parent.len()].clone())
            };
            let mut graph: DiGraph<String, (usize, usize)> = DiGraph::new();
            let mut nodes = BTreeMap::new();
            for &(from, to) in self.edges.keys() {
                let (Some(a), Some(b)) = (child(from), child(to)) else {
                    continue;
                };
                if a != b {
                    let [a, b] = [a, b]
                        .map(|x| *nodes.entry(x.clone()).or_insert_with(|| graph.add_node(x)));
                    graph.update_edge(a, b, (from, to));
                }
            }
            for scc in tarjan_scc(&graph).into_iter().filter(|c| c.len() > 1) {
                let members: BTreeSet<&String> = scc.iter().map(|n| &graph[*n]).collect();
                let scope = ["crate".to_string()]
                    .iter()
                    .chain(parent)
                    .cloned()
                    .collect::<Vec<_>>();
                let mut text = format!(
                    "cycle among the modules of {}: {}\n",
                    scope.join("::"),
                    members.into_iter().cloned().collect::<Vec<_>>().join(", ")
                );
                for e in graph.edge_indices() {
                    let (a, b) = graph.edge_endpoints(e).unwrap();
                    if scc.contains(&a) && scc.contains(&b) {
                        let (from, to) = graph[e];
                        text.push_str(&format!("  {}\n", self.why(from, to)));
                    }
                }
                report.push(text);
            }
        }
        report
    }
}

/// Folders whose files are plugins: the shared trait and types live in a leaf module of the
/// folder (`framework.rs`), and `mod.rs` only registers the plugins.
const PLUGIN_FOLDERS: &[&str] = &["predicates", "priorities", "strategies"];

#[test]
fn modules_at_every_level_import_each_other_in_one_direction_only() {
    let report = Graph::read().cycles();
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
    let report: Vec<String> = g
        .edges
        .keys()
        .filter(|&&(from, to)| {
            let (a, b) = (&g.files[from].1, &g.files[to].1);
            a.len() >= 2 && PLUGIN_FOLDERS.contains(&a[0].as_str()) && *b == a[..1]
        })
        .map(|&(from, to)| g.why(from, to))
        .collect();
    assert!(
        report.is_empty(),
        "plugin files name their folder's mod.rs (the registry); name the framework module \
         instead:\n{}",
        report.join("\n")
    );
}

/// `src/lib.rs` declares the top-level modules in groups, one layer each, lowest first (a `// `
/// comment line opens a group): a module names only modules of its own group or of the groups
/// above it.
#[test]
fn top_level_modules_import_only_from_their_group_or_the_groups_declared_before_it() {
    let g = Graph::read();
    let lib = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")).unwrap();
    let mut group = BTreeMap::new();
    let mut n = 0;
    for line in lib.lines() {
        if line.starts_with("// ") {
            n += 1;
        } else if let Some(name) = line
            .trim_start_matches("pub ")
            .strip_prefix("mod ")
            .and_then(|l| l.strip_suffix(';'))
        {
            group.insert(name.to_string(), n);
        }
    }
    assert!(
        n > 1 && group.len() > 20,
        "the groups of src/lib.rs: {group:?}"
    );
    let report: Vec<String> = g
        .edges
        .keys()
        .filter(|&&(from, to)| {
            let (a, b) = (&g.files[from].1, &g.files[to].1);
            // the binary's `cli/` is declared in `main.rs`, above every group
            let (Some(a), Some(b)) = (a.first().and_then(|a| group.get(a)), group.get(&b[0]))
            else {
                return false;
            };
            a < b
        })
        .map(|&(from, to)| g.why(from, to))
        .collect();
    assert!(
        report.is_empty(),
        "modules name a module of a group declared after theirs in src/lib.rs:\n{}",
        report.join("\n")
    );
}

/// The controller's diagram in docs/development/architecture.md: its entries, top to bottom.
fn controller_diagram() -> BTreeMap<String, usize> {
    let doc = fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/development/architecture.md"),
    )
    .unwrap();
    let section = doc
        .split_once("## The controller\n")
        .expect("a section `## The controller`")
        .1;
    let block = section
        .split_once("```text\n")
        .and_then(|(_, rest)| rest.split_once("```"))
        .expect("a text diagram in the controller section")
        .0;
    let mut rank = BTreeMap::new();
    for (i, line) in block.lines().enumerate() {
        let names = line.split("  ").next().unwrap_or_default();
        for name in names.split(", ") {
            let name = name.trim().trim_end_matches('/').trim_end_matches(".rs");
            if !name.is_empty() {
                rank.insert(name.to_string(), i);
            }
        }
    }
    rank
}

#[test]
fn the_controller_s_folders_are_its_diagram_and_import_only_down_it() {
    let rank = controller_diagram();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/controller");
    let entries: BTreeSet<String> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            name.trim_end_matches(".rs").to_string()
        })
        .filter(|n| n != "mod" && n != "tests")
        .collect();
    let drawn: BTreeSet<String> = rank.keys().cloned().collect();
    assert_eq!(
        entries, drawn,
        "src/controller/ and the diagram in docs/development/architecture.md list different entries"
    );
    let g = Graph::read();
    let report: Vec<String> = g
        .edges
        .keys()
        .filter(|&&(from, to)| {
            let (a, b) = (&g.files[from].1, &g.files[to].1);
            if a.first().map(String::as_str) != Some("controller")
                || b.first().map(String::as_str) != Some("controller")
            {
                return false;
            }
            let (Some(a), Some(b)) = (a.get(1), b.get(1)) else {
                return false;
            };
            a != b && rank[a] > rank[b]
        })
        .map(|&(from, to)| g.why(from, to))
        .collect();
    assert!(
        report.is_empty(),
        "a controller module imports one drawn above it in docs/development/architecture.md:\n{}",
        report.join("\n")
    );
}

/// The check itself can fail: a made-up pair of modules naming each other is a cycle.
#[test]
fn a_cycle_is_found_and_printed() {
    let mut g = Graph::read();
    let find = |g: &Graph, m: &str| g.files.iter().position(|f| f.1 == [m]).unwrap();
    let (api, snapshot) = (find(&g, "api"), find(&g, "snapshot"));
    assert!(g.edges.contains_key(&(snapshot, api)), "snapshot names api");
    g.edges
        .insert((api, snapshot), (1, "crate::snapshot::Snapshot".into()));
    let report = g.cycles().join("\n");
    assert!(
        report.contains("cycle among the modules of crate: api, ")
            && report
                .contains("src/api/mod.rs:1 uses crate::snapshot::Snapshot -> src/snapshot/mod.rs"),
        "{report}"
    );
}

/// Paths in code, in `use` trees and in macro bodies are all seen, and test items are not.
#[test]
fn every_way_of_naming_a_module_is_seen_and_test_code_is_not() {
    let file: syn::File = syn::parse_str(
        "use crate::a::{b, c::D as E};\nfn f() { crate::x::y(); format!(\"{}\", super::m::N); }\n\
         #[cfg(test)]\nmod tests { use crate::hidden::T; }\nmod inner { use self::z::W; }\n",
    )
    .unwrap();
    let mut names = Names::default();
    names.visit_file(&file);
    let found: Vec<String> = names
        .found
        .iter()
        .map(|(inline, s, line)| format!("{}|{}@{line}", inline.join("::"), s.join("::")))
        .collect();
    assert_eq!(
        found,
        [
            "|crate::a::b@1",
            "|crate::a::c::D@1",
            "|crate::x::y@2",
            "|super::m::N@2",
            "inner|self::z::W@5"
        ]
    );
}

/// Lines a production file may have before its tests (`#[cfg(test)]`): a file that grows past
/// this is split into modules that each say what they hold.
const MAX_PRODUCTION_LINES: usize = 550;

#[test]
fn every_production_file_stays_within_the_line_limit() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = Vec::new();
    walk(&src, &src, &mut found);
    found.push((src.join("main.rs"), vec!["main".into()]));
    let mut over: Vec<String> = found
        .iter()
        .filter_map(|(path, _)| {
            let text = fs::read_to_string(path).unwrap();
            let lines = text
                .lines()
                .take_while(|l| l.trim() != "#[cfg(test)]")
                .count();
            (lines > MAX_PRODUCTION_LINES).then(|| {
                format!(
                    "{}: {lines} lines before its tests",
                    path.strip_prefix(&src).unwrap().display()
                )
            })
        })
        .collect();
    over.sort();
    assert!(
        over.is_empty(),
        "production files over {MAX_PRODUCTION_LINES} lines; split them by responsibility:\n{}",
        over.join("\n")
    );
    assert!(found.len() > 100, "the walk found the files under src/");
}
