//! The crate's layers and its design map, kept by tests that read the files
//! under `src/` and `docs/` (plain Rust, no compiler involved).
//!
//! The rules, as docs/design.md states them ("Layers"):
//!
//! 1. No cycle between top-level modules (`src/<name>/` or `src/<name>.rs`).
//! 2. A module uses only modules of its own layer or of the layers below it,
//!    in the order of [`LAYERS`] (from the base up). A module that is in no
//!    layer fails the test: a new module must be placed.
//! 3. No cycle between the sibling files of one module: within a folder, the
//!    files other than the module's own file (`mod.rs`, or `x.rs` beside a
//!    folder `x/`) and its sub-folders (each one node) use each other one way.
//! 4. Test code is exempt from all three: `#[cfg(test)]` items, and the files
//!    declared by `#[cfg(test)] mod name;` (the `tests.rs` files), may use
//!    any engine of any layer as an oracle.
//!
//! A use is a path through `crate::`, `super::`, `self::` or `ggp_asp::` in
//! code, written in a `use` tree (`use crate::{a, b::{c, d}}`) or inline
//! (`crate::a::f()`, `super::super::x`), followed through the `use` items of
//! the module files (re-exports such as `pub use x::Item`) and to the module
//! that defines a `#[macro_export]` macro (`crate::say!`). Comments, doc
//! comments and string literals do not count.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The layers of the crate, from the base up: a module may use the modules of
/// its own layer and of the layers below. The same order, with what each
/// layer is, is in docs/design.md (checked by [`design_states_the_layers`]).
const LAYERS: &[&[&str]] = &[
    &["cputime", "priority", "report", "clock", "child", "cancel"],
    &["gdl"],
    &["reasoner"],
    &["simulate", "search", "asp", "protocol"],
    &["learn", "store"],
    &["strategy"],
    &["arena"],
    &["player"],
    &["cluster"],
    &["show"],
    &["service"],
    &["bench"],
    &["cli"],
];

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn crate_sources() -> check::Crate {
    let mut files = Vec::new();
    check::read_tree(Path::new(ROOT), "src", &mut files);
    check::Crate::new(files)
}

fn fail_with(what: &str, findings: &[String]) {
    assert!(
        findings.is_empty(),
        "{what}:\n  {}\n({} finding(s); the rules are in tests/layers.rs and docs/design.md)",
        findings.join("\n  "),
        findings.len()
    );
}

#[test]
fn no_cycle_between_top_level_modules() {
    fail_with(
        "cycles between top-level modules",
        &crate_sources().module_cycles(),
    );
}

#[test]
fn no_module_uses_a_layer_above_it() {
    fail_with(
        "imports of a layer above",
        &crate_sources().upward_uses(LAYERS),
    );
}

#[test]
fn no_cycle_between_sibling_files() {
    fail_with(
        "cycles between the files of one module",
        &crate_sources().file_cycles(),
    );
}

#[test]
fn design_lists_every_folder_and_test() {
    let design = read("docs/design.md");
    let mut missing = Vec::new();
    for name in list_dir("src") {
        let is_dir = Path::new(ROOT).join("src").join(&name).is_dir();
        if name == "lib.rs" || name == "main.rs" {
            continue;
        }
        if is_dir {
            let section = docs::section(&design, &format!("`src/{name}/`"));
            for sub in sub_folders(&format!("src/{name}")) {
                let rel = &sub[format!("src/{name}/").len()..];
                if !design.contains(&format!("{sub}/"))
                    && !section.is_some_and(|s| docs::names(s, &format!("{rel}/")))
                {
                    missing.push(format!(
                        "{sub}/ (neither its path nor `{rel}/` in the section of src/{name}/)"
                    ));
                }
            }
        }
        let path = if is_dir {
            format!("src/{name}/")
        } else {
            format!("src/{name}")
        };
        if !design.contains(&path) {
            missing.push(path);
        }
    }
    for name in list_dir("tests") {
        let path = Path::new(ROOT).join("tests").join(&name);
        let listed = if path.is_dir() {
            // Data the tests read (snapshots, plans) need no line of their own.
            !path.join("mod.rs").exists() || design.contains(&format!("tests/{name}/"))
        } else {
            design.contains(&format!("tests/{name}"))
        };
        if !listed {
            missing.push(format!("tests/{name}"));
        }
    }
    fail_with("missing from docs/design.md", &missing);
}

#[test]
fn design_states_the_layers() {
    let design = read("docs/design.md");
    let stated = docs::layers(&design);
    let ours: Vec<Vec<String>> = LAYERS
        .iter()
        .map(|l| l.iter().map(|m| m.to_string()).collect())
        .collect();
    assert_eq!(
        stated, ours,
        "the layers in docs/design.md (the numbered block under \"Layers\") differ from LAYERS"
    );
}

#[test]
fn docs_name_paths_that_exist() {
    let mut stale = Vec::new();
    let mut pages = vec!["README.md".to_string()];
    pages.extend(
        list_dir("docs")
            .into_iter()
            .filter(|n| n.ends_with(".md"))
            // The history records series as they were run, with the files
            // of their day.
            .filter(|n| n != "benchmarks-history.md")
            .map(|n| format!("docs/{n}")),
    );
    pages.extend(
        list_dir("puzzles")
            .into_iter()
            .filter(|n| n.ends_with(".md"))
            .map(|n| format!("puzzles/{n}")),
    );
    for page in pages {
        for (line, path) in docs::code_paths(&read(&page)) {
            if !Path::new(ROOT).join(&path).exists() {
                stale.push(format!("{page}:{line}: {path}"));
            }
        }
    }
    fail_with("paths in the docs that do not exist", &stale);
}

#[test]
fn doc_links_reach_their_pages_and_headings() {
    let mut pages = vec!["README.md".to_string(), "puzzles/README.md".to_string()];
    pages.extend(
        list_dir("docs")
            .into_iter()
            .filter(|n| n.ends_with(".md"))
            .map(|n| format!("docs/{n}")),
    );
    let mut broken = Vec::new();
    for page in &pages {
        let dir = Path::new(page).parent().unwrap_or(Path::new(""));
        for (line, target) in docs::links(&read(page)) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (file, anchor) = target.split_once('#').unwrap_or((&target, ""));
            let file = if file.is_empty() {
                page.clone()
            } else {
                dir.join(file).to_string_lossy().into_owned()
            };
            let path = Path::new(ROOT).join(&file);
            if !path.exists() {
                broken.push(format!("{page}:{line}: {target} (no file {file})"));
            } else if !anchor.is_empty()
                && file.ends_with(".md")
                && !docs::anchors(&read(&file)).contains(anchor)
            {
                broken.push(format!("{page}:{line}: {target} (no such heading)"));
            }
        }
    }
    fail_with("links in the docs that lead nowhere", &broken);
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(Path::new(ROOT).join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn list_dir(rel: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(Path::new(ROOT).join(rel)) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Every folder below `rel` (not `rel` itself), as paths relative to the root.
fn sub_folders(rel: &str) -> Vec<String> {
    let mut out = Vec::new();
    for name in list_dir(rel) {
        let sub = format!("{rel}/{name}");
        if Path::new(ROOT).join(&sub).is_dir() {
            out.push(sub.clone());
            out.extend(sub_folders(&sub));
        }
    }
    out
}

/// What the docs tests read in the Markdown.
mod docs {
    use std::collections::BTreeSet;

    /// The text from the heading that contains `marker` to the next heading
    /// of the same or a higher level.
    pub fn section<'a>(text: &'a str, marker: &str) -> Option<&'a str> {
        let mut start = None;
        let mut level = 0;
        let mut offset = 0;
        for line in text.split_inclusive('\n') {
            let hashes = line.chars().take_while(|&c| c == '#').count();
            if let Some(s) = start {
                if hashes > 0 && hashes <= level {
                    return Some(&text[s..offset]);
                }
            } else if hashes > 0 && line.contains(marker) {
                start = Some(offset);
                level = hashes;
            }
            offset += line.len();
        }
        start.map(|s| &text[s..])
    }

    /// Whether `text` names `path` as a word of its own (after a space, a
    /// backquote or the start of a line, not inside a longer path).
    pub fn names(text: &str, path: &str) -> bool {
        text.match_indices(path).any(|(i, _)| {
            !matches!(text[..i].chars().next_back(),
                Some(c) if !(c.is_whitespace() || c == '`' || c == '('))
        })
    }

    /// The layers of design.md: the lines `N  a, b, c: what they are` of the
    /// code block that follows the heading "Layers", from the base up.
    pub fn layers(text: &str) -> Vec<Vec<String>> {
        let Some(section) = section(text, "Layers") else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let mut in_block = false;
        for line in section.lines() {
            if line.starts_with("```") {
                if in_block {
                    break;
                }
                in_block = true;
                continue;
            }
            let Some((number, rest)) = line.trim().split_once(char::is_whitespace) else {
                continue;
            };
            if !in_block || number.parse::<usize>().is_err() {
                continue;
            }
            let names = rest.split(':').next().unwrap_or("");
            out.push(names.split(',').map(|m| m.trim().to_string()).collect());
        }
        out
    }

    /// The targets of the page's Markdown links `[text](target)`, with their
    /// lines (code blocks left out).
    pub fn links(text: &str) -> Vec<(usize, String)> {
        let mut out = Vec::new();
        let mut in_code = false;
        for (n, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("```") {
                in_code = !in_code;
            }
            if in_code {
                continue;
            }
            for (i, _) in line.match_indices("](") {
                let rest = &line[i + 2..];
                if let Some(end) = rest.find(')') {
                    out.push((n + 1, rest[..end].to_string()));
                }
            }
        }
        out
    }

    /// The anchors GitHub gives a page's headings: lower case, punctuation
    /// but `-` and `_` dropped, spaces as `-`, a repeated one numbered.
    pub fn anchors(text: &str) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        let mut in_code = false;
        for line in text.lines() {
            if line.trim_start().starts_with("```") {
                in_code = !in_code;
            }
            let Some(title) = line.strip_prefix('#') else {
                continue;
            };
            if in_code {
                continue;
            }
            let slug: String = title
                .trim_start_matches('#')
                .trim()
                .to_lowercase()
                .chars()
                .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
                .map(|c| if c == ' ' { '-' } else { c })
                .collect();
            let mut anchor = slug.clone();
            let mut k = 0;
            while out.contains(&anchor) {
                k += 1;
                anchor = format!("{slug}-{k}");
            }
            out.insert(anchor);
        }
        out
    }

    /// Every path into the code a page names, with its line: the longest
    /// run of path characters from `src/` (or from `tests/`, ending in `.rs`:
    /// the corpus has a `tests/` folder of its own), without a closing `.` or
    /// `,`. Paths with a wildcard or alternatives (`src/cli/*.rs`) are left out.
    pub fn code_paths(text: &str) -> Vec<(usize, String)> {
        let mut out = Vec::new();
        for (n, line) in text.lines().enumerate() {
            for prefix in ["src/", "tests/"] {
                for (i, _) in line.match_indices(prefix) {
                    let before = line[..i].chars().next_back();
                    if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '/') {
                        continue;
                    }
                    let rest = &line[i..];
                    let end = rest
                        .find(|c: char| !(c.is_alphanumeric() || "_./-".contains(c)))
                        .unwrap_or(rest.len());
                    if rest[end..].starts_with(['*', '{']) {
                        continue;
                    }
                    let path = rest[..end].trim_end_matches(['.', ',']);
                    if prefix == "src/" || path.ends_with(".rs") {
                        out.push((n + 1, path.to_string()));
                    }
                }
            }
        }
        out
    }
}

/// The checker: Rust sources read into the paths they use, and the three
/// rules over them.
mod check {
    use super::*;

    /// Reads every `.rs` file under `root/rel` into `out` as (path relative
    /// to `root`, text).
    pub fn read_tree(root: &Path, rel: &str, out: &mut Vec<(String, String)>) {
        let dir = root.join(rel);
        let mut entries: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .filter_map(|e| e.ok())
            .collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let name = e.file_name().to_string_lossy().into_owned();
            let path = format!("{rel}/{name}");
            if e.path().is_dir() {
                read_tree(root, &path, out);
            } else if name.ends_with(".rs") {
                let text = std::fs::read_to_string(e.path()).unwrap();
                out.push((path, text));
            }
        }
    }

    /// A path written in a file: its segments and the line it is on.
    #[derive(Clone, Debug)]
    pub struct Written {
        pub segs: Vec<String>,
        pub line: usize,
        /// The name a `use` gives it (its last segment, or what follows
        /// `as`); `None` for a path written inline.
        pub name: Option<String>,
    }

    pub struct File {
        pub path: String,
        /// Its module path from the crate root (`src/asp/forward/dfs.rs`:
        /// `asp::forward::dfs`); the roots lib.rs and main.rs have none.
        pub module: Vec<String>,
        pub test: bool,
        pub paths: Vec<Written>,
    }

    /// One use of a module by another: where it is written.
    pub type Edges = BTreeMap<(String, String), BTreeSet<(String, usize)>>;

    pub struct Crate {
        pub files: Vec<File>,
        /// Module path -> the file that is the module.
        modules: BTreeMap<Vec<String>, usize>,
        /// `#[macro_export]` macro -> the module that defines it.
        macros: BTreeMap<String, Vec<String>>,
    }

    /// The module path of a file under `src/`.
    fn module_of(path: &str) -> Vec<String> {
        let rel = path.strip_prefix("src/").unwrap_or(path);
        let rel = rel.strip_suffix(".rs").unwrap_or(rel);
        let mut segs: Vec<String> = rel.split('/').map(str::to_string).collect();
        if matches!(
            segs.last().map(String::as_str),
            Some("mod" | "lib" | "main")
        ) {
            segs.pop();
        }
        segs
    }

    impl Crate {
        pub fn new(sources: Vec<(String, String)>) -> Crate {
            let mut files = Vec::new();
            let mut test_modules = BTreeSet::new();
            let mut macros = BTreeMap::new();
            for (path, text) in &sources {
                let module = module_of(path);
                let code = lex::strip(text);
                for name in lex::exported_macros(&code) {
                    macros.insert(name, module.clone());
                }
                let (code, tests) = lex::without_tests(&code);
                for t in tests {
                    let mut m = module.clone();
                    m.push(t);
                    test_modules.insert(m);
                }
                let paths = lex::paths(&lex::tokens(&code));
                files.push(File {
                    path: path.clone(),
                    module,
                    test: false,
                    paths,
                });
            }
            let mut modules = BTreeMap::new();
            for (i, f) in files.iter_mut().enumerate() {
                f.test = test_modules.iter().any(|t| f.module.starts_with(t));
                if !f.path.ends_with("main.rs") {
                    modules.insert(f.module.clone(), i);
                }
            }
            Crate {
                files,
                modules,
                macros,
            }
        }

        /// `segs`, written in `module`, from the crate root; `None` for a
        /// path outside the crate.
        fn absolute(&self, module: &[String], segs: &[String]) -> Option<Vec<String>> {
            let first = segs.first()?;
            let (mut out, rest) = match first.as_str() {
                "crate" | "ggp_asp" => (Vec::new(), &segs[1..]),
                "self" => (module.to_vec(), &segs[1..]),
                "super" => {
                    let ups = segs.iter().take_while(|s| *s == "super").count();
                    let keep = module.len().checked_sub(ups)?;
                    (module[..keep].to_vec(), &segs[ups..])
                }
                _ => {
                    let mut child = module.to_vec();
                    child.push(first.clone());
                    if !self.modules.contains_key(&child) {
                        return None;
                    }
                    (module.to_vec(), segs)
                }
            };
            out.extend(rest.iter().filter(|s| *s != "self").cloned());
            Some(out)
        }

        /// The module that holds what `abs` names, following re-exports and
        /// exported macros; `None` when it is not in the crate.
        fn target(&self, abs: Vec<String>, depth: usize) -> Option<Vec<String>> {
            if depth > 16 {
                return None;
            }
            if abs.len() == 1 {
                if let Some(m) = self.macros.get(&abs[0]) {
                    return Some(m.clone());
                }
            }
            let mut known = abs.len();
            while known > 0 && !self.modules.contains_key(&abs[..known]) {
                known -= 1;
            }
            if known < abs.len() {
                if let Some(via) = self.reexport(&abs[..known], &abs[known]) {
                    let mut next = via;
                    next.extend(abs[known + 1..].iter().cloned());
                    if next != abs {
                        return self.target(next, depth + 1);
                    }
                }
            }
            (known > 0).then(|| abs[..known].to_vec())
        }

        /// What the `use` items of `module`'s file bring in as `name`.
        fn reexport(&self, module: &[String], name: &str) -> Option<Vec<String>> {
            let file = &self.files[*self.modules.get(module)?];
            file.paths
                .iter()
                .filter(|p| p.name.as_deref() == Some(name))
                .find_map(|p| self.absolute(&file.module, &p.segs))
        }

        /// For every file outside test code, each module it uses, with the line.
        fn uses(&self) -> impl Iterator<Item = (&File, Vec<String>, usize)> + '_ {
            self.files.iter().filter(|f| !f.test).flat_map(move |f| {
                f.paths.iter().filter_map(move |p| {
                    let abs = self.absolute(&f.module, &p.segs)?;
                    Some((f, self.target(abs, 0)?, p.line))
                })
            })
        }

        /// The uses between top-level modules.
        pub fn module_edges(&self) -> Edges {
            let mut edges = Edges::new();
            for (f, to, line) in self.uses() {
                let (Some(a), Some(b)) = (f.module.first(), to.first()) else {
                    continue;
                };
                if a != b {
                    edges
                        .entry((a.clone(), b.clone()))
                        .or_default()
                        .insert((f.path.clone(), line));
                }
            }
            edges
        }

        pub fn module_cycles(&self) -> Vec<String> {
            cycles(&self.module_edges(), "")
        }

        /// Every use of a module whose layer is above the user's, and every
        /// top-level module in no layer.
        pub fn upward_uses(&self, layers: &[&[&str]]) -> Vec<String> {
            let layer = |m: &str| layers.iter().position(|l| l.contains(&m));
            let mut out = Vec::new();
            let tops: BTreeSet<&String> =
                self.files.iter().filter_map(|f| f.module.first()).collect();
            for m in tops {
                if layer(m).is_none() {
                    out.push(format!(
                        "module `{m}` is in no layer: place it in LAYERS and docs/design.md"
                    ));
                }
            }
            for ((a, b), at) in self.module_edges() {
                let (Some(la), Some(lb)) = (layer(&a), layer(&b)) else {
                    continue;
                };
                if lb > la {
                    out.push(format!(
                        "{a} (layer {}) uses {b} (layer {}) at {}",
                        la + 1,
                        lb + 1,
                        places(&at)
                    ));
                }
            }
            out
        }

        /// The cycles between the sibling files (and sub-folders) of every
        /// module, the module's own file left out.
        pub fn file_cycles(&self) -> Vec<String> {
            let mut levels: BTreeMap<Vec<String>, Edges> = BTreeMap::new();
            for (f, to, line) in self.uses() {
                for depth in 1..f.module.len() {
                    let parent = &f.module[..depth];
                    if to.len() > depth && to.starts_with(parent) && to[depth] != f.module[depth] {
                        levels
                            .entry(parent.to_vec())
                            .or_default()
                            .entry((f.module[depth].clone(), to[depth].clone()))
                            .or_default()
                            .insert((f.path.clone(), line));
                    }
                }
            }
            let mut out = Vec::new();
            for (parent, edges) in levels {
                out.extend(cycles(&edges, &format!("{}::", parent.join("::"))));
            }
            out
        }
    }

    fn places(at: &BTreeSet<(String, usize)>) -> String {
        let shown: Vec<String> = at.iter().map(|(f, l)| format!("{f}:{l}")).collect();
        shown.join(", ")
    }

    /// One finding per strongly connected component of more than one node:
    /// the component and each of its edges with where it is written.
    pub fn cycles(edges: &Edges, prefix: &str) -> Vec<String> {
        let mut out = Vec::new();
        for component in components(edges) {
            let mut text = format!(
                "cycle between {}:",
                component
                    .iter()
                    .map(|n| format!("{prefix}{n}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            for ((a, b), at) in edges {
                if component.contains(a) && component.contains(b) {
                    text.push_str(&format!(
                        "\n    {prefix}{a} -> {prefix}{b} at {}",
                        places(at)
                    ));
                }
            }
            out.push(text);
        }
        out
    }

    /// The strongly connected components of more than one node: a node
    /// belongs with every node that reaches it and that it reaches.
    fn components(edges: &Edges) -> Vec<BTreeSet<String>> {
        let mut reach: BTreeMap<&String, BTreeSet<&String>> = BTreeMap::new();
        for (a, b) in edges.keys() {
            reach.entry(a).or_default().insert(b);
            reach.entry(b).or_default();
        }
        // Transitive closure: the graphs are a few dozen nodes.
        loop {
            let mut grew = false;
            let nodes: Vec<&String> = reach.keys().copied().collect();
            for n in &nodes {
                let via: BTreeSet<&String> = reach[n]
                    .iter()
                    .flat_map(|m| reach[m].iter().copied())
                    .collect();
                let set = reach.get_mut(n).unwrap();
                let before = set.len();
                set.extend(via);
                grew |= set.len() > before;
            }
            if !grew {
                break;
            }
        }
        let mut out: Vec<BTreeSet<String>> = Vec::new();
        for (n, r) in &reach {
            let component: BTreeSet<String> = r
                .iter()
                .filter(|m| reach[*m].contains(n))
                .map(|m| m.to_string())
                .chain(std::iter::once(n.to_string()))
                .collect();
            if component.len() > 1 && !out.contains(&component) {
                out.push(component);
            }
        }
        out
    }

    /// Rust text reduced to what the checker reads.
    pub mod lex {
        use super::Written;

        /// The text with comments, string and character literals blanked
        /// (newlines kept, so lines still count).
        pub fn strip(src: &str) -> String {
            let c: Vec<char> = src.chars().collect();
            let mut out = String::with_capacity(src.len());
            let blank = |out: &mut String, ch: char| out.push(if ch == '\n' { '\n' } else { ' ' });
            let ident = |ch: char| ch.is_alphanumeric() || ch == '_';
            let at = |i: usize| c.get(i).copied().unwrap_or('\0');
            let mut i = 0;
            while i < c.len() {
                let start = i;
                if c[i] == '/' && at(i + 1) == '/' {
                    while i < c.len() && c[i] != '\n' {
                        i += 1;
                    }
                } else if c[i] == '/' && at(i + 1) == '*' {
                    let mut depth = 0;
                    while i < c.len() {
                        if c[i] == '/' && at(i + 1) == '*' {
                            depth += 1;
                            i += 2;
                        } else if c[i] == '*' && at(i + 1) == '/' {
                            depth -= 1;
                            i += 2;
                            if depth == 0 {
                                break;
                            }
                        } else {
                            i += 1;
                        }
                    }
                } else if c[i] == '"' {
                    i += 1;
                    while i < c.len() && c[i] != '"' {
                        i += if c[i] == '\\' { 2 } else { 1 };
                    }
                    i += 1;
                } else if c[i] == 'r'
                    && (i == 0
                        || !ident(c[i - 1])
                        || (c[i - 1] == 'b' && (i < 2 || !ident(c[i - 2]))))
                    && matches!(at(i + 1), '"' | '#')
                    && {
                        let hashes = c[i + 1..].iter().take_while(|&&h| h == '#').count();
                        at(i + 1 + hashes) == '"'
                    }
                {
                    let hashes = c[i + 1..].iter().take_while(|&&h| h == '#').count();
                    i += hashes + 2;
                    while i < c.len() && !(c[i] == '"' && (1..=hashes).all(|k| at(i + k) == '#')) {
                        i += 1;
                    }
                    i += hashes + 1;
                } else if c[i] == '\'' && at(i + 1) == '\\' {
                    i += 3;
                    while i < c.len() && c[i] != '\'' {
                        i += 1;
                    }
                    i += 1;
                } else if c[i] == '\'' && at(i + 2) == '\'' {
                    i += 3;
                } else {
                    out.push(c[i]);
                    i += 1;
                    continue;
                }
                for &ch in &c[start..i.min(c.len())] {
                    blank(&mut out, ch);
                }
            }
            out
        }

        /// The names of the `#[macro_export]` macros defined in stripped text.
        pub fn exported_macros(code: &str) -> Vec<String> {
            let mut out = Vec::new();
            for (i, _) in code.match_indices("#[macro_export]") {
                let rest = code[i..].split_once("macro_rules!").map(|(_, r)| r);
                if let Some(name) = rest.and_then(|r| {
                    r.split(|ch: char| !(ch.is_alphanumeric() || ch == '_'))
                        .find(|s| !s.is_empty())
                }) {
                    out.push(name.to_string());
                }
            }
            out
        }

        /// Stripped text with every `#[cfg(test)]` item blanked, and the
        /// modules declared `#[cfg(test)] mod name;` (files of test code).
        pub fn without_tests(code: &str) -> (String, Vec<String>) {
            let mut text: Vec<char> = code.chars().collect();
            let marker: Vec<char> = "#[cfg(test)]".chars().collect();
            let mut files = Vec::new();
            let mut i = 0;
            while i + marker.len() <= text.len() {
                if text[i..i + marker.len()] != marker[..] {
                    i += 1;
                    continue;
                }
                let end = item_end(&text, i + marker.len());
                let item: String = text[i + marker.len()..end].iter().collect();
                let words: Vec<&str> = item
                    .split(|ch: char| !(ch.is_alphanumeric() || ch == '_' || ch == ';'))
                    .filter(|w| !w.is_empty())
                    .collect();
                if let Some(k) = words.iter().position(|w| *w == "mod") {
                    if let Some(name) = words.get(k + 1).and_then(|w| w.strip_suffix(';')) {
                        files.push(name.to_string());
                    }
                }
                for ch in &mut text[i..end] {
                    if *ch != '\n' {
                        *ch = ' ';
                    }
                }
                i = end;
            }
            (text.into_iter().collect(), files)
        }

        /// Where the item that starts at `from` ends: after its `;` or its
        /// closing brace, whichever comes first outside brackets (further
        /// attributes skipped).
        fn item_end(text: &[char], from: usize) -> usize {
            let mut depth = 0i32;
            let mut i = from;
            while i < text.len() {
                match text[i] {
                    '(' | '[' => depth += 1,
                    ')' | ']' => depth -= 1,
                    ';' if depth == 0 => return i + 1,
                    '{' if depth == 0 => {
                        let mut braces = 0;
                        while i < text.len() {
                            match text[i] {
                                '{' => braces += 1,
                                '}' => {
                                    braces -= 1;
                                    if braces == 0 {
                                        return i + 1;
                                    }
                                }
                                _ => {}
                            }
                            i += 1;
                        }
                        return i;
                    }
                    _ => {}
                }
                i += 1;
            }
            i
        }

        #[derive(Clone, Debug, PartialEq)]
        pub enum Tok {
            Ident(String),
            /// `::`
            Sep,
            Punct(char),
        }

        /// Identifiers (`r#match` read as `match`), `::` and single
        /// punctuation, each with its line; numbers dropped.
        pub fn tokens(code: &str) -> Vec<(Tok, usize)> {
            let c: Vec<char> = code.chars().collect();
            let mut out = Vec::new();
            let mut line = 1;
            let mut i = 0;
            while i < c.len() {
                let ch = c[i];
                let word = |k: usize| k < c.len() && (c[k].is_alphanumeric() || c[k] == '_');
                if ch == '\n' {
                    line += 1;
                    i += 1;
                } else if ch.is_whitespace() {
                    i += 1;
                } else if ch == 'r'
                    && c.get(i + 1) == Some(&'#')
                    && word(i + 2)
                    && !word(i.wrapping_sub(1))
                {
                    i += 2;
                } else if ch.is_alphabetic() || ch == '_' || ch.is_ascii_digit() {
                    let start = i;
                    while word(i) {
                        i += 1;
                    }
                    if !ch.is_ascii_digit() {
                        out.push((Tok::Ident(c[start..i].iter().collect()), line));
                    }
                } else if ch == ':' && c.get(i + 1) == Some(&':') {
                    out.push((Tok::Sep, line));
                    i += 2;
                } else {
                    out.push((Tok::Punct(ch), line));
                    i += 1;
                }
            }
            out
        }

        /// The crate paths in the tokens: every leaf of a `use` tree, and
        /// every path written inline from `crate`, `super`, `self` or
        /// `ggp_asp`.
        pub fn paths(toks: &[(Tok, usize)]) -> Vec<Written> {
            let mut out = Vec::new();
            let mut i = 0;
            while i < toks.len() {
                let after_sep = i > 0 && toks[i - 1].0 == Tok::Sep;
                match &toks[i].0 {
                    Tok::Ident(w) if w == "use" && !after_sep => {
                        i += 1;
                        use_tree(toks, &mut i, Vec::new(), &mut out);
                    }
                    Tok::Ident(w)
                        if matches!(w.as_str(), "crate" | "super" | "self" | "ggp_asp")
                            && !after_sep
                            && toks.get(i + 1).map(|t| &t.0) == Some(&Tok::Sep) =>
                    {
                        let line = toks[i].1;
                        let mut segs = Vec::new();
                        while let Some((Tok::Ident(s), _)) = toks.get(i) {
                            segs.push(s.clone());
                            if toks.get(i + 1).map(|t| &t.0) != Some(&Tok::Sep) {
                                break;
                            }
                            i += 2;
                        }
                        out.push(Written {
                            segs,
                            line,
                            name: None,
                        });
                    }
                    _ => {}
                }
                i += 1;
            }
            out
        }

        /// One `use` tree from `*i`: its leaves, each under `prefix`.
        fn use_tree(
            toks: &[(Tok, usize)],
            i: &mut usize,
            prefix: Vec<String>,
            out: &mut Vec<Written>,
        ) {
            let mut segs = prefix;
            let mut line = toks.get(*i).map_or(0, |t| t.1);
            let mut alias = None;
            while let Some((tok, l)) = toks.get(*i) {
                match tok {
                    Tok::Ident(w) if w == "as" => {
                        if let Some((Tok::Ident(a), _)) = toks.get(*i + 1) {
                            alias = Some(a.clone());
                        }
                        *i += 2;
                    }
                    Tok::Ident(w) => {
                        segs.push(w.clone());
                        line = *l;
                        *i += 1;
                    }
                    Tok::Sep => *i += 1,
                    Tok::Punct('{') => {
                        *i += 1;
                        while let Some((tok, _)) = toks.get(*i) {
                            match tok {
                                Tok::Punct('}') => {
                                    *i += 1;
                                    break;
                                }
                                Tok::Punct(',') => *i += 1,
                                _ => use_tree(toks, i, segs.clone(), out),
                            }
                        }
                        return;
                    }
                    Tok::Punct('*') => {
                        // A glob names no item the checker could follow.
                        *i += 1;
                        return;
                    }
                    _ => break,
                }
            }
            let name = alias.or_else(|| segs.iter().rev().find(|s| *s != "self").cloned());
            if !segs.is_empty() {
                out.push(Written { segs, line, name });
            }
        }
    }
}

/// The checker on small crates and pages written here, so that it cannot
/// pass for want of finding anything.
mod checker {
    use super::check::Crate;
    use super::docs;

    #[test]
    fn reads_the_docs_paths_anchors_and_layers() {
        let page = "# Map\n\n## `src/gdl/`: the language\n\nsee `src/a.rs`, src/b/ and \
                    src/cli/*.rs.\n```\nforward/ the search\n```\n\n## Layers\n\n```\n\
                    1  a, b: the base\n2  c: above\n```\n\n## Layers\n";
        assert_eq!(
            docs::code_paths(page),
            [
                (3, "src/gdl/".to_string()),
                (5, "src/a.rs".to_string()),
                (5, "src/b/".to_string())
            ]
        );
        let anchors = docs::anchors(page);
        for a in ["map", "srcgdl-the-language", "layers", "layers-1"] {
            assert!(anchors.contains(a), "{a} in {anchors:?}");
        }
        assert_eq!(docs::layers(page), [vec!["a", "b"], vec!["c"]]);
        let section = docs::section(page, "`src/gdl/`").unwrap();
        assert!(docs::names(section, "forward/"));
        assert!(!docs::names(section, "ward/"));
        assert!(!section.contains("Layers"));
    }

    fn krate(files: &[(&str, &str)]) -> Crate {
        Crate::new(
            files
                .iter()
                .map(|(p, t)| (p.to_string(), t.to_string()))
                .collect(),
        )
    }

    #[test]
    fn finds_a_cycle_and_an_upward_use_with_their_lines() {
        let c = krate(&[
            ("src/lib.rs", "pub mod a;\npub mod b;\npub mod c;\n"),
            (
                "src/a.rs",
                "//! uses crate::c in a comment only\nfn f() {\n    crate::b::g();\n}\n",
            ),
            (
                "src/b/mod.rs",
                "use crate::{\n    a::f,\n    c::{self, H},\n};\nconst S: &str = \"crate::c\";\n",
            ),
            ("src/c.rs", "pub struct H;\n"),
        ]);
        let cycles = c.module_cycles();
        assert_eq!(cycles.len(), 1, "{cycles:?}");
        assert!(cycles[0].contains("a -> b at src/a.rs:3"), "{}", cycles[0]);
        assert!(
            cycles[0].contains("b -> a at src/b/mod.rs:2"),
            "{}",
            cycles[0]
        );
        let up = c.upward_uses(&[&["c"], &["a"], &["b"]]);
        assert_eq!(up, ["a (layer 2) uses b (layer 3) at src/a.rs:3"]);
        let up = c.upward_uses(&[&["a", "b"]]);
        assert_eq!(
            up,
            ["module `c` is in no layer: place it in LAYERS and docs/design.md"]
        );
    }

    #[test]
    fn exempts_test_code_and_reads_past_literals() {
        let c = krate(&[
            ("src/lib.rs", "pub mod a;\npub mod b;\n"),
            (
                "src/a/mod.rs",
                "pub fn f() -> char { '\"' }\n#[cfg(test)]\nmod tests;\n#[cfg(test)]\nmod more {\n    use crate::b::g;\n}\nconst R: &str = r#\"crate::b::g\"#;\n",
            ),
            ("src/a/tests.rs", "use crate::b::g;\n"),
            ("src/b.rs", "pub fn g<'a>(x: &'a str) { crate::a::f(); }\n"),
        ]);
        assert!(c.module_cycles().is_empty(), "{:?}", c.module_cycles());
        assert_eq!(c.upward_uses(&[&["a"], &["b"]]).len(), 0);
        assert_eq!(c.upward_uses(&[&["b"], &["a"]]).len(), 1);
    }

    #[test]
    fn finds_a_file_cycle_through_a_reexport_and_super() {
        let c = krate(&[
            ("src/lib.rs", "pub mod m;\n#[macro_use]\npub mod say;\n"),
            (
                "src/say.rs",
                "#[macro_export]\nmacro_rules! say { () => {} }\n",
            ),
            (
                "src/m/mod.rs",
                "mod x;\nmod y;\nmod z;\npub use self::x::Foo;\n",
            ),
            (
                "src/m/x.rs",
                "pub struct Foo;\nfn f() { super::y::bar(); }\n",
            ),
            ("src/m/y.rs", "use super::Foo;\npub fn bar() {}\n"),
            ("src/m/z/mod.rs", "mod w;\n"),
            (
                "src/m/z/w.rs",
                "use super::super::x;\nfn g() { crate::say!(); }\n",
            ),
        ]);
        let cycles = c.file_cycles();
        assert_eq!(cycles.len(), 1, "{cycles:?}");
        assert!(
            cycles[0].contains("m::x -> m::y at src/m/x.rs:2"),
            "{}",
            cycles[0]
        );
        assert!(
            cycles[0].contains("m::y -> m::x at src/m/y.rs:1"),
            "{}",
            cycles[0]
        );
        assert!(!cycles[0].contains("m::z"), "{}", cycles[0]);
        let up = c.upward_uses(&[&["m"], &["say"]]);
        assert_eq!(up, ["m (layer 1) uses say (layer 2) at src/m/z/w.rs:2"]);
    }
}
