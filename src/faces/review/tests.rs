//! Reviewer tests: key sequences through `update`, and screens rendered into a `TestBackend`
//! and snapshotted (text grids; styles are checked by cell where they carry meaning).

use super::keys::Action;
use super::model::{Decision, Model, Options, Overlay, PromptKind, State};
use super::update::{Effect, on_key, update};
use super::view;
use crate::engine::plan::{self, Plan, ResolveOptions};
use crate::write::{Limits, Root};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// The demo batch resolved in a fresh temp dir.
pub(crate) fn demo_plan() -> (tempfile::TempDir, Plan) {
    let dir = tempfile::tempdir().unwrap();
    crate::faces::demo::write(dir.path()).unwrap();
    let root = Root::open(dir.path(), Limits::default()).unwrap();
    let plan = plan::resolve(
        &crate::faces::demo::request().unwrap(),
        &root,
        ResolveOptions::default(),
    )
    .unwrap();
    (dir, plan)
}

/// A model over `files` (path, content) and a JSON batch, resolved in a fresh temp dir.
fn model_of(files: &[(&str, &str)], batch: &str) -> (tempfile::TempDir, Model) {
    let dir = tempfile::tempdir().unwrap();
    for (p, c) in files {
        std::fs::write(dir.path().join(p), c).unwrap();
    }
    let root = Root::open(dir.path(), Limits::default()).unwrap();
    let req = crate::request::wire::parse_json(batch).unwrap();
    let plan = plan::resolve(&req, &root, ResolveOptions::default()).unwrap();
    let mut m = Model::new(plan, Options::default());
    m.size = (120, 32);
    (dir, m)
}

fn screen(m: &Model, w: u16, h: u16) -> String {
    format!("{}", render(m, w, h).backend())
}

fn demo(opts: Options) -> (tempfile::TempDir, Model) {
    let (dir, plan) = demo_plan();
    let mut m = Model::new(plan, opts);
    m.size = (120, 32);
    (dir, m)
}

/// Parses `"jj]y<esc><enter><space><c-r>"` into key events.
fn parse_keys(s: &str) -> Vec<KeyEvent> {
    let mut out = Vec::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '<' {
            let name: String = chars.by_ref().take_while(|&c| c != '>').collect();
            let ev = match name.as_str() {
                "esc" => KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE),
                "enter" => KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE),
                "space" => KeyEvent::new(KeyCode::Char(' '), KeyModifiers::NONE),
                "bs" => KeyEvent::new(KeyCode::Backspace, KeyModifiers::NONE),
                "lt" => KeyEvent::new(KeyCode::Char('<'), KeyModifiers::NONE),
                n if n.starts_with("c-") => KeyEvent::new(
                    KeyCode::Char(n.chars().nth(2).unwrap()),
                    KeyModifiers::CONTROL,
                ),
                n => panic!("unknown key <{n}>"),
            };
            out.push(ev);
        } else {
            let m = if c.is_ascii_uppercase() {
                KeyModifiers::SHIFT
            } else {
                KeyModifiers::NONE
            };
            out.push(KeyEvent::new(KeyCode::Char(c), m));
        }
    }
    out
}

/// Feeds keys; returns the effects asked for.
fn press(m: &mut Model, keys: &str) -> Vec<Effect> {
    let mut effects = Vec::new();
    for ev in parse_keys(keys) {
        if let Some(a) = on_key(m, &ev) {
            effects.extend(update(m, a));
        }
    }
    effects
}

fn render(m: &Model, w: u16, h: u16) -> Terminal<TestBackend> {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| view::draw(m, f)).unwrap();
    t
}

fn states(m: &Model, file: usize) -> Vec<State> {
    (0..m.files[file].units.len())
        .map(|u| m.state(file, u))
        .collect()
}

#[test]
fn every_edit_starts_undecided_unless_accept_exact() {
    let (_d, m) = demo(Options::default());
    assert_eq!(m.tally().accepted, 0);
    assert!(m.tally().undecided > 0);
    let (_d, m) = demo(Options {
        accept_exact: true,
        ..Options::default()
    });
    let t = m.tally();
    assert!(t.accepted >= 5);
    assert_eq!(
        t.normalized_accepted, 0,
        "normalized matches never start accepted"
    );
}

#[test]
fn accept_advances_to_the_next_undecided_and_undo_redo() {
    let (_d, mut m) = demo(Options::default());
    let first = m.current_unit().unwrap();
    assert_eq!(m.state(0, first), State::Undecided);
    press(&mut m, "y");
    assert_eq!(m.state(0, first), State::Accepted);
    assert_ne!(m.current_unit(), Some(first), "y advances");
    press(&mut m, "d");
    assert_eq!(m.tally().rejected, 1);
    press(&mut m, "u");
    assert_eq!(m.tally().rejected, 0);
    press(&mut m, "u");
    assert_eq!(m.tally().accepted, 0);
    press(&mut m, "<c-r><c-r>");
    assert_eq!((m.tally().accepted, m.tally().rejected), (1, 1));
}

#[test]
fn toggle_clear_and_whole_file() {
    let (_d, mut m) = demo(Options::default());
    let u = m.current_unit().unwrap();
    press(&mut m, " ");
    assert_eq!(m.decisions[0][u], Decision::Accepted);
    press(&mut m, " ");
    assert_eq!(m.decisions[0][u], Decision::Rejected);
    press(&mut m, "x");
    assert_eq!(m.decisions[0][u], Decision::Undecided);
    press(&mut m, "Y");
    assert!(
        states(&m, 0).iter().all(|s| *s == State::Accepted),
        "{:?}",
        states(&m, 0)
    );
    press(&mut m, "u");
    assert!(
        states(&m, 0).iter().all(|s| *s == State::Undecided),
        "one undo step for the file"
    );
}

#[test]
fn failed_edits_cannot_be_accepted() {
    let (_d, mut m) = demo(Options::default());
    press(&mut m, "}");
    assert_eq!(m.cursor.file, 1, "math.rs");
    let u = m.current_unit().unwrap();
    assert_eq!(
        m.state(1, u),
        State::Failed,
        "failed edits come first in a file"
    );
    press(&mut m, "y");
    assert_eq!(m.state(1, u), State::Failed);
    assert!(
        m.status
            .as_deref()
            .unwrap_or("")
            .contains("cannot be accepted")
    );
    press(&mut m, "Y");
    let s = states(&m, 1);
    assert_eq!(s.iter().filter(|s| **s == State::Failed).count(), 2);
    assert!(
        s.iter()
            .filter(|s| **s != State::Failed)
            .all(|s| *s == State::Accepted)
    );
}

#[test]
fn navigation_between_edits_files_undecided_and_flagged() {
    let (_d, mut m) = demo(Options::default());
    press(&mut m, "]");
    assert_eq!((m.cursor.file, m.current_unit()), (0, Some(1)));
    press(&mut m, "[");
    assert_eq!((m.cursor.file, m.current_unit()), (0, Some(0)));
    press(&mut m, "f");
    let u = m.current_unit().unwrap();
    assert!(
        m.files[m.cursor.file].units[u].normalized(),
        "f goes to the normalized edit"
    );
    press(&mut m, "f");
    let u = m.current_unit().unwrap();
    assert_eq!(
        m.state(m.cursor.file, u),
        State::Failed,
        "then to the failures"
    );
    press(&mut m, "{{{{}");
    assert_eq!(m.cursor.file, 1);
    // J from the last file wraps to the first undecided.
    press(&mut m, "G");
    let last = m.files.len() - 1;
    while m.cursor.file != last {
        press(&mut m, "}");
    }
    press(&mut m, "J");
    assert_eq!((m.cursor.file, m.current_unit()), (0, Some(0)));
    press(&mut m, "K");
    assert_eq!(m.cursor.file, last);
}

#[test]
fn quit_asks_only_when_decisions_exist() {
    let (_d, mut m) = demo(Options::default());
    press(&mut m, "q");
    assert_eq!(m.exit, Some(crate::error::ExitStatus::ReviewQuit));
    let (_d, mut m) = demo(Options::default());
    press(&mut m, "yq");
    assert_eq!(m.overlay, Overlay::ConfirmQuit);
    assert_eq!(m.exit, None);
    press(&mut m, "n");
    assert_eq!(m.overlay, Overlay::None);
    press(&mut m, "qy");
    assert_eq!(m.exit, Some(crate::error::ExitStatus::ReviewQuit));
}

#[test]
fn summary_then_enter_asks_to_apply() {
    let (_d, mut m) = demo(Options::default());
    assert!(press(&mut m, "yA").is_empty());
    assert_eq!(m.overlay, Overlay::Summary);
    assert_eq!(press(&mut m, "<enter>"), vec![Effect::Apply]);
    press(&mut m, "<esc>");
    assert_eq!(m.overlay, Overlay::None);
}

#[test]
fn search_finds_lines_across_files_and_ctrl_n_moves() {
    let (_d, mut m) = demo(Options::default());
    press(&mut m, "/timeout<enter>");
    assert_eq!(m.files[m.cursor.file].display, "settings.ini");
    assert!(m.search.hits.len() >= 2);
    let at = m.cursor;
    press(&mut m, "<c-n>");
    assert_ne!(m.cursor, at);
    press(&mut m, "<c-p>");
    assert_eq!(m.cursor, at);
    press(&mut m, "<esc>");
    assert!(m.search.query.is_empty());
}

#[test]
fn notes_per_edit_and_per_batch_reach_the_json_result() {
    let (_d, mut m) = demo(Options::default());
    let u = m.current_unit().unwrap();
    press(&mut m, "nuse the helper<enter>");
    assert_eq!(m.note(0, u), Some("use the helper"));
    assert!(
        m.has_decisions(),
        "a note is work the quit confirmation protects"
    );
    // `n` again edits the note: the prompt starts with it.
    press(&mut m, "n");
    assert_eq!(m.prompt.as_ref().unwrap().text, "use the helper");
    press(&mut m, "<bs><bs><bs><bs><bs><bs>API<enter>");
    assert_eq!(m.note(0, u), Some("use the API"));
    // Esc cancels without touching the note.
    press(&mut m, "nxyz<esc>");
    assert_eq!(m.note(0, u), Some("use the API"));
    // The note shows in the why drawer.
    press(&mut m, "i");
    let screen = format!("{}", render(&m, 120, 32).backend());
    assert!(screen.contains("use the API"), "{screen}");
    press(&mut m, "<esc>");
    press(&mut m, "NKeep the old names <enter>");
    assert_eq!(m.batch_note.as_deref(), Some("Keep the old names"));
    let v = serde_json::to_value(super::apply::quit_result(
        &m,
        crate::engine::document::PositionEncoding::Utf16,
    ))
    .unwrap();
    assert_eq!(v["note"], "Keep the old names");
    let noted: Vec<&serde_json::Value> = v["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d.get("note").is_some())
        .collect();
    assert_eq!(noted.len(), 1, "{v}");
    assert_eq!(noted[0]["note"], "use the API");
    // An empty note removes it.
    press(
        &mut m,
        "n<bs><bs><bs><bs><bs><bs><bs><bs><bs><bs><bs><enter>",
    );
    assert_eq!(m.note(0, u), None);
}

#[test]
fn at_80x24_the_footer_keeps_help_and_quit_and_help_says_it_scrolls() {
    let (_d, mut m) = demo(Options::default());
    m.size = (80, 24);
    let screen = format!("{}", render(&m, 80, 24).backend());
    let footer = screen.lines().last().unwrap();
    assert!(
        footer.contains("? help") && footer.contains("q quit"),
        "{footer}"
    );
    press(&mut m, "?");
    let screen = format!("{}", render(&m, 80, 24).backend());
    assert!(screen.contains("lines 1–"), "{screen}");
    assert!(screen.contains("↓ j/k scroll"), "{screen}");
    for _ in 0..200 {
        press(&mut m, "j");
    }
    let screen = format!("{}", render(&m, 80, 24).backend());
    assert!(screen.contains("↑ k scrolls up"), "{screen}");
    // Scrolling stops at the end: one `k` moves back up at once.
    let at_end = m.help_scroll;
    press(&mut m, "k");
    assert_eq!(m.help_scroll, at_end - 1);
    insta::assert_snapshot!("help_80x24_end", render(&m, 80, 24).backend());
}

#[test]
fn esc_then_a_key_read_as_alt_key_is_both_keys() {
    use ratatui::crossterm::event::Event;
    let (dir, mut m) = demo(Options::default());
    let root = root(&dir);
    let enc = crate::engine::document::PositionEncoding::Utf16;
    let alt = |c: char| Event::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::ALT));
    // `i`, then Esc and `s` in one read: the drawer closes and the view splits.
    super::app::handle(
        &mut m,
        Event::Key(KeyEvent::from(KeyCode::Char('i'))),
        &root,
        enc,
    );
    assert!(m.drawer);
    super::app::handle(&mut m, alt('s'), &root, enc);
    assert!(!m.drawer, "Esc closed the drawer");
    assert!(m.split, "s was not lost");
    // Esc then `q` from help: help closes, then q quits (nothing decided).
    press(&mut m, "?");
    super::app::handle(&mut m, alt('q'), &root, enc);
    assert_eq!(m.overlay, Overlay::None);
    assert!(m.exit.is_some(), "q was not lost");
}

#[test]
fn the_current_search_match_stands_out_on_the_cursor_row() {
    use ratatui::style::Color;
    let (_d, mut m) = demo(Options::default());
    press(&mut m, "/timeout<enter>");
    let term = render(&m, 120, 32);
    let buf = term.backend().buffer();
    // Find the match on the cursor's row: it keeps its own colours over the cursor background.
    let mut found = 0;
    // The diff's rows (not the header, nor the footer's "match 1/2 for …").
    for y in 1..buf.area.height - 1 {
        let row: String = (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect();
        if let Some(col) = row.find("timeout") {
            let x = row[..col].chars().count() as u16;
            let cell = &buf[(x, y)];
            if cell.bg == Color::LightYellow {
                found += 1;
                assert_eq!(cell.fg, Color::Black);
            } else {
                assert_eq!(cell.bg, Color::Yellow, "other matches are yellow");
            }
        }
    }
    assert_eq!(found, 1, "exactly one current match");
}

#[test]
fn one_numbering_from_1_in_gutter_title_and_drawer() {
    let (_d, mut m) = demo(Options::default());
    // The first file's first edit is #1 in the gutter, the title and the why drawer.
    press(&mut m, "i");
    let screen = format!("{}", render(&m, 120, 32).backend());
    assert!(!screen.contains("#0"), "{screen}");
    let u = m.current_unit().unwrap();
    let label = m.files[0].units[u].label();
    assert!(screen.contains(&format!("edit {label} of ")), "{screen}");
    assert!(screen.contains(&format!("why · edit {label}")), "{screen}");
}

#[test]
fn counts_explain_failed_edits() {
    let (_d, m) = demo(Options::default());
    let screen = format!("{}", render(&m, 120, 32).backend());
    let header = screen.lines().next().unwrap();
    assert!(header.contains("13 edits (2 failed)"), "{header}");
    assert!(header.contains("0/11 decided"), "{header}");
}

#[test]
fn exit_summary_says_what_was_written_and_where_the_json_went() {
    let (dir, mut m) = demo(Options::default());
    let lines = super::summary::lines(&m, "written to /tmp/r.json");
    assert_eq!(
        lines[0],
        "redline: quit without writing; nothing was applied"
    );
    assert!(
        lines[1].contains("0 accepted · 0 rejected · 11 undecided · 2 failed"),
        "{lines:?}"
    );
    assert_eq!(
        lines.last().unwrap(),
        "  JSON result written to /tmp/r.json"
    );
    press(&mut m, "y");
    apply_now(&mut m, &dir);
    let lines = super::summary::lines(&m, "x");
    assert!(
        lines[0].starts_with("redline: wrote 1 accepted edit to 1 file: "),
        "{lines:?}"
    );
}

/// A line whose only change is at column ~150.
fn far_change() -> (tempfile::TempDir, Model) {
    let long = format!("let x = call({}, OLDARG);\n", "a, ".repeat(45));
    let new = long.replace("OLDARG", "NEWARG");
    let batch = serde_json::json!({"files": [{"path": "f.rs", "edits": [
        {"oldText": long.trim_end(), "newText": new.trim_end()}]}]})
    .to_string();
    model_of(&[("f.rs", &format!("fn f() {{\n{long}}}\n"))], &batch)
}

#[test]
fn a_change_far_right_wraps_into_view_by_default() {
    let (_d, m) = far_change();
    assert!(m.wrap, "wrap is on by default");
    let s = screen(&m, 120, 32);
    assert!(s.contains("OLDARG") && s.contains("NEWARG"), "{s}");
    assert!(s.contains("↪"), "continuation rows are marked: {s}");
}

#[test]
fn without_wrap_a_hidden_change_is_marked_and_scrolls_into_view() {
    let (_d, mut m) = far_change();
    press(&mut m, "w");
    assert!(!m.wrap);
    let s = screen(&m, 120, 32);
    assert!(!s.contains("NEWARG"), "{s}");
    let marked: Vec<&str> = s.lines().filter(|l| l.contains("»│")).collect();
    assert_eq!(
        marked.len(),
        2,
        "both changed lines say a change is off-screen: {s}"
    );
    for _ in 0..10 {
        press(&mut m, "l");
    }
    let s = screen(&m, 120, 32);
    assert!(s.contains("OLDARG") && s.contains("NEWARG"), "{s}");
    assert!(
        s.contains("→100 cols"),
        "the title says the view is scrolled: {s}"
    );
    press(&mut m, "hhhhhhhhhh");
    assert_eq!(m.hscroll, 0);
    // The marker is drawn in the emphasis style, so it is seen.
    let term = render(&m, 120, 32);
    let buf = term.backend().buffer();
    let cell = (0..buf.area.height)
        .flat_map(|y| (0..buf.area.width).map(move |x| (x, y)))
        .find(|&p| buf[p].symbol() == "»")
        .map(|p| buf[p].clone())
        .unwrap();
    assert!(
        cell.modifier.contains(ratatui::style::Modifier::BOLD),
        "{cell:?}"
    );
}

#[test]
fn wrapped_rows_keep_the_cursor_row_fully_in_view() {
    // Forty long lines, each changed: with wrapping every row takes several screen lines.
    let mut text = String::new();
    let mut edits = Vec::new();
    for i in 0..40 {
        let line = format!("line {i:02} {}", "word ".repeat(60));
        text.push_str(&line);
        text.push('\n');
        edits.push(serde_json::json!({"oldText": line, "newText": line.replace("word", "WORD")}));
    }
    let batch = serde_json::json!({"files": [{"path": "f.txt", "edits": edits}]}).to_string();
    let (_d, mut m) = model_of(&[("f.txt", &text)], &batch);
    for _ in 0..30 {
        press(&mut m, "]");
        let u = m.current_unit().unwrap();
        let s = screen(&m, 120, 32);
        assert!(
            s.contains(&format!("line {:02} WORD", u)),
            "edit {u}'s new line is on screen: {s}"
        );
    }
}

#[test]
fn the_drawer_shows_every_place_of_an_ambiguous_edit_and_old_to_new_of_a_match() {
    let (_d, mut m) = demo(Options::default());
    // The demo's ambiguous edit is in src/math.rs.
    while m.files[m.cursor.file].display != "src/math.rs" {
        press(&mut m, "}");
    }
    press(&mut m, "]i");
    let s = screen(&m, 120, 40);
    assert!(s.contains("matches 2 places"), "{s}");
    assert!(s.contains("1. line 8") && s.contains("2. line 12"), "{s}");
    assert!(
        s.contains("after:"),
        "each place says what comes before it: {s}"
    );
    // A resolved exact edit shows old → new in the drawer too.
    press(&mut m, "<esc>{i");
    let s = screen(&m, 120, 40);
    assert!(
        s.contains("change") && s.contains("old ") && s.contains("new "),
        "{s}"
    );
}

#[test]
fn the_drawer_scrolls_when_its_content_is_taller() {
    let (_d, mut m) = demo(Options::default());
    m.size = (120, 24);
    while m.files[m.cursor.file].display != "src/math.rs" {
        press(&mut m, "}");
    }
    press(&mut m, "i");
    let s = screen(&m, 120, 24);
    assert!(s.contains("Ctrl-e scrolls down"), "{s}");
    let max = view::drawer_max_scroll(&m);
    assert!(max > 0);
    for _ in 0..max + 5 {
        press(&mut m, "<c-e>");
    }
    assert_eq!(m.drawer_scroll, max, "stops at the end");
    let s = screen(&m, 120, 24);
    assert!(s.contains("Ctrl-y scrolls up"), "{s}");
    press(&mut m, "]");
    assert_eq!(m.drawer_scroll, 0, "another edit starts at the top");
}

#[test]
fn split_keeps_the_cursor_on_its_row() {
    let (_d, mut m) = demo(Options::default());
    press(&mut m, "]]");
    let row = m.cursor.row;
    press(&mut m, "s");
    assert!(m.split);
    assert_eq!(m.cursor.row, row);
    press(&mut m, "s");
    assert_eq!(m.cursor.row, row);
}

#[test]
fn resize_keeps_the_cursor_in_view() {
    let (_d, mut m) = demo(Options::default());
    press(&mut m, "G");
    update(&mut m, Action::Resize(60, 12));
    let h = view::diff_height(&m);
    let d = super::update::display_index(&m);
    assert!(
        d >= m.scroll && d < m.scroll + h,
        "row {d} outside {}..{}",
        m.scroll,
        m.scroll + h
    );
}

#[test]
fn wheel_scrolls_and_keeps_cursor_visible() {
    let (_d, mut m) = demo(Options::default());
    m.size = (80, 14);
    press(&mut m, "}");
    update(&mut m, Action::Wheel(3));
    let h = view::diff_height(&m);
    let d = super::update::display_index(&m);
    assert!(d >= m.scroll && d < m.scroll + h);
}

// ---- screens ----

#[test]
fn snapshot_main() {
    let (_d, mut m) = demo(Options::default());
    press(&mut m, "y");
    insta::assert_snapshot!("main", render(&m, 120, 32).backend());
}

#[test]
fn snapshot_main_failed_and_ambiguous() {
    let (_d, mut m) = demo(Options::default());
    press(&mut m, "}");
    insta::assert_snapshot!("main_math", render(&m, 120, 32).backend());
}

#[test]
fn snapshot_why_normalized() {
    let (_d, mut m) = demo(Options::default());
    press(&mut m, "fi");
    insta::assert_snapshot!("why_normalized", render(&m, 120, 32).backend());
}

#[test]
fn snapshot_why_failed() {
    let (_d, mut m) = demo(Options::default());
    press(&mut m, "}i");
    insta::assert_snapshot!("why_failed", render(&m, 120, 32).backend());
}

#[test]
fn snapshot_split() {
    let (_d, mut m) = demo(Options::default());
    press(&mut m, "s");
    insta::assert_snapshot!("split", render(&m, 120, 32).backend());
}

#[test]
fn snapshot_crlf_tabs_and_no_newline() {
    let (_d, mut m) = demo(Options::default());
    let mut shots = String::new();
    for name in ["settings.ini", "Makefile", "VERSION"] {
        let f = m.files.iter().position(|f| f.display == name).unwrap();
        while m.cursor.file != f {
            press(&mut m, "}");
        }
        let t = render(&m, 100, 14);
        shots.push_str(&format!("{}\n", t.backend()));
    }
    insta::assert_snapshot!("crlf_tabs_no_newline", shots);
}

#[test]
fn snapshot_summary() {
    let (_d, mut m) = demo(Options::default());
    press(&mut m, "yyd}YA");
    insta::assert_snapshot!("apply_summary", render(&m, 120, 32).backend());
}

#[test]
fn snapshot_help() {
    let (_d, mut m) = demo(Options::default());
    press(&mut m, "?");
    insta::assert_snapshot!("help", render(&m, 120, 60).backend());
}

#[test]
fn snapshot_too_small() {
    let (_d, m) = demo(Options::default());
    insta::assert_snapshot!("too_small", render(&m, 40, 10).backend());
}

#[test]
fn snapshot_narrow() {
    let (_d, mut m) = demo(Options::default());
    m.size = (60, 16);
    insta::assert_snapshot!("narrow", render(&m, 60, 16).backend());
}

#[test]
fn monochrome_shows_decisions_by_glyph_and_cursor_by_reverse() {
    use ratatui::style::Modifier;
    let (_d, mut m) = demo(Options {
        monochrome: true,
        ..Options::default()
    });
    press(&mut m, "y");
    let t = render(&m, 120, 32);
    let buf = t.backend().buffer();
    let mut colored = 0;
    let mut reversed = 0;
    for cell in buf.content() {
        if cell.fg != ratatui::style::Color::Reset || cell.bg != ratatui::style::Color::Reset {
            colored += 1;
        }
        if cell.modifier.contains(Modifier::REVERSED) {
            reversed += 1;
        }
    }
    assert_eq!(colored, 0, "NO_COLOR: no colour at all");
    assert!(reversed > 0, "the cursor row is reversed");
    assert!(
        t.backend().to_string().contains('✓'),
        "the accepted edit shows its glyph"
    );
}

#[test]
fn word_emphasis_styles_only_changed_words() {
    let (_d, m) = demo(Options::default());
    let t = render(&m, 120, 32);
    let buf = t.backend().buffer();
    // Find the inserted line of the first edit and check `{name}` is emphasized, `format!` not.
    let area = buf.area;
    let mut found = false;
    for y in 0..area.height {
        let row: String = (0..area.width)
            .map(|x| buf[(x, y)].symbol().to_string())
            .collect();
        if let Some(col) = row.find("format!(\"Hello, {name}!\")") {
            let x0 = row[..col].chars().count() as u16;
            let fmt = &buf[(x0, y)];
            let name_x = x0 + "format!(\"Hello, {".len() as u16;
            let name = &buf[(name_x, y)];
            assert_ne!(fmt.style(), name.style(), "changed word styled apart");
            found = true;
        }
    }
    assert!(found);
}

/// The cell where `needle` starts on screen, if shown.
fn find_cell(buf: &ratatui::buffer::Buffer, needle: &str) -> Option<(u16, u16)> {
    for y in 0..buf.area.height {
        let row: String = (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect();
        if let Some(col) = row.find(needle) {
            return Some((row[..col].chars().count() as u16, y));
        }
    }
    None
}

#[test]
fn syntax_colours_with_word_emphasis_on_top_and_off_when_monochrome() {
    use super::highlight::Palette;
    use ratatui::style::{Color, Modifier};
    let (_d, mut m) = demo(Options::default());
    m.set_syntax(Some(Palette::Dark));
    assert_eq!(m.files[0].display, "src/greet.rs");
    let t = render(&m, 120, 32);
    let buf = t.backend().buffer();
    // A context line: `pub` and `greet` get different syntax colours, no background.
    let (x, y) = find_cell(buf, "pub fn greet").unwrap();
    let (kw, name) = (&buf[(x, y)], &buf[(x + 7, y)]);
    assert!(matches!(kw.fg, Color::Rgb(..)), "{kw:?}");
    assert_ne!(kw.fg, name.fg, "keyword and name differ");
    // The inserted line: a green tint; `{name}` (changed) a stronger one, bold; syntax colours kept.
    let (x, y) = find_cell(buf, "format!(\"Hello, {name}!\")").unwrap();
    let fmt = &buf[(x, y)];
    let changed = &buf[(x + "format!(\"Hello, {".len() as u16, y)];
    assert!(matches!(fmt.bg, Color::Rgb(_, g, _) if g > 0), "{fmt:?}");
    assert!(matches!(fmt.fg, Color::Rgb(..)), "{fmt:?}");
    assert_ne!(
        fmt.bg, changed.bg,
        "the changed word has its own background"
    );
    assert!(changed.modifier.contains(Modifier::BOLD));
    // Light palette: light tints.
    m.set_syntax(Some(Palette::Light));
    let t = render(&m, 120, 32);
    let buf = t.backend().buffer();
    let (x, y) = find_cell(buf, "format!(\"Hello, {name}!\")").unwrap();
    assert!(
        matches!(buf[(x, y)].bg, Color::Rgb(r, _, _) if r > 150),
        "{:?}",
        buf[(x, y)]
    );
    // Monochrome (NO_COLOR): no syntax colours at all.
    let (_d, mut m) = demo(Options {
        monochrome: true,
        ..Options::default()
    });
    m.set_syntax(Some(Palette::Dark));
    assert_eq!(m.syntax, None);
    let t = render(&m, 120, 32);
    let buf = t.backend().buffer();
    let (x, y) = find_cell(buf, "pub fn greet").unwrap();
    assert_eq!(buf[(x, y)].fg, Color::Reset);
}

#[test]
fn clicking_a_file_or_an_edit_selects_it() {
    use ratatui::crossterm::event::{Event, MouseButton, MouseEvent, MouseEventKind};
    let (_d, mut m) = demo(Options::default());
    let click = |m: &Model, x: u16, y: u16| {
        super::app::action(
            m,
            &Event::Mouse(MouseEvent {
                kind: MouseEventKind::Down(MouseButton::Left),
                column: x,
                row: y,
                modifiers: KeyModifiers::NONE,
            }),
        )
        .unwrap()
    };
    // The file list: the third file.
    let s = screen(&m, 120, 32);
    let (x, y) = find_cell(render(&m, 120, 32).backend().buffer(), "README.md").unwrap();
    let a = click(&m, x, y);
    update(&mut m, a);
    assert_eq!(m.files[m.cursor.file].display, "README.md", "{s}");
    // An edit in the diff: click its changed line.
    press(&mut m, "{{");
    assert_eq!(m.files[m.cursor.file].display, "src/greet.rs");
    let (x, y) = find_cell(render(&m, 120, 32).backend().buffer(), "Goodbye, {}.").unwrap();
    let a = click(&m, x, y);
    update(&mut m, a);
    let u = m.current_unit().unwrap();
    assert_eq!(m.files[0].units[u].label(), "#2");
    // A click on the header does nothing.
    let at = m.cursor;
    let a = click(&m, 5, 0);
    update(&mut m, a);
    assert_eq!(m.cursor, at);
}

#[test]
fn next_file_with_undecided_edits_skips_decided_files() {
    let (_d, mut m) = demo(Options::default());
    // Decide the second file entirely, then from the first `>` goes to the third.
    press(&mut m, "}YD");
    let second = 1;
    press(&mut m, "gg");
    while m.cursor.file != 0 {
        press(&mut m, "{");
    }
    assert!(m.file_tally(second).undecided == 0 || m.file_tally(second).decidable() == 0);
    press(&mut m, ">");
    assert!(m.cursor.file > second, "skipped the decided file");
    assert_eq!(
        m.state(m.cursor.file, m.current_unit().unwrap()),
        State::Undecided
    );
    press(&mut m, "<lt>");
    assert_eq!(m.cursor.file, 0);
}

#[test]
fn a_relaxed_match_is_flagged_like_a_normalized_one_and_the_drawer_says_what_was_relaxed() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("a.py"),
        "def f():\n        if x:\n            return 1\n",
    )
    .unwrap();
    let root = Root::open(dir.path(), Limits::default()).unwrap();
    // Indented by 4 where the file has 8: only the relaxed tier places it.
    let req = crate::request::wire::parse_json(
        r#"{"files": [{"path": "a.py", "edits": [{"oldText": "    if x:\n        return 1", "newText": "    if x:\n        return 2"}]}]}"#,
    )
    .unwrap();
    let opts = ResolveOptions {
        tolerance: crate::engine::relaxed::Tolerance::Relaxed,
        ..ResolveOptions::default()
    };
    let plan = plan::resolve(&req, &root, opts).unwrap();
    let mut m = Model::new(
        plan,
        Options {
            accept_exact: true,
            ..Options::default()
        },
    );
    m.size = (120, 32);
    let u = m.current_unit().unwrap();
    assert_eq!(
        m.files[0].units[u].match_kind,
        Some(crate::engine::matcher::MatchKind::Relaxed)
    );
    assert!(
        m.files[0].units[u].normalized(),
        "flagged like a normalized match"
    );
    assert_eq!(m.state(0, u), State::Undecided, "never starts accepted");
    assert!(m.tally().normalized == 1);
    press(&mut m, "i");
    let s = screen(&m, 120, 32);
    assert!(
        s.contains("relaxed — it matched only after: indentation"),
        "{s}"
    );
    assert!(s.contains("#1≈"), "the gutter flags it: {s}");
}

// ---- apply ----

fn root(dir: &tempfile::TempDir) -> Root {
    Root::open(dir.path(), Limits::default()).unwrap()
}

fn apply_now(m: &mut Model, dir: &tempfile::TempDir) {
    press(m, "A");
    let effects = press(m, "<enter>");
    assert_eq!(effects, vec![Effect::Apply]);
    let (applied, stale) = super::apply::apply(
        m,
        &root(dir),
        crate::engine::document::PositionEncoding::Utf16,
    );
    super::update::applied(m, applied, &stale);
}

#[test]
fn apply_writes_only_accepted_edits() {
    let (dir, mut m) = demo(Options::default());
    let before_readme = std::fs::read_to_string(dir.path().join("README.md")).unwrap();
    press(&mut m, "yd"); // greet.rs: accept #0, reject #1
    apply_now(&mut m, &dir);
    let ap = m.applied.as_ref().unwrap();
    assert!(ap.written);
    assert_eq!(ap.exit, crate::error::ExitStatus::Success);
    let greet = std::fs::read_to_string(dir.path().join("src/greet.rs")).unwrap();
    assert!(greet.contains("format!(\"Hello, {name}!\")"));
    assert!(
        greet.contains("format!(\"Goodbye, {}.\", name)"),
        "rejected edit not written"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("README.md")).unwrap(),
        before_readme,
        "undecided not written"
    );
    assert!(
        !dir.path().join("CHANGELOG.md").exists(),
        "undecided create not written"
    );
    let json = serde_json::to_value(&ap.json).unwrap();
    assert_eq!(json["applied"], true);
    assert_eq!(json["written"], true);
    let decisions = json["decisions"].as_array().unwrap();
    let d0 = decisions
        .iter()
        .find(|d| d["path"] == "src/greet.rs" && d["index"] == 0)
        .unwrap();
    assert_eq!(d0["decision"], "accepted");
    assert_eq!(d0["id"], "inline-args");
    let d1 = decisions
        .iter()
        .find(|d| d["path"] == "src/greet.rs" && d["index"] == 1)
        .unwrap();
    assert_eq!(d1["decision"], "rejected");
    let failed = decisions
        .iter()
        .find(|d| d["decision"] == "failed")
        .unwrap();
    assert_eq!(failed["error"]["code"], "not_found");
    let greet_result = json["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "src/greet.rs")
        .unwrap();
    assert_eq!(greet_result["status"], "applied");
    assert_eq!(greet_result["edits"].as_array().unwrap().len(), 1);
    press(&mut m, "q");
    assert_eq!(m.exit, Some(crate::error::ExitStatus::Success));
}

#[test]
fn a_file_changed_on_disk_is_refused_and_nothing_is_written() {
    let (dir, mut m) = demo(Options::default());
    press(&mut m, "Y}Y");
    let greet_path = dir.path().join("src/greet.rs");
    let math_before = std::fs::read_to_string(dir.path().join("README.md")).unwrap();
    std::fs::write(&greet_path, "// changed behind the reviewer's back\n").unwrap();
    apply_now(&mut m, &dir);
    let ap = m.applied.clone().unwrap();
    assert!(!ap.written);
    assert_eq!(ap.exit, crate::error::ExitStatus::Rejected);
    assert_eq!(
        std::fs::read_to_string(&greet_path).unwrap(),
        "// changed behind the reviewer's back\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("README.md")).unwrap(),
        math_before
    );
    assert_eq!(ap.files[0], super::model::FileResult::Stale);
    assert!(m.stale[0]);
    assert_eq!(m.state(0, 0), State::Stale);
    assert_eq!(serde_json::to_value(&ap.json).unwrap()["written"], false);
    insta::assert_snapshot!("results_stale", render(&m, 120, 32).backend());
    // Back to the review: the stale file is left out, the rest can be written.
    press(&mut m, "<esc>");
    assert_eq!(m.overlay, Overlay::None);
    apply_now(&mut m, &dir);
    assert!(m.applied.as_ref().unwrap().written);
    assert_eq!(
        std::fs::read_to_string(&greet_path).unwrap(),
        "// changed behind the reviewer's back\n"
    );
    assert_ne!(
        std::fs::read_to_string(dir.path().join("README.md")).unwrap(),
        math_before
    );
}

#[test]
fn quit_result_writes_nothing_and_lists_decisions() {
    let (dir, mut m) = demo(Options::default());
    press(&mut m, "yqy");
    assert_eq!(m.exit, Some(crate::error::ExitStatus::ReviewQuit));
    let v = serde_json::to_value(super::apply::quit_result(
        &m,
        crate::engine::document::PositionEncoding::Utf16,
    ))
    .unwrap();
    assert_eq!(v["applied"], false);
    assert_eq!(v["written"], false);
    assert!(
        v["decisions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["decision"] == "accepted")
    );
    let greet = std::fs::read_to_string(dir.path().join("src/greet.rs")).unwrap();
    assert!(greet.contains("format!(\"Hello, {}!\", name)"));
}

#[test]
fn decisions_are_in_request_order() {
    // The screen lists the failed edit first, then the others by position; the JSON result
    // lists them by index.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "one\ntwo\n").unwrap();
    let req: crate::request::Request = crate::request::wire::parse_json(
        r#"{"path": "a.txt", "edits": [{"oldText": "two", "newText": "2"}, {"oldText": "zzz", "newText": "x"}, {"oldText": "one", "newText": "1"}]}"#,
    )
    .unwrap();
    let plan = plan::resolve(&req, &root(&dir), ResolveOptions::default()).unwrap();
    let m = Model::new(plan, Options::default());
    let v = serde_json::to_value(super::apply::quit_result(
        &m,
        crate::engine::document::PositionEncoding::Utf16,
    ))
    .unwrap();
    let order: Vec<(i64, &str)> = v["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["index"].as_i64().unwrap(),
                d["decision"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(order, [(0, "undecided"), (1, "failed"), (2, "undecided")]);
}

#[test]
fn nothing_accepted_says_so_without_mentioning_stale_files() {
    let (dir, mut m) = demo(Options::default());
    apply_now(&mut m, &dir);
    let ap = m.applied.as_ref().unwrap();
    assert!(!ap.written);
    assert_eq!(ap.exit, crate::error::ExitStatus::Success);
    let screen = format!("{:?}", render(&m, 120, 32).backend());
    assert!(screen.contains("Nothing to write"), "{screen}");
    assert!(screen.contains("Esc returns to the review."), "{screen}");
    assert!(!screen.contains("stale"), "{screen}");
}

#[test]
fn snapshot_results() {
    let (dir, mut m) = demo(Options::default());
    press(&mut m, "Yd");
    apply_now(&mut m, &dir);
    insta::assert_snapshot!("results", render(&m, 120, 32).backend());
}

#[test]
fn filter_narrows_the_file_list_and_esc_clears_it() {
    let (_d, mut m) = demo(Options::default());
    let all = m.listed_files();
    assert!(all.len() > 1);
    let last = *all.last().unwrap();
    let name = m.files[last].display.clone();
    // Live while typing: the text narrows the list before Enter.
    press(&mut m, "|");
    for c in name.chars() {
        let ev = KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE);
        if let Some(a) = on_key(&m, &ev) {
            update(&mut m, a);
        }
    }
    assert!(m.listed_files().contains(&last));
    assert!(m.listed_files().len() < all.len());
    // Enter keeps the filter and moves to a listed file.
    press(&mut m, "<enter>");
    assert_eq!(m.filter, name);
    assert!(m.listed_files().contains(&m.cursor.file));
    // `}` and `{` step through the listed files only.
    let here = m.cursor.file;
    press(&mut m, "}");
    assert_eq!(m.cursor.file, here);
    assert_eq!(m.status.as_deref(), Some("last file"));
    // `/` still searches the diff.
    press(&mut m, "/");
    assert_eq!(m.prompt.as_ref().map(|p| p.kind), Some(PromptKind::Search));
    press(&mut m, "<esc>");
    assert_eq!(m.filter, name, "Esc on the search prompt leaves the filter");
    // Esc clears the filter.
    press(&mut m, "<esc>");
    assert!(m.filter.is_empty());
    assert_eq!(m.listed_files(), all);
    // Esc on the filter prompt clears it too; nothing matching says so.
    press(&mut m, "|zzzz-no-such<enter>");
    assert!(m.listed_files().is_empty());
    assert!(m.status.as_deref().unwrap_or("").contains("no file path"));
    press(&mut m, "|<esc>");
    assert!(m.filter.is_empty());
}

#[test]
fn snapshot_filtered_file_list() {
    let (_d, mut m) = demo(Options::default());
    let name = m.files[m.files.len() - 1].display.clone();
    let q: String = name
        .chars()
        .rev()
        .take(4)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    press(&mut m, "|");
    for c in q.chars() {
        update(&mut m, Action::Input(c));
    }
    press(&mut m, "<enter>");
    insta::assert_snapshot!("filtered_file_list", render(&m, 120, 32).backend());
}

#[test]
fn z_collapses_a_file_hiding_its_rows_and_expands_it_again() {
    let (_d, mut m) = demo(Options::default());
    let f = m.cursor.file;
    let row = m.cursor.row;
    press(&mut m, "z");
    assert!(m.is_collapsed(f));
    // Hidden rows take no moves and no decisions; the whole file still can.
    press(&mut m, "jy");
    assert_eq!(m.cursor.row, row);
    assert_eq!(m.file_tally(f).decided(), 0);
    assert!(m.status.as_deref().unwrap_or("").contains("z expands"));
    assert!(screen(&m, 120, 32).contains("▸ collapsed"));
    // Edit jumps skip the collapsed file's edits and leave it collapsed.
    press(&mut m, "]");
    assert_ne!(m.cursor.file, f);
    assert!(m.is_collapsed(f));
    press(&mut m, "{");
    assert_eq!(m.cursor.file, f);
    press(&mut m, "Y");
    assert_eq!(m.file_tally(f).undecided, 0);
    // `Y` advances; come back to the collapsed file.
    while m.cursor.file != f {
        press(&mut m, "{");
    }
    press(&mut m, "z");
    assert!(!m.is_collapsed(f));
    assert!(!screen(&m, 120, 32).contains("▸ collapsed"));
    press(&mut m, "u");
    press(&mut m, "y");
    assert_eq!(m.file_tally(f).decided(), 1);
}

#[test]
fn snapshot_collapsed_file() {
    let (_d, mut m) = demo(Options::default());
    press(&mut m, "}z");
    insta::assert_snapshot!("collapsed_file", render(&m, 120, 32).backend());
}
