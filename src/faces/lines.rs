//! Bounded reading of JSON-RPC messages, shared by `serve` and `mcp` so that both apply the same
//! limit (`--max-request-size`) the same way: a message over it is never buffered (memory stays
//! at the limit, whatever arrives: `/dev/zero`, a line without end), it is skipped, and it is
//! answered with a JSON-RPC error naming the limit, so the client never waits forever. A line is
//! answered as soon as it passes the limit, before its end arrives (with the request's `id` when
//! it was found at the top level of the bytes read so far, else `null`), and the rest of it is
//! discarded up to its newline; a `Content-Length` body, whose end is known, is skipped first and
//! answered with the `id` found anywhere at its top level.

use serde_json::{Value, json};
use std::io::{self, BufRead};

/// JSON-RPC "Invalid Request", the code of the answer to a message over the limit.
pub(crate) const INVALID_REQUEST: i64 = -32600;

/// One line of input.
#[derive(Debug, PartialEq)]
pub(crate) enum Line {
    /// The line, without its `\n` (nor a `\r` before it).
    Full(Vec<u8>),
    /// A line longer than the cap, not kept: `len` bytes were read (the whole line, or, when
    /// `cut`, the part read when the cap was passed); `id` is the top-level `id` of the JSON
    /// object, if one was seen. `cut`: the rest of the line is still unread, for [`skip_line`]
    /// once the line is answered.
    Over { len: u64, id: Value, cut: bool },
}

/// The reader's next bytes (empty at the end of input), retrying an interrupted read. (The
/// second `fill_buf` returns the bytes already buffered, without reading: it is there only
/// because a borrow returned from inside the loop is not accepted.)
fn fill(r: &mut impl BufRead) -> io::Result<&[u8]> {
    loop {
        match r.fill_buf() {
            Ok([]) => return Ok(&[]),
            Ok(_) => break,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    r.fill_buf()
}

/// Reads one `\n`-terminated line (or the last, unterminated one) holding at most `cap` bytes
/// in memory; `None` at the end of input.
pub(crate) fn read_line(r: &mut impl BufRead, cap: u64) -> io::Result<Option<Line>> {
    let mut line: Vec<u8> = Vec::new();
    let mut over: Option<(u64, IdScan)> = None;
    loop {
        let (take, done) = {
            let buf = fill(r)?;
            if buf.is_empty() {
                break;
            }
            let nl = buf.iter().position(|&b| b == b'\n');
            let take = nl.map_or(buf.len(), |i| i + 1);
            let chunk = &buf[..nl.unwrap_or(take)];
            if (line.len() + chunk.len()) as u64 > cap.saturating_add(1) {
                // Over the cap (one byte of slack for a `\r`): answered now, whether or not the
                // line ends in this buffer; what the buffer holds of it is consumed.
                let mut scan = IdScan::default();
                scan.feed(&line);
                scan.feed(chunk);
                over = Some(((line.len() + chunk.len()) as u64, scan));
            } else {
                line.extend_from_slice(chunk);
            }
            (take, nl.is_some())
        };
        r.consume(take);
        if let Some((len, scan)) = over {
            return Ok(Some(Line::Over {
                len,
                id: scan.id(),
                cut: !done,
            }));
        }
        if done {
            return Ok(Some(finish(line, cap)));
        }
    }
    if line.is_empty() {
        return Ok(None);
    }
    Ok(Some(finish(line, cap)))
}

fn finish(mut line: Vec<u8>, cap: u64) -> Line {
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    if line.len() as u64 > cap {
        let mut scan = IdScan::default();
        scan.feed(&line);
        return Line::Over {
            len: line.len() as u64,
            id: scan.id(),
            cut: false,
        };
    }
    Line::Full(line)
}

/// Discards the rest of a line [`read_line`] cut (through its `\n`, or to the end of input), in
/// constant memory.
pub(crate) fn skip_line(r: &mut impl BufRead) -> io::Result<()> {
    loop {
        let (take, done) = {
            let buf = fill(r)?;
            if buf.is_empty() {
                return Ok(());
            }
            match buf.iter().position(|&b| b == b'\n') {
                Some(i) => (i + 1, true),
                None => (buf.len(), false),
            }
        };
        r.consume(take);
        if done {
            return Ok(());
        }
    }
}

/// Discards exactly `n` bytes of `r` (a `Content-Length` body over the cap), scanning them for
/// the top-level `id`. `None` when the input ends first.
pub(crate) fn skip(r: &mut impl BufRead, mut n: u64) -> io::Result<Option<Value>> {
    let mut scan = IdScan::default();
    while n > 0 {
        let take = {
            let buf = fill(r)?;
            if buf.is_empty() {
                return Ok(None);
            }
            let take = buf.len().min(usize::try_from(n).unwrap_or(usize::MAX));
            scan.feed(&buf[..take]);
            take
        };
        r.consume(take);
        n -= take as u64;
    }
    Ok(Some(scan.id()))
}

/// The JSON-RPC error answering a message over the limit `cap`: `len` bytes long, or, when `cut`,
/// passing the limit after `len` bytes with its end not read yet.
pub(crate) fn too_large(id: Value, len: u64, cut: bool, cap: u64) -> Value {
    let message = if cut {
        format!(
            "the message is over the limit of {cap} bytes (answered after {len} bytes, before its \
             end); it was not read, and the rest of its line is discarded"
        )
    } else {
        format!("the message is {len} bytes, over the limit of {cap} bytes; it was not read")
    };
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {
            "code": INVALID_REQUEST,
            "message": message,
            "data": {
                "code": "too_large",
                "limit": cap,
                "hint": "split the batch, or start the server with a larger --max-request-size",
            },
        },
    })
}

/// Finds the value of the top-level `"id"` member of a JSON object fed in pieces, in constant
/// memory: a small state machine over strings and nesting depth. Only a string, number or
/// `null` id counts (JSON-RPC's); anything else, or no id, is `null`.
#[derive(Debug, Default)]
pub(crate) struct IdScan {
    depth: u32,
    /// The first significant byte was seen (`{` for an object; a batch `[` never has an id).
    started: bool,
    object: bool,
    in_str: bool,
    esc: bool,
    /// At depth 1, the next string is a key.
    key_pos: bool,
    /// The key being read (first 3 bytes; enough to tell `id` from longer keys).
    key: Option<Vec<u8>>,
    last_key: Option<Vec<u8>>,
    /// The raw bytes of the id's value while it is read.
    value: Option<Vec<u8>>,
    found: Option<Vec<u8>>,
}

/// Longest id kept (a longer one is answered with `null`).
const MAX_ID: usize = 256;

impl IdScan {
    pub(crate) fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.byte(b);
        }
    }

    fn byte(&mut self, b: u8) {
        if !self.started {
            if b.is_ascii_whitespace() {
                return;
            }
            self.started = true;
            self.object = b == b'{';
        }
        if !self.object || self.found.is_some() {
            return;
        }
        if let Some(v) = &mut self.value {
            // Reading the id's value: a string to its closing quote, a scalar to `,` or `}`.
            let string = v.first() == Some(&b'"');
            if string || (v.is_empty() && b == b'"') {
                v.push(b);
                if v.len() > 1 {
                    if self.esc {
                        self.esc = false;
                    } else if b == b'\\' {
                        self.esc = true;
                    } else if b == b'"' {
                        self.found = self.value.take();
                    }
                }
                if self.value.as_ref().is_some_and(|v| v.len() > MAX_ID) {
                    self.value = None;
                    self.object = false;
                }
                return;
            }
            if b == b',' || b == b'}' {
                self.found = self.value.take();
                return;
            }
            if !b.is_ascii_whitespace() {
                v.push(b);
            }
            if v.len() > MAX_ID || matches!(b, b'{' | b'[') {
                self.value = None;
                self.object = false;
            }
            return;
        }
        if self.in_str {
            if self.esc {
                self.esc = false;
            } else if b == b'\\' {
                self.esc = true;
            } else if b == b'"' {
                self.in_str = false;
                if let Some(k) = self.key.take() {
                    self.last_key = Some(k);
                }
            } else if let Some(k) = &mut self.key
                && k.len() < 3
            {
                k.push(b);
            } else if let Some(k) = &mut self.key {
                k.push(b'~'); // longer than any key we look for
                k.truncate(3);
            }
            return;
        }
        match b {
            b'"' => {
                self.in_str = true;
                if self.depth == 1 && self.key_pos {
                    self.key = Some(Vec::new());
                }
            }
            b'{' | b'[' => {
                self.depth += 1;
                self.key_pos = self.depth == 1;
            }
            b'}' | b']' => self.depth = self.depth.saturating_sub(1),
            b':' if self.depth == 1 => {
                self.key_pos = false;
                if self.last_key.take().as_deref() == Some(b"id") {
                    self.value = Some(Vec::new());
                }
            }
            b',' if self.depth == 1 => self.key_pos = true,
            _ => {}
        }
    }

    /// The id found, or `null`.
    pub(crate) fn id(&self) -> Value {
        let raw = self.found.as_ref().or(self.value.as_ref());
        match raw.and_then(|r| serde_json::from_slice::<Value>(r).ok()) {
            Some(v @ (Value::String(_) | Value::Number(_))) => v,
            _ => Value::Null,
        }
    }

    /// Whether the input was an object with a top-level `id` member (any value).
    pub(crate) fn has_id(&self) -> bool {
        self.found.is_some() || self.value.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id_of(s: &str) -> Value {
        let mut scan = IdScan::default();
        // In awkward pieces, as reads deliver them.
        for chunk in s.as_bytes().chunks(3) {
            scan.feed(chunk);
        }
        scan.id()
    }

    #[test]
    fn finds_the_top_level_id_only() {
        assert_eq!(id_of(r#"{"jsonrpc":"2.0","id":7,"method":"x"}"#), json!(7));
        assert_eq!(
            id_of(r#"{"method":"x","params":{"id":1},"id":"a\"b"}"#),
            json!("a\"b")
        );
        assert_eq!(
            id_of(r#"{"params":{"edits":[{"id":"e1"}]}, "id" : 12 }"#),
            json!(12)
        );
        assert_eq!(id_of(r#"{"idx":1,"params":"id"}"#), Value::Null);
        assert_eq!(id_of(r#"[{"id":1}]"#), Value::Null);
        assert_eq!(id_of(r#"{"id":{"a":1}}"#), Value::Null);
        assert_eq!(id_of(r#"{"id":null}"#), Value::Null);
        assert_eq!(
            id_of(r#"{"params":{"oldText":"\"id\":5"},"id":6}"#),
            json!(6)
        );
    }

    #[test]
    fn lines_over_the_cap_are_skipped_not_buffered() {
        let big = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":3,\"params\":\"{}\"}}\r\nsmall\n",
            "z".repeat(1000)
        );
        let mut r = io::BufReader::with_capacity(16, big.as_bytes());
        match read_line(&mut r, 100).unwrap().unwrap() {
            Line::Over { len, id, cut } => {
                assert_eq!(id, json!(3));
                // Answered once past the cap, not at the end of the line.
                assert!(len > 100 && len < 200, "{len}");
                assert!(cut);
            }
            other => panic!("{other:?}"),
        }
        skip_line(&mut r).unwrap();
        assert_eq!(
            read_line(&mut r, 100).unwrap(),
            Some(Line::Full(b"small".to_vec()))
        );
        assert_eq!(read_line(&mut r, 100).unwrap(), None);
        // Exactly at the cap is fine, with or without `\r`.
        let mut r = io::Cursor::new(b"abcd\r\nabcd\nabcde".to_vec());
        assert_eq!(
            read_line(&mut r, 4).unwrap(),
            Some(Line::Full(b"abcd".to_vec()))
        );
        assert_eq!(
            read_line(&mut r, 4).unwrap(),
            Some(Line::Full(b"abcd".to_vec()))
        );
        assert!(matches!(
            read_line(&mut r, 4).unwrap(),
            Some(Line::Over {
                len: 5,
                cut: false,
                ..
            })
        ));
        // A line that ends in the buffer that passes the cap is read whole: nothing to skip.
        let mut r = io::Cursor::new(b"{\"id\":1,\"x\":\"yyyyyyyy\"}\nnext\n".to_vec());
        assert!(matches!(
            read_line(&mut r, 8).unwrap(),
            Some(Line::Over { cut: false, .. })
        ));
        assert_eq!(
            read_line(&mut r, 8).unwrap(),
            Some(Line::Full(b"next".to_vec()))
        );
        // An endless line without a newline: answered once past the cap (the input is not read
        // to its end first), then discarded in constant memory.
        let mut r = io::BufReader::with_capacity(64, io::Read::take(io::repeat(b'x'), 1 << 20));
        assert!(matches!(
            read_line(&mut r, 10).unwrap(),
            Some(Line::Over { cut: true, .. })
        ));
        let mut rest = Vec::new();
        io::Read::read_to_end(&mut r, &mut rest).unwrap();
        assert!(rest.len() > (1 << 20) - 128, "{}", rest.len());
    }

    #[test]
    fn skips_a_body() {
        let mut r = io::Cursor::new(br#"{"id":"q","p":1}rest"#.to_vec());
        assert_eq!(skip(&mut r, 16).unwrap(), Some(json!("q")));
        let mut rest = String::new();
        io::Read::read_to_string(&mut r, &mut rest).unwrap();
        assert_eq!(rest, "rest");
    }
}
