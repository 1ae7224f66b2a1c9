//! What the reviewer leaves on the terminal when it closes: the alternate screen (and with it the
//! results screen) is gone, so a few lines say what was written, what was not and why, and where
//! the JSON result went.

use super::model::{FileResult, Model};

/// Where the JSON result went, in words.
pub(crate) fn json_destination(stdout_is_terminal: bool) -> String {
    if stdout_is_terminal {
        return "not printed: stdout is a terminal (redirect it, e.g. `> result.json`)".into();
    }
    match std::fs::read_link("/proc/self/fd/1") {
        Ok(p) if p.is_absolute() => format!("written to {}", p.display()),
        Ok(p) if p.to_string_lossy().starts_with("pipe:") => "written to stdout (a pipe)".into(),
        _ => "written to stdout".into(),
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn names(m: &Model, files: &[usize]) -> String {
    let mut shown: Vec<&str> = files
        .iter()
        .take(4)
        .map(|&f| m.files[f].display.as_str())
        .collect();
    let more = files.len().saturating_sub(shown.len());
    let extra;
    if more > 0 {
        extra = format!("and {more} more");
        shown.push(&extra);
    }
    shown.join(", ")
}

/// The lines to print after the UI closed; `json` is [`json_destination`].
pub(crate) fn lines(m: &Model, json: &str) -> Vec<String> {
    let tally = m.tally();
    let mut out = Vec::new();
    match &m.applied {
        Some(ap) if ap.written => {
            let written: Vec<usize> = ap
                .files
                .iter()
                .enumerate()
                .filter(|(_, r)| matches!(r, FileResult::Written(_)))
                .map(|(f, _)| f)
                .collect();
            let edits: usize = ap
                .files
                .iter()
                .map(|r| {
                    if let FileResult::Written(n) = r {
                        *n
                    } else {
                        0
                    }
                })
                .sum();
            out.push(format!(
                "redline: wrote {} to {}: {}",
                plural(edits, "accepted edit", "accepted edits"),
                plural(written.len(), "file", "files"),
                names(m, &written)
            ));
        }
        Some(ap) => {
            out.push(format!("redline: nothing written. {}", ap.summary));
            let stale: Vec<usize> = ap
                .files
                .iter()
                .enumerate()
                .filter(|(_, r)| **r == FileResult::Stale)
                .map(|(f, _)| f)
                .collect();
            if !stale.is_empty() {
                out.push(format!(
                    "  stale (changed on disk during the review, left as it is): {}",
                    names(m, &stale)
                ));
            }
        }
        None => out.push("redline: quit without writing; nothing was applied".into()),
    }
    let mut counts = vec![
        format!("{} accepted", tally.accepted),
        format!("{} rejected", tally.rejected),
        format!("{} undecided", tally.undecided),
    ];
    if tally.failed > 0 {
        counts.push(format!("{} failed", tally.failed));
    }
    if tally.stale > 0 {
        counts.push(format!("{} stale", tally.stale));
    }
    let notes = m.notes.iter().flatten().filter(|n| n.is_some()).count()
        + usize::from(m.batch_note.is_some());
    if notes > 0 {
        counts.push(plural(notes, "note", "notes"));
    }
    let applied = matches!(&m.applied, Some(ap) if ap.written);
    out.push(format!(
        "  {} {}",
        plural(tally.total(), "edit:", "edits:"),
        counts.join(" · ")
    ));
    if !applied && tally.accepted > 0 {
        out.push("  the accepted edits were not written".into());
    }
    out.push(format!("  JSON result {json}"));
    out
}
