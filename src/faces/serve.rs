//! `redline serve`: JSON-RPC 2.0 over stdin/stdout for editors and scripts that keep one process.
//!
//! Framing: one JSON value per line, or LSP-style `Content-Length:` headers (Emacs `jsonrpc.el`,
//! Neovim `vim.lsp.rpc`, `vscode-jsonrpc`); each message is answered in the framing it came in.
//! Requests run one at a time, in order; `apply` takes the root's writer lock per request, like
//! the CLI. Domain failures (an edit not found, an invalid batch) are results with `ok: false`;
//! only messages the server cannot route are JSON-RPC errors. Notifications get no reply.
//!
//! Methods: `resolve` and `apply` (params: the request of SPEC §2 as an object or array, or the
//! text of any dialect as a string; result: the response of §4), `read` (`{path, offset?,
//! limit?}`), `schema` (`{which: request|response|tools}`; without it all three). Params may also
//! come by position, as a one-element array holding any of those (`vscode-jsonrpc` sends an array
//! argument as `[[…]]` and cannot send a bare string).
//!
//! Ending follows LSP: `shutdown` replies `null` and the server keeps reading, answering any
//! further request with an error, until the `exit` notification or the end of input.

use crate::faces::read::ReadParams;
use crate::faces::schema::{self, Which};
use crate::report::Mode;
use crate::report::message::Vocabulary;
use crate::service::{Run, Settings};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::io::{self, BufRead, Read as _, Write};

/// JSON-RPC 2.0 error codes.
pub(crate) const PARSE_ERROR: i64 = -32700;
pub(crate) const INVALID_REQUEST: i64 = -32600;
pub(crate) const METHOD_NOT_FOUND: i64 = -32601;
pub(crate) const INVALID_PARAMS: i64 = -32602;

/// How a message was framed; the reply uses the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framing {
    /// One JSON value per line.
    Line,
    /// `Content-Length: N` headers, a blank line, then N bytes.
    Header,
}

/// A message as read: its framing and body, or the error reply for a frame that could not be
/// read (malformed headers, or over the size limit).
type Frame = (Framing, Result<Vec<u8>, Value>);

/// Header lines longer than this are malformed (a header is `Content-Length: N`).
const MAX_HEADER: u64 = 4096;

/// Reads the next message, holding at most `cap` bytes of it in memory (`--max-request-size`);
/// `None` at end of input. Blank lines between messages are skipped. A message over `cap` is
/// skipped unread and its frame is the `too_large` error reply (see [`crate::faces::lines`]).
///
/// `cut` carries a line answered before its end from one call to the next: its rest is
/// discarded (through its newline) before the next message is read, once the caller has sent
/// the answer.
pub(crate) fn read_message(
    r: &mut impl BufRead,
    cap: u64,
    cut: &mut bool,
) -> io::Result<Option<Frame>> {
    use crate::faces::lines::{self, Line};
    let unreadable = |why: &str| error(Value::Null, PARSE_ERROR, why, None);
    if std::mem::take(cut) {
        lines::skip_line(r)?;
    }
    loop {
        let text = match lines::read_line(r, cap)? {
            None => return Ok(None),
            Some(Line::Full(text)) => text,
            Some(Line::Over { len, id, cut: rest }) => {
                *cut = rest;
                let reply = lines::too_large(id, len, rest, cap);
                return Ok(Some((Framing::Line, Err(reply))));
            }
        };
        if text.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let Some(len) = header_value(&text, "content-length") else {
            return Ok(Some((Framing::Line, Ok(text))));
        };
        let len = std::str::from_utf8(len)
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok());
        // Further headers (Content-Type) until the blank line.
        loop {
            match lines::read_line(r, MAX_HEADER)? {
                None => {
                    return Ok(Some((
                        Framing::Header,
                        Err(unreadable("end of input inside the headers")),
                    )));
                }
                Some(Line::Over { .. }) => {
                    return Ok(Some((
                        Framing::Header,
                        Err(unreadable("a header line is too long")),
                    )));
                }
                Some(Line::Full(h)) if h.is_empty() => break,
                Some(Line::Full(_)) => {}
            }
        }
        let Some(len) = len else {
            return Ok(Some((
                Framing::Header,
                Err(unreadable("bad Content-Length")),
            )));
        };
        if len > cap {
            // A frame cut short by the end of input (`None`): nothing left to answer.
            return Ok(lines::skip(r, len)?
                .map(|id| (Framing::Header, Err(lines::too_large(id, len, false, cap)))));
        }
        let mut body = Vec::new();
        (&mut *r).take(len).read_to_end(&mut body)?;
        if (body.len() as u64) < len {
            return Ok(None);
        }
        return Ok(Some((Framing::Header, Ok(body))));
    }
}

/// The value of header `name` (ASCII case-insensitive) if `line` is that header.
fn header_value<'a>(line: &'a [u8], name: &str) -> Option<&'a [u8]> {
    let colon = line.iter().position(|&b| b == b':')?;
    line[..colon]
        .trim_ascii()
        .eq_ignore_ascii_case(name.as_bytes())
        .then(|| &line[colon + 1..])
}

/// Writes one message in `framing` and flushes. The message is serialized straight into `w`
/// (through a small buffer), never held whole as a string: a `Content-Length` frame is
/// serialized twice, once to count its bytes.
pub(crate) fn write_message(
    w: &mut impl Write,
    framing: Framing,
    msg: &impl serde::Serialize,
) -> io::Result<()> {
    if framing == Framing::Header {
        let mut count = Count(0);
        serde_json::to_writer(&mut count, msg)?;
        write!(w, "Content-Length: {}\r\n\r\n", count.0)?;
    }
    let mut out = io::BufWriter::with_capacity(1 << 16, &mut *w);
    serde_json::to_writer(&mut out, msg)?;
    if framing == Framing::Line {
        out.write_all(b"\n")?;
    }
    out.flush()?;
    drop(out);
    w.flush()
}

/// A writer that only counts the bytes written to it.
struct Count(u64);

impl Write for Count {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Where a session is in LSP's ending sequence.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Session {
    /// `shutdown` was answered: only `exit` is served from now on.
    pub shut_down: bool,
    /// `exit` was received: stop reading.
    pub exited: bool,
}

impl Session {
    /// How the session ended, as LSP says: `exit` before `shutdown` is a failure (exit status
    /// 1); `exit` after it, or the end of input, is a success.
    pub(crate) fn clean(&self) -> bool {
        !self.exited || self.shut_down
    }
}

/// Serves requests from `input` until the `exit` notification or the end of input.
pub(crate) fn serve(
    mut input: impl BufRead,
    mut output: impl Write,
    settings: &Settings,
) -> io::Result<Session> {
    let mut session = Session::default();
    let cap = settings.limits.max_request_size;
    let mut cut = false;
    while let Some((framing, body)) = read_message(&mut input, cap, &mut cut)? {
        let reply = match body {
            Ok(body) => answer(body, settings, &mut session),
            Err(reply) => Some(Reply::Value(reply)),
        };
        if let Some(reply) = reply {
            write_message(&mut output, framing, &reply)?;
        }
        if session.exited {
            break;
        }
    }
    Ok(session)
}

/// A reply, serialized as it is written: the response of a run is serialized from its plan, never
/// made a JSON tree first (the tree of 10,000 failed edits took 38 MB for 3 MB of text).
enum Reply {
    /// Any other reply.
    Value(Value),
    /// A successful call's reply.
    Result {
        /// The call's id.
        id: Value,
        /// What the method returned.
        result: Answer,
    },
    /// The replies to a batch.
    Batch(Vec<Reply>),
}

/// What a method returned.
enum Answer {
    /// A JSON value.
    Value(Value),
    /// The response of `resolve` or `apply` (or its request failure).
    Run(Box<Run>),
    /// A request read from its message and not run yet: it runs once the message's text is
    /// dropped ([`Reply::finish`]), so the text is not held beside the run (10,000 one-line
    /// edits: a 0.45 MB line next to the plan and the matcher).
    Pending(Box<Pending>),
}

/// A `resolve` or `apply` request read from its params.
struct Pending {
    parsed: Result<crate::request::Request, crate::request::RequestError>,
    mode: Mode,
}

impl Reply {
    /// The reply with its pending run made.
    fn finish(self, settings: &Settings) -> Reply {
        match self {
            Reply::Result {
                id,
                result: Answer::Pending(p),
            } => {
                let run = crate::faces::run_parsed(p.parsed, p.mode, settings, Vocabulary::Cli);
                Reply::Result {
                    id,
                    result: Answer::Run(Box::new(run)),
                }
            }
            other => other,
        }
    }
}

impl serde::Serialize for Reply {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap as _;
        match self {
            Reply::Value(v) => v.serialize(s),
            Reply::Batch(replies) => s.collect_seq(replies),
            Reply::Result { id, result } => {
                let mut m = s.serialize_map(Some(3))?;
                m.serialize_entry("jsonrpc", "2.0")?;
                m.serialize_entry("id", id)?;
                match result {
                    Answer::Value(v) => m.serialize_entry("result", v)?,
                    Answer::Run(run) => match &run.response {
                        Ok(r) => m.serialize_entry("result", r)?,
                        Err(f) => m.serialize_entry("result", f)?,
                    },
                    // Invariant: every reply is finished before it is written.
                    Answer::Pending(_) => {
                        return Err(serde::ser::Error::custom("a request was not run"));
                    }
                }
                m.end()
            }
        }
    }
}

/// Handles one message body: the reply as JSON (none for notifications); `session` records
/// `shutdown` and `exit`.
#[cfg(test)]
pub(crate) fn handle(body: &[u8], settings: &Settings, session: &mut Session) -> Option<Value> {
    answer(body.to_vec(), settings, session).map(|r| serde_json::to_value(r).unwrap_or(Value::Null))
}

/// Handles one message body: the reply (none for notifications); `session` records `shutdown`
/// and `exit`.
///
/// The message is never made a `serde_json::Value` tree (that of 10,000 edits took ~8 MB for
/// 450 KB of text): its syntax is checked once, its members are kept as raw text, and a
/// request's params are read from that text straight into the typed request, which (for a
/// message that is no batch) runs once the text is dropped.
fn answer(body: Vec<u8>, settings: &Settings, session: &mut Session) -> Option<Reply> {
    let reply = answer_in(&body, settings, session);
    drop(body);
    reply.map(|r| r.finish(settings))
}

/// [`answer`] with the run of a message that is no batch left pending.
fn answer_in(body: &[u8], settings: &Settings, session: &mut Session) -> Option<Reply> {
    let msg: &RawValue = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => {
            return Some(Reply::Value(error(
                Value::Null,
                PARSE_ERROR,
                &format!("not JSON: {e}"),
                None,
            )));
        }
    };
    if lead(msg) != b'[' {
        return call(msg, settings, session, true);
    }
    // Invariant: `msg` is a valid JSON array, so this parses.
    let batch: Vec<&RawValue> = serde_json::from_str(msg.get()).unwrap_or_default();
    if batch.is_empty() {
        return Some(Reply::Value(error(
            Value::Null,
            INVALID_REQUEST,
            "empty batch",
            None,
        )));
    }
    let replies: Vec<Reply> = batch
        .iter()
        .filter_map(|m| call(m, settings, session, false))
        .collect();
    (!replies.is_empty()).then_some(Reply::Batch(replies))
}

/// The first byte of a raw JSON value: which JSON type it is.
fn lead(raw: &RawValue) -> u8 {
    raw.get().trim_start().bytes().next().unwrap_or(b' ')
}

/// The members of a JSON object as raw text; a member given twice is the last one, as a
/// `serde_json::Value` keeps it. `None` when `raw` is no object.
fn members(raw: &RawValue) -> Option<HashMap<String, &RawValue>> {
    (lead(raw) == b'{')
        .then(|| serde_json::from_str(raw.get()).ok())
        .flatten()
}

/// A raw value that is a JSON string, as a string.
fn string(raw: Option<&RawValue>) -> Option<String> {
    raw.filter(|r| lead(r) == b'"')
        .and_then(|r| serde_json::from_str(r.get()).ok())
}

/// A raw value as a `serde_json::Value` (for the small params of `read` and `schema`).
fn value(raw: &RawValue) -> Value {
    // Invariant: a raw value is valid JSON.
    serde_json::from_str(raw.get()).unwrap_or(Value::Null)
}

/// A JSON-RPC error response.
fn error(id: Value, code: i64, message: &str, data: Option<Value>) -> Value {
    let mut e = json!({"code": code, "message": message});
    if let Some(d) = data {
        e["data"] = d;
    }
    json!({"jsonrpc": "2.0", "id": id, "error": e})
}

/// Handles one request or notification object; with `defer`, a `resolve` or `apply` request
/// is only read ([`Answer::Pending`]).
fn call(msg: &RawValue, settings: &Settings, session: &mut Session, defer: bool) -> Option<Reply> {
    let fields = members(msg);
    let member = |k: &str| fields.as_ref().and_then(|m| m.get(k).copied());
    // An object or array id is invalid whatever it holds: it is not read.
    let id = member("id").map(|raw| match lead(raw) {
        b'{' | b'[' => Value::Object(serde_json::Map::new()),
        _ => value(raw),
    });
    let valid_id = matches!(
        id,
        None | Some(Value::String(_) | Value::Number(_) | Value::Null)
    );
    let method = string(member("method"));
    let jsonrpc = string(member("jsonrpc"));
    let (Some(method), true, true) = (method, valid_id, jsonrpc.as_deref() == Some("2.0")) else {
        let id = if valid_id {
            id.unwrap_or(Value::Null)
        } else {
            Value::Null
        };
        let why = "expected {\"jsonrpc\": \"2.0\", \"method\": …, \"params\"?: …, \"id\"?: …}";
        return Some(Reply::Value(error(id, INVALID_REQUEST, why, None)));
    };
    let params = member("params");
    let method = method.as_str();
    let outcome = match method {
        "exit" => {
            session.exited = true;
            Ok(Answer::Value(Value::Null))
        }
        _ if session.shut_down => Err((
            INVALID_REQUEST,
            format!(
                "`{method}` after `shutdown`: the server only accepts the `exit` notification now"
            ),
        )),
        "shutdown" => {
            session.shut_down = true;
            Ok(Answer::Value(Value::Null))
        }
        _ => dispatch(method, params, settings, defer),
    };
    // A notification gets no reply, even for errors.
    let id = id?;
    Some(match outcome {
        Ok(result) => Reply::Result { id, result },
        Err((code, message)) => Reply::Value(error(id, code, &message, None)),
    })
}

fn dispatch(
    method: &str,
    params: Option<&RawValue>,
    settings: &Settings,
    defer: bool,
) -> Result<Answer, (i64, String)> {
    // By position: a one-element array holds the params.
    let params = match params {
        Some(p) if lead(p) == b'[' => match serde_json::from_str::<Vec<&RawValue>>(p.get()) {
            Ok(a) if a.len() == 1 => Some(a[0]),
            _ => Some(p),
        },
        p => p,
    };
    let ran = |mode| {
        let parsed = parse(need(params)?, settings)?;
        Ok(if defer {
            Answer::Pending(Box::new(Pending { parsed, mode }))
        } else {
            Answer::Run(Box::new(crate::faces::run_parsed(
                parsed,
                mode,
                settings,
                Vocabulary::Cli,
            )))
        })
    };
    // Anthropic's text-editor `view` sent to resolve or apply is a read.
    let view = match method {
        "resolve" | "apply" => params.and_then(view_params),
        _ => None,
    };
    match method {
        _ if view.is_some() => match view {
            Some(Ok(p)) => Ok(Answer::Value(read_result(&p, settings))),
            Some(Err(e)) => Ok(Answer::Run(Box::new(Run::failed(&e)))),
            None => Ok(Answer::Value(Value::Null)),
        },
        "resolve" => ran(Mode::Resolve),
        "apply" => ran(Mode::Apply),
        "read" => {
            let p: ReadParams = serde_json::from_value(value(need(params)?)).map_err(|e| {
                (
                    INVALID_PARAMS,
                    format!("read takes {{path, offset?, limit?}}: {e}"),
                )
            })?;
            Ok(Answer::Value(read_result(&p, settings)))
        }
        "schema" => {
            let params = params.map(value);
            // Without `which` (no params, `{}`): all three, like `redline schema`.
            let which = match params.as_ref().map(|p| (p, p.get("which"))) {
                None => return Ok(Answer::Value(schema::all())),
                Some((Value::Object(o), None | Some(Value::Null)))
                    if o.keys().all(|k| k == "which") =>
                {
                    return Ok(Answer::Value(schema::all()));
                }
                Some((_, which)) => which.and_then(Value::as_str).and_then(Which::parse),
            };
            let which = which.ok_or((
                INVALID_PARAMS,
                "schema takes {\"which\": \"request\" | \"response\" | \"tools\"} (or no params for all three)"
                    .to_string(),
            ))?;
            Ok(Answer::Value(schema::schema(which)))
        }
        other => Err((
            METHOD_NOT_FOUND,
            format!(
                "unknown method `{other}`; redline serves resolve, apply, read, schema, shutdown"
            ),
        )),
    }
}

/// The `read` params of a text-editor `view` command, when `params` is one (only then is it
/// made a JSON value).
fn view_params(params: &RawValue) -> Option<Result<ReadParams, crate::request::RequestError>> {
    let command = string(members(params)?.get("command").copied())?;
    if command != "view" {
        return None;
    }
    crate::faces::read::view_params(&value(params))
}

fn need(params: Option<&RawValue>) -> Result<&RawValue, (i64, String)> {
    params.ok_or((INVALID_PARAMS, "this method needs params".to_string()))
}

/// Parses `params` as a request ([`crate::faces::parse_json_text`]); params of a JSON type
/// that holds no request are invalid params.
fn parse(
    params: &RawValue,
    settings: &Settings,
) -> Result<Result<crate::request::Request, crate::request::RequestError>, (i64, String)> {
    crate::faces::parse_json_text(params.get(), settings)
        .ok_or_else(|| (INVALID_PARAMS, crate::faces::NOT_A_REQUEST.to_string()))
}

/// The answer to `read`: the lines, or `ok: false` with the error.
fn read_result(p: &ReadParams, settings: &Settings) -> Value {
    match crate::faces::read::read(p, settings) {
        Ok(lines) => serde_json::to_value(lines).unwrap_or(Value::Null),
        Err(e) => json!({"version": crate::report::response::VERSION, "ok": false, "error": e}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_framings_and_skips_blank_lines() {
        let input =
            b"\n{\"a\":1}\r\nContent-Length: 7\r\nContent-Type: x\r\n\r\n{\"b\":2}{\"c\":3}\n"
                .to_vec();
        let mut r = io::Cursor::new(input);
        assert_eq!(
            read_message(&mut r, 1 << 20, &mut false).unwrap(),
            Some((Framing::Line, Ok(b"{\"a\":1}".to_vec())))
        );
        assert_eq!(
            read_message(&mut r, 1 << 20, &mut false).unwrap(),
            Some((Framing::Header, Ok(b"{\"b\":2}".to_vec())))
        );
        assert_eq!(
            read_message(&mut r, 1 << 20, &mut false).unwrap(),
            Some((Framing::Line, Ok(b"{\"c\":3}".to_vec())))
        );
        assert_eq!(read_message(&mut r, 1 << 20, &mut false).unwrap(), None);
    }

    #[test]
    fn protocol_errors() {
        let s = Settings::default();
        let reply = |m: &str| handle(m.as_bytes(), &s, &mut Session::default()).unwrap();
        assert_eq!(reply("{oops")["error"]["code"], PARSE_ERROR);
        assert_eq!(
            reply("{\"jsonrpc\":\"2.0\",\"id\":1}")["error"]["code"],
            INVALID_REQUEST
        );
        assert_eq!(
            reply("{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"x\"}")["id"],
            Value::Null
        );
        assert_eq!(
            reply("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"nope\"}")["error"]["code"],
            METHOD_NOT_FOUND
        );
        assert_eq!(
            reply("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"resolve\",\"params\":5}")["error"]["code"],
            INVALID_PARAMS
        );
        assert_eq!(
            reply(
                "{\"jsonrpc\":\"2.0\",\"id\":\"s\",\"method\":\"schema\",\"params\":{\"which\":\"x\"}}"
            )["error"]["code"],
            INVALID_PARAMS
        );
        for params in ["", ",\"params\":{}", ",\"params\":{\"which\":null}"] {
            let all = reply(&format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"schema\"{params}}}"
            ));
            assert_eq!(all["result"], schema::all(), "{params}");
        }
        assert_eq!(
            reply(
                "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"schema\",\"params\":{\"whih\":\"tools\"}}"
            )["error"]["code"],
            INVALID_PARAMS
        );
        let mut session = Session::default();
        assert_eq!(
            handle(
                b"{\"jsonrpc\":\"2.0\",\"method\":\"nope\"}",
                &s,
                &mut session
            ),
            None
        );
        assert_eq!(session, Session::default());
        assert_eq!(
            handle(
                b"{\"jsonrpc\":\"2.0\",\"method\":\"exit\"}",
                &s,
                &mut session
            ),
            None
        );
        assert!(
            session.exited && !session.clean(),
            "exit before shutdown is a failure"
        );
    }

    #[test]
    fn invalid_requests_are_results() {
        let s = Settings::default();
        let m = r#"{"jsonrpc":"2.0","id":7,"method":"resolve","params":{"files":[{"path":"a","bogus":1}]}}"#;
        let reply = handle(m.as_bytes(), &s, &mut Session::default()).unwrap();
        assert_eq!(reply["id"], 7);
        assert_eq!(reply["result"]["ok"], false);
        assert_eq!(reply["result"]["error"]["code"], "invalid_request");
    }

    /// Anthropic's text-editor `view` sent to `resolve` or `apply` is answered as `read`.
    #[test]
    fn text_editor_view_is_a_read() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "one\ntwo\nthree\n").unwrap();
        let s = Settings {
            root: dir.path().to_path_buf(),
            ..Settings::default()
        };
        let m = r#"{"jsonrpc":"2.0","id":1,"method":"apply","params":{"command":"view","path":"a.txt","view_range":[2,2]}}"#;
        let reply = handle(m.as_bytes(), &s, &mut Session::default()).unwrap();
        let lines = &reply["result"]["lines"];
        assert_eq!(lines.as_array().unwrap().len(), 1, "{reply}");
        assert_eq!(lines[0]["text"], "two");
        let m = r#"{"jsonrpc":"2.0","id":2,"method":"resolve","params":{"command":"view","path":"a.txt","view_range":[0,1]}}"#;
        let reply = handle(m.as_bytes(), &s, &mut Session::default()).unwrap();
        assert_eq!(
            reply["result"]["error"]["pointer"], "/view_range",
            "{reply}"
        );
        let m = r#"{"jsonrpc":"2.0","id":3,"method":"apply","params":{"command":"insert","path":"a.txt","insert_line":1,"new_str":"1.5"}}"#;
        let reply = handle(m.as_bytes(), &s, &mut Session::default()).unwrap();
        assert_eq!(reply["result"]["ok"], true, "{reply}");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
            "one\n1.5\ntwo\nthree\n"
        );
    }

    /// LSP's ending: `shutdown` answers and the server keeps reading; other requests are errors;
    /// `exit` (or the end of input) ends it.
    #[test]
    fn shutdown_waits_for_exit() {
        let s = Settings::default();
        let input = concat!(
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"shutdown\"}\n",
            "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"schema\"}\n",
            "{\"jsonrpc\":\"2.0\",\"method\":\"exit\"}\n",
            "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"schema\"}\n",
        );
        let mut out = Vec::new();
        let session = serve(io::Cursor::new(input), &mut out, &s).unwrap();
        assert!(session.exited && session.clean());
        let replies: Vec<Value> = out
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice(l).unwrap())
            .collect();
        assert_eq!(replies.len(), 2, "nothing after exit: {replies:?}");
        assert_eq!(
            replies[0],
            json!({"jsonrpc": "2.0", "id": 1, "result": null})
        );
        assert_eq!(replies[1]["error"]["code"], INVALID_REQUEST);
        let session = serve(io::Cursor::new(""), &mut Vec::new(), &s).unwrap();
        assert!(!session.exited && session.clean());
    }

    /// By-position params: a one-element array holding the request array, the dialect text or
    /// the read params.
    #[test]
    fn params_by_position() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "one\n").unwrap();
        let s = Settings {
            root: dir.path().to_path_buf(),
            ..Settings::default()
        };
        let call = |params: Value| {
            let m = json!({"jsonrpc": "2.0", "id": 1, "method": "resolve", "params": params});
            handle(m.to_string().as_bytes(), &s, &mut Session::default()).unwrap()
        };
        let files = json!([{"path": "a.txt", "edits": [{"oldText": "one", "newText": "two"}]}]);
        for params in [
            files.clone(),
            json!([files.clone()]),
            json!([{"files": files.clone()}]),
            json!(["*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+two\n*** End Patch\n"]),
        ] {
            let r = call(params.clone());
            assert_eq!(r["result"]["ok"], true, "{params}: {r}");
            assert_eq!(r["result"]["files"][0]["path"], "a.txt", "{params}: {r}");
        }
        let m = json!({"jsonrpc": "2.0", "id": 2, "method": "read", "params": [{"path": "a.txt"}]});
        let r = handle(m.to_string().as_bytes(), &s, &mut Session::default()).unwrap();
        assert_eq!(r["result"]["lines"][0]["text"], "one", "{r}");
    }
}
