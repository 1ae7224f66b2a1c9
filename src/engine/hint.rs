//! Closest candidate regions for edits that were not found (SPEC §3.9).
//!
//! Hints must stay cheap next to matching, even with many failed edits on a large file. So
//! candidate windows are found by voting, with keys that are rare in the file: a file line equal
//! to a line of `oldText` (indentation aside) votes strongly for the window it would start, a
//! shared identifier votes weakly. File lines are looked up by hash in one pass; identifiers are
//! found by one Aho-Corasick scan. A key found in more than [`MAX_DF`] places says nothing about
//! where an edit belongs and is dropped, which also bounds the votes. Only the few best windows
//! per edit are then scored with a real similarity ratio.

use crate::engine::document::LineStarts;
use crate::engine::normalize::Normalized;
use similar::{Algorithm, TextDiff};
use std::collections::HashMap;
use std::ops::Range;

/// Candidates returned per edit.
pub(crate) const MAX_CANDIDATES: usize = 3;
/// Windows scored per edit.
const SCORED: usize = 4;
/// A key (line or identifier) found in more places than this is too common to vote.
const MAX_DF: usize = 8;
/// Edits without any vote that get the fallback line scan (one pass for all of them).
const MAX_FALLBACK: usize = 32;
/// Lines kept per edit by the fallback scan.
const FALLBACK_LINES: usize = 4;
/// Longest identifier that votes.
const MAX_TOKEN: usize = 64;
/// Not-found edits per file that get candidates; the others get none (a batch of a million
/// failing edits must not cost a million similarity scorings).
pub(crate) const MAX_HINTED: usize = 1000;
/// Vote weights.
const LINE_WEIGHT: u32 = 8;
const TOKEN_WEIGHT: u32 = 1;

/// A region of the file that resembles an edit's `oldText`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Candidate {
    /// Original byte span.
    pub span: Range<usize>,
    /// Similarity in [0, 1].
    pub score: f64,
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Identifiers of 3 to [`MAX_TOKEN`] bytes: a longer run of word characters (a 40 KB run of `z`)
/// names nothing and would only make the automaton big.
fn tokens(line: &str) -> impl Iterator<Item = &str> {
    line.split(|c: char| !is_word(c))
        .filter(|t| t.len() <= MAX_TOKEN && t.chars().count() >= 3)
}

/// N(oldText) and where its lines start.
struct Pat {
    text: String,
    starts: Vec<u32>,
}

impl Pat {
    fn new(old: &str) -> Pat {
        let text = Normalized::new(old).text.into_owned();
        let mut starts = vec![0];
        starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i as u32 + 1));
        starts.push(text.len() as u32 + 1);
        Pat { text, starts }
    }

    fn line_count(&self) -> usize {
        self.starts.len() - 1
    }

    fn line(&self, i: usize) -> &str {
        &self.text[self.starts[i] as usize..self.starts[i + 1] as usize - 1]
    }

    fn lines(&self) -> impl Iterator<Item = &str> + '_ {
        (0..self.line_count()).map(|i| self.line(i))
    }
}

fn key_hash(s: &str) -> u64 {
    use std::hash::{BuildHasher, BuildHasherDefault};
    BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default().hash_one(s)
}

/// Keys pointing at (edit, line in oldText): `(key hash, edit, line)`, sorted. A key repeated
/// more than [`MAX_DF`] times in one oldText keeps only its first `MAX_DF + 1` lines there: like
/// a key common in the file, it says little about where the edit belongs, and its votes must
/// stay bounded.
struct Keys(Vec<(u64, u32, u32)>);

impl Keys {
    fn new(mut keys: Vec<(u64, u32, u32)>) -> Keys {
        keys.sort_unstable();
        let mut run = (u64::MAX, u32::MAX, 0usize);
        keys.retain(|&(h, e, _)| {
            if (run.0, run.1) == (h, e) {
                run.2 += 1;
            } else {
                run = (h, e, 1);
            }
            run.2 <= MAX_DF + 1
        });
        keys.shrink_to_fit();
        Keys(keys)
    }

    /// The index of the first entry of key `h`, if there is one.
    fn group(&self, h: u64) -> Option<usize> {
        let at = self.0.partition_point(|k| k.0 < h);
        self.0.get(at).is_some_and(|k| k.0 == h).then_some(at)
    }

    /// The (edit, line) pairs of the key whose first entry is `at`.
    fn hits(&self, at: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
        let h = self.0[at].0;
        self.0[at..]
            .iter()
            .take_while(move |k| k.0 == h)
            .map(|k| (k.1 as usize, k.2 as usize))
    }
}

/// Where keys occur in the file: per key (by the index of its first entry in [`Keys`]) how
/// often, and `(key, file line)` for the first occurrences of each.
struct Places {
    count: Vec<u32>,
    at: Vec<(u32, u32)>,
}

impl Places {
    fn new(keys: &Keys) -> Places {
        Places {
            count: vec![0; keys.0.len()],
            at: Vec::new(),
        }
    }

    fn add(&mut self, key: usize, line: usize) {
        self.count[key] += 1;
        if self.count[key] as usize <= MAX_DF + 1 {
            self.at.push((key as u32, line as u32));
        }
    }
}

/// Candidates for each of `olds` (the `oldText`s that were not found) in the file `file`, whose
/// lines start at `index` ([`crate::engine::matcher::line_index`]).
pub(crate) fn candidates(
    file: &Normalized,
    index: &LineStarts,
    olds: &[&str],
) -> Vec<Vec<Candidate>> {
    let mut out = candidates_bounded(file, index, &olds[..olds.len().min(MAX_HINTED)]);
    out.resize(olds.len(), Vec::new());
    out
}

fn candidates_bounded(file: &Normalized, index: &LineStarts, olds: &[&str]) -> Vec<Vec<Candidate>> {
    if olds.is_empty() {
        return Vec::new();
    }
    let pats: Vec<Pat> = olds.iter().map(|o| Pat::new(o)).collect();
    // Keys: whole trimmed lines and identifiers, by hash.
    let mut line_keys = Vec::new();
    let mut token_keys = Vec::new();
    // Per edit, how often each key came: the cap of [`Keys`] applied while collecting, so a
    // repetitive oldText costs its distinct keys, not its lines.
    let (mut seen_lines, mut seen_tokens): (HashMap<u64, usize>, HashMap<u64, usize>) =
        (HashMap::new(), HashMap::new());
    let keep = |seen: &mut HashMap<u64, usize>, h: u64| {
        let n = seen.entry(h).or_default();
        *n += 1;
        *n <= MAX_DF + 1
    };
    for (e, p) in pats.iter().enumerate() {
        for (i, l) in p.lines().enumerate() {
            let t = l.trim();
            if t.chars().count() < 2 {
                continue;
            }
            let h = key_hash(t);
            if keep(&mut seen_lines, h) {
                line_keys.push((h, e as u32, i as u32));
            }
            for tok in tokens(t) {
                let h = key_hash(tok);
                if keep(&mut seen_tokens, h) {
                    token_keys.push((h, e as u32, i as u32));
                }
            }
        }
        seen_lines.clear();
        seen_tokens.clear();
    }
    drop((seen_lines, seen_tokens));
    let (line_keys, token_keys) = (Keys::new(line_keys), Keys::new(token_keys));
    let text: &str = &file.text;
    // Every piece of N(file) between line breaks is a line here, the one after a final break too.
    let line_count = index.len();
    let line_start = |ln: usize| index.get(ln).unwrap_or(text.len());
    let line_end = |l: usize| -> usize {
        if l + 1 < line_count {
            line_start(l + 1) - 1
        } else {
            text.len()
        }
    };
    let line_at = |ln: usize| -> &str { &text[line_start(ln)..line_end(ln)] };
    // One pass over the file's lines: whole lines by hash (checked against the oldText line,
    // collisions aside), identifiers as whole words (a word is a maximal run of word
    // characters, so a token occurs as a whole word exactly where a run equals it).
    let mut line_places = Places::new(&line_keys);
    let mut token_places = Places::new(&token_keys);
    for ln in 0..line_count {
        let line = line_at(ln);
        let t = line.trim();
        if !line_keys.0.is_empty()
            && let Some(at) = line_keys.group(key_hash(t))
        {
            let (_, e, i) = line_keys.0[at];
            if pats[e as usize].line(i as usize).trim() == t {
                line_places.add(at, ln);
            }
        }
        if !token_keys.0.is_empty() {
            for w in line.split(|c: char| !is_word(c)) {
                if w.len() >= 3
                    && let Some(at) = token_keys.group(key_hash(w))
                {
                    token_places.add(at, ln);
                }
            }
        }
    }
    // Votes for window starts, from rare keys only.
    let mut votes: Vec<HashMap<usize, u32>> = vec![HashMap::new(); olds.len()];
    for (keys, places, w) in [
        (&line_keys, &mut line_places, LINE_WEIGHT),
        (&token_keys, &mut token_places, TOKEN_WEIGHT),
    ] {
        places.at.sort_unstable();
        places.at.dedup();
        for &(key, fl) in &places.at {
            let (key, fl) = (key as usize, fl as usize);
            if places.count[key] as usize > MAX_DF {
                continue;
            }
            for (e, i) in keys.hits(key) {
                if fl >= i {
                    *votes[e].entry(fl - i).or_default() += w;
                }
            }
        }
    }
    fallback(line_count, &line_at, &pats, &mut votes);
    votes
        .iter()
        .enumerate()
        .map(|(e, v)| {
            let mut best: Vec<(usize, u32)> = v.iter().map(|(&k, &c)| (k, c)).collect();
            best.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            best.truncate(SCORED);
            let n_lines = pats[e].line_count();
            let mut scored: Vec<Candidate> = best
                .iter()
                .filter_map(|&(first, _)| {
                    if first >= line_count {
                        return None;
                    }
                    let last = (first + n_lines - 1).min(line_count - 1);
                    let nr = line_start(first)..line_end(last);
                    if nr.is_empty() {
                        return None;
                    }
                    let span = file.orig_span(nr.clone(), true)?;
                    Some(Candidate {
                        span,
                        score: similarity(&pats[e].text, &text[nr]),
                    })
                })
                .collect();
            scored.sort_by(|a, b| {
                b.score
                    .total_cmp(&a.score)
                    .then(a.span.start.cmp(&b.span.start))
            });
            scored.dedup_by(|a, b| a.span == b.span);
            scored.truncate(MAX_CANDIDATES);
            scored
        })
        .collect()
}

/// Character bigrams of a line, hashed into 128 bits: a cheap resemblance test.
fn bigrams(s: &str) -> u128 {
    let mut set = 0u128;
    let mut prev: Option<char> = None;
    for c in s.chars() {
        if let Some(p) = prev {
            set |= 1u128 << ((p as u32).wrapping_mul(31).wrapping_add(c as u32) % 128);
        }
        prev = Some(c);
    }
    set
}

/// For edits that no rare key voted for (a typo in the only identifier of a one-line oldText,
/// say), one pass over the file's lines compares each with the edit's longest line by length and
/// character bigrams, and the closest lines vote. Bounded: at most [`MAX_FALLBACK`] edits, one
/// pass for all of them.
fn fallback<'t>(
    line_count: usize,
    line_at: &dyn Fn(usize) -> &'t str,
    pats: &[Pat],
    votes: &mut [HashMap<usize, u32>],
) {
    struct Probe {
        edit: usize,
        index: usize,
        len: usize,
        set: u128,
        best: Vec<(f32, usize)>,
    }
    let mut probes: Vec<Probe> = votes
        .iter()
        .enumerate()
        .filter(|(_, v)| v.is_empty())
        .filter_map(|(e, _)| {
            let (index, line) = pats[e]
                .lines()
                .enumerate()
                .max_by_key(|(_, l)| l.trim().len())?;
            let t = line.trim();
            (t.chars().count() >= 3).then(|| Probe {
                edit: e,
                index,
                len: t.len(),
                set: bigrams(t),
                best: Vec::new(),
            })
        })
        .take(MAX_FALLBACK)
        .collect();
    if probes.is_empty() {
        return;
    }
    for ln in 0..line_count {
        let t = line_at(ln).trim();
        if t.is_empty() {
            continue;
        }
        let mut set = None;
        for p in &mut probes {
            if ln < p.index || t.len() * 2 < p.len || t.len() > p.len * 2 {
                continue;
            }
            let set = *set.get_or_insert_with(|| bigrams(t));
            let union = (set | p.set).count_ones();
            let score = if union == 0 {
                0.0
            } else {
                (set & p.set).count_ones() as f32 / union as f32
            };
            if score < 0.3 {
                continue;
            }
            if p.best.len() < FALLBACK_LINES || score > p.best[p.best.len() - 1].0 {
                p.best.push((score, ln));
                p.best.sort_by(|a, b| b.0.total_cmp(&a.0));
                p.best.truncate(FALLBACK_LINES);
            }
        }
    }
    for p in probes {
        for (_, ln) in p.best {
            *votes[p.edit].entry(ln - p.index).or_default() += TOKEN_WEIGHT;
        }
    }
}

/// Similarity ratio of two texts, rounded to two decimals: by characters for short texts, by
/// lines for longer ones, and for very long ones by the share of lines they have in common (a
/// multiset count, linear). Deterministic: no time budget decides the result, so a loaded machine
/// scores like an idle one.
pub(crate) fn similarity(a: &str, b: &str) -> f64 {
    let ratio = if a.len() + b.len() <= 4_000 {
        f64::from(
            TextDiff::configure()
                .algorithm(Algorithm::Myers)
                .diff_chars(a, b)
                .ratio(),
        )
    } else if a.lines().count() + b.lines().count() <= 4_000 {
        f64::from(
            TextDiff::configure()
                .algorithm(Algorithm::Myers)
                .diff_lines(a, b)
                .ratio(),
        )
    } else {
        // The lines in common as a multiset: both sides' line hashes sorted, then merged (8
        // bytes a line, not a map entry a line).
        let hashes = |s: &str| {
            let mut v: Vec<u64> = s.lines().map(key_hash).collect();
            v.sort_unstable();
            v
        };
        let (ha, hb) = (hashes(a), hashes(b));
        let (mut i, mut j, mut common) = (0, 0, 0usize);
        while i < ha.len() && j < hb.len() {
            match ha[i].cmp(&hb[j]) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal => {
                    common += 1;
                    i += 1;
                    j += 1;
                }
            }
        }
        2.0 * common as f64 / (ha.len() + hb.len()) as f64
    };
    (ratio * 100.0).round() / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`super::candidates`] with N(file)'s own line index.
    fn candidates(file: &Normalized, olds: &[&str]) -> Vec<Vec<Candidate>> {
        super::candidates(file, &LineStarts::of(&file.text), olds)
    }

    #[test]
    fn finds_the_near_miss_window() {
        let text = "fn main() {\n    let x = 1;\n    println!(\"{x}\");\n}\n\nfn other() {}\n";
        let file = Normalized::new(text);
        let c = candidates(&file, &["    let x = 2;\n    println!(\"{x}\");"]);
        assert_eq!(c[0].len(), 3.min(c[0].len()));
        let best = &c[0][0];
        assert_eq!(
            &text[best.span.clone()],
            "    let x = 1;\n    println!(\"{x}\");"
        );
        assert!(best.score > 0.9 && best.score < 1.0, "{}", best.score);
    }

    #[test]
    fn single_line_typo_found_by_tokens() {
        let text = "alpha\nlet counter = compute_total(items);\nomega\n";
        let file = Normalized::new(text);
        let c = candidates(&file, &["let countr = compute_total(items);"]);
        assert_eq!(
            &text[c[0][0].span.clone()],
            "let counter = compute_total(items);"
        );
    }

    #[test]
    fn typo_in_the_only_identifier_found_by_bigrams() {
        let text = "fn main() {\n    let x = 1;\n    println!(\"{}\", x);\n}\n";
        let file = Normalized::new(text);
        let c = candidates(&file, &["    printn!(\"{}\", x);", "fn mian() {"]);
        assert_eq!(&text[c[0][0].span.clone()], "    println!(\"{}\", x);");
        assert_eq!(&text[c[1][0].span.clone()], "fn main() {");
    }

    #[test]
    fn nothing_similar_gives_nothing() {
        let file = Normalized::new("abc\n");
        assert!(candidates(&file, &["zzzz qqqq"])[0].is_empty());
    }

    #[test]
    fn hints_are_bounded_per_file() {
        let text = "alpha\nlet counter = compute_total(items);\nomega\n";
        let file = Normalized::new(text);
        let olds = vec!["let countr = compute_total(items);"; MAX_HINTED + 1];
        let c = candidates(&file, &olds);
        assert_eq!(c.len(), MAX_HINTED + 1);
        assert!(!c[MAX_HINTED - 1].is_empty());
        assert!(c[MAX_HINTED].is_empty(), "past the cap: no candidates");
    }

    #[test]
    fn a_long_run_is_no_token_but_its_neighbours_still_vote() {
        let text = "alpha\nsay hello_world(now)\nomega\n";
        let file = Normalized::new(text);
        let old = format!("{} hello_world(now)", "z".repeat(40_000));
        let c = candidates(&file, &[old.as_str()]);
        assert_eq!(&text[c[0][0].span.clone()], "say hello_world(now)");
    }

    #[test]
    fn a_line_repeated_in_old_text_votes_a_bounded_number_of_times() {
        // 10,000 copies of a line the file has three times: only the first few vote (votes
        // stay linear in the request), and the region still comes back.
        let text = "let x = 1;\nlet x = 1;\nfn marker_line() {}\nlet x = 1;\n";
        let file = Normalized::new(text);
        let old = format!("fn marker_line() {{}}\n{}", "let x = 1;\n".repeat(10_000));
        let c = candidates(&file, &[old.as_str()]);
        assert!(text[c[0][0].span.clone()].contains("fn marker_line() {}\nlet x = 1;"));
    }
}
