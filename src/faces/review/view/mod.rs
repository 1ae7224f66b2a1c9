//! Drawing the reviewer: read-only over the model, and only the rows that are visible.

mod diff;
mod overlay;
pub(crate) mod text;
pub(crate) mod theme;
mod why;

use super::keys::{self, Context};
use super::model::Model;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};
use theme::Theme;

/// Smallest usable terminal.
pub(crate) const MIN_SIZE: (u16, u16) = (60, 12);

/// Where things go on a screen of a given size.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Areas {
    pub header: Rect,
    pub files: Option<Rect>,
    pub diff: Rect,
    pub drawer: Option<Rect>,
    pub footer: Rect,
}

impl Areas {
    pub(crate) fn of(m: &Model, area: Rect) -> Areas {
        let [header, body, footer] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Min(1),
            Constraint::Length(1),
        ])
        .areas(area);
        let (files, right) = if body.width >= 90 && m.files.len() > 1 || body.width >= 110 {
            let w = (body.width * 28 / 100).clamp(26, 48);
            let [l, r] =
                Layout::horizontal([Constraint::Length(w), Constraint::Min(1)]).areas(body);
            (Some(l), r)
        } else {
            (None, body)
        };
        let (diff, drawer) = if m.drawer {
            // As tall as its content (every differing line shows), between 6 rows and 60% of
            // the pane, leaving the diff at least 5.
            let want = why::content_height(m, right.width.saturating_sub(2) as usize) as u16 + 2;
            let h = want
                .clamp(6, (right.height * 60 / 100).max(6))
                .min(right.height.saturating_sub(5));
            let [d, w] = Layout::vertical([Constraint::Min(1), Constraint::Length(h)]).areas(right);
            (d, Some(w))
        } else {
            (right, None)
        };
        Areas {
            header,
            files,
            diff,
            drawer,
            footer,
        }
    }
}

/// Columns inside the diff pane at the model's terminal size.
pub(crate) fn diff_inner_width(m: &Model) -> usize {
    let a = Areas::of(m, Rect::new(0, 0, m.size.0, m.size.1));
    a.diff.width.saturating_sub(2) as usize
}

pub(crate) use diff::row_height;

/// How far the why drawer can scroll at the model's size.
pub(crate) fn drawer_max_scroll(m: &Model) -> usize {
    let a = Areas::of(m, Rect::new(0, 0, m.size.0, m.size.1));
    match a.drawer {
        Some(d) => why::content_height(m, d.width.saturating_sub(2) as usize)
            .saturating_sub(d.height.saturating_sub(2) as usize),
        None => 0,
    }
}

/// Rows of diff the pane shows at the model's terminal size (what paging and scrolling use).
pub(crate) fn diff_height(m: &Model) -> usize {
    let a = Areas::of(m, Rect::new(0, 0, m.size.0, m.size.1));
    a.diff.height.saturating_sub(2) as usize
}

pub(crate) use overlay::help_max_scroll;

/// Draws the whole screen.
pub fn draw(m: &Model, f: &mut Frame) {
    let area = f.area();
    let t = Theme::of(m);
    if area.width < MIN_SIZE.0 || area.height < MIN_SIZE.1 {
        too_small(f, area, t);
        return;
    }
    let a = Areas::of(m, area);
    header(m, f, a.header, t);
    if let Some(files) = a.files {
        file_list(m, f, files, t);
    }
    diff::draw(m, f, a.diff, t);
    if let Some(d) = a.drawer {
        why::draw(m, f, d, t);
    }
    footer(m, f, a.footer, t);
    overlay::draw(m, f, area, t);
}

fn too_small(f: &mut Frame, area: Rect, t: Theme) {
    let msg = vec![
        Line::from(Span::styled("terminal too small", t.bold())),
        Line::from(format!(
            "{}×{} — redline needs at least {}×{}",
            area.width, area.height, MIN_SIZE.0, MIN_SIZE.1
        )),
        Line::from("enlarge the window, or q to quit"),
    ];
    let h = (msg.len() as u16).min(area.height);
    let y = area.y + area.height.saturating_sub(h) / 2;
    let r = Rect::new(area.x, y, area.width, h);
    f.render_widget(
        Paragraph::new(msg).alignment(ratatui::layout::HorizontalAlignment::Center),
        r,
    );
}

fn header(m: &Model, f: &mut Frame, area: Rect, t: Theme) {
    let mut left = header_line(m, t, false);
    if left.width() > area.width as usize {
        left = header_line(m, t, true);
    }
    let right = format!(" {} ", if m.split { "split" } else { "unified" });
    let left_w = left.width();
    f.buffer_mut().set_style(area, t.bar());
    f.render_widget(Paragraph::new(left).style(t.bar()), area);
    let rw = text::width(&right);
    if left_w + rw < area.width as usize {
        let r = Rect::new(area.right() - rw as u16, area.y, rw as u16, 1);
        f.render_widget(Paragraph::new(right).style(t.bar().patch(t.dim())), r);
    }
}

/// The header's counts; `compact` drops the file and edit totals, the bar and long words.
fn header_line(m: &Model, t: Theme, compact: bool) -> Line<'static> {
    use super::model::State;
    let tally = m.tally();
    let edits = tally.total();
    let decidable = tally.decidable();
    let bar_w = 10usize;
    let filled = (tally.decided() * bar_w)
        .checked_div(decidable)
        .unwrap_or(bar_w);
    let sep = || Span::styled(" │ ", t.dim().patch(t.bar()));
    let mut spans = vec![
        Span::styled(format!(" redline {}", m.title), t.bold()),
        sep(),
    ];
    if !compact {
        // Failed and stale edits take no decision: say so where the total is, so that the
        // "decided" count below (out of the decidable ones) explains itself.
        let mut undecidable = Vec::new();
        if tally.failed > 0 {
            undecidable.push(format!("{} failed", tally.failed));
        }
        if tally.stale > 0 {
            undecidable.push(format!("{} stale", tally.stale));
        }
        let why = if undecidable.is_empty() {
            String::new()
        } else {
            format!(" ({})", undecidable.join(", "))
        };
        spans.push(Span::raw(format!(
            "{} file{} · {} edit{}{why}",
            m.files.len(),
            plural(m.files.len()),
            edits,
            plural(edits)
        )));
        spans.push(sep());
    }
    spans.push(Span::raw(format!(
        "{}/{} decided",
        tally.decided(),
        decidable
    )));
    if !compact {
        spans.push(Span::raw(" "));
        spans.push(Span::styled("█".repeat(filled), t.state(State::Accepted)));
        spans.push(Span::styled("░".repeat(bar_w - filled), t.dim()));
    }
    spans.extend([
        sep(),
        Span::styled(format!("✓{}", tally.accepted), t.state(State::Accepted)),
        Span::raw(" "),
        Span::styled(format!("✗{}", tally.rejected), t.state(State::Rejected)),
        Span::raw(format!(" ·{}", tally.undecided)),
    ]);
    if tally.normalized > 0 {
        spans.push(sep());
        let word = if compact { "" } else { " normalized" };
        spans.push(Span::styled(
            format!("≈{}{word}", tally.normalized),
            t.flag(),
        ));
        if tally.normalized_undecided > 0 && !compact {
            spans.push(Span::raw(format!(
                " ({} undecided)",
                tally.normalized_undecided
            )));
        }
    }
    // The full header says failed and stale with the total.
    if tally.failed > 0 && compact {
        spans.push(sep());
        spans.push(Span::styled(
            format!("!{} failed", tally.failed),
            t.state(State::Failed),
        ));
    }
    if tally.stale > 0 && compact {
        spans.push(sep());
        spans.push(Span::styled(
            format!("⚠{} stale", tally.stale),
            t.state(State::Stale),
        ));
    }
    Line::from(spans)
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// The first entry of `listed` (the files the filter lets through) the list shows in `h` rows:
/// the selected file stays mid-list.
fn list_start(m: &Model, listed: &[usize], h: usize) -> usize {
    let at = listed.iter().position(|&f| f == m.cursor.file).unwrap_or(0);
    at.saturating_sub(h / 2).min(listed.len().saturating_sub(h))
}

/// What a click at screen cell (`x`, `y`) points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Hit {
    /// A file of the list.
    File(usize),
    /// A display row of the current file's diff.
    Row(usize),
}

/// What is under screen cell (`x`, `y`) at the model's size.
pub(crate) fn hit(m: &Model, x: u16, y: u16) -> Option<Hit> {
    let a = Areas::of(m, Rect::new(0, 0, m.size.0, m.size.1));
    let inside = |r: Rect| {
        let i = Rect::new(
            r.x + 1,
            r.y + 1,
            r.width.saturating_sub(2),
            r.height.saturating_sub(2),
        );
        (x >= i.x && x < i.right() && y >= i.y && y < i.bottom()).then(|| (y - i.y) as usize)
    };
    if let Some(k) = a.files.and_then(inside) {
        let h = a.files.map_or(0, |r| r.height.saturating_sub(2) as usize);
        let listed = m.listed_files();
        return listed
            .get(list_start(m, &listed, h) + k)
            .map(|&f| Hit::File(f));
    }
    if m.is_collapsed(m.cursor.file) {
        return None;
    }
    let k = inside(a.diff)?;
    // Walk the visible rows from the top, each as tall as it is drawn.
    let total = match m.file_rows(m.cursor.file) {
        Some(r) if m.split => r.split.len(),
        Some(r) => r.rows.len(),
        None => 0,
    };
    let mut line = 0usize;
    let mut d = m.scroll;
    while d < total {
        let hgt = row_height(m, d);
        if k < line + hgt {
            return Some(Hit::Row(d));
        }
        line += hgt;
        d += 1;
    }
    None
}

fn file_list(m: &Model, f: &mut Frame, area: Rect, t: Theme) {
    let listed = m.listed_files();
    let title = if m.list_filter().is_empty() {
        format!(" Files ({}) ", m.files.len())
    } else {
        format!(
            " Files ({} of {}) |{} ",
            listed.len(),
            m.files.len(),
            m.list_filter()
        )
    };
    let block = Block::bordered().title(title).border_style(t.border());
    let inner = block.inner(area);
    f.render_widget(block, area);
    let h = inner.height as usize;
    let start = list_start(m, &listed, h);
    let w = inner.width as usize;
    for (k, &fi) in listed.iter().skip(start).take(h).enumerate() {
        let tally = m.file_tally(fi);
        let counts = if tally.stale > 0 {
            " stale".to_string()
        } else if tally.decidable() == 0 && tally.failed > 0 {
            " failed".to_string()
        } else {
            format!(" {}/{}", tally.decided(), tally.decidable())
        };
        // decided/to decide, then `≈` and `!n` (n failed edits, which take no decision), so a
        // file with 3 edits of which 2 failed reads `0/1 !2`, not `0/1`.
        let mut flags = String::new();
        flags.push(if tally.normalized > 0 { '≈' } else { ' ' });
        if tally.failed > 0 && tally.decidable() > 0 {
            flags.push_str(&format!("!{}", tally.failed));
        } else {
            flags.push_str("  ");
        }
        let path_w = w.saturating_sub(2 + counts.len() + 1 + flags.chars().count());
        let path = text::middle_truncate(&m.files[fi].display, path_w);
        let pad = path_w.saturating_sub(text::width(&path));
        let glyph_state = if tally.stale > 0 {
            super::model::State::Stale
        } else if tally.decidable() == 0 {
            super::model::State::Failed
        } else if tally.undecided > 0 {
            super::model::State::Undecided
        } else if tally.rejected == 0 {
            super::model::State::Accepted
        } else {
            super::model::State::Rejected
        };
        let line = Line::from(vec![
            Span::styled(tally.glyph(), t.state(glyph_state)),
            Span::raw(" "),
            Span::raw(path),
            Span::raw(" ".repeat(pad)),
            Span::styled(counts, t.dim()),
            Span::raw(" "),
            Span::styled(flags, t.flag()),
        ]);
        let r = Rect::new(inner.x, inner.y + k as u16, inner.width, 1);
        let style = if fi == m.cursor.file {
            t.cursor()
        } else {
            Style::new()
        };
        f.buffer_mut().set_style(r, style);
        f.render_widget(Paragraph::new(line).style(style), r);
    }
}

fn footer(m: &Model, f: &mut Frame, area: Rect, t: Theme) {
    f.buffer_mut().set_style(area, t.bar());
    let line = if let Some(p) = &m.prompt {
        use super::model::PromptKind;
        let (lead, what) = match p.kind {
            PromptKind::Search => (" /".to_string(), "Enter search · Esc cancel"),
            PromptKind::Note(f, u) => (
                format!(" note on edit {}: ", m.files[f].units[u].label()),
                "Enter save (empty removes) · Esc cancel",
            ),
            PromptKind::BatchNote => (
                " note on the batch: ".to_string(),
                "Enter save (empty removes) · Esc cancel",
            ),
            PromptKind::Filter => (" files |".to_string(), "Enter keep filter · Esc clear"),
        };
        // Keep the end of a long text and the cursor in view.
        let room = (area.width as usize)
            .saturating_sub(text::width(&lead) + text::width(what) + 4)
            .max(8);
        let shown = tail(&p.text, room);
        Line::from(vec![
            Span::styled(lead, t.key()),
            Span::raw(shown),
            Span::styled("▏", t.key()),
            Span::styled(format!("   {what}"), t.dim()),
        ])
    } else if let Some(s) = &m.status {
        Line::from(vec![Span::raw(" "), Span::styled(s.clone(), t.warn())])
    } else {
        hints_for(m, t, area.width as usize)
    };
    f.render_widget(Paragraph::new(line).style(t.bar()), area);
}

/// The last `width` columns of `s` (with `…` when cut).
fn tail(s: &str, width: usize) -> String {
    if text::width(s) <= width {
        return s.to_string();
    }
    format!("…{}", text::tail_of(s, width.saturating_sub(1)))
}

/// Footer hints dropped first when the footer is too narrow; hints not listed (help, quit) are
/// never dropped, so `? help` and `q quit` show at any width the reviewer runs at.
const FOOTER_DROP_ORDER: &[keys::Action] = &[
    keys::Action::Collapse,
    keys::Action::Toggle,
    keys::Action::NextFlagged,
    keys::Action::NextFile,
    keys::Action::NextUndecided,
    keys::Action::Search,
    keys::Action::NextEdit,
    keys::Action::Note,
    keys::Action::Why,
    keys::Action::Reject,
    keys::Action::Accept,
    keys::Action::Summary,
];

/// Footer hints for the model's context, in at most `width` columns; after a successful write
/// there is no way back.
pub(crate) fn hints_for(m: &Model, t: Theme, width: usize) -> Line<'static> {
    let written = m.applied.as_ref().is_some_and(|a| a.written);
    let skip =
        |c: Context, a: keys::Action| c == Context::Results && written && a == keys::Action::Back;
    let c = m.key_context();
    let mut items: Vec<(keys::Action, &str, &str)> = keys::BINDINGS
        .iter()
        .filter(|b| b.context == c && !skip(c, b.action))
        .filter_map(|b| b.footer.map(|(k, w)| (b.action, k, w)))
        .collect();
    let item_w = |(_, k, w): &(keys::Action, &str, &str)| text::width(k) + 1 + text::width(w) + 2;
    let total = |items: &[(keys::Action, &str, &str)]| 1 + items.iter().map(item_w).sum::<usize>();
    for drop in FOOTER_DROP_ORDER {
        if total(&items) <= width {
            break;
        }
        items.retain(|(a, _, _)| a != drop);
    }
    let mut spans = vec![Span::raw(" ")];
    for (_, k, word) in items {
        spans.push(Span::styled(k.to_string(), t.key()));
        spans.push(Span::raw(format!(" {word}  ")));
    }
    Line::from(spans)
}
