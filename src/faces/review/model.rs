//! The reviewer's state as plain data: the batch, one decision per edit, the cursor and what is
//! on screen. Only [`super::update`] changes it; the view only reads it.
//!
//! The unit of decision is a [`Unit`]: one edit of a file, or the whole operation of a file that
//! has no edits (create, overwrite, delete) or the rename of a moved file. Hunks and files are
//! groupings of units; their states are derived, never stored.

use super::keys::Context;
use super::rows::FileRows;
use super::unit::{FileInfo, Unit, UnitKind};
use crate::engine::matcher::MatchKind;
use crate::engine::plan::{EditError, FilePlan, Op, Outcome, Plan};
use crate::error::ExitStatus;
use crate::report::display_path;

/// What the reviewer decided about a unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decision {
    Undecided,
    Accepted,
    Rejected,
}

/// What a unit shows: its decision, or why it cannot be decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum State {
    Undecided,
    Accepted,
    Rejected,
    /// The engine could not place it; it can never be accepted.
    Failed,
    /// Its file changed on disk since the batch was resolved; it can no longer be written.
    Stale,
}

impl State {
    /// The glyph the gutter shows; decisions never depend on colour alone.
    pub(crate) fn glyph(self) -> &'static str {
        match self {
            State::Undecided => "·",
            State::Accepted => "✓",
            State::Rejected => "✗",
            State::Failed => "!",
            State::Stale => "⚠",
        }
    }

    pub(crate) fn word(self) -> &'static str {
        match self {
            State::Undecided => "undecided",
            State::Accepted => "accepted",
            State::Rejected => "rejected",
            State::Failed => "failed",
            State::Stale => "stale",
        }
    }
}

/// The derived state of a file (or any group of units).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Tally {
    pub undecided: usize,
    pub accepted: usize,
    pub rejected: usize,
    pub failed: usize,
    pub stale: usize,
    /// Normalized matches, and how many of those are still undecided / accepted.
    pub normalized: usize,
    pub normalized_undecided: usize,
    pub normalized_accepted: usize,
}

impl Tally {
    pub(crate) fn add(&mut self, state: State, unit: &Unit) {
        match state {
            State::Undecided => self.undecided += 1,
            State::Accepted => self.accepted += 1,
            State::Rejected => self.rejected += 1,
            State::Failed => self.failed += 1,
            State::Stale => self.stale += 1,
        }
        if unit.normalized() {
            self.normalized += 1;
            match state {
                State::Undecided => self.normalized_undecided += 1,
                State::Accepted => self.normalized_accepted += 1,
                _ => {}
            }
        }
    }

    /// Units that take a decision (not failed, not stale).
    pub(crate) fn decidable(&self) -> usize {
        self.undecided + self.accepted + self.rejected
    }

    pub(crate) fn decided(&self) -> usize {
        self.accepted + self.rejected
    }

    pub(crate) fn total(&self) -> usize {
        self.decidable() + self.failed + self.stale
    }

    /// Tri-state glyph: `·` anything undecided, `✓` all accepted, `✗` all rejected, `±` mixed;
    /// `!` when nothing can be decided because everything failed, `⚠` when the file is stale.
    pub(crate) fn glyph(&self) -> &'static str {
        if self.stale > 0 {
            "⚠"
        } else if self.decidable() == 0 {
            if self.failed > 0 { "!" } else { " " }
        } else if self.undecided > 0 {
            "·"
        } else if self.rejected == 0 {
            "✓"
        } else if self.accepted == 0 {
            "✗"
        } else {
            "±"
        }
    }
}

/// One step of decision history: every unit the action changed, before and after.
pub(crate) type Step = Vec<((usize, usize), Decision, Decision)>;

/// An overlay over the main screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Overlay {
    None,
    Help,
    /// The apply summary (`A`); `Enter` writes.
    Summary,
    /// After applying: what was written and what was refused.
    Results,
    /// `q` with decisions and nothing applied: `y` quits.
    ConfirmQuit,
}

/// What a footer prompt is typing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PromptKind {
    /// `/`: a search over every file.
    Search,
    /// `n`: the note on unit `.1` of file `.0`.
    Note(usize, usize),
    /// `N`: the note on the whole batch.
    BatchNote,
    /// `|`: narrow the file list to paths containing the text (live while typing).
    Filter,
}

/// A one-line text prompt in the footer; `Enter` confirms, `Esc` cancels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Prompt {
    pub kind: PromptKind,
    pub text: String,
}

/// A search over the diff lines of every file.
#[derive(Debug, Clone, Default)]
pub(crate) struct Search {
    /// The last confirmed query.
    pub query: String,
    /// (file, row) of every line that contains the query.
    pub hits: Vec<(usize, usize)>,
}

impl Search {
    /// Smart case: case-insensitive unless the query has an uppercase letter.
    pub(crate) fn matches(query: &str, text: &str) -> Vec<std::ops::Range<usize>> {
        if query.is_empty() {
            return Vec::new();
        }
        if query.chars().any(char::is_uppercase) {
            return text
                .match_indices(query)
                .map(|(i, m)| i..i + m.len())
                .collect();
        }
        // Lowercasing can change byte lengths; only ASCII case-folds are mapped back exactly.
        if text.is_ascii() && query.is_ascii() {
            let t = text.to_ascii_lowercase();
            return t
                .match_indices(&query.to_ascii_lowercase())
                .map(|(i, m)| i..i + m.len())
                .collect();
        }
        let q: Vec<char> = query.chars().flat_map(char::to_lowercase).collect();
        let chars: Vec<(usize, char)> = text.char_indices().collect();
        let mut out = Vec::new();
        let mut i = 0;
        while i < chars.len() {
            let mut k = 0;
            let mut j = i;
            while j < chars.len() && k < q.len() {
                let lc: Vec<char> = chars[j].1.to_lowercase().collect();
                if q.get(k..k + lc.len()) != Some(&lc[..]) {
                    break;
                }
                k += lc.len();
                j += 1;
            }
            if k == q.len() {
                let end = chars.get(j).map(|c| c.0).unwrap_or(text.len());
                out.push(chars[i].0..end);
                i = j.max(i + 1);
            } else {
                i += 1;
            }
        }
        out
    }
}

/// Where the cursor is: a row of a file's display rows (a source anchor, not a screen row).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Cursor {
    pub file: usize,
    pub row: usize,
}

/// What happened when the accepted edits were written (or refused).
#[derive(Debug, Clone)]
pub struct Applied {
    /// Per file: what happened to it.
    pub files: Vec<FileResult>,
    pub written: bool,
    pub exit: ExitStatus,
    /// One line for the results screen.
    pub summary: String,
    /// The JSON result for a harness (the SPEC §4 response plus the decisions).
    pub json: super::result::ReviewResult,
}

/// What happened to one file at apply time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileResult {
    /// Written with this many accepted units.
    Written(usize),
    /// Nothing accepted (or nothing changes).
    Untouched,
    /// Changed on disk since the batch was resolved; left as it is.
    Stale,
    /// Could not be written (the batch was rolled back); the message says why.
    Error(String),
    /// Fine, but the batch was refused because of another file.
    NotWritten,
}

/// Options the reviewer starts with.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Options {
    /// Exact matches start accepted (`--accept-exact`).
    pub accept_exact: bool,
    /// Monochrome theme (NO_COLOR, `--color never`).
    pub monochrome: bool,
}

/// The whole reviewer state.
#[derive(Debug)]
pub struct Model {
    pub(crate) plan: Plan,
    pub(crate) files: Vec<FileInfo>,
    /// One decision per unit: `decisions[file][unit]`.
    pub(crate) decisions: Vec<Vec<Decision>>,
    /// Files found changed on disk at apply time.
    pub(crate) stale: Vec<bool>,
    pub(crate) undo: Vec<Step>,
    pub(crate) redo: Vec<Step>,
    pub(crate) cursor: Cursor,
    /// First visible row of the current file's diff (in the current layout's rows).
    pub(crate) scroll: usize,
    /// Terminal size (columns, rows), updated on resize.
    pub(crate) size: (u16, u16),
    pub(crate) split: bool,
    /// Long lines wrap (on by default: nothing a decision covers is off-screen); off, they are
    /// cut at the pane's edge, scroll sideways by `hscroll` columns, and mark hidden changes.
    pub(crate) wrap: bool,
    pub(crate) hscroll: usize,
    pub(crate) drawer: bool,
    /// First row of the why drawer shown (its content can be taller than the drawer).
    pub(crate) drawer_scroll: usize,
    pub(crate) overlay: Overlay,
    pub(crate) help_scroll: usize,
    pub(crate) search: Search,
    /// The footer prompt being typed into, if any.
    pub(crate) prompt: Option<Prompt>,
    /// The confirmed file-list filter (`|`); empty shows every file.
    pub(crate) filter: String,
    /// Per file: its rows are hidden in the diff pane (`z`).
    pub(crate) collapsed: Vec<bool>,
    /// The reviewer's note to the agent per unit (`notes[file][unit]`), carried in the JSON
    /// result's `decisions`.
    pub(crate) notes: Vec<Vec<Option<String>>>,
    /// The note on the whole batch (`N`).
    pub(crate) batch_note: Option<String>,
    /// One line of feedback in the footer, cleared by the next key.
    pub(crate) status: Option<String>,
    /// Display rows per file, built the first time the file is shown.
    pub(crate) rows: Vec<Option<FileRows>>,
    pub(crate) monochrome: bool,
    /// Syntax highlighting palette; `None`: off (the default, and always under monochrome).
    pub(crate) syntax: Option<super::highlight::Palette>,
    pub(crate) applied: Option<Applied>,
    /// Set when the reviewer should exit with this status.
    pub(crate) exit: Option<ExitStatus>,
    /// Title shown in the header (`review` or `demo`).
    pub(crate) title: String,
}

impl Model {
    /// A reviewer over `plan`: every unit undecided (exact ones accepted with `accept_exact`),
    /// the cursor on the first unit.
    pub(crate) fn new(plan: Plan, opts: Options) -> Model {
        let files: Vec<FileInfo> = plan.files.iter().map(file_info).collect();
        let decisions = files
            .iter()
            .map(|f| {
                f.units
                    .iter()
                    .map(|u| {
                        if opts.accept_exact && u.match_kind == Some(MatchKind::Exact) {
                            Decision::Accepted
                        } else {
                            Decision::Undecided
                        }
                    })
                    .collect()
            })
            .collect();
        let n = files.len();
        let notes = files.iter().map(|f| vec![None; f.units.len()]).collect();
        let mut m = Model {
            plan,
            files,
            decisions,
            stale: vec![false; n],
            undo: Vec::new(),
            redo: Vec::new(),
            cursor: Cursor::default(),
            scroll: 0,
            size: (120, 32),
            split: false,
            wrap: true,
            hscroll: 0,
            drawer: false,
            drawer_scroll: 0,
            overlay: Overlay::None,
            help_scroll: 0,
            search: Search::default(),
            prompt: None,
            filter: String::new(),
            collapsed: vec![false; n],
            notes,
            batch_note: None,
            status: None,
            rows: (0..n).map(|_| None).collect(),
            monochrome: opts.monochrome,
            syntax: None,
            applied: None,
            exit: None,
            title: "review".into(),
        };
        if n > 0 {
            m.ensure_rows(0);
            m.cursor.row = m.first_row_of(0, 0).unwrap_or(0);
        }
        m
    }

    /// The filter the file list shows now: the text being typed, else the confirmed one.
    pub(crate) fn list_filter(&self) -> &str {
        match &self.prompt {
            Some(p) if p.kind == PromptKind::Filter => &p.text,
            _ => &self.filter,
        }
    }

    /// The files the list shows, in order: those whose path contains the filter (smart case,
    /// like search); every file when the filter is empty.
    pub(crate) fn listed_files(&self) -> Vec<usize> {
        let q = self.list_filter();
        (0..self.files.len())
            .filter(|&f| q.is_empty() || !Search::matches(q, &self.files[f].display).is_empty())
            .collect()
    }

    /// The key table's context for what is on screen: an overlay's, else the main view's.
    pub(crate) fn key_context(&self) -> Context {
        match self.overlay {
            Overlay::None => Context::Main,
            Overlay::Help => Context::Help,
            Overlay::Summary => Context::Summary,
            Overlay::Results => Context::Results,
            Overlay::ConfirmQuit => Context::ConfirmQuit,
        }
    }

    /// Whether `file`'s rows are hidden in the diff pane.
    pub(crate) fn is_collapsed(&self, file: usize) -> bool {
        self.collapsed.get(file).copied().unwrap_or(false)
    }

    /// Builds the display rows of `file` if they are not built yet.
    pub(crate) fn ensure_rows(&mut self, file: usize) {
        if self.rows.get(file).is_some_and(Option::is_none) {
            let rows = super::rows::build(&self.plan.files[file], &self.files[file], self.syntax);
            self.rows[file] = Some(rows);
        }
    }

    /// Turns syntax highlighting on (with a palette) or off; never under monochrome. Rows built
    /// so far are rebuilt with it.
    pub(crate) fn set_syntax(&mut self, palette: Option<super::highlight::Palette>) {
        let palette = palette.filter(|_| !self.monochrome);
        if palette == self.syntax {
            return;
        }
        self.syntax = palette;
        let built: Vec<usize> = (0..self.rows.len())
            .filter(|&f| self.rows[f].is_some())
            .collect();
        for f in built {
            self.rows[f] = None;
            self.ensure_rows(f);
        }
    }

    /// The rows of `file`; empty until [`Model::ensure_rows`] ran for it.
    pub(crate) fn rows_of(&self, file: usize) -> &[super::rows::Row] {
        self.rows
            .get(file)
            .and_then(Option::as_ref)
            .map(|r| r.rows.as_slice())
            .unwrap_or(&[])
    }

    pub(crate) fn file_rows(&self, file: usize) -> Option<&FileRows> {
        self.rows.get(file).and_then(Option::as_ref)
    }

    /// The first display row of a unit.
    pub(crate) fn first_row_of(&self, file: usize, unit: usize) -> Option<usize> {
        self.file_rows(file)
            .and_then(|r| r.first_row.get(unit).copied().flatten())
    }

    pub(crate) fn state(&self, file: usize, unit: usize) -> State {
        let u = &self.files[file].units[unit];
        if u.failed {
            State::Failed
        } else if self.stale[file] {
            State::Stale
        } else {
            match self.decisions[file][unit] {
                Decision::Undecided => State::Undecided,
                Decision::Accepted => State::Accepted,
                Decision::Rejected => State::Rejected,
            }
        }
    }

    pub(crate) fn file_tally(&self, file: usize) -> Tally {
        let mut t = Tally::default();
        for (u, unit) in self.files[file].units.iter().enumerate() {
            t.add(self.state(file, u), unit);
        }
        t
    }

    pub(crate) fn tally(&self) -> Tally {
        let mut t = Tally::default();
        for f in 0..self.files.len() {
            for (u, unit) in self.files[f].units.iter().enumerate() {
                t.add(self.state(f, u), unit);
            }
        }
        t
    }

    /// The unit under the cursor.
    pub(crate) fn current_unit(&self) -> Option<usize> {
        self.rows_of(self.cursor.file)
            .get(self.cursor.row)
            .and_then(|r| r.unit)
    }

    /// Whether any decision or note was made (what the quit confirmation protects).
    pub(crate) fn has_decisions(&self) -> bool {
        !self.undo.is_empty()
            || self.batch_note.is_some()
            || self.notes.iter().flatten().any(Option::is_some)
            || self
                .decisions
                .iter()
                .flatten()
                .any(|d| *d != Decision::Undecided)
    }

    /// Sets (or with an empty or blank text, removes) the note on unit `unit` of `file`.
    pub(crate) fn set_note(&mut self, file: usize, unit: usize, text: &str) {
        if let Some(n) = self.notes.get_mut(file).and_then(|f| f.get_mut(unit)) {
            *n = clean_note(text);
        }
    }

    /// Sets (or with an empty or blank text, removes) the note on the whole batch.
    pub(crate) fn set_batch_note(&mut self, text: &str) {
        self.batch_note = clean_note(text);
    }

    /// The note on a unit, if any.
    pub(crate) fn note(&self, file: usize, unit: usize) -> Option<&str> {
        self.notes
            .get(file)
            .and_then(|f| f.get(unit))
            .and_then(|n| n.as_deref())
    }
}

/// A note as kept: trimmed, `None` when blank.
fn clean_note(text: &str) -> Option<String> {
    let t = text.trim();
    (!t.is_empty()).then(|| t.to_string())
}

/// Units of a file in display order, from the plan alone (no diff needed).
fn file_info(f: &FilePlan) -> FileInfo {
    let from = display_path(f.rel.as_ref(), &f.path);
    let display = match (&f.move_to, f.op) {
        (Some(to), Op::Move) => format!("{from} → {}", display_path(f.move_rel.as_ref(), to)),
        _ => from,
    };
    let doc = f.original.as_ref().map(|o| &o.doc);
    let line_of = |off: usize| doc.map(|d| d.line_of(off) + 1);
    let file_failed = f.failure.is_some();
    let mut failed = Vec::new();
    let mut placed: Vec<(usize, Unit)> = Vec::new();
    match f.op {
        Op::Create | Op::Overwrite if f.edits.is_empty() => placed.push((
            0,
            Unit {
                kind: UnitKind::Content,
                match_kind: None,
                normalizations: Vec::new(),
                failed: file_failed,
                line: Some(1),
            },
        )),
        Op::Delete => placed.push((
            0,
            Unit {
                kind: UnitKind::Delete,
                match_kind: None,
                normalizations: Vec::new(),
                failed: file_failed,
                line: Some(1),
            },
        )),
        Op::Move => failed.push(Unit {
            kind: UnitKind::Move,
            match_kind: None,
            normalizations: Vec::new(),
            failed: file_failed,
            line: None,
        }),
        _ => {}
    }
    for e in &f.edits {
        match &e.outcome {
            Outcome::Resolved(r) if !file_failed => {
                let start = r.spans.first().map(|s| s.start).unwrap_or(0);
                placed.push((
                    start,
                    Unit {
                        kind: UnitKind::Edit(e.index),
                        match_kind: Some(r.kind),
                        normalizations: r.normalizations.clone(),
                        failed: false,
                        line: line_of(start),
                    },
                ));
            }
            _ => failed.push(Unit {
                kind: UnitKind::Edit(e.index),
                match_kind: None,
                normalizations: Vec::new(),
                failed: true,
                line: failure_line(e.outcome_failure(), doc),
            }),
        }
    }
    placed.sort_by_key(|(start, u)| (*start, u.edit()));
    failed.extend(placed.into_iter().map(|(_, u)| u));
    FileInfo {
        display,
        units: failed,
    }
}

fn failure_line(
    f: Option<&EditError>,
    doc: Option<&crate::engine::document::Document>,
) -> Option<usize> {
    let (f, doc) = (f?, doc?);
    let at = f
        .candidates()
        .first()
        .map(|c| c.span.start)
        .or(f.matches().first().map(|m| m.start))?;
    Some(doc.line_of(at) + 1)
}

/// The failure of an edit, if it has one.
trait OutcomeFailure {
    fn outcome_failure(&self) -> Option<&EditError>;
}

impl OutcomeFailure for crate::engine::plan::EditPlan {
    fn outcome_failure(&self) -> Option<&EditError> {
        match &self.outcome {
            Outcome::Failed(f) => Some(f),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tally_glyphs() {
        let u = Unit {
            kind: UnitKind::Content,
            match_kind: None,
            normalizations: vec![],
            failed: false,
            line: None,
        };
        let mut t = Tally::default();
        t.add(State::Accepted, &u);
        assert_eq!(t.glyph(), "✓");
        t.add(State::Rejected, &u);
        assert_eq!(t.glyph(), "±");
        t.add(State::Undecided, &u);
        assert_eq!(t.glyph(), "·");
        let mut f = Tally::default();
        f.add(State::Failed, &u);
        assert_eq!(f.glyph(), "!");
    }

    #[test]
    fn smart_case_search() {
        assert_eq!(Search::matches("foo", "a Foo foo"), vec![2..5, 6..9]);
        assert_eq!(Search::matches("Foo", "a Foo foo"), vec![2..5]);
        assert_eq!(Search::matches("é", "É é"), vec![0..2, 3..5]);
    }
}
