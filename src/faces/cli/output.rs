//! Everything the binary prints: data on stdout, `error:`/`hint:` diagnostics on stderr.
//!
//! A closed stdout (a pipe into `head`) ends output quietly.

use super::{ColorArg, Format};
use crate::engine::plan::FileError;
use crate::error::ExitStatus;
use crate::report::response::{FileStatus, RequestFailure, Response};
use crate::request::RequestError;
use crate::service::Run;
use anstyle::{AnsiColor, Style};
use std::io::{IsTerminal, Write};

pub(super) fn stdout_is_terminal() -> bool {
    std::io::stdout().is_terminal()
}

/// Whether to colour stdout: `always`, `never`, or for `auto` what the environment says
/// ([`env_color`]) on a terminal.
pub(super) fn use_color(arg: ColorArg) -> bool {
    match arg {
        ColorArg::Always => true,
        ColorArg::Never => false,
        ColorArg::Auto => env_color(stdout_is_terminal()),
    }
}

/// Colour under `--color auto`, by the conventions users set (as ripgrep and cargo read them):
/// `NO_COLOR` (non-empty) turns it off; else `CLICOLOR_FORCE` (non-empty, not `0`) turns it on
/// even off a terminal; else `CLICOLOR=0` or `TERM=dumb` turn it off; else a terminal has it.
pub(super) fn env_color(terminal: bool) -> bool {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if var("NO_COLOR").is_some() {
        return false;
    }
    if var("CLICOLOR_FORCE").is_some_and(|v| v != "0") {
        return true;
    }
    if var("CLICOLOR").is_some_and(|v| v == "0") || var("TERM").is_some_and(|v| v == "dumb") {
        return false;
    }
    terminal
}

/// Writes to stdout, ignoring a closed pipe.
pub(super) fn out(text: &str) {
    let mut o = std::io::stdout().lock();
    let _ = o.write_all(text.as_bytes()).and_then(|_| o.flush());
}

/// `text` and a newline on stdout (written as they are: a big report is not copied again).
pub(super) fn line(text: &str) {
    let mut o = std::io::stdout().lock();
    let _ = o
        .write_all(text.as_bytes())
        .and_then(|_| o.write_all(b"\n"))
        .and_then(|_| o.flush());
}

/// A run's pretty JSON and a newline, serialized straight into stdout (a response as big as
/// its request is not built as a string first).
pub(super) fn run_json(run: &Run) {
    match &run.response {
        Ok(r) => serialized(r),
        Err(f) => serialized(f),
    }
}

/// `value`'s pretty JSON and a newline, serialized straight into stdout (not through a
/// `serde_json::Value`, which weighs several hundred bytes a member, nor a string). Handed to
/// stdout's line buffer 64 KiB at a time: each hand-over costs it two `write`s (the lines, then
/// the part line it kept), which with 8 KiB came to ~1,200 system calls for the 5.8 MB response
/// to 10,000 edits (~180 now).
pub(super) fn serialized(value: &impl serde::Serialize) {
    let mut o = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let mut json = serde_json::Serializer::with_formatter(&mut o, Pretty::default());
    let _ = value
        .serialize(&mut json)
        .map_err(std::io::Error::from)
        .and_then(|_| o.write_all(b"\n"))
        .and_then(|_| o.flush());
}

/// serde_json's pretty printing (two spaces a level), with each line break, the comma before
/// it and the next line's indentation handed over in one write, not one per level: the 10,000
/// edit records of a big response are ~300,000 lines.
#[derive(Default)]
struct Pretty {
    level: usize,
    has_value: bool,
}

/// A comma, a line break and the deepest indentation [`Pretty`] writes at once.
const BREAK: &[u8; 2 + 2 * 32] =
    b",\n                                                                ";

impl Pretty {
    /// A line break (after a comma unless `first`) and the indentation of the current level.
    fn line<W: ?Sized + std::io::Write>(&self, w: &mut W, first: bool) -> std::io::Result<()> {
        let from = usize::from(first);
        match BREAK.get(from..2 + 2 * self.level) {
            Some(b) => w.write_all(b),
            None => {
                w.write_all(&BREAK[from..2])?;
                (0..self.level).try_for_each(|_| w.write_all(b"  "))
            }
        }
    }

    fn begin<W: ?Sized + std::io::Write>(&mut self, w: &mut W, b: &[u8]) -> std::io::Result<()> {
        self.level += 1;
        self.has_value = false;
        w.write_all(b)
    }

    fn end<W: ?Sized + std::io::Write>(&mut self, w: &mut W, b: &[u8]) -> std::io::Result<()> {
        self.level -= 1;
        if self.has_value {
            self.line(w, true)?;
        }
        w.write_all(b)
    }
}

impl serde_json::ser::Formatter for Pretty {
    fn begin_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.begin(w, b"[")
    }
    fn end_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.end(w, b"]")
    }
    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.line(w, first)
    }
    fn end_array_value<W: ?Sized + std::io::Write>(&mut self, _: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }
    fn begin_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.begin(w, b"{")
    }
    fn end_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.end(w, b"}")
    }
    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.line(w, first)
    }
    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        w.write_all(b": ")
    }
    fn end_object_value<W: ?Sized + std::io::Write>(&mut self, _: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

/// Pretty JSON and a newline on stdout.
pub(super) fn json(value: &serde_json::Value) {
    let text = serde_json::to_string_pretty(value).unwrap_or_else(|_| "null".into());
    out(&format!("{text}\n"));
}

/// `error: …` and `hint: …` on stderr.
pub(super) fn diagnostic(message: &str, hint: Option<&str>) {
    let mut e = std::io::stderr().lock();
    let _ = writeln!(e, "error: {message}");
    if let Some(h) = hint {
        let _ = writeln!(e, "hint: {h}");
    }
}

/// A request error's message with where it is: the JSON pointer (none for the whole document,
/// whose pointer is empty) and the line.
fn located(message: &str, pointer: Option<&str>, line: Option<usize>) -> String {
    let mut message = message.to_string();
    if let Some(p) = pointer.filter(|p| !p.is_empty()) {
        message.push_str(&format!(" (at {p})"));
    }
    if let Some(l) = line {
        message.push_str(&format!(" (line {l})"));
    }
    message
}

/// A `redline: …` line on stderr that is neither an error nor data.
pub(super) fn notice(message: &str) {
    let _ = writeln!(std::io::stderr().lock(), "redline: {message}");
}

/// Reports a request that failed as a whole; exit 2.
pub(super) fn request_failure(
    err: &RequestError,
    print: bool,
    format: Option<Format>,
) -> ExitStatus {
    let message = located(&err.message, err.pointer.as_deref(), err.line);
    diagnostic(&message, err.hint_text().as_deref());
    let text_format = matches!(format, Some(Format::Text | Format::Diff))
        || (format.is_none() && stdout_is_terminal());
    if print && !text_format {
        line(&serde_json::to_string_pretty(&RequestFailure::new(err)).unwrap_or_default());
    }
    ExitStatus::Usage
}

/// Whether the message of file `k`'s error (at `path`) starts with that path already: a decode or
/// stale failure names its file, and a commit failure its own path; the writer's words for a path
/// that could not be read say what happened, not to which file. Decided by the error's type,
/// never by its text.
fn names_its_path(run: &Run, k: usize, path: &str) -> bool {
    let failure = run
        .plan
        .as_ref()
        .and_then(|p| p.files.get(k))
        .and_then(|f| f.failure.as_ref());
    match failure {
        Some(FileError::Fs(_)) => false,
        Some(FileError::Decode(_) | FileError::Stale { .. }) => true,
        None => run.commit_failure.as_ref().is_some_and(|e| e.path == path),
    }
}

/// Prints a run in `json`, `diff` or `text` (`lsp` is the editor face's, [`super::editor`]).
pub(super) fn run(run: &Run, format: Format, color: bool) {
    let resp = match &run.response {
        Ok(r) => r,
        Err(f) => {
            let e = &f.error;
            let message = located(&e.message, e.pointer.as_deref(), e.line);
            diagnostic(&message, e.hint.as_deref());
            if format == Format::Json {
                run_json(run);
            }
            return;
        }
    };
    match format {
        Format::Json => run_json(run),
        Format::Diff => {
            if resp.ok {
                let diffs: Vec<String> = resp.files.iter().map(|f| f.diff.to_string()).collect();
                let all = crate::engine::diff::join(diffs.iter().map(String::as_str));
                out(&paint_diff(&all, color));
            }
        }
        Format::Text | Format::Lsp => out(&text(resp, color)),
    }
    if format != Format::Json {
        for (k, f) in resp.files.iter().enumerate() {
            if let Some(e) = &f.error {
                let message = if names_its_path(run, k, &f.path) {
                    e.message.clone()
                } else {
                    format!("{}: {}", f.path, e.message)
                };
                diagnostic(&message, e.hint.as_deref());
            }
            for ed in &f.edits {
                if let Some(e) = &ed.error {
                    diagnostic(&e.message, e.hint.as_deref());
                }
            }
        }
        for e in unattached(resp) {
            diagnostic(&e.message, e.hint.as_deref());
        }
        if let Some(rb) = &resp.rolled_back {
            diagnostic(&format!("the write failed; rolled back: {rb}"), None);
        }
    }
}

// The CLI's styles, as anstyle values rendered to ANSI (the crate clap draws its own help with),
// rather than escape codes written by hand.
const RED: Style = AnsiColor::Red.on_default();
const GREEN: Style = AnsiColor::Green.on_default();
const CYAN: Style = AnsiColor::Cyan.on_default();
const YELLOW: Style = AnsiColor::Yellow.on_default();
const BOLD: Style = Style::new().bold();
const DIM: Style = Style::new().dimmed();

/// `text` in `style` (a style's `{:#}` is its reset).
fn styled(style: Style, text: &str) -> String {
    format!("{style}{text}{style:#}")
}

/// Colours a unified diff line by line.
pub(super) fn paint_diff(diff: &str, color: bool) -> String {
    if !color {
        return diff.to_string();
    }
    let mut out = String::with_capacity(diff.len() + diff.len() / 4);
    for l in diff.split_inclusive('\n') {
        let style = if l.starts_with("+++") || l.starts_with("---") || l.starts_with("diff --git") {
            Some(BOLD)
        } else if l.starts_with("@@") {
            Some(CYAN)
        } else if l.starts_with('+') {
            Some(GREEN)
        } else if l.starts_with('-') {
            Some(RED)
        } else if l.starts_with('\\') {
            Some(DIM)
        } else {
            None
        };
        match style {
            None => out.push_str(l),
            Some(style) => {
                let body = l.strip_suffix('\n').unwrap_or(l);
                out.push_str(&styled(style, body));
                if l.ends_with('\n') {
                    out.push('\n');
                }
            }
        }
    }
    out
}

/// Errors that belong to no file of the response (the journal, a directory being created, the
/// root): printed on their own so that a failure always says why.
fn unattached(resp: &Response) -> impl Iterator<Item = crate::report::response::ErrorEntry> + '_ {
    resp.errors.iter().filter(|e| {
        e.edit.is_none()
            && !resp
                .files
                .iter()
                .any(|f| f.path == e.path || f.move_to.as_ref() == Some(&e.path))
    })
}

/// The readable summary: one line per file, its edits, then the diff.
fn text(resp: &Response, color: bool) -> String {
    let paint = |style: Style, s: &str| {
        if color {
            styled(style, s)
        } else {
            s.to_string()
        }
    };
    let mut out = String::new();
    for f in &resp.files {
        let status = match f.status {
            FileStatus::Applied => paint(GREEN, "applied"),
            FileStatus::Planned => paint(CYAN, "planned"),
            FileStatus::Unchanged => "unchanged".to_string(),
            FileStatus::Failed => paint(RED, "failed"),
            FileStatus::Skipped => paint(YELLOW, "skipped"),
        };
        let op = serde_json::to_value(f.op)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default();
        let target = f
            .move_to
            .as_ref()
            .map(|m| format!(" -> {m}"))
            .unwrap_or_default();
        let resolved = f
            .edits
            .iter()
            .filter(|e| e.error.is_none() && e.match_kind.is_some())
            .count();
        let normalized: Vec<String> = f
            .edits
            .iter()
            .filter_map(|e| {
                e.normalizations
                    .as_ref()
                    .filter(|n| !n.is_empty())
                    .map(|n| {
                        let names: Vec<String> = n
                            .iter()
                            .filter_map(|x| {
                                serde_json::to_value(x)
                                    .ok()
                                    .and_then(|v| v.as_str().map(String::from))
                            })
                            .collect();
                        format!("edit {}: {}", e.index, names.join("+"))
                    })
            })
            .collect();
        let mut line = format!("{} {}{}  {}", paint(BOLD, &op), f.path, target, status);
        if !f.edits.is_empty() {
            line.push_str(&format!("  {resolved}/{} edits resolved", f.edits.len()));
        }
        if !normalized.is_empty() {
            line.push_str(&format!("  (normalized: {})", normalized.join(", ")));
        }
        out.push_str(&line);
        out.push('\n');
        for w in &f.warnings {
            out.push_str(&format!("  {} {}\n", paint(YELLOW, "warning:"), w.message));
        }
        for e in &f.edits {
            if let Some(err) = &e.error {
                out.push_str(&format!(
                    "  {} edit {}: {} — {}\n",
                    paint(RED, "✗"),
                    e.index,
                    err.code,
                    err.message
                ));
                for c in &err.candidates {
                    let score = c
                        .score
                        .map(|s| format!(" ({:.0}% similar)", s * 100.0))
                        .unwrap_or_default();
                    out.push_str(&format!(
                        "      candidate at line {}{}\n",
                        c.range.start.line + 1,
                        score
                    ));
                }
            }
        }
    }
    for e in unattached(resp) {
        out.push_str(&format!("{} {}: {}\n", paint(RED, "✗"), e.code, e.message));
        if let Some(h) = &e.hint {
            out.push_str(&format!("  hint: {h}\n"));
        }
    }
    // Diffs only for what was (or would be) written: a failed batch shows its errors alone.
    for f in resp.files.iter().filter(|_| resp.ok) {
        let diff = f.diff.to_string();
        if !diff.is_empty() {
            out.push('\n');
            out.push_str(&paint_diff(&diff, color));
        }
    }
    let summary = if resp.ok {
        if resp.written {
            "all edits applied"
        } else {
            "all edits resolved; nothing written (dry run)"
        }
    } else {
        "nothing was written"
    };
    out.push_str(&format!(
        "\n{}\n",
        paint(if resp.ok { GREEN } else { RED }, summary)
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::Pretty;
    use serde::Serialize;

    #[test]
    fn pretty_writes_what_serde_json_writes() {
        let mut deep = serde_json::json!([1, {"a": []}]);
        for i in 0..40 {
            deep = serde_json::json!({ "k": deep, "i": i, "e": {}, "l": [[], [{}], "x\ny"] });
        }
        let values = [
            serde_json::json!(null),
            serde_json::json!([]),
            serde_json::json!({}),
            serde_json::json!([[], {}, [[]], {"a": {}}]),
            serde_json::json!({"version": 1, "files": [{"path": "f", "edits": [{"i": 0}]}]}),
            deep,
        ];
        for v in values {
            let mut out = Vec::new();
            v.serialize(&mut serde_json::Serializer::with_formatter(
                &mut out,
                Pretty::default(),
            ))
            .unwrap();
            assert_eq!(
                String::from_utf8(out).unwrap(),
                serde_json::to_string_pretty(&v).unwrap()
            );
        }
    }
}
