//! `redline setup AGENT [--review] [--user] [--remove]` (SPEC §1, §9): writes or merges the
//! harness's hook configuration, keeping every other setting, idempotently; `--remove` undoes it.
//!
//! | agent | project (default) | `--user` | what |
//! |---|---|---|---|
//! | claude | `.claude/settings.json` | `~/.claude/settings.json` | `PreToolUse` on `Edit`, `MultiEdit`, `Write`, redline's MCP `apply_edits`; `PostToolBatch` (failed edits) |
//! | codex | `$CODEX_HOME/hooks.json` | same | `PreToolUse` on `apply_patch`, `Bash` (`codex exec` sends patches through its shell) and redline's MCP `apply_edits` |
//! | gemini | `.gemini/settings.json` | `~/.gemini/settings.json` | `BeforeTool` on `replace`, `write_file`, redline's MCP `apply_edits` |
//! | pi | `.pi/extensions/redline.ts` | `~/.pi/agent/extensions/redline.ts` | the extension of `extensions/pi/redline.ts` |
//!
//! Codex reads hooks only from its home (`$CODEX_HOME`, default `~/.codex`), so its setup is
//! always the user's. redline's entries are recognised by their command (`redline hook …`):
//! a second setup replaces them in place of adding more, `--remove` drops them and any group,
//! event or `hooks` object they leave empty.

use crate::faces::hook::{Agent, DEFAULT_WAIT_SECS};
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};

/// The Pi extension shipped in the repository.
pub(crate) const PI_EXTENSION: &str = include_str!("../../extensions/pi/redline.ts");
const PI_ARGS_LINE: &str = "const REDLINE_ARGS: string[] = [\"hook\", \"pi\"];";

/// Seconds a guard hook may take (it only reads files).
const GUARD_TIMEOUT_SECS: u64 = 30;

/// Where and how to set up.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    pub agent: Agent,
    pub review: bool,
    pub user: bool,
    pub remove: bool,
    /// The project (`--root`, default the current directory).
    pub root: PathBuf,
    /// The user's home directory.
    pub home: PathBuf,
    /// `$CODEX_HOME`, when set.
    pub codex_home: Option<PathBuf>,
}

/// What setup did to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Report {
    pub path: PathBuf,
    pub changed: bool,
    pub summary: String,
}

/// The hook command for `agent`.
pub(crate) fn command(agent: Agent, review: bool) -> String {
    let mut c = format!("redline hook {}", agent.name());
    if review {
        c.push_str(" --review");
    }
    c
}

/// Seconds the harness should give the hook: generous with `--review`, where a human decides.
pub(crate) fn timeout_secs(review: bool) -> u64 {
    if review {
        DEFAULT_WAIT_SECS + 60
    } else {
        GUARD_TIMEOUT_SECS
    }
}

/// The file setup writes for these options.
pub(crate) fn target(o: &Options) -> PathBuf {
    match o.agent {
        Agent::Claude if o.user => o.home.join(".claude/settings.json"),
        Agent::Claude => o.root.join(".claude/settings.json"),
        Agent::Codex => o
            .codex_home
            .clone()
            .unwrap_or_else(|| o.home.join(".codex"))
            .join("hooks.json"),
        Agent::Gemini if o.user => o.home.join(".gemini/settings.json"),
        Agent::Gemini => o.root.join(".gemini/settings.json"),
        Agent::Pi if o.user => o.home.join(".pi/agent/extensions/redline.ts"),
        Agent::Pi => o.root.join(".pi/extensions/redline.ts"),
    }
}

/// (event, matcher, timeout as the harness counts it) of each hook group redline adds.
fn groups(agent: Agent, review: bool) -> Vec<(&'static str, Option<&'static str>, u64)> {
    let secs = timeout_secs(review);
    match agent {
        Agent::Claude => vec![
            (
                "PreToolUse",
                Some("Edit|MultiEdit|Write|mcp__redline__apply_edits"),
                secs,
            ),
            ("PostToolBatch", None, GUARD_TIMEOUT_SECS),
        ],
        Agent::Codex => vec![(
            "PreToolUse",
            Some("apply_patch|Bash|mcp__redline__apply_edits"),
            secs,
        )],
        // Gemini counts milliseconds.
        Agent::Gemini => vec![(
            "BeforeTool",
            Some("replace|write_file|mcp_redline_apply_edits"),
            secs * 1000,
        )],
        Agent::Pi => Vec::new(),
    }
}

fn is_ours(hook: &Value) -> bool {
    hook.get("command")
        .and_then(Value::as_str)
        .is_some_and(|c| c.trim_start().starts_with("redline hook "))
}

/// `settings` without redline's hook entries (and without what that leaves empty).
pub(crate) fn remove_hooks(mut settings: Value) -> Value {
    let Some(hooks) = settings.get_mut("hooks").and_then(Value::as_object_mut) else {
        return settings;
    };
    let events: Vec<String> = hooks.keys().cloned().collect();
    for ev in events {
        let Some(list) = hooks.get_mut(&ev).and_then(Value::as_array_mut) else {
            continue;
        };
        let mut touched = false;
        for group in list.iter_mut() {
            if let Some(inner) = group.get_mut("hooks").and_then(Value::as_array_mut) {
                let before = inner.len();
                inner.retain(|h| !is_ours(h));
                touched |= inner.len() != before;
            }
        }
        if touched {
            list.retain(|g| {
                g.get("hooks")
                    .and_then(Value::as_array)
                    .is_none_or(|h| !h.is_empty())
            });
        }
        if list.is_empty() {
            hooks.remove(&ev);
        }
    }
    if hooks.is_empty()
        && let Some(obj) = settings.as_object_mut()
    {
        obj.remove("hooks");
    }
    settings
}

/// `settings` with redline's hook entries for `agent` (replacing any earlier ones).
pub(crate) fn add_hooks(settings: Value, agent: Agent, review: bool) -> Value {
    let mut settings = remove_hooks(settings);
    if !settings.is_object() {
        settings = Value::Object(Map::new());
    }
    let cmd = command(agent, review);
    let obj = settings.as_object_mut().expect("an object");
    let hooks = obj
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()));
    if !hooks.is_object() {
        *hooks = Value::Object(Map::new());
    }
    let hooks = hooks.as_object_mut().expect("an object");
    for (event, matcher, timeout) in groups(agent, review) {
        let mut hook = json!({"type": "command", "command": cmd, "timeout": timeout});
        if agent == Agent::Gemini {
            hook["name"] = json!("redline");
        }
        let mut group = Map::new();
        if let Some(m) = matcher {
            group.insert("matcher".into(), json!(m));
        }
        group.insert("hooks".into(), json!([hook]));
        let list = hooks
            .entry(event)
            .or_insert_with(|| Value::Array(Vec::new()));
        if !list.is_array() {
            *list = Value::Array(Vec::new());
        }
        list.as_array_mut()
            .expect("an array")
            .push(Value::Object(group));
    }
    settings
}

/// The Pi extension for `--review` or guard mode.
pub(crate) fn pi_extension(review: bool) -> String {
    if review {
        PI_EXTENSION.replace(
            PI_ARGS_LINE,
            "const REDLINE_ARGS: string[] = [\"hook\", \"pi\", \"--review\"];",
        )
    } else {
        PI_EXTENSION.to_string()
    }
}

fn write_atomic(path: &Path, text: &str) -> Result<(), String> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .map_err(|e| format!("cannot write in {}: {e}", dir.display()))?;
    std::io::Write::write_all(&mut tmp, text.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = tmp.as_file().set_permissions(meta.permissions());
    }
    tmp.persist(path)
        .map_err(|e| format!("cannot write {}: {}", path.display(), e.error))?;
    Ok(())
}

/// Runs setup; the report says what changed.
pub(crate) fn run(o: &Options) -> Result<Report, String> {
    let path = target(o);
    let shown = path.display().to_string();
    if o.agent == Agent::Pi {
        let existing = std::fs::read_to_string(&path).ok();
        let ours = existing
            .as_deref()
            .is_some_and(|t| t.contains("REDLINE_ARGS"));
        if o.remove {
            if !ours {
                return Ok(Report {
                    path,
                    changed: false,
                    summary: format!("{shown}: no redline extension there; nothing to remove"),
                });
            }
            std::fs::remove_file(&path).map_err(|e| format!("cannot remove {shown}: {e}"))?;
            return Ok(Report {
                path,
                changed: true,
                summary: format!("{shown}: removed the redline extension"),
            });
        }
        if existing.is_some() && !ours {
            return Err(format!(
                "{shown} exists and is not redline's extension; move it away first"
            ));
        }
        let text = pi_extension(o.review);
        if existing.as_deref() == Some(text.as_str()) {
            return Ok(Report {
                path,
                changed: false,
                summary: format!("{shown}: already set up; nothing changed"),
            });
        }
        write_atomic(&path, &text)?;
        return Ok(Report {
            path,
            changed: true,
            summary: format!(
                "{shown}: wrote the redline extension (runs `{}` on edit and write)",
                command(o.agent, o.review)
            ),
        });
    }
    let before_text = match std::fs::read_to_string(&path) {
        Ok(t) => Some(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(format!("cannot read {shown}: {e}")),
    };
    let before: Value = match before_text.as_deref() {
        None => Value::Object(Map::new()),
        Some(t) if t.trim().is_empty() => Value::Object(Map::new()),
        Some(t) => serde_json::from_str(t).map_err(|e| {
            format!("{shown} is not JSON ({e}); fix it by hand, redline will not overwrite it")
        })?,
    };
    if !before.is_object() {
        return Err(format!(
            "{shown} does not hold a JSON object; redline will not overwrite it"
        ));
    }
    let after = if o.remove {
        remove_hooks(before.clone())
    } else {
        add_hooks(before.clone(), o.agent, o.review)
    };
    if after == before {
        let summary = if o.remove {
            format!("{shown}: no redline hooks there; nothing to remove")
        } else {
            format!("{shown}: already set up; nothing changed")
        };
        return Ok(Report {
            path,
            changed: false,
            summary,
        });
    }
    let mut text = serde_json::to_string_pretty(&after).map_err(|e| e.to_string())?;
    text.push('\n');
    write_atomic(&path, &text)?;
    let summary = if o.remove {
        format!("{shown}: removed redline's hooks")
    } else {
        let what: Vec<String> = groups(o.agent, o.review)
            .iter()
            .map(|(ev, m, _)| match m {
                Some(m) => format!("{ev} ({m})"),
                None => ev.to_string(),
            })
            .collect();
        format!(
            "{shown}: `{}` on {}",
            command(o.agent, o.review),
            what.join(" and ")
        )
    };
    Ok(Report {
        path,
        changed: true,
        summary,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(dir: &Path, agent: Agent) -> Options {
        Options {
            agent,
            review: false,
            user: false,
            remove: false,
            root: dir.join("proj"),
            home: dir.join("home"),
            codex_home: None,
        }
    }

    fn read(p: &Path) -> Value {
        serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
    }

    #[test]
    fn claude_setup_merges_keeps_user_settings_is_idempotent_and_removes_cleanly() {
        let dir = tempfile::tempdir().unwrap();
        let o = opts(dir.path(), Agent::Claude);
        let path = target(&o);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let user = json!({
            "model": "opus",
            "permissions": {"allow": ["Bash(ls:*)"]},
            "hooks": {"PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]}
            ]}
        });
        std::fs::write(&path, serde_json::to_string_pretty(&user).unwrap()).unwrap();
        let r = run(&o).unwrap();
        assert!(r.changed);
        assert!(
            r.summary
                .contains("`redline hook claude` on PreToolUse (Edit|MultiEdit|Write"),
            "{}",
            r.summary
        );
        let v = read(&path);
        assert_eq!(v["model"], "opus");
        assert_eq!(v["permissions"], user["permissions"]);
        let pre = v["hooks"]["PreToolUse"].as_array().unwrap();
        assert_eq!(pre.len(), 2);
        assert_eq!(pre[0], user["hooks"]["PreToolUse"][0]);
        assert_eq!(
            pre[1]["matcher"],
            "Edit|MultiEdit|Write|mcp__redline__apply_edits"
        );
        assert_eq!(pre[1]["hooks"][0]["command"], "redline hook claude");
        assert_eq!(pre[1]["hooks"][0]["timeout"], 30);
        assert_eq!(
            v["hooks"]["PostToolBatch"][0]["hooks"][0]["command"],
            "redline hook claude"
        );
        // Key order of the user's file is kept.
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["model", "permissions", "hooks"]);
        // Again: nothing changes.
        let text = std::fs::read_to_string(&path).unwrap();
        let r = run(&o).unwrap();
        assert!(!r.changed);
        assert!(r.summary.contains("already set up"));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
        // --review replaces the entry in place of adding one, with a generous timeout.
        let r = run(&Options {
            review: true,
            ..o.clone()
        })
        .unwrap();
        assert!(r.changed);
        let v = read(&path);
        let pre = v["hooks"]["PreToolUse"].as_array().unwrap();
        assert_eq!(pre.len(), 2);
        assert_eq!(
            pre[1]["hooks"][0]["command"],
            "redline hook claude --review"
        );
        assert_eq!(pre[1]["hooks"][0]["timeout"], 660);
        // --remove gives back the user's settings.
        let r = run(&Options {
            remove: true,
            ..o.clone()
        })
        .unwrap();
        assert!(r.changed);
        assert_eq!(read(&path), user);
        let r = run(&Options {
            remove: true,
            ..o.clone()
        })
        .unwrap();
        assert!(!r.changed);
    }

    #[test]
    fn remove_drops_what_it_leaves_empty_and_keeps_shared_groups() {
        let v = json!({"hooks": {
            "PreToolUse": [{"matcher": "Edit", "hooks": [
                {"type": "command", "command": "redline hook claude"},
                {"type": "command", "command": "fmt.sh"}
            ]}],
            "PostToolBatch": [{"hooks": [{"type": "command", "command": "redline hook claude"}]}]
        }});
        let out = remove_hooks(v);
        assert_eq!(
            out,
            json!({"hooks": {"PreToolUse": [{"matcher": "Edit", "hooks": [
                {"type": "command", "command": "fmt.sh"}
            ]}]}})
        );
        assert_eq!(
            remove_hooks(
                json!({"hooks": {"BeforeTool": [{"hooks": [{"command": "redline hook gemini"}]}]}, "x": 1})
            ),
            json!({"x": 1})
        );
    }

    #[test]
    fn gemini_codex_and_user_paths() {
        let dir = tempfile::tempdir().unwrap();
        let o = opts(dir.path(), Agent::Gemini);
        run(&o).unwrap();
        let v = read(&dir.path().join("proj/.gemini/settings.json"));
        let g = &v["hooks"]["BeforeTool"][0];
        assert_eq!(g["matcher"], "replace|write_file|mcp_redline_apply_edits");
        assert_eq!(g["hooks"][0]["timeout"], 30000);
        assert_eq!(g["hooks"][0]["name"], "redline");
        let u = Options {
            user: true,
            ..o.clone()
        };
        assert_eq!(target(&u), dir.path().join("home/.gemini/settings.json"));
        let c = opts(dir.path(), Agent::Codex);
        assert_eq!(target(&c), dir.path().join("home/.codex/hooks.json"));
        let c = Options {
            codex_home: Some(dir.path().join("ch")),
            review: true,
            ..c
        };
        run(&c).unwrap();
        let v = read(&dir.path().join("ch/hooks.json"));
        assert_eq!(
            v["hooks"]["PreToolUse"][0]["matcher"],
            "apply_patch|Bash|mcp__redline__apply_edits"
        );
        assert_eq!(
            v["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
            "redline hook codex --review"
        );
        // A settings file that is not JSON is left alone.
        let bad = opts(dir.path(), Agent::Claude);
        std::fs::create_dir_all(target(&bad).parent().unwrap()).unwrap();
        std::fs::write(target(&bad), "{ not json").unwrap();
        assert!(run(&bad).unwrap_err().contains("not JSON"));
        assert_eq!(std::fs::read_to_string(target(&bad)).unwrap(), "{ not json");
    }

    #[test]
    fn pi_extension_is_written_switched_and_removed() {
        let dir = tempfile::tempdir().unwrap();
        let o = opts(dir.path(), Agent::Pi);
        let path = target(&o);
        assert_eq!(path, dir.path().join("proj/.pi/extensions/redline.ts"));
        assert!(run(&o).unwrap().changed);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), PI_EXTENSION);
        assert!(!run(&o).unwrap().changed);
        assert!(
            PI_EXTENSION.contains(PI_ARGS_LINE),
            "the line --review rewrites"
        );
        run(&Options {
            review: true,
            ..o.clone()
        })
        .unwrap();
        assert!(
            std::fs::read_to_string(&path)
                .unwrap()
                .contains("[\"hook\", \"pi\", \"--review\"]")
        );
        assert!(
            run(&Options {
                remove: true,
                ..o.clone()
            })
            .unwrap()
            .changed
        );
        assert!(!path.exists());
        // Someone else's file of that name is not overwritten.
        std::fs::write(&path, "export default () => {}").unwrap();
        assert!(run(&o).is_err());
        assert!(!run(&Options { remove: true, ..o }).unwrap().changed);
    }
}
