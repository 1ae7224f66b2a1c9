//! The commands for editors and agent harnesses: `filter`, `serve`, `mcp`, `schema`, and the LSP
//! form of `resolve`.

use super::output;
use crate::error::ExitStatus;
use crate::report::response::RequestFailure;
use crate::request::RequestError;
use crate::request::dialect::InputKind;
use crate::service::{Run, Settings};
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};

/// The root as an absolute path, for `file://` URIs.
fn absolute_root(settings: &Settings) -> PathBuf {
    std::fs::canonicalize(&settings.root).unwrap_or_else(|_| settings.root.clone())
}

/// Prints the LSP form of a resolve run (SPEC §4).
pub(super) fn print_lsp(run: &Run, settings: &Settings) -> ExitStatus {
    let out = crate::faces::lsp::output(run, &absolute_root(settings), settings.encoding);
    output::serialized(&out);
    run.exit
}

/// A request that did not parse, in the LSP form: no changes, one error (also on stderr).
pub(super) fn lsp_request_failure(e: &RequestError, settings: &Settings) -> ExitStatus {
    output::diagnostic(&e.message, e.hint_text().as_deref());
    let run = Run {
        response: Err(RequestFailure::new(e)),
        exit: ExitStatus::Usage,
        plan: None,
        commit_failure: None,
    };
    print_lsp(&run, settings)
}

/// `redline filter`: stdin is the buffer, stdout the edited buffer. On any failure the input is
/// echoed unchanged, the exit status is 1 and nothing goes to stderr (editors would paste it
/// into the buffer); `--report FILE` says what happened. A panic counts as a failure too: it is
/// caught silently and the buffer echoed.
pub(super) fn filter(
    settings: &Settings,
    input_kind: InputKind,
    path: &str,
    edits: &Path,
    report: Option<&Path>,
) -> ExitStatus {
    // The buffer is read up to --max-file-size and no further: a larger one (or an endless
    // stream) cannot be echoed in bounded time and memory, so it is refused with nothing on
    // stdout (an editor shows an empty result, never a truncated buffer) and `too_large` in the
    // report.
    let limit = settings.limits.max_file_size;
    let mut stdin = std::io::stdin().lock();
    let mut input = Vec::new();
    if (&mut stdin)
        .take(limit.saturating_add(1))
        .read_to_end(&mut input)
        .is_err()
    {
        return ExitStatus::Rejected;
    }
    if input.len() as u64 > limit {
        if let Some(file) = report {
            let e = RequestError::too_large(format!(
                "the buffer on stdin is larger than --max-file-size ({limit} bytes); nothing \
                 was echoed"
            ))
            .hint("raise --max-file-size to filter larger buffers");
            let json = serde_json::to_value(RequestFailure::new(&e)).unwrap_or_default();
            let text = serde_json::to_string_pretty(&json).unwrap_or_default();
            let _ = std::fs::write(file, text + "\n");
        }
        return ExitStatus::Rejected;
    }
    drop(stdin);
    std::panic::set_hook(Box::new(|_| {}));
    let result =
        std::panic::catch_unwind(|| filtered(settings, input_kind, path, edits, report, &input))
            .ok()
            .flatten();
    let (bytes, status) = match &result {
        Some(out) => (out.as_slice(), ExitStatus::Success),
        None => (input.as_slice(), ExitStatus::Rejected),
    };
    let mut o = std::io::stdout().lock();
    let _ = o.write_all(bytes).and_then(|_| o.flush());
    status
}

/// The edited buffer, or `None` on any failure; writes the report when asked.
fn filtered(
    settings: &Settings,
    input_kind: InputKind,
    path: &str,
    edits: &Path,
    report: Option<&Path>,
    input: &[u8],
) -> Option<Vec<u8>> {
    let request = std::fs::File::open(edits)
        .map_err(|e| RequestError::new(format!("cannot read {}: {e}", edits.display())))
        .and_then(|f| {
            crate::request::limits::read_capped_fd(
                f,
                settings.limits.max_request_size,
                &format!("the request file {}", edits.display()),
            )
        })
        .and_then(|b| {
            String::from_utf8(b)
                .map_err(|_| RequestError::new(format!("{} is not UTF-8", edits.display())))
        })
        .and_then(|text| {
            crate::request::limits::precheck_edits(&text, settings.limits.max_edits)?;
            crate::request::dialect::parse(&text, input_kind, crate::request::wire::parse_json)
        });
    // The report (a response that lists every range of a replaceAll) is made only when asked.
    let (result, report_json) = match request {
        Ok(req) => {
            let filtered = crate::faces::filter::filter(&req, path, input, settings);
            let json = report.map(|_| filtered.report(settings));
            (filtered.output.ok(), json)
        }
        Err(e) => (
            None,
            report.map(|_| {
                crate::faces::filter::Report::Other(
                    serde_json::to_value(RequestFailure::new(&e)).unwrap_or_default(),
                )
            }),
        ),
    };
    if let (Some(file), Some(json)) = (report, report_json) {
        let written = std::fs::File::create(file).and_then(|f| {
            let mut w = std::io::BufWriter::new(f);
            serde_json::to_writer_pretty(&mut w, &json)?;
            w.write_all(b"\n")?;
            w.flush()
        });
        let _ = written;
    }
    result
}

/// A `filter` whose command line did not parse: the buffer on stdin goes back unchanged on
/// stdout, exit 1, nothing on stderr.
pub(super) fn echo_stdin_rejected() -> ExitStatus {
    let mut stdin = std::io::stdin().lock();
    let mut stdout = std::io::stdout().lock();
    let _ = std::io::copy(&mut stdin, &mut stdout).and_then(|_| stdout.flush());
    ExitStatus::Rejected
}

/// `redline serve`: JSON-RPC until the end of input or the `exit` notification; as in LSP, an
/// `exit` that no `shutdown` preceded exits 1.
pub(super) fn serve(settings: &Settings) -> ExitStatus {
    let stdin = std::io::stdin().lock();
    let stdout = std::io::stdout().lock();
    match crate::faces::serve::serve(stdin, stdout, settings) {
        Ok(session) if session.clean() => ExitStatus::Success,
        Ok(_) => ExitStatus::Rejected,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitStatus::Success,
        Err(e) => {
            output::diagnostic(&format!("serve: {e}"), None);
            ExitStatus::WriteFailed
        }
    }
}

/// `redline mcp`: MCP on stdin/stdout until the client closes stdin.
pub(super) fn mcp(settings: &Settings, review: bool) -> ExitStatus {
    match crate::faces::mcp::run(settings.clone(), review) {
        Ok(()) => ExitStatus::Success,
        Err(e) => {
            output::diagnostic(&format!("mcp: {e}"), None);
            ExitStatus::WriteFailed
        }
    }
}

/// `redline schema [request|response|tools]`; without a name, all three in one object.
pub(super) fn schema(which: Option<&str>) -> ExitStatus {
    use crate::faces::schema::{Which, schema};
    let value = match which {
        None => crate::faces::schema::all(),
        Some(name) => match Which::parse(name) {
            Some(w) => schema(w),
            None => {
                output::diagnostic(
                    &format!("unknown schema `{name}`"),
                    Some("use request, response or tools"),
                );
                return ExitStatus::Usage;
            }
        },
    };
    output::json(&value);
    ExitStatus::Success
}
