//! Command-line parsing: arguments become a [`Settings`] and a command before any work starts.

mod agent;
mod editor;
mod help;
mod output;
mod quick;
mod read;

use crate::engine::document::PositionEncoding;
use crate::engine::relaxed::Tolerance;
use crate::error::ExitStatus;
use crate::report::Mode;
use crate::request::dialect::InputKind;
use crate::request::{Request, RequestError};
use crate::service::{self, Settings};
use clap::{Parser, Subcommand, ValueEnum};
use std::io::{IsTerminal as _, Write as _};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "redline",
    version,
    about = "Review and apply batches of text edits proposed by coding agents",
    after_long_help = help::TOP
)]
pub(crate) struct Cli {
    /// Directory every path resolves beneath.
    #[arg(
        long,
        global = true,
        help_heading = "Global options",
        value_name = "DIR"
    )]
    root: Option<PathBuf>,
    /// Request dialect.
    #[arg(long, global = true, help_heading = "Global options", value_enum, default_value_t = InputArg::Auto)]
    input: InputArg,
    /// When to use colour; auto follows NO_COLOR, CLICOLOR_FORCE, CLICOLOR and TERM=dumb.
    #[arg(long, global = true, help_heading = "Global options", value_enum, default_value_t = ColorArg::Auto)]
    color: ColorArg,
    /// Output format: apply takes json|diff|text (default json when stdout is not a terminal,
    /// else text); resolve takes json|lsp; read takes text|json.
    #[arg(
        long,
        global = true,
        help_heading = "Global options",
        value_name = "FORMAT",
        value_enum
    )]
    format: Option<Format>,
    /// Files larger than this many bytes are refused as `too_large` (suffixes K, M, G).
    #[arg(long, global = true, help_heading = "Global options", value_name = "BYTES", value_parser = parse_size, default_value = "256M")]
    max_file_size: u64,
    /// Requests larger than this many bytes are refused as `too_large`: a request file, stdin,
    /// one `serve`/`mcp` message (default: the same as --max-file-size).
    #[arg(long, global = true, value_name = "BYTES", value_parser = parse_size)]
    max_request_size: Option<u64>,
    /// Requests with more edits than this are refused as `too_large`.
    #[arg(long, global = true, value_name = "N", default_value_t = crate::write::DEFAULT_MAX_EDITS)]
    max_edits: usize,
    /// How far matching goes: exact occurrences only, also the normalized view (SPEC §3), or also
    /// the relaxed tier (§3b: indentation, tabs, inner whitespace, line numbers, blank lines).
    #[arg(long, global = true, help_heading = "Global options", value_enum, default_value_t = ToleranceArg::Relaxed)]
    tolerance: ToleranceArg,
    /// How `character` in positions counts.
    #[arg(
        long,
        global = true,
        help_heading = "Global options",
        value_name = "ENC",
        default_value = "utf-16"
    )]
    position_encoding: String,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum InputArg {
    Auto,
    Json,
    Patch,
    SearchReplace,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum ToleranceArg {
    Exact,
    Normalized,
    Relaxed,
}

/// `--format`: every value some command takes. It is one global option (SPEC §1 accepts global
/// options before or after the command), so each command takes its own subset and refuses the
/// others with a usage error before reading the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Json,
    Diff,
    Text,
    Lsp,
}

impl Format {
    /// The name on the command line.
    fn name(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::Diff => "diff",
            Format::Text => "text",
            Format::Lsp => "lsp",
        }
    }

    /// `Ok(format)` when `command` takes it; else the usage error (exit 2) naming what it takes.
    fn for_command(self, command: &str, takes: &[Format]) -> Result<Format, ExitStatus> {
        if takes.contains(&self) {
            return Ok(self);
        }
        let names: Vec<&str> = takes.iter().map(|f| f.name()).collect();
        let (last, first) = names.split_last().unwrap_or((&"", &[]));
        Err(usage(
            &format!("unknown format `{}` for {command}", self.name()),
            &format!("use --format {} or {last}", first.join(", ")),
        ))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ColorArg {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Resolve and write, headless.
    #[command(after_long_help = help::apply())]
    Apply {
        /// Request file; `-` or absent for stdin.
        request: Option<String>,
        /// Resolve and print, never write.
        #[arg(long)]
        dry_run: bool,
        /// Only set the exit code: print nothing at all (implies --dry-run).
        #[arg(long)]
        check: bool,
    },
    /// Resolve the batch and open the terminal reviewer; write only what is accepted.
    /// When stdout is not a terminal the reviewer runs on /dev/tty and the JSON result
    /// (the response of the accepted edits, `applied`, `decisions`) goes to stdout.
    #[command(after_long_help = help::review())]
    Review {
        /// Request file; `-` or absent for stdin.
        request: Option<String>,
        /// Start exact matches accepted (normalized ones always start undecided).
        #[arg(long)]
        accept_exact: bool,
    },
    /// The reviewer on a small sample workspace built into the binary (copied to a temp dir).
    #[command(after_long_help = help::DEMO)]
    Demo {
        /// Start exact matches accepted.
        #[arg(long)]
        accept_exact: bool,
    },
    /// Resolve only, for editors.
    #[command(after_long_help = help::resolve())]
    Resolve {
        /// Request file; `-` or absent for stdin.
        request: Option<String>,
    },
    /// Print a file with line numbers and its version.
    #[command(after_long_help = help::READ)]
    Read {
        /// The file, relative to --root (or absolute inside it).
        path: String,
        /// 1-based first line.
        #[arg(long)]
        offset: Option<usize>,
        /// Number of lines.
        #[arg(long)]
        limit: Option<usize>,
    },
    /// Finish or roll back an interrupted multi-file commit under --root.
    #[command(after_long_help = help::RECOVER)]
    Recover,
    /// Editor pipe: apply a request's edits for one path to the buffer on stdin; the edited
    /// buffer goes to stdout. On failure: exit 1, the input echoed unchanged, nothing on stderr.
    #[command(after_long_help = help::FILTER)]
    Filter {
        /// The buffer's path, as the request names it (relative to --root).
        #[arg(long, value_name = "P")]
        path: String,
        /// File holding the request.
        #[arg(long, value_name = "FILE")]
        edits: PathBuf,
        /// Write the JSON response (what matched, what failed) to this file.
        #[arg(long, value_name = "FILE")]
        report: Option<PathBuf>,
    },
    /// Long-running JSON-RPC 2.0 server on stdin/stdout (one JSON object per line, or
    /// Content-Length framing): resolve, apply, read, schema, shutdown.
    #[command(after_long_help = help::SERVE)]
    Serve,
    /// MCP server on stdio: tools read_file, preview_edits and apply_edits.
    #[command(after_long_help = help::MCP)]
    Mcp {
        /// Send each apply_edits batch to `redline watch` on the root first; only what the
        /// human accepts is written.
        #[arg(long)]
        review: bool,
    },
    /// An agent harness's pre-tool hook: reads the harness's envelope on stdin, answers on
    /// stdout in its format (AGENT: claude, codex, gemini, pi). Never writes.
    #[command(after_long_help = help::HOOK)]
    Hook {
        /// claude, codex, gemini or pi.
        agent: String,
        /// Send the edit to `redline watch` on the root and wait for the human's decision.
        #[arg(long)]
        review: bool,
        /// With --review and no watch running: ask (the harness's prompt decides), deny, or
        /// allow (guard mode decides).
        #[arg(long, value_name = "ask|deny|allow", default_value = "ask")]
        no_watch: String,
        /// With --review: seconds to wait for the human (default 600).
        #[arg(long, value_name = "SECS")]
        wait: Option<String>,
    },
    /// The reviewer as a long-running inbox on --root: shows each batch that a hook with
    /// --review or `redline mcp --review` submits, and sends the human's decisions back.
    #[command(after_long_help = help::WATCH)]
    Watch {
        /// Start exact matches accepted.
        #[arg(long)]
        accept_exact: bool,
    },
    /// Write (idempotently) the hook or extension configuration for AGENT (claude, codex,
    /// gemini, pi): project-level by default; prints what it changed.
    #[command(after_long_help = help::SETUP)]
    Setup {
        /// claude, codex, gemini or pi.
        agent: String,
        /// Route edits through `redline watch` (the hook waits for the human).
        #[arg(long)]
        review: bool,
        /// The user's configuration instead of the project's (Codex: always its home).
        #[arg(long)]
        user: bool,
        /// Undo: remove redline's hooks (or extension), keep everything else.
        #[arg(long)]
        remove: bool,
    },
    /// Shell completion script for SHELL (bash, zsh, fish, elvish, powershell) on stdout.
    #[command(after_long_help = help::COMPLETIONS)]
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// The manual page (roff, section 1) on stdout: redline(1), or redline-COMMAND(1).
    #[command(after_long_help = help::MAN)]
    Man {
        /// A command, for its own page.
        command: Option<String>,
    },
    /// JSON Schema of the request, the response, or the MCP/LLM tool definitions.
    #[command(after_long_help = help::SCHEMA)]
    Schema {
        #[arg(value_parser = ["request", "response", "tools"])]
        which: Option<String>,
    },
}

/// Everything a command needs, decided before it runs.
struct Context {
    settings: Settings,
    input: InputKind,
    color: bool,
    format: Option<Format>,
}

/// Runs the `redline` command line on the process's arguments, standard streams and environment,
/// and returns the status the process exits with. The process is to exit right after: `apply`
/// leaves its request and run to the exit to free.
pub fn main() -> ExitStatus {
    crate::faces::return_big_blocks();
    let parsed = match quick::parse(std::env::args_os().skip(1)) {
        Some(cli) => Ok(cli),
        None => Cli::try_parse(),
    };
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) => {
            // An editor pastes its buffer name unquoted (`my file.txt` becomes two arguments)
            // and replaces the buffer with whatever `filter` prints: a filter whose arguments do
            // not parse fails like any other filter, with the buffer echoed and stderr empty.
            if is_filter_invocation(std::env::args_os().skip(1)) && !is_help_or_version(&e) {
                return editor::echo_stdin_rejected();
            }
            return clap_failure(&e);
        }
    };
    let Some(encoding) = PositionEncoding::parse(&cli.position_encoding) else {
        return usage(
            &format!("unknown position encoding `{}`", cli.position_encoding),
            "use utf-8, utf-16 or utf-32",
        );
    };
    let ctx = Context {
        settings: Settings {
            root: cli.root.clone().unwrap_or_else(|| PathBuf::from(".")),
            encoding,
            limits: crate::write::Limits {
                max_file_size: cli.max_file_size,
                max_request_size: cli.max_request_size.unwrap_or(cli.max_file_size),
                max_edits: cli.max_edits,
            },
            tolerance: match cli.tolerance {
                ToleranceArg::Exact => Tolerance::Exact,
                ToleranceArg::Normalized => Tolerance::Normalized,
                ToleranceArg::Relaxed => Tolerance::Relaxed,
            },
        },
        input: match cli.input {
            InputArg::Auto => InputKind::Auto,
            InputArg::Json => InputKind::Json,
            InputArg::Patch => InputKind::Patch,
            InputArg::SearchReplace => InputKind::SearchReplace,
        },
        color: output::use_color(cli.color),
        format: cli.format,
    };
    // The reviewer always draws on a terminal (stdout or /dev/tty), so only --color and the
    // colour variables decide its theme.
    let review_mono = match cli.color {
        ColorArg::Always => false,
        ColorArg::Never => true,
        ColorArg::Auto => !output::env_color(true),
    };
    match cli.command {
        Command::Hook {
            agent,
            review,
            no_watch,
            wait,
        } => agent::hook(&agent, cli.root.clone(), review, &no_watch, wait.as_deref()),
        Command::Watch { accept_exact } => agent::watch(&ctx.settings, accept_exact, review_mono),
        Command::Setup {
            agent,
            review,
            user,
            remove,
        } => agent::setup(&agent, &ctx.settings.root, review, user, remove),
        Command::Review {
            request,
            accept_exact,
        } => review(&ctx, request.as_deref(), accept_exact, review_mono),
        Command::Demo { accept_exact } => demo(&ctx, accept_exact, review_mono),
        Command::Apply {
            request,
            dry_run,
            check,
        } => {
            let mode = if check {
                Mode::Check
            } else if dry_run {
                Mode::DryRun
            } else {
                Mode::Apply
            };
            apply(&ctx, request.as_deref(), mode)
        }
        Command::Resolve { request } => resolve(&ctx, request.as_deref()),
        Command::Read {
            path,
            offset,
            limit,
        } => read::run(&ctx.settings, &path, offset, limit, ctx.format),
        Command::Recover => recover(&ctx.settings),
        Command::Filter {
            path,
            edits,
            report,
        } => editor::filter(&ctx.settings, ctx.input, &path, &edits, report.as_deref()),
        Command::Serve => editor::serve(&ctx.settings),
        Command::Mcp { review } => editor::mcp(&ctx.settings, review),
        Command::Schema { which } => editor::schema(which.as_deref()),
        Command::Completions { shell } => {
            use clap::CommandFactory as _;
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "redline", &mut out);
            output::out(&String::from_utf8_lossy(&out));
            ExitStatus::Success
        }
        Command::Man { command } => man(command.as_deref()),
    }
}

/// `redline man [COMMAND]`: the page of redline or of one command, rendered from the clap
/// definitions.
fn man(command: Option<&str>) -> ExitStatus {
    use clap::CommandFactory as _;
    let mut cmd = Cli::command();
    cmd.build();
    let page = match command {
        None => cmd,
        Some(name) => match cmd.find_subcommand(name) {
            Some(sub) => sub.clone(),
            None => {
                return usage(
                    &format!("no command `{name}`"),
                    "run `redline --help` for the commands",
                );
            }
        },
    };
    let mut out = Vec::new();
    match clap_mangen::Man::new(page).render(&mut out) {
        Ok(()) => {
            output::out(&String::from_utf8_lossy(&out));
            ExitStatus::Success
        }
        Err(e) => {
            output::diagnostic(&format!("cannot render the manual page: {e}"), None);
            ExitStatus::Internal
        }
    }
}

/// Whether the subcommand on this command line is `filter`: the first argument that is not an
/// option or the value of a global option that takes one.
fn is_filter_invocation(args: impl Iterator<Item = std::ffi::OsString>) -> bool {
    use clap::CommandFactory as _;
    let cmd = Cli::command();
    let takes_value = |name: &str| {
        cmd.get_arguments().any(|a| {
            a.get_long() == Some(name)
                && a.get_action().takes_values()
                && a.get_num_args().is_none_or(|n| n.min_values() > 0)
        })
    };
    let mut args = args;
    while let Some(arg) = args.next() {
        let Some(arg) = arg.to_str() else {
            return false;
        };
        if let Some(long) = arg.strip_prefix("--") {
            if !long.contains('=') && takes_value(long) {
                args.next();
            }
        } else if !arg.starts_with('-') || arg == "-" {
            return arg == "filter";
        }
    }
    false
}

fn is_help_or_version(e: &clap::Error) -> bool {
    use clap::error::ErrorKind;
    matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    )
}

/// Help and version go to stdout as clap prints them; a usage error is exit 2 with clap's message
/// reshaped into `error: …` then `hint: …` lines (its tips, possible values and usage line).
fn clap_failure(e: &clap::Error) -> ExitStatus {
    if is_help_or_version(e) {
        let _ = e.print();
        return if e.exit_code() == 0 {
            ExitStatus::Success
        } else {
            ExitStatus::Usage
        };
    }
    let rendered = e.render().to_string();
    let mut lines = rendered.lines();
    let mut message = lines
        .next()
        .unwrap_or_default()
        .trim_start_matches("error: ")
        .trim()
        .to_string();
    let mut hints = Vec::new();
    let mut in_message = true;
    for l in lines {
        let t = l.trim();
        if t.is_empty() {
            in_message = false;
        } else if let Some(values) = t.strip_prefix('[').and_then(|v| v.strip_suffix(']')) {
            hints.push(values.to_string());
        } else if let Some(tip) = t.strip_prefix("tip: ") {
            hints.push(tip.to_string());
        } else if let Some(usage) = t.strip_prefix("Usage: ") {
            hints.push(format!("usage: {usage}"));
        } else if in_message {
            message.push(' ');
            message.push_str(t);
        }
    }
    if hints.is_empty() {
        hints.push("run `redline --help` for usage".into());
    }
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "error: {message}");
    for h in hints {
        let _ = writeln!(err, "hint: {h}");
    }
    ExitStatus::Usage
}

/// Parses `123`, `64K`, `10M`, `1G` (powers of 1024).
fn parse_size(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let (num, mult) = match s.char_indices().last() {
        Some((i, c)) if c.eq_ignore_ascii_case(&'k') => (&s[..i], 1u64 << 10),
        Some((i, c)) if c.eq_ignore_ascii_case(&'m') => (&s[..i], 1 << 20),
        Some((i, c)) if c.eq_ignore_ascii_case(&'g') => (&s[..i], 1 << 30),
        _ => (s, 1),
    };
    num.trim()
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .ok_or_else(|| format!("`{s}` is not a size (use bytes or a K, M, G suffix)"))
}

/// Prints a usage error and returns exit 2.
fn usage(message: &str, hint: &str) -> ExitStatus {
    output::diagnostic(message, Some(hint));
    ExitStatus::Usage
}

/// Reads the request text from a path, or stdin for `-`/absent, at most `limit` bytes.
fn request_text(path: Option<&str>, limit: u64) -> Result<String, RequestError> {
    use crate::request::limits::read_capped_fd;
    let bytes = match path {
        None | Some("-") => {
            // On a terminal, reading stdin looks like a hang: say what is awaited.
            if std::io::stdin().is_terminal() {
                output::notice(
                    "reading the request from stdin (end it with Ctrl-D; or pass a request file)",
                );
            }
            read_capped_fd(std::io::stdin().lock(), limit, "the request on stdin")?
        }
        Some(p) => {
            let file = std::fs::File::open(p).map_err(|e| {
                RequestError::new(format!("cannot read the request file {p}: {e}"))
                    .hint("pass a readable file, or `-` for stdin")
            })?;
            read_capped_fd(file, limit, &format!("the request file {p}"))?
        }
    };
    String::from_utf8(bytes).map_err(|e| {
        RequestError::new(format!(
            "the request is not UTF-8 (invalid byte at {})",
            e.utf8_error().valid_up_to()
        ))
        .hint("send the request as UTF-8 JSON, a Codex patch or SEARCH/REPLACE blocks")
    })
}

/// Reads and parses the request in the chosen dialect.
fn load(ctx: &Context, path: Option<&str>) -> Result<Request, RequestError> {
    let text = request_text(path, ctx.settings.limits.max_request_size)?;
    crate::request::limits::precheck_edits(&text, ctx.settings.limits.max_edits)?;
    crate::request::dialect::parse(&text, ctx.input, crate::request::wire::parse_json)
}

fn apply(ctx: &Context, path: Option<&str>, mode: Mode) -> ExitStatus {
    crate::faces::heap_below_big_blocks();
    let format = match ctx.format {
        None if output::stdout_is_terminal() => Format::Text,
        None => Format::Json,
        Some(f) => match f.for_command("apply", &[Format::Json, Format::Diff, Format::Text]) {
            Ok(f) => f,
            Err(exit) => return exit,
        },
    };
    let req = match load(ctx, path) {
        Ok(r) => r,
        // `--check` prints nothing, not even why the request is invalid: only the exit code.
        Err(_) if mode == Mode::Check => return ExitStatus::Usage,
        Err(e) => return output::request_failure(&e, true, ctx.format),
    };
    let run = service::run(&req, mode, &ctx.settings);
    if mode == Mode::Check {
        return run.exit;
    }
    output::run(&run, format, ctx.color);
    let exit = run.exit;
    // The process exits next (`cli::main` returns to it): the request and the run (a big
    // file's text, its plan, the response) are only memory, which the exit returns whole,
    // not block by block (~0.9 ms for a 12 MB file with 10,000 edits).
    std::mem::forget(run);
    std::mem::forget(req);
    exit
}

fn review(ctx: &Context, path: Option<&str>, accept_exact: bool, monochrome: bool) -> ExitStatus {
    let req = match load(ctx, path) {
        Ok(r) => r,
        Err(e) => return output::request_failure(&e, true, Some(Format::Text)),
    };
    let opts = crate::faces::review::ReviewOptions {
        settings: ctx.settings.clone(),
        accept_exact,
        monochrome,
        title: "review".into(),
    };
    run_review(&req, &opts)
}

/// Runs the reviewer; prints the JSON result when stdout is not a terminal.
fn run_review(req: &Request, opts: &crate::faces::review::ReviewOptions) -> ExitStatus {
    match crate::faces::review::run(req, opts) {
        Ok(outcome) => {
            if !output::stdout_is_terminal() {
                output::line(
                    &serde_json::to_string_pretty(&outcome.result)
                        .unwrap_or_else(|_| "null".into()),
                );
            }
            outcome.exit
        }
        Err(crate::faces::review::ReviewError::Request(e)) => {
            output::request_failure(&e, true, Some(Format::Text))
        }
        Err(e) => {
            output::diagnostic(
                &e.to_string(),
                Some("the reviewer needs a terminal; use `redline apply` to apply headless"),
            );
            e.exit()
        }
    }
}

fn demo(ctx: &Context, accept_exact: bool, monochrome: bool) -> ExitStatus {
    let dir = match tempfile::Builder::new().prefix("redline-demo-").tempdir() {
        Ok(d) => d.keep(),
        Err(e) => {
            output::diagnostic(&format!("cannot create the demo workspace: {e}"), None);
            return ExitStatus::WriteFailed;
        }
    };
    if let Err(e) = crate::faces::demo::write(&dir) {
        output::diagnostic(
            &format!("cannot write the demo workspace in {}: {e}", dir.display()),
            None,
        );
        return ExitStatus::WriteFailed;
    }
    let req = match crate::faces::demo::request() {
        Ok(r) => r,
        Err(e) => return output::request_failure(&e, true, Some(Format::Text)),
    };
    let mut settings = ctx.settings.clone();
    settings.root = dir.clone();
    let opts = crate::faces::review::ReviewOptions {
        settings,
        accept_exact,
        monochrome,
        title: "demo".into(),
    };
    let exit = run_review(&req, &opts);
    eprintln!(
        "demo workspace: {} (the batch is {}/batch.json)",
        dir.display(),
        dir.display()
    );
    exit
}

fn resolve(ctx: &Context, path: Option<&str>) -> ExitStatus {
    let format = match ctx
        .format
        .unwrap_or(Format::Json)
        .for_command("resolve", &[Format::Json, Format::Lsp])
    {
        Ok(f) => f,
        Err(exit) => return exit,
    };
    let req = match load(ctx, path) {
        Ok(r) => r,
        Err(e) if format == Format::Lsp => return editor::lsp_request_failure(&e, &ctx.settings),
        Err(e) => return output::request_failure(&e, true, Some(Format::Json)),
    };
    let run = service::run(&req, Mode::Resolve, &ctx.settings);
    if format == Format::Lsp {
        return editor::print_lsp(&run, &ctx.settings);
    }
    output::run_json(&run);
    run.exit
}

fn recover(settings: &Settings) -> ExitStatus {
    let root = match service::open_root(settings) {
        Ok(r) => r,
        Err(e) => return output::request_failure(&e, true, Some(Format::Text)),
    };
    let result = root.lock().and_then(|lock| root.recover(&lock));
    match result {
        Ok(report) => {
            let what = crate::report::message::recovery(&report)
                .unwrap_or_else(|| "nothing to recover".into());
            output::line(&format!("recover: {what}"));
            ExitStatus::Success
        }
        Err(e) => {
            output::diagnostic(&e.to_string(), e.hint());
            e.code().exit_status()
        }
    }
}
