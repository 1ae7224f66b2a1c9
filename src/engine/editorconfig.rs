//! The tab width a project declares in `.editorconfig` (for the relaxed tier's `tabs`, SPEC §3b).
//!
//! Every `.editorconfig` from the file's directory up to the root (or up to one with
//! `root = true`) is read; closer files and later sections win. `tab_width` is the width;
//! without it a numeric `indent_size` is (as the EditorConfig specification says). Section
//! globs: `*`, `**`, `?`, `[abc]`, `[!abc]` and `{a,b}`; a glob without `/` matches the file name
//! at any depth.

use crate::write::Root;
use std::path::Path;

/// The declared tab width for `rel` (a path relative to the root), if any.
pub(crate) fn tab_width(root: &Root, rel: &Path) -> Option<usize> {
    let dirs: Vec<&Path> = rel.ancestors().skip(1).collect(); // closest first, "" last
    let mut files: Vec<(&Path, String)> = Vec::new();
    for d in dirs {
        let cfg = d.join(".editorconfig");
        let Some(cfg) = cfg.to_str() else { continue };
        let Ok(snap) = root.read(cfg) else { continue };
        let Ok(text) = String::from_utf8(snap.bytes) else {
            continue;
        };
        let is_root = parse(&text).0;
        files.push((d, text));
        if is_root {
            break;
        }
    }
    let mut tab: Option<usize> = None;
    let mut indent: Option<usize> = None;
    // Farthest first, so that closer files override.
    for (dir, text) in files.iter().rev() {
        let Ok(sub) = rel.strip_prefix(dir) else {
            continue;
        };
        let Some(sub) = sub.to_str() else { continue };
        for (glob, props) in parse(text).1 {
            if !section_matches(&glob, sub) {
                continue;
            }
            for (k, v) in props {
                match k.as_str() {
                    "tab_width" => tab = v.parse().ok().or(tab),
                    "indent_size" => indent = v.parse().ok().or(indent),
                    _ => {}
                }
            }
        }
    }
    tab.or(indent).filter(|&w| w > 0 && w <= 64)
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

fn section_matches(glob: &str, path: &str) -> bool {
    let (glob, target) = match glob.strip_prefix('/') {
        Some(g) => (g, path),
        None if glob.contains('/') => (glob, path),
        None => (glob, path.rsplit('/').next().unwrap_or(path)),
    };
    let g: Vec<char> = glob.chars().collect();
    let t: Vec<char> = target.chars().collect();
    matches(&g, &t)
}

fn matches(g: &[char], t: &[char]) -> bool {
    match g.first() {
        None => t.is_empty(),
        Some('*') if g.get(1) == Some(&'*') => (0..=t.len()).any(|i| matches(&g[2..], &t[i..])),
        Some('*') => {
            for i in 0..=t.len() {
                if matches(&g[1..], &t[i..]) {
                    return true;
                }
                if t.get(i) == Some(&'/') {
                    break;
                }
            }
            false
        }
        Some('?') => t.first().is_some_and(|&c| c != '/') && matches(&g[1..], &t[1..]),
        Some('[') => {
            let Some(close) = g.iter().position(|&c| c == ']') else {
                return t.first() == Some(&'[') && matches(&g[1..], &t[1..]);
            };
            let class = &g[1..close];
            let (neg, class) = match class.first() {
                Some('!') => (true, &class[1..]),
                _ => (false, class),
            };
            let Some(&c) = t.first() else { return false };
            (class.contains(&c) != neg) && matches(&g[close + 1..], &t[1..])
        }
        Some('{') => {
            let Some(close) = g.iter().position(|&c| c == '}') else {
                return t.first() == Some(&'{') && matches(&g[1..], &t[1..]);
            };
            let rest = &g[close + 1..];
            g[1..close].split(|&c| c == ',').any(|alt| {
                let mut p: Vec<char> = alt.to_vec();
                p.extend_from_slice(rest);
                matches(&p, t)
            })
        }
        Some(&c) => t.first() == Some(&c) && matches(&g[1..], &t[1..]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(section_matches("*", "src/a.rs"));
        assert!(section_matches("*.{rs,go}", "src/a.go"));
        assert!(!section_matches("*.{rs,go}", "src/a.py"));
        assert!(section_matches("src/*.rs", "src/a.rs"));
        assert!(!section_matches("src/*.rs", "src/x/a.rs"));
        assert!(section_matches("src/**.rs", "src/x/a.rs"));
        assert!(section_matches("[Mm]akefile", "Makefile"));
        assert!(section_matches("a?c", "abc"));
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
    }
}
