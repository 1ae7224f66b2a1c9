//! SPEC §3a "Already applied", for every dialect: when an edit is not found, where its new text
//! is in the file already. One rule: N(newText) non-blank, not inside N(oldText), found as a
//! valid match of the matcher; the first such place is reported (the message says where and
//! never says to drop the edit). Only where it is searched for depends on the edit: a JSON
//! edit's `newText` is a span anywhere ([`super::find_all`]: boundaries and the end rule apply),
//! a Codex chunk's new lines are whole lines after where the chunk was looked for
//! ([`super::whole_lines`], as its old lines were).

use crate::engine::document::Document;
use crate::engine::matcher::{self, Miss, Needle};
use crate::engine::normalize::Normalized;

/// Where an edit's new text counts as already there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Within {
    /// Anywhere in the file, as a span (an `oldText`/`newText` edit).
    Text,
    /// As `lines` whole lines (a Codex chunk's new lines, joined by `\n`), starting at line
    /// `from` or later; with `eof`, only ending at the file's last line (`*** End of File`).
    Lines {
        /// The first line (0-based) where they may start.
        from: usize,
        /// How many lines the new text has.
        lines: usize,
        /// Only the window that ends at the last line.
        eof: bool,
    },
}

/// One edit that was not found.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Wanted<'a> {
    /// Its old text (`oldText`, or a chunk's old lines joined by `\n`).
    pub old: &'a str,
    /// Its new text (`newText`, or a chunk's new lines joined by `\n`).
    pub new: &'a str,
    /// Where the new text counts.
    pub within: Within,
}

/// For each of `n` wanted edits (`wanted(k)` for edit `k`, made when needed: a list of them
/// took 64 bytes an edit beside the plan), the original byte offset where its new text already
/// is, if it is (module docs). One search of each kind for all of them.
pub(crate) fn already_applied<'a>(
    doc: &Document,
    file: &Normalized,
    n: usize,
    wanted: impl Fn(usize) -> Wanted<'a>,
) -> Vec<Option<usize>> {
    let mut out = vec![None; n];
    let mut needles = Vec::new();
    let mut needle_of = Vec::new();
    let mut patterns: Vec<String> = Vec::new();
    let mut pattern_of = Vec::new();
    for k in 0..n {
        let w = wanted(k);
        let n_new = Normalized::new(w.new).text;
        if n_new.trim().is_empty() || Normalized::new(w.old).text.contains(&*n_new) {
            continue;
        }
        match w.within {
            Within::Text => {
                needles.push(Needle {
                    old_text: w.new,
                    replace_all: false,
                    line_based: false,
                });
                needle_of.push(k);
            }
            // A new line holding a line break of its own (a lone CR) is no single file line.
            Within::Lines { lines, .. } if n_new.split('\n').count() == lines => {
                patterns.push(n_new.into_owned());
                pattern_of.push(k);
            }
            Within::Lines { .. } => {}
        }
    }
    if !needles.is_empty() {
        for (res, k) in matcher::find_all(&doc.text, file, &needles)
            .into_iter()
            .zip(needle_of)
        {
            out[k] = match res {
                Ok(f) => f.spans.first().map(|s| s.start),
                Err(Miss::Ambiguous { spans, .. }) => spans.first().map(|s| s.start),
                Err(Miss::NotFound | Miss::TooLarge) => None,
            };
        }
    }
    if !patterns.is_empty() {
        let open_end = !doc.text.is_empty() && !doc.final_newline();
        // N(file)'s lines are the document's (N maps each line break to one `\n`).
        let count = memchr::memchr_iter(b'\n', file.text.as_bytes()).count() + open_end as usize;
        let refs: Vec<&str> = patterns.iter().map(String::as_str).collect();
        let found = matcher::whole_lines(file, open_end, &refs);
        for (p, k) in pattern_of.into_iter().enumerate() {
            let stored = found.of(p);
            let starts = stored.lines;
            // Past a cut list (a highly repetitive file) only its next occurrence is known;
            // where that is not enough the hint is left out.
            let more = stored.more_at.unwrap_or(usize::MAX);
            let Within::Lines { from, lines, eof } = wanted(k).within else {
                continue;
            };
            let at = if eof {
                count.checked_sub(lines).filter(|&at| {
                    at >= from && (at == more || (at < more && starts.contains(at as u32)))
                })
            } else {
                let first = starts.count_below(u32::try_from(from).unwrap_or(u32::MAX));
                match starts.get(first) {
                    Some(s) => Some(s as usize),
                    None => (more != usize::MAX && more >= from).then_some(more),
                }
            };
            out[k] = at.map(|line| doc.line_start(line));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str, old: &str, new: &str, within: Within) -> Option<usize> {
        let doc = Document::from_text(text.to_string(), false);
        let file = Normalized::new(&doc.text);
        already_applied(&doc, &file, 1, |_| Wanted { old, new, within })[0]
    }

    #[test]
    fn one_rule_two_scopes() {
        let text = "fn main() {\n    run();\n}\nrun();\n";
        // A span anywhere, on boundaries: `main` is inside `fn main()`.
        assert_eq!(at(text, "start", "main", Within::Text), Some(3));
        // Blank, or inside the old text: nothing to say.
        assert_eq!(at(text, "x", "  \n", Within::Text), None);
        assert_eq!(at(text, "main2", "main", Within::Text), None);
        // Whole lines only, from a line on, and only at the end with `eof`.
        let lines = |from, eof| Within::Lines {
            from,
            lines: 1,
            eof,
        };
        assert_eq!(at(text, "x", "main", lines(0, false)), None);
        assert_eq!(at(text, "x", "run();", lines(0, false)), Some(25));
        assert_eq!(at(text, "x", "    run();", lines(0, false)), Some(12));
        assert_eq!(at(text, "x", "    run();", lines(2, false)), None);
        assert_eq!(at(text, "x", "}", lines(0, true)), None);
        assert_eq!(at(text, "x", "run();", lines(3, true)), Some(25));
        // Trailing whitespace and smart quotes fold (N(·)); a lone CR is not one line.
        assert_eq!(
            at(
                "say(\u{2018}x\u{2019})  \n",
                "y",
                "say('x')",
                lines(0, false)
            ),
            Some(0)
        );
        assert_eq!(at("a\nb\n", "y", "a\rb", lines(0, false)), None);
    }
}
