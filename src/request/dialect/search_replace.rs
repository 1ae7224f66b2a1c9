//! SEARCH/REPLACE blocks (Aider's edit format, SPEC §6), parsed into the canonical [`Request`].
//!
//! ````text
//! src/main.rs
//! ```rust
//! <<<<<<< SEARCH
//! fn a() {}
//! =======
//! fn b() {}
//! >>>>>>> REPLACE
//! ```
//! ````
//!
//! - Markers as Aider accepts them: 5 to 9 `<`, `=` or `>`, trailing whitespace allowed,
//!   `<<<<<<< SEARCH>` too. Cline's markers (`------- SEARCH`, `=======`, `+++++++ REPLACE`, in
//!   a `replace_in_file` tool call) are read the same way: 5 to 9 `-` or `+` stand for `<` or `>`.
//! - In a Cline tool call the path is a `<path>src/a.rs</path>` line; bare tag lines (`<diff>`,
//!   `</replace_in_file>`) are skipped when looking for it.
//! - The path is the nearest line above the SEARCH marker that is neither blank nor a fence,
//!   looking no further back than the previous block; with none, a fence info string that looks
//!   like a path (```` ```src/a.rs ````); with none either, the previous block's path. Markdown
//!   decoration around the path (`**`, `` ` ``, `#`, a trailing `:`) is dropped.
//! - Each block becomes one edit matched under SPEC §3 (exact or normalized, unique, all edits of
//!   a file against the same original). SEARCH and REPLACE are the lines between the markers,
//!   joined with `\n` and without a final line break, so a block can edit the last line of a file
//!   that has no final newline; when REPLACE is empty, SEARCH keeps its final `\n` so that the
//!   lines are removed, not emptied.
//! - An empty SEARCH creates the file with REPLACE as its content (each line ending in `\n`).
//!   Aider appends to an existing file instead; redline has no append, so on an existing file this
//!   overwrites it, which the response reports with the `overwrote_existing` warning. An empty
//!   SEARCH mixed with other blocks for the same path is an `invalid_request`.
//! - All blocks for one path merge into one [`FileRequest`], in order of first appearance.
//! - Text outside blocks (prose, fences) is ignored; a block without `=======` or `>>>>>>>
//!   REPLACE`, or without any path, is an `invalid_request` naming its line.

use crate::request::{EditSpec, FileRequest, Request, RequestError};

const FORMAT_HINT: &str = "a block is a path line, `<<<<<<< SEARCH`, the old lines, `=======`, the new lines, `>>>>>>> REPLACE`";

/// `<` (Aider) or `-` (Cline) × 5..=9 then ` SEARCH`, optionally `>`, then whitespace.
pub(crate) fn is_search_marker(line: &str) -> bool {
    ['<', '-']
        .into_iter()
        .any(|c| marker(line, c, "SEARCH").is_some_and(|rest| matches!(rest, "" | ">")))
}

fn is_divider(line: &str) -> bool {
    let t = line.trim_end();
    (5..=9).contains(&t.len()) && t.bytes().all(|b| b == b'=')
}

/// `>` (Aider) or `+` (Cline) × 5..=9 then ` REPLACE`, optionally `>` (Cline), then whitespace.
fn is_replace_marker(line: &str) -> bool {
    marker(line, '>', "REPLACE").is_some_and(str::is_empty)
        || marker(line, '+', "REPLACE").is_some_and(|rest| matches!(rest, "" | ">"))
}

/// For `cccccc WORD…`, what follows WORD (trailing whitespace removed).
fn marker<'a>(line: &'a str, c: char, word: &str) -> Option<&'a str> {
    let t = line.trim_end();
    let run = t.len() - t.trim_start_matches(c).len();
    if !(5..=9).contains(&run) {
        return None;
    }
    t[run..].strip_prefix(' ')?.strip_prefix(word)
}

fn is_fence(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("```") || t.starts_with("~~~")
}

/// The path a line names once markdown decoration is removed.
fn strip_path(line: &str) -> &str {
    let t = line.trim();
    let t = t.trim_start_matches('#').trim();
    let t = t.trim_end_matches(':').trim();
    t.trim_matches(|c| c == '*' || c == '`').trim()
}

/// A line that is one bare XML tag (`<diff>`, `</replace_in_file>`), as around a Cline tool
/// call's SEARCH/REPLACE blocks: it names no file.
fn is_tag(line: &str) -> bool {
    let t = line.trim();
    t.strip_prefix('<')
        .and_then(|t| t.strip_suffix('>'))
        .map(|name| name.strip_prefix('/').unwrap_or(name))
        .is_some_and(|name| {
            !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        })
}

/// The path a line names, or `None` when it reads as prose: whitespace inside, unless the whole
/// line is wrapped in backticks or `**`. A Cline `<path>…</path>` line names its content.
fn path_line(line: &str) -> Option<&str> {
    if let Some(p) = line
        .trim()
        .strip_prefix("<path>")
        .and_then(|t| t.strip_suffix("</path>"))
    {
        let p = p.trim();
        return (!p.is_empty()).then_some(p);
    }
    let t = line.trim().trim_end_matches(':');
    let wrapped = (t.len() > 2 && t.starts_with('`') && t.ends_with('`'))
        || (t.len() > 4 && t.starts_with("**") && t.ends_with("**"));
    let path = strip_path(t);
    let prose = path.contains(char::is_whitespace) && !wrapped;
    (!path.is_empty() && !prose).then_some(path)
}

/// A fence info string that names a file rather than a language: it has a `.` or a `/` and no
/// whitespace.
fn fence_path(line: &str) -> Option<&str> {
    let info = line.trim().trim_start_matches(['`', '~']).trim();
    let looks = !info.is_empty()
        && (info.contains('.') || info.contains('/'))
        && !info.contains(char::is_whitespace);
    looks.then_some(info)
}

/// Parses SEARCH/REPLACE blocks. Errors carry the 1-based line of the text they are about.
pub(crate) fn parse(text: &str) -> Result<Request, RequestError> {
    let text = text.strip_prefix('\u{FEFF}').unwrap_or(text);
    let lines: Vec<&str> = text.lines().collect();
    let mut files: Vec<FileRequest> = Vec::new();
    // Index of the last line of the previous block, and its path.
    let mut floor = 0;
    let mut previous: Option<String> = None;
    let mut i = 0;
    while i < lines.len() {
        if is_replace_marker(lines[i]) {
            return Err(RequestError::new(
                "`>>>>>>> REPLACE` without a `<<<<<<< SEARCH` before it",
            )
            .at_line(i + 1)
            .hint(FORMAT_HINT));
        }
        if !is_search_marker(lines[i]) {
            i += 1;
            continue;
        }
        let start = i;
        let path = path_above(&lines, floor, start)
            .or_else(|| previous.clone())
            .ok_or_else(|| {
                RequestError::new("the SEARCH/REPLACE block names no file")
                    .at_line(start + 1)
                    .hint("put the file's path on the line before the block (or before its fence)")
            })?;
        let divider = section_end(&lines, start + 1, is_divider).ok_or_else(|| {
            RequestError::new("the SEARCH/REPLACE block has no `=======` line")
                .at_line(start + 1)
                .hint(FORMAT_HINT)
        })?;
        let end = section_end(&lines, divider + 1, is_replace_marker).ok_or_else(|| {
            RequestError::new("the SEARCH/REPLACE block has no `>>>>>>> REPLACE` line")
                .at_line(start + 1)
                .hint(FORMAT_HINT)
        })?;
        let search = &lines[start + 1..divider];
        let replace = &lines[divider + 1..end];
        add_block(&mut files, &path, search, replace, start)?;
        previous = Some(path);
        floor = end + 1;
        i = end + 1;
    }
    if files.is_empty() {
        return Err(RequestError::new("no SEARCH/REPLACE blocks found").hint(FORMAT_HINT));
    }
    Ok(Request {
        files,
        ..Request::default()
    })
}

/// The first line at or after `from` for which `is_end` holds, refusing to run into the next
/// block's SEARCH marker.
fn section_end(lines: &[&str], from: usize, is_end: fn(&str) -> bool) -> Option<usize> {
    for (i, line) in lines.iter().enumerate().skip(from) {
        if is_end(line) {
            return Some(i);
        }
        if is_search_marker(line) {
            return None;
        }
    }
    None
}

/// The path named above the SEARCH marker at `start`, looking no further back than `floor`.
fn path_above(lines: &[&str], floor: usize, start: usize) -> Option<String> {
    let mut from_fence = None;
    for line in lines[floor..start].iter().rev() {
        if line.trim().is_empty() || is_tag(line) {
            continue;
        }
        if is_fence(line) {
            if from_fence.is_none() {
                from_fence = fence_path(line);
            }
            continue;
        }
        // The nearest other line decides: a path, or prose (no path from the lines).
        return path_line(line).or(from_fence).map(str::to_string);
    }
    from_fence.map(str::to_string)
}

fn add_block(
    files: &mut Vec<FileRequest>,
    path: &str,
    search: &[&str],
    replace: &[&str],
    start: usize,
) -> Result<(), RequestError> {
    let index = match files.iter().position(|f| f.path == path) {
        Some(i) => i,
        None => {
            files.push(FileRequest::new(path));
            files.len() - 1
        }
    };
    let file = &mut files[index];
    let empty_search = search.iter().all(|l| l.trim().is_empty());
    if empty_search {
        if file.content.is_some() || !file.edits.is_empty() {
            return Err(RequestError::new(format!(
                "an empty SEARCH creates `{path}`, but other blocks also edit it"
            ))
            .at_line(start + 1)
            .hint("create the file with one block, or give every block SEARCH lines"));
        }
        let mut content = String::new();
        for line in replace {
            content.push_str(line);
            content.push('\n');
        }
        file.content = Some(content);
        return Ok(());
    }
    if file.content.is_some() {
        return Err(RequestError::new(format!(
            "`{path}` is created by an empty SEARCH block and also edited"
        ))
        .at_line(start + 1)
        .hint("create the file with one block, or give every block SEARCH lines"));
    }
    let mut old_text = search.join("\n");
    let new_text = replace.join("\n");
    if replace.is_empty() {
        old_text.push('\n');
    }
    file.edits.push(EditSpec {
        line_based: true,
        ..EditSpec::new(old_text, new_text)
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edits(f: &FileRequest) -> Vec<(&str, &str)> {
        f.edits
            .iter()
            .map(|e| (e.old_text(), e.new_text()))
            .collect()
    }

    #[test]
    fn fenced_blocks_with_path_lines() {
        let r = parse(
            "Here is the change.\n\nsrc/a.rs\n```rust\n<<<<<<< SEARCH\nfn a() {}\n\
             fn x() {}\n=======\nfn b() {}\n>>>>>>> REPLACE\n```\n\n**src/b.rs**\n```\n\
             <<<<<<< SEARCH\nold\n=======\nnew\n>>>>>>> REPLACE\n```\n",
        )
        .unwrap();
        assert_eq!(r.files.len(), 2);
        assert_eq!(r.files[0].path, "src/a.rs");
        assert_eq!(
            edits(&r.files[0]),
            vec![("fn a() {}\nfn x() {}", "fn b() {}")]
        );
        assert_eq!(r.files[1].path, "src/b.rs");
        assert_eq!(edits(&r.files[1]), vec![("old", "new")]);
    }

    #[test]
    fn unfenced_and_fence_info_path_and_reused_path() {
        let r = parse(
            "a.txt\n<<<<<<< SEARCH\n1\n=======\none\n>>>>>>> REPLACE\n\
             <<<<<<< SEARCH\n2\n=======\ntwo\n>>>>>>> REPLACE\n\
             ```lib/c.py\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n```\n\
             a.txt\n<<<<<<< SEARCH\n3\n=======\nthree\n>>>>>>> REPLACE\n",
        )
        .unwrap();
        assert_eq!(r.files.len(), 2);
        assert_eq!(r.files[0].path, "a.txt");
        assert_eq!(
            edits(&r.files[0]),
            vec![("1", "one"), ("2", "two"), ("3", "three")]
        );
        assert_eq!(r.files[1].path, "lib/c.py");
    }

    #[test]
    fn prose_above_a_block_is_not_a_path() {
        let r = parse(
            "a.txt\n<<<<<<< SEARCH\n1\n=======\none\n>>>>>>> REPLACE\n\nAnd the second part:\n\n\
             ```\n<<<<<<< SEARCH\n2\n=======\ntwo\n>>>>>>> REPLACE\n```\n",
        )
        .unwrap();
        assert_eq!(r.files.len(), 1);
        assert_eq!(r.files[0].edits.len(), 2);
    }

    #[test]
    fn language_fence_is_not_a_path() {
        let e =
            parse("```python\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n```\n").unwrap_err();
        assert!(e.message.contains("names no file"), "{e:?}");
        assert_eq!(e.line, Some(2));
    }

    #[test]
    fn empty_replace_removes_whole_lines() {
        let r = parse("f\n<<<<<<< SEARCH\na\nb\n=======\n>>>>>>> REPLACE\n").unwrap();
        assert_eq!(edits(&r.files[0]), vec![("a\nb\n", "")]);
    }

    #[test]
    fn empty_search_creates() {
        let r = parse("new.md\n<<<<<<< SEARCH\n=======\n# New\n\ntext\n>>>>>>> REPLACE\n").unwrap();
        assert_eq!(r.files[0].content.as_deref(), Some("# New\n\ntext\n"));
        assert!(r.files[0].edits.is_empty());
        let e = parse(
            "f\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\nf\n<<<<<<< SEARCH\n=======\nc\n>>>>>>> REPLACE\n",
        )
        .unwrap_err();
        assert_eq!(e.line, Some(8));
    }

    #[test]
    fn marker_variants() {
        assert!(is_search_marker("<<<<<<< SEARCH"));
        assert!(is_search_marker("<<<<< SEARCH  "));
        assert!(is_search_marker("<<<<<<< SEARCH>"));
        assert!(!is_search_marker("<<<< SEARCH"));
        assert!(!is_search_marker("<<<<<<<<<< SEARCH"));
        assert!(!is_search_marker("<<<<<<< HEAD"));
        assert!(is_divider("======="));
        assert!(!is_divider("=== x"));
        assert!(is_replace_marker(">>>>>>> REPLACE\r"));
        let r = parse("f\r\n<<<<<<< SEARCH\r\na\r\n=======\r\nb\r\n>>>>>>> REPLACE\r\n").unwrap();
        assert_eq!(edits(&r.files[0]), vec![("a", "b")]);
    }

    #[test]
    fn malformed_blocks_name_their_line() {
        let e = parse("f\n<<<<<<< SEARCH\na\n>>>>>>> REPLACE\n").unwrap_err();
        assert!(e.message.contains("`=======`"), "{e:?}");
        assert_eq!(e.line, Some(2));
        let e = parse("f\n<<<<<<< SEARCH\na\n=======\nb\n").unwrap_err();
        assert!(e.message.contains("REPLACE"), "{e:?}");
        let e = parse(
            "f\n<<<<<<< SEARCH\na\n=======\nb\nf\n<<<<<<< SEARCH\nc\n=======\nd\n>>>>>>> REPLACE\n",
        )
        .unwrap_err();
        assert_eq!(
            e.line,
            Some(2),
            "a block cannot run into the next one: {e:?}"
        );
        let e = parse("f\n>>>>>>> REPLACE\n").unwrap_err();
        assert_eq!(e.line, Some(2));
        let e = parse("just prose\n").unwrap_err();
        assert!(e.message.contains("no SEARCH/REPLACE blocks"));
    }

    #[test]
    fn cline_markers_and_tool_call_paths() {
        let r = parse(
            "<replace_in_file>\n<path>src/a.rs</path>\n<diff>\n------- SEARCH\nfn a() {}\n=======\n\
             fn b() {}\n+++++++ REPLACE\n\n------- SEARCH\nx\n=======\ny\n+++++++ REPLACE>\n</diff>\n\
             </replace_in_file>\n\n<replace_in_file>\n<path>lib/b.py</path>\n<diff>\n\
             <<<<<<< SEARCH\nold\n=======\nnew\n>>>>>>> REPLACE\n</diff>\n</replace_in_file>\n",
        )
        .unwrap();
        assert_eq!(r.files.len(), 2);
        assert_eq!(r.files[0].path, "src/a.rs");
        assert_eq!(
            edits(&r.files[0]),
            vec![("fn a() {}", "fn b() {}"), ("x", "y")]
        );
        assert_eq!(r.files[1].path, "lib/b.py");
        assert_eq!(edits(&r.files[1]), vec![("old", "new")]);
        // A path line above Cline markers, as in Aider's format.
        let r = parse("a.txt\n------- SEARCH\n1\n=======\none\n+++++++ REPLACE\n").unwrap();
        assert_eq!(r.files[0].path, "a.txt");
        assert_eq!(edits(&r.files[0]), vec![("1", "one")]);
        // A tag line alone is not a path.
        let e = parse("<diff>\n------- SEARCH\n1\n=======\none\n+++++++ REPLACE\n</diff>\n")
            .unwrap_err();
        assert!(e.message.contains("names no file"), "{e:?}");
        // Malformed: no REPLACE marker, with its line.
        let e = parse("a.txt\n\n------- SEARCH\n1\n=======\none\n").unwrap_err();
        assert_eq!(e.line, Some(3));
        assert!(is_search_marker("------- SEARCH"));
        assert!(is_search_marker("------- SEARCH>"));
        assert!(!is_search_marker("--- SEARCH"));
        assert!(!is_search_marker("------- REPLACE"));
        assert!(is_replace_marker("+++++++ REPLACE"));
        assert!(!is_replace_marker("+++ b/REPLACE"));
    }

    #[test]
    fn markdown_decoration_is_stripped() {
        assert_eq!(strip_path("**src/a.rs**"), "src/a.rs");
        assert_eq!(strip_path("`src/a.rs`:"), "src/a.rs");
        assert_eq!(strip_path("### src/a.rs"), "src/a.rs");
        assert_eq!(path_line("`My Docs/a.txt`"), Some("My Docs/a.txt"));
        assert_eq!(path_line("Then change the function:"), None);
        assert_eq!(path_line("src/a.rs:"), Some("src/a.rs"));
    }
}
