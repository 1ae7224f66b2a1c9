//! The terminal guard: raw mode, alternate screen and mouse capture on the way in, all undone on
//! every way out — normal return, error, and panic (a hook restores the terminal before the
//! panic message prints).
//!
//! When stdout is not a terminal (an agent harness collecting the JSON result), the reviewer
//! draws on `/dev/tty` instead; crossterm reads keys from `/dev/tty` by itself when stdin is not
//! a terminal either.

use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::event::{DisableMouseCapture, EnableMouseCapture};
use ratatui::crossterm::terminal::{
    Clear, ClearType, EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::crossterm::{cursor, execute};
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};

/// Where the reviewer draws.
pub type Tui = Terminal<CrosstermBackend<Box<dyn Write + Send>>>;

/// Whether the terminal is in the reviewer's modes (so restoring twice is harmless).
static ACTIVE: AtomicBool = AtomicBool::new(false);

/// Restores the terminal when dropped.
pub struct Guard {
    _private: (),
}

fn output() -> std::io::Result<Box<dyn Write + Send>> {
    if std::io::stdout().is_terminal() {
        Ok(Box::new(std::io::stdout()))
    } else {
        Ok(Box::new(
            std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open("/dev/tty")?,
        ))
    }
}

/// Whether there is a terminal to draw on: stdout, or else the process's `/dev/tty`.
pub fn available() -> bool {
    output().is_ok()
}

/// Leaves the reviewer's terminal modes; safe to call from a panic hook and more than once.
pub fn restore() {
    if !ACTIVE.swap(false, Ordering::SeqCst) {
        return;
    }
    if let Ok(mut out) = output() {
        let _ = execute!(out, DisableMouseCapture, LeaveAlternateScreen, cursor::Show);
        let _ = out.flush();
    }
    let _ = disable_raw_mode();
}

/// Enters raw mode and the alternate screen, installs the panic hook, and returns the terminal
/// with its guard.
pub fn enter() -> std::io::Result<(Tui, Guard)> {
    let mut out = output()?;
    enable_raw_mode()?;
    ACTIVE.store(true, Ordering::SeqCst);
    let guard = Guard { _private: () };
    install_panic_hook();
    // Cleared here rather than with `Terminal::clear`, which asks the terminal for the cursor
    // position through stdout: with stdout redirected, the question would land in the file.
    execute!(
        out,
        EnterAlternateScreen,
        EnableMouseCapture,
        cursor::Hide,
        Clear(ClearType::All)
    )?;
    let terminal = Terminal::new(CrosstermBackend::new(out))?;
    Ok((terminal, guard))
}

fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            previous(info);
        }));
    });
}

impl Drop for Guard {
    fn drop(&mut self) {
        restore();
    }
}
