//! A file's display rows, built once when the file is first shown and never while drawing.
//!
//! Rows come from the engine's own diff ([`crate::engine::diff::hunks`] over the known changes), so each
//! changed line already knows its edit. Word emphasis is computed here, per pair of deleted and
//! inserted lines, within fixed bounds so that a huge block never costs more than line colouring.
//! The split layout (old left, new right) is an index over the same rows: one model, two
//! renderings, one cursor.

use super::unit::{FileInfo, UnitKind};
use crate::engine::diff::{self, Tag};
use crate::engine::failure::places;
use crate::engine::plan::{FilePlan, Op, Outcome};
use crate::error::Code;
use crate::report;
use similar::{Algorithm, DiffTag, capture_diff_slices};
use std::ops::Range;

/// Lines longer than this (bytes) get no word emphasis.
const EMPH_MAX_LINE: usize = 4096;
/// Change blocks with more lines than this on a side get no word emphasis.
const EMPH_MAX_BLOCK: usize = 256;
/// Token pairs over this count get no word emphasis.
const EMPH_MAX_TOKENS: usize = 2000;

/// What a row shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RowKind {
    /// A diff line; `emph` are byte ranges of `text` that changed within the line.
    Line {
        tag: Tag,
        old_no: Option<usize>,
        new_no: Option<usize>,
        text: String,
        emph: Vec<Range<usize>>,
        /// Syntax colours (empty when highlighting is off or out of bounds).
        syntax: super::highlight::Colors,
    },
    /// `\ No newline at end of file` after the line above, on its side.
    NoNewline { tag: Tag },
    /// Unchanged lines between hunks.
    Gap { lines: usize },
    /// A unit that has no diff lines (a failed edit, a rename, an empty file), or a file failure.
    Note { text: String },
}

/// One display row; `unit` is the unit it belongs to (index into the file's units).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Row {
    pub kind: RowKind,
    pub unit: Option<usize>,
}

impl Row {
    /// Syntax colours of a diff line.
    pub(crate) fn kind_syntax(&self) -> Option<&super::highlight::Colors> {
        match &self.kind {
            RowKind::Line { syntax, .. } if !syntax.is_empty() => Some(syntax),
            _ => None,
        }
    }

    /// The text search looks at.
    pub(crate) fn text(&self) -> &str {
        match &self.kind {
            RowKind::Line { text, .. } | RowKind::Note { text } => text,
            _ => "",
        }
    }
}

/// One row of the split layout: the unified rows shown left (old) and right (new). A row that
/// spans both columns (context, gaps, notes) has the same index on both sides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SplitRow {
    pub left: Option<usize>,
    pub right: Option<usize>,
}

/// Every display row of a file and the indexes over them.
#[derive(Debug, Clone, Default)]
pub(crate) struct FileRows {
    pub rows: Vec<Row>,
    /// First row of each unit (indexed like the file's units).
    pub first_row: Vec<Option<usize>>,
    pub split: Vec<SplitRow>,
    /// For each row, its split row.
    pub split_of: Vec<usize>,
    /// Digits of the largest line number (gutter width).
    pub number_width: usize,
}

/// Builds the rows of one file; `syntax`: highlight it with this palette.
pub(crate) fn build(
    file: &FilePlan,
    info: &FileInfo,
    syntax: Option<super::highlight::Palette>,
) -> FileRows {
    let mut rows: Vec<Row> = Vec::new();
    // The first unit of an edit, or a whole-file unit before it, looked up per diff line: a
    // map, not a walk of every unit per line (10,000 edits × their lines).
    let mut first_of: std::collections::HashMap<usize, usize> = std::collections::HashMap::new();
    let mut whole_file = None;
    for (u, unit) in info.units.iter().enumerate() {
        match unit.kind {
            UnitKind::Edit(i) => {
                first_of.entry(i).or_insert(u);
            }
            UnitKind::Content | UnitKind::Delete => {
                whole_file.get_or_insert(u);
            }
            UnitKind::Move => {}
        }
    }
    let unit_of_edit = |edit: usize| -> Option<usize> {
        match (first_of.get(&edit).copied(), whole_file) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    };
    if let Some(f) = &file.failure {
        let f = crate::report::message::file(f, &file.path);
        let hint = f
            .hint
            .as_deref()
            .map(|h| format!(" — {h}"))
            .unwrap_or_default();
        rows.push(Row {
            kind: RowKind::Note {
                text: format!("file not editable: {}{hint}", f.message),
            },
            unit: None,
        });
    }
    for (u, unit) in info.units.iter().enumerate() {
        let text = match unit.kind {
            UnitKind::Move => format!("renamed to {}", file.move_to.as_deref().unwrap_or("?")),
            UnitKind::Edit(i) if unit.failed => match file.edits.get(i).map(|e| &e.outcome) {
                Some(Outcome::Failed(f)) => failure_note(f, file.original.as_ref().map(|o| &o.doc)),
                _ => "skipped: the file cannot be edited".to_string(),
            },
            _ if unit.failed => "skipped: the file cannot be edited".to_string(),
            _ => continue,
        };
        rows.push(Row {
            kind: RowKind::Note { text },
            unit: Some(u),
        });
    }
    let diffable = file.failure.is_none() && (file.op != Op::Move || !file.edits.is_empty());
    if diffable {
        let (old, new, changes) = report::texts(file, &|_| true);
        let hunks = diff::hunks(&old, &new, &changes);
        if hunks.is_empty() {
            let what = match file.op {
                Op::Create => Some("creates an empty file"),
                Op::Delete => Some("deletes an empty file"),
                Op::Overwrite => Some("overwrites the file with identical content"),
                _ => None,
            };
            if let Some(what) = what {
                rows.push(Row {
                    kind: RowKind::Note { text: what.into() },
                    unit: unit_of_edit(0),
                });
            }
        }
        let mut prev_end = 1usize;
        for h in &hunks {
            let gap = h.old_start.saturating_sub(prev_end);
            if gap > 0 && file.op != Op::Create {
                rows.push(Row {
                    kind: RowKind::Gap { lines: gap },
                    unit: None,
                });
            }
            prev_end = h.old_start + h.old_len;
            for l in h.lines() {
                let unit = l
                    .edit
                    .and_then(unit_of_edit)
                    .filter(|_| l.tag != Tag::Context);
                rows.push(Row {
                    kind: RowKind::Line {
                        tag: l.tag,
                        old_no: l.old_no,
                        new_no: l.new_no,
                        text: l.text.to_string(),
                        emph: Vec::new(),
                        syntax: Vec::new(),
                    },
                    unit,
                });
                if l.no_newline {
                    rows.push(Row {
                        kind: RowKind::NoNewline { tag: l.tag },
                        unit,
                    });
                }
            }
        }
    }
    let mut first_row = vec![None; info.units.len()];
    for (i, r) in rows.iter().enumerate() {
        if let Some(u) = r.unit
            && first_row[u].is_none()
        {
            first_row[u] = Some(i);
        }
    }
    // Every unit must be reachable: one with no changed line (an edit whose change the line diff
    // shows as context, which cannot happen for resolved edits today) gets a note.
    for (u, first) in first_row.iter_mut().enumerate() {
        if first.is_none() {
            *first = Some(rows.len());
            rows.push(Row {
                kind: RowKind::Note {
                    text: "no visible line change".into(),
                },
                unit: Some(u),
            });
        }
    }
    emphasize(&mut rows);
    if let Some(p) = syntax {
        let path = file.move_to.as_deref().unwrap_or(&file.path);
        highlight(&mut rows, path, p);
    }
    let (split, split_of) = split_layout(&rows);
    let max_no = rows
        .iter()
        .filter_map(|r| match r.kind {
            RowKind::Line { old_no, new_no, .. } => old_no.max(new_no),
            _ => None,
        })
        .max()
        .unwrap_or(1);
    FileRows {
        rows,
        first_row,
        split,
        split_of,
        number_width: max_no.to_string().len().max(2),
    }
}

/// One line about a failed edit; the why drawer has the rest.
fn failure_note(
    f: &crate::engine::failure::EditError,
    doc: Option<&crate::engine::document::Document>,
) -> String {
    let line = |off: usize| doc.map(|d| d.line_of(off) + 1).unwrap_or(0);
    let (matches, occurrences) = (f.matches(), f.occurrences());
    let what = match f.code() {
        Code::NotFound if f.already_applied().is_some() => {
            "not found: it looks already applied (newText is in the file)".to_string()
        }
        Code::Ambiguous => {
            let lines: Vec<String> = matches
                .iter()
                .take(6)
                .map(|m| line(m.start).to_string())
                .collect();
            let more = if matches.len() > 6 || occurrences > matches.len() {
                ", …"
            } else {
                ""
            };
            format!(
                "ambiguous · matches {} places: lines {}{more}",
                places(occurrences.max(matches.len())),
                lines.join(", ")
            )
        }
        Code::Overlap => format!(
            "overlaps edit #{}",
            f.other_edit()
                .map(|o| (o + 1).to_string())
                .unwrap_or_default()
        ),
        Code::NoOp => "no-op: oldText equals newText".to_string(),
        // `not_found`, the one other code an edit fails with.
        _ => match f.candidates().first() {
            Some(c) => format!(
                "not found · closest: line {} ({:.0}% similar)",
                line(c.span.start),
                c.score * 100.0
            ),
            None => "not found · nothing similar in the file".to_string(),
        },
    };
    format!("✗ {what}   (i: why)")
}

/// Syntax colours for every diff line: per hunk (a run of lines between gaps and notes), the old
/// side (context and deleted lines) and the new side (context and inserted lines) each as one
/// stream; context lines take the new side's colours.
fn highlight(rows: &mut [Row], path: &str, p: super::highlight::Palette) {
    let Some(syntax) = super::highlight::syntax_for(path) else {
        return;
    };
    let lines = rows
        .iter()
        .filter(|r| matches!(r.kind, RowKind::Line { .. }))
        .count();
    if lines > super::highlight::MAX_ROWS {
        return;
    }
    let mut i = 0;
    while i < rows.len() {
        if !matches!(
            rows[i].kind,
            RowKind::Line { .. } | RowKind::NoNewline { .. }
        ) {
            i += 1;
            continue;
        }
        let start = i;
        while i < rows.len()
            && matches!(
                rows[i].kind,
                RowKind::Line { .. } | RowKind::NoNewline { .. }
            )
        {
            i += 1;
        }
        for side in [Tag::Delete, Tag::Insert] {
            let idx: Vec<usize> = (start..i)
                .filter(|&k| matches!(&rows[k].kind, RowKind::Line { tag, .. } if *tag == side || *tag == Tag::Context))
                .collect();
            let texts: Vec<&str> = idx.iter().map(|&k| rows[k].text()).collect();
            let colors = super::highlight::stream(syntax, p, &texts);
            for (k, c) in idx.into_iter().zip(colors) {
                if let RowKind::Line { tag, syntax, .. } = &mut rows[k].kind
                    && (*tag == side || (*tag == Tag::Context && side == Tag::Insert))
                {
                    *syntax = c;
                }
            }
        }
    }
}

/// Runs of changed rows: maximal sequences of Delete/Insert lines (and their no-newline rows).
fn blocks(rows: &[Row]) -> Vec<Range<usize>> {
    let changed = |r: &Row| match &r.kind {
        RowKind::Line { tag, .. } | RowKind::NoNewline { tag } => *tag != Tag::Context,
        _ => false,
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < rows.len() {
        if changed(&rows[i]) {
            let s = i;
            while i < rows.len() && changed(&rows[i]) {
                i += 1;
            }
            out.push(s..i);
        } else {
            i += 1;
        }
    }
    out
}

fn side_rows(rows: &[Row], block: Range<usize>, want: Tag) -> Vec<usize> {
    block
        .filter(|&i| match &rows[i].kind {
            RowKind::Line { tag, .. } | RowKind::NoNewline { tag } => *tag == want,
            _ => false,
        })
        .collect()
}

/// Word emphasis for paired deleted/inserted lines, in order, within the bounds.
fn emphasize(rows: &mut [Row]) {
    for b in blocks(rows) {
        let lines = |want: Tag, rows: &[Row]| -> Vec<usize> {
            side_rows(rows, b.clone(), want)
                .into_iter()
                .filter(|&i| matches!(rows[i].kind, RowKind::Line { .. }))
                .collect()
        };
        let (dels, ins) = (lines(Tag::Delete, rows), lines(Tag::Insert, rows));
        if dels.len() > EMPH_MAX_BLOCK || ins.len() > EMPH_MAX_BLOCK {
            continue;
        }
        let paired: Vec<(usize, usize)> = pair_lines(rows, &dels, &ins)
            .into_iter()
            .filter_map(|(a, b)| Some((a?, b?)))
            .collect();
        for (d, n) in paired {
            let (a, b) = (rows[d].text().to_string(), rows[n].text().to_string());
            if let Some((ea, eb)) = word_emphasis(&a, &b) {
                if let RowKind::Line { emph, .. } = &mut rows[d].kind {
                    *emph = ea;
                }
                if let RowKind::Line { emph, .. } = &mut rows[n].kind {
                    *emph = eb;
                }
            }
        }
    }
}

/// Words (letters, digits, `_`), whitespace runs and single other characters, as byte ranges.
fn tokens(s: &str) -> Vec<Range<usize>> {
    #[derive(PartialEq, Clone, Copy)]
    enum K {
        Word,
        Space,
        Other,
    }
    let kind = |c: char| {
        if c.is_alphanumeric() || c == '_' {
            K::Word
        } else if c.is_whitespace() {
            K::Space
        } else {
            K::Other
        }
    };
    let mut out: Vec<Range<usize>> = Vec::new();
    let mut last: Option<K> = None;
    for (i, c) in s.char_indices() {
        let k = kind(c);
        match out.last_mut() {
            Some(r) if last == Some(k) && k != K::Other => r.end = i + c.len_utf8(),
            _ => out.push(i..i + c.len_utf8()),
        }
        last = Some(k);
    }
    out
}

/// Byte ranges of a line to emphasize.
pub(crate) type Emphasis = Vec<Range<usize>>;

/// Changed byte ranges of `a` and `b`, or `None` when the lines are too different (or too big)
/// for emphasis to help: then the whole line's colour says it.
pub(crate) fn word_emphasis(a: &str, b: &str) -> Option<(Emphasis, Emphasis)> {
    if a.len() > EMPH_MAX_LINE || b.len() > EMPH_MAX_LINE || a == b {
        return None;
    }
    let (ta, tb) = (tokens(a), tokens(b));
    if ta.len() + tb.len() > EMPH_MAX_TOKENS {
        return None;
    }
    let sa: Vec<&str> = ta.iter().map(|r| &a[r.clone()]).collect();
    let sb: Vec<&str> = tb.iter().map(|r| &b[r.clone()]).collect();
    let ops = capture_diff_slices(Algorithm::Myers, &sa, &sb);
    let mut same = 0usize;
    let (mut ea, mut eb): (Vec<Range<usize>>, Vec<Range<usize>>) = (Vec::new(), Vec::new());
    let push = |v: &mut Vec<Range<usize>>, r: Range<usize>| match v.last_mut() {
        Some(l) if l.end == r.start => l.end = r.end,
        _ => v.push(r),
    };
    for op in ops {
        let (tag, ro, rn) = op.as_tag_tuple();
        match tag {
            DiffTag::Equal => same += ro.clone().map(|i| sa[i].trim().len()).sum::<usize>(),
            _ => {
                if !ro.is_empty() {
                    push(&mut ea, ta[ro.start].start..ta[ro.end - 1].end);
                }
                if !rn.is_empty() {
                    push(&mut eb, tb[rn.start].start..tb[rn.end - 1].end);
                }
            }
        }
    }
    let longer = a.trim().len().max(b.trim().len()).max(1);
    // Below half shared, emphasis would light up most of both lines: say "rewritten" instead.
    if same * 2 < longer {
        return None;
    }
    Some((ea, eb))
}

/// Blocks with more candidate pairs than this are paired in order.
const PAIR_MAX_WORK: usize = 20_000;
/// Lines at least this similar (Dice over character bigrams) can pair.
const PAIR_MIN_SIMILARITY: f32 = 0.5;

/// Character bigrams of a line, sorted (a multiset), ignoring surrounding whitespace.
fn bigrams(s: &str) -> Vec<(char, char)> {
    let c: Vec<char> = s.trim().chars().collect();
    let mut b: Vec<(char, char)> = c.windows(2).map(|w| (w[0], w[1])).collect();
    b.sort_unstable();
    b
}

/// Dice similarity of two sorted bigram multisets, 0–1.
fn dice(a: &[(char, char)], b: &[(char, char)]) -> f32 {
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    let (mut i, mut j, mut both) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                both += 1;
                i += 1;
                j += 1;
            }
        }
    }
    (2 * both) as f32 / (a.len() + b.len()) as f32
}

/// Pairs the deleted rows `dels` with the inserted rows `ins` of one change block by
/// similarity: the non-crossing pairing with the greatest total similarity among pairs at least
/// [`PAIR_MIN_SIMILARITY`] alike (delta's homologous lines), so an inserted line does not shift
/// every pair below it. Unpaired rows stand alone. Both sides keep their order. Past
/// [`PAIR_MAX_WORK`] it pairs in order.
pub(crate) fn pair_lines(
    rows: &[Row],
    dels: &[usize],
    ins: &[usize],
) -> Vec<(Option<usize>, Option<usize>)> {
    let (n, k) = (dels.len(), ins.len());
    if n == 0 || k == 0 || n * k > PAIR_MAX_WORK {
        return (0..n.max(k))
            .map(|i| (dels.get(i).copied(), ins.get(i).copied()))
            .collect();
    }
    let bd: Vec<_> = dels.iter().map(|&r| bigrams(rows[r].text())).collect();
    let bi: Vec<_> = ins.iter().map(|&r| bigrams(rows[r].text())).collect();
    let sim: Vec<Vec<f32>> = bd
        .iter()
        .map(|a| bi.iter().map(|b| dice(a, b)).collect())
        .collect();
    // best[i][j]: the best total over dels[i..] and ins[j..].
    let mut best = vec![vec![0f32; k + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..k).rev() {
            let mut v = best[i + 1][j].max(best[i][j + 1]);
            if sim[i][j] >= PAIR_MIN_SIMILARITY {
                v = v.max(best[i + 1][j + 1] + sim[i][j]);
            }
            best[i][j] = v;
        }
    }
    let mut out = Vec::with_capacity(n.max(k));
    let (mut i, mut j) = (0, 0);
    while i < n && j < k {
        if sim[i][j] >= PAIR_MIN_SIMILARITY && best[i][j] == best[i + 1][j + 1] + sim[i][j] {
            out.push((Some(dels[i]), Some(ins[j])));
            i += 1;
            j += 1;
        } else if best[i][j] == best[i + 1][j] {
            out.push((Some(dels[i]), None));
            i += 1;
        } else {
            out.push((None, Some(ins[j])));
            j += 1;
        }
    }
    out.extend(dels[i..].iter().map(|&d| (Some(d), None)));
    out.extend(ins[j..].iter().map(|&r| (None, Some(r))));
    // Lone old and new rows next to each other share a split row, as unrelated lines do in order.
    let mut merged: Vec<(Option<usize>, Option<usize>)> = Vec::with_capacity(out.len());
    for p in out {
        match (merged.last_mut(), p) {
            (Some(last @ (Some(_), None)), (None, Some(r))) => last.1 = Some(r),
            _ => merged.push(p),
        }
    }
    merged
}

/// The split layout: context and full-width rows on both sides; within a change block, old rows
/// left and new rows right, paired by similarity ([`pair_lines`]).
fn split_layout(rows: &[Row]) -> (Vec<SplitRow>, Vec<usize>) {
    let mut split = Vec::with_capacity(rows.len());
    let mut split_of = vec![0; rows.len()];
    let blocks = blocks(rows);
    let mut bi = 0;
    let mut i = 0;
    while i < rows.len() {
        if let Some(b) = blocks.get(bi).filter(|b| b.start == i) {
            let (l, r) = (
                side_rows(rows, b.clone(), Tag::Delete),
                side_rows(rows, b.clone(), Tag::Insert),
            );
            // Pair the text lines; a no-newline row stays right after its line.
            let text = |v: &[usize]| -> Vec<usize> {
                v.iter()
                    .copied()
                    .filter(|&i| matches!(rows[i].kind, RowKind::Line { .. }))
                    .collect()
            };
            // `v` ascends (row indices): a search, not a walk per line of a big block.
            let follow = |v: &[usize], i: usize| -> Option<usize> {
                v.binary_search(&(i + 1))
                    .ok()
                    .map(|k| v[k])
                    .filter(|&x| matches!(rows[x].kind, RowKind::NoNewline { .. }))
            };
            let mut pairs = Vec::new();
            for (a, c) in pair_lines(rows, &text(&l), &text(&r)) {
                pairs.push((a, c));
                let (na, nc) = (a.and_then(|a| follow(&l, a)), c.and_then(|c| follow(&r, c)));
                if na.is_some() || nc.is_some() {
                    pairs.push((na, nc));
                }
            }
            for (left, right) in pairs {
                let s = SplitRow { left, right };
                for x in [s.left, s.right].into_iter().flatten() {
                    split_of[x] = split.len();
                }
                split.push(s);
            }
            i = b.end;
            bi += 1;
        } else {
            split_of[i] = split.len();
            split.push(SplitRow {
                left: Some(i),
                right: Some(i),
            });
            i += 1;
        }
    }
    (split, split_of)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emphasis_marks_changed_words_only() {
        let (a, _) = word_emphasis(
            "let width = area.width as usize;",
            "let width = usize::from(area.width);",
        )
        .unwrap();
        assert_eq!(a, vec![22..31]);
        let (a, b) = word_emphasis(
            "    format!(\"Hello, {}!\", name)",
            "    format!(\"Hello, {name}!\")",
        )
        .unwrap();
        assert!(!a.is_empty() && !b.is_empty(), "{a:?} {b:?}");
        assert!(b.iter().all(|r| r.start >= "let width = ".len()), "{b:?}");
        assert!(
            word_emphasis("abc", "xyz").is_none(),
            "completely different lines are not emphasized"
        );
        assert!(word_emphasis(&"x ".repeat(3000), "y").is_none());
    }

    fn line(tag: Tag, text: &str) -> Row {
        Row {
            kind: RowKind::Line {
                tag,
                old_no: None,
                new_no: None,
                text: text.into(),
                emph: Vec::new(),
                syntax: Vec::new(),
            },
            unit: Some(0),
        }
    }

    #[test]
    fn split_pairs_lines_by_similarity_not_order() {
        // A comment was removed above the changed line: in order, the comment would pair with
        // the new line and the old line would stand alone.
        let rows = vec![
            line(Tag::Delete, "// compute the width"),
            line(Tag::Delete, "let width = area.width as usize;"),
            line(Tag::Insert, "let width = usize::from(area.width);"),
        ];
        let pairs = pair_lines(&rows, &[0, 1], &[2]);
        assert_eq!(pairs, vec![(Some(0), None), (Some(1), Some(2))]);
        let (split, _) = split_layout(&rows);
        assert_eq!(
            split,
            vec![
                SplitRow {
                    left: Some(0),
                    right: None
                },
                SplitRow {
                    left: Some(1),
                    right: Some(2)
                },
            ]
        );
        // Word emphasis follows the same pairing.
        let mut rows = rows;
        emphasize(&mut rows);
        assert!(matches!(&rows[1].kind, RowKind::Line { emph, .. } if !emph.is_empty()));
        assert!(matches!(&rows[0].kind, RowKind::Line { emph, .. } if emph.is_empty()));
        // Unrelated lines still share rows in order.
        let rows = vec![
            line(Tag::Delete, "alpha beta"),
            line(Tag::Insert, "xyz 123"),
        ];
        assert_eq!(pair_lines(&rows, &[0], &[1]), vec![(Some(0), Some(1))]);
    }

    /// A block of 40,001 changed lines on each side (a replaceAll on every line of a big
    /// file): each no-newline row stays right after its line, found by a search (a walk of the
    /// side per line made the reviewer's first frame of 200,000 changed lines take minutes).
    #[test]
    fn a_big_block_keeps_no_newline_rows_after_their_lines() {
        let n = 40_000;
        let mut rows = Vec::new();
        for i in 0..n {
            rows.push(line(Tag::Delete, &format!("a{i}")));
            rows.push(line(Tag::Insert, &format!("b{i}")));
        }
        let no_newline = |tag| Row {
            kind: RowKind::NoNewline { tag },
            unit: Some(0),
        };
        rows.push(line(Tag::Delete, "last"));
        rows.push(no_newline(Tag::Delete));
        rows.push(line(Tag::Insert, "last!"));
        rows.push(no_newline(Tag::Insert));
        let (split, split_of) = split_layout(&rows);
        assert_eq!(split.len(), n + 2);
        let (l, r) = (2 * n, 2 * n + 2);
        assert_eq!(
            split[n],
            SplitRow {
                left: Some(l),
                right: Some(r)
            }
        );
        assert_eq!(
            split[n + 1],
            SplitRow {
                left: Some(l + 1),
                right: Some(r + 1)
            }
        );
        assert_eq!(split_of[r + 1], n + 1);
        assert_eq!(
            split[7],
            SplitRow {
                left: Some(14),
                right: Some(15)
            }
        );
    }

    #[test]
    fn tokens_split_words_spaces_and_punctuation() {
        let s = "a_b  (c)";
        let t: Vec<&str> = tokens(s).into_iter().map(|r| &s[r]).collect();
        assert_eq!(t, vec!["a_b", "  ", "(", "c", ")"]);
    }
}
