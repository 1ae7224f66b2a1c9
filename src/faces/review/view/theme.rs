//! Colours and their monochrome stand-ins. Meaning never rests on colour alone: decisions have
//! glyphs, changed lines have `+`/`-`, emphasis is underlined in monochrome.

use crate::engine::diff::Tag;
use crate::faces::review::highlight::Palette;
use crate::faces::review::model::State;
use ratatui::style::{Color, Modifier, Style};

/// The palette in use.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Theme {
    pub mono: bool,
    /// Syntax highlighting on, for a dark or light background: changed lines then get a tinted
    /// background (delta's way) so the syntax colours stay readable on them.
    pub syntax: Option<Palette>,
}

/// Background tints of changed lines and of their changed words under syntax colours.
fn tint(p: Palette, tag: Tag, strong: bool) -> Color {
    match (p, tag, strong) {
        (Palette::Dark, Tag::Delete, false) => Color::Rgb(63, 0, 1),
        (Palette::Dark, Tag::Delete, true) => Color::Rgb(144, 16, 17),
        (Palette::Dark, _, false) => Color::Rgb(0, 40, 0),
        (Palette::Dark, _, true) => Color::Rgb(0, 96, 0),
        (Palette::Light, Tag::Delete, false) => Color::Rgb(255, 224, 224),
        (Palette::Light, Tag::Delete, true) => Color::Rgb(255, 170, 170),
        (Palette::Light, _, false) => Color::Rgb(208, 255, 208),
        (Palette::Light, _, true) => Color::Rgb(160, 239, 160),
    }
}

impl Theme {
    /// The model's theme.
    pub(crate) fn of(m: &crate::faces::review::Model) -> Theme {
        Theme {
            mono: m.monochrome,
            syntax: m.syntax.filter(|_| !m.monochrome),
        }
    }

    /// For measuring text only (styles unused).
    pub(crate) fn plain() -> Theme {
        Theme {
            mono: true,
            syntax: None,
        }
    }

    fn pick(self, color: Style, mono: Style) -> Style {
        if self.mono { mono } else { color }
    }

    pub(crate) fn dim(self) -> Style {
        Style::new().add_modifier(Modifier::DIM)
    }

    pub(crate) fn bold(self) -> Style {
        Style::new().add_modifier(Modifier::BOLD)
    }

    /// Header and footer bars.
    pub(crate) fn bar(self) -> Style {
        self.pick(
            Style::new().bg(Color::Indexed(236)).fg(Color::Gray),
            Style::new(),
        )
    }

    pub(crate) fn key(self) -> Style {
        self.pick(
            Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
            Style::new().add_modifier(Modifier::BOLD),
        )
    }

    pub(crate) fn line(self, tag: Tag) -> Style {
        if let (Some(p), false, false) = (self.syntax, self.mono, tag == Tag::Context) {
            return Style::new().bg(tint(p, tag, false));
        }
        match tag {
            Tag::Context => Style::new(),
            Tag::Delete => self.pick(Style::new().fg(Color::Red), Style::new()),
            Tag::Insert => self.pick(Style::new().fg(Color::Green), Style::new()),
        }
    }

    /// A changed line under the cursor: with syntax colours its own background would hide the
    /// cursor's, so it gets a brighter tint.
    pub(crate) fn line_cursor(self, tag: Tag) -> Style {
        match (self.syntax, self.mono, tag) {
            (Some(Palette::Dark), false, Tag::Delete) => Style::new().bg(Color::Rgb(95, 18, 20)),
            (Some(Palette::Dark), false, Tag::Insert) => Style::new().bg(Color::Rgb(16, 66, 16)),
            (Some(Palette::Light), false, Tag::Delete) => {
                Style::new().bg(Color::Rgb(255, 200, 200))
            }
            (Some(Palette::Light), false, Tag::Insert) => {
                Style::new().bg(Color::Rgb(185, 245, 185))
            }
            _ => self.line(tag),
        }
    }

    /// Changed words within a changed line.
    pub(crate) fn emph(self, tag: Tag) -> Style {
        if let (Some(p), false, false) = (self.syntax, self.mono, tag == Tag::Context) {
            // Syntax colours stay; the stronger background and bold say what changed.
            return Style::new()
                .bg(tint(p, tag, true))
                .add_modifier(Modifier::BOLD);
        }
        match tag {
            Tag::Context => Style::new(),
            Tag::Delete => self.pick(
                Style::new()
                    .bg(Color::Indexed(52))
                    .fg(Color::LightRed)
                    .add_modifier(Modifier::BOLD),
                Style::new().add_modifier(Modifier::UNDERLINED | Modifier::BOLD),
            ),
            Tag::Insert => self.pick(
                Style::new()
                    .bg(Color::Indexed(22))
                    .fg(Color::LightGreen)
                    .add_modifier(Modifier::BOLD),
                Style::new().add_modifier(Modifier::UNDERLINED | Modifier::BOLD),
            ),
        }
    }

    pub(crate) fn state(self, s: State) -> Style {
        let c = match s {
            State::Undecided => return self.dim(),
            State::Accepted => Color::Green,
            State::Rejected => Color::Red,
            State::Failed => Color::Yellow,
            State::Stale => Color::Magenta,
        };
        self.pick(
            Style::new().fg(c).add_modifier(Modifier::BOLD),
            Style::new().add_modifier(Modifier::BOLD),
        )
    }

    /// Normalized-match and failure flags.
    pub(crate) fn flag(self) -> Style {
        self.pick(
            Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD),
            Style::new().add_modifier(Modifier::BOLD),
        )
    }

    /// The row under the cursor.
    pub(crate) fn cursor(self) -> Style {
        self.pick(
            Style::new().bg(Color::Indexed(237)),
            Style::new().add_modifier(Modifier::REVERSED),
        )
    }

    /// Marker of the rows of the edit under the cursor.
    pub(crate) fn current(self) -> Style {
        self.pick(
            Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
            Style::new().add_modifier(Modifier::BOLD),
        )
    }

    /// A search match: its own background and foreground, so it reads on any row, the
    /// cursor's included.
    pub(crate) fn search_hit(self) -> Style {
        self.pick(
            Style::new().bg(Color::Yellow).fg(Color::Black),
            Style::new().add_modifier(Modifier::UNDERLINED | Modifier::ITALIC),
        )
    }

    /// The match the cursor is on: brighter than the others.
    pub(crate) fn search_current(self) -> Style {
        self.pick(
            Style::new()
                .bg(Color::LightYellow)
                .fg(Color::Black)
                .add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
            Style::new().add_modifier(Modifier::UNDERLINED | Modifier::ITALIC | Modifier::BOLD),
        )
    }

    pub(crate) fn border(self) -> Style {
        self.pick(Style::new().fg(Color::DarkGray), Style::new())
    }

    pub(crate) fn focus_border(self) -> Style {
        self.pick(Style::new().fg(Color::Cyan), Style::new())
    }

    pub(crate) fn warn(self) -> Style {
        self.pick(
            Style::new().fg(Color::Yellow),
            Style::new().add_modifier(Modifier::BOLD),
        )
    }

    pub(crate) fn error(self) -> Style {
        self.pick(
            Style::new().fg(Color::Red).add_modifier(Modifier::BOLD),
            Style::new().add_modifier(Modifier::BOLD),
        )
    }

    pub(crate) fn good(self) -> Style {
        self.pick(
            Style::new().fg(Color::Green).add_modifier(Modifier::BOLD),
            Style::new().add_modifier(Modifier::BOLD),
        )
    }
}
