//! The reviewer's only state transition: `update(&mut Model, Action)`, pure and synchronous.
//!
//! No input ever acts on a view awaiting background work: decisions live in memory and every key
//! is handled completely before the next one is read. Writing is the one effect, returned to
//! the event loop as [`Effect::Apply`]; its outcome comes back through [`applied`].

use super::keys::{self, Action};
use super::model::{Applied, Decision, Model, Overlay, Prompt, PromptKind, State, Step};
use super::view;
use crate::error::ExitStatus;
use ratatui::crossterm::event::KeyEvent;

/// Work the event loop must do on the reviewer's behalf.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Write the accepted edits, then call [`applied`] with the outcome.
    Apply,
}

/// The action a key asks for in the model's current context (a prompt takes text).
pub fn on_key(m: &Model, ev: &KeyEvent) -> Option<Action> {
    if m.prompt.is_some() && m.overlay == Overlay::None {
        return keys::prompt(ev);
    }
    keys::dispatch(m.key_context(), ev)
}

/// Applies one action.
pub fn update(m: &mut Model, a: Action) -> Option<Effect> {
    if !matches!(a, Action::Resize(..) | Action::Wheel(_)) {
        m.status = None;
    }
    if let Action::Resize(w, h) = a {
        m.size = (w, h);
        reveal(m, false);
        return None;
    }
    if a == Action::Abort {
        m.exit = Some(
            m.applied
                .as_ref()
                .map_or(ExitStatus::ReviewQuit, |ap| ap.exit),
        );
        return None;
    }
    if m.prompt.is_some() && m.overlay == Overlay::None {
        prompt(m, a);
        return None;
    }
    match m.overlay {
        Overlay::Help => {
            match a {
                Action::Down => m.help_scroll = (m.help_scroll + 1).min(view::help_max_scroll(m)),
                Action::Up => m.help_scroll = m.help_scroll.saturating_sub(1),
                Action::PageDown => {
                    m.help_scroll = (m.help_scroll + 10).min(view::help_max_scroll(m))
                }
                Action::PageUp => m.help_scroll = m.help_scroll.saturating_sub(10),
                Action::Back => m.overlay = Overlay::None,
                _ => {}
            }
            return None;
        }
        Overlay::Summary => {
            return match a {
                Action::Confirm => Some(Effect::Apply),
                Action::Back => {
                    m.overlay = Overlay::None;
                    None
                }
                _ => None,
            };
        }
        Overlay::Results => {
            match a {
                Action::Quit => {
                    m.exit = Some(m.applied.as_ref().map_or(ExitStatus::Success, |ap| ap.exit))
                }
                Action::Back if !m.applied.as_ref().is_some_and(|ap| ap.written) => {
                    m.overlay = Overlay::None
                }
                _ => {}
            }
            return None;
        }
        Overlay::ConfirmQuit => {
            match a {
                Action::ConfirmQuit => m.exit = Some(quit_status(m)),
                Action::Back => m.overlay = Overlay::None,
                _ => {}
            }
            return None;
        }
        Overlay::None => {}
    }
    main(m, a)
}

/// The status of quitting without a successful apply: 4, or 1 when an apply was refused.
fn quit_status(m: &Model) -> ExitStatus {
    m.applied
        .as_ref()
        .map_or(ExitStatus::ReviewQuit, |ap| ap.exit)
}

fn main(m: &mut Model, a: Action) -> Option<Effect> {
    let before = (m.cursor.file, m.current_unit());
    let effect = main_action(m, a);
    // The drawer starts at its top for each edit.
    if (m.cursor.file, m.current_unit()) != before {
        m.drawer_scroll = 0;
    }
    effect
}

fn main_action(m: &mut Model, a: Action) -> Option<Effect> {
    let page = view::diff_height(m).max(1);
    // A collapsed file's rows are hidden: nothing moves over them or decides one of them
    // (whole-file `Y`/`D`, file moves, jumps and search still work).
    if m.is_collapsed(m.cursor.file)
        && matches!(
            a,
            Action::Down
                | Action::Up
                | Action::PageDown
                | Action::PageUp
                | Action::HalfDown
                | Action::HalfUp
                | Action::Top
                | Action::Bottom
                | Action::Accept
                | Action::Reject
                | Action::Toggle
                | Action::Clear
                | Action::Why
                | Action::Note
                | Action::Left
                | Action::Right
                | Action::Wheel(_)
        )
    {
        m.status = Some("this file is collapsed — z expands it".into());
        return None;
    }
    match a {
        Action::Collapse => {
            let f = m.cursor.file;
            if let Some(c) = m.collapsed.get_mut(f) {
                *c = !*c;
                if *c {
                    m.drawer = false;
                    m.scroll = 0;
                } else {
                    reveal(m, true);
                }
            }
        }
        Action::Down => step_rows(m, 1),
        Action::Up => step_rows(m, -1),
        Action::PageDown => step_rows(m, page as isize),
        Action::PageUp => step_rows(m, -(page as isize)),
        Action::HalfDown => step_rows(m, (page / 2).max(1) as isize),
        Action::HalfUp => step_rows(m, -((page / 2).max(1) as isize)),
        Action::Top => {
            m.cursor.row = 0;
            reveal(m, false);
        }
        Action::Bottom => {
            m.cursor.row = m.rows_of(m.cursor.file).len().saturating_sub(1);
            reveal(m, false);
        }
        Action::NextEdit => jump(m, true, false, |_, _, _| true, "no edit after this one"),
        Action::PrevEdit => jump(m, false, false, |_, _, _| true, "no edit before this one"),
        Action::NextFile | Action::PrevFile => {
            // Through the files the list shows (all of them unless filtered with `|`).
            let f = m.cursor.file;
            let listed = m.listed_files();
            let to = if a == Action::NextFile {
                listed.iter().copied().find(|&g| g > f)
            } else {
                listed.iter().copied().rev().find(|&g| g < f)
            };
            if let Some(to) = to {
                go_file(m, to);
            } else {
                m.status = Some(
                    if a == Action::NextFile {
                        "last file"
                    } else {
                        "first file"
                    }
                    .into(),
                );
            }
        }
        Action::NextUndecided => jump(
            m,
            true,
            true,
            undecided,
            "no undecided edit left — A applies",
        ),
        Action::PrevUndecided => jump(
            m,
            false,
            true,
            undecided,
            "no undecided edit left — A applies",
        ),
        Action::NextFlagged => jump(
            m,
            true,
            true,
            flagged,
            "no flagged edit: every match is exact",
        ),
        Action::PrevFlagged => jump(
            m,
            false,
            true,
            flagged,
            "no flagged edit: every match is exact",
        ),
        Action::Accept | Action::Reject => {
            let d = if a == Action::Accept {
                Decision::Accepted
            } else {
                Decision::Rejected
            };
            if let Some(u) = current_decidable(m) {
                decide(m, vec![(m.cursor.file, u)], |_| d);
                advance(m);
            }
        }
        Action::Toggle => {
            if let Some(u) = current_decidable(m) {
                decide(m, vec![(m.cursor.file, u)], |old| match old {
                    Decision::Accepted => Decision::Rejected,
                    _ => Decision::Accepted,
                });
            }
        }
        Action::Clear => {
            if let Some(u) = current_decidable(m) {
                decide(m, vec![(m.cursor.file, u)], |_| Decision::Undecided);
            }
        }
        Action::AcceptFile | Action::RejectFile => {
            let d = if a == Action::AcceptFile {
                Decision::Accepted
            } else {
                Decision::Rejected
            };
            let f = m.cursor.file;
            let targets: Vec<(usize, usize)> = (0..m.files[f].units.len())
                .filter(|&u| {
                    matches!(
                        m.state(f, u),
                        State::Undecided | State::Accepted | State::Rejected
                    )
                })
                .map(|u| (f, u))
                .collect();
            if targets.is_empty() {
                m.status = Some("nothing in this file can be decided".into());
            } else {
                let skipped = m.files[f].units.len() - targets.len();
                decide(m, targets, |_| d);
                if skipped > 0 {
                    m.status = Some(format!(
                        "{skipped} failed edit(s) skipped: they cannot be accepted"
                    ));
                }
                advance(m);
            }
        }
        Action::Undo => history(m, true),
        Action::Redo => history(m, false),
        Action::Why => m.drawer = !m.drawer,
        Action::Split => {
            m.split = !m.split;
            reveal(m, true);
        }
        Action::DrawerDown | Action::DrawerUp => {
            if !m.drawer {
                m.status = Some("the why drawer is closed — i opens it".into());
            } else if a == Action::DrawerDown {
                m.drawer_scroll = (m.drawer_scroll + 1).min(view::drawer_max_scroll(m));
            } else {
                m.drawer_scroll = m.drawer_scroll.saturating_sub(1);
            }
        }
        Action::Wrap => {
            m.wrap = !m.wrap;
            m.hscroll = 0;
            m.status = Some(
                if m.wrap {
                    "long lines wrap"
                } else {
                    "long lines are cut: h/l scroll sideways, » « mark hidden changes"
                }
                .into(),
            );
            reveal(m, false);
        }
        Action::Left | Action::Right => {
            if m.wrap {
                m.status = Some("long lines wrap, nothing is off-screen (w cuts them)".into());
            } else if a == Action::Left {
                m.hscroll = m.hscroll.saturating_sub(HSCROLL_STEP);
            } else {
                m.hscroll += HSCROLL_STEP;
            }
        }
        Action::Search => {
            m.prompt = Some(Prompt {
                kind: PromptKind::Search,
                text: String::new(),
            })
        }
        Action::Filter => {
            m.prompt = Some(Prompt {
                kind: PromptKind::Filter,
                text: m.filter.clone(),
            })
        }
        Action::Note => match m.current_unit() {
            Some(u) => {
                let f = m.cursor.file;
                m.prompt = Some(Prompt {
                    kind: PromptKind::Note(f, u),
                    text: m.note(f, u).unwrap_or_default().to_string(),
                });
            }
            None => m.status = Some("no edit on this line — ] goes to the next edit".into()),
        },
        Action::BatchNote => {
            m.prompt = Some(Prompt {
                kind: PromptKind::BatchNote,
                text: m.batch_note.clone().unwrap_or_default(),
            })
        }
        Action::SearchNext | Action::SearchPrev => search_step(m, a == Action::SearchNext, false),
        Action::Summary => m.overlay = Overlay::Summary,
        Action::Help => {
            m.overlay = Overlay::Help;
            m.help_scroll = 0;
        }
        Action::Back => {
            if m.drawer {
                m.drawer = false;
            } else if !m.filter.is_empty() {
                m.filter.clear();
            } else if !m.search.query.is_empty() {
                m.search.query.clear();
                m.search.hits.clear();
            }
        }
        Action::Quit => {
            if m.has_decisions() {
                m.overlay = Overlay::ConfirmQuit;
            } else {
                m.exit = Some(quit_status(m));
            }
        }
        Action::Wheel(n) => wheel(m, n),
        Action::Click(x, y) => match view::hit(m, x, y) {
            Some(view::Hit::File(f)) if f != m.cursor.file => go_file(m, f),
            Some(view::Hit::Row(d)) => {
                set_display(m, d);
                reveal(m, false);
            }
            Some(view::Hit::File(_)) | None => {}
        },
        Action::NextUndecidedFile | Action::PrevUndecidedFile => {
            let n = m.files.len();
            let fwd = a == Action::NextUndecidedFile;
            let here = m.cursor.file;
            let found = (1..=n)
                .map(|k| {
                    if fwd {
                        (here + k) % n
                    } else {
                        (here + n - k % n) % n
                    }
                })
                .find(|&f| f != here && m.file_tally(f).undecided > 0);
            match found {
                Some(f) => {
                    go_file(m, f);
                    // On its first undecided edit.
                    if let Some(u) =
                        (0..m.files[f].units.len()).find(|&u| m.state(f, u) == State::Undecided)
                    {
                        go_unit(m, f, u);
                    }
                }
                None => {
                    m.status = Some(if m.file_tally(here).undecided > 0 {
                        "no other file has undecided edits".into()
                    } else {
                        "no file has undecided edits — A applies".into()
                    })
                }
            }
        }
        Action::Confirm
        | Action::ConfirmQuit
        | Action::Abort
        | Action::Resize(..)
        | Action::Input(_)
        | Action::Erase => {}
    }
    None
}

/// Records the outcome of [`Effect::Apply`] and shows the results screen.
pub fn applied(m: &mut Model, result: Applied, stale: &[usize]) {
    for &f in stale {
        if let Some(s) = m.stale.get_mut(f) {
            *s = true;
        }
    }
    m.applied = Some(result);
    m.overlay = Overlay::Results;
}

fn undecided(m: &Model, f: usize, u: usize) -> bool {
    m.state(f, u) == State::Undecided
}

fn flagged(m: &Model, f: usize, u: usize) -> bool {
    let unit = &m.files[f].units[u];
    unit.normalized() || matches!(m.state(f, u), State::Failed | State::Stale)
}

/// The unit under the cursor if it takes a decision; otherwise says why not.
fn current_decidable(m: &mut Model) -> Option<usize> {
    let Some(u) = m.current_unit() else {
        m.status = Some("no edit on this line — ] goes to the next edit".into());
        return None;
    };
    match m.state(m.cursor.file, u) {
        State::Failed => {
            m.status = Some("this edit failed and cannot be accepted — i shows why".into());
            None
        }
        State::Stale => {
            m.status = Some("this file changed on disk; its edits can no longer be written".into());
            None
        }
        _ => Some(u),
    }
}

/// Sets decisions, as one undo step.
fn decide(m: &mut Model, targets: Vec<(usize, usize)>, to: impl Fn(Decision) -> Decision) {
    let mut step: Step = Vec::new();
    for (f, u) in targets {
        let before = m.decisions[f][u];
        let after = to(before);
        if before != after {
            m.decisions[f][u] = after;
            step.push(((f, u), before, after));
        }
    }
    if !step.is_empty() {
        m.undo.push(step);
        m.redo.clear();
    }
}

fn history(m: &mut Model, undo: bool) {
    let popped = if undo { m.undo.pop() } else { m.redo.pop() };
    let Some(step) = popped else {
        m.status = Some(
            if undo {
                "nothing to undo"
            } else {
                "nothing to redo"
            }
            .into(),
        );
        return;
    };
    for &((f, u), before, after) in &step {
        m.decisions[f][u] = if undo { before } else { after };
    }
    let n = step.len();
    if let Some(&((f, u), _, _)) = step.first() {
        go_unit(m, f, u);
    }
    m.status = Some(format!(
        "{} {n} decision{}",
        if undo { "undid" } else { "redid" },
        if n == 1 { "" } else { "s" }
    ));
    if undo {
        m.redo.push(step)
    } else {
        m.undo.push(step)
    }
}

/// After a decision: the next undecided edit, batch-wide, wrapping.
fn advance(m: &mut Model) {
    if m.tally().undecided == 0 {
        m.status = Some("every edit is decided — A shows the apply summary".into());
        return;
    }
    jump(m, true, true, undecided, "");
}

/// Every (file, unit) in display order.
fn order(m: &Model) -> Vec<(usize, usize)> {
    m.files
        .iter()
        .enumerate()
        .flat_map(|(f, info)| (0..info.units.len()).map(move |u| (f, u)))
        .collect()
}

/// Moves to the next (or previous) unit satisfying `pred`, from the cursor.
fn jump(
    m: &mut Model,
    forward: bool,
    wrap: bool,
    pred: fn(&Model, usize, usize) -> bool,
    none: &str,
) {
    let all = order(m);
    if all.is_empty() {
        return;
    }
    let f = m.cursor.file;
    // Where the cursor sits in the order: on a unit, or between two.
    let fr = m.file_rows(f);
    let on = m.current_unit();
    let row = m.cursor.row;
    let before_or_at = |u: usize| fr.and_then(|r| r.first_row[u]).is_some_and(|s| s <= row);
    let base = all.iter().position(|&(g, _)| g == f).unwrap_or(0);
    let n_units = m.files[f].units.len();
    let (start, dir): (isize, isize) = match (on, forward) {
        (Some(u), true) => ((base + u) as isize + 1, 1),
        (Some(u), false) => ((base + u) as isize - 1, -1),
        (None, true) => (
            (base + (0..n_units).filter(|&u| before_or_at(u)).count()) as isize,
            1,
        ),
        (None, false) => (
            (base + (0..n_units).filter(|&u| before_or_at(u)).count()) as isize - 1,
            -1,
        ),
    };
    let len = all.len() as isize;
    let mut i = start;
    for _ in 0..all.len() {
        if i < 0 || i >= len {
            if !wrap {
                break;
            }
            i = i.rem_euclid(len);
        }
        let (g, u) = all[i as usize];
        // A collapsed file's edits are skipped: its rows are hidden.
        if !m.is_collapsed(g) && pred(m, g, u) && Some((g, u)) != on.map(|u| (f, u)) {
            go_unit(m, g, u);
            return;
        }
        i += dir;
    }
    if !none.is_empty() {
        m.status = Some(none.into());
    }
}

fn go_unit(m: &mut Model, f: usize, u: usize) {
    m.ensure_rows(f);
    if f != m.cursor.file {
        m.scroll = 0;
    }
    m.cursor.file = f;
    m.cursor.row = m.first_row_of(f, u).unwrap_or(0);
    reveal(m, true);
}

fn go_file(m: &mut Model, f: usize) {
    m.ensure_rows(f);
    m.cursor.file = f;
    m.scroll = 0;
    m.cursor.row = if m.files[f].units.is_empty() {
        0
    } else {
        m.first_row_of(f, 0).unwrap_or(0)
    };
    reveal(m, true);
}

/// The rows as laid out now (split rows in split view).
fn display_len(m: &Model) -> usize {
    match m.file_rows(m.cursor.file) {
        Some(r) if m.split => r.split.len(),
        Some(r) => r.rows.len(),
        None => 0,
    }
}

/// The display index of the cursor row.
pub fn display_index(m: &Model) -> usize {
    match m.file_rows(m.cursor.file) {
        Some(r) if m.split => r.split_of.get(m.cursor.row).copied().unwrap_or(0),
        _ => m.cursor.row,
    }
}

/// Puts the cursor on display row `d`.
fn set_display(m: &mut Model, d: usize) {
    let row = match m.file_rows(m.cursor.file) {
        Some(r) if m.split => r.split.get(d).and_then(|s| s.left.or(s.right)),
        Some(_) => Some(d),
        None => None,
    };
    if let Some(row) = row {
        m.cursor.row = row;
    }
}

fn step_rows(m: &mut Model, by: isize) {
    let len = display_len(m);
    if len == 0 {
        return;
    }
    let d = (display_index(m) as isize + by).clamp(0, len as isize - 1) as usize;
    set_display(m, d);
    if by.unsigned_abs() > 1 {
        // Pages move the view with the cursor.
        let h = view::diff_height(m).max(1);
        let max = len.saturating_sub(h);
        m.scroll = (m.scroll as isize + by).clamp(0, max as isize) as usize;
    }
    reveal(m, false);
}

fn wheel(m: &mut Model, by: i32) {
    let len = display_len(m);
    let h = view::diff_height(m).max(1);
    let max = len.saturating_sub(h);
    m.scroll = (m.scroll as isize + by as isize).clamp(0, max as isize) as usize;
    let d = display_index(m).clamp(
        m.scroll,
        (m.scroll + h).saturating_sub(1).min(len.saturating_sub(1)),
    );
    set_display(m, d);
}

/// Columns one `h`/`l` scrolls sideways.
const HSCROLL_STEP: usize = 10;

/// The first row from which rows `..=d` fill at most `room` screen lines (at least `d` itself).
fn back_from(m: &Model, d: usize, room: usize) -> usize {
    let mut used = view::row_height(m, d);
    let mut s = d;
    while s > 0 {
        let hh = view::row_height(m, s - 1);
        if used + hh > room {
            break;
        }
        used += hh;
        s -= 1;
    }
    s
}

/// Scrolls so the cursor row is visible (all of it, when lines wrap); `jumped`: a far move puts
/// it a quarter down the pane, so the lines above the edit show too.
pub fn reveal(m: &mut Model, jumped: bool) {
    let h = view::diff_height(m).max(1);
    let d = display_index(m);
    let len = display_len(m);
    if !m.wrap {
        if d < m.scroll || d >= m.scroll + h {
            m.scroll = if jumped {
                d.saturating_sub(h / 4)
            } else if d < m.scroll {
                d
            } else {
                d + 1 - h
            };
        }
        m.scroll = m.scroll.min(len.saturating_sub(h));
        if d < m.scroll {
            m.scroll = d;
        }
        return;
    }
    // Wrapped rows take several lines: measure the visible ones only.
    let fits = |m: &Model| {
        m.scroll <= d
            && d - m.scroll < h
            && (m.scroll..=d)
                .map(|k| view::row_height(m, k))
                .sum::<usize>()
                <= h
    };
    if !fits(m) {
        m.scroll = if jumped {
            back_from(m, d, h / 4 + view::row_height(m, d))
        } else if d < m.scroll {
            d
        } else {
            back_from(m, d, h)
        };
    }
    // Keep the last page full: never scroll past where the rows to the end fill the pane.
    if len > 0 && m.scroll > 0 {
        let last_top = back_from(m, len - 1, h);
        if m.scroll > last_top {
            m.scroll = last_top.min(d);
        }
    }
}

fn prompt(m: &mut Model, a: Action) {
    let Some(p) = m.prompt.as_mut() else {
        return;
    };
    match a {
        Action::Input(c) => p.text.push(c),
        Action::Erase => {
            p.text.pop();
        }
        Action::Back => {
            // Esc on the filter prompt clears the filter too.
            if p.kind == PromptKind::Filter {
                m.filter.clear();
            }
            m.prompt = None;
        }
        Action::Confirm => {
            let Some(p) = m.prompt.take() else { return };
            match p.kind {
                PromptKind::Search => {
                    m.search.query = p.text;
                    collect_hits(m);
                    search_step(m, true, true);
                }
                PromptKind::Note(f, u) => {
                    m.set_note(f, u, &p.text);
                    let label = m.files[f].units[u].label();
                    m.status = Some(if m.note(f, u).is_some() {
                        format!("note saved on edit {label}")
                    } else {
                        format!("note removed from edit {label}")
                    });
                }
                PromptKind::Filter => {
                    m.filter = p.text;
                    let listed = m.listed_files();
                    if listed.is_empty() {
                        m.status = Some(format!("no file path contains \"{}\"", m.filter));
                    } else if !listed.contains(&m.cursor.file) {
                        go_file(m, listed[0]);
                    }
                }
                PromptKind::BatchNote => {
                    m.set_batch_note(&p.text);
                    m.status = Some(if m.batch_note.is_some() {
                        "note saved on the batch".into()
                    } else {
                        "batch note removed".into()
                    });
                }
            }
        }
        _ => {}
    }
}

fn collect_hits(m: &mut Model) {
    m.search.hits.clear();
    if m.search.query.is_empty() {
        return;
    }
    for f in 0..m.files.len() {
        m.ensure_rows(f);
        let hits: Vec<usize> = m
            .rows_of(f)
            .iter()
            .enumerate()
            .filter(|(_, r)| !super::model::Search::matches(&m.search.query, r.text()).is_empty())
            .map(|(i, _)| i)
            .collect();
        m.search.hits.extend(hits.into_iter().map(|r| (f, r)));
    }
}

/// Next/previous search hit from the cursor (`inclusive`: the cursor's own line counts).
fn search_step(m: &mut Model, forward: bool, inclusive: bool) {
    if m.search.query.is_empty() {
        m.status = Some("no search — / searches".into());
        return;
    }
    let hits = &m.search.hits;
    if hits.is_empty() {
        m.status = Some(format!("no match for “{}”", m.search.query));
        return;
    }
    let here = (m.cursor.file, m.cursor.row);
    let pick = if forward {
        hits.iter()
            .position(|&h| if inclusive { h >= here } else { h > here })
            .unwrap_or(0)
    } else {
        hits.iter()
            .rposition(|&h| h < here)
            .unwrap_or(hits.len() - 1)
    };
    let (f, r) = hits[pick];
    let n = hits.len();
    // A match in a collapsed file opens it, so the match is on screen.
    if let Some(c) = m.collapsed.get_mut(f) {
        *c = false;
    }
    if f != m.cursor.file {
        m.scroll = 0;
    }
    m.cursor = super::model::Cursor { file: f, row: r };
    reveal(m, true);
    m.status = Some(format!("match {}/{n} for “{}”", pick + 1, m.search.query));
}
