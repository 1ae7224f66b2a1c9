//! The matcher as it was before rejected reports were bounded (tests only): every occurrence
//! of N(oldText) reported by brute force, every rule checked at each, no share, no budget. The
//! reference [`super::find_all`] is compared with: the same results, except that a count past
//! [`MAX_AMBIGUOUS`] may be left uncounted and an edit may be `too_large` where the search's
//! budget was exceeded.

use super::*;

#[derive(Default)]
struct Hits {
    /// Occurrences counted; a pattern that is not replaceAll stops at its [`share`].
    count: usize,
    /// It stopped there: `count` is a lower bound.
    uncounted: bool,
    keep_all: bool,
    /// (N range, original span) of counted occurrences, in order of start.
    occ: Vec<(Range<usize>, Range<usize>)>,
}

/// Finds every needle in `file` (N of `text`), checking every occurrence.
pub(crate) fn find_all_reference(
    text: &str,
    file: &Normalized,
    needles: &[Needle<'_>],
) -> Vec<Result<Found, Miss>> {
    // N(oldText) of each needle and its trimmed-last-line flag, without the map back to the
    // original (made again for a needle found only under N(·)): 32 bytes a needle, not 64.
    let patterns: Vec<(Cow<'_, str>, bool)> = needles
        .iter()
        .map(|n| {
            let p = Normalized::new(n.old_text);
            (p.text, p.last_line_trimmed)
        })
        .collect();
    // One search pattern per distinct N(oldText) and trimmed-last-line flag: two oldTexts with
    // the same N(·) count different occurrences when only one of them must end at a line end.
    // With the flag, the oldText itself is kept too: an exact occurrence always counts (§3.4).
    let file_open_end = !file.text.is_empty() && !file.text.ends_with('\n');
    // Each needle's search keys: its main one, and the line-based alternative at the end of a
    // file without a final newline.
    let key = |i: usize| -> Key<'_> {
        let (text, trimmed) = &patterns[i];
        let exact_key = if *trimmed { needles[i].old_text } else { "" };
        (&**text, *trimmed, exact_key, false)
    };
    let alt_key = |i: usize| -> Option<Key<'_>> {
        (needles[i].line_based && file_open_end)
            .then(|| patterns[i].0.strip_suffix('\n'))
            .flatten()
            .filter(|t| !t.is_empty())
            .map(|t| (t, false, "", true))
    };
    let (distinct, pattern_of) = intern(needles.len(), key, alt_key);
    let mut hits: Vec<Hits> = (0..distinct.len()).map(|_| Hits::default()).collect();
    for (i, n) in needles.iter().enumerate() {
        if n.replace_all {
            hits[pattern_of[i].0 as usize].keep_all = true;
        }
    }
    let bytes: Vec<&[u8]> = distinct.iter().map(|d| d.1.as_bytes()).collect();
    // No share is ever reached.
    let budget = usize::MAX / 2;
    // What the search needs of each distinct pattern besides its bytes: the needle it was taken
    // from and whether it only counts at the end of the file (8 bytes, not 32).
    let distinct: Vec<(u32, bool)> = distinct
        .into_iter()
        .map(|(from, _, eof)| (from as u32, eof))
        .collect();
    search::with_reference(|| {
        search::occurrences(file.text.as_bytes(), &bytes, |pid, m| {
            let (from, eof) = distinct[pid];
            let from = from as usize;
            let trimmed = !eof && patterns[from].1;
            let span = if eof {
                if m.end != file.text.len() {
                    return true;
                }
                // The whole last line, its trailing whitespace included.
                match file.orig_span(m.clone(), true) {
                    Some(span) => span,
                    None => return true,
                }
            } else if trimmed && !file.at_line_end(m.end) {
                // Not at a line end: only an exact occurrence of oldText counts.
                match exact_at(text, file, m.clone(), needles[from].old_text) {
                    Some(span) => span,
                    None => return true,
                }
            } else {
                match file.orig_span(m.clone(), trimmed) {
                    Some(span) => span,
                    None => return true,
                }
            };
            // A pattern that is not replaceAll needs its first MAX_AMBIGUOUS + 1 occurrences and
            // a count: past its share of the budget it is given up (the search then stops paying
            // for it), so a short oldText in a highly repetitive file costs its share, not one
            // report per period.
            let h = &mut hits[pid];
            h.count += 1;
            if h.keep_all || h.occ.len() <= MAX_AMBIGUOUS {
                h.occ.push((m, span));
            }
            if !h.keep_all && h.count >= share(budget, bytes.len(), bytes[pid].len()) {
                h.uncounted = true;
                return false;
            }
            true
        })
    });
    for h in &mut hits {
        // Overlapping search reports by end; the rules are leftmost first.
        h.occ.sort_by_key(|(n, _)| (n.start, n.end));
        if !h.keep_all {
            h.occ.truncate(MAX_AMBIGUOUS + 1);
        }
    }
    needles
        .iter()
        .enumerate()
        .map(|(i, needle)| {
            let (main, alt) = pattern_of[i];
            let main = main as usize;
            let alt = (alt != NO_ALT).then_some(alt as usize);
            // A line-based needle counts its end-of-file occurrence (at most one) with the
            // others.
            let merged;
            let h = match alt {
                Some(alt) => {
                    let (a, b) = (&hits[main], &hits[alt]);
                    let mut occ = a.occ.clone();
                    occ.extend(b.occ.iter().cloned());
                    merged = Hits {
                        count: a.count + b.count,
                        uncounted: a.uncounted || b.uncounted,
                        keep_all: a.keep_all,
                        occ,
                    };
                    &merged
                }
                None => &hits[main],
            };
            let eof_end = alt
                .filter(|&alt| hits[alt].count > 0)
                .map(|alt| hits[alt].occ[0].1.end);
            let count = if h.uncounted { UNCOUNTED } else { h.count };
            decide(text, file, needle, h.occ.iter().collect(), count, eof_end)
        })
        .collect()
}

/// The original span of an exact occurrence of `old_text` (line endings aside) whose N starts at
/// `n_start`, if there is one (§3.4: an exact occurrence always counts).
fn exact_at(
    text: &str,
    file: &Normalized,
    n: Range<usize>,
    old_text: &str,
) -> Option<Range<usize>> {
    let (n_start, n_end) = (n.start, n.end);
    let start = file.orig_start(n_start)?;
    // Cheap test first: the whitespace oldText ends with must follow the match's N end.
    let last_line = old_text.rsplit(['\n', '\r']).next().unwrap_or(old_text);
    let ws = &last_line[last_line.trim_end().len()..];
    let body_end = file.orig_end(n_end)?;
    if !text[body_end..].starts_with(ws) {
        return None;
    }
    let rest = &text.as_bytes()[start..];
    // Walk the original (CRLF counting as one LF) along oldText's line-ending-free bytes.
    let mut at = 0;
    for want in lf_bytes(old_text) {
        let got = match rest.get(at)? {
            b'\r' if rest.get(at + 1) == Some(&b'\n') => {
                at += 2;
                b'\n'
            }
            b'\r' => {
                at += 1;
                b'\n'
            }
            &c => {
                at += 1;
                c
            }
        };
        if got != want {
            return None;
        }
    }
    let end = start + at;
    // The end must be a cluster boundary of the original (which never splits a CRLF).
    (text.is_char_boundary(end) && file.is_orig_boundary(end)).then_some(start..end)
}
