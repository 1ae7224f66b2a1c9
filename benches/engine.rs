//! Engine scaling benchmark (issue 2 §7): `cargo bench --bench engine`.
//!
//! Prints, for generated files of 1 MB and 10 MB, the time to resolve a batch end to end
//! (read, decode, normalize, match, splice, diff, hash: `service::run` in dry-run mode) with 10
//! and 1,000 edits, exact and normalized, and the peak heap it took, measured by a counting
//! allocator. Timings are the median of several runs. Nothing here asserts: it reports.

use redline::{EditSpec, FileRequest, InputKind, Mode, Request, Settings};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

struct Counting;
static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            let now = CURRENT.fetch_add(l.size(), Ordering::Relaxed) + l.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) };
        CURRENT.fetch_sub(l.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        let q = unsafe { System.realloc(p, l, new) };
        if !q.is_null() {
            if new > l.size() {
                let now = CURRENT.fetch_add(new - l.size(), Ordering::Relaxed) + new - l.size();
                PEAK.fetch_max(now, Ordering::Relaxed);
            } else {
                CURRENT.fetch_sub(l.size() - new, Ordering::Relaxed);
            }
        }
        q
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// A source-like file of about `size` bytes; line i holds `fn item_i` and a smart-quoted string.
fn file(size: usize) -> (String, usize) {
    let mut s = String::with_capacity(size + 100);
    let mut i = 0;
    while s.len() < size {
        s.push_str(&format!(
            "fn item_{i}(x: u64) -> u64 {{\n    let label = \u{201C}value {i}\u{201D}; // note \u{2014} {i}\n    x * {i} + 1\n}}\n\n"
        ));
        i += 1;
    }
    (s, i)
}

/// Edits whose oldText has a typo: not found, so every one gets candidate hints.
fn failing(items: usize, n: usize) -> Vec<EditSpec> {
    let step = (items / n).max(1);
    (0..n)
        .map(|k| {
            let i = k * step;
            EditSpec::new(
                format!("fn item_{i}(x: u46) -> u64 {{\n    let label = \"valeu {i}\";"),
                "// gone",
            )
        })
        .collect()
}

fn edits(items: usize, n: usize, normalized: bool) -> Vec<EditSpec> {
    let step = (items / n).max(1);
    (0..n)
        .map(|k| {
            let i = k * step;
            let old = if normalized {
                format!("let label = \"value {i}\"; // note - {i}\n")
            } else {
                format!("fn item_{i}(x: u64) -> u64 {{")
            };
            let new = format!("{old} // edited");
            EditSpec::new(old, new)
        })
        .collect()
}

/// Edits that only the relaxed tier finds: two lines of a function body sent without their
/// four-space indentation (so `indentation`, and newText re-indented).
fn relaxed_edits(items: usize, n: usize) -> Vec<EditSpec> {
    let step = (items / n).max(1);
    (0..n)
        .map(|k| {
            let i = k * step;
            EditSpec::new(
                format!("let label = \u{201C}value {i}\u{201D}; // note \u{2014} {i}\nx * {i} + 1"),
                format!("let label = \"value {i}\";\nx * {i} + 2"),
            )
        })
        .collect()
}

struct Sample {
    median: Duration,
    peak: usize,
}

fn measure(dir: &std::path::Path, req: &Request, runs: usize) -> Sample {
    measure_expect(dir, req, runs, true)
}

fn measure_expect(dir: &std::path::Path, req: &Request, runs: usize, ok: bool) -> Sample {
    let settings = Settings {
        root: dir.to_path_buf(),
        ..Settings::default()
    };
    let mut times = Vec::new();
    let mut peak = 0;
    for _ in 0..runs {
        let base = CURRENT.load(Ordering::Relaxed);
        PEAK.store(base, Ordering::Relaxed);
        let t = Instant::now();
        let run = redline::run(req, Mode::DryRun, &settings);
        let el = t.elapsed();
        if run.response.as_ref().map(|r| r.ok).unwrap_or(false) != ok {
            panic!(
                "bench batch must resolve: {}",
                run.to_json()
                    .to_string()
                    .chars()
                    .take(600)
                    .collect::<String>()
            );
        }
        drop(run);
        times.push(el);
        peak = peak.max(PEAK.load(Ordering::Relaxed) - base);
    }
    times.sort();
    Sample {
        median: times[times.len() / 2],
        peak,
    }
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    // `cargo bench --bench engine -- [exact|hints|relaxed|long|hostile|codex|many]…` runs
    // only those parts.
    let parts: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let want = |p: &str| parts.is_empty() || parts.iter().any(|a| a == p);
    let dir = tempfile::tempdir().expect("temp dir");
    println!(
        "redline engine benchmark (service::run, dry run; median of runs; peak = heap high-water mark)"
    );
    println!(
        "{:>8} {:>6} {:>11} {:>12} {:>12} {:>10}",
        "file", "edits", "path", "time", "peak heap", "peak/file"
    );
    let sizes: &[usize] = if quick {
        &[1 << 20]
    } else {
        &[1 << 20, 10 << 20]
    };
    let mut rows = Vec::new();
    for &size in sizes.iter().filter(|_| want("exact") || want("relaxed")) {
        let (text, items) = file(size);
        let name = format!("f{size}.rs");
        std::fs::write(dir.path().join(&name), &text).expect("write");
        for &n in &[10usize, 1000] {
            for &normalized in &[false, true] {
                let mut fr = FileRequest::new(name.clone());
                fr.edits = edits(items, n, normalized);
                let req = Request {
                    files: vec![fr],
                    documents: vec![],
                    dry_run: true,
                };
                let s = measure(dir.path(), &req, if size > (4 << 20) { 5 } else { 9 });
                let kind = if normalized { "normalized" } else { "exact" };
                println!(
                    "{:>7.1}M {:>6} {:>11} {:>10.1}ms {:>10.1}MB {:>9.2}x",
                    text.len() as f64 / 1048576.0,
                    n,
                    kind,
                    s.median.as_secs_f64() * 1000.0,
                    s.peak as f64 / 1048576.0,
                    s.peak as f64 / text.len() as f64
                );
                rows.push((size, n, normalized, s.median));
            }
        }
    }
    // Hints: every edit not found, each with up to 3 scored candidates.
    for &size in sizes.iter().filter(|_| want("hints")) {
        let (text, items) = file(size);
        let name = format!("f{size}.rs");
        std::fs::write(dir.path().join(&name), &text).expect("write");
        for &n in &[10usize, 1000] {
            let mut fr = FileRequest::new(name.clone());
            fr.edits = failing(items, n);
            let req = Request {
                files: vec![fr],
                documents: vec![],
                dry_run: true,
            };
            let s = measure_expect(
                dir.path(),
                &req,
                if size > (4 << 20) { 5 } else { 9 },
                false,
            );
            println!(
                "{:>7.1}M {:>6} {:>11} {:>10.1}ms {:>10.1}MB {:>9.2}x",
                text.len() as f64 / 1048576.0,
                n,
                "not found",
                s.median.as_secs_f64() * 1000.0,
                s.peak as f64 / 1048576.0,
                s.peak as f64 / text.len() as f64
            );
            rows.push((size, n + 1, false, s.median));
        }
    }
    // The relaxed tier (SPEC §3b): 1,000 edits that exact and normalized matching miss.
    for &size in sizes.iter().filter(|_| want("relaxed")) {
        let (text, items) = file(size);
        let name = format!("f{size}.rs");
        std::fs::write(dir.path().join(&name), &text).expect("write");
        let mut fr = FileRequest::new(name.clone());
        fr.edits = relaxed_edits(items, 1000);
        let req = Request {
            files: vec![fr],
            documents: vec![],
            dry_run: true,
        };
        let s = measure(dir.path(), &req, if size > (4 << 20) { 5 } else { 9 });
        let request_bytes: usize = req.files[0]
            .edits
            .iter()
            .map(|e| e.old_text().len() + e.new_text().len())
            .sum();
        println!(
            "{:>7.1}M {:>6} {:>11} {:>10.1}ms {:>10.1}MB {:>9.2}x   (peak / (file + request) = {:.2}x)",
            text.len() as f64 / 1048576.0,
            1000,
            "relaxed",
            s.median.as_secs_f64() * 1000.0,
            s.peak as f64 / 1048576.0,
            s.peak as f64 / text.len() as f64,
            s.peak as f64 / (text.len() + request_bytes) as f64
        );
        if let Some(exact) = rows
            .iter()
            .find(|r| r.0 == size && r.1 == 1000 && !r.2)
            .map(|r| r.3.as_secs_f64())
        {
            println!(
                "{:.0} MB: 1000 relaxed vs 1000 exact edits = {:.2}x (target <= 2x)",
                size as f64 / 1048576.0,
                s.median.as_secs_f64() / exact
            );
        }
    }
    let get = |size, n, norm| {
        rows.iter()
            .find(|r| r.0 == size && r.1 == n && r.2 == norm)
            .map(|r| r.3.as_secs_f64())
    };
    for &size in sizes {
        if let (Some(e10), Some(e1000), Some(n1000)) = (
            get(size, 10, false),
            get(size, 1000, false),
            get(size, 1000, true),
        ) {
            println!(
                "{:.0} MB: 1000 vs 10 exact edits = {:.2}x (target <= 3x); 1000 normalized vs exact = {:.2}x (target <= 2x)",
                size as f64 / 1048576.0,
                e1000 / e10,
                n1000 / e1000
            );
        }
    }
    for &size in sizes {
        if let (Some(ok), Some(bad)) = (get(size, 1000, false), get(size, 1001, false)) {
            println!(
                "{:.0} MB: 1000 failing edits with hints = {:.2}x the time of 1000 resolved ones",
                size as f64 / 1048576.0,
                bad / ok
            );
        }
    }
    if let (Some(a), Some(b)) = (get(1 << 20, 1000, false), get(10 << 20, 1000, false)) {
        println!(
            "10x larger file, 1000 exact edits: {:.2}x the time (target ~10x)",
            b / a
        );
    }
    long_old_texts(dir.path(), quick, &want);
}

fn request(name: &str, edits: Vec<EditSpec>) -> Request {
    let mut fr = FileRequest::new(name.to_string());
    fr.edits = edits;
    Request {
        files: vec![fr],
        documents: vec![],
        dry_run: true,
    }
}

fn request_size(req: &Request) -> usize {
    req.files
        .iter()
        .flat_map(|f| &f.edits)
        .map(|e| e.old_text().len() + e.new_text().len() + 16)
        .sum()
}

/// Issue 8 §4 and issue 14 §2: long and periodic `oldText`, and the shapes that used to be
/// superlinear in matching and hints. Each row gives the time, the peak heap and the peak over
/// (file + request); the first two also their time over the exact path (10 short exact edits)
/// on the same file.
fn long_old_texts(dir: &std::path::Path, quick: bool, want: &dyn Fn(&str) -> bool) {
    println!();
    println!(
        "{:<34} {:>8} {:>8} {:>10} {:>10} {:>12} {:>10}",
        "long or periodic oldText",
        "file",
        "request",
        "time",
        "peak heap",
        "peak/(f+r)",
        "vs exact"
    );
    let row = |label: &str, flen: usize, req: &Request, ok: bool, base: Option<f64>| {
        let s = measure_expect(dir, req, 3, ok);
        let rlen = request_size(req);
        let t = s.median.as_secs_f64();
        println!(
            "{:<34} {:>7.1}M {:>7.2}M {:>8.1}ms {:>8.1}MB {:>11.2}x {:>10}",
            label,
            flen as f64 / 1048576.0,
            rlen as f64 / 1048576.0,
            t * 1000.0,
            s.peak as f64 / 1048576.0,
            s.peak as f64 / (flen + rlen) as f64,
            base.map(|b| format!("{:.2}x", t / b)).unwrap_or_default()
        );
        t
    };
    if want("long") {
        long_found(dir, quick, &row);
    }
    if want("hostile") {
        hostile(dir, &row);
    }
    if want("codex") {
        codex(dir, &row);
    }
    if want("many") {
        many(dir, quick, &row);
    }
}

/// Issue 8: the shapes that stayed super-linear in matching after §4. Many distinct long
/// `oldText`s (each was one `memmem` scan of the file), and a highly repetitive file where every
/// short or long `oldText` occurs at every period (each occurrence was reported and counted).
fn many(dir: &std::path::Path, quick: bool, row: &Row<'_>) {
    let size = if quick { 1 << 20 } else { 10 << 20 };
    let (text, items) = file(size);
    let name = "many.rs";
    let exact = exact_row(dir, name, &text, items, row);
    // 1,000 distinct oldTexts of about 4 KiB: 43 whole items each, every 100th item on.
    let starts: Vec<usize> = std::iter::once(0)
        .chain(text.match_indices("\nfn item_").map(|(i, _)| i + 1))
        .collect();
    let count = if quick { 100 } else { 1_000 };
    let step = (starts.len() / count).max(44);
    let olds: Vec<String> = (0..count)
        .filter(|k| (k * step + 43) < starts.len())
        .map(|k| text[starts[k * step]..starts[k * step + 43]].to_string())
        .collect();
    let found: Vec<EditSpec> = olds
        .iter()
        .map(|o| EditSpec::new(o.clone(), "// replaced\n"))
        .collect();
    row(
        &format!("{} distinct ~4 KiB oldTexts, found", olds.len()),
        text.len(),
        &request(name, found),
        true,
        Some(exact),
    );
    let missing: Vec<EditSpec> = olds
        .iter()
        .map(|o| EditSpec::new(o.replacen("x * ", "x ** ", 1), "// replaced\n"))
        .collect();
    row(
        &format!("{} distinct ~4 KiB oldTexts, not found", olds.len()),
        text.len(),
        &request(name, missing),
        false,
        Some(exact),
    );
    // "ab" × 5,000,000, and 1,000 oldTexts "ab" × (i + 2), or × (1,100 + i): all ambiguous.
    let reps = if quick { 500_000 } else { 5_000_000 };
    let ab = "ab".repeat(reps);
    std::fs::write(dir.join("ab.txt"), &ab).expect("write");
    let n = if quick { 100 } else { 1_000 };
    for (label, base) in [("short", 2), ("long", 1_100)] {
        let edits: Vec<EditSpec> = (0..n)
            .map(|i| EditSpec::new("ab".repeat(base + i), "x"))
            .collect();
        row(
            &format!("`ab` file, {n} {label} `ab`× oldTexts"),
            ab.len(),
            &request("ab.txt", edits),
            false,
            None,
        );
    }
    drop(ab);
    // 1,000,000 identical lines, 1,000 oldTexts of 2..1,001 of them: ambiguous by §3; and
    // the same lines indented in the file, so that only the relaxed tier (indentation) sees
    // them, again at every line.
    let lines = if quick { 100_000 } else { 1_000_000 };
    for (label, indent) in [("", ""), (", relaxed", "    ")] {
        let file_text = format!("{indent}same line of text\n").repeat(lines);
        std::fs::write(dir.join("lines.txt"), &file_text).expect("write");
        let edits: Vec<EditSpec> = (0..n)
            .map(|i| EditSpec::new("same line of text\n".repeat(i + 2), "x\n"))
            .collect();
        row(
            &format!("{lines} same lines, {n} of them{label}"),
            file_text.len(),
            &request("lines.txt", edits),
            false,
            None,
        );
    }
}

/// Issue 12: a Codex patch of 200 hunks (3 context lines each side of one changed line) on a
/// 200,000-line file, located by the dialect's line matcher.
fn codex(dir: &std::path::Path, row: &Row<'_>) {
    let lines = 200_000;
    let text: String = (0..lines)
        .map(|i| format!("    let v{i} = compute({i}, {});\n", i % 7))
        .collect();
    std::fs::write(dir.join("codex.rs"), &text).expect("write");
    let mut patch = String::from("*** Begin Patch\n*** Update File: codex.rs\n");
    for h in 0..200 {
        let at = h * (lines / 200) + 500;
        patch.push_str("@@\n");
        for i in at - 3..at {
            patch.push_str(&format!("     let v{i} = compute({i}, {});\n", i % 7));
        }
        patch.push_str(&format!("-    let v{at} = compute({at}, {});\n", at % 7));
        patch.push_str(&format!("+    let v{at} = compute({at}, 99);\n"));
        for i in at + 1..at + 4 {
            patch.push_str(&format!("     let v{i} = compute({i}, {});\n", i % 7));
        }
    }
    patch.push_str("*** End Patch\n");
    let mut req = redline::parse(&patch, InputKind::Patch).expect("patch parses");
    req.dry_run = true;
    row(
        "Codex: 200 hunks, 200,000 lines",
        text.len(),
        &req,
        true,
        None,
    );
}

/// One row of the long-`oldText` table: label, file length, request, whether it resolves, and
/// the exact path's time to compare with; returns the median time.
type Row<'a> = dyn Fn(&str, usize, &Request, bool, Option<f64>) -> f64 + 'a;

/// Writes `text` as `name` and times the exact path on it (10 short edits): the time a long
/// `oldText` on the same file compares with.
fn exact_row(dir: &std::path::Path, name: &str, text: &str, items: usize, row: &Row<'_>) -> f64 {
    std::fs::write(dir.join(name), text).expect("write");
    row(
        "exact path: 10 short edits",
        text.len(),
        &request(name, edits(items, 10, false)),
        true,
        None,
    )
}

fn long_found(dir: &std::path::Path, quick: bool, row: &Row<'_>) {
    // 8 MB of oldText (the middle half of a 16 MB file, whole lines), replaced by one line.
    let size = if quick { 4 << 20 } else { 16 << 20 };
    let (text, items) = file(size);
    let name = "long.rs";
    let exact = exact_row(dir, name, &text, items, row);
    let from = text[..text.len() / 4].rfind("\nfn ").map_or(0, |i| i + 1);
    let to = text[..from + text.len() / 2]
        .rfind("\nfn ")
        .map_or(text.len(), |i| i + 1);
    let old = text[from..to].to_string();
    row(
        &format!("{:.0} MB oldText, found", old.len() as f64 / 1048576.0),
        text.len(),
        &request(name, vec![EditSpec::new(old, "// replaced\n")]),
        true,
        Some(exact),
    );
    // A periodic 50 KB oldText, found once, in a 10 MB file.
    let size = if quick { 1 << 20 } else { 10 << 20 };
    let (mut text, items) = file(size);
    let periodic = "ab".repeat(25_000);
    text.push_str(&format!("\n{periodic}\n"));
    let name = "periodic.rs";
    let exact = exact_row(dir, name, &text, items, row);
    row(
        "periodic 50 KB oldText, found",
        text.len(),
        &request(name, vec![EditSpec::new(periodic.clone(), "x")]),
        true,
        Some(exact),
    );
}

fn hostile(dir: &std::path::Path, row: &Row<'_>) {
    // Issue 14's shapes, all not found (hints included), on a 1 MB source file.
    let (text, _) = file(1 << 20);
    let name = "hostile.rs";
    std::fs::write(dir.join(name), &text).expect("write");
    let cases: Vec<(&str, Vec<EditSpec>)> = vec![
        (
            "16,000 lines of `    },`",
            vec![EditSpec::new("    },\n".repeat(16_000), "x")],
        ),
        (
            "40 KB of `z` + ` hello`",
            vec![EditSpec::new(format!("{} hello", "z".repeat(40_000)), "x")],
        ),
        (
            "1 MB of one repeated line",
            vec![EditSpec::new(
                "    let x = compute(1);\n".repeat(45_000),
                "x",
            )],
        ),
        (
            "1 MB of varied source",
            vec![EditSpec::new(file(1 << 20).0.replace("fn ", "fun "), "x")],
        ),
        (
            "\"ab\" x 10,000 on a 4-byte file",
            vec![EditSpec::new("ab".repeat(10_000), "x")],
        ),
        (
            "10,000 failing edits (the default --max-edits)",
            (0..10_000)
                .map(|i| EditSpec::new(format!("missing_{i}()"), format!("found_{i}()")))
                .collect(),
        ),
    ];
    std::fs::write(dir.join("tiny.rs"), "abab").expect("write");
    for (label, edits) in cases {
        let (name, flen) = if label.contains("4-byte") {
            ("tiny.rs", 4)
        } else {
            (name, text.len())
        };
        row(label, flen, &request(name, edits), false, None);
    }
}
