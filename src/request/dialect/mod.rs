//! The non-JSON request dialects (SPEC §6): Codex `*** Begin Patch` patches and SEARCH/REPLACE
//! blocks, plus the input-kind detection that picks between them and JSON.
//!
//! Both dialects convert into the canonical [`Request`]; nothing downstream knows which dialect a
//! batch came from. Dialects only parse: Codex update hunks keep their chunks
//! ([`crate::request::PatchChunk`]), which the engine locates by the patch rules of
//! [`crate::engine::matcher::chunks`]; SEARCH/REPLACE blocks become plain edits matched under
//! SPEC §3.

pub(crate) mod codex;
pub(crate) mod search_replace;

use crate::request::{Request, RequestError};

/// Which syntax a request is written in (`--input`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum InputKind {
    /// Detect from the text.
    #[default]
    Auto,
    /// A JSON request (SPEC §2).
    Json,
    /// Codex `*** Begin Patch` … `*** End Patch`.
    Patch,
    /// `<<<<<<< SEARCH` / `=======` / `>>>>>>> REPLACE` blocks (or Cline's `------- SEARCH` /
    /// `=======` / `+++++++ REPLACE`).
    SearchReplace,
}

impl InputKind {
    /// Parses the `--input` value (`auto|json|patch|search-replace`).
    pub fn parse(s: &str) -> Option<InputKind> {
        match s {
            "auto" => Some(InputKind::Auto),
            "json" => Some(InputKind::Json),
            "patch" => Some(InputKind::Patch),
            "search-replace" => Some(InputKind::SearchReplace),
            _ => None,
        }
    }
}

/// Guesses the syntax of a request; `None` when nothing fits.
///
/// JSON when the first non-whitespace character is `{` or `[`; a patch when some line is
/// `*** Begin Patch` (padding allowed, so also inside a heredoc wrapper); SEARCH/REPLACE when some
/// line is a `<<<<<<< SEARCH` (or Cline `------- SEARCH`) marker. Never returns [`InputKind::Auto`].
pub(crate) fn detect(text: &str) -> Option<InputKind> {
    let text = text.strip_prefix('\u{FEFF}').unwrap_or(text);
    match text.trim_start().chars().next() {
        Some('{' | '[') => return Some(InputKind::Json),
        None => return None,
        _ => {}
    }
    if text.lines().any(|l| l.trim() == codex::BEGIN) {
        return Some(InputKind::Patch);
    }
    if text.lines().any(search_replace::is_search_marker) {
        return Some(InputKind::SearchReplace);
    }
    None
}

/// Parses a request of the given kind; `json` parses the JSON syntax (passed in so that this
/// module does not depend on the wire layer).
pub(crate) fn parse(
    text: &str,
    kind: InputKind,
    json: impl Fn(&str) -> Result<Request, RequestError>,
) -> Result<Request, RequestError> {
    let kind = match kind {
        InputKind::Auto => detect(text).ok_or_else(|| {
            RequestError::new(
                "expected a JSON request, a `*** Begin Patch` patch or SEARCH/REPLACE blocks",
            )
            .hint("pass --input json|patch|search-replace to say which one it is")
        })?,
        kind => kind,
    };
    match kind {
        InputKind::Json | InputKind::Auto => json(text),
        InputKind::Patch => codex::parse(text),
        InputKind::SearchReplace => search_replace::parse(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_each_kind() {
        assert_eq!(detect("  \n{\"files\": []}"), Some(InputKind::Json));
        assert_eq!(detect("[{}]"), Some(InputKind::Json));
        assert_eq!(
            detect("*** Begin Patch\n*** End Patch\n"),
            Some(InputKind::Patch)
        );
        assert_eq!(
            detect("apply_patch <<'EOF'\n *** Begin Patch \n*** End Patch\nEOF\n"),
            Some(InputKind::Patch)
        );
        assert_eq!(
            detect("a.txt\n```\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n```\n"),
            Some(InputKind::SearchReplace)
        );
        assert_eq!(
            detect(
                "<path>a.txt</path>\n<diff>\n------- SEARCH\na\n=======\nb\n+++++++ REPLACE\n</diff>\n"
            ),
            Some(InputKind::SearchReplace),
            "Cline's markers"
        );
        assert_eq!(detect("hello\n"), None);
        assert_eq!(detect("   "), None);
        assert_eq!(
            detect("say *** Begin Patch now"),
            None,
            "a marker must be its own line"
        );
    }

    #[test]
    fn auto_without_a_fit_says_what_was_expected() {
        let e = parse("hello", InputKind::Auto, |_| unreachable!()).unwrap_err();
        assert!(e.message.contains("expected a JSON request"), "{e:?}");
        assert!(e.message.contains("SEARCH/REPLACE"));
    }

    #[test]
    fn dispatches_json_to_the_closure() {
        let r = parse(" {}", InputKind::Auto, |t| {
            assert_eq!(t, " {}");
            Ok(Request::default())
        })
        .unwrap();
        assert!(r.files.is_empty());
        let e = parse("{}", InputKind::Patch, |_| unreachable!()).unwrap_err();
        assert!(e.message.contains("Begin Patch"), "{e:?}");
    }
}
