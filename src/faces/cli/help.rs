//! The long help of each command (`redline CMD --help`): examples and exit statuses, shown after
//! the options clap lists. `-h` keeps the short form.

/// The exit statuses of every command that takes a request (SPEC §5).
const EXIT_REQUEST: &str = "\
Exit status:
  0    every edit resolved (and written, unless --dry-run or --check)
  1    one or more edits or files rejected; nothing was written
  2    usage error or invalid request
  3    I/O or permission failure while writing; the response says what was rolled back
  101  internal error";

pub(super) const TOP: &str = "\
Examples:
  redline apply edits.json              resolve and write a batch
  redline apply --dry-run - < req.json  print what would change
  redline review edits.json             decide edit by edit in the terminal
  redline read src/lib.rs --limit 40    numbered lines and the file's version
  redline completions bash > ~/.local/share/bash-completion/completions/redline

Exit status:
  0    success
  1    edits or files rejected; nothing was written
  2    usage error or invalid request
  3    I/O or permission failure while writing
  4    the reviewer was quit without applying
  101  internal error

Colour: --color, else NO_COLOR (off), CLICOLOR_FORCE (on), CLICOLOR=0 (off), TERM=dumb (off).";

pub(super) fn apply() -> String {
    format!(
        "\
Examples:
  redline apply edits.json
  redline apply --dry-run --format diff edits.json | less
  git diff | redline apply --check --input patch -
  echo '{{\"path\": \"a.rs\", \"oldText\": \"x\", \"newText\": \"y\"}}' | redline apply

{EXIT_REQUEST}"
    )
}

pub(super) fn review() -> String {
    format!(
        "\
Examples:
  redline review edits.json
  redline review --accept-exact edits.json

Keys: ? in the reviewer lists them (y accept, d reject, A apply, q quit).

{EXIT_REQUEST}
  4    the reviewer was quit without applying"
    )
}

pub(super) fn resolve() -> String {
    format!(
        "\
Examples:
  redline resolve edits.json
  redline resolve --format lsp --position-encoding utf-8 - < edits.json

Never writes.

{EXIT_REQUEST}"
    )
}

pub(super) const READ: &str = "\
Examples:
  redline read src/lib.rs
  redline read src/lib.rs --offset 120 --limit 40
  redline read src/lib.rs --format json

The version printed (sha256:…) is what a request's expectHash takes.

Exit status:
  0    the file was read
  1    the file cannot be read (missing, binary, not UTF-8, too large, outside --root)
  2    usage error";

pub(super) const FILTER: &str = "\
Examples:
  redline filter --path src/lib.rs --edits edits.json < src/lib.rs
  Vim:     :%!redline filter --path %:S --edits edits.json
  Helix:   :pipe redline filter --path '%{buffer_name}' --edits edits.json
  Kakoune: %|redline filter --path \"$kak_buffile\" --edits edits.json

Exit status:
  0    the edited buffer is on stdout
  1    anything failed (even the arguments): the buffer is echoed unchanged, stderr is empty";

pub(super) const SERVE: &str = "\
Example:
  echo '{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"read\", \"params\": {\"path\": \"a.rs\"}}' | redline serve

Methods: resolve, apply, read, schema, shutdown; the exit notification ends the server.

Exit status:
  0    the input ended, or exit came after shutdown
  1    exit came without shutdown (as in LSP)
  3    stdout failed";

pub(super) const MCP: &str = "\
Examples:
  claude mcp add redline -- redline mcp --root .
  codex mcp add redline -- redline mcp --root .

Exit status:
  0    the client closed stdin
  3    the transport failed";

pub(super) const SCHEMA: &str = "\
Examples:
  redline schema request
  redline schema tools | jq '.[].name'

Exit status:
  0    the schema is on stdout
  2    unknown schema name";

pub(super) const RECOVER: &str = "\
Example:
  redline recover --root .

Every writing command recovers first; this does only that.

Exit status:
  0    nothing to recover, or recovered
  3    recovery failed (the message says what is left)";

pub(super) const DEMO: &str = "\
Example:
  redline demo

Exit status:
  0    applied
  4    quit without applying";

pub(super) const COMPLETIONS: &str = "\
Examples:
  redline completions bash > ~/.local/share/bash-completion/completions/redline
  redline completions zsh > ~/.zfunc/_redline
  redline completions fish > ~/.config/fish/completions/redline.fish
  redline completions powershell >> $PROFILE

Exit status:
  0    the script is on stdout
  2    unknown shell";

pub(super) const MAN: &str = "\
Examples:
  redline man > ~/.local/share/man/man1/redline.1
  for c in apply review resolve read filter serve mcp schema; do
    redline man $c > ~/.local/share/man/man1/redline-$c.1
  done

Exit status:
  0    the page is on stdout
  2    no such command";

pub(super) const HOOK: &str = "\
Examples:
  redline setup claude                 # installs `redline hook claude` for you
  echo \"$ENVELOPE\" | redline hook gemini
  redline hook pi --review --no-watch deny --wait 300

Exit status:
  0    an answer is on stdout (possibly none: no objection)
  1    the hook could not judge (said on stderr); the harness decides
  The hook never exits 2, which Claude Code, Codex and Gemini CLI read as a block.";

pub(super) const WATCH: &str = "\
Examples:
  redline watch                        # at the project root, in its own terminal
  redline watch --root ~/src/app --accept-exact

Keys: those of `redline review`; n notes an edit, N the batch; A then Enter sends the
decisions to the waiting agent; q closes a batch (rejected), q on the empty inbox quits.

Exit status:
  0    quit from the empty inbox
  2    no terminal, or another watch already runs on the root";

pub(super) const SETUP: &str = "\
Examples:
  redline setup claude                 # .claude/settings.json of the project
  redline setup gemini --review        # edits wait for `redline watch`
  redline setup pi --user              # ~/.pi/agent/extensions/redline.ts
  redline setup codex --remove

Exit status:
  0    done (or nothing to change); what changed is on stdout
  2    unknown agent
  3    the configuration could not be read or written (nothing changed)";
