//! Property tests of the engine's invariants (SPEC §3.6 "every byte outside the spans is
//! unchanged", §4 "the diff applies", §3a character boundaries), on random texts mixing ASCII,
//! CRLF/CR/LF, trailing whitespace, smart quotes, dashes, special spaces, combining marks, jamo,
//! ligatures, CJK and emoji.

use crate::engine::document::Document;
use crate::engine::matcher::{self, MatchKind};
use crate::engine::normalize::{Normalization, Normalized, lf};
use crate::engine::plan::{self, EditPlan, FilePlan, Op, Original, Outcome};
use crate::engine::relaxed::Tolerance;
use crate::report;
use crate::request::EditSpec;
use proptest::prelude::*;
use unicode_normalization::char::canonical_combining_class;

/// Building blocks of random texts: plenty of line structure, whitespace and characters that
/// N(·) folds.
const PIECES: &[&str] = &[
    "a",
    "b",
    "x",
    "fn",
    "(",
    ")",
    "\"",
    "'",
    "-",
    ".",
    " ",
    "  ",
    "\t",
    "\n",
    "\n",
    "\r\n",
    "\r\n",
    "\r",
    "\u{2018}",
    "\u{2019}",
    "\u{201C}",
    "\u{201D}",
    "\u{00A0}",
    "\u{2014}",
    "\u{2212}",
    "\u{3000}",
    "\u{2026}",
    "e\u{0301}",
    "\u{0301}",
    "\u{FB01}",
    "\u{FF21}",
    "\u{1100}\u{1161}",
    "日",
    "本",
    "😀",
    "  \n",
    "\t\r\n",
];

/// A line of code-like text: indentation, words, inner runs of spaces and tabs.
fn code_line() -> impl Strategy<Value = String> {
    (
        prop::sample::select(&["", "  ", "    ", "\t", "\t\t", " \t"][..]),
        prop::collection::vec(
            prop::sample::select(&["x", "if", "y()", "{", "}", "a", "\u{201C}q\u{201D}"][..]),
            0..4,
        ),
        prop::collection::vec(prop::sample::select(&[" ", "  ", "\t"][..]), 4),
    )
        .prop_map(|(indent, words, gaps)| {
            let mut s = indent.to_string();
            for (i, w) in words.iter().enumerate() {
                if i > 0 {
                    s.push_str(gaps[i]);
                }
                s.push_str(w);
            }
            s
        })
}

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(PIECES), 0..48).prop_map(|v| v.concat())
}

/// Replacements that keep N(·) equal: what an agent typing ASCII would send.
fn ascii_equivalent(s: &str) -> String {
    let mut out = String::new();
    for c in lf(s).chars() {
        match c {
            '\u{2018}' | '\u{2019}' => out.push('\''),
            '\u{201C}' | '\u{201D}' => out.push('"'),
            '\u{2014}' | '\u{2212}' => out.push('-'),
            '\u{00A0}' | '\u{3000}' => out.push(' '),
            '\u{FB01}' => out.push_str("fi"),
            '\u{FF21}' => out.push('A'),
            '\u{2026}' => out.push_str("..."),
            c => out.push(c),
        }
    }
    out.replace("e\u{0301}", "\u{00E9}")
}

/// One random edit: where its oldText is cut from the text, whether it is made ASCII, its
/// newText, replaceAll.
#[derive(Debug, Clone)]
struct EditSeed {
    start: usize,
    len: usize,
    ascii: bool,
    new_text: String,
    replace_all: bool,
}

fn edit_seed() -> impl Strategy<Value = EditSeed> {
    (
        any::<usize>(),
        1usize..12,
        any::<bool>(),
        prop::collection::vec(prop::sample::select(PIECES), 0..4),
        prop::bool::weighted(0.2),
    )
        .prop_map(|(start, len, ascii, new, replace_all)| EditSeed {
            start,
            len,
            ascii,
            new_text: new.concat(),
            replace_all,
        })
}

/// Whether a cut of `text` at char boundary `i` separates two clusters: no combining mark or
/// composing jamo follows it, unless there is no base to fold into (start of text or of a line).
fn cluster_boundary(text: &str, i: usize) -> bool {
    let after_base = text[..i]
        .chars()
        .next_back()
        .is_some_and(|c| c != '\n' && c != '\r');
    match text[i..].chars().next() {
        None => true,
        Some(c) => {
            !after_base
                || (canonical_combining_class(c) == 0 && !('\u{1160}'..='\u{11FF}').contains(&c))
        }
    }
}

/// The edits cut from `text`, each with whether SPEC guarantees it is found (or ambiguous):
/// its ends are cluster boundaries and it does not end in whitespace (the trimmed-last-line
/// rule may legitimately refuse those).
fn cut(text: &str, seeds: &[EditSeed]) -> Vec<(EditSpec, bool)> {
    let bounds: Vec<usize> = text
        .char_indices()
        .map(|(i, _)| i)
        .chain([text.len()])
        .collect();
    let mut out = Vec::new();
    for s in seeds {
        let a = s.start % bounds.len();
        let b = (a + s.len).min(bounds.len() - 1);
        let (a, b) = (bounds[a], bounds[b]);
        let piece = &text[a..b];
        let old = if s.ascii {
            ascii_equivalent(piece)
        } else {
            piece.to_string()
        };
        if Normalized::new(&old).text.is_empty() {
            continue; // a request-level invalid_request, never reaches matching
        }
        let ends_in_space = old
            .chars()
            .last()
            .is_some_and(|c| c.is_whitespace() && c != '\n' && c != '\r');
        let findable = cluster_boundary(text, a) && cluster_boundary(text, b) && !ends_in_space;
        let mut spec = EditSpec::new(old, s.new_text.as_str());
        spec.replace_all = s.replace_all;
        out.push((spec, findable));
    }
    out
}

fn file_plan(doc: &Document, edits: Vec<EditPlan>) -> FilePlan {
    FilePlan {
        path: "f.txt".into(),
        rel: Some("f.txt".into()),
        op: Op::Edit,
        move_to: None,
        move_rel: None,
        original: Some(Original {
            doc: doc.clone(),
            version: String::new(),
            fingerprint: None,
            nlink: 1,
            target_rel: None,
            decoded: true,
            raw: None,
            marks: Default::default(),
            pending: None,
        }),
        replaced: None,
        content: None,
        edits,
        failure: None,
        warnings: Vec::new(),
    }
}

fn is_boundary(s: &str, i: usize) -> bool {
    s.is_char_boundary(i)
}

/// Applies a unified diff (as redline writes it: `\n`-separated lines that keep their own `\r`,
/// `\ No newline at end of file` markers) to `old`.
fn apply_unified(old: &[u8], diff: &[u8]) -> Result<Vec<u8>, String> {
    let old_lines: Vec<&[u8]> = old.split_inclusive(|&c| c == b'\n').collect();
    let lines: Vec<&[u8]> = diff.split_inclusive(|&c| c == b'\n').collect();
    let mut out: Vec<u8> = Vec::new();
    let mut at = 0; // next old line to copy
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        if !l.starts_with(b"@@ ") {
            i += 1;
            continue;
        }
        let header = std::str::from_utf8(l).map_err(|e| e.to_string())?;
        let side = |prefix: char| -> Result<(usize, usize), String> {
            let r = header
                .split(' ')
                .find(|w| w.starts_with(prefix))
                .ok_or(format!("bad header {header}"))?;
            let mut nums = r[1..].split(',');
            let start: usize = nums
                .next()
                .unwrap_or("")
                .parse()
                .map_err(|_| format!("bad header {header}"))?;
            let count: usize = nums
                .next()
                .map_or(Ok(1), str::parse)
                .map_err(|_| format!("bad header {header}"))?;
            Ok((start, count))
        };
        let ((start, count), (_, new_count)) = (side('-')?, side('+')?);
        let first = if count == 0 { start } else { start - 1 };
        if first < at || first > old_lines.len() {
            return Err(format!("hunk {header} out of order"));
        }
        for ol in &old_lines[at..first] {
            out.extend_from_slice(ol);
        }
        at = first;
        i += 1;
        // Body lines, as many as the header counts (a removed "-- x" line reads "--- x"), each
        // `\` marker removing the newline of the line before it.
        let mut body: Vec<(u8, Vec<u8>)> = Vec::new();
        let (mut old_left, mut new_left) = (count, new_count);
        while i < lines.len() && (old_left > 0 || new_left > 0 || lines[i].starts_with(b"\\")) {
            let l = lines[i];
            if l.starts_with(b"\\") {
                if let Some((_, last)) = body.last_mut()
                    && last.last() == Some(&b'\n')
                {
                    last.pop();
                }
            } else {
                match l.first() {
                    Some(b' ') => {
                        (old_left, new_left) =
                            (old_left.saturating_sub(1), new_left.saturating_sub(1))
                    }
                    Some(b'-') => old_left = old_left.saturating_sub(1),
                    Some(b'+') => new_left = new_left.saturating_sub(1),
                    _ => return Err(format!("bad hunk line {:?}", String::from_utf8_lossy(l))),
                }
                body.push((l[0], l[1..].to_vec()));
            }
            i += 1;
        }
        for (tag, text) in body {
            match tag {
                b' ' | b'-' => {
                    let have = old_lines.get(at).ok_or("context past the end")?;
                    if *have != &text[..] {
                        return Err(format!(
                            "line {} is {:?}, the diff says {:?}",
                            at + 1,
                            String::from_utf8_lossy(have),
                            String::from_utf8_lossy(&text)
                        ));
                    }
                    if tag == b' ' {
                        out.extend_from_slice(&text);
                    }
                    at += 1;
                }
                b'+' => out.extend_from_slice(&text),
                t => return Err(format!("unknown diff line tag {:?}", t as char)),
            }
        }
    }
    for ol in &old_lines[at..] {
        out.extend_from_slice(ol);
    }
    Ok(out)
}

/// A file of a few lines (some repeated, so that patterns occur more than once) mixing combining
/// marks (also at a line start), trailing whitespace, folded characters, LF and CRLF, with or
/// without a final line break; and a window `s..s + k` of its lines.
fn line_file() -> impl Strategy<Value = (Vec<String>, Vec<&'static str>, bool, usize, usize)> {
    let piece = prop::sample::select(
        &[
            "a",
            "b",
            "x",
            " ",
            "  ",
            "\t",
            "e\u{0301}",
            "\u{0301}",
            "\u{00E9}",
            "\u{2019}",
            "'",
            "\u{00A0}",
            "\u{3000}",
            "\u{FB01}",
            "fi",
            "\u{1100}\u{1161}",
            "\u{AC00}",
            "\u{FF21}",
        ][..],
    );
    let line = prop::collection::vec(piece, 0..4).prop_map(|v| v.concat());
    (
        prop::collection::vec(line, 1..4),
        prop::collection::vec(any::<prop::sample::Index>(), 1..10),
    )
        .prop_flat_map(|(vocab, picks)| {
            let lines: Vec<String> = picks
                .iter()
                .map(|i| vocab[i.index(vocab.len())].clone())
                .collect();
            let n = lines.len();
            (
                Just(lines),
                prop::collection::vec(prop::sample::select(&["\n", "\r\n"][..]), n),
                any::<bool>(),
                0..n,
                1..=n,
            )
        })
        .prop_filter("window inside the file", |(l, _, _, s, k)| s + k <= l.len())
        // Without a final line break, an empty last line is no line at all.
        .prop_filter("a real last line", |(l, _, nl, _, _)| {
            *nl || !l[l.len() - 1].is_empty()
        })
}

/// Cases per property: modest by default so the suite stays fast; `PROPTEST_CASES` raises it.
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(384)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    /// (a) Resolved spans lie on character boundaries, their N(·) is N(oldText), an exact match
    /// is oldText up to line endings, text cut from the file is never `not_found`, and the output
    /// is the original with exactly the spans replaced.
    #[test]
    fn bytes_outside_spans_never_change(text in text(), seeds in prop::collection::vec(edit_seed(), 1..4)) {
        let doc = Document::from_text(text.clone(), false);
        let edits = cut(&text, &seeds);
        if edits.is_empty() {
            return Ok(());
        }
        let specs: Vec<EditSpec> = edits.iter().map(|(s, _)| s.clone()).collect();
        let planned = plan::match_edits(&doc, &specs);
        prop_assert_eq!(planned.len(), specs.len());
        for (e, (spec, findable)) in planned.iter().zip(&edits) {
            match &e.outcome {
                Outcome::Resolved(r) => {
                    prop_assert!(!r.spans.is_empty());
                    let mut last = 0;
                    for s in r.spans.iter() {
                        prop_assert!(s.start >= last && s.start <= s.end && s.end <= text.len(), "span {:?} after {}", s, last);
                        prop_assert!(is_boundary(&text, s.start) && is_boundary(&text, s.end));
                        prop_assert!(cluster_boundary(&text, s.start) && cluster_boundary(&text, s.end), "span {:?} splits a cluster", s);
                        if r.kind == MatchKind::Relaxed {
                            // Whole lines (a blank_lines remainder may sit inside one, §3b).
                            let at_line_start = s.start == 0 || matches!(text.as_bytes()[s.start - 1], b'\n' | b'\r');
                            prop_assert!(at_line_start || r.normalizations.contains(&Normalization::BlankLines), "relaxed span {:?} starts inside a line", s);
                            last = s.end;
                            continue;
                        }
                        prop_assert_eq!(&Normalized::new(&text[s.clone()]).text, &Normalized::new(spec.old_text()).text, "span {:?}", s);
                        if r.kind == MatchKind::Exact {
                            prop_assert_eq!(lf(&text[s.clone()]), lf(spec.old_text()));
                        }
                        last = s.end;
                    }
                    if r.kind != MatchKind::Relaxed {
                        prop_assert_eq!(r.replacement(spec).to_string(), doc.adapt_eol(spec.new_text()));
                    }
                    if !spec.replace_all {
                        prop_assert_eq!(r.spans.len(), 1);
                    }
                }
                Outcome::Failed(f) => {
                    if *findable {
                        prop_assert!(f.code() != crate::error::Code::NotFound, "text cut from the file was not found: {:?} in {:?}", spec.old_text(), text);
                    }
                }
                Outcome::Skipped => prop_assert!(false, "skipped edit in match_edits"),
            }
        }
        let fp = file_plan(&doc, planned.clone());
        if fp.ok() {
            let rendered = String::from_utf8(fp.render(|_| true).unwrap()).unwrap();
            let pieces = fp.pieces(&|_| true);
            // Rebuild by hand and compare every byte outside the spans.
            let mut want = String::new();
            let mut at = 0;
            let mut out_at = 0;
            for (span, rep, _) in &pieces {
                prop_assert!(span.start >= at, "pieces overlap in a plan that is ok");
                want.push_str(&text[at..span.start]);
                want.push_str(rep);
                prop_assert_eq!(&rendered.as_bytes()[out_at..out_at + span.start - at], &text.as_bytes()[at..span.start]);
                out_at += span.start - at + rep.len();
                at = span.end;
            }
            want.push_str(&text[at..]);
            prop_assert_eq!(&rendered.as_bytes()[out_at..], &text.as_bytes()[at..]);
            prop_assert_eq!(rendered, want);
        }
    }

    /// (b) The response's diff applied to the original bytes gives the bytes that are written
    /// (with the resolved edits accepted, as the reviewer does when some edits fail).
    #[test]
    fn diff_applies_to_original(text in text(), bom in any::<bool>(), seeds in prop::collection::vec(edit_seed(), 1..4)) {
        let doc = Document::from_text(text.clone(), bom);
        let edits = cut(&text, &seeds);
        let specs: Vec<EditSpec> = edits.into_iter().map(|(s, _)| s).collect();
        let fp = file_plan(&doc, plan::match_edits(&doc, &specs));
        let resolved: Vec<bool> = fp.edits.iter().map(|e| e.resolution().is_some()).collect();
        if !resolved.contains(&true) {
            return Ok(()); // nothing to diff (short random texts are often ambiguous)
        }
        let accept = |i: usize| resolved[i];
        let new = fp.render(accept).unwrap();
        let diff = report::file_diff(&fp, &accept);
        let old = doc.to_bytes();
        if new == old {
            prop_assert!(diff.is_empty(), "diff for an unchanged file: {:?}", diff);
        } else {
            prop_assert!(diff.starts_with("--- a/f.txt\n+++ b/f.txt\n"), "{:?}", diff);
            let patched = apply_unified(&old, diff.as_bytes());
            prop_assert_eq!(patched, Ok(new), "diff {:?}", diff);
        }
    }

    /// (c) The N(·) map: offsets that map back land on character (cluster) boundaries, ends
    /// never precede starts, and both maps are monotonic.
    #[test]
    fn normalized_map_is_monotonic_on_boundaries(text in text()) {
        let n = Normalized::new(&text);
        let mut last_start = 0;
        let mut last_end = 0;
        for i in 0..=n.text.len() {
            if !n.text.is_char_boundary(i) {
                continue; // never asked: matches of UTF-8 patterns start and end on characters
            }
            if let Some(o) = n.orig_start(i) {
                prop_assert!(is_boundary(&text, o) && cluster_boundary(&text, o), "orig_start({}) = {} in {:?}", i, o, text);
                prop_assert!(o >= last_start, "orig_start not monotonic at {}", i);
                last_start = o;
            }
            if let Some(o) = n.orig_end(i) {
                prop_assert!(is_boundary(&text, o) && cluster_boundary(&text, o), "orig_end({}) = {} in {:?}", i, o, text);
                prop_assert!(o >= last_end, "orig_end not monotonic at {}", i);
                last_end = o;
            }
        }
        for a in 0..=n.text.len() {
            // Empty ranges never occur: N(oldText) is never empty.
            for b in a + 1..=n.text.len() {
                if !n.text.is_char_boundary(a) || !n.text.is_char_boundary(b) {
                    continue;
                }
                if let Some(s) = n.orig_span(a..b, false) {
                    prop_assert!(s.start <= s.end, "orig_span({}..{}) = {:?}", a, b, s);
                    if let Some(t) = n.orig_span(a..b, true) {
                        prop_assert!(t.start == s.start && t.end >= s.end);
                        prop_assert!(text[s.end..t.end].chars().all(char::is_whitespace), "extension {:?} is not whitespace", &text[s.end..t.end]);
                    }
                }
            }
        }
        // N itself: no line of N ends in whitespace, and it has no CR.
        prop_assert!(!n.text.contains('\r'));
        for l in n.text.split('\n') {
            prop_assert!(!l.ends_with(char::is_whitespace), "line {:?} of N keeps trailing whitespace", l);
        }
    }

    /// (d) §3b: a relaxed match replaces whole lines and nothing else. oldText is a window of
    /// the file's lines re-typed the way agents get formatting wrong (indentation dropped or
    /// added, inner runs collapsed, tabs, read-tool line numbers, stray blank lines).
    #[test]
    fn relaxed_match_never_changes_bytes_outside_its_span(
        lines in prop::collection::vec(code_line(), 1..14),
        eols in prop::collection::vec(prop::sample::select(&["\n", "\r\n", "\n"][..]), 14),
        from in any::<usize>(),
        len in 1usize..5,
        how in prop::collection::vec(any::<bool>(), 6),
        new_text in prop::collection::vec(code_line(), 0..3),
    ) {
        let mut text = String::new();
        for (i, l) in lines.iter().enumerate() {
            text.push_str(l);
            if i + 1 < lines.len() {
                text.push_str(eols[i]);
            }
        }
        let from = from % lines.len();
        let to = (from + len).min(lines.len());
        let mut old: Vec<String> = lines[from..to]
            .iter()
            .map(|l| {
                let mut l = l.clone();
                if how[0] {
                    l = l.trim_start_matches([' ', '\t']).to_string();
                }
                if how[1] {
                    l = format!("    {l}");
                }
                if how[2] {
                    l = l.replace("  ", " ").replace('\t', "    ");
                }
                l
            })
            .collect();
        if how[3] {
            old = old.iter().enumerate().map(|(k, l)| format!("{:>6}\t{l}", from + k + 1)).collect();
        }
        if how[4] {
            old.insert(0, "  ".into());
        }
        let old = old.join("\n") + if how[5] { "\n" } else { "" };
        if Normalized::new(&old).text.is_empty() {
            return Ok(());
        }
        let spec = EditSpec::new(old, new_text.join("\n"));
        if lf(spec.old_text()) == lf(spec.new_text()) {
            return Ok(());
        }
        let doc = Document::from_text(text.clone(), false);
        let planned = plan::match_edits(&doc, std::slice::from_ref(&spec));
        let Outcome::Resolved(r) = &planned[0].outcome else { return Ok(()) };
        prop_assert_eq!(r.spans.len(), 1);
        let span = r.spans[0].clone();
        if r.kind == MatchKind::Relaxed && !r.normalizations.contains(&Normalization::BlankLines) {
            prop_assert!(span.start == 0 || matches!(text.as_bytes()[span.start - 1], b'\n' | b'\r'), "starts inside a line: {:?}", span);
            let end_ok = span.end == text.len()
                || matches!(text.as_bytes()[span.end], b'\n' | b'\r')
                || matches!(text.as_bytes()[span.end - 1], b'\n');
            prop_assert!(end_ok, "ends inside a line: {:?}", span);
        }
        let fp = file_plan(&doc, planned.clone());
        let rendered = String::from_utf8(fp.render(|_| true).unwrap()).unwrap();
        prop_assert_eq!(&rendered[..span.start], &text[..span.start]);
        let tail = text.len() - span.end;
        prop_assert_eq!(&rendered[rendered.len() - tail..], &text[span.end..]);
        prop_assert_eq!(&rendered[span.start..rendered.len() - tail], r.replacement(&spec));
    }

    /// (e) A batch whose edits all match exactly resolves the same under every `--tolerance`.
    #[test]
    fn exact_batch_is_the_same_under_every_tolerance(text in text(), seeds in prop::collection::vec(edit_seed(), 1..4)) {
        let doc = Document::from_text(text.clone(), false);
        let specs: Vec<EditSpec> = cut(&text, &seeds).into_iter().map(|(s, _)| s).collect();
        if specs.is_empty() {
            return Ok(());
        }
        let with = |tolerance| plan::match_edits_with(&doc, &specs, plan::MatchOptions { tolerance, tab_width: None });
        let relaxed = with(Tolerance::Relaxed);
        let all_exact = relaxed.iter().all(|e| e.resolution().is_some_and(|r| r.kind == MatchKind::Exact));
        if !all_exact {
            return Ok(());
        }
        prop_assert_eq!(&with(Tolerance::Normalized), &relaxed);
        prop_assert_eq!(&with(Tolerance::Exact), &relaxed);
    }

    /// (f) For whole-line patterns, the whole-line search that locates Codex chunks
    /// ([`matcher::whole_lines`]: lines of N(file) compared whole) finds exactly the
    /// occurrences that [`matcher::find_all`]'s per-occurrence rules (cluster boundaries, the
    /// trimmed last line, an exact occurrence always counts) accept as whole-line spans, both
    /// for the pattern in N(·) and for the lines as the file has them (trailing whitespace
    /// included); and those are the windows whose N(·) lines equal the pattern's.
    #[test]
    fn whole_lines_agree_with_find_all(
        (lines, eols, final_nl, s, k) in line_file(),
    ) {
        let mut text = String::new();
        for (i, l) in lines.iter().enumerate() {
            text.push_str(l);
            if i + 1 < lines.len() || final_nl {
                text.push_str(eols[i]);
            }
        }
        let doc = Document::from_text(text.clone(), false);
        let file = Normalized::new(&doc.text);
        let open_end = !text.is_empty() && !doc.final_newline();
        // N(file)'s lines: its `\n`-separated pieces, less the one after a final line break.
        let mut n_lines: Vec<&str> = file.text.split('\n').collect();
        if !open_end {
            n_lines.pop();
        }
        prop_assert_eq!(n_lines.len(), lines.len());
        let raw = lines[s..s + k].join("\n");
        let pattern = Normalized::new(&raw).text.into_owned();
        let want: Vec<&str> = pattern.split('\n').collect();
        let naive: Vec<usize> = (0..=n_lines.len() - k)
            .filter(|&p| n_lines[p..p + k] == want[..])
            .collect();
        let whole: Vec<usize> = matcher::whole_lines(&file, open_end, &[pattern.as_str()])
            .of(0)
            .lines
            .iter_from(0)
            .map(|l| l as usize)
            .collect();
        prop_assert_eq!(&whole, &naive);
        prop_assert!(whole.contains(&s));
        if pattern.is_empty() {
            // One empty line: find_all takes no empty pattern (nor does a chunk search for one).
            return Ok(());
        }
        let needles = [pattern.as_str(), raw.as_str()].map(|old_text| matcher::Needle {
            old_text,
            replace_all: false,
            line_based: false,
        });
        for (res, needle) in matcher::find_all(&doc.text, &file, &needles).into_iter().zip(&needles) {
            let spans = match res {
                Ok(f) => f.spans,
                Err(matcher::Miss::Ambiguous { spans, count }) => {
                    prop_assume!(count <= spans.len(), "more occurrences than listed");
                    spans
                }
                Err(matcher::Miss::NotFound) => Vec::new(),
                Err(matcher::Miss::TooLarge) => {
                    prop_assume!(false, "over the work budget");
                    Vec::new()
                }
            };
            // A whole-line span covers `k` lines: it starts at a line start (or, when its first
            // line is blank under N(·), after that line's whitespace, which N(·) removes and a
            // span never starts with) and ends on a real line (not the piece after a final line
            // break) where only whitespace N(·) removes follows.
            let blank = |i: usize| {
                Normalized::new(&text[doc.line_start(i)..doc.line_content_end(i)]).text.is_empty()
            };
            let whole_line = |sp: &std::ops::Range<usize>| {
                let first = doc.line_of(sp.start);
                let last = doc.line_of(sp.end);
                (doc.line_start(first) == sp.start
                    || (blank(first) && sp.start == doc.line_content_end(first)))
                    && last < lines.len()
                    && last + 1 - first == k
                    && sp.end <= doc.line_content_end(last)
                    && Normalized::new(&text[sp.end..doc.line_content_end(last)]).text.is_empty()
            };
            let from_find_all: Vec<usize> =
                spans.iter().filter(|sp| whole_line(sp)).map(|sp| doc.line_of(sp.start)).collect();
            prop_assert_eq!(&from_find_all, &whole, "needle {:?} in {:?}", needle.old_text, text);
        }
    }
}

#[test]
fn unified_applier_self_check() {
    let old = b"a\r\nb\nc";
    let diff = b"--- a/f\n+++ b/f\n@@ -2,2 +2,2 @@\n-b\n-c\n\\ No newline at end of file\n+B\n+C\n";
    assert_eq!(apply_unified(old, diff), Ok(b"a\r\nB\nC\n".to_vec()));
    assert!(apply_unified(b"x\n", diff).is_err());
    // A removed line that starts with "-- " reads like a file header.
    let diff = b"--- a/f\n+++ b/f\n@@ -1,2 +1 @@\n---  \n-x\n+y\n";
    assert_eq!(apply_unified(b"--  \nx\n", diff), Ok(b"y\n".to_vec()));
}
