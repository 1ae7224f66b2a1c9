//! `redline mcp --review` (SPEC §1, §9): each `apply_edits` batch goes to `redline watch` on the
//! root first; only what the human accepted is written (by redline, as `apply_edits` always
//! does), each file pinned to the version the human saw (`expectHash`), so a file that changed
//! meanwhile is refused as `stale`. Rejections and notes come back in the tool result's text.
//! Without a `watch` running, nothing is written and the tool result says so.

use super::client::{self, WaitError};
use super::protocol::{Reply, Submission, Verdict};
use crate::faces::hook::DEFAULT_WAIT_SECS;
use crate::report::Mode;
use crate::report::message::Vocabulary;
use crate::request::Request;
use crate::service::{Run, Settings};
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::Duration;

/// The outcome for the MCP face: the run of the accepted edits (if any ran) and text for the
/// model (notes, or why nothing was written).
pub(crate) struct Reviewed {
    pub run: Option<Run>,
    pub text: String,
}

/// An `apply_edits` call's arguments: a JSON value (a call rmcp read), or the text of a JSON
/// object (a call taken around rmcp's JSON trees, see `faces::mcp::Diverted`), read straight
/// into the request as `preview_edits` reads it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Batch<'a> {
    Value(&'a Value),
    Text(&'a str),
}

impl Batch<'_> {
    /// The batch run as a dry run; `None` when it holds no request.
    fn preview(self, settings: &Settings) -> Option<Run> {
        match self {
            Batch::Value(v) => crate::faces::run_json(v, Mode::DryRun, settings, Vocabulary::Mcp),
            Batch::Text(t) => crate::faces::parse_json_text(t, settings)
                .map(|p| crate::faces::run_parsed(p, Mode::DryRun, settings, Vocabulary::Mcp)),
        }
    }

    /// The request text `watch` gets.
    fn text(self) -> String {
        match self {
            Batch::Value(Value::String(t)) => t.clone(),
            Batch::Value(v) => v.to_string(),
            Batch::Text(t) => t.to_string(),
        }
    }

    fn parse(self, settings: &Settings) -> Result<Request, String> {
        match self {
            Batch::Value(Value::String(text)) => crate::request::dialect::parse(
                text,
                crate::request::dialect::InputKind::Auto,
                crate::request::wire::parse_json,
            ),
            Batch::Value(v) => crate::request::wire::from_value(v),
            Batch::Text(t) => match crate::faces::parse_json_text(t, settings) {
                Some(parsed) => parsed,
                None => return Err(crate::faces::NOT_A_REQUEST.to_string()),
            },
        }
        .map_err(|e| e.message)
    }
}

/// Sends the batch to `watch`, waits, then applies what was accepted. `Err` when nothing was
/// applied (boxed: a `Run` is large, and the error path is the rare one).
pub(crate) fn apply_reviewed(
    arguments: Batch<'_>,
    settings: &Settings,
) -> Result<Reviewed, Box<Reviewed>> {
    let nothing = |text: String| Box::new(Reviewed { run: None, text });
    // A batch that does not resolve is answered as apply_edits answers it, without the human.
    let preview = arguments
        .preview(settings)
        .ok_or_else(|| nothing(crate::faces::NOT_A_REQUEST.to_string()))?;
    let (Ok(resp), Some(plan)) = (&preview.response, &preview.plan) else {
        return Err(Box::new(Reviewed {
            run: Some(preview),
            text: String::new(),
        }));
    };
    if !resp.ok {
        return Err(Box::new(Reviewed {
            run: Some(preview),
            text: String::new(),
        }));
    }
    let root = std::path::absolute(&settings.root).map_err(|e| nothing(e.to_string()))?;
    let mut versions = BTreeMap::new();
    let mut pinned: BTreeMap<String, String> = BTreeMap::new();
    for f in &plan.files {
        if let Some(o) = &f.original
            && o.fingerprint.is_some()
        {
            let abs = root.join(&f.path).to_string_lossy().into_owned();
            versions.insert(abs, o.version.clone());
            pinned.insert(f.path.clone(), o.version.clone());
        }
    }
    let request = arguments.text();
    let sub = Submission {
        agent: "mcp".into(),
        session: None,
        tool: "apply_edits".into(),
        request,
        versions,
    };
    let reply = client::submit(&root, &sub, Duration::from_secs(DEFAULT_WAIT_SECS), |_| {});
    let (decisions, note) = match reply {
        Ok(Reply::Decided { decisions, note }) => (decisions, note),
        Ok(Reply::Stale { message }) => {
            return Err(nothing(format!(
                "{message}; nothing was written. Read the file again and send the edits again."
            )));
        }
        Ok(Reply::Closed { message }) | Err(WaitError::Broken(message)) => {
            return Err(nothing(format!(
                "redline watch: {message}; nothing was written."
            )));
        }
        Ok(Reply::Queued { .. }) => return Err(nothing("redline watch: no decision".into())),
        Err(WaitError::NoWatch) => {
            return Err(nothing(format!(
                "no redline watch is running on {}, and this server sends every batch to it for \
                 review; nothing was written. Ask the user to start `redline watch` there.",
                root.display()
            )));
        }
        Err(WaitError::Timeout(d)) => {
            return Err(nothing(format!(
                "no decision from the reviewer within {} s; nothing was written.",
                d.as_secs()
            )));
        }
    };
    let text = describe(&decisions, note.as_deref());
    let Ok(mut req) = arguments.parse(settings) else {
        return Err(nothing(text));
    };
    let accepted = |path: &str, index: Option<usize>| {
        decisions
            .iter()
            .any(|v| v.accepted() && v.path == path && v.index == index)
    };
    for f in &mut req.files {
        // Codex chunks are the edits after the plain ones, in order.
        let n = f.edits.len();
        let keep: Vec<bool> = (0..n).map(|i| accepted(&f.path, Some(i))).collect();
        let keep_chunks: Vec<bool> = (0..f.chunks.len())
            .map(|i| accepted(&f.path, Some(n + i)))
            .collect();
        let mut i = 0;
        f.edits.retain(|_| {
            i += 1;
            keep[i - 1]
        });
        let mut i = 0;
        f.chunks.retain(|_| {
            i += 1;
            keep_chunks[i - 1]
        });
        if f.expect_hash.is_none() {
            f.expect_hash = pinned.get(&f.path).cloned();
        }
    }
    req.files.retain(|f| {
        !f.edits.is_empty()
            || !f.chunks.is_empty()
            || ((f.content.is_some() || f.delete || f.move_to.is_some()) && accepted(&f.path, None))
    });
    if req.files.is_empty() {
        return Err(nothing(format!(
            "the user rejected every edit in review; nothing was written.\n{text}"
        )));
    }
    let run = crate::service::run_in(&req, Mode::Apply, settings, Vocabulary::Mcp);
    Ok(Reviewed {
        run: Some(run),
        text,
    })
}

/// The decisions for the model: what was rejected, and every note.
fn describe(decisions: &[Verdict], note: Option<&str>) -> String {
    let mut out = String::new();
    for v in decisions {
        if v.accepted() && v.note.is_none() {
            continue;
        }
        let which = match v.index {
            Some(i) => format!("edit {} of {}", i + 1, v.path),
            None => v.path.clone(),
        };
        let what = if v.accepted() { "accepted" } else { "rejected" };
        match &v.note {
            Some(n) => out.push_str(&format!(
                "{which}: {what} in review. The user's note: {n}\n"
            )),
            None => out.push_str(&format!("{which}: {what} in review.\n")),
        }
    }
    if let Some(n) = note {
        out.push_str(&format!("The user's note on the whole batch: {n}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::protocol::{Reply, Verdict};
    use crate::faces::mcp::Server;
    use crate::service::Settings;
    use serde_json::json;
    use std::io::Write as _;

    fn text_of(r: &rmcp::model::CallToolResult) -> String {
        serde_json::to_string(&r.content).unwrap()
    }

    #[test]
    fn only_accepted_edits_are_written_and_notes_reach_the_model() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "one\ntwo\n").unwrap();
        let settings = Settings {
            root: dir.path().to_path_buf(),
            ..Settings::default()
        };
        let server = Server::reviewed(settings);
        let args = json!({"files": [{"path": "a.txt", "edits": [
            {"oldText": "one", "newText": "ONE"}, {"oldText": "two", "newText": "TWO"}]}]});
        // No watch: nothing written, and the model is told why.
        let r = server.call("apply_edits", args.clone()).unwrap();
        assert_eq!(r.is_error, Some(true));
        assert!(text_of(&r).contains("no redline watch is running"));
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
            "one\ntwo\n"
        );
        let listener = super::super::bind(dir.path()).unwrap();
        let w = std::thread::spawn(move || {
            let (stream, line) = super::super::accept_one(&listener);
            let sub: super::super::protocol::Submission = serde_json::from_str(&line).unwrap();
            let reply = Reply::Decided {
                decisions: vec![
                    Verdict {
                        path: "a.txt".into(),
                        index: Some(0),
                        decision: "accepted".into(),
                        note: None,
                    },
                    Verdict {
                        path: "a.txt".into(),
                        index: Some(1),
                        decision: "rejected".into(),
                        note: Some("two stays".into()),
                    },
                ],
                note: None,
            };
            writeln!(&stream, "{}", serde_json::to_string(&reply).unwrap()).unwrap();
            sub
        });
        let r = server.call("apply_edits", args).unwrap();
        let sub = w.join().unwrap();
        assert_eq!(sub.agent, "mcp");
        assert_eq!(sub.versions.len(), 1);
        assert_ne!(r.is_error, Some(true), "{}", text_of(&r));
        assert!(text_of(&r).contains("two stays"));
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
            "ONE\ntwo\n"
        );
    }
}
