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
pub(crate) type Tui = Terminal<CrosstermBackend<Box<dyn Write + Send>>>;

/// Whether the terminal is in the reviewer's modes (so restoring twice is harmless).
static ACTIVE: AtomicBool = AtomicBool::new(false);

/// Restores the terminal when dropped.
pub(crate) struct Guard {
    _private: (),
}

/// Room for a whole frame: a full-screen redraw with styles is tens of KiB at 120×32.
const FRAME_BUFFER: usize = 1 << 20;

/// The terminal's output, buffered so that a frame reaches the terminal in one `write`: ratatui
/// queues every cursor move and style change separately, which on an unbuffered `/dev/tty` file
/// (harness mode) is thousands of writes per frame. [`Terminal::draw`] flushes once per frame.
pub fn frame_writer<W: Write>(w: W) -> std::io::BufWriter<W> {
    std::io::BufWriter::with_capacity(FRAME_BUFFER, w)
}

fn output() -> std::io::Result<Box<dyn Write + Send>> {
    if std::io::stdout().is_terminal() {
        Ok(Box::new(frame_writer(std::io::stdout())))
    } else {
        Ok(Box::new(frame_writer(
            std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open("/dev/tty")?,
        )))
    }
}

/// Whether there is a terminal to draw on: stdout, or else the process's `/dev/tty`.
pub(crate) fn available() -> bool {
    output().is_ok()
}

/// Leaves the reviewer's terminal modes; safe to call from a panic hook and more than once.
pub(crate) fn restore() {
    if !ACTIVE.swap(false, Ordering::SeqCst) {
        return;
    }
    if let Ok(mut out) = output() {
        let _ = execute!(out, DisableMouseCapture, LeaveAlternateScreen, cursor::Show);
        let _ = out.flush();
    }
    let _ = disable_raw_mode();
}

/// Prints `lines` on the terminal the reviewer used (stdout, or `/dev/tty` when stdout carries
/// the JSON result), after the terminal was restored.
pub(crate) fn print_after(lines: &[String]) {
    if let Ok(mut out) = output() {
        for l in lines {
            let _ = writeln!(out, "{l}");
        }
        let _ = out.flush();
    }
}

/// Enters raw mode and the alternate screen, installs the panic hook, and returns the terminal
/// with its guard.
pub(crate) fn enter() -> std::io::Result<(Tui, Guard)> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::backend::CrosstermBackend;
    use std::sync::{Arc, Mutex};

    /// Counts the `write` calls that reach the terminal.
    #[derive(Clone, Default)]
    struct Counter(Arc<Mutex<(usize, usize)>>);

    impl Write for Counter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let mut c = self.0.lock().unwrap();
            c.0 += 1;
            c.1 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_frame_reaches_the_terminal_in_one_write() {
        let (_d, plan) = crate::faces::review::tests::demo_plan();
        let mut m =
            crate::faces::review::Model::new(plan, crate::faces::review::Options::default());
        m.size = (120, 32);
        let counter = Counter::default();
        let backend = CrosstermBackend::new(frame_writer(counter.clone()));
        let mut term = Terminal::with_options(
            backend,
            ratatui::TerminalOptions {
                viewport: ratatui::Viewport::Fixed(ratatui::layout::Rect::new(0, 0, 120, 32)),
            },
        )
        .unwrap();
        term.draw(|f| crate::faces::review::view::draw(&m, f))
            .unwrap();
        let (writes, bytes) = *counter.0.lock().unwrap();
        assert_eq!(writes, 1, "first frame: {writes} writes for {bytes} bytes");
        assert!(bytes > 1000, "a whole frame was drawn: {bytes} bytes");
        for key in ["j", "]", "i", "s", "}"] {
            *counter.0.lock().unwrap() = (0, 0);
            let ev = ratatui::crossterm::event::KeyEvent::new(
                ratatui::crossterm::event::KeyCode::Char(key.chars().next().unwrap()),
                ratatui::crossterm::event::KeyModifiers::NONE,
            );
            if let Some(a) = crate::faces::review::update::on_key(&m, &ev) {
                crate::faces::review::update(&mut m, a);
            }
            term.draw(|f| crate::faces::review::view::draw(&m, f))
                .unwrap();
            let (writes, _) = *counter.0.lock().unwrap();
            assert!(writes <= 1, "key {key}: {writes} writes");
        }
    }
}
