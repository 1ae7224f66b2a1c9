//! Screens over the review: apply summary, results, help, quit confirmation.

use super::text;
use super::theme::Theme;
use crate::faces::review::keys::{BINDINGS, Context};
use crate::faces::review::model::{FileResult, Model, Overlay, State};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};

pub(super) fn draw(m: &Model, f: &mut Frame, area: Rect, t: Theme) {
    let (title, lines) = match m.overlay {
        Overlay::None => return,
        Overlay::Summary => (" Apply summary ", summary(m, t)),
        Overlay::Results => (" Results ", results(m, t)),
        Overlay::Help => (" Help ", help(m, t)),
        Overlay::ConfirmQuit => (" Quit without writing? ", confirm(m, t)),
    };
    let want_w = lines.iter().map(Line::width).max().unwrap_or(20).max(40) as u16 + 4;
    let w = want_w
        .min(area.width.saturating_sub(4))
        .max(20.min(area.width));
    let h = (lines.len() as u16 + 4).min(area.height.saturating_sub(2));
    let r = Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height.saturating_sub(h)) / 2,
        w,
        h,
    );
    f.render_widget(Clear, r);
    // The body's height inside the border; help says when it scrolls and where it is.
    let body_h = r.height.saturating_sub(2) as usize;
    let max_scroll = lines.len().saturating_sub(body_h);
    let scroll = if m.overlay == Overlay::Help {
        m.help_scroll.min(max_scroll)
    } else {
        0
    };
    let mut title_line = Line::from(title.to_string()).style(t.bold());
    if max_scroll > 0 {
        let last = (scroll + body_h).min(lines.len());
        title_line = Line::from(vec![
            Span::styled(title.to_string(), t.bold()),
            Span::styled(
                format!(
                    "lines {}–{last} of {} · {} ",
                    scroll + 1,
                    lines.len(),
                    match (scroll > 0, last < lines.len()) {
                        (true, true) => "↑↓ j/k scroll",
                        (false, _) => "↓ j/k scroll",
                        (true, false) => "↑ k scrolls up",
                    }
                ),
                t.warn(),
            ),
        ]);
    }
    let block = Block::bordered()
        .title(title_line)
        .title_bottom(super::hints_for(m, t, r.width.saturating_sub(2) as usize))
        .border_style(t.focus_border());
    let inner = block.inner(r);
    f.render_widget(block, r);
    let inner = Rect::new(
        inner.x + 1,
        inner.y,
        inner.width.saturating_sub(2),
        inner.height,
    );
    f.render_widget(Paragraph::new(lines).scroll((scroll as u16, 0)), inner);
}

/// How far the help overlay can scroll at the model's terminal size.
pub(crate) fn help_max_scroll(m: &Model) -> usize {
    let lines = help(m, Theme::plain()).len();
    let h = (lines + 4).min(m.size.1.saturating_sub(2) as usize);
    lines.saturating_sub(h.saturating_sub(2))
}

fn summary(m: &Model, t: Theme) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    let path_w = m
        .files
        .iter()
        .map(|f| text::width(&f.display))
        .max()
        .unwrap_or(4)
        .clamp(4, 48);
    out.push(Line::styled(
        format!(
            "{:<path_w$}  {:>8} {:>8} {:>9} {:>10}",
            "file", "accepted", "rejected", "undecided", "≈accepted"
        ),
        t.dim(),
    ));
    let mut files_written = 0;
    for (fi, info) in m.files.iter().enumerate() {
        let tally = m.file_tally(fi);
        if tally.accepted > 0 {
            files_written += 1;
        }
        let mut extra = String::new();
        if tally.failed > 0 {
            extra += &format!("  !{} failed", tally.failed);
        }
        if tally.stale > 0 {
            extra += "  ⚠ stale";
        }
        out.push(Line::from(vec![
            Span::raw(format!(
                "{:<path_w$}  ",
                text::middle_truncate(&info.display, path_w)
            )),
            Span::styled(
                format!("{:>8}", tally.accepted),
                if tally.accepted > 0 {
                    t.state(State::Accepted)
                } else {
                    t.dim()
                },
            ),
            Span::raw(format!(" {:>8} {:>9} ", tally.rejected, tally.undecided)),
            Span::styled(
                format!("{:>10}", tally.normalized_accepted),
                if tally.normalized_accepted > 0 {
                    t.flag()
                } else {
                    t.dim()
                },
            ),
            Span::styled(extra, t.warn()),
        ]));
    }
    let tally = m.tally();
    out.push(Line::raw(""));
    out.push(Line::from(vec![Span::styled(
        format!(
            "{} accepted edit(s) in {files_written} file(s) will be written.",
            tally.accepted
        ),
        t.bold(),
    )]));
    if tally.undecided > 0 {
        out.push(Line::styled(
            format!("{} undecided edit(s) will not be written.", tally.undecided),
            t.warn(),
        ));
    }
    if tally.normalized_accepted > 0 {
        out.push(Line::styled(
            format!(
                "{} accepted edit(s) matched only after normalization (≈).",
                tally.normalized_accepted
            ),
            t.warn(),
        ));
    }
    if tally.failed > 0 {
        out.push(Line::styled(
            format!("{} failed edit(s) cannot be written.", tally.failed),
            t.warn(),
        ));
    }
    out.push(Line::styled(
        "Files changed on disk since the review began are refused, and nothing is written.",
        t.dim(),
    ));
    out
}

fn results(m: &Model, t: Theme) -> Vec<Line<'static>> {
    let Some(ap) = &m.applied else {
        return vec![Line::raw("nothing applied yet")];
    };
    let mut out = vec![
        Line::styled(
            ap.summary.clone(),
            if ap.written { t.good() } else { t.error() },
        ),
        Line::raw(""),
    ];
    let path_w = m
        .files
        .iter()
        .map(|f| text::width(&f.display))
        .max()
        .unwrap_or(4)
        .min(48);
    for (fi, r) in ap.files.iter().enumerate() {
        let path = m
            .files
            .get(fi)
            .map(|f| text::middle_truncate(&f.display, path_w))
            .unwrap_or_default();
        let path = format!(
            "{path}{}",
            " ".repeat(path_w.saturating_sub(text::width(&path)))
        );
        let (glyph, what, style) = match r {
            FileResult::Written(n) => (
                "✓",
                format!("written ({n} edit{})", if *n == 1 { "" } else { "s" }),
                t.good(),
            ),
            FileResult::Untouched => ("·", "untouched (nothing accepted)".into(), t.dim()),
            FileResult::Stale => (
                "⚠",
                "refused: changed on disk since the batch was resolved; left as it is".into(),
                t.error(),
            ),
            FileResult::Error(e) => ("!", format!("not written: {e}"), t.error()),
            FileResult::NotWritten => ("·", "not written (the batch was refused)".into(), t.dim()),
        };
        out.push(Line::from(vec![
            Span::styled(format!("{glyph} "), style),
            Span::raw(format!("{path}  ")),
            Span::styled(what, style),
        ]));
    }
    if !ap.written {
        out.push(Line::raw(""));
        let stale = ap.files.contains(&FileResult::Stale);
        out.push(Line::styled(
            if stale {
                "Esc returns to the review: stale files are left out of the next apply."
            } else {
                "Esc returns to the review."
            },
            t.dim(),
        ));
    }
    out
}

fn help(m: &Model, t: Theme) -> Vec<Line<'static>> {
    let _ = m;
    let mut out = Vec::new();
    let mut last: Option<Context> = None;
    for b in BINDINGS {
        if last != Some(b.context) {
            if last.is_some() {
                out.push(Line::raw(""));
            }
            out.push(Line::styled(b.context.title().to_string(), t.bold()));
            last = Some(b.context);
        }
        out.push(Line::from(vec![
            Span::styled(format!("  {:<10}", b.label), t.key()),
            Span::raw(b.help),
        ]));
    }
    out.push(Line::raw(""));
    out.push(Line::styled(
        "Gutter: ✓ accepted  ✗ rejected  · undecided",
        t.dim(),
    ));
    out.push(Line::styled(
        "        ! failed  ⚠ stale  ≈ normalized match",
        t.dim(),
    ));
    out.push(Line::styled(
        "Mouse: the wheel scrolls the diff, a click selects a file or an edit.",
        t.dim(),
    ));
    out
}

fn confirm(m: &Model, t: Theme) -> Vec<Line<'static>> {
    let tally = m.tally();
    vec![
        Line::raw(format!(
            "{} decision(s) will be lost and nothing will be written.",
            tally.decided()
        )),
        Line::styled("y quits (exit 4) · n or Esc keeps reviewing", t.dim()),
    ]
}
