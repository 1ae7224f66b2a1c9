//! The Codex `apply_patch` format (SPEC §6), parsed into the canonical [`Request`].
//!
//! Grammar, as Codex accepts it (see `background/codex-apply-patch.md`):
//!
//! ```text
//! *** Begin Patch
//! *** Add File: path        then `+line`s (the new file's content)
//! *** Delete File: path
//! *** Update File: path     optionally `*** Move to: path`, then chunks:
//!   @@ [anchor]               one or more; consecutive `@@ x` lines nest (outermost first)
//!   ` ctx` / `-old` / `+new`  an empty line counts as an empty context line
//!   *** End of File           optional: the chunk must match at the end of the file
//! *** End Patch
//! ```
//!
//! Leniency kept from Codex: markers may be padded with whitespace, the patch may be wrapped in a
//! heredoc (`<<'EOF'` … `EOF`, also `apply_patch <<'EOF'`), the first chunk of a file may omit its
//! `@@`, blank lines between chunks and hunks are skipped. Added on purpose: nested `@@` anchors
//! (Codex rejects them although its instructions advertise them), a `@@ -a,b +c,d @@ text` unified
//! diff header is read as the anchor `text`, an `*** Update File` with only a `*** Move to` is a
//! plain rename, CRLF patches parse like LF ones.
//!
//! Several hunks for one path merge into one [`FileRequest`]: Delete then Add becomes an
//! overwrite, a second Update appends its chunks (located after the first hunk's, against the same
//! original); any other repetition is an `invalid_request`.

use crate::request::{FileRequest, PatchChunk, Request, RequestError};

pub(crate) const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File:";
const DELETE: &str = "*** Delete File:";
const UPDATE: &str = "*** Update File:";
const MOVE: &str = "*** Move to:";
const END_OF_FILE: &str = "*** End of File";
const ENVIRONMENT: &str = "*** Environment ID:";

const HEADERS_HINT: &str =
    "hunks start with `*** Add File: path`, `*** Delete File: path` or `*** Update File: path`";

/// Parses a Codex patch. Errors carry the 1-based line of the patch text they are about.
pub(crate) fn parse(text: &str) -> Result<Request, RequestError> {
    let text = text.strip_prefix('\u{FEFF}').unwrap_or(text);
    let lines = Lines::new(text);
    let (first, last) = boundaries(&lines)?;
    let mut p = Parser {
        lines: &lines,
        at: first + 1,
        end: last,
        files: Vec::new(),
    };
    p.hunks()?;
    if p.files.is_empty() {
        return Err(RequestError::new("the patch changes no files")
            .at_line(first + 1)
            .hint(HEADERS_HINT));
    }
    Ok(Request {
        files: p.files,
        ..Request::default()
    })
}

/// Finds the `*** Begin Patch` and `*** End Patch` lines (0-based), unwrapping a heredoc.
fn boundaries(lines: &Lines<'_>) -> Result<(usize, usize), RequestError> {
    let nonblank = |from: usize, to: usize, backwards: bool| {
        let is = |&i: &usize| !lines.line(i).trim().is_empty();
        if backwards {
            (from..to).rev().find(is)
        } else {
            (from..to).find(is)
        }
    };
    let Some(mut first) = nonblank(0, lines.len(), false) else {
        return Err(
            RequestError::new("the patch is empty").hint("a patch starts with `*** Begin Patch`")
        );
    };
    let mut last = nonblank(0, lines.len(), true).unwrap_or(first);
    if let Some(delimiter) = heredoc_delimiter(lines.line(first))
        && last > first
        && lines.line(last).trim() == delimiter
    {
        first = nonblank(first + 1, last, false).unwrap_or(last);
        last = nonblank(first, last, true).unwrap_or(first);
    }
    if lines.line(first).trim() != BEGIN {
        let mut e = RequestError::new("the first line of the patch must be `*** Begin Patch`")
            .at_line(first + 1);
        if (0..lines.len()).any(|i| lines.line(i).trim() == BEGIN) {
            e = e.hint("remove the text before `*** Begin Patch`");
        }
        return Err(e);
    }
    if last == first || lines.line(last).trim() != END {
        let mut e = RequestError::new("the last line of the patch must be `*** End Patch`")
            .at_line(last + 1);
        e = if (first + 1..lines.len()).any(|i| lines.line(i).trim() == END) {
            e.hint("remove the text after `*** End Patch`")
        } else {
            e.hint("end the patch with a `*** End Patch` line")
        };
        return Err(e);
    }
    Ok((first, last))
}

/// The delimiter of a heredoc opener line: `<<EOF`, `<<'EOF'`, `<<"EOF"`, `<<-EOF`, optionally
/// after `apply_patch` or `applypatch`.
fn heredoc_delimiter(line: &str) -> Option<&str> {
    let line = line.trim();
    let rest = ["apply_patch", "applypatch"]
        .iter()
        .find_map(|cmd| line.strip_prefix(cmd))
        .unwrap_or(line)
        .trim_start();
    let rest = rest.strip_prefix("<<")?;
    let rest = rest.strip_prefix('-').unwrap_or(rest).trim_start();
    let word = match rest.chars().next()? {
        q @ ('\'' | '"') => rest[1..].strip_suffix(q)?,
        _ => rest,
    };
    let ok = !word.is_empty() && word.chars().all(|c| c.is_alphanumeric() || c == '_');
    ok.then_some(word)
}

/// Whether a (trimmed) line starts a hunk or ends the patch: what ends an Add or Update body.
fn is_marker(line: &str) -> bool {
    let t = line.trim();
    t == END || t.starts_with(ADD) || t.starts_with(DELETE) || t.starts_with(UPDATE)
}

/// The lines of the patch as `str::lines` makes them (a CRLF's `\r` dropped), found from
/// where each starts: four bytes a line, where a `&str` each took sixteen (and twice that while
/// the list grew).
struct Lines<'a> {
    text: &'a str,
    /// Where each line starts, and one past the end of the text.
    starts: Vec<u32>,
}

impl<'a> Lines<'a> {
    fn new(text: &'a str) -> Lines<'a> {
        let breaks = || memchr::memchr_iter(b'\n', text.as_bytes());
        let mut starts = Vec::with_capacity(breaks().count() + 2);
        starts.push(0);
        starts.extend(breaks().map(|i| i as u32 + 1));
        if starts.last() != Some(&(text.len() as u32)) {
            // The last line has no line break.
            starts.push(text.len() as u32 + 1);
        }
        Lines { text, starts }
    }

    fn len(&self) -> usize {
        self.starts.len() - 1
    }

    fn get(&self, i: usize) -> Option<&'a str> {
        (i < self.len()).then(|| self.line(i))
    }

    /// Line `i`.
    fn line(&self, i: usize) -> &'a str {
        let (a, b) = (self.starts[i] as usize, self.starts[i + 1] as usize - 1);
        if b >= self.text.len() {
            // The last line, without a line break: `str::lines` keeps a lone `\r` there.
            return &self.text[a..];
        }
        let line = &self.text[a..b];
        line.strip_suffix('\r').unwrap_or(line)
    }
}

struct Parser<'a> {
    lines: &'a Lines<'a>,
    /// Next line to read (0-based).
    at: usize,
    /// The `*** End Patch` line (0-based, exclusive bound of the body).
    end: usize,
    files: Vec<FileRequest>,
}

impl Parser<'_> {
    fn hunks(&mut self) -> Result<(), RequestError> {
        while self.at < self.end {
            let header = self.at;
            let line = self.lines.line(header).trim();
            if line.is_empty() || (line.starts_with(ENVIRONMENT) && self.files.is_empty()) {
                // Blank separators, and the environment line newer Codex versions send.
                self.at += 1;
            } else if let Some(rest) = line.strip_prefix(ADD) {
                let path = path_of(rest, header)?;
                self.at += 1;
                let content = self.added_lines(&path)?;
                self.merge(header, path, |f| f.content = Some(content))?;
            } else if let Some(rest) = line.strip_prefix(DELETE) {
                let path = path_of(rest, header)?;
                self.at += 1;
                self.merge(header, path, |f| f.delete = true)?;
            } else if let Some(rest) = line.strip_prefix(UPDATE) {
                let path = path_of(rest, header)?;
                self.at += 1;
                let move_to = self.move_to()?;
                let chunks = self.chunks()?;
                if chunks.is_empty() && move_to.is_none() {
                    return Err(RequestError::new(format!(
                        "`*** Update File: {path}` has no changes"
                    ))
                    .at_line(header + 1)
                    .hint("follow it with `@@` and lines starting with ` `, `-` or `+`"));
                }
                self.merge(header, path, |f| {
                    f.move_to = move_to;
                    f.chunks.extend(chunks);
                })?;
            } else {
                return Err(
                    RequestError::new(format!("`{line}` is not a valid hunk header"))
                        .at_line(header + 1)
                        .hint(HEADERS_HINT),
                );
            }
        }
        Ok(())
    }

    /// The `+` lines of an Add File hunk, as the new file's content.
    fn added_lines(&mut self, path: &str) -> Result<String, RequestError> {
        let mut content = String::new();
        while self.at < self.end {
            let line = self.lines.line(self.at);
            if let Some(added) = line.strip_prefix('+') {
                content.push_str(added);
                content.push('\n');
            } else if line.trim().is_empty() || is_marker(line) {
                break;
            } else {
                return Err(RequestError::new(format!(
                    "line {} of `*** Add File: {path}` does not start with `+`",
                    self.at + 1
                ))
                .at_line(self.at + 1)
                .hint("every line of an added file starts with `+`"));
            }
            self.at += 1;
        }
        Ok(content)
    }

    fn move_to(&mut self) -> Result<Option<String>, RequestError> {
        match self
            .lines
            .get(self.at)
            .map(|l| l.trim())
            .filter(|_| self.at < self.end)
        {
            Some(line) if line.starts_with(MOVE) => {
                let path = path_of(&line[MOVE.len()..], self.at)?;
                self.at += 1;
                Ok(Some(path))
            }
            _ => Ok(None),
        }
    }

    /// The chunks of an Update File hunk, up to the next hunk header or the end.
    fn chunks(&mut self) -> Result<Vec<PatchChunk>, RequestError> {
        let mut chunks = Vec::new();
        while self.at < self.end {
            let line = self.lines.line(self.at);
            if line.trim().is_empty() {
                self.at += 1;
                continue;
            }
            if is_marker(line) {
                break;
            }
            chunks.push(self.chunk(chunks.is_empty())?);
        }
        Ok(chunks)
    }

    /// One chunk: its `@@` lines (optional for the first chunk of a file), then its body.
    fn chunk(&mut self, first: bool) -> Result<PatchChunk, RequestError> {
        let mut chunk = PatchChunk {
            line: self.at + 1,
            ..PatchChunk::default()
        };
        let mut headers = 0;
        while self.at < self.end {
            let Some(anchor) = anchor_of(self.lines.line(self.at)) else {
                break;
            };
            if let Some(anchor) = anchor {
                chunk.anchors.push(anchor.to_string());
            }
            headers += 1;
            self.at += 1;
        }
        if headers == 0 && !first {
            let line = self.lines.line(self.at);
            return Err(RequestError::new(format!(
                "expected a chunk to start with `@@`, got `{line}`"
            ))
            .at_line(self.at + 1)
            .hint("every chunk after the first starts with an `@@` or `@@ anchor` line"));
        }
        let mut body = 0;
        while self.at < self.end {
            let line = self.lines.line(self.at);
            if line.trim_end() == END_OF_FILE {
                if body == 0 {
                    break;
                }
                chunk.end_of_file = true;
                self.at += 1;
                break;
            }
            if body > 0 && is_marker(line) {
                break;
            }
            match line.chars().next() {
                None => {
                    chunk.old_lines.push("");
                    chunk.new_lines.push("");
                }
                Some(' ') => {
                    chunk.old_lines.push(&line[1..]);
                    chunk.new_lines.push(&line[1..]);
                }
                Some('-') => chunk.old_lines.push(&line[1..]),
                Some('+') => chunk.new_lines.push(&line[1..]),
                Some(_) if body > 0 => break,
                Some(_) => {
                    return Err(RequestError::new(format!(
                        "unexpected line in a chunk: `{line}`"
                    ))
                    .at_line(self.at + 1)
                    .hint(
                        "every chunk line starts with ` ` (context), `-` (removed) or `+` (added)",
                    ));
                }
            }
            body += 1;
            self.at += 1;
        }
        if body == 0 {
            return Err(RequestError::new("the chunk has no lines")
                .at_line(chunk.line)
                .hint("a chunk needs lines starting with ` `, `-` or `+` after its `@@`"));
        }
        chunk.old_lines.shrink_to_fit();
        chunk.new_lines.shrink_to_fit();
        Ok(chunk)
    }

    /// Adds an operation on `path`, merging with an earlier hunk for the same path when that
    /// makes sense (see the module docs).
    fn merge(
        &mut self,
        header: usize,
        path: String,
        op: impl FnOnce(&mut FileRequest),
    ) -> Result<(), RequestError> {
        let Some(existing) = self.files.iter_mut().find(|f| f.path == path) else {
            let mut file = FileRequest::new(path);
            op(&mut file);
            self.files.push(file);
            return Ok(());
        };
        let mut next = FileRequest::new(path.clone());
        op(&mut next);
        let is_update = |f: &FileRequest| !f.delete && f.content.is_none();
        if existing.delete && existing.content.is_none() && next.content.is_some() {
            // Delete then Add: an overwrite.
            existing.delete = false;
            existing.content = next.content;
        } else if is_update(existing)
            && is_update(&next)
            && existing.move_to == next.move_to
            && !next.chunks.is_empty()
        {
            existing.chunks.extend(next.chunks);
        } else {
            return Err(RequestError::new(format!(
                "`{path}` appears in two hunks that cannot be combined"
            ))
            .at_line(header + 1)
            .hint("use one hunk per file"));
        }
        Ok(())
    }
}

/// The path after a hunk header, which must not be empty.
fn path_of(rest: &str, line: usize) -> Result<String, RequestError> {
    let path = rest.trim();
    if path.is_empty() {
        return Err(RequestError::new("the hunk header names no path").at_line(line + 1));
    }
    Ok(path.to_string())
}

/// If `line` is an `@@` chunk header: `Some(None)` for a bare `@@`, `Some(Some(anchor))` for
/// `@@ anchor` (also the text after a unified diff header `@@ -a,b +c,d @@`).
fn anchor_of(line: &str) -> Option<Option<&str>> {
    let line = line.trim_end();
    let rest = line.strip_prefix("@@")?;
    if rest.is_empty() {
        return Some(None);
    }
    let rest = rest.strip_prefix(' ')?;
    let rest = unified_header_rest(rest).unwrap_or(rest);
    if rest.trim().is_empty() {
        Some(None)
    } else {
        Some(Some(rest))
    }
}

/// For `-a,b +c,d @@ text` (the rest of a unified diff hunk header), the trimmed `text`.
fn unified_header_rest(rest: &str) -> Option<&str> {
    let mut words = rest.splitn(3, ' ');
    let range = |w: &str, sign: char| {
        let w = w.strip_prefix(sign)?;
        let ok = !w.is_empty()
            && w.split(',').count() <= 2
            && w.split(',')
                .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        ok.then_some(())
    };
    range(words.next()?, '-')?;
    range(words.next()?, '+')?;
    let tail = words.next().unwrap_or("@@");
    Some(tail.strip_prefix("@@")?.trim_start())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> FileRequest {
        let r = parse(text).unwrap();
        assert_eq!(r.files.len(), 1, "{r:?}");
        r.files.into_iter().next().unwrap()
    }

    fn err(text: &str) -> RequestError {
        parse(text).unwrap_err()
    }

    #[test]
    fn add_delete_update_move() {
        let r = parse(
            "*** Begin Patch\n*** Add File: nested/new.txt\n+created\n+\n*** Delete File: d.txt\n\
             *** Update File: m.txt\n*** Move to: n.txt\n@@\n-line2\n+changed\n*** End Patch\n",
        )
        .unwrap();
        assert_eq!(r.files.len(), 3);
        assert_eq!(r.files[0].path, "nested/new.txt");
        assert_eq!(r.files[0].content.as_deref(), Some("created\n\n"));
        assert!(r.files[1].delete);
        let u = &r.files[2];
        assert_eq!(u.move_to.as_deref(), Some("n.txt"));
        assert_eq!(u.chunks.len(), 1);
        assert_eq!(u.chunks[0].old_lines, vec!["line2"]);
        assert_eq!(u.chunks[0].new_lines, vec!["changed"]);
        assert_eq!(u.chunks[0].line, 8);
        assert!(u.chunks[0].anchors.is_empty());
    }

    #[test]
    fn add_file_without_lines_is_empty() {
        let f = one("*** Begin Patch\n*** Add File: e.txt\n*** End Patch");
        assert_eq!(f.content.as_deref(), Some(""));
    }

    #[test]
    fn chunks_anchors_eof_and_blank_context() {
        let f = one(
            "*** Begin Patch\n*** Update File: a.py\n@@ class A:\n@@     def f(self):\n \
             x = 1\n\n-    return x\n+    return 2\n@@\n-tail\n+TAIL\n*** End of File\n*** End Patch\n",
        );
        assert_eq!(f.chunks.len(), 2);
        let c = &f.chunks[0];
        assert_eq!(c.anchors, vec!["class A:", "    def f(self):"]);
        assert_eq!(c.old_lines, vec!["x = 1", "", "    return x"]);
        assert_eq!(c.new_lines, vec!["x = 1", "", "    return 2"]);
        assert!(!c.end_of_file);
        assert_eq!(c.line, 3);
        assert!(f.chunks[1].end_of_file);
        assert_eq!(f.chunks[1].line, 9);
    }

    #[test]
    fn first_chunk_may_omit_the_header() {
        let f = one("*** Begin Patch\n*** Update File: a\n-x\n+y\n*** End Patch\n");
        assert_eq!(f.chunks[0].old_lines, vec!["x"]);
        let e = err("*** Begin Patch\n*** Update File: a\n-x\n+y\nfoo\n*** End Patch\n");
        assert_eq!(e.line, Some(5), "{e:?}");
        assert!(e.message.contains("`@@`"), "{e:?}");
    }

    #[test]
    fn unified_diff_header_is_an_anchor() {
        let f = one(
            "*** Begin Patch\n*** Update File: a\n@@ -1,2 +1,3 @@ fn main() {\n-x\n+y\n*** End Patch\n",
        );
        assert_eq!(f.chunks[0].anchors, vec!["fn main() {"]);
        let f = one("*** Begin Patch\n*** Update File: a\n@@ -1 +1 @@\n-x\n+y\n*** End Patch\n");
        assert!(f.chunks[0].anchors.is_empty());
        let f = one(
            "*** Begin Patch\n*** Update File: a\n@@ -x is not a range\n-x\n+y\n*** End Patch\n",
        );
        assert_eq!(f.chunks[0].anchors, vec!["-x is not a range"]);
    }

    #[test]
    fn padded_markers_heredoc_and_crlf() {
        let text = " *** Begin Patch \r\n  *** Update File: foo.txt\r\n@@\r\n-old\r\n+new\r\n*** End Patch \r\n";
        let f = one(text);
        assert_eq!(f.path, "foo.txt");
        assert_eq!(f.chunks[0].new_lines, vec!["new"]);
        for opener in [
            "<<'EOF'",
            "<<EOF",
            "<<\"EOF\"",
            "apply_patch <<'EOF'",
            "applypatch <<EOF",
        ] {
            let text =
                format!("{opener}\n*** Begin Patch\n*** Delete File: x\n*** End Patch\nEOF\n");
            assert!(one(&text).delete, "{opener}");
        }
        let e = err("<<'EOF'\n*** Begin Patch\n*** Delete File: x\n*** End Patch\nEND\n");
        assert_eq!(
            e.line,
            Some(1),
            "mismatched delimiter is not unwrapped: {e:?}"
        );
    }

    #[test]
    fn lines_are_those_of_str_lines() {
        for text in [
            "", "a", "a\n", "a\n\n", "a\r\nb", "a\r", "a\r\n", "\n", "\r\n\r\n", "x\ry\n\r", "é\nü",
        ] {
            let l = Lines::new(text);
            let got: Vec<&str> = (0..l.len()).map(|i| l.line(i)).collect();
            assert_eq!(got, text.lines().collect::<Vec<_>>(), "{text:?}");
        }
    }

    #[test]
    fn errors_carry_lines() {
        let e = err("\n\nhello\n*** Begin Patch\n*** End Patch\n");
        assert_eq!(e.line, Some(3));
        assert!(e.message.contains("first line"));
        assert!(e.hint_text().as_deref().unwrap().contains("before"));

        let e = err("*** Begin Patch\n*** Delete File: x\n");
        assert!(e.message.contains("last line"), "{e:?}");
        assert_eq!(e.line, Some(2));

        let e = err("*** Begin Patch\n*** End Patch\n");
        assert!(e.message.contains("no files"), "{e:?}");
        assert_eq!(e.line, Some(1));

        let e = err("*** Begin Patch\n*** Frobnicate File: foo\n*** End Patch\n");
        assert_eq!(e.line, Some(2));
        assert!(e.message.contains("not a valid hunk header"));

        let e = err("*** Begin Patch\n*** Update File: foo.txt\n*** End Patch\n");
        assert_eq!(e.line, Some(2));
        assert!(e.message.contains("no changes"), "{e:?}");

        let e = err("*** Begin Patch\n*** Update File: foo.txt\n@@\n*** End Patch\n");
        assert!(e.message.contains("no lines"), "{e:?}");
        assert_eq!(e.line, Some(3));

        let e = err("*** Begin Patch\n*** Update File: f\n@@\n@x\n*** End Patch\n");
        assert!(e.message.contains("unexpected line"), "{e:?}");
        assert_eq!(e.line, Some(4));

        let e = err("*** Begin Patch\n*** Add File: f\n+a\nb\n*** End Patch\n");
        assert_eq!(e.line, Some(4));
        assert!(e.message.contains("`+`"));

        let e = err("*** Begin Patch\n*** Add File:  \n*** End Patch\n");
        assert!(e.message.contains("no path"));

        let e = err("");
        assert!(e.message.contains("empty"));
    }

    #[test]
    fn move_only_update_is_a_rename() {
        let f = one("*** Begin Patch\n*** Update File: a\n*** Move to: b\n*** End Patch\n");
        assert_eq!(f.move_to.as_deref(), Some("b"));
        assert!(f.chunks.is_empty());
    }

    #[test]
    fn same_path_hunks_merge_or_conflict() {
        let f = one("*** Begin Patch\n*** Delete File: a\n*** Add File: a\n+x\n*** End Patch\n");
        assert!(!f.delete);
        assert_eq!(f.content.as_deref(), Some("x\n"));
        let f = one(
            "*** Begin Patch\n*** Update File: a\n@@\n-x\n+y\n*** Update File: a\n@@\n-z\n+w\n*** End Patch\n",
        );
        assert_eq!(f.chunks.len(), 2);
        let e = err("*** Begin Patch\n*** Add File: a\n+x\n*** Delete File: a\n*** End Patch\n");
        assert_eq!(e.line, Some(4));
    }

    #[test]
    fn padded_header_ends_a_chunk() {
        let r = parse(
            "*** Begin Patch\n*** Update File: a\n@@\n-x\n+y\n  *** Update File: b\n@@\n-z\n+w\n*** End Patch\n",
        )
        .unwrap();
        assert_eq!(r.files.len(), 2);
        assert_eq!(r.files[0].chunks[0].old_lines, vec!["x"]);
    }
}
