//! `filter`: one editor buffer through a pipe (SPEC §1; background/interfaces.md §6.9).
//!
//! The buffer text stands in for the file, exactly as a `documents[]` entry does for `resolve`,
//! so the buffer is matched by the same code as every other batch: the request's objects for the
//! path are resolved against it and the buffer's bytes come back with the edits spliced in, CRLF,
//! lone CR and BOM kept byte for byte. Nothing is written and nothing is printed here: on any
//! failure the caller echoes its input unchanged, exits 1 and stays silent on stderr (Helix then
//! leaves the buffer alone), and may write [`Filtered::report`] to a file the user asked for.

use crate::engine::document::{DecodeError, Document};
use crate::engine::plan::{self, Op, Outcome, Plan, ResolveOptions};
use crate::error::Code;
use crate::report::message::Vocabulary;
use crate::report::{self, Mode, WriteOutcome};
use crate::request::{DocumentOverride, FileRequest, Request, RequestError};
use crate::service::{self, Settings};

/// Why a buffer could not be filtered.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum FilterError {
    #[error("{0}")]
    Request(RequestError),
    #[error("the request has no edits for {path}")]
    NoEdits { path: String },
    #[error("{path}: {error}")]
    Decode { path: String, error: DecodeError },
    #[error("the request deletes {path}; a pipe cannot delete a buffer")]
    Delete { path: String },
    /// An edit or the file failed; the first failure, the plan has them all.
    #[error("{message}")]
    Rejected { code: Code, message: String },
}

impl FilterError {
    pub(crate) fn code(&self) -> Code {
        match self {
            FilterError::Request(_) | FilterError::NoEdits { .. } | FilterError::Delete { .. } => {
                Code::InvalidRequest
            }
            FilterError::Decode { error, .. } => error.code(),
            FilterError::Rejected { code, .. } => *code,
        }
    }
}

/// The outcome of filtering a buffer.
#[derive(Debug)]
pub(crate) struct Filtered {
    /// The edited buffer bytes.
    pub output: Result<Vec<u8>, FilterError>,
    /// The plan of the path's edits against the buffer, once it was made.
    pub plan: Option<std::sync::Arc<Plan>>,
}

impl Filtered {
    fn failed(e: FilterError) -> Filtered {
        Filtered {
            output: Err(e),
            plan: None,
        }
    }

    /// What happened, for JSON: the response of SPEC §4 when the edits were matched, otherwise
    /// `{"version": 1, "ok": false, "error": {"code", "message"}}`.
    pub(crate) fn report(&self, settings: &Settings) -> Report {
        if let Some(plan) = &self.plan {
            let mut resp = report::response(
                std::sync::Arc::clone(plan),
                Mode::Resolve,
                settings.encoding,
                &WriteOutcome::default(),
                Vocabulary::Cli,
            );
            if let Err(e) = &self.output
                && resp.ok
            {
                resp.ok = false;
                resp.errors.push(crate::report::response::ErrorEntry {
                    code: e.code(),
                    path: plan
                        .files
                        .first()
                        .map(|f| f.path.clone())
                        .unwrap_or_default(),
                    edit: None,
                    message: e.to_string(),
                    hint: None,
                });
            }
            return Report::Response(Box::new(resp));
        }
        Report::Other(match &self.output {
            Ok(_) => serde_json::json!({"version": crate::report::response::VERSION, "ok": true}),
            Err(FilterError::Request(e)) => {
                serde_json::to_value(crate::report::response::RequestFailure::new(e))
                    .unwrap_or(serde_json::Value::Null)
            }
            Err(e) => serde_json::json!({
                "version": crate::report::response::VERSION,
                "ok": false,
                "error": {"code": e.code(), "message": e.to_string()},
            }),
        })
    }
}

/// A [`Filtered::report`]: the response serialized as it is (it lists every range of a
/// replaceAll: no `serde_json::Value` tree of it), or a small JSON object.
#[derive(serde::Serialize)]
#[serde(untagged)]
pub(crate) enum Report {
    Response(Box<crate::report::response::Response>),
    Other(serde_json::Value),
}

/// Applies the edits `req` has for `path` to the buffer bytes `input`.
///
/// `path` and the request's paths are compared as paths beneath the root (`./a`, `a` and
/// `/root/a` are one file). Objects for other paths are ignored, and so are `documents[]`: the
/// buffer is the document. `expectHash` is checked against the buffer. `content` replaces the
/// buffer; `moveTo` applies the edits and leaves the renaming to the editor; `delete` fails.
pub(crate) fn filter(req: &Request, path: &str, input: &[u8], settings: &Settings) -> Filtered {
    let root = match service::open_root(settings) {
        Ok(r) => r,
        Err(e) => return Filtered::failed(FilterError::Request(e)),
    };
    let no_edits = || FilterError::NoEdits {
        path: path.to_string(),
    };
    let Ok(want) = root.relative(path) else {
        return Filtered::failed(no_edits());
    };
    let mut fr: Option<FileRequest> = None;
    for f in req
        .files
        .iter()
        .filter(|f| root.relative(&f.path).ok().as_ref() == Some(&want))
    {
        match &mut fr {
            None => fr = Some(f.clone()),
            // The same file spelled another way: the wire layer merged by spelling only.
            Some(first) => {
                first.edits.extend(f.edits.iter().cloned());
                first.chunks.extend(f.chunks.iter().cloned());
            }
        }
    }
    let Some(fr) = fr else {
        return Filtered::failed(no_edits());
    };
    let doc = match Document::decode(input.to_vec()) {
        Ok(d) => d,
        Err(error) => {
            return Filtered::failed(FilterError::Decode {
                path: path.to_string(),
                error,
            });
        }
    };
    let mut text = String::with_capacity(doc.text.len() + 3);
    if doc.bom {
        text.push('\u{FEFF}');
    }
    text.push_str(&doc.text);
    let one = Request {
        documents: vec![DocumentOverride {
            path: fr.path.clone(),
            text,
        }],
        files: vec![fr],
        dry_run: false,
    };
    if let Err(e) = crate::request::limits::check_edits(&one, settings.limits.max_edits) {
        return Filtered::failed(FilterError::Request(e));
    }
    let plan = match plan::resolve(
        &one,
        &root,
        ResolveOptions {
            allow_documents: true,
            tolerance: settings.tolerance,
            defer_versions: false,
        },
    ) {
        Ok(p) => p,
        Err(e) => return Filtered::failed(FilterError::Request(e)),
    };
    let output = buffer(&plan, path);
    Filtered {
        output,
        plan: Some(plan.into()),
    }
}

fn buffer(plan: &Plan, path: &str) -> Result<Vec<u8>, FilterError> {
    let Some(f) = plan.files.first() else {
        return Err(FilterError::NoEdits {
            path: path.to_string(),
        });
    };
    if let Some(fail) = &f.failure {
        return Err(FilterError::Rejected {
            code: fail.code(),
            message: crate::report::message::file(fail, &f.path).message,
        });
    }
    for e in &f.edits {
        if let Outcome::Failed(fail) = &e.outcome {
            let doc = f.original.as_ref().map(|o| &o.doc);
            return Err(FilterError::Rejected {
                code: fail.code(),
                message: crate::report::message::edit(fail, &f.path, e.index, doc).message,
            });
        }
    }
    if f.op == Op::Delete {
        return Err(FilterError::Delete {
            path: path.to_string(),
        });
    }
    f.render(|_| true).ok_or_else(|| FilterError::NoEdits {
        path: path.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::EditSpec;

    fn edit(old: &str, new: &str) -> EditSpec {
        EditSpec::new(old, new)
    }

    fn req(path: &str, edits: Vec<EditSpec>) -> Request {
        let mut f = FileRequest::new(path);
        f.edits = edits;
        Request {
            files: vec![f],
            documents: Vec::new(),
            dry_run: false,
        }
    }

    fn settings(dir: &std::path::Path) -> Settings {
        Settings {
            root: dir.to_path_buf(),
            ..Settings::default()
        }
    }

    #[test]
    fn edits_the_buffer_keeping_crlf_and_bom() {
        let dir = tempfile::tempdir().unwrap();
        let r = req("src/a.txt", vec![edit("二\n", "二 😀\nthree\n")]);
        let input = "\u{FEFF}一\r\n二\r\n末".as_bytes();
        let out = filter(&r, "./src/a.txt", input, &settings(dir.path()));
        assert_eq!(
            String::from_utf8(out.output.unwrap()).unwrap(),
            "\u{FEFF}一\r\n二 😀\r\nthree\r\n末"
        );
    }

    #[test]
    fn other_paths_and_failures_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let s = settings(dir.path());
        let r = req("a.txt", vec![edit("x", "y")]);
        assert!(matches!(
            filter(&r, "b.txt", b"x", &s).output,
            Err(FilterError::NoEdits { .. })
        ));
        let out = filter(&r, "a.txt", b"zzz", &s);
        assert_eq!(out.output.as_ref().unwrap_err().code(), Code::NotFound);
        let report = serde_json::to_value(out.report(&s)).unwrap();
        assert_eq!(report["errors"][0]["code"], "not_found");
        let out = filter(&r, "a.txt", b"x\0", &s);
        assert_eq!(out.output.unwrap_err().code(), Code::BinaryFile);
    }

    #[test]
    fn absolute_path_inside_the_root_names_the_same_file() {
        let dir = tempfile::tempdir().unwrap();
        let s = settings(dir.path());
        let abs = std::fs::canonicalize(dir.path()).unwrap().join("a.txt");
        let r = req("a.txt", vec![edit("x", "y")]);
        let out = filter(&r, abs.to_str().unwrap(), b"x\n", &s);
        assert_eq!(out.output.unwrap(), b"y\n");
    }
}
