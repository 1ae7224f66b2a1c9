//! The faces: everything a person or a program talks to. Each turns its input into a request,
//! calls [`crate::service`] and renders the result its own way.
pub(crate) mod cli;
pub(crate) mod demo;
pub(crate) mod filter;
pub(crate) mod hook;
pub(crate) mod lines;
pub(crate) mod lsp;
pub(crate) mod mcp;
pub(crate) mod read;
pub(crate) mod review;
pub(crate) mod schema;
pub(crate) mod serve;
pub(crate) mod setup;
pub(crate) mod watch;

use crate::report::Mode;
use crate::report::message::Vocabulary;
use crate::service::{Run, Settings};

/// Makes freed big blocks go back to the system: set by the command line's `main` for every
/// command (an embedding program chooses its own allocator settings).
///
/// glibc's malloc maps a block over its mmap threshold (128 KiB) on its own and unmaps it when it
/// is freed, but then raises the threshold to the size of that block (up to 32 MiB): the next
/// big buffers (a message's line, a response, a file) come from the heap, whose free space is
/// kept and fragments. Fixing the threshold keeps every big buffer mapped on its own, so a
/// server's memory goes back down after a big request, and a one-shot command's big temporaries
/// (the matcher's automata and pattern lists, the parsed request's buffers) leave no resident
/// holes under its peak. 10,000 failing edits (debug build): `mcp` 33.1 -> 29.1 MB peak, `serve`
/// 29.8 -> 28.4 MB, `apply` 26.2 -> 24.7 MB (anonymous RSS 9.4 -> 8.0 MB).
pub(crate) fn return_big_blocks() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets a tunable of glibc's allocator, which locks its own state; it
    // is called before the face starts any thread.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
    }
}

/// For `apply`, which runs one request and exits: blocks under 4 MiB come from the heap again
/// (freed, they are reused there), bigger ones (a big file's text, its new version's pieces)
/// are still mapped on their own ([`return_big_blocks`], `pages`). Unmapping a block while
/// another thread of the process runs (the hashing and rendering threads of a big file's
/// resolution and commit) makes the kernel stop that thread's CPU to flush its TLB, which in
/// a VM costs a round trip through the hypervisor: 12 MB x 10,000 edits, the matcher's
/// temporaries alone (the windows, the pattern lists, the counts) were ~1.5 ms of it. Wall time
/// 59.6 -> 55.9 ms (median of 40 alternated runs), peak RSS 24.4 -> 24.6 MB.
pub(crate) fn heap_below_big_blocks() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: as in `return_big_blocks`; glibc's allocator locks its own state, and the
    // command has started no thread yet.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 4 << 20);
    }
}

/// Makes every thread allocate from one arena, for `mcp`: it runs each tool call on a thread of
/// tokio's blocking pool, and glibc gives each such thread an arena of its own, which keeps what
/// a call freed for that thread's later calls alone. 8 pipelined calls of 10,000 failing edits
/// (run one at a time): 42.8 MB peak with an arena per thread, 33.3 MB with one. The other
/// commands keep an arena per thread (resolution may run files on several threads).
pub(crate) fn one_arena() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets a tunable of glibc's allocator, which locks its own state; it
    // is called before the face starts any thread.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
}

/// What a face says when a JSON value holds no request.
pub(crate) const NOT_A_REQUEST: &str =
    "params must be a request object (SPEC §2), an array, or request text";

/// Runs a request given as a JSON value, as `serve` and `mcp` receive it (see
/// [`crate::request::from_json`]); a request that does not parse is a run with the request
/// failure (`ok: false`), as the CLI prints it. `None` when the value's JSON type holds no
/// request.
pub(crate) fn run_json(
    value: &serde_json::Value,
    mode: Mode,
    settings: &Settings,
    vocabulary: Vocabulary,
) -> Option<Run> {
    Some(match crate::request::from_json(value)? {
        Ok(req) => crate::service::run_in(&req, mode, settings, vocabulary),
        Err(e) => Run::failed_in(&e, vocabulary),
    })
}

/// The request of [`run_json`] given as the raw text of a JSON value (JSON-RPC `params` or MCP
/// tool arguments kept as [`serde_json::value::RawValue`]): an object or an array is read
/// straight into the typed request ([`crate::request::wire::parse_json`], so no tree of JSON
/// values is built and duplicate keys are refused as the CLI refuses them), a string is request
/// text in any dialect. As in the CLI, far too many edits are `too_large` before parsing
/// ([`crate::request::limits::precheck_edits`]). `None` when the value's JSON type holds no
/// request. The request owns its texts, so the message it was read from can be dropped before
/// it runs ([`run_parsed`]).
pub(crate) fn parse_json_text(
    raw: &str,
    settings: &Settings,
) -> Option<Result<crate::request::Request, crate::request::RequestError>> {
    use crate::request::limits::precheck_edits;
    let max_edits = settings.limits.max_edits;
    Some(match raw.trim_start().as_bytes().first() {
        Some(b'{' | b'[') => {
            precheck_edits(raw, max_edits).and_then(|()| crate::request::wire::parse_json(raw))
        }
        // A string (or a scalar, which holds no request): as small as its text.
        _ => {
            let value: serde_json::Value = serde_json::from_str(raw).ok()?;
            let checked = match &value {
                serde_json::Value::String(text) => precheck_edits(text, max_edits),
                _ => Ok(()),
            };
            match checked {
                Ok(()) => crate::request::from_json(&value)?,
                Err(e) => Err(e),
            }
        }
    })
}

/// The run of a request from [`parse_json_text`], or its request failure.
pub(crate) fn run_parsed(
    parsed: Result<crate::request::Request, crate::request::RequestError>,
    mode: Mode,
    settings: &Settings,
    vocabulary: Vocabulary,
) -> Run {
    match parsed {
        Ok(req) => crate::service::run_in(&req, mode, settings, vocabulary),
        Err(e) => Run::failed_in(&e, vocabulary),
    }
}
