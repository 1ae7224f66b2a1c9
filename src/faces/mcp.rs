//! `redline mcp`: an MCP server over stdio (rmcp, the official Rust SDK) with the tools
//! `read_file`, `preview_edits` and `apply_edits`.
//!
//! The tools are the definitions of [`crate::faces::schema::tools`] (inlined schemas, annotations) and
//! run the same code as `serve`: `preview_edits` never writes, `apply_edits` holds the root's
//! writer lock like the CLI. A batch that fails (an edit not found, an invalid request) is a tool
//! result with `isError: true` whose content is the response JSON of SPEC §4, so the model can
//! fix every edit in one retry; only an unknown tool is a protocol error.
//!
//! Lifecycles: the service is started with rmcp's `serve_directly`, which does not insist on an
//! `initialize` first. So a 2025-11-25 client's handshake is answered (by the handler's
//! `initialize`), a stateless 2026-07-28 request carrying `_meta` is validated and answered, and
//! a bare `tools/list` or `tools/call` from a client that skips both is answered too.

use crate::faces::read::ReadParams;
use crate::faces::schema;
use crate::faces::watch::mcp::Batch;
use crate::report::Mode;
use crate::report::message::Vocabulary;
use crate::service::{Run, Settings};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CustomRequest,
    CustomResult, ErrorCode, Implementation, InitializeResult, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;
use serde_json::value::RawValue;
use std::collections::HashMap;
use std::sync::Arc;

/// The MCP server: the settings every tool call runs with.
#[derive(Debug, Clone)]
pub(crate) struct Server {
    settings: Settings,
    /// `--review`: every `apply_edits` batch goes to `redline watch` first.
    review: bool,
    /// Edit tool calls whose arguments and structured content bypass rmcp's JSON trees (set by
    /// [`run`]; `None` when the server is called directly).
    diverted: Option<Arc<Diverted>>,
}

impl Server {
    pub(crate) fn new(settings: Settings) -> Server {
        Server {
            settings,
            review: false,
            diverted: None,
        }
    }

    /// The server of `redline mcp --review`.
    pub(crate) fn reviewed(settings: Settings) -> Server {
        Server {
            review: true,
            ..Server::new(settings)
        }
    }

    /// Runs one tool call (blocking: it reads, locks and writes files).
    pub(crate) fn call(&self, name: &str, arguments: Value) -> Result<CallToolResult, ErrorData> {
        if let Some(d) = &self.diverted
            && let Some((key, args)) = d.take_arguments(&arguments)
        {
            return self.diverted_call(name, d, key, args);
        }
        // Anthropic's text-editor `view` sent to an edit tool is a read.
        if name == schema::PREVIEW_EDITS || name == schema::APPLY_EDITS {
            match crate::faces::read::view_params(&arguments) {
                Some(Ok(params)) => return Ok(read(&params, &self.settings)),
                Some(Err(e)) => {
                    return Ok(CallToolResult::error(vec![ContentBlock::text(e.message)]));
                }
                None => {}
            }
        }
        match name {
            schema::READ_FILE => Ok(read_file(arguments, &self.settings)),
            schema::PREVIEW_EDITS => Ok(edits(&arguments, Mode::DryRun, &self.settings)),
            schema::APPLY_EDITS if self.review => {
                Ok(reviewed(Batch::Value(&arguments), &self.settings, |run| {
                    run.to_json()
                }))
            }
            schema::APPLY_EDITS => Ok(edits(&arguments, Mode::Apply, &self.settings)),
            other => Err(ErrorData::invalid_params(
                format!(
                    "unknown tool `{other}`; redline has read_file, preview_edits and apply_edits"
                ),
                None,
            )),
        }
    }

    /// A call whose arguments [`Diverted::divert`] took from its line: they are read from their
    /// text straight into the request, and the response is kept for the writer to put in place of
    /// the mark the structured content holds here, so neither is ever a JSON tree.
    fn diverted_call(
        &self,
        name: &str,
        d: &Diverted,
        key: u64,
        args: Arguments,
    ) -> Result<CallToolResult, ErrorData> {
        // Invariant: the arguments are the text of a JSON object (a raw value of a parsed line).
        let text = std::str::from_utf8(&args.line[args.range.clone()]).unwrap_or("{}");
        let mode = match name {
            schema::PREVIEW_EDITS => Mode::DryRun,
            schema::APPLY_EDITS if !self.review => Mode::Apply,
            // Not one at a time: it waits for the human, and other calls go on meanwhile.
            schema::APPLY_EDITS => {
                return Ok(reviewed(Batch::Text(text), &self.settings, |run| {
                    d.lock().runs.insert(key, run);
                    d.mark_of(key)
                }));
            }
            // Not diverted (see `divert`); as a JSON value, the way of every other call.
            _ => {
                let value = serde_json::from_str(text).unwrap_or(Value::Null);
                return Server {
                    diverted: None,
                    ..self.clone()
                }
                .call(name, value);
            }
        };
        // One edit call at a time, as `serve` runs its requests: calls a client sends together
        // would otherwise each hold a request, a plan and a response at once.
        let turn = d
            .turn
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let Some(parsed) = crate::faces::parse_json_text(text, &self.settings) else {
            let message = crate::faces::NOT_A_REQUEST.to_string();
            return Ok(CallToolResult::error(vec![ContentBlock::text(message)]));
        };
        // The line is not needed past parsing: it is not held while the request runs.
        drop(args);
        let run = crate::faces::run_parsed(parsed, mode, &self.settings, Vocabulary::Mcp);
        let ok = matches!(&run.response, Ok(r) if r.ok);
        let r = with_summary(&run, ok, d.mark_of(key));
        d.lock().runs.insert(key, run);
        drop(turn);
        Ok(r)
    }
}

/// The tool list, made when it is asked for and not kept: as JSON trees the inlined schemas take
/// ~0.45 MB, which a debug `mcp` would otherwise hold through every call (10,000 failing edits:
/// 25.85 -> 25.38 MB peak, median of five).
fn tools() -> Vec<Tool> {
    // Invariant: schema::tools() holds name, description, inputSchema (an object) and
    // annotations with MCP's names, which is what rmcp's Tool deserializes (a unit test checks
    // it), so nothing is dropped here.
    schema::tools()
        .into_iter()
        .filter_map(|t| serde_json::from_value(t).ok())
        .collect()
}

/// The arguments of a diverted call: the line they came in and where in it they are.
#[derive(Debug)]
struct Arguments {
    line: Vec<u8>,
    range: std::ops::Range<usize>,
}

/// `preview_edits` and `apply_edits` calls taken around rmcp's JSON trees (rmcp holds a call's
/// arguments and a result's structured content as `serde_json::Value`, ~14× the text of a
/// request of small edits, and the response of 10,000 failed edits took 100 MB that way).
///
/// The reader replaces a call's arguments by a mark (`{"redline-…": KEY}`) before rmcp reads the
/// line and keeps the line; the handler reads the arguments from that text into the request
/// and answers with the same mark as structured content, keeping the response; the writer then
/// writes the response, serialized straight from the run, where rmcp's reply has the mark. rmcp
/// still does everything else (ids, `_meta`, lifecycles, errors), and the reply's bytes are
/// those a `Value` would have given. The mark's name holds a number drawn at start, so no
/// client sends it by chance.
#[derive(Debug)]
pub(crate) struct Diverted {
    /// The mark's member name.
    mark: String,
    table: std::sync::Mutex<Table>,
    /// Told when an id leaves [`Table::unanswered`] or the writer stops.
    answered: tokio::sync::Notify,
    /// Held while an edit call is parsed and run.
    turn: std::sync::Mutex<()>,
}

#[derive(Debug, Default)]
struct Table {
    next: u64,
    /// Arguments taken from lines, until the handler takes them.
    arguments: HashMap<u64, Arguments>,
    /// Responses, until the writer writes them.
    runs: HashMap<u64, Run>,
    /// The request ids of diverted calls, until an answer with that id is written (or the call
    /// is cancelled): the end of input is passed on to rmcp only when none is left, since rmcp
    /// drops the answers of calls still running 5 s after its input ends.
    unanswered: HashMap<u64, Value>,
    /// The writer stopped (stdout closed): nothing more will be answered.
    writer_gone: bool,
}

impl Diverted {
    fn new() -> Diverted {
        use std::hash::BuildHasher as _;
        let n = std::collections::hash_map::RandomState::new().hash_one(std::process::id());
        Diverted {
            mark: format!("redline-diverted-{n:016x}"),
            table: std::sync::Mutex::default(),
            answered: tokio::sync::Notify::new(),
            turn: std::sync::Mutex::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Table> {
        // A panic while holding the lock leaves the maps whole (one insert or remove).
        self.table
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn mark_of(&self, key: u64) -> Value {
        let mut m = serde_json::Map::new();
        m.insert(self.mark.clone(), Value::from(key));
        Value::Object(m)
    }

    /// The line to hand rmcp for `line`: a `tools/call` of `preview_edits` or `apply_edits`
    /// (under `--review` too) whose arguments are an object other than a text-editor command
    /// gets them replaced by a mark, and the line is kept; any other line is passed as it is.
    fn divert(&self, line: Vec<u8>) -> Vec<u8> {
        let taken = (|| {
            let top: HashMap<String, &RawValue> = serde_json::from_slice(&line).ok()?;
            if raw_string(top.get("method").copied())? != "tools/call" {
                return None;
            }
            // A call that can be answered by its id (anything else is rmcp's to refuse).
            let id: Value = serde_json::from_str(top.get("id")?.get()).ok()?;
            if !(id.is_string() || id.is_number()) {
                return None;
            }
            let mut params: HashMap<String, &RawValue> =
                serde_json::from_str(top.get("params")?.get()).ok()?;
            let name = raw_string(params.get("name").copied())?;
            if name != schema::PREVIEW_EDITS && name != schema::APPLY_EDITS {
                return None;
            }
            let args = *params.get("arguments")?;
            let keys: HashMap<String, serde::de::IgnoredAny> =
                serde_json::from_str(args.get()).ok()?;
            if keys.contains_key("command") {
                return None;
            }
            let start = args.get().as_ptr() as usize - line.as_ptr() as usize;
            let range = start..start + args.get().len();
            let key = {
                let mut t = self.lock();
                t.next += 1;
                t.next
            };
            let mark = serde_json::value::to_raw_value(&self.mark_of(key)).ok()?;
            params.insert("arguments".into(), &mark);
            let params = serde_json::value::to_raw_value(&params).ok()?;
            let mut top = top;
            top.insert("params".into(), &params);
            Some((key, id, range, serde_json::to_vec(&top).ok()?))
        })();
        match taken {
            Some((key, id, range, out)) => {
                let mut t = self.lock();
                t.arguments.insert(key, Arguments { line, range });
                t.unanswered.insert(key, id);
                out
            }
            None => {
                self.cancelled(&line);
                line
            }
        }
    }

    /// A `notifications/cancelled` line: rmcp answers no call it cancels, so its id is not
    /// waited for.
    fn cancelled(&self, line: &[u8]) {
        if memchr::memmem::find(line, b"notifications/cancelled").is_none() {
            return;
        }
        let id = (|| {
            let top: HashMap<String, &RawValue> = serde_json::from_slice(line).ok()?;
            if raw_string(top.get("method").copied())? != "notifications/cancelled" {
                return None;
            }
            let params: HashMap<String, &RawValue> =
                serde_json::from_str(top.get("params")?.get()).ok()?;
            serde_json::from_str::<Value>(params.get("requestId")?.get()).ok()
        })();
        if let Some(id) = id {
            self.answered(&id);
        }
    }

    /// An answer with `id` was written: no diverted call with that id is waited for.
    fn answered(&self, id: &Value) {
        self.lock().unanswered.retain(|_, waiting| waiting != id);
        self.answered.notify_waiters();
    }

    /// The writer stopped: nothing is waited for any more.
    fn writer_gone(&self) {
        self.lock().writer_gone = true;
        self.answered.notify_waiters();
    }

    /// Waits until every diverted call is answered (or the writer is gone).
    async fn all_answered(&self) {
        loop {
            let told = self.answered.notified();
            tokio::pin!(told);
            told.as_mut().enable();
            {
                let t = self.lock();
                if t.unanswered.is_empty() || t.writer_gone {
                    return;
                }
            }
            told.await;
        }
    }

    /// The arguments a mark stands for, taken from the table.
    fn take_arguments(&self, arguments: &Value) -> Option<(u64, Arguments)> {
        let m = arguments.as_object().filter(|m| m.len() == 1)?;
        let key = m.get(&self.mark)?.as_u64()?;
        Some((key, self.lock().arguments.remove(&key)?))
    }

    /// For a reply of rmcp's that holds a mark: the bytes before it, the run whose response it
    /// stands for, and the bytes after it.
    fn splice<'l>(&self, line: &'l [u8]) -> Option<(&'l [u8], Run, &'l [u8])> {
        let needle = format!("{{\"{}\":", self.mark);
        let at = memchr::memmem::find(line, needle.as_bytes())?;
        let digits = at + needle.len();
        let end = digits
            + line[digits..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count();
        if line.get(end) != Some(&b'}') {
            return None;
        }
        let key: u64 = std::str::from_utf8(&line[digits..end]).ok()?.parse().ok()?;
        let run = self.lock().runs.remove(&key)?;
        Some((&line[..at], run, &line[end + 1..]))
    }
}

/// A run's response serialized on a blocking thread into 64 KiB pieces, received here as they
/// come: the writer never holds the whole response.
fn response_pieces(run: Run) -> tokio::sync::mpsc::Receiver<Vec<u8>> {
    /// Sends what is written to it, one buffer at a time.
    struct Pieces(tokio::sync::mpsc::Sender<Vec<u8>>);
    impl std::io::Write for Pieces {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0
                .blocking_send(buf.to_vec())
                .map_err(|_| std::io::Error::from(std::io::ErrorKind::BrokenPipe))?;
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let (tx, rx) = tokio::sync::mpsc::channel(2);
    tokio::task::spawn_blocking(move || {
        use std::io::Write as _;
        let mut w = std::io::BufWriter::with_capacity(1 << 16, Pieces(tx));
        // A failure here is the writer gone (it stops reading): nothing left to tell.
        let _ = match &run.response {
            Ok(r) => serde_json::to_writer(&mut w, r),
            Err(f) => serde_json::to_writer(&mut w, f),
        };
        let _ = w.flush();
    });
    rx
}

/// A raw value that is a JSON string, as a string.
fn raw_string(raw: Option<&RawValue>) -> Option<String> {
    raw.filter(|r| r.get().starts_with('"'))
        .and_then(|r| serde_json::from_str(r.get()).ok())
}

fn read_file(arguments: Value, settings: &Settings) -> CallToolResult {
    let params: ReadParams = match serde_json::from_value(arguments) {
        Ok(p) => p,
        Err(e) => {
            return CallToolResult::error(vec![ContentBlock::text(format!(
                "read_file takes {{path, offset?, limit?}}: {e}"
            ))]);
        }
    };
    read(&params, settings)
}

fn read(params: &ReadParams, settings: &Settings) -> CallToolResult {
    match crate::faces::read::read(params, settings) {
        Ok(lines) => {
            let summary = lines.summary();
            let mut r = CallToolResult::success(vec![ContentBlock::text(summary.text.clone())]);
            r.structured_content = serde_json::to_value(summary).ok();
            r
        }
        Err(e) => {
            let value = serde_json::to_value(crate::faces::read::ReadFailure::new(e))
                .unwrap_or(Value::Null);
            CallToolResult::structured_error(value)
        }
    }
}

fn edits(arguments: &Value, mode: Mode, settings: &Settings) -> CallToolResult {
    let Some(run) = crate::faces::run_json(arguments, mode, settings, Vocabulary::Mcp) else {
        let message = crate::faces::NOT_A_REQUEST.to_string();
        return CallToolResult::error(vec![ContentBlock::text(message)]);
    };
    let ok = matches!(&run.response, Ok(r) if r.ok);
    with_summary(&run, ok, run.to_json())
}

/// A tool result whose `structuredContent` is `structured` (the response JSON, or a mark that
/// stands for it) and whose text content is [`summary`] of the run, not the same JSON again: a
/// client shows the model one or the other (Claude Code hands a successful result's
/// `structuredContent` to the model and an error result's text), so each must stand on its own,
/// and one that shows both gets no copy.
fn with_summary(run: &Run, ok: bool, structured: Value) -> CallToolResult {
    let text = vec![ContentBlock::text(summary(run))];
    let mut r = if ok {
        CallToolResult::success(text)
    } else {
        CallToolResult::error(text)
    };
    r.structured_content = Some(structured);
    r
}

/// How much of [`summary`] lists failed edits one by one: past this many bytes the rest are only
/// counted. Claude Code keeps ~11,000 characters of an error result's text (and a model can act
/// on a few dozen failures at a time); 10,000 failed edits took 1.8 MB of summary, and as much
/// again in rmcp's serialized reply. The response (`structuredContent`) has them all.
const LISTED_FAILURES_BYTES: usize = 10_000;

/// The response (SPEC §4) in a few lines for a model or a person: one line per file with its
/// status, every failed edit with its code, message, hint and closest candidates (their text, so
/// `oldText` can be fixed without another read), errors that belong to no file, then the diffs
/// of what was (or would be) written and a closing line. A request that failed as a whole is its
/// error, pointer and hint. Written from the run's typed response (its edit results made one at
/// a time), never from a JSON tree of it.
pub(crate) fn summary(run: &Run) -> String {
    use crate::report::response::{ErrorDetail, Response};
    use std::fmt::Write as _;
    /// An enum's wire name (`edit`, `planned`).
    fn word(x: &impl serde::Serialize) -> String {
        match serde_json::to_value(x) {
            Ok(Value::String(s)) => s,
            _ => String::new(),
        }
    }
    let mut out = String::new();
    let v: &Response = match &run.response {
        Ok(r) => r,
        Err(f) => {
            let e = &f.error;
            let _ = write!(out, "request failed: {} — {}", e.code, e.message);
            if let Some(p) = &e.pointer {
                let _ = write!(out, " (at {p})");
            }
            if let Some(l) = e.line {
                let _ = write!(out, " (line {l})");
            }
            out.push('\n');
            if let Some(h) = &e.hint {
                let _ = writeln!(out, "hint: {h}");
            }
            out.push_str("nothing was written\n");
            return out;
        }
    };
    let hint = |out: &mut String, h: &Option<String>, indent: &str| {
        if let Some(h) = h {
            let _ = writeln!(out, "{indent}hint: {h}");
        }
    };
    let detail = |out: &mut String, e: &ErrorDetail, indent: &str| {
        hint(out, &e.hint, indent);
        for c in &e.candidates {
            let line = c.range.start.line + 1;
            let score = c
                .score
                .map(|x| format!(" ({:.0}% similar)", x * 100.0))
                .unwrap_or_default();
            let _ = writeln!(out, "{indent}candidate at line {line}{score}:");
            for l in c.text.lines() {
                let _ = writeln!(out, "{indent}  | {l}");
            }
        }
    };
    for f in &v.files {
        let target = f
            .move_to
            .as_ref()
            .map(|m| format!(" -> {m}"))
            .unwrap_or_default();
        let _ = write!(
            out,
            "{} {}{}: {}",
            word(&f.op),
            f.path,
            target,
            word(&f.status)
        );
        if !f.edits.is_empty() {
            let (failed, n) = (
                f.edits.iter().filter(|e| e.error.is_some()).count(),
                f.edits.len(),
            );
            let plural = if n == 1 { "" } else { "s" };
            if failed == 0 {
                let _ = write!(out, " ({n} edit{plural})");
            } else {
                let _ = write!(out, " ({failed} of {n} edit{plural} failed)");
            }
        }
        out.push('\n');
        for w in &f.warnings {
            let _ = writeln!(out, "  warning: {}", w.message);
        }
        if let Some(e) = &f.error {
            let _ = writeln!(out, "  ✗ {} — {}", e.code, e.message);
            detail(&mut out, e, "    ");
        }
        let mut unlisted = 0usize;
        for ed in &f.edits {
            if let Some(e) = &ed.error {
                if out.len() >= LISTED_FAILURES_BYTES {
                    unlisted += 1;
                    continue;
                }
                let _ = writeln!(out, "  ✗ edit {}: {} — {}", ed.index, e.code, e.message);
                detail(&mut out, e, "    ");
            }
        }
        if unlisted > 0 {
            let plural = if unlisted == 1 { "" } else { "s" };
            let _ = writeln!(
                out,
                "  … and {unlisted} more failed edit{plural}, not listed here (fix the ones above and preview again)"
            );
        }
    }
    // Errors no file above carries (the journal, a directory, the root).
    for e in &v.errors {
        let shown = e.edit.is_some()
            || v.files.iter().any(|f| {
                (f.path == e.path || f.move_to.as_ref() == Some(&e.path)) && f.error.is_some()
            });
        if !shown {
            let _ = writeln!(out, "✗ {} {}: {}", e.code, e.path, e.message);
            hint(&mut out, &e.hint, "  ");
        }
    }
    if let Some(rb) = &v.rolled_back {
        let _ = writeln!(out, "the write failed; rolled back: {rb}");
    }
    if let Some(r) = &v.recovered {
        let _ = writeln!(out, "recovered first: {r}");
    }
    if v.ok {
        for f in &v.files {
            let start = out.len();
            out.push('\n');
            // Invariant: writing to a `String` does not fail.
            let _ = f.diff.write_to(&mut out);
            if out.len() == start + 1 {
                // An empty diff: nothing to show.
                out.truncate(start);
            }
        }
    }
    let closing = match (v.ok, v.written) {
        (true, true) => "all edits applied",
        (true, false) => "all edits resolved; nothing written (dry run)",
        (false, _) => "nothing was written (a batch is all or nothing)",
    };
    if v.durability_unknown {
        let _ = writeln!(
            out,
            "\n{closing} (durability unknown: a sync after the commit failed)"
        );
    } else {
        let _ = writeln!(out, "\n{closing}");
    }
    out
}

/// `apply_edits` under `--review`: the human decides in `redline watch`, then the accepted
/// edits are applied; rejections and notes are added for the model. The structured content is
/// `structured` of the run (its response JSON, or the mark of a diverted call).
fn reviewed(
    arguments: Batch<'_>,
    settings: &Settings,
    structured: impl FnOnce(Run) -> Value,
) -> CallToolResult {
    let (r, failed) = match crate::faces::watch::mcp::apply_reviewed(arguments, settings) {
        Ok(r) => (r, false),
        Err(r) => (*r, true),
    };
    let mut result = match r.run {
        Some(run) => {
            let ok = !failed && matches!(&run.response, Ok(resp) if resp.ok);
            let mut result = with_summary(&run, ok, Value::Null);
            result.structured_content = Some(structured(run));
            result
        }
        None => CallToolResult::error(Vec::new()),
    };
    if !r.text.is_empty() {
        result.content.push(ContentBlock::text(r.text));
    }
    result
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        InitializeResult::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("redline", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Edit files by exact text replacement: read_file, then preview_edits or apply_edits with \
                 {\"files\": [{\"path\", \"edits\": [{\"oldText\", \"newText\"}]}]}. Each oldText must match \
                 one place; a batch is all or nothing.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        tools().into_iter().find(|t| t.name == name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let server = self.clone();
        let name = request.name.to_string();
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let result = tokio::task::spawn_blocking(move || server.call(&name, arguments))
            .await
            .map_err(|e| ErrorData::internal_error(format!("the tool call panicked: {e}"), None))?;
        result.map(CallToolResponse::from)
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        Err(unroutable(&request.method))
    }
}

/// Methods whose params rmcp could not read as the MCP shape (so they reach
/// [`ServerHandler::on_custom_request`]): the method exists, its params do not fit.
const KNOWN_METHODS: &[&str] = &["initialize", "ping", "tools/list", "tools/call"];

/// The JSON-RPC error for a request rmcp could not route: `-32602` when a known method's params
/// do not fit (a `tools/call` whose `arguments` is not an object), else `-32601`.
fn unroutable(method: &str) -> ErrorData {
    if KNOWN_METHODS.contains(&method) {
        ErrorData::invalid_params(
            format!(
                "`{method}` params do not fit its MCP shape (tools/call takes {{\"name\": …, \"arguments\": {{…}}}}, arguments an object)"
            ),
            None,
        )
    } else {
        ErrorData::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("method not found: {method}"),
            None,
        )
    }
}

/// Serves MCP on stdin/stdout until the client closes stdin.
///
/// stdin is read by [`crate::faces::lines`] with the same cap as `serve` (`--max-request-size`):
/// a message over it is never buffered and is answered with a JSON-RPC error (its `id` when one
/// is found at the top level, else `null`) instead of rmcp's silent drop. Every error rmcp sends
/// without an `id` member (a batch, a message of the wrong shape) gets `"id": null`, as JSON-RPC
/// 2.0 requires.
pub(crate) fn run(settings: Settings, review: bool) -> std::io::Result<()> {
    use crate::faces::lines::{self, Line};
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    crate::faces::one_arena();
    let cap = settings.limits.max_request_size;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let diverted = Arc::new(Diverted::new());
    let (to_pump, to_out) = (diverted.clone(), diverted.clone());
    rt.block_on(async move {
        let (mut to_rmcp, rmcp_in) = tokio::io::duplex(1 << 16);
        let (rmcp_out, from_rmcp) = tokio::io::duplex(1 << 16);
        let (in_tx, mut in_rx) = tokio::sync::mpsc::channel::<Line>(4);
        let (reply_tx, mut reply_rx) = tokio::sync::mpsc::unbounded_channel::<Vec<u8>>();
        // stdin is read on a thread of its own: blocking reads, bounded lines.
        std::thread::spawn(move || {
            let stdin = std::io::stdin();
            let mut r = stdin.lock();
            while let Ok(Some(line)) = lines::read_line(&mut r, cap) {
                // A line answered before its end: the answer goes out first, then its rest is
                // discarded.
                let cut = matches!(line, Line::Over { cut: true, .. });
                if in_tx.blocking_send(line).is_err() || (cut && lines::skip_line(&mut r).is_err())
                {
                    break;
                }
            }
        });
        // Lines within the cap go to rmcp; the answer to one over it goes straight out.
        let pump = tokio::spawn(async move {
            while let Some(line) = in_rx.recv().await {
                match line {
                    Line::Full(l) => {
                        let mut l = to_pump.divert(l);
                        l.push(b'\n');
                        if to_rmcp.write_all(&l).await.is_err() {
                            break;
                        }
                    }
                    Line::Over { len, id, cut } => {
                        let reply = lines::too_large(id, len, cut, cap).to_string().into_bytes();
                        if reply_tx.send(reply).is_err() {
                            break;
                        }
                    }
                }
            }
            // The end of input goes to rmcp once the calls it would drop are answered.
            to_pump.all_answered().await;
            let _ = to_rmcp.shutdown().await;
        });
        // rmcp's messages and ours, one whole line at a time.
        let out = tokio::spawn(async move {
            let mut stdout = tokio::io::stdout();
            let mut from_rmcp = tokio::io::BufReader::new(from_rmcp);
            let (mut rmcp_open, mut replies_open) = (true, true);
            while rmcp_open || replies_open {
                let mut line = Vec::new();
                let msg = tokio::select! {
                    n = from_rmcp.read_until(b'\n', &mut line), if rmcp_open => match n {
                        Ok(0) | Err(_) => { rmcp_open = false; continue; }
                        Ok(_) => with_null_id(line),
                    },
                    r = reply_rx.recv(), if replies_open => match r {
                        None => { replies_open = false; continue; }
                        Some(mut r) => { r.push(b'\n'); r }
                    },
                };
                let written = match to_out.splice(&msg) {
                    Some((before, run, after)) => {
                        let mut ok = stdout.write_all(before).await.is_ok();
                        let mut pieces = response_pieces(run);
                        while ok && let Some(piece) = pieces.recv().await {
                            ok = stdout.write_all(&piece).await.is_ok();
                        }
                        ok && stdout.write_all(after).await.is_ok()
                    }
                    None => stdout.write_all(&msg).await.is_ok(),
                };
                if !written || stdout.flush().await.is_err() {
                    break;
                }
                let mut scan = lines::IdScan::default();
                scan.feed(&msg);
                to_out.answered(&scan.id());
            }
            to_out.writer_gone();
        });
        let transport = rmcp::transport::async_rw::AsyncRwTransport::new_server(rmcp_in, rmcp_out)
            .with_max_line_length(usize::try_from(cap).unwrap_or(usize::MAX).saturating_add(2));
        let mut server = if review {
            Server::reviewed(settings)
        } else {
            Server::new(settings)
        };
        server.diverted = Some(diverted);
        let running = rmcp::service::serve_directly(server, transport, None);
        let result = running
            .waiting()
            .await
            .map(|_| ())
            .map_err(std::io::Error::other);
        let _ = pump.await;
        let _ = out.await;
        result
    })
}

/// An error reply without an `id` member gets `"id": null` (JSON-RPC 2.0 §5); anything else is
/// passed through as it is.
fn with_null_id(line: Vec<u8>) -> Vec<u8> {
    let mut scan = crate::faces::lines::IdScan::default();
    scan.feed(&line);
    if scan.has_id() {
        return line;
    }
    match serde_json::from_slice::<Value>(&line) {
        Ok(Value::Object(m)) if m.contains_key("error") => {
            let mut fixed = serde_json::Map::new();
            fixed.insert("jsonrpc".into(), Value::from("2.0"));
            fixed.insert("id".into(), Value::Null);
            for (k, v) in m {
                if k != "jsonrpc" {
                    fixed.insert(k, v);
                }
            }
            let mut out = Value::Object(fixed).to_string().into_bytes();
            out.push(b'\n');
            out
        }
        _ => line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_name_the_mcp_tools() {
        // How the words come out is report::message's mcp_names_its_tools; here, that the
        // server's answers use them.
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "one\n").unwrap();
        let server = Server::new(Settings {
            root: dir.path().to_path_buf(),
            ..Settings::default()
        });
        let args = serde_json::json!({"path": "a.txt", "oldText": "one", "newText": "1", "expectHash": "sha256:00"});
        let r = server.call(schema::APPLY_EDITS, args).unwrap();
        let text = serde_json::to_string(&r.structured_content).unwrap();
        assert!(!text.contains("redline read"), "{text}");
        assert!(text.contains("printed by `read_file`"), "{text}");
    }

    /// Anthropic's text-editor `view` sent to an edit tool is answered as `read_file`.
    #[test]
    fn text_editor_view_is_read_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "one\ntwo\n").unwrap();
        let server = Server::new(Settings {
            root: dir.path().to_path_buf(),
            ..Settings::default()
        });
        for tool in [schema::PREVIEW_EDITS, schema::APPLY_EDITS] {
            let args =
                serde_json::json!({"command": "view", "path": "a.txt", "view_range": [2, -1]});
            let r = server.call(tool, args).unwrap();
            assert_eq!(r.is_error, Some(false), "{tool}");
            assert_eq!(r.structured_content.unwrap()["shownLines"], 1, "{tool}");
        }
        let args = serde_json::json!({"command": "view", "path": "a.txt", "old_str": "x"});
        let r = server.call(schema::APPLY_EDITS, args).unwrap();
        assert_eq!(r.is_error, Some(true));
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
            "one\ntwo\n"
        );
    }

    /// The numbered lines are in the text and, once, in `structuredContent`'s `text` (Claude Code
    /// shows the model only `structuredContent` when there is one): no per-line objects, so the
    /// structured part is barely larger than the text.
    #[test]
    fn read_file_takes_file_path_and_keeps_structured_content_small() {
        let dir = tempfile::tempdir().unwrap();
        let body: String = (1..=200)
            .map(|i| format!("line {i} of some text\n"))
            .collect();
        std::fs::write(dir.path().join("a.txt"), &body).unwrap();
        let server = Server::new(Settings {
            root: dir.path().to_path_buf(),
            ..Settings::default()
        });
        let r = server
            .call(
                schema::READ_FILE,
                serde_json::json!({"file_path": "a.txt", "offset": 2}),
            )
            .unwrap();
        assert_eq!(r.is_error, Some(false));
        let structured = r.structured_content.unwrap();
        assert_eq!(structured["shownLines"], 199);
        assert_eq!(structured["totalLines"], 200);
        let text = serde_json::to_value(&r.content).unwrap()[0]["text"].clone();
        let text = text.as_str().unwrap();
        assert!(text.contains("     2\tline 2 of some text\n"));
        assert_eq!(structured["text"], text);
        assert!(structured.get("lines").is_none());
        // JSON escapes a tab and a newline per line: about 10% over the text here, where the
        // per-line objects were 1.46x.
        assert!(structured.to_string().len() * 10 < text.len() * 12);
    }

    /// A failed batch's text content is a summary a model can act on (code, message, hint, the
    /// candidate's text), not the response JSON again; a successful one shows the diff.
    #[test]
    fn edit_results_text_is_a_summary_not_the_json() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("a.txt"),
            "fn main() {\n    let total = 1;\n}\n",
        )
        .unwrap();
        let server = Server::new(Settings {
            root: dir.path().to_path_buf(),
            ..Settings::default()
        });
        let text_of = |r: &CallToolResult| {
            serde_json::to_value(&r.content).unwrap()[0]["text"]
                .as_str()
                .unwrap()
                .to_string()
        };
        let args = serde_json::json!({"path": "a.txt", "oldText": "let totl = 1;", "newText": "let total = 2;"});
        let r = server.call(schema::APPLY_EDITS, args).unwrap();
        assert_eq!(r.is_error, Some(true));
        let text = text_of(&r);
        assert!(serde_json::from_str::<Value>(&text).is_err(), "{text}");
        assert!(text.contains("✗ edit 0: not_found"), "{text}");
        assert!(text.contains("hint: "), "{text}");
        assert!(text.contains("  | "), "{text}");
        assert!(text.contains("    let total = 1;"), "{text}");
        assert!(
            text.ends_with("nothing was written (a batch is all or nothing)\n"),
            "{text}"
        );
        assert!(!text.contains("redline read"), "{text}");
        let structured = r.structured_content.unwrap().to_string();
        assert!(text.len() < structured.len(), "{text}\n{structured}");

        let args = serde_json::json!({"path": "a.txt", "oldText": "let total = 1;", "newText": "let total = 2;"});
        let r = server.call(schema::PREVIEW_EDITS, args).unwrap();
        assert_eq!(r.is_error, Some(false));
        let text = text_of(&r);
        assert!(text.starts_with("edit a.txt: planned (1 edit)\n"), "{text}");
        assert!(text.contains("\n+    let total = 2;\n"), "{text}");
        assert!(
            text.ends_with("all edits resolved; nothing written (dry run)\n"),
            "{text}"
        );

        let r = server
            .call(schema::APPLY_EDITS, serde_json::json!({"files": "x"}))
            .unwrap();
        assert_eq!(r.is_error, Some(true));
        let text = text_of(&r);
        assert!(
            text.starts_with("request failed: invalid_request — "),
            "{text}"
        );
    }

    /// An edit tool call's arguments are taken from its line (rmcp sees a mark), found again by
    /// the handler, and its response goes where rmcp's reply has the mark; other calls and a
    /// text-editor command pass through unchanged.
    #[test]
    fn edit_calls_are_diverted_around_json_trees() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "one\n").unwrap();
        let d = Arc::new(Diverted::new());
        let mut server = Server::new(Settings {
            root: dir.path().to_path_buf(),
            ..Settings::default()
        });
        server.diverted = Some(d.clone());
        let args = r#"{"path": "a.txt", "oldText": "one", "newText": "two"}"#;
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"preview_edits","arguments":{args},"_meta":{{"k":1}}}}}}"#
        );
        let sent = d.divert(line.clone().into_bytes());
        let sent: Value = serde_json::from_slice(&sent).unwrap();
        assert_eq!(sent["id"], 7);
        assert_eq!(sent["params"]["_meta"]["k"], 1);
        let mark = sent["params"]["arguments"].clone();
        assert_eq!(mark, d.mark_of(1), "{sent}");
        let r = server.call(schema::PREVIEW_EDITS, mark.clone()).unwrap();
        assert_eq!(r.is_error, Some(false));
        assert_eq!(r.structured_content, Some(mark.clone()));
        let reply = serde_json::to_vec(
            &serde_json::json!({"id": 7, "result": {"structuredContent": mark}}),
        )
        .unwrap();
        let (before, run, after) = d.splice(&reply).unwrap();
        let response = serde_json::to_vec(&run.to_json()).unwrap();
        let whole: Value =
            serde_json::from_slice(&[before, &response[..], after].concat()).unwrap();
        let direct = Server::new(server.settings.clone())
            .call(schema::PREVIEW_EDITS, serde_json::from_str(args).unwrap())
            .unwrap();
        assert_eq!(
            Some(&whole["result"]["structuredContent"]),
            direct.structured_content.as_ref()
        );
        assert_eq!(
            serde_json::to_value(&r.content).unwrap(),
            serde_json::to_value(&direct.content).unwrap()
        );
        assert!(d.lock().arguments.is_empty() && d.lock().runs.is_empty());
        // Passed through as they are.
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"a.txt"}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"apply_edits","arguments":{"command":"view","path":"a.txt"}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"apply_edits","arguments":[1]}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            "not json",
        ] {
            assert_eq!(d.divert(line.as_bytes().to_vec()), line.as_bytes());
        }
        // A mark no line stands for is an ordinary argument.
        let r = server.call(schema::PREVIEW_EDITS, d.mark_of(99)).unwrap();
        assert_eq!(r.is_error, Some(true));
    }

    /// `apply_edits` under `--review` is diverted too: the reviewer gets the arguments' text,
    /// only what it accepted is written, and the response goes where rmcp's reply has the mark.
    #[test]
    fn reviewed_calls_are_diverted_around_json_trees() {
        use crate::faces::watch::protocol::{Reply, Submission, Verdict};
        use std::io::Write as _;
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "one\ntwo\n").unwrap();
        let d = Arc::new(Diverted::new());
        let mut server = Server::reviewed(Settings {
            root: dir.path().to_path_buf(),
            ..Settings::default()
        });
        server.diverted = Some(d.clone());
        let args = r#"{"files": [{"path": "a.txt", "edits": [{"oldText": "one", "newText": "ONE"}, {"oldText": "two", "newText": "TWO"}]}]}"#;
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"apply_edits","arguments":{args}}}}}"#
        );
        let sent: Value = serde_json::from_slice(&d.divert(line.into_bytes())).unwrap();
        let mark = sent["params"]["arguments"].clone();
        assert_eq!(mark, d.mark_of(1), "{sent}");
        let listener = crate::faces::watch::bind(dir.path()).unwrap();
        let w = std::thread::spawn(move || {
            let (stream, line) = crate::faces::watch::accept_one(&listener);
            let sub: Submission = serde_json::from_str(&line).unwrap();
            let verdict = |index, decision: &str| Verdict {
                path: "a.txt".into(),
                index: Some(index),
                decision: decision.into(),
                note: None,
            };
            let reply = Reply::Decided {
                decisions: vec![verdict(0, "accepted"), verdict(1, "rejected")],
                note: None,
            };
            writeln!(&stream, "{}", serde_json::to_string(&reply).unwrap()).unwrap();
            sub
        });
        let r = server.call(schema::APPLY_EDITS, mark.clone()).unwrap();
        let sub = w.join().unwrap();
        assert_eq!(sub.request, args);
        assert_eq!(r.is_error, Some(false));
        assert_eq!(r.structured_content, Some(mark.clone()));
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
            "ONE\ntwo\n"
        );
        let reply = serde_json::to_vec(
            &serde_json::json!({"id": 3, "result": {"structuredContent": mark}}),
        )
        .unwrap();
        let (_, run, _) = d.splice(&reply).unwrap();
        let response = run.to_json();
        assert_eq!(response["ok"], true, "{response}");
        assert_eq!(response["written"], true, "{response}");
        assert!(d.lock().arguments.is_empty() && d.lock().runs.is_empty());
    }

    /// Failed edits are listed one by one up to a budget, then counted: the closing line and
    /// the count stay, and the structured content has every edit.
    #[test]
    fn many_failed_edits_are_counted_past_the_budget() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "one\n").unwrap();
        let server = Server::new(Settings {
            root: dir.path().to_path_buf(),
            ..Settings::default()
        });
        let edits: Vec<Value> = (0..2_000)
            .map(|i| serde_json::json!({"oldText": format!("nope {i}"), "newText": "x"}))
            .collect();
        let args = serde_json::json!({"files": [{"path": "a.txt", "edits": edits}]});
        let r = server.call(schema::PREVIEW_EDITS, args).unwrap();
        let text = serde_json::to_value(&r.content).unwrap()[0]["text"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(
            text.starts_with("edit a.txt: failed (2000 of 2000 edits failed)\n"),
            "{text}"
        );
        let listed = text.matches("  ✗ edit ").count();
        assert!(listed > 10 && listed < 2_000, "{listed}");
        assert!(text.len() < LISTED_FAILURES_BYTES + 1_000, "{}", text.len());
        assert!(
            text.contains(&format!(
                "  … and {} more failed edits, not listed here",
                2_000 - listed
            )),
            "{text}"
        );
        assert!(text.ends_with("nothing was written (a batch is all or nothing)\n"));
        let structured = r.structured_content.unwrap();
        assert_eq!(
            structured["files"][0]["edits"].as_array().unwrap().len(),
            2_000
        );
    }

    #[test]
    fn every_tool_definition_converts() {
        let tools = tools();
        assert_eq!(tools.len(), schema::tools().len());
        let back: Vec<Value> = tools
            .iter()
            .map(|t| serde_json::to_value(t).unwrap())
            .collect();
        assert_eq!(back, schema::tools());
    }

    #[test]
    fn failed_batches_are_tool_errors_with_the_response() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "one\n").unwrap();
        let server = Server::new(Settings {
            root: dir.path().to_path_buf(),
            ..Settings::default()
        });
        let args = serde_json::json!({"files": [{"path": "a.txt", "edits": [{"oldText": "two", "newText": "2"}]}]});
        let r = server.call(schema::APPLY_EDITS, args).unwrap();
        assert_eq!(r.is_error, Some(true));
        assert_eq!(
            r.structured_content.as_ref().unwrap()["errors"][0]["code"],
            "not_found"
        );
        let args = serde_json::json!({"path": "a.txt", "oldText": "one", "newText": "1"});
        let r = server.call(schema::PREVIEW_EDITS, args).unwrap();
        assert_eq!(r.is_error, Some(false));
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
            "one\n"
        );
        assert!(server.call("nope", Value::Null).is_err());
    }
}
