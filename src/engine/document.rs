//! Decoded text files: encoding checks, BOM, line-ending bookkeeping and LSP positions.
//!
//! A [`Document`] keeps the text exactly as the file has it (minus the UTF-8 BOM, which is
//! remembered and written back), so that every untouched byte survives an edit.

use serde::{Deserialize, Serialize};

/// How many leading bytes are searched for a NUL to call a file binary (SPEC §3.1).
const BINARY_PROBE: usize = 8 * 1024;

/// A line ending.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
// The variants are the wire names (serde) that SPEC defines; a doc comment per variant would
// make schemars publish `oneOf` consts instead of the schema's plain `enum` list.
#[allow(missing_docs)]
pub enum Eol {
    Lf,
    Crlf,
    Cr,
}

impl Eol {
    /// The ending's characters.
    pub fn as_str(self) -> &'static str {
        match self {
            Eol::Lf => "\n",
            Eol::Crlf => "\r\n",
            Eol::Cr => "\r",
        }
    }

    /// The wire name (`lf`, `crlf`, `cr`).
    pub fn name(self) -> &'static str {
        match self {
            Eol::Lf => "lf",
            Eol::Crlf => "crlf",
            Eol::Cr => "cr",
        }
    }
}

/// How `character` in a position counts (LSP `PositionEncodingKind`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
pub enum PositionEncoding {
    /// `utf-8`: `character` counts bytes.
    #[serde(rename = "utf-8")]
    Utf8,
    /// `utf-16` (the LSP default): `character` counts UTF-16 code units.
    #[default]
    #[serde(rename = "utf-16")]
    Utf16,
    /// `utf-32`: `character` counts Unicode scalar values.
    #[serde(rename = "utf-32")]
    Utf32,
}

impl PositionEncoding {
    /// Parses a wire name, case-insensitive, with or without the dash (`utf-16`, `utf16`).
    pub fn parse(s: &str) -> Option<PositionEncoding> {
        match s.to_ascii_lowercase().as_str() {
            "utf-8" | "utf8" => Some(PositionEncoding::Utf8),
            "utf-16" | "utf16" => Some(PositionEncoding::Utf16),
            "utf-32" | "utf32" => Some(PositionEncoding::Utf32),
            _ => None,
        }
    }

    /// Units of `s` in this encoding.
    pub fn units(self, s: &str) -> usize {
        if s.is_ascii() {
            return s.len();
        }
        match self {
            PositionEncoding::Utf8 => s.len(),
            PositionEncoding::Utf16 => s.chars().map(char::len_utf16).sum(),
            PositionEncoding::Utf32 => s.chars().count(),
        }
    }
}

/// LSP positions of a document's offsets, for offsets mostly taken in ascending order
/// ([`Document::positions`]); any order gives the same positions as [`Document::position`].
pub struct Positions<'a> {
    doc: &'a Document,
    enc: PositionEncoding,
    /// The last offset asked for and its position.
    last: Option<(usize, Position)>,
}

impl Positions<'_> {
    /// The LSP position of byte offset `offset` (which must be a char boundary).
    pub fn at(&mut self, offset: usize) -> Position {
        let doc = self.doc;
        let offset = offset.min(doc.text.len());
        let (line, start) = doc.line_and_start(offset);
        let (from, before) = match self.last {
            Some((at, p)) if p.line == line && at <= offset => (at, p.character),
            _ => (start, 0),
        };
        let p = Position {
            line,
            character: before + self.enc.units(&doc.text[from..offset]),
        };
        self.last = Some((offset, p));
        p
    }
}

/// A 0-based LSP position.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct Position {
    /// 0-based line.
    pub line: usize,
    /// 0-based, in units of the position encoding.
    pub character: usize,
}

/// Why bytes are not a text redline edits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// A NUL byte in the first 8 KiB.
    #[error("the file looks binary (NUL byte at offset {offset})")]
    Binary {
        /// Byte offset of the first NUL.
        offset: usize,
    },
    /// Not valid UTF-8 (or a UTF-16/32 byte order mark).
    #[error("the file is not UTF-8 ({detail})")]
    Encoding {
        /// What is wrong, for the message.
        detail: String,
    },
}

impl DecodeError {
    /// The error code it reports as (`binary_file` or `unsupported_encoding`).
    pub fn code(&self) -> crate::error::Code {
        match self {
            DecodeError::Binary { .. } => crate::error::Code::BinaryFile,
            DecodeError::Encoding { .. } => crate::error::Code::UnsupportedEncoding,
        }
    }
}

/// A decoded text file.
#[derive(Debug, Clone)]
pub struct Document {
    /// The file started with a UTF-8 BOM (not part of `text`).
    pub bom: bool,
    /// The text after the BOM, with its own line endings.
    pub text: String,
    /// Byte offset where each line starts (LSP lines: broken at CRLF, LF and lone CR), built on
    /// first use: a batch of exact edits needs only their positions, which `feeds` gives.
    line_starts: std::sync::OnceLock<LineStarts>,
    /// For a text without CR, the number of line feeds before each block of [`FEED_BLOCK`]
    /// bytes, counted as far as positions (and the diff) ask: at most one counting pass over
    /// the text (~0.4 ms per 12 MB), where the line index costs ~4 ms.
    feeds: Feeds,
    /// The text holds a CR (lines then break at CRLF and lone CR too, and only the line index
    /// locates them).
    has_cr: bool,
    /// The most frequent ending; LF on ties and when there is none.
    pub eol: Eol,
}

/// Bytes per block of [`Document`]'s count of line feeds (the diff's, which uses it).
const FEED_BLOCK: usize = crate::engine::diff::BLOCK;

/// The number of `\n`s of a text before each block of [`FEED_BLOCK`] bytes (a sparse line
/// index: a line's number is its block's count plus a count within the block), counted as far
/// as asked: a position near the start of a big file, or a diff of an edit there, counts only
/// that far. Every call passes the same text (the owner's).
#[derive(Default)]
pub(crate) struct Feeds {
    counts: std::sync::Mutex<Counts>,
}

/// What [`Feeds`] counted, under one lock.
#[derive(Default, Clone)]
struct Counts {
    /// `blocks[k]`: the `\n`s in `text[..k * FEED_BLOCK]` (the whole text for the block after
    /// the last), for `k` up to the furthest block asked for.
    blocks: Vec<usize>,
    /// The last offset [`Feeds::newlines_before`] counted to, and its count: the next count
    /// further in the same block starts there.
    cursor: (usize, usize),
}

impl Clone for Feeds {
    fn clone(&self) -> Feeds {
        Feeds {
            counts: std::sync::Mutex::new(self.lock().clone()),
        }
    }
}

impl std::fmt::Debug for Feeds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Feeds({} blocks counted)", self.lock().blocks.len())
    }
}

impl Feeds {
    fn lock(&self) -> std::sync::MutexGuard<'_, Counts> {
        // A panic while counting leaves a correct prefix: the counts stay usable.
        self.counts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The `\n`s in `text[..p]`, counted from the furthest place known before `p` in its
    /// block: the block's start, the last place counted to, or `known` (an offset and its
    /// count). Offsets asked in ascending order thus count the text about once, not half a
    /// block each (10,000 edits on 12 MB: two positions per edit and a line per side of the
    /// diff were ~60 MB of counting).
    pub(crate) fn newlines_before(
        &self,
        text: &[u8],
        p: usize,
        known: Option<(usize, usize)>,
    ) -> usize {
        let mut c = self.lock();
        let start = p / FEED_BLOCK * FEED_BLOCK;
        let mut from: Option<(usize, usize)> = None;
        for (at, n) in [Some(c.cursor), known].into_iter().flatten() {
            if start <= at && at <= p && from.is_none_or(|(f, _)| at > f) {
                from = Some((at, n));
            }
        }
        let (at, n) =
            from.unwrap_or_else(|| (start, Feeds::before_in(&mut c.blocks, text, p / FEED_BLOCK)));
        let n = n + memchr::memchr_iter(b'\n', &text[at..p]).count();
        c.cursor = (p, n);
        n
    }

    /// Counts one more block of `text` into `v`; false when every block is counted.
    fn grow(v: &mut Vec<usize>, text: &[u8]) -> bool {
        if v.is_empty() {
            v.push(0);
        }
        let j = v.len() - 1;
        if j * FEED_BLOCK >= text.len() {
            return false;
        }
        let chunk = &text[j * FEED_BLOCK..((j + 1) * FEED_BLOCK).min(text.len())];
        let n = v[j] + memchr::memchr_iter(b'\n', chunk).count();
        v.push(n);
        true
    }

    /// The `\n`s in `text[..k * FEED_BLOCK]` (all of them past the end).
    pub(crate) fn before(&self, text: &[u8], k: usize) -> usize {
        Feeds::before_in(&mut self.lock().blocks, text, k)
    }

    fn before_in(v: &mut Vec<usize>, text: &[u8], k: usize) -> usize {
        while v.len() <= k && Feeds::grow(v, text) {}
        v[k.min(v.len() - 1)]
    }

    /// The last block with fewer than `n` `\n`s before it (the one holding the `n`-th, for
    /// `n >= 1`), or `None` when the text has fewer than `n`.
    pub(crate) fn block_of(&self, text: &[u8], n: usize) -> Option<usize> {
        let mut c = self.lock();
        let v = &mut c.blocks;
        while v.last().is_none_or(|&c| c < n) && Feeds::grow(v, text) {}
        if v[v.len() - 1] < n {
            return None;
        }
        Some(v.partition_point(|&c| c < n) - 1)
    }
}

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

impl Document {
    /// Decodes file bytes (§3.1): UTF-16/32 BOMs first, then NUL bytes, then UTF-8.
    pub fn decode(bytes: Vec<u8>) -> Result<Document, DecodeError> {
        Document::decode_or_keep(bytes).map_err(|(e, _)| e)
    }

    /// [`Document::decode`], handing the bytes back when they do not decode (a file that is only
    /// moved, deleted or overwritten need not be text).
    pub fn decode_or_keep(bytes: Vec<u8>) -> Result<Document, (DecodeError, Vec<u8>)> {
        if bytes.starts_with(b"\x00\x00\xFE\xFF") || bytes.starts_with(b"\xFF\xFE\x00\x00") {
            let e = DecodeError::Encoding {
                detail: "UTF-32 byte order mark".into(),
            };
            return Err((e, bytes));
        }
        if bytes.starts_with(b"\xFE\xFF") || bytes.starts_with(b"\xFF\xFE") {
            let e = DecodeError::Encoding {
                detail: "UTF-16 byte order mark".into(),
            };
            return Err((e, bytes));
        }
        let probe = &bytes[..bytes.len().min(BINARY_PROBE)];
        if let Some(offset) = memchr::memchr(0, probe) {
            return Err((DecodeError::Binary { offset }, bytes));
        }
        let bom = bytes.starts_with(UTF8_BOM);
        let mut bytes = bytes;
        if bom {
            bytes.drain(..UTF8_BOM.len());
        }
        // Validated once, by the conversion itself.
        match String::from_utf8(bytes) {
            Ok(text) => Ok(Document::from_text(text, bom)),
            Err(e) => {
                let at = e.utf8_error().valid_up_to() + if bom { UTF8_BOM.len() } else { 0 };
                let mut bytes = e.into_bytes();
                if bom {
                    bytes.splice(0..0, UTF8_BOM.iter().copied());
                }
                let e = DecodeError::Encoding {
                    detail: format!("invalid UTF-8 at byte {at}"),
                };
                Err((e, bytes))
            }
        }
    }

    /// A document from text already known to be valid (an editor buffer).
    pub fn from_text(text: String, bom: bool) -> Document {
        let line_starts = std::sync::OnceLock::new();
        let has_cr = memchr::memchr(b'\r', text.as_bytes()).is_some();
        let eol = if has_cr {
            // Counting the endings finds every line start anyway.
            let (starts, eol) = scan_lines(&text);
            let _ = line_starts.set(starts);
            eol
        } else {
            Eol::Lf
        };
        Document {
            bom,
            text,
            line_starts,
            feeds: Feeds::default(),
            has_cr,
            eol,
        }
    }

    /// The line index, built on first use.
    fn line_starts(&self) -> &LineStarts {
        self.line_starts.get_or_init(|| scan_lines(&self.text).0)
    }

    /// The line of byte `offset` (clamped to the text) and the offset where that line starts,
    /// from the line index when there is one (or the text has a CR), else from the count of
    /// line feeds and a search back within a block.
    fn line_and_start(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        if self.has_cr || self.line_starts.get().is_some() {
            let starts = self.line_starts();
            let line = starts.count_upto(offset).saturating_sub(1);
            return (line, starts.get(line).unwrap_or(0));
        }
        let b = self.text.as_bytes();
        let k = offset / FEED_BLOCK;
        let from = k * FEED_BLOCK;
        let line = self.feeds.newlines_before(b, offset, None);
        if let Some(i) = memchr::memrchr(b'\n', &b[from..offset]) {
            return (line, from + i + 1);
        }
        if line == 0 {
            return (0, 0);
        }
        // The line's feed is the last one of the last block before `k` that has any: the
        // block where the count reaches `line`.
        // Invariant: the text has `line` feeds before `offset`, so their block is found.
        let j = self.feeds.block_of(b, line).unwrap_or(0);
        let block = &b[j * FEED_BLOCK..((j + 1) * FEED_BLOCK).min(b.len())];
        let i = memchr::memrchr(b'\n', block).map_or(0, |i| j * FEED_BLOCK + i + 1);
        (line, i)
    }

    /// The text's line feeds per block of [`crate::engine::diff::BLOCK`] bytes, counted as far
    /// as asked, shared by positions and the diff.
    pub(crate) fn feeds(&self) -> &Feeds {
        &self.feeds
    }

    /// The bytes of this document as a file: BOM (if any) then the text.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.text.len() + 3);
        if self.bom {
            out.extend_from_slice(UTF8_BOM);
        }
        out.extend_from_slice(self.text.as_bytes());
        out
    }

    /// Whether `bytes` are this document as a file ([`Document::to_bytes`]), without building it.
    pub fn is_bytes(&self, bytes: &[u8]) -> bool {
        let body = if self.bom {
            match bytes.strip_prefix(UTF8_BOM) {
                Some(b) => b,
                None => return false,
            }
        } else {
            bytes
        };
        body == self.text.as_bytes()
    }

    /// Whether the text ends with a line break.
    pub fn final_newline(&self) -> bool {
        self.text.ends_with('\n') || self.text.ends_with('\r')
    }

    /// Number of lines (a final line break does not start a new one for counting prose lines).
    pub fn line_count(&self) -> usize {
        self.line_starts().len()
    }

    /// The 0-based line containing byte offset `offset`.
    pub fn line_of(&self, offset: usize) -> usize {
        self.line_and_start(offset).0
    }

    /// The index of line starts (shared with the Codex chunk locator, so that a file of many
    /// short lines is indexed once).
    pub(crate) fn line_index(&self) -> &LineStarts {
        self.line_starts()
    }

    /// Byte offset where 0-based `line` starts.
    pub fn line_start(&self, line: usize) -> usize {
        self.line_starts().get(line).unwrap_or(self.text.len())
    }

    /// The LSP position of byte offset `offset` (which must be a char boundary).
    pub fn position(&self, offset: usize, enc: PositionEncoding) -> Position {
        let (line, start) = self.line_and_start(offset);
        Position {
            line,
            character: enc.units(&self.text[start..offset]),
        }
    }

    /// A cursor that gives the LSP positions of offsets taken in ascending order, each
    /// counted on from the one before on the same line: the many spans of a `replaceAll` on
    /// one long line cost one walk of the line, not one each.
    pub fn positions(&self, enc: PositionEncoding) -> Positions<'_> {
        Positions {
            doc: self,
            enc,
            last: None,
        }
    }

    /// The byte offset of an LSP position, clamped to its line (LSP semantics).
    pub fn offset(&self, pos: Position, enc: PositionEncoding) -> usize {
        let Some(start) = self.line_starts().get(pos.line) else {
            return self.text.len();
        };
        let end = self.line_content_end(pos.line);
        let mut units = 0;
        for (i, c) in self.text[start..end].char_indices() {
            if units >= pos.character {
                return start + i;
            }
            units += match enc {
                PositionEncoding::Utf8 => c.len_utf8(),
                PositionEncoding::Utf16 => c.len_utf16(),
                PositionEncoding::Utf32 => 1,
            };
        }
        end
    }

    /// Byte offset where the content of `line` ends (before its line break).
    pub fn line_content_end(&self, line: usize) -> usize {
        let starts = self.line_starts();
        let next = starts.get(line + 1).unwrap_or(self.text.len());
        let start = starts.get(line).unwrap_or(self.text.len());
        let b = self.text.as_bytes();
        let mut end = next;
        if end > start && b[end - 1] == b'\n' {
            end -= 1;
        }
        if end > start && b[end - 1] == b'\r' {
            end -= 1;
        }
        end
    }

    /// `text` with every line break (CRLF, CR, LF) turned into this document's dominant ending.
    pub fn adapt_eol(&self, text: &str) -> String {
        self.eol_adapted(text).into_owned()
    }

    /// [`Document::adapt_eol`], borrowed when `text` needs no change.
    pub(crate) fn eol_adapted<'t>(&self, text: &'t str) -> std::borrow::Cow<'t, str> {
        let lf = crate::engine::normalize::lf(text);
        match self.eol {
            Eol::Lf => lf,
            eol => std::borrow::Cow::Owned(lf.replace('\n', eol.as_str())),
        }
    }
}

/// Lines per block of the packed index.
const BLOCK: usize = 64;

/// Byte offsets where lines start. Packed when every line of a block of [`BLOCK`] lines starts
/// within 64 KiB of the block's first line (lines under 1 KiB on average): a 4-byte start per
/// block and a 2-byte delta per line, so on a big source file the index is ~0.05x of the text,
/// not ~0.1x as 4 bytes a line. Else 4 bytes a line for a text under 4 GiB, 8 above.
#[derive(Debug, Clone)]
pub(crate) enum LineStarts {
    Packed { blocks: Vec<u32>, deltas: Vec<u16> },
    Small(Vec<u32>),
    Large(Vec<usize>),
}

impl LineStarts {
    /// The line starts of `text` (lines broken at CRLF, LF and lone CR).
    pub(crate) fn of(text: &str) -> LineStarts {
        scan_lines(text).0
    }

    /// How many lines (the piece after a final line break counts as one).
    pub(crate) fn len(&self) -> usize {
        match self {
            LineStarts::Packed { deltas, .. } => deltas.len(),
            LineStarts::Small(v) => v.len(),
            LineStarts::Large(v) => v.len(),
        }
    }

    /// Where line `i` starts.
    pub(crate) fn get(&self, i: usize) -> Option<usize> {
        match self {
            LineStarts::Packed { blocks, deltas } => deltas
                .get(i)
                .map(|&d| blocks[i / BLOCK] as usize + d as usize),
            LineStarts::Small(v) => v.get(i).map(|&s| s as usize),
            LineStarts::Large(v) => v.get(i).copied(),
        }
    }

    /// How many lines start at or before `offset`.
    fn count_upto(&self, offset: usize) -> usize {
        match self {
            LineStarts::Packed { blocks, deltas } => {
                // The first line starts at 0, so some block starts at or before `offset`.
                let k = blocks.partition_point(|&s| s as usize <= offset) - 1;
                let base = blocks[k] as usize;
                let lo = k * BLOCK;
                let hi = (lo + BLOCK).min(deltas.len());
                lo + deltas[lo..hi].partition_point(|&d| base + d as usize <= offset)
            }
            LineStarts::Small(v) => v.partition_point(|&s| s as usize <= offset),
            LineStarts::Large(v) => v.partition_point(|&s| s <= offset),
        }
    }
}

/// Line starts and the dominant line ending.
fn scan_lines(text: &str) -> (LineStarts, Eol) {
    if u32::try_from(text.len()).is_err() {
        let mut starts = Vec::new();
        let eol = scan_breaks(text, |s| starts.push(s));
        return (LineStarts::Large(starts), eol);
    }
    // Every offset fits in 32 bits: the text is shorter than u32::MAX.
    let (mut blocks, mut deltas) = (Vec::new(), Vec::new());
    let mut packed = true;
    let eol = scan_breaks(text, |s| {
        if !packed {
            return;
        }
        if deltas.len() % BLOCK == 0 {
            blocks.push(s as u32);
        }
        let base = *blocks.last().expect("a block was started") as usize;
        match u16::try_from(s - base) {
            Ok(d) => deltas.push(d),
            Err(_) => packed = false,
        }
    });
    if packed {
        blocks.shrink_to_fit();
        deltas.shrink_to_fit();
        return (LineStarts::Packed { blocks, deltas }, eol);
    }
    // Long lines: a second pass, four bytes a line.
    drop((blocks, deltas));
    let mut starts = Vec::new();
    scan_breaks(text, |s| starts.push(s as u32));
    (LineStarts::Small(starts), eol)
}

/// Calls `each` with every line start in order (0 first; lines break at CRLF, LF and lone CR)
/// and returns the dominant line ending.
fn scan_breaks(text: &str, mut each: impl FnMut(usize)) -> Eol {
    let b = text.as_bytes();
    each(0);
    if memchr::memchr(b'\r', b).is_none() {
        // LF only (most files): one single-byte search, faster than looking for two.
        for at in LineFeeds::new(b) {
            each(at + 1);
        }
        return Eol::Lf;
    }
    let (mut lf, mut crlf, mut cr) = (0usize, 0usize, 0usize);
    let mut i = 0;
    while let Some(j) = memchr::memchr2(b'\n', b'\r', &b[i..]) {
        let at = i + j;
        if b[at] == b'\n' {
            lf += 1;
            i = at + 1;
        } else if b.get(at + 1) == Some(&b'\n') {
            crlf += 1;
            i = at + 2;
        } else {
            cr += 1;
            i = at + 1;
        }
        each(i);
    }
    if crlf > lf && crlf > cr {
        Eol::Crlf
    } else if cr > lf && cr > crlf {
        Eol::Cr
    } else {
        Eol::Lf
    }
}

/// The offsets of the `\n` bytes of a text, in order, found eight bytes at a time: each word's
/// line feeds come from one exact bit test (no carry between bytes), then one step per line
/// feed. On source text (lines of a few dozen bytes) this takes about half the time of
/// `memchr_iter`, which starts a new vector search at every line; on long lines it is slower
/// (about 1 ms per 10 MB without any line feed), which whole-file scans can afford.
pub(crate) struct LineFeeds<'a> {
    bytes: &'a [u8],
    /// Offset just past the word `mask` was taken from.
    next: usize,
    /// The line feeds of that word not yet returned: bit 7 of each such byte.
    mask: u64,
}

impl<'a> LineFeeds<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> LineFeeds<'a> {
        LineFeeds {
            bytes,
            next: 0,
            mask: 0,
        }
    }
}

impl Iterator for LineFeeds<'_> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        const LOW: u64 = 0x7F7F_7F7F_7F7F_7F7F;
        const LF: u64 = 0x0A0A_0A0A_0A0A_0A0A;
        loop {
            if self.mask != 0 {
                let at = self.next - 8 + self.mask.trailing_zeros() as usize / 8;
                self.mask &= self.mask - 1;
                return Some(at);
            }
            let rest = self.bytes.get(self.next..)?;
            let Some(word) = rest.first_chunk::<8>() else {
                // Under eight bytes left.
                let i = memchr::memchr(b'\n', rest)?;
                self.next += i + 1;
                return Some(self.next - 1);
            };
            // A byte of `x` is zero exactly where the word has '\n'; bit 7 of each byte of the
            // sum is set when its low seven bits are not all zero (no byte carries into the
            // next), or-ed with `x` when its own bit 7 is.
            let x = u64::from_le_bytes(*word) ^ LF;
            self.mask = !(((x & LOW) + LOW) | x | LOW);
            self.next += 8;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts asked in any order, as far as each asks, agree with counting everything.
    #[test]
    fn feeds_counted_as_far_as_asked() {
        for len in [
            0,
            1,
            FEED_BLOCK - 1,
            FEED_BLOCK,
            FEED_BLOCK + 1,
            5 * FEED_BLOCK + 17,
        ] {
            for step in [1usize, 3, 700, FEED_BLOCK, 9_999] {
                let t: Vec<u8> = (0..len)
                    .map(|i| if (i + 1) % step == 0 { b'\n' } else { b'x' })
                    .collect();
                let before = |k: usize| {
                    let end = (k * FEED_BLOCK).min(t.len());
                    memchr::memchr_iter(b'\n', &t[..end]).count()
                };
                let blocks = t.len().div_ceil(FEED_BLOCK);
                let total = before(blocks);
                let f = Feeds::default();
                let ks: Vec<usize> = (0..blocks + 3).rev().chain(0..blocks + 3).collect();
                for (j, &k) in ks.iter().enumerate() {
                    let g = Feeds::default();
                    assert_eq!(g.before(&t, k), before(k), "len {len} step {step} k {k}");
                    assert_eq!(f.before(&t, k), before(k), "len {len} step {step} k {k}");
                    let n = j % (total + 2);
                    if n >= 1 {
                        let want = (n <= total)
                            .then(|| (0..=blocks).filter(|&b| before(b) < n).max().unwrap_or(0));
                        assert_eq!(Feeds::default().block_of(&t, n), want, "block_of({n})");
                        assert_eq!(f.block_of(&t, n), want, "block_of({n})");
                    }
                }
            }
        }
    }

    #[test]
    fn line_feeds_are_memchrs() {
        let mut texts: Vec<Vec<u8>> = [
            "",
            "\n",
            "a\nb",
            "\n\n\n\n\n\n\n\n\n\n",
            "abcdefgh\nabcdefg\n\n",
        ]
        .iter()
        .map(|t| t.as_bytes().to_vec())
        .collect();
        // Every byte value around a line feed, at every offset in a word.
        for v in 0..=255u8 {
            for at in 0..17 {
                let mut t = vec![v; 24];
                t[at] = b'\n';
                texts.push(t);
            }
        }
        texts.push(
            (0..5000u32)
                .map(|i| if i % 7 == 0 { b'\n' } else { (i % 251) as u8 })
                .collect(),
        );
        for t in &texts {
            let got: Vec<usize> = LineFeeds::new(t).collect();
            let want: Vec<usize> = memchr::memchr_iter(b'\n', t).collect();
            assert_eq!(got, want, "{t:?}");
        }
    }

    #[test]
    fn rejects_utf16_before_nul() {
        let e = Document::decode(b"\xFF\xFEa\x00b\x00".to_vec()).unwrap_err();
        assert!(matches!(e, DecodeError::Encoding { .. }));
        let e = Document::decode(b"ab\x00".to_vec()).unwrap_err();
        assert_eq!(e, DecodeError::Binary { offset: 2 });
        let e = Document::decode(b"caf\xE9\n".to_vec()).unwrap_err();
        assert!(matches!(e, DecodeError::Encoding { .. }));
        // The bytes come back whole, BOM included, and the offset counts it.
        let bad = b"\xEF\xBB\xBFab\xE9".to_vec();
        let (e, back) = Document::decode_or_keep(bad.clone()).unwrap_err();
        assert_eq!(back, bad);
        assert_eq!(
            e.to_string(),
            "the file is not UTF-8 (invalid UTF-8 at byte 5)"
        );
    }

    #[test]
    fn keeps_bom_out_of_text_and_positions() {
        let d = Document::decode(b"\xEF\xBB\xBFab\ncd".to_vec()).unwrap();
        assert!(d.bom);
        assert_eq!(d.text, "ab\ncd");
        assert_eq!(
            d.position(4, PositionEncoding::Utf16),
            Position {
                line: 1,
                character: 1
            }
        );
        assert_eq!(d.to_bytes(), b"\xEF\xBB\xBFab\ncd");
        assert!(d.is_bytes(b"\xEF\xBB\xBFab\ncd"));
        assert!(!d.is_bytes(b"ab\ncd"));
        assert!(Document::from_text("ab".into(), false).is_bytes(b"ab"));
    }

    #[test]
    fn dominant_eol_and_lines() {
        let d = Document::from_text("a\r\nb\r\nc\nd\re".into(), false);
        assert_eq!(d.eol, Eol::Crlf);
        assert_eq!(d.line_count(), 5);
        assert_eq!(d.line_start(3), 8);
        assert_eq!(d.line_content_end(0), 1);
        assert_eq!(
            Document::from_text("a\nb\r\n".into(), false).eol,
            Eol::Lf,
            "tie is LF"
        );
        assert_eq!(Document::from_text("a\rb\r".into(), false).eol, Eol::Cr);
        assert_eq!(
            Document::from_text("a\r\nb".into(), false).adapt_eol("x\ny\rz"),
            "x\r\ny\r\nz"
        );
    }

    /// Every index form answers as a plain list of line starts does, on texts of short lines
    /// (packed) and with a line over 64 KiB (four bytes a line), with every kind of break.
    #[test]
    fn line_index_forms_agree_with_a_plain_list() {
        let short: String = (0..700)
            .map(|i| match i % 7 {
                0 => "\r\n".to_string(),
                3 => "\r".to_string(),
                5 => String::new(),
                _ => format!("line {i}\n"),
            })
            .collect();
        let long = format!("{short}{}\nend\r\n\n{short}", "x".repeat(70_000));
        for (text, want_packed) in [
            (short.as_str(), true),
            (long.as_str(), false),
            ("", true),
            ("a\n", true),
        ] {
            let (starts, _) = scan_lines(text);
            assert_eq!(
                matches!(starts, LineStarts::Packed { .. }),
                want_packed,
                "{}",
                text.len()
            );
            let mut plain = Vec::new();
            scan_breaks(text, |s| plain.push(s));
            assert_eq!(starts.len(), plain.len());
            for (i, &s) in plain.iter().enumerate() {
                assert_eq!(starts.get(i), Some(s));
            }
            assert_eq!(starts.get(plain.len()), None);
            for offset in 0..=text.len() + 1 {
                let want = plain.partition_point(|&s| s <= offset);
                assert_eq!(starts.count_upto(offset), want, "offset {offset}");
            }
        }
    }

    /// Positions from the count of line feeds (a text without CR whose line index was never
    /// built) are those of the line index, for lines shorter and longer than a block of the
    /// count, and blocks without a line feed.
    #[test]
    fn positions_without_the_line_index_agree_with_it() {
        let long = "y".repeat(3 * FEED_BLOCK + 5);
        let texts = [
            String::new(),
            "\n".into(),
            "a\nb".into(),
            format!("{long}\n\n{long}\nz\u{e9}\n{long}"),
            format!("\n{long}"),
            (0..2000).map(|i| format!("l{i}\u{2603}\n")).collect(),
            "x".repeat(FEED_BLOCK) + "\n" + &"w".repeat(FEED_BLOCK - 1) + "\n",
        ];
        for t in &texts {
            let lazy = Document::from_text(t.clone(), false);
            let indexed = Document::from_text(t.clone(), false);
            let _ = indexed.line_count();
            let offsets: Vec<usize> = (0..=t.len()).filter(|&o| t.is_char_boundary(o)).collect();
            for &o in &offsets {
                for enc in [PositionEncoding::Utf8, PositionEncoding::Utf16] {
                    assert_eq!(
                        lazy.position(o, enc),
                        indexed.position(o, enc),
                        "offset {o}"
                    );
                }
                assert_eq!(lazy.line_of(o), indexed.line_of(o), "offset {o}");
            }
            assert!(
                lazy.line_starts.get().is_none(),
                "positions built the line index"
            );
        }
    }

    /// The cursor of ascending offsets gives [`Document::position`]'s answer, offsets taken in
    /// order, repeated, or going back.
    #[test]
    fn the_positions_cursor_agrees_with_position() {
        let texts = [
            "\u{e9}a\u{1F600}b\r\n\u{e9}\u{e9}\rx\n\ny\u{2603}".to_string(),
            "a".repeat(50) + "\n" + &"\u{1F600}".repeat(9),
            String::new(),
        ];
        for t in &texts {
            let d = Document::from_text(t.clone(), false);
            let offsets: Vec<usize> = (0..=t.len()).filter(|&o| t.is_char_boundary(o)).collect();
            let back: Vec<usize> = offsets.iter().rev().copied().collect();
            let twice: Vec<usize> = offsets.iter().flat_map(|&o| [o, o]).collect();
            for enc in [
                PositionEncoding::Utf8,
                PositionEncoding::Utf16,
                PositionEncoding::Utf32,
            ] {
                for order in [&offsets, &back, &twice] {
                    let mut at = d.positions(enc);
                    for &o in order {
                        assert_eq!(at.at(o), d.position(o, enc), "offset {o} in {t:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn positions_in_every_encoding() {
        let d = Document::from_text("日本\n😀x".into(), false);
        let off = "日本\n😀".len();
        assert_eq!(
            d.position(off, PositionEncoding::Utf16),
            Position {
                line: 1,
                character: 2
            }
        );
        assert_eq!(
            d.position(off, PositionEncoding::Utf8),
            Position {
                line: 1,
                character: 4
            }
        );
        assert_eq!(
            d.position(off, PositionEncoding::Utf32),
            Position {
                line: 1,
                character: 1
            }
        );
        assert_eq!(
            d.offset(
                Position {
                    line: 1,
                    character: 2
                },
                PositionEncoding::Utf16
            ),
            off
        );
        assert_eq!(
            d.offset(
                Position {
                    line: 0,
                    character: 99
                },
                PositionEncoding::Utf16
            ),
            6
        );
    }
}
