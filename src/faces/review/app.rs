//! The event loop: read an event, turn it into an action, update, run the effect, draw.
//!
//! Pending events are drained before drawing, so key repeat and wheel bursts cost one frame.
//! Only key presses and repeats count (keyboard-enhanced terminals also report releases).
//!
//! A terminal sends Alt+key as Esc followed by the key, so an `Esc` typed just before another key
//! (or sent in one write by a script) arrives as Alt+key. The reviewer binds nothing to Alt, so
//! such a key is split back into `Esc` and the key ([`split_alt`]), each handled in turn: no key
//! is lost however fast it follows `Esc`.

use super::apply;
use super::keys::Action;
use super::model::Model;
use super::update::{self, Effect};
use super::view;
use crate::engine::document::PositionEncoding;
use crate::write::Root;
use ratatui::Terminal;
use ratatui::backend::Backend;
use ratatui::crossterm::event::{
    self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEventKind,
};
use std::time::Duration;

/// Rows the mouse wheel scrolls per notch.
const WHEEL_ROWS: i32 = 3;

/// The action an event asks for, if any.
pub(crate) fn action(m: &Model, ev: &Event) -> Option<Action> {
    match ev {
        Event::Key(k) if matches!(k.kind, KeyEventKind::Press | KeyEventKind::Repeat) => {
            update::on_key(m, k)
        }
        Event::Mouse(me) => match me.kind {
            MouseEventKind::ScrollDown => Some(Action::Wheel(WHEEL_ROWS)),
            MouseEventKind::ScrollUp => Some(Action::Wheel(-WHEEL_ROWS)),
            MouseEventKind::Down(MouseButton::Left) if m.overlay == super::model::Overlay::None => {
                Some(Action::Click(me.column, me.row))
            }
            _ => None,
        },
        Event::Resize(w, h) => Some(Action::Resize(*w, *h)),
        _ => None,
    }
}

/// The events an event stands for: Alt+key is `Esc` then the key (see the module notes).
pub(crate) fn split_alt(ev: Event) -> Vec<Event> {
    match ev {
        Event::Key(k) if k.modifiers.contains(KeyModifiers::ALT) => {
            let esc = KeyEvent::new_with_kind(KeyCode::Esc, KeyModifiers::NONE, k.kind);
            let mut key = k;
            key.modifiers.remove(KeyModifiers::ALT);
            vec![Event::Key(esc), Event::Key(key)]
        }
        ev => vec![ev],
    }
}

/// Handles one terminal event: each action it asks for, in order, against the model as the
/// previous one left it.
pub(crate) fn handle(m: &mut Model, ev: Event, root: &Root, enc: PositionEncoding) {
    for ev in split_alt(ev) {
        if m.exit.is_some() {
            return;
        }
        if let Some(a) = action(m, &ev) {
            step(m, a, root, enc);
        }
    }
}

/// Handles one action, running its effect against `root`.
pub(crate) fn step(m: &mut Model, a: Action, root: &Root, enc: PositionEncoding) {
    if let Some(Effect::Apply) = update::update(m, a) {
        let (applied, stale) = apply::apply(m, root, enc);
        update::applied(m, applied, &stale);
    }
}

/// Runs until the model asks to exit.
pub(crate) fn run<B: Backend>(
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
        handle(m, event::read()?, root, enc);
        while m.exit.is_none() && event::poll(Duration::ZERO)? {
            handle(m, event::read()?, root, enc);
        }
    }
}
