//! Reviewer speed (issue 4 §8): `cargo bench --bench review`.
//!
//! - `first_frame`: a batch of 2,000 edits across 200 files, from request to the first drawn
//!   frame (resolve + model + syntax highlighting + draw at 120×32); budget 100 ms.
//! - `keystroke/*`: one key through `update` plus a full redraw on that batch, highlighting on;
//!   budget 4 ms.
//! - `harness_writes`: `write` calls that reach the terminal for the first frame and per key, in
//!   harness mode (the UI on `/dev/tty` through the reviewer's frame buffer); budget 1 per frame.
//! - `scroll_50k`: a page down plus redraw in the diff of a 50,000-line file; it must not
//!   depend on the file's size (rows are built once, only visible ones are drawn).

use criterion::{Criterion, criterion_group, criterion_main};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;
use ratatui::{TerminalOptions, Viewport};
use redline::bench::{Action, Model, cursor_and_scroll, frame_writer, rows, update};
use redline::write::{Limits, Root};
use redline::{EditSpec, FileRequest, Request};
use std::hint::black_box;
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

const FILES: usize = 200;
const EDITS_PER_FILE: usize = 10;

/// 200 files of 120 lines, 10 edits each (a tenth of them normalized), on disk.
fn batch() -> (tempfile::TempDir, Request) {
    let dir = tempfile::tempdir().unwrap();
    let mut req = Request::default();
    for f in 0..FILES {
        let path = format!("src/mod{f:03}/file{f:03}.rs");
        let mut text = String::new();
        for l in 0..120 {
            text.push_str(&format!(
                "    let value_{f}_{l} = compute(\"input {l}\", {l});\n"
            ));
        }
        std::fs::create_dir_all(dir.path().join(format!("src/mod{f:03}"))).unwrap();
        std::fs::write(dir.path().join(&path), &text).unwrap();
        let mut fr = FileRequest::new(path);
        for e in 0..EDITS_PER_FILE {
            let l = e * 12 + 3;
            let quote = if e == 0 { '“' } else { '"' };
            let close = if e == 0 { '”' } else { '"' };
            fr.edits.push(EditSpec::new(
                format!("    let value_{f}_{l} = compute({quote}input {l}{close}, {l});"),
                format!("    let value_{f}_{l} = compute_checked(\"input {l}\", {l})?;"),
            ));
        }
        req.files.push(fr);
    }
    (dir, req)
}

/// The reviewer over `req` beneath `dir`, laid out for 120 × 32, dark syntax palette.
fn model(dir: &tempfile::TempDir, req: &Request) -> Model {
    let root = Root::open(dir.path(), Limits::default()).unwrap();
    redline::bench::model(&root, req, 120, 32).unwrap()
}

/// Counts `write` calls, as `strace -e write` would on the terminal's file.
#[derive(Clone, Default)]
struct Writes(Arc<AtomicUsize>);

impl Write for Writes {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.fetch_add(1, Ordering::Relaxed);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Writes per frame in harness mode: the same backend and frame buffer the reviewer uses on
/// `/dev/tty`, over a counting writer.
fn harness_writes() {
    let (dir, req) = batch();
    let mut m = model(&dir, &req);
    let w = Writes::default();
    let backend = CrosstermBackend::new(frame_writer(w.clone()));
    let mut term = Terminal::with_options(
        backend,
        TerminalOptions {
            viewport: Viewport::Fixed(Rect::new(0, 0, 120, 32)),
        },
    )
    .unwrap();
    term.draw(|f| redline::bench::draw(&m, f)).unwrap();
    let first = w.0.swap(0, Ordering::Relaxed);
    let keys = [
        Action::Down,
        Action::NextEdit,
        Action::Accept,
        Action::NextFile,
        Action::Why,
        Action::Split,
        Action::PageDown,
        Action::Undo,
    ];
    let mut most = 0;
    for a in keys.iter().cycle().take(200) {
        update(&mut m, *a);
        term.draw(|f| redline::bench::draw(&m, f)).unwrap();
        most = most.max(w.0.swap(0, Ordering::Relaxed));
    }
    println!(
        "harness_writes: first frame {first} write(s); at most {most} per key over 200 keys (budget 1)"
    );
}

fn draw(term: &mut Terminal<TestBackend>, m: &Model) {
    term.draw(|f| redline::bench::draw(m, f)).unwrap();
}

fn first_frame(c: &mut Criterion) {
    harness_writes();
    let (dir, req) = batch();
    let mut g = c.benchmark_group("review_2000_edits_200_files");
    g.sample_size(20).measurement_time(Duration::from_secs(8));
    g.bench_function("first_frame", |b| {
        b.iter(|| {
            let m = model(&dir, &req);
            let mut term = Terminal::new(TestBackend::new(120, 32)).unwrap();
            draw(&mut term, &m);
            black_box(term);
        })
    });
    let mut term = Terminal::new(TestBackend::new(120, 32)).unwrap();
    let mut m = model(&dir, &req);
    for (name, keys) in [
        ("keystroke/j", &[Action::Down, Action::Up][..]),
        (
            "keystroke/next_edit",
            &[Action::NextEdit, Action::PrevEdit][..],
        ),
        ("keystroke/next_undecided", &[Action::NextUndecided][..]),
        ("keystroke/accept_undo", &[Action::Accept, Action::Undo][..]),
        (
            "keystroke/next_file",
            &[Action::NextFile, Action::PrevFile][..],
        ),
    ] {
        g.bench_function(name, |b| {
            let mut i = 0;
            b.iter(|| {
                update(&mut m, keys[i % keys.len()]);
                draw(&mut term, &m);
                i += 1;
            })
        });
    }
    g.finish();
}

fn scroll_50k(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    for l in 0..50_000 {
        text.push_str(&format!(
            "line {l}: the quick brown fox jumps over the lazy dog\n"
        ));
    }
    let mut fr = FileRequest::new("big.txt");
    fr.content = Some(text);
    let req = Request {
        files: vec![fr],
        ..Request::default()
    };
    let mut m = model(&dir, &req);
    let mut term = Terminal::new(TestBackend::new(120, 32)).unwrap();
    assert!(rows(&m, 0) >= 50_000);
    let mut g = c.benchmark_group("review_50k_line_file");
    g.sample_size(50);
    g.bench_function("scroll_page_down", |b| {
        b.iter(|| {
            if cursor_and_scroll(&m).0 + 40 >= rows(&m, 0) {
                update(&mut m, Action::Top);
            }
            update(&mut m, Action::PageDown);
            draw(&mut term, &m);
        })
    });
    g.bench_function("wheel", |b| {
        b.iter(|| {
            if cursor_and_scroll(&m).1 + 40 >= rows(&m, 0) {
                update(&mut m, Action::Top);
            }
            update(&mut m, Action::Wheel(3));
            draw(&mut term, &m);
        })
    });
    g.finish();
}

criterion_group!(benches, first_frame, scroll_50k);
criterion_main!(benches);
