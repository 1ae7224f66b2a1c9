//! `redline read`: a file with line numbers and its version, for agents that later send
//! `expectHash`.

use super::output;
use redline::batch::{self, Settings};
use redline::document::Document;
use redline::error::ExitStatus;

pub fn run(settings: &Settings, path: &str, offset: Option<usize>, limit: Option<usize>, format: Option<&str>) -> ExitStatus {
    let format = format.unwrap_or("text");
    if !matches!(format, "text" | "json") {
        output::diagnostic(&format!("unknown format `{format}` for read"), Some("use --format text or json"));
        return ExitStatus::Usage;
    }
    if offset == Some(0) {
        output::diagnostic("--offset is 1-based", Some("use --offset 1 for the first line"));
        return ExitStatus::Usage;
    }
    let root = match batch::open_root(settings) {
        Ok(r) => r,
        Err(e) => return output::request_failure(&e, false, Some("text")),
    };
    let snap = match root.read(path) {
        Ok(s) => s,
        Err(e) => {
            output::diagnostic(&format!("{path}: {}", e.message), e.hint.as_deref().or(Some("check the path (it is relative to --root)")));
            return e.code.exit_status();
        }
    };
    let version = snap.fingerprint.version.clone();
    let doc = match Document::decode(snap.bytes) {
        Ok(d) => d,
        Err(e) => {
            output::diagnostic(&format!("{path}: {e}"), Some("redline reads and edits UTF-8 text files only"));
            return e.code().exit_status();
        }
    };
    let total = if doc.text.is_empty() { 0 } else { doc.line_count() - usize::from(doc.final_newline()) };
    let first = offset.unwrap_or(1);
    let last = limit.map_or(total, |l| (first - 1 + l).min(total));
    let lines: Vec<(usize, &str)> = (first..=last)
        .filter(|&n| n >= 1 && n <= total)
        .map(|n| {
            let l = n - 1;
            (n, &doc.text[doc.line_start(l)..doc.line_content_end(l)])
        })
        .collect();
    if format == "json" {
        let v = serde_json::json!({
            "path": path,
            "version": version,
            "totalLines": total,
            "offset": first,
            "lines": lines.iter().map(|(n, t)| serde_json::json!({"line": n, "text": t})).collect::<Vec<_>>(),
            "eol": doc.eol.name(),
            "bom": doc.bom,
        });
        output::json(&v);
        return ExitStatus::Success;
    }
    let mut out = String::new();
    for (n, t) in &lines {
        out.push_str(&format!("{n:>6}\t{t}\n"));
    }
    let shown = if lines.is_empty() {
        format!("no lines shown of {total}")
    } else {
        format!("lines {}-{} of {total}", lines[0].0, lines[lines.len() - 1].0)
    };
    out.push_str(&format!("[{path} · {shown} · version {version}]\n"));
    output::out(&out);
    ExitStatus::Success
}
