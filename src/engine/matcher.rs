//! Finding every edit of a file in one pass (SPEC §3.4–§3.6).
//!
//! All patterns N(oldText) of a file go into one Aho-Corasick automaton that scans N(file) once
//! with overlapping matches, so the cost is linear in the file plus the edits plus the matches.
//! A match counts only if both ends fall on cluster boundaries of the original and, under the
//! trimmed-last-line rule, it ends at a line end.

use crate::engine::normalize::{Normalization, Normalized, lf, table_of};
use aho_corasick::{AhoCorasick, MatchKind as AcMatchKind};
use std::collections::HashMap;
use std::ops::Range;
use unicode_normalization::UnicodeNormalization;

/// How many occurrences an ambiguous error lists (§3.9).
pub const MAX_AMBIGUOUS: usize = 20;

/// How an edit matched: `exact`, or `normalized` (only under N(·)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MatchKind {
    Exact,
    Normalized,
}

impl MatchKind {
    pub fn as_str(self) -> &'static str {
        match self {
            MatchKind::Exact => "exact",
            MatchKind::Normalized => "normalized",
        }
    }
}

/// One edit to look for.
#[derive(Debug, Clone, Copy)]
pub struct Needle<'a> {
    pub old_text: &'a str,
    pub replace_all: bool,
}

/// Where an edit matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// Original byte spans, in order; one unless `replaceAll`.
    pub spans: Vec<Range<usize>>,
    pub kind: MatchKind,
    pub normalizations: Vec<Normalization>,
}

/// Why an edit did not match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Miss {
    NotFound,
    /// More than one occurrence; the first [`MAX_AMBIGUOUS`] original spans, and the total.
    Ambiguous {
        spans: Vec<Range<usize>>,
        count: usize,
    },
}

#[derive(Default)]
struct Hits {
    count: usize,
    keep_all: bool,
    /// (N range, original span) of counted occurrences, in order of start.
    occ: Vec<(Range<usize>, Range<usize>)>,
}

/// Finds every needle in `file` (N of `text`). Needles must have a non-empty N(oldText).
pub fn find_all(text: &str, file: &Normalized, needles: &[Needle<'_>]) -> Vec<Result<Found, Miss>> {
    let patterns: Vec<Normalized> = needles
        .iter()
        .map(|n| Normalized::new(n.old_text))
        .collect();
    // One automaton pattern per distinct N(oldText) and trimmed-last-line flag: two oldTexts with
    // the same N(·) count different occurrences when only one of them must end at a line end.
    let mut ids: HashMap<(&str, bool), usize> = HashMap::new();
    let mut pattern_of = Vec::with_capacity(needles.len());
    let mut distinct: Vec<usize> = Vec::new();
    for (i, p) in patterns.iter().enumerate() {
        let next = ids.len();
        let id = *ids
            .entry((p.text.as_str(), p.last_line_trimmed))
            .or_insert_with(|| {
                distinct.push(i);
                next
            });
        pattern_of.push(id);
    }
    let mut hits: Vec<Hits> = (0..distinct.len()).map(|_| Hits::default()).collect();
    for (i, n) in needles.iter().enumerate() {
        if n.replace_all {
            hits[pattern_of[i]].keep_all = true;
        }
    }
    if !distinct.is_empty() {
        // Invariant: the builder only fails for patterns too large for the automaton's state ids,
        // which a request within the size limit cannot reach; treat it as no match at all.
        if let Ok(ac) = AhoCorasick::builder()
            .match_kind(AcMatchKind::Standard)
            .build(distinct.iter().map(|&i| patterns[i].text.as_bytes()))
        {
            for m in ac.find_overlapping_iter(&file.text) {
                let pid = m.pattern().as_usize();
                let pat = &patterns[distinct[pid]];
                let trimmed = pat.last_line_trimmed;
                if trimmed && !file.at_line_end(m.end()) {
                    continue;
                }
                let Some(span) = file.orig_span(m.start()..m.end(), trimmed) else {
                    continue;
                };
                let h = &mut hits[pid];
                h.count += 1;
                if h.keep_all || h.occ.len() <= MAX_AMBIGUOUS {
                    h.occ.push((m.start()..m.end(), span));
                }
            }
        }
    }
    for h in &mut hits {
        // Overlapping search reports by end; the rules are leftmost first.
        h.occ.sort_by_key(|(n, _)| (n.start, n.end));
    }
    needles
        .iter()
        .enumerate()
        .map(|(i, needle)| {
            let h = &hits[pattern_of[i]];
            let pat = &patterns[i];
            let chosen: Vec<&(Range<usize>, Range<usize>)> = if needle.replace_all {
                let mut last_end = 0;
                h.occ
                    .iter()
                    .filter(|(n, _)| {
                        let take = n.start >= last_end;
                        if take {
                            last_end = n.end;
                        }
                        take
                    })
                    .collect()
            } else {
                match h.count {
                    0 => return Err(Miss::NotFound),
                    1 => h.occ.iter().collect(),
                    count => {
                        return Err(Miss::Ambiguous {
                            spans: h
                                .occ
                                .iter()
                                .take(MAX_AMBIGUOUS)
                                .map(|(_, s)| s.clone())
                                .collect(),
                            count,
                        });
                    }
                }
            };
            if chosen.is_empty() {
                return Err(Miss::NotFound);
            }
            let old_lf = lf(needle.old_text);
            let mut kind = MatchKind::Exact;
            let mut norms: Vec<Normalization> = Vec::new();
            for (n, span) in &chosen {
                if lf(&text[span.clone()]) != old_lf {
                    kind = MatchKind::Normalized;
                    for x in needed(text, file, n.clone(), span, needle.old_text, pat) {
                        if !norms.contains(&x) {
                            norms.push(x);
                        }
                    }
                }
            }
            norms.sort();
            Ok(Found {
                spans: chosen.iter().map(|(_, s)| s.clone()).collect(),
                kind,
                normalizations: norms,
            })
        })
        .collect()
}

/// One cluster (or identity character) on one side of a comparison.
struct Atom<'a> {
    n_end: usize,
    orig: &'a str,
    unit: bool,
}

fn atoms<'a>(text: &'a str, m: &Normalized, n: Range<usize>) -> Vec<Atom<'a>> {
    let base = n.start;
    let mut out = Vec::new();
    for (nr, or, ident) in m.pieces(n) {
        if nr.is_empty() {
            continue;
        }
        if ident {
            let s = &text[or.clone()];
            for (i, c) in s.char_indices() {
                out.push(Atom {
                    n_end: nr.start - base + i + c.len_utf8(),
                    orig: &s[i..i + c.len_utf8()],
                    unit: false,
                });
            }
        } else {
            out.push(Atom {
                n_end: nr.end - base,
                orig: &text[or],
                unit: true,
            });
        }
    }
    out
}

/// The categories a changed cluster needed (§3a "Normalizations reported").
fn classify(orig: &str, out: &mut Vec<Normalization>) {
    if orig == "\r\n" || orig == "\r" {
        return;
    }
    let mut chars = orig.chars();
    if let (Some(c), None) = (chars.next(), chars.clone().next())
        && let Some(t) = table_of(c)
    {
        out.push(t);
        return;
    }
    let nfkc: String = orig.nfkc().collect();
    if nfkc != orig {
        out.push(Normalization::Nfkc);
    }
    out.extend(nfkc.chars().filter_map(table_of));
}

/// Which normalizations make the original span equal to `old_text` (called only when they differ).
fn needed(
    text: &str,
    file: &Normalized,
    n: Range<usize>,
    span: &Range<usize>,
    old_text: &str,
    pat: &Normalized,
) -> Vec<Normalization> {
    let mut out = Vec::new();
    let a = atoms(text, file, n.clone());
    let b = atoms(old_text, pat, 0..pat.text.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        let (gi, gj) = (i, j);
        loop {
            let (ea, eb) = (a[i].n_end, b[j].n_end);
            if ea == eb {
                break;
            }
            if ea < eb {
                i += 1;
            } else {
                j += 1;
            }
            if i >= a.len() || j >= b.len() {
                break;
            }
        }
        let (ie, je) = ((i + 1).min(a.len()), (j + 1).min(b.len()));
        let same = a[gi..ie]
            .iter()
            .map(|x| x.orig)
            .eq(b[gj..je].iter().map(|x| x.orig));
        if !same {
            for x in a[gi..ie].iter().chain(&b[gj..je]).filter(|x| x.unit) {
                classify(x.orig, &mut out);
            }
        }
        i = ie;
        j = je;
    }
    // Trailing whitespace: what N removed inside the span versus inside oldText, line by line.
    let file_removed: Vec<(usize, &str)> = file
        .removed(n.clone())
        .filter(|(p, o)| *p > n.start && o.start >= span.start && o.end <= span.end)
        .map(|(p, o)| (p - n.start, &text[o]))
        .collect();
    let pat_removed: Vec<(usize, &str)> = pat
        .removed(0..pat.text.len())
        .map(|(p, o)| (p, &old_text[o]))
        .collect();
    if !same_removed(&file_removed, &pat_removed) {
        out.push(Normalization::TrailingWhitespace);
    }
    out.sort();
    out.dedup();
    out
}

fn same_removed(a: &[(usize, &str)], b: &[(usize, &str)]) -> bool {
    fn joined(v: &[(usize, &str)]) -> Vec<(usize, String)> {
        let mut out: Vec<(usize, String)> = Vec::new();
        for (p, s) in v {
            match out.last_mut() {
                Some((q, acc)) if q == p => acc.push_str(s),
                _ => out.push((*p, s.to_string())),
            }
        }
        out
    }
    joined(a) == joined(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find(text: &str, old: &str, all: bool) -> Result<Found, Miss> {
        let file = Normalized::new(text);
        find_all(
            text,
            &file,
            &[Needle {
                old_text: old,
                replace_all: all,
            }],
        )
        .remove(0)
    }

    #[test]
    fn exact_unique_match() {
        let f = find("fn a() {}\nfn b() {}\n", "fn b() {}", false).unwrap();
        assert_eq!(f.spans, vec![10..19]);
        assert_eq!(f.kind, MatchKind::Exact);
    }

    #[test]
    fn overlapping_occurrences_are_ambiguous() {
        let e = find("aaa", "aa", false).unwrap_err();
        assert_eq!(
            e,
            Miss::Ambiguous {
                spans: vec![0..2, 1..3],
                count: 2
            }
        );
        let f = find("aaaa", "aa", true).unwrap();
        assert_eq!(f.spans, vec![0..2, 2..4]);
    }

    #[test]
    fn quotes_are_normalized_and_reported() {
        let f = find("say \u{201C}hi\u{201D} now", "say \"hi\"", false).unwrap();
        assert_eq!(f.kind, MatchKind::Normalized);
        assert_eq!(f.normalizations, vec![Normalization::Quotes]);
        assert_eq!(f.spans, vec![0..12]);
    }

    #[test]
    fn crlf_is_exact() {
        let f = find("a\r\nb\r\nc", "a\nb", false).unwrap();
        assert_eq!(f.kind, MatchKind::Exact);
        assert_eq!(f.spans, vec![0..4]);
    }

    #[test]
    fn trailing_whitespace_rules() {
        // "x  " on "x  " is exact and covers the spaces.
        let f = find("x  \ny", "x  ", false).unwrap();
        assert_eq!((f.spans.clone(), f.kind), (vec![0..3], MatchKind::Exact));
        // "x" on "x  " keeps the spaces outside.
        let f = find("x  \ny", "x", false).unwrap();
        assert_eq!(f.spans, vec![0..1]);
        // "x " must end at a line end: "xy" does not count.
        assert_eq!(find("xy\n", "x ", false), Err(Miss::NotFound));
        let f = find("a x\t\nb", "x \nb", false).unwrap();
        assert_eq!(f.kind, MatchKind::Normalized);
        assert_eq!(f.normalizations, vec![Normalization::TrailingWhitespace]);
        assert_eq!(f.spans, vec![2..6]);
    }

    #[test]
    fn match_inside_a_cluster_does_not_count() {
        assert_eq!(find("\u{FB01}x", "ix", false), Err(Miss::NotFound));
        let f = find("\u{FB01}x", "fix", false).unwrap();
        assert_eq!(f.normalizations, vec![Normalization::Nfkc]);
        assert_eq!(find("e\u{0301}", "e", false), Err(Miss::NotFound));
    }

    #[test]
    fn reported_normalizations() {
        let f = find("a\u{00A0}b", "a b", false).unwrap();
        assert_eq!(f.normalizations, vec![Normalization::Spaces]);
        let f = find("a\u{2014}b", "a-b", false).unwrap();
        assert_eq!(f.normalizations, vec![Normalization::Dashes]);
        let f = find("a\u{FE58}b", "a-b", false).unwrap();
        assert_eq!(
            f.normalizations,
            vec![Normalization::Nfkc, Normalization::Dashes]
        );
        let f = find("\u{FF21}\u{2019}  \nz", "A'\nz", false).unwrap();
        assert_eq!(
            f.normalizations,
            vec![
                Normalization::Nfkc,
                Normalization::TrailingWhitespace,
                Normalization::Quotes
            ]
        );
    }

    #[test]
    fn same_normal_form_with_and_without_trimmed_last_line() {
        let text = "abc\n";
        let file = Normalized::new(text);
        for (first, second) in [("ab ", "ab"), ("ab", "ab ")] {
            let r = find_all(
                text,
                &file,
                &[
                    Needle {
                        old_text: first,
                        replace_all: false,
                    },
                    Needle {
                        old_text: second,
                        replace_all: false,
                    },
                ],
            );
            let by_old = |old: &str| if old == first { &r[0] } else { &r[1] };
            assert_eq!(by_old("ab "), &Err(Miss::NotFound), "{first:?} first");
            assert_eq!(
                by_old("ab").as_ref().map(|f| f.spans.clone()),
                Ok(vec![0..2]),
                "{first:?} first"
            );
        }
    }

    #[test]
    fn multiple_needles_in_one_pass() {
        let text = "alpha beta gamma beta";
        let file = Normalized::new(text);
        let r = find_all(
            text,
            &file,
            &[
                Needle {
                    old_text: "alpha",
                    replace_all: false,
                },
                Needle {
                    old_text: "beta",
                    replace_all: false,
                },
                Needle {
                    old_text: "beta",
                    replace_all: true,
                },
                Needle {
                    old_text: "delta",
                    replace_all: false,
                },
            ],
        );
        assert_eq!(r[0].as_ref().unwrap().spans, vec![0..5]);
        assert!(matches!(r[1], Err(Miss::Ambiguous { count: 2, .. })));
        assert_eq!(r[2].as_ref().unwrap().spans, vec![6..10, 17..21]);
        assert_eq!(r[3], Err(Miss::NotFound));
    }
}
