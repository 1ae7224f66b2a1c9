//! Tree helpers shared by the fixture runners (`cases`, `codex_corpus`).
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// One entry of a tree, compared byte for byte.
#[derive(Debug, PartialEq, Eq)]
pub enum Entry {
    Dir,
    File(Vec<u8>),
    Link(PathBuf),
}

/// Every file and symlink under `root` by relative path, and every directory too when `dirs`;
/// empty when `root` does not exist.
pub fn snapshot(root: &Path, dirs: bool) -> BTreeMap<PathBuf, Entry> {
    fn walk(root: &Path, dir: &Path, dirs: bool, out: &mut BTreeMap<PathBuf, Entry>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(root).unwrap().to_path_buf();
            let meta = fs::symlink_metadata(&path).unwrap();
            if meta.file_type().is_symlink() {
                out.insert(rel, Entry::Link(fs::read_link(&path).unwrap()));
            } else if meta.is_dir() {
                if dirs {
                    out.insert(rel, Entry::Dir);
                }
                walk(root, &path, dirs, out);
            } else {
                out.insert(rel, Entry::File(fs::read(&path).unwrap()));
            }
        }
    }
    let mut out = BTreeMap::new();
    if root.exists() {
        walk(root, root, dirs, &mut out);
    }
    out
}

/// Copies a tree, keeping symlinks as symlinks; copies are writable even when the source is
/// checked out read-only.
pub fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let dest = to.join(path.file_name().unwrap());
        let meta = fs::symlink_metadata(&path).unwrap();
        if meta.file_type().is_symlink() {
            std::os::unix::fs::symlink(fs::read_link(&path).unwrap(), &dest).unwrap();
        } else if meta.is_dir() {
            copy_tree(&path, &dest);
        } else {
            fs::write(&dest, fs::read(&path).unwrap()).unwrap();
        }
    }
}
