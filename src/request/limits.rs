//! Bounds on what one request may cost before any work starts: its size in bytes (read with a
//! cap, so `/dev/zero` or an endless pipe never grows memory past the limit) and its number of
//! edits. Over a limit is `too_large`, naming the limit and the option that raises it.

use super::{Request, RequestError};
use std::io::Read;

/// Reads all of `r`, at most `limit` bytes; more is `too_large` (having read `limit + 1`).
/// `what` names the source in the message ("the request", "stdin"); `expected` is how many
/// bytes it likely holds ([`expected_size`]), read into one buffer of that size plus one (past
/// it, the buffer grows): without it, reading starts with 32 bytes and doubles (14 reads and
/// ~1.3 MB of copies for a 660 KB request).
pub(crate) fn read_capped(
    r: impl Read,
    limit: u64,
    what: &str,
    expected: u64,
) -> Result<Vec<u8>, RequestError> {
    let mut bytes = Vec::with_capacity(expected.min(limit).saturating_add(1) as usize);
    r.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| RequestError::new(format!("cannot read {what}: {e}")))?;
    if bytes.len() as u64 > limit {
        return Err(over_size(what, limit));
    }
    Ok(bytes)
}

/// [`read_capped`] of a file or stdin, expecting what [`expected_size`] says it holds.
pub(crate) fn read_capped_fd(
    source: impl Read + std::os::fd::AsFd,
    limit: u64,
    what: &str,
) -> Result<Vec<u8>, RequestError> {
    let expected = expected_size(&source);
    read_capped(source, limit, what, expected)
}

/// How many bytes reading `source` likely gives: a regular file's size, else 64 KiB (what a
/// pipe holds).
fn expected_size(source: impl std::os::fd::AsFd) -> u64 {
    match rustix::fs::fstat(source) {
        Ok(st)
            if rustix::fs::FileType::from_raw_mode(st.st_mode)
                == rustix::fs::FileType::RegularFile =>
        {
            st.st_size.max(0) as u64
        }
        _ => 64 * 1024,
    }
}

/// `too_large` for a request source over `limit` bytes.
pub(crate) fn over_size(what: &str, limit: u64) -> RequestError {
    RequestError::too_large(format!(
        "{what} is larger than the request size limit of {limit} bytes"
    ))
    .hint("split the batch, or raise the limit with --max-request-size (default: --max-file-size)")
}

/// Counts the request's edits (a Codex hunk counts as one edit); more than `max_edits` is
/// `too_large`.
pub(crate) fn check_edits(req: &Request, max_edits: usize) -> Result<(), RequestError> {
    let n: usize = req
        .files
        .iter()
        .map(|f| f.edits.len().saturating_add(f.chunks.len()))
        .fold(0, usize::saturating_add);
    if n > max_edits {
        return Err(RequestError::too_large(format!(
            "the request has {n} edits, over the limit of {max_edits}"
        ))
        .hint("split the batch, or raise the limit with --max-edits"));
    }
    Ok(())
}

/// The names an edit's old text goes by in the JSON shapes (SPEC §2).
const OLD_TEXT_KEYS: &[&[u8]] = &[
    b"oldText",
    b"old_string",
    b"old_str",
    b"old_text",
    b"oldString",
];

/// Counts the edits of a JSON request text before it is parsed (object keys naming an edit's
/// old text, at any depth), so that a request with far too many edits is refused before a
/// document of it is built: parsing costs many times the text's size per small edit. Linear, no
/// allocation; text that is not JSON (a Codex patch, SEARCH/REPLACE blocks) counts 0 here.
pub(crate) fn precheck_edits(text: &str, max_edits: usize) -> Result<(), RequestError> {
    let b = text.as_bytes();
    let (mut i, mut n) = (0, 0usize);
    while i < b.len() {
        if b[i] != b'"' {
            i += 1;
            continue;
        }
        let start = i + 1;
        let mut j = start;
        while j < b.len() && b[j] != b'"' {
            j += if b[j] == b'\\' { 2 } else { 1 };
        }
        let end = j.min(b.len());
        let mut k = end + 1;
        while k < b.len() && b[k].is_ascii_whitespace() {
            k += 1;
        }
        if k < b.len() && b[k] == b':' && OLD_TEXT_KEYS.contains(&&b[start..end]) {
            n += 1;
            if n > max_edits {
                return Err(RequestError::too_large(format!(
                    "the request has more than {max_edits} edits, the limit"
                ))
                .hint("split the batch, or raise the limit with --max-edits"));
            }
        }
        i = end + 1;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Code;

    #[test]
    fn reads_up_to_the_limit_only() {
        assert_eq!(read_capped(&b"abc"[..], 3, "x", 0).unwrap(), b"abc");
        let e = read_capped(std::io::repeat(0), 1000, "stdin", 64 * 1024).unwrap_err();
        assert_eq!(e.code, Code::TooLarge);
        assert!(e.message.contains("1000"), "{}", e.message);
    }

    #[test]
    fn counts_edit_keys_before_parsing() {
        let text = r#"{"files": [{"path": "a", "edits": [{"oldText": "\"oldText\": 1", "newText": "b"},
            {"old_string" : "c", "new_string": "d"}]}]}"#;
        assert!(precheck_edits(text, 2).is_ok());
        assert_eq!(precheck_edits(text, 1).unwrap_err().code, Code::TooLarge);
        assert!(precheck_edits("*** Begin Patch\n", 0).is_ok());
    }

    #[test]
    fn counts_edits_over_all_files() {
        let mut req = Request::default();
        for _ in 0..3 {
            let mut f = crate::request::FileRequest::new("a");
            f.edits.push(crate::request::EditSpec::new("a", "b"));
            f.edits.push(crate::request::EditSpec::new("c", "d"));
            req.files.push(f);
        }
        assert!(check_edits(&req, 6).is_ok());
        assert_eq!(check_edits(&req, 5).unwrap_err().code, Code::TooLarge);
    }
}
