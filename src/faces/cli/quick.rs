//! The commonest command lines, read without building clap's command tree:
//! `redline [GLOBAL OPTIONS] apply [--dry-run] [--check] [REQUEST]` (what agents and scripts run
//! for every edit) and `redline [GLOBAL OPTIONS] hook AGENT [--review] [--no-watch V] [--wait S]`
//! (what `redline setup` has a harness run before every edit).
//!
//! clap builds every subcommand and copies each of the nine global options into each of them
//! before it parses anything: ~135 option copies and ~150 KB of heap for a process whose whole
//! edit takes a few milliseconds (README, Performance, "Process start-up"). This reader takes a
//! command line only when every word is one it knows, in a form whose meaning is beyond doubt,
//! and gives the [`Cli`] clap would give; anything else (help, version, another command, a short
//! flag, `--`, an option given twice, an empty value or one that starts with `-`, a value clap's
//! parser would refuse, a word that is not UTF-8) returns `None`, and clap parses the line as
//! always, with its own messages. `tests::agrees_with_clap` checks the two agree.

use super::{Cli, ColorArg, Command, Format, InputArg, ToleranceArg, parse_size};
use clap::ValueEnum;
use std::ffi::OsString;
use std::path::PathBuf;

/// The commands this reader knows.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Verb {
    Apply,
    Hook,
}

/// `Some(cli)` for a command line this reader takes (`args` without the program name).
pub(super) fn parse(args: impl IntoIterator<Item = OsString>) -> Option<Cli> {
    let mut g = Globals::default();
    let mut verb: Option<Verb> = None;
    // apply's REQUEST, hook's AGENT.
    let mut positional: Option<String> = None;
    // apply's --dry-run and --check, hook's --review.
    let (mut dry_run, mut check, mut review) = (false, false, false);
    // hook's --no-watch and --wait.
    let (mut no_watch, mut wait): (Option<String>, Option<String>) = (None, None);
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let arg = arg.into_string().ok()?;
        if let Some(long) = arg.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((name, value)) => (name, Some(value.to_string())),
                None => (long, None),
            };
            let slot = match (verb, name) {
                (_, name) if g.slot(name).is_some() => g.slot(name),
                (Some(Verb::Hook), "no-watch") => Some(&mut no_watch),
                (Some(Verb::Hook), "wait") => Some(&mut wait),
                _ => None,
            };
            if let Some(slot) = slot {
                let value = match inline {
                    Some(v) => v,
                    None => args.next()?.into_string().ok()?,
                };
                if value.is_empty() || value.starts_with('-') || slot.is_some() {
                    return None;
                }
                *slot = Some(value);
                continue;
            }
            let flag = match (verb, name) {
                (Some(Verb::Apply), "dry-run") => &mut dry_run,
                (Some(Verb::Apply), "check") => &mut check,
                (Some(Verb::Hook), "review") => &mut review,
                _ => return None,
            };
            if inline.is_some() || *flag {
                return None;
            }
            *flag = true;
        } else if arg.starts_with('-') || arg.is_empty() {
            // Short flags, `-` (stdin, which clap reads as apply's request; taken here only as
            // that) and negative numbers are clap's to read.
            if arg == "-" && verb == Some(Verb::Apply) && positional.is_none() {
                positional = Some(arg);
            } else {
                return None;
            }
        } else if verb.is_none() {
            verb = Some(match arg.as_str() {
                "apply" => Verb::Apply,
                "hook" => Verb::Hook,
                _ => return None,
            });
        } else if positional.is_none() {
            positional = Some(arg);
        } else {
            return None;
        }
    }
    let command = match verb? {
        Verb::Apply => Command::Apply {
            request: positional,
            dry_run,
            check,
        },
        Verb::Hook => Command::Hook {
            // AGENT is required: without it, clap's error.
            agent: positional?,
            review,
            no_watch: no_watch.unwrap_or_else(|| "ask".into()),
            wait,
        },
    };
    g.into_cli(command)
}

/// The global options' values as given, each at most once.
#[derive(Default)]
struct Globals {
    root: Option<String>,
    input: Option<String>,
    color: Option<String>,
    format: Option<String>,
    max_file_size: Option<String>,
    max_request_size: Option<String>,
    max_edits: Option<String>,
    tolerance: Option<String>,
    position_encoding: Option<String>,
}

impl Globals {
    /// The slot of the global option called `--name`, if there is one.
    fn slot(&mut self, name: &str) -> Option<&mut Option<String>> {
        Some(match name {
            "root" => &mut self.root,
            "input" => &mut self.input,
            "color" => &mut self.color,
            "format" => &mut self.format,
            "max-file-size" => &mut self.max_file_size,
            "max-request-size" => &mut self.max_request_size,
            "max-edits" => &mut self.max_edits,
            "tolerance" => &mut self.tolerance,
            "position-encoding" => &mut self.position_encoding,
            _ => return None,
        })
    }

    /// The [`Cli`], each value parsed as clap parses it (its defaults for what is absent);
    /// `None` when clap would refuse a value.
    fn into_cli(self, command: Command) -> Option<Cli> {
        fn choice<T: ValueEnum>(given: Option<String>, default: T) -> Option<T> {
            match given {
                None => Some(default),
                Some(v) => T::from_str(&v, false).ok(),
            }
        }
        Some(Cli {
            root: self.root.map(PathBuf::from),
            input: choice(self.input, InputArg::Auto)?,
            color: choice(self.color, ColorArg::Auto)?,
            format: match self.format {
                None => None,
                Some(v) => Some(Format::from_str(&v, false).ok()?),
            },
            max_file_size: parse_size(self.max_file_size.as_deref().unwrap_or("256M")).ok()?,
            max_request_size: match self.max_request_size {
                None => None,
                Some(v) => Some(parse_size(&v).ok()?),
            },
            max_edits: match self.max_edits {
                None => crate::write::DEFAULT_MAX_EDITS,
                // Digits only: `usize`'s `FromStr` (clap's parser for it) also takes a `+`.
                Some(v) if v.bytes().all(|b| b.is_ascii_digit()) => v.parse().ok()?,
                Some(_) => return None,
            },
            tolerance: choice(self.tolerance, ToleranceArg::Relaxed)?,
            position_encoding: self.position_encoding.unwrap_or_else(|| "utf-16".into()),
            command,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser as _;

    /// What clap makes of `words` (after the program name), as the text of its `Debug`.
    fn by_clap(words: &[&str]) -> Result<String, String> {
        Cli::try_parse_from(std::iter::once("redline").chain(words.iter().copied()))
            .map(|cli| format!("{cli:?}"))
            .map_err(|e| format!("{:?}", e.kind()))
    }

    fn quick(words: &[&str]) -> Option<String> {
        parse(words.iter().map(OsString::from)).map(|cli| format!("{cli:?}"))
    }

    /// Asserts that where the quick reader takes `words` clap gives the same [`Cli`]; returns
    /// whether the quick reader took them.
    fn check(words: &[&str]) -> bool {
        match quick(words) {
            None => false,
            Some(q) => {
                assert_eq!(Ok(q), by_clap(words), "{words:?}");
                true
            }
        }
    }

    #[test]
    fn takes_the_common_lines() {
        for words in [
            &["apply"][..],
            &["apply", "-"],
            &["--root", "/tmp/x", "apply", "-"],
            &["--root=/tmp/x", "apply", "edits.json"],
            &["apply", "--dry-run", "--root", "dir", "-"],
            &["apply", "-", "--check", "--dry-run"],
            &["--format", "diff", "--color", "never", "apply", "req.json"],
            &["--input", "search-replace", "--tolerance", "exact", "apply"],
            &["--max-file-size", "10M", "--max-request-size=1k", "apply"],
            &[
                "--max-edits",
                "007",
                "--position-encoding",
                "utf-8",
                "apply",
            ],
            &["--root", "apply", "apply"],
            &["apply", "--root", "a=b", "--format=json"],
            &["hook", "claude"],
            &["hook", "codex", "--review"],
            &[
                "--root",
                "r",
                "hook",
                "gemini",
                "--review",
                "--no-watch",
                "deny",
                "--wait=30",
            ],
            &["hook", "--wait", "5", "pi", "--root=r"],
            &["hook", "nobody"],
        ] {
            assert!(check(words), "{words:?} not taken");
        }
    }

    #[test]
    fn leaves_the_rest_to_clap() {
        for words in [
            &[][..],
            &["--help"],
            &["apply", "--help"],
            &["apply", "-h"],
            &["--version"],
            &["-V"],
            &["help", "apply"],
            &["resolve", "-"],
            &["review", "x.json"],
            &["--dry-run", "apply"],
            &["apply", "a.json", "b.json"],
            &["apply", "-", "-"],
            &["apply", "--", "-"],
            &["apply", "--dry-run", "--dry-run"],
            &["apply", "--dry-run=true"],
            &["--root", "a", "apply", "--root", "b"],
            &["--root", "", "apply"],
            &["--root=", "apply"],
            &["--root", "-x", "apply"],
            &["--root"],
            &["apply", "--root"],
            &["--format", "lsp2", "apply"],
            &["--format", "JSON", "apply"],
            &["--max-edits", "+5", "apply"],
            &["--max-edits", "99999999999999999999999", "apply"],
            &["--max-file-size", "12Q", "apply"],
            &["--position-encoding", "", "apply"],
            &["apply", ""],
            &["apply", "-5"],
            &["apply", "--unknown"],
            &["appl"],
            &["hook"],
            &["hook", "--review"],
            &["hook", "claude", "codex"],
            &["hook", "claude", "--review", "--review"],
            &["hook", "claude", "--review=false"],
            &["hook", "claude", "--dry-run"],
            &["hook", "claude", "--no-watch"],
            &["hook", "claude", "--wait", "-1"],
            &["hook", "claude", "--wait", "5", "--wait", "6"],
            &["hook", "-", "--review"],
            &["--review", "hook", "claude"],
            &["--wait", "5", "hook", "claude"],
            &["apply", "--review"],
            &["apply", "--no-watch", "ask"],
        ] {
            assert_eq!(quick(words), None, "{words:?} taken");
        }
    }

    /// Every line of up to four words from a vocabulary of options, values and commands (of
    /// both commands this reader knows): where the quick reader takes one, clap reads the same.
    #[test]
    fn agrees_with_clap() {
        let vocabulary = [
            "apply",
            "-",
            "--root",
            "--root=r",
            "--format",
            "json",
            "--dry-run",
            "--check",
            "--max-edits",
            "12",
            "--max-file-size=1K",
            "--color=always",
            "x.json",
            "--tolerance",
            "--input=patch",
            "--help",
            "resolve",
            "-q",
            "hook",
            "claude",
            "--review",
            "--no-watch",
            "--wait=5",
        ];
        let mut taken = 0;
        let mut line = Vec::new();
        fn walk(vocabulary: &[&'static str], line: &mut Vec<&'static str>, taken: &mut usize) {
            if check(line) {
                *taken += 1;
            }
            if line.len() == 4 {
                return;
            }
            for w in vocabulary {
                line.push(w);
                walk(vocabulary, line, taken);
                line.pop();
            }
        }
        walk(&vocabulary, &mut line, &mut taken);
        assert!(taken > 500, "only {taken} lines taken");
    }
}
