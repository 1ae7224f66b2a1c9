//! What each harness sends its pre-tool hook, read into one shape ([`Envelope`]).
//!
//! - Claude Code and Codex (`PreToolUse`): `{session_id, cwd, permission_mode, hook_event_name,
//!   tool_name, tool_input, …}`. Claude's `Edit` has `{file_path, old_string, new_string,
//!   replace_all}`, `MultiEdit` `{file_path, edits: [{old_string, new_string, replace_all}]}`,
//!   `Write` `{file_path, content}`; Codex's `apply_patch` has `{command: "<patch>"}`.
//! - Gemini CLI (`BeforeTool`): the same envelope; `replace` has `{file_path, old_string,
//!   new_string, expected_replacements?}`, `write_file` `{file_path, content}`.
//! - Pi: the extension shipped in `extensions/pi/redline.ts` sends `{toolName, input, cwd}`
//!   from its `tool_call` event; `edit` has `{path, edits: [{oldText, newText}]}` (or the legacy
//!   top-level `oldText`/`newText`), `write` `{path, content}`.
//!
//! redline's own MCP tools (`apply_edits`, `preview_edits`, under whatever name the harness
//! gives them) carry a redline request.

use serde_json::Value;
use std::path::PathBuf;

/// The harness a hook runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Agent {
    Claude,
    Codex,
    Gemini,
    Pi,
}

impl Agent {
    pub(crate) fn parse(s: &str) -> Option<Agent> {
        match s {
            "claude" | "claude-code" => Some(Agent::Claude),
            "codex" => Some(Agent::Codex),
            "gemini" | "gemini-cli" => Some(Agent::Gemini),
            "pi" => Some(Agent::Pi),
            _ => None,
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
            Agent::Gemini => "gemini",
            Agent::Pi => "pi",
        }
    }

    /// How the harness names the text an edit replaces, for model-facing messages.
    pub(crate) fn old_field(self) -> &'static str {
        match self {
            Agent::Pi => "oldText",
            _ => "old_string",
        }
    }
}

/// One string replacement as the harness's tool will run it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Replace {
    pub old: String,
    pub new: String,
    /// Every occurrence (Claude `replace_all`, Gemini `expected_replacements` > 1).
    pub all: bool,
}

/// How the harness applies several replacements of one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Style {
    /// One after another, each on the previous one's result (Claude `Edit`/`MultiEdit`).
    Sequential,
    /// Each matched against the original, exactly or by its own fuzzy fallback (Pi `edit`).
    Original,
    /// Like `Sequential`, with the count of occurrences that must match (Gemini `replace`).
    Counted(usize),
}

/// What the tool call does, in redline's terms.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Action {
    Edit {
        path: String,
        edits: Vec<Replace>,
        style: Style,
    },
    Write {
        path: String,
        content: String,
    },
    /// A Codex patch.
    Patch {
        patch: String,
    },
    /// A redline request (redline's own MCP tools).
    Batch {
        request: Value,
    },
    /// Claude's `PostToolBatch`: the calls of the batch, some of which failed in the harness.
    PostBatch {
        calls: Vec<(String, Value, String)>,
    },
    /// A tool redline does not look at.
    Other,
}

/// A hook's input, read.
#[derive(Debug, Clone)]
pub(crate) struct Envelope {
    pub agent: Agent,
    pub tool: String,
    pub cwd: PathBuf,
    /// Claude/Codex `permission_mode` (`default`, `acceptEdits`, `plan`, `bypassPermissions`…).
    pub permission_mode: Option<String>,
    pub session: Option<String>,
    /// The tool input as the harness sent it (answers rewrite a copy of it).
    pub input: Value,
    pub action: Action,
}

fn s(v: &Value, k: &str) -> Option<String> {
    v.get(k).and_then(Value::as_str).map(str::to_string)
}

fn req_s(v: &Value, k: &str, tool: &str) -> Result<String, String> {
    s(v, k).ok_or_else(|| format!("{tool} input has no string `{k}`"))
}

/// Whether an MCP tool name is one of redline's batch tools.
fn is_redline_batch_tool(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.starts_with("mcp")
        && lower.contains("redline")
        && (lower.ends_with("apply_edits") || lower.ends_with("preview_edits"))
}

/// Reads a hook's stdin. An error is an envelope redline cannot read (the hook then leaves the
/// decision to the harness and says why on stderr).
pub(crate) fn parse(agent: Agent, text: &str) -> Result<Envelope, String> {
    let v: Value =
        serde_json::from_str(text).map_err(|e| format!("the hook input is not JSON: {e}"))?;
    if !v.is_object() {
        return Err("the hook input is not a JSON object".into());
    }
    let cwd = s(&v, "cwd")
        .map(PathBuf::from)
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("."));
    let session = s(&v, "session_id").or_else(|| s(&v, "sessionId"));
    if agent == Agent::Pi {
        let tool = s(&v, "toolName").unwrap_or_default();
        let input = v.get("input").cloned().unwrap_or(Value::Null);
        let action = pi_action(&tool, &input)?;
        return Ok(Envelope {
            agent,
            tool,
            cwd,
            permission_mode: None,
            session,
            input,
            action,
        });
    }
    let event = s(&v, "hook_event_name").unwrap_or_default();
    let tool = s(&v, "tool_name").unwrap_or_default();
    let input = v.get("tool_input").cloned().unwrap_or(Value::Null);
    let action = if event == "PostToolBatch" {
        let calls = v
            .get("tool_calls")
            .and_then(Value::as_array)
            .map(|calls| {
                calls
                    .iter()
                    .map(|c| {
                        let response = match c.get("tool_response") {
                            Some(Value::String(t)) => t.clone(),
                            Some(other) => other.to_string(),
                            None => String::new(),
                        };
                        (
                            s(c, "tool_name").unwrap_or_default(),
                            c.get("tool_input").cloned().unwrap_or(Value::Null),
                            response,
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        Action::PostBatch { calls }
    } else {
        tool_action(agent, &tool, &input)?
    };
    Ok(Envelope {
        agent,
        tool,
        cwd,
        permission_mode: s(&v, "permission_mode"),
        session,
        input,
        action,
    })
}

/// The action of a Claude, Codex or Gemini tool call.
pub(crate) fn tool_action(agent: Agent, tool: &str, input: &Value) -> Result<Action, String> {
    if is_redline_batch_tool(tool) {
        return Ok(Action::Batch {
            request: input.clone(),
        });
    }
    let action = match (agent, tool) {
        (Agent::Claude, "Edit") => Action::Edit {
            path: req_s(input, "file_path", tool)?,
            edits: vec![Replace {
                old: req_s(input, "old_string", tool)?,
                new: req_s(input, "new_string", tool)?,
                all: input.get("replace_all").and_then(Value::as_bool) == Some(true),
            }],
            style: Style::Sequential,
        },
        (Agent::Claude, "MultiEdit") => {
            let list = input
                .get("edits")
                .and_then(Value::as_array)
                .ok_or("MultiEdit input has no `edits` array")?;
            let mut edits = Vec::new();
            for e in list {
                edits.push(Replace {
                    old: req_s(e, "old_string", tool)?,
                    new: req_s(e, "new_string", tool)?,
                    all: e.get("replace_all").and_then(Value::as_bool) == Some(true),
                });
            }
            Action::Edit {
                path: req_s(input, "file_path", tool)?,
                edits,
                style: Style::Sequential,
            }
        }
        (Agent::Claude, "Write") | (Agent::Gemini, "write_file") => Action::Write {
            path: req_s(input, "file_path", tool)?,
            content: req_s(input, "content", tool)?,
        },
        (Agent::Codex, "apply_patch") => Action::Patch {
            patch: req_s(input, "command", tool)?,
        },
        // `codex exec` runs patches the model sends through its shell tool
        // (`apply_patch <<'EOF' … EOF`), and its hook sees them as `Bash`.
        (Agent::Codex, "Bash") => match s(input, "command") {
            Some(c) if is_shell_patch(&c) => Action::Patch { patch: c },
            _ => Action::Other,
        },
        (Agent::Gemini, "replace") => {
            let count = input
                .get("expected_replacements")
                .and_then(Value::as_u64)
                .unwrap_or(1)
                .max(1) as usize;
            Action::Edit {
                path: req_s(input, "file_path", tool)?,
                edits: vec![Replace {
                    old: req_s(input, "old_string", tool)?,
                    new: req_s(input, "new_string", tool)?,
                    all: count > 1,
                }],
                style: Style::Counted(count),
            }
        }
        _ => Action::Other,
    };
    Ok(action)
}

/// Whether a shell command is an `apply_patch` invocation (Codex applies those itself).
pub(crate) fn is_shell_patch(command: &str) -> bool {
    let t = command.trim_start();
    (t.starts_with("apply_patch") || t.starts_with("applypatch")) && t.contains("*** Begin Patch")
}

/// The action of a Pi tool call (`edit` with its legacy shapes folded in as Pi does, `write`).
fn pi_action(tool: &str, input: &Value) -> Result<Action, String> {
    match tool {
        "edit" => {
            let mut edits = Vec::new();
            let list = match input.get("edits") {
                Some(Value::String(text)) => serde_json::from_str::<Value>(text).ok(),
                Some(v) => Some(v.clone()),
                None => None,
            };
            if let Some(Value::Array(list)) = list {
                for e in &list {
                    edits.push(Replace {
                        old: req_s(e, "oldText", tool)?,
                        new: req_s(e, "newText", tool)?,
                        all: false,
                    });
                }
            }
            if let (Some(old), Some(new)) = (s(input, "oldText"), s(input, "newText")) {
                edits.push(Replace {
                    old,
                    new,
                    all: false,
                });
            }
            if edits.is_empty() {
                return Err("Pi edit input has no edits".into());
            }
            Ok(Action::Edit {
                path: pi_path(&req_s(input, "path", tool)?),
                edits,
                style: Style::Original,
            })
        }
        "write" => Ok(Action::Write {
            path: pi_path(&req_s(input, "path", tool)?),
            content: req_s(input, "content", tool)?,
        }),
        t if is_redline_batch_tool(t) => Ok(Action::Batch {
            request: input.clone(),
        }),
        _ => Ok(Action::Other),
    }
}

/// Pi's own path spelling rules that matter for confinement: a leading `@` is dropped and
/// `~/` is the home directory (Pi's `resolveToCwd`).
fn pi_path(p: &str) -> String {
    let p = p.strip_prefix('@').unwrap_or(p);
    if let Some(rest) = p.strip_prefix("~/")
        && let Some(home) = std::env::var_os("HOME")
    {
        return PathBuf::from(home)
            .join(rest)
            .to_string_lossy()
            .into_owned();
    }
    p.to_string()
}
