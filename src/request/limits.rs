//! Bounds on what one request may cost before any work starts: its size in bytes (read with a
//! cap, so `/dev/zero` or an endless pipe never grows memory past the limit) and its number of
//! edits. Over a limit is `too_large`, naming the limit and the option that raises it.

use super::{Request, RequestError};
use std::io::Read;

/// Reads all of `r`, at most `limit` bytes; more is `too_large` (having read `limit + 1`).
/// `what` names the source in the message ("the request", "stdin").
pub fn read_capped(r: impl Read, limit: u64, what: &str) -> Result<Vec<u8>, RequestError> {
    let mut bytes = Vec::new();
    r.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| RequestError::new(format!("cannot read {what}: {e}")))?;
    if bytes.len() as u64 > limit {
        return Err(over_size(what, limit));
    }
    Ok(bytes)
}

/// `too_large` for a request source over `limit` bytes.
pub fn over_size(what: &str, limit: u64) -> RequestError {
    RequestError::too_large(format!(
        "{what} is larger than the request size limit of {limit} bytes"
    ))
    .hint("split the batch, or raise the limit with --max-request-size (default: --max-file-size)")
}

/// Counts the request's edits (a Codex hunk counts as one edit); more than `max_edits` is
/// `too_large`.
pub fn check_edits(req: &Request, max_edits: usize) -> Result<(), RequestError> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Code;

    #[test]
    fn reads_up_to_the_limit_only() {
        assert_eq!(read_capped(&b"abc"[..], 3, "x").unwrap(), b"abc");
        let e = read_capped(std::io::repeat(0), 1000, "stdin").unwrap_err();
        assert_eq!(e.code, Code::TooLarge);
        assert!(e.message.contains("1000"), "{}", e.message);
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
