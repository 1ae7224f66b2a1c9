//! The event loop: read an event, turn it into an action, update, run the effect, draw.
//!
//! Pending events are drained before drawing, so key repeat and wheel bursts cost one frame.
//! Only key presses and repeats count (keyboard-enhanced terminals also report releases).

use super::apply;
use super::keys::Action;
use super::model::Model;
use super::update::{self, Effect};
use super::view;
use crate::engine::document::PositionEncoding;
use crate::write::Root;
use ratatui::Terminal;
use ratatui::backend::Backend;
use ratatui::crossterm::event::{self, Event, KeyEventKind, MouseEventKind};
use std::time::Duration;

/// Rows the mouse wheel scrolls per notch.
const WHEEL_ROWS: i32 = 3;

/// The action an event asks for, if any.
pub fn action(m: &Model, ev: &Event) -> Option<Action> {
    match ev {
        Event::Key(k) if matches!(k.kind, KeyEventKind::Press | KeyEventKind::Repeat) => {
            update::on_key(m, k)
        }
        Event::Mouse(me) => match me.kind {
            MouseEventKind::ScrollDown => Some(Action::Wheel(WHEEL_ROWS)),
            MouseEventKind::ScrollUp => Some(Action::Wheel(-WHEEL_ROWS)),
            _ => None,
        },
        Event::Resize(w, h) => Some(Action::Resize(*w, *h)),
        _ => None,
    }
}

/// Handles one action, running its effect against `root`.
pub fn step(m: &mut Model, a: Action, root: &Root, enc: PositionEncoding) {
    if let Some(Effect::Apply) = update::update(m, a) {
        let (applied, stale) = apply::apply(m, root, enc);
        update::applied(m, applied, &stale);
    }
}

/// Runs until the model asks to exit.
pub fn run<B: Backend>(
    terminal: &mut Terminal<B>,
    m: &mut Model,
    root: &Root,
    enc: PositionEncoding,
) -> std::io::Result<()>
where
    B::Error: Into<std::io::Error>,
{
    let size = terminal.size().map_err(Into::into)?;
    update::update(m, Action::Resize(size.width, size.height));
    loop {
        terminal.draw(|f| view::draw(m, f)).map_err(Into::into)?;
        if m.exit.is_some() {
            return Ok(());
        }
        // Debug builds only: lets the end-to-end tests check the terminal survives a panic.
        #[cfg(debug_assertions)]
        if std::env::var_os("REDLINE_REVIEW_TEST_PANIC").is_some() {
            panic!("deliberate panic (REDLINE_REVIEW_TEST_PANIC)");
        }
        let ev = event::read()?;
        if let Some(a) = action(m, &ev) {
            step(m, a, root, enc);
        }
        while m.exit.is_none() && event::poll(Duration::ZERO)? {
            let ev = event::read()?;
            if let Some(a) = action(m, &ev) {
                step(m, a, root, enc);
            }
        }
    }
}
