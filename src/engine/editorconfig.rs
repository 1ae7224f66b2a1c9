//! The tab width a project declares in `.editorconfig` (for the relaxed tier's `tabs`, SPEC §3b).
//!
//! Every `.editorconfig` from the file's directory up to the root (or up to one with
//! `root = true`) is read; closer files and later sections win. `tab_width` is the width;
//! without it a numeric `indent_size` is (as the EditorConfig specification says). Section
//! globs: `*`, `**`, `?`, `[abc]`, `[!abc]` and `{a,b}`; a glob without `/` matches the file name
//! at any depth. A batch reads each directory's file once ([`Configs`]); at most the
//! [`MAX_CHAIN`] closest files apply, a file over [`MAX_CONFIG`] bytes is ignored, and section
//! checks past a budget linear in the request's paths declare nothing.

use crate::write::Root;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// At most this many `.editorconfig` files, the closest, apply to a file (real projects nest a
/// few; a deeper chain is cut so that a batch's lookups cost its paths, not paths × chain).
const MAX_CHAIN: usize = 16;
/// An `.editorconfig` larger than this is ignored (real ones are a few hundred bytes).
const MAX_CONFIG: usize = 64 * 1024;

/// One `.editorconfig`: `root = true`, and its sections (glob, `tab_width`, `indent_size`).
struct Config {
    root: bool,
    sections: Vec<(Glob, Option<usize>, Option<usize>)>,
}

/// The `.editorconfig` files of one batch's directories, each read once: a tree of the
/// directories from the root down to each file's own (one node a path component, so the
/// memory is that of the request's paths), each with the chain of files that apply in it
/// (closest first). Looking a thousand files up in one deep directory used to read every
/// ancestor's `.editorconfig` again for each file, each read resolving the whole path again
/// (quadratic in the depth: 2,000 files 400 directories deep took minutes).
pub(crate) struct Configs<'r> {
    root: &'r Root,
    /// Node 0 is the root directory (once a lookup was made).
    nodes: RefCell<Vec<Node>>,
    /// Section checks left: past them a file gets no declared width (the relaxed tier then
    /// tries 2, 4 and 8), so hostile configs cost at most a budget linear in the batch.
    budget: Cell<usize>,
}

/// A directory: its subdirectories met so far, and the `.editorconfig` files that apply in it,
/// closest first, each with its directory's depth (in components below the root).
struct Node {
    children: HashMap<std::ffi::OsString, usize>,
    chain: Rc<Vec<Rc<(usize, Config)>>>,
}

impl<'r> Configs<'r> {
    /// A batch's lookups under `root`, `budget` section checks in all.
    pub(crate) fn new(root: &'r Root, budget: usize) -> Configs<'r> {
        Configs {
            root,
            nodes: RefCell::new(Vec::new()),
            budget: Cell::new(budget),
        }
    }

    /// The chain of a directory at `depth` whose parent's chain is `above`.
    fn chain_below(
        &self,
        above: &Rc<Vec<Rc<(usize, Config)>>>,
        dir: &Path,
        depth: usize,
    ) -> Rc<Vec<Rc<(usize, Config)>>> {
        match self.read(dir) {
            Some(c) => {
                let root = c.root;
                let mut v = vec![Rc::new((depth, c))];
                if !root {
                    v.extend(above.iter().take(MAX_CHAIN - 1).cloned());
                }
                Rc::new(v)
            }
            None => Rc::clone(above),
        }
    }

    /// The `.editorconfig` files that apply in directory `dir` (relative to the root), closest
    /// first, up to one with `root = true` or [`MAX_CHAIN`] of them.
    fn chain(&self, dir: &Path) -> Rc<Vec<Rc<(usize, Config)>>> {
        if self.nodes.borrow().is_empty() {
            // The root's own file, read at the first lookup (a batch without one reads none).
            let chain = self.chain_below(&Rc::default(), Path::new(""), 0);
            self.nodes.borrow_mut().push(Node {
                children: HashMap::new(),
                chain,
            });
        }
        let mut at = 0;
        let mut path = PathBuf::new();
        for (depth, c) in dir.components().enumerate() {
            let name = c.as_os_str();
            path.push(name);
            let next = self.nodes.borrow()[at].children.get(name).copied();
            at = match next {
                Some(n) => n,
                None => {
                    let above = Rc::clone(&self.nodes.borrow()[at].chain);
                    let chain = self.chain_below(&above, &path, depth + 1);
                    let mut nodes = self.nodes.borrow_mut();
                    nodes.push(Node {
                        children: HashMap::new(),
                        chain,
                    });
                    let n = nodes.len() - 1;
                    nodes[at].children.insert(name.to_os_string(), n);
                    n
                }
            };
        }
        Rc::clone(&self.nodes.borrow()[at].chain)
    }

    /// Directory `dir`'s own `.editorconfig`, parsed.
    fn read(&self, dir: &Path) -> Option<Config> {
        let cfg = dir.join(".editorconfig");
        let snap = self.root.read(cfg.to_str()?).ok()?;
        if snap.bytes.len() > MAX_CONFIG {
            return None;
        }
        let text = String::from_utf8(snap.bytes).ok()?;
        let (root, sections) = parse(&text);
        let sections = sections
            .into_iter()
            .map(|(glob, props)| {
                let get = |k: &str| {
                    props
                        .iter()
                        .rev()
                        .find(|(key, v)| key == k && v.parse::<usize>().is_ok())
                        .and_then(|(_, v)| v.parse().ok())
                };
                (Glob::new(&glob), get("tab_width"), get("indent_size"))
            })
            .collect();
        Some(Config { root, sections })
    }

    /// The declared tab width for `rel` (a path relative to the root), if any.
    pub(crate) fn tab_width(&self, rel: &Path) -> Option<usize> {
        let chain = self.chain(rel.parent().unwrap_or(Path::new("")));
        let mut tab: Option<usize> = None;
        let mut indent: Option<usize> = None;
        // Farthest first, so that closer files (and later sections) override.
        for c in chain.iter().rev() {
            let (depth, config) = (c.0, &c.1);
            // The path below the `.editorconfig`'s directory.
            let sub: PathBuf = rel.components().skip(depth).collect();
            let Some(sub) = sub.to_str() else { continue };
            for (glob, t, i) in &config.sections {
                // Out of budget: no declared width.
                let left = self.budget.get().checked_sub(1 + sub.len())?;
                self.budget.set(left);
                if glob.matches(sub) {
                    tab = t.or(tab);
                    indent = i.or(indent);
                }
            }
        }
        tab.or(indent).filter(|&w| w > 0 && w <= 64)
    }
}

/// The declared tab width for `rel` (a path relative to the root), if any: one lookup alone
/// ([`Configs`] for a batch).
#[cfg(test)]
pub(crate) fn tab_width(root: &Root, rel: &Path) -> Option<usize> {
    Configs::new(root, usize::MAX).tab_width(rel)
}

type Section = (String, Vec<(String, String)>);

/// (`root = true` in the preamble, sections with their lower-cased properties).
fn parse(text: &str) -> (bool, Vec<Section>) {
    let mut root = false;
    let mut sections: Vec<Section> = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(glob) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            sections.push((glob.to_string(), Vec::new()));
            continue;
        }
        let Some((k, v)) = line.split_once('=') else {
            continue;
        };
        let (k, v) = (k.trim().to_ascii_lowercase(), v.trim().to_ascii_lowercase());
        match sections.last_mut() {
            Some((_, props)) => props.push((k, v)),
            None if k == "root" => root = v == "true",
            None => {}
        }
    }
    (root, sections)
}

/// A section's glob, compiled to a regular expression (matching in time linear in the path:
/// the globs come from files in the project, and a backtracking match of `**a**a**a…` is
/// exponential). A glob without `/` matches the file name; one with `/` the path from the
/// `.editorconfig`'s directory (a leading `/` anchors it there too).
struct Glob(Option<regex::Regex>);

impl Glob {
    fn new(glob: &str) -> Glob {
        let (glob, whole_path) = match glob.strip_prefix('/') {
            Some(g) => (g, true),
            None => (glob, glob.contains('/')),
        };
        let chars: Vec<char> = glob.chars().collect();
        let mut re = String::from("^");
        if !whole_path {
            // The file name at any depth.
            re.push_str("(?:.*/)?");
        }
        translate(&chars, &mut re);
        re.push('$');
        Glob(
            regex::RegexBuilder::new(&re)
                .dot_matches_new_line(true)
                .size_limit(1 << 20)
                .build()
                .ok(),
        )
    }

    fn matches(&self, path: &str) -> bool {
        self.0.as_ref().is_some_and(|r| r.is_match(path))
    }
}

/// Appends the regular expression of glob `g`: `**` any text, `*` any text without `/`, `?`
/// one character but `/`, `[abc]` and `[!abc]` one of (or none of) those characters, `{a,b}`
/// either glob; a `[` or `{` that is not closed is itself.
fn translate(g: &[char], re: &mut String) {
    let mut i = 0;
    while i < g.len() {
        match g[i] {
            '*' if g.get(i + 1) == Some(&'*') => {
                re.push_str(".*");
                i += 2;
                continue;
            }
            '*' => re.push_str("[^/]*"),
            '?' => re.push_str("[^/]"),
            '[' => {
                if let Some(close) = g[i + 1..].iter().position(|&c| c == ']') {
                    let class = &g[i + 1..i + 1 + close];
                    let (neg, class) = match class.first() {
                        Some('!') => (true, &class[1..]),
                        _ => (false, class),
                    };
                    match (class.is_empty(), neg) {
                        (true, true) => re.push_str("(?s:.)"),
                        (true, false) => re.push_str("[a&&b]"),
                        _ => {
                            re.push_str(if neg { "[^" } else { "[" });
                            for &c in class {
                                re.push_str(&regex::escape(c.encode_utf8(&mut [0; 4])));
                            }
                            re.push(']');
                        }
                    }
                    i += close + 2;
                    continue;
                }
                re.push_str(r"\[");
            }
            '{' => {
                if let Some(close) = g[i + 1..].iter().position(|&c| c == '}') {
                    re.push_str("(?:");
                    for (k, alt) in g[i + 1..i + 1 + close].split(|&c| c == ',').enumerate() {
                        if k > 0 {
                            re.push('|');
                        }
                        translate(alt, re);
                    }
                    re.push(')');
                    i += close + 2;
                    continue;
                }
                re.push_str(r"\{");
            }
            c => re.push_str(&regex::escape(c.encode_utf8(&mut [0; 4]))),
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        let m = |g: &str, p: &str| Glob::new(g).matches(p);
        assert!(m("*", "src/a.rs"));
        assert!(m("*.{rs,go}", "src/a.go"));
        assert!(!m("*.{rs,go}", "src/a.py"));
        assert!(m("src/*.rs", "src/a.rs"));
        assert!(!m("src/*.rs", "src/x/a.rs"));
        assert!(m("src/**.rs", "src/x/a.rs"));
        assert!(m("[Mm]akefile", "Makefile"));
        assert!(m("a?c", "abc"));
        assert!(!m("a?c", "a/c"));
        assert!(m("/a.rs", "a.rs") && !m("/a.rs", "x/a.rs"));
        assert!(m("[!x]y", "zy") && !m("[!x]y", "xy"));
        assert!(m("a[b", "a[b") && m("{c", "{c") && m("x.{a,[bc]}", "x.c"));
        assert!(m("a.$(x)+", "a.$(x)+"), "regex characters are themselves");
        assert!(!m("[]", "a") && m("[!]", "a"));
        // Linear, where backtracking over 40 `**` on a 4 KB path would not end.
        let hostile = "**a".repeat(40) + "b";
        assert!(!m(&hostile, &"a/".repeat(2_000)));
    }

    #[test]
    fn tab_width_from_the_closest_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(
            dir.path().join(".editorconfig"),
            "root = true\n[*]\nindent_size = 2\n[*.go]\nindent_style = tab\ntab_width = 8\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("sub/.editorconfig"),
            "[*.c]\nindent_size = 3\n",
        )
        .unwrap();
        let root = Root::open(dir.path(), Default::default()).unwrap();
        assert_eq!(tab_width(&root, Path::new("a.rs")), Some(2));
        assert_eq!(tab_width(&root, Path::new("x/a.go")), Some(8));
        assert_eq!(tab_width(&root, Path::new("sub/a.c")), Some(3));
        assert_eq!(tab_width(&root, Path::new("sub/a.py")), Some(2));
        // One batch's lookups, each directory read once, say the same; a `root = true` deeper
        // down hides the files above it.
        std::fs::create_dir_all(dir.path().join("sub/deep/er")).unwrap();
        std::fs::write(
            dir.path().join("sub/deep/.editorconfig"),
            "root = true\n[er/*.py]\ntab_width = 5\n",
        )
        .unwrap();
        let configs = Configs::new(&root, usize::MAX);
        for (path, want) in [
            ("sub/deep/er/a.py", Some(5)),
            ("sub/deep/er/a.c", None),
            ("sub/a.c", Some(3)),
            ("x/y/a.go", Some(8)),
            ("a.rs", Some(2)),
            ("sub/deep/er/b.py", Some(5)),
        ] {
            assert_eq!(configs.tab_width(Path::new(path)), want, "{path}");
            assert_eq!(tab_width(&root, Path::new(path)), want, "{path} alone");
        }
        // Past its budget of section checks a lookup declares nothing.
        let tight = Configs::new(&root, 10);
        assert_eq!(tight.tab_width(Path::new("sub/a.c")), None);
    }
}
