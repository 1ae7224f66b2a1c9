//! The one key table: it drives dispatch, the footer hints and the help screen, so the three
//! can never disagree. Keys are SPEC §8 (stable: tests drive them) plus `s`, `/`, `n`/`N`, `?`.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// Everything a key (or the mouse, or the terminal) can ask of the reviewer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// `j` / `↓`: one row down.
    Down,
    /// `k` / `↑`: one row up.
    Up,
    /// One screen down.
    PageDown,
    /// One screen up.
    PageUp,
    /// Half a screen down.
    HalfDown,
    /// Half a screen up.
    HalfUp,
    /// The first row.
    Top,
    /// The last row.
    Bottom,
    /// The next edit.
    NextEdit,
    /// The previous edit.
    PrevEdit,
    /// The next file.
    NextFile,
    /// The previous file.
    PrevFile,
    /// The next undecided edit.
    NextUndecided,
    /// The previous undecided edit.
    PrevUndecided,
    /// The next flagged edit: normalized or failed (wrapping).
    NextFlagged,
    /// The previous flagged edit (wrapping).
    PrevFlagged,
    /// Accept the edit under the cursor.
    Accept,
    /// Reject the edit under the cursor.
    Reject,
    /// Toggle the edit under the cursor between accepted and rejected.
    Toggle,
    /// Clear the decision on the edit under the cursor (undecided).
    Clear,
    /// Accept every edit of the file.
    AcceptFile,
    /// Reject every edit of the file.
    RejectFile,
    /// Undo the last decision.
    Undo,
    /// Redo the last undone decision.
    Redo,
    /// Open / close the why drawer.
    Why,
    /// Unified or side-by-side diff.
    Split,
    /// Scroll the why drawer.
    DrawerDown,
    /// Scroll the why drawer back.
    DrawerUp,
    /// `w`: wrap long lines, or cut them and scroll sideways.
    Wrap,
    /// Scroll sideways (wrap off).
    Left,
    /// Scroll sideways to the right (wrap off).
    Right,
    /// `/`: search.
    Search,
    /// `|`: filter the file list by path.
    Filter,
    /// `z`: collapse / expand the current file (hide its rows in the diff pane).
    Collapse,
    /// `n`: write or edit the note on the edit under the cursor.
    Note,
    /// `N`: write or edit the note on the whole batch.
    BatchNote,
    /// The next search hit.
    SearchNext,
    /// The previous search hit.
    SearchPrev,
    /// The summary screen.
    Summary,
    /// `Enter`: write from the summary, confirm a search.
    Confirm,
    /// Quit without writing (asks first when decisions exist).
    Quit,
    /// `y` in the quit confirmation.
    ConfirmQuit,
    /// `Ctrl-c`: leave at once, write nothing.
    Abort,
    /// The help screen.
    Help,
    /// `Esc`: close the drawer, prompt or overlay.
    Back,
    /// Mouse wheel: rows to scroll (negative is up).
    Wheel(i32),
    /// Left click at (column, row) of the screen: selects a file or an edit.
    Click(u16, u16),
    /// The next / previous file that has undecided edits (wrapping).
    NextUndecidedFile,
    /// The previous file that has undecided edits (wrapping).
    PrevUndecidedFile,
    /// The terminal was resized to (columns, rows).
    Resize(u16, u16),
    /// A character typed into the search prompt.
    Input(char),
    /// Backspace in the search prompt.
    Erase,
}

/// Where keys are read: each context has its own bindings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Context {
    Main,
    Summary,
    Results,
    Help,
    ConfirmQuit,
}

impl Context {
    pub(crate) fn title(self) -> &'static str {
        match self {
            Context::Main => "Review",
            Context::Summary => "Apply summary",
            Context::Results => "Results",
            Context::Help => "Help",
            Context::ConfirmQuit => "Quit?",
        }
    }
}

/// A key: code plus Ctrl/Alt (Shift is part of the character for letters).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Key(pub KeyCode, pub KeyModifiers);

const fn ch(c: char) -> Key {
    Key(KeyCode::Char(c), KeyModifiers::NONE)
}
const fn ctrl(c: char) -> Key {
    Key(KeyCode::Char(c), KeyModifiers::CONTROL)
}
const fn code(c: KeyCode) -> Key {
    Key(c, KeyModifiers::NONE)
}

/// One row of the key table.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Binding {
    pub context: Context,
    pub keys: &'static [Key],
    pub action: Action,
    /// How the keys are written in help (`j ↓`).
    pub label: &'static str,
    /// What it does, for help.
    pub help: &'static str,
    /// Footer hint (`keys`, `word`) when the binding earns a place there.
    pub footer: Option<(&'static str, &'static str)>,
}

const fn b(
    context: Context,
    keys: &'static [Key],
    action: Action,
    label: &'static str,
    help: &'static str,
    footer: Option<(&'static str, &'static str)>,
) -> Binding {
    Binding {
        context,
        keys,
        action,
        label,
        help,
        footer,
    }
}

use Context::{ConfirmQuit as CQ, Help as H, Main as M, Results as R, Summary as S};

/// The key table, in help order.
pub(crate) const BINDINGS: &[Binding] = &[
    b(
        M,
        &[ch('y')],
        Action::Accept,
        "y",
        "accept the edit, go to the next undecided",
        Some(("y", "accept")),
    ),
    b(
        M,
        &[ch('d')],
        Action::Reject,
        "d",
        "reject the edit, go to the next undecided",
        Some(("d", "reject")),
    ),
    b(
        M,
        &[ch(' ')],
        Action::Toggle,
        "Space",
        "toggle accepted / rejected",
        Some(("␣", "toggle")),
    ),
    b(
        M,
        &[ch('x')],
        Action::Clear,
        "x",
        "clear the decision (undecided)",
        None,
    ),
    b(
        M,
        &[ch('Y')],
        Action::AcceptFile,
        "Y",
        "accept every edit of the file",
        None,
    ),
    b(
        M,
        &[ch('D')],
        Action::RejectFile,
        "D",
        "reject every edit of the file",
        None,
    ),
    b(
        M,
        &[ch('u')],
        Action::Undo,
        "u",
        "undo the last decision",
        None,
    ),
    b(M, &[ctrl('r')], Action::Redo, "Ctrl-r", "redo", None),
    b(
        M,
        &[ch('j'), code(KeyCode::Down)],
        Action::Down,
        "j ↓",
        "next line",
        None,
    ),
    b(
        M,
        &[ch('k'), code(KeyCode::Up)],
        Action::Up,
        "k ↑",
        "previous line",
        None,
    ),
    b(
        M,
        &[ch(']')],
        Action::NextEdit,
        "]",
        "next edit",
        Some(("]/[", "edit")),
    ),
    b(M, &[ch('[')], Action::PrevEdit, "[", "previous edit", None),
    b(
        M,
        &[ch('}')],
        Action::NextFile,
        "}",
        "next file",
        Some(("}/{", "file")),
    ),
    b(M, &[ch('{')], Action::PrevFile, "{", "previous file", None),
    b(
        M,
        &[ch('J')],
        Action::NextUndecided,
        "J",
        "next undecided edit (wraps)",
        Some(("J/K", "undecided")),
    ),
    b(
        M,
        &[ch('K')],
        Action::PrevUndecided,
        "K",
        "previous undecided edit (wraps)",
        None,
    ),
    b(
        M,
        &[ch('>')],
        Action::NextUndecidedFile,
        ">",
        "next file with undecided edits (wraps)",
        None,
    ),
    b(
        M,
        &[ch('<')],
        Action::PrevUndecidedFile,
        "<",
        "previous file with undecided edits (wraps)",
        None,
    ),
    b(
        M,
        &[ch('f')],
        Action::NextFlagged,
        "f",
        "next flagged edit: normalized or failed (wraps)",
        Some(("f/F", "flagged")),
    ),
    b(
        M,
        &[ch('F')],
        Action::PrevFlagged,
        "F",
        "previous flagged edit (wraps)",
        None,
    ),
    b(
        M,
        &[ctrl('d')],
        Action::HalfDown,
        "Ctrl-d",
        "half a page down",
        None,
    ),
    b(
        M,
        &[ctrl('u')],
        Action::HalfUp,
        "Ctrl-u",
        "half a page up",
        None,
    ),
    b(
        M,
        &[code(KeyCode::PageDown)],
        Action::PageDown,
        "PgDn",
        "a page down",
        None,
    ),
    b(
        M,
        &[code(KeyCode::PageUp)],
        Action::PageUp,
        "PgUp",
        "a page up",
        None,
    ),
    b(
        M,
        &[ch('g'), code(KeyCode::Home)],
        Action::Top,
        "g Home",
        "top of the file",
        None,
    ),
    b(
        M,
        &[ch('G'), code(KeyCode::End)],
        Action::Bottom,
        "G End",
        "bottom of the file",
        None,
    ),
    b(
        M,
        &[ch('i')],
        Action::Why,
        "i",
        "why: how the edit matched, or why it failed",
        Some(("i", "why")),
    ),
    b(
        M,
        &[ch('s')],
        Action::Split,
        "s",
        "split / unified view",
        None,
    ),
    b(
        M,
        &[ctrl('e')],
        Action::DrawerDown,
        "Ctrl-e",
        "scroll the why drawer down",
        None,
    ),
    b(
        M,
        &[ctrl('y')],
        Action::DrawerUp,
        "Ctrl-y",
        "scroll the why drawer up",
        None,
    ),
    b(
        M,
        &[ch('w')],
        Action::Wrap,
        "w",
        "wrap long lines / cut them and scroll sideways",
        None,
    ),
    b(
        M,
        &[ch('h'), code(KeyCode::Left)],
        Action::Left,
        "h ←",
        "scroll left (wrap off)",
        None,
    ),
    b(
        M,
        &[ch('l'), code(KeyCode::Right)],
        Action::Right,
        "l →",
        "scroll right (wrap off); » and « mark changes off-screen",
        None,
    ),
    b(
        M,
        &[ch('/')],
        Action::Search,
        "/",
        "search every file (smart case)",
        Some(("/", "search")),
    ),
    b(
        M,
        &[ch('|')],
        Action::Filter,
        "|",
        "filter the file list by path (Esc clears)",
        None,
    ),
    b(
        M,
        &[ch('z')],
        Action::Collapse,
        "z",
        "collapse / expand the file (hide its rows)",
        Some(("z", "fold")),
    ),
    b(
        M,
        &[ctrl('n')],
        Action::SearchNext,
        "Ctrl-n",
        "next search match",
        None,
    ),
    b(
        M,
        &[ctrl('p')],
        Action::SearchPrev,
        "Ctrl-p",
        "previous search match",
        None,
    ),
    b(
        M,
        &[ch('n')],
        Action::Note,
        "n",
        "note to the agent on this edit (in the JSON result)",
        Some(("n", "note")),
    ),
    b(
        M,
        &[ch('N')],
        Action::BatchNote,
        "N",
        "note to the agent on the whole batch",
        None,
    ),
    b(
        M,
        &[ch('A')],
        Action::Summary,
        "A",
        "apply summary, then Enter writes",
        Some(("A", "apply")),
    ),
    b(
        M,
        &[ch('?')],
        Action::Help,
        "?",
        "this help",
        Some(("?", "help")),
    ),
    b(
        M,
        &[code(KeyCode::Esc)],
        Action::Back,
        "Esc",
        "close the drawer, clear the search",
        None,
    ),
    b(
        M,
        &[ch('q')],
        Action::Quit,
        "q",
        "quit without writing (asks when decisions exist)",
        Some(("q", "quit")),
    ),
    b(
        M,
        &[ctrl('c')],
        Action::Abort,
        "Ctrl-c",
        "quit at once, write nothing",
        None,
    ),
    b(
        S,
        &[code(KeyCode::Enter)],
        Action::Confirm,
        "Enter",
        "write the accepted edits",
        Some(("Enter", "write accepted edits")),
    ),
    b(
        S,
        &[code(KeyCode::Esc), ch('q'), ch('A')],
        Action::Back,
        "Esc q",
        "back to the review",
        Some(("Esc", "back")),
    ),
    b(
        S,
        &[ctrl('c')],
        Action::Abort,
        "Ctrl-c",
        "quit at once, write nothing",
        None,
    ),
    b(
        R,
        &[ch('q'), code(KeyCode::Enter)],
        Action::Quit,
        "q Enter",
        "exit",
        Some(("q", "exit")),
    ),
    b(
        R,
        &[code(KeyCode::Esc)],
        Action::Back,
        "Esc",
        "back to the review (when nothing was written)",
        Some(("Esc", "back")),
    ),
    b(R, &[ctrl('c')], Action::Abort, "Ctrl-c", "exit", None),
    b(
        CQ,
        &[ch('y')],
        Action::ConfirmQuit,
        "y",
        "quit without writing",
        Some(("y", "quit without writing")),
    ),
    b(
        CQ,
        &[ch('n'), code(KeyCode::Esc), ch('q')],
        Action::Back,
        "n Esc",
        "keep reviewing",
        Some(("n/Esc", "keep reviewing")),
    ),
    b(
        CQ,
        &[ctrl('c')],
        Action::Abort,
        "Ctrl-c",
        "quit at once",
        None,
    ),
    b(
        H,
        &[code(KeyCode::Esc), ch('?'), ch('q')],
        Action::Back,
        "Esc ? q",
        "close help",
        Some(("Esc", "close")),
    ),
    b(
        H,
        &[ch('j'), code(KeyCode::Down)],
        Action::Down,
        "j ↓",
        "scroll",
        None,
    ),
    b(
        H,
        &[ch('k'), code(KeyCode::Up)],
        Action::Up,
        "k ↑",
        "scroll",
        None,
    ),
    b(
        H,
        &[code(KeyCode::PageDown), ch(' ')],
        Action::PageDown,
        "PgDn ␣",
        "scroll a page",
        None,
    ),
    b(
        H,
        &[code(KeyCode::PageUp)],
        Action::PageUp,
        "PgUp",
        "scroll a page up",
        None,
    ),
    b(
        H,
        &[ctrl('c')],
        Action::Abort,
        "Ctrl-c",
        "quit at once",
        None,
    ),
];

/// Shift is folded into the character (`J` arrives as Shift+`J`); Ctrl and Alt are kept.
fn normalize(ev: &KeyEvent) -> Key {
    let mods = ev.modifiers & (KeyModifiers::CONTROL | KeyModifiers::ALT);
    match ev.code {
        KeyCode::Char(c) if mods.contains(KeyModifiers::CONTROL) => {
            Key(KeyCode::Char(c.to_ascii_lowercase()), mods)
        }
        c => Key(c, mods),
    }
}

/// The action a key asks for in `context`.
pub(crate) fn dispatch(context: Context, ev: &KeyEvent) -> Option<Action> {
    let key = normalize(ev);
    BINDINGS
        .iter()
        .find(|b| b.context == context && b.keys.contains(&key))
        .map(|b| b.action)
}

/// A prompt (search, note) takes text: every printable key is input.
pub(crate) fn prompt(ev: &KeyEvent) -> Option<Action> {
    let key = normalize(ev);
    match key {
        Key(KeyCode::Enter, _) => Some(Action::Confirm),
        Key(KeyCode::Esc, _) => Some(Action::Back),
        Key(KeyCode::Backspace, _) => Some(Action::Erase),
        Key(KeyCode::Char('c'), m) if m.contains(KeyModifiers::CONTROL) => Some(Action::Abort),
        Key(KeyCode::Char(c), m) if m.is_empty() => Some(Action::Input(c)),
        _ => None,
    }
}

/// Footer hints of a context, in table order.
#[cfg(test)]
pub(crate) fn footer(context: Context) -> impl Iterator<Item = (&'static str, &'static str)> {
    BINDINGS
        .iter()
        .filter(move |b| b.context == context)
        .filter_map(|b| b.footer)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(c: KeyCode, m: KeyModifiers) -> KeyEvent {
        KeyEvent::new(c, m)
    }

    #[test]
    fn spec_keys_dispatch() {
        let cases = [
            ('j', Action::Down),
            ('k', Action::Up),
            (']', Action::NextEdit),
            ('[', Action::PrevEdit),
            ('}', Action::NextFile),
            ('{', Action::PrevFile),
            ('J', Action::NextUndecided),
            ('K', Action::PrevUndecided),
            ('f', Action::NextFlagged),
            ('F', Action::PrevFlagged),
            ('y', Action::Accept),
            ('d', Action::Reject),
            (' ', Action::Toggle),
            ('x', Action::Clear),
            ('Y', Action::AcceptFile),
            ('D', Action::RejectFile),
            ('u', Action::Undo),
            ('i', Action::Why),
            ('s', Action::Split),
            ('/', Action::Search),
            ('A', Action::Summary),
            ('q', Action::Quit),
            ('?', Action::Help),
            ('n', Action::Note),
            ('N', Action::BatchNote),
            ('|', Action::Filter),
            ('z', Action::Collapse),
        ];
        for (c, a) in cases {
            let m = if c.is_ascii_uppercase() {
                KeyModifiers::SHIFT
            } else {
                KeyModifiers::NONE
            };
            assert_eq!(
                dispatch(Context::Main, &key(KeyCode::Char(c), m)),
                Some(a),
                "{c}"
            );
        }
        assert_eq!(
            dispatch(
                Context::Main,
                &key(KeyCode::Char('r'), KeyModifiers::CONTROL)
            ),
            Some(Action::Redo)
        );
        assert_eq!(
            dispatch(Context::Summary, &key(KeyCode::Enter, KeyModifiers::NONE)),
            Some(Action::Confirm)
        );
        assert_eq!(
            dispatch(
                Context::ConfirmQuit,
                &key(KeyCode::Char('y'), KeyModifiers::NONE)
            ),
            Some(Action::ConfirmQuit)
        );
    }

    #[test]
    fn no_key_is_bound_twice_in_a_context() {
        for (i, a) in BINDINGS.iter().enumerate() {
            for b in &BINDINGS[i + 1..] {
                if a.context == b.context {
                    assert!(
                        a.keys.iter().all(|k| !b.keys.contains(k)),
                        "{} and {} share a key",
                        a.label,
                        b.label
                    );
                }
            }
        }
    }

    #[test]
    fn footer_comes_from_the_table() {
        let f: Vec<_> = footer(Context::Main).map(|(k, _)| k).collect();
        assert_eq!(f.first(), Some(&"y"));
        assert!(f.contains(&"A") && f.contains(&"?"));
    }
}
