//! Runs the examples of docs/integrations.md: every block marked `<!-- test: NAME -->` is taken
//! from the document as written, so a change to redline that breaks an example fails here. The
//! editor examples run in the real editors (`harness = false`: a test whose editor is missing is
//! reported as ignored, and fails under `CI=true`).

#[path = "support/clients.rs"]
mod clients;

mod common;

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Output, Stdio};

const DOC: &str = include_str!("../docs/integrations.md");

/// The fenced block after `<!-- test: NAME -->`.
fn block(name: &str) -> String {
    common::doc_block(DOC, "docs/integrations.md", name)
}

/// A project with the document's `src/greet.rs`, and its `/tmp/edits.json` saved in the project.
struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    fn new() -> Project {
        Project::with_name("src/greet.rs")
    }

    /// The project with the document's file and request under another name.
    fn with_name(name: &str) -> Project {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join(name), block("greet.rs")).unwrap();
        let mut edits: Value = serde_json::from_str(&block("edits.json")).unwrap();
        edits["files"][0]["path"] = json!(name);
        std::fs::write(dir.path().join("edits.json"), edits.to_string()).unwrap();
        Project { dir }
    }

    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.path().join(name)).unwrap()
    }

    /// Runs `cmd` in the project with `redline` first on the PATH, stdin empty.
    fn run(&self, cmd: &mut Command) -> Output {
        cmd.current_dir(self.path())
            .env("PATH", path_with_redline())
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn greet(&self) -> String {
        std::fs::read_to_string(self.path().join("src/greet.rs")).unwrap()
    }

    /// Runs a documented shell command with `redline` on the PATH and `/tmp/edits.json` pointing
    /// at this project's copy.
    fn sh(&self, cmd: &str, stdin: &[u8]) -> Output {
        let cmd = cmd.replace(
            "/tmp/edits.json",
            self.path().join("edits.json").to_str().unwrap(),
        );
        let path = path_with_redline();
        common::output_with_stdin(
            Command::new("sh")
                .arg("-c")
                .arg(&cmd)
                .current_dir(self.path())
                .env("PATH", path),
            stdin,
        )
    }
}

/// PATH with the directory of the `redline` under test first.
fn path_with_redline() -> std::ffi::OsString {
    let bin_dir = Path::new(common::BIN).parent().unwrap();
    std::env::join_paths(
        std::iter::once(bin_dir.to_path_buf()).chain(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        )),
    )
    .unwrap()
}

fn edited() -> String {
    block("greet.rs").replace("\"hello\"", "\"hello, world\"")
}

fn filter_example() {
    let p = Project::new();
    let out = p.sh(block("filter").trim(), b"");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8(out.stdout).unwrap(), edited());
    assert!(out.stderr.is_empty());
}

/// Helix pastes `%{buffer_name}` into the shell command as it is: the documented command line,
/// with the name substituted the way Helix does (Helix itself is not in Debian, so the shell runs
/// the line Helix would run).
fn helix_pipe_example() {
    let p = Project::with_name("src/my greet.rs");
    let line = block("helix");
    let template = line.trim().strip_prefix(":pipe ").unwrap();
    let cmd = template.replace("%{buffer_name}", "src/my greet.rs");
    let out = p.sh(&cmd, block("greet.rs").as_bytes());
    assert_eq!(
        out.status.code(),
        Some(0),
        "{cmd}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8(out.stdout).unwrap(), edited());
    // A buffer the edits do not fit: exit 1, the buffer echoed, stderr empty (Helix then leaves
    // the buffer alone).
    let out = p.sh(&cmd, b"fn other() {}\n");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(out.stdout, b"fn other() {}\n");
    assert!(out.stderr.is_empty());
    // Without the quotes the name splits in two: still exit 1, the buffer echoed, stderr empty.
    let unquoted = template
        .replace("'%{buffer_name}'", "%{buffer_name}")
        .replace("%{buffer_name}", "src/my greet.rs");
    let out = p.sh(&unquoted, block("greet.rs").as_bytes());
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), block("greet.rs"));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn vim_filter_example() {
    let p = Project::new();
    let out = p.sh(block("vim").trim(), b"");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(p.greet(), edited());
}

/// The Vim example on a file whose name has a space: `%:S` quotes it. The same command with a
/// bare `%` splits the name; the buffer, which Vim replaces with the filter's output and `wq`
/// saves, must come back unchanged.
fn vim_filter_quotes_the_name() {
    let p = Project::with_name("src/my greet.rs");
    let cmd = block("vim")
        .trim()
        .replace("src/greet.rs", "'src/my greet.rs'");
    let out = p.sh(&cmd, b"");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(p.read("src/my greet.rs"), edited());

    let p = Project::with_name("src/my greet.rs");
    let out = p.sh(&cmd.replace("%:S", "%"), b"");
    common::assert_success(&out);
    assert_eq!(p.read("src/my greet.rs"), block("greet.rs"));
}

/// The Kakoune recipe typed at the `|` prompt of a real Kakoune (no UI), then `write-quit`.
fn kakoune_recipe() {
    let p = Project::with_name("src/my greet.rs");
    let keys = block("kakoune").trim().replace(
        "/tmp/edits.json",
        p.path().join("edits.json").to_str().unwrap(),
    );
    assert!(
        !keys.contains(['<', '}']),
        "the keys need no escaping: {keys}"
    );
    let cmd = format!("execute-keys %{{{keys}<ret>}}; write-quit");
    let home = tempfile::tempdir().unwrap();
    let out = p.run(
        Command::new("kak")
            .args(["-n", "-ui", "dummy", "-e", &cmd, "src/my greet.rs"])
            .env("HOME", home.path())
            .env("XDG_RUNTIME_DIR", home.path()),
    );
    common::assert_success(&out);
    assert_eq!(p.read("src/my greet.rs"), edited());
}

fn neovim_command_line() {
    let p = Project::new();
    let out = p.sh(block("neovim").trim(), b"");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let root = std::fs::canonicalize(p.path()).unwrap();
    assert_eq!(v["errors"], json!([]));
    assert_eq!(
        v["workspaceEdit"]["documentChanges"],
        json!([{
            "textDocument": {"uri": format!("file://{}/src/greet.rs", root.display()), "version": null},
            "edits": [{"range": {"start": {"line": 1, "character": 4}, "end": {"line": 1, "character": 22}},
                       "newText": "println!(\"hello, world\");"}]
        }])
    );
    assert_eq!(p.greet(), block("greet.rs"), "resolve never writes");
}

/// (command, args) of the `.mcp.json` example.
fn mcp_json_command() -> (String, Vec<String>) {
    let v: Value = serde_json::from_str(&block("mcp.json")).unwrap();
    let s = &v["mcpServers"]["redline"];
    let args = s["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect();
    (s["command"].as_str().unwrap().to_string(), args)
}

fn codex_toml_starts_the_same_server() {
    let toml = block("codex.toml");
    let value = |key: &str| {
        let line = toml
            .lines()
            .find(|l| l.starts_with(&format!("{key} = ")))
            .unwrap();
        line.split_once(" = ").unwrap().1.to_string()
    };
    assert!(toml.starts_with("[mcp_servers.redline]\n"));
    let command: String = serde_json::from_str(&value("command")).unwrap();
    let args: Vec<String> = serde_json::from_str(&value("args")).unwrap();
    assert_eq!((command, args), mcp_json_command());
}

fn mcp_config_starts_a_working_server() {
    let p = Project::new();
    let (command, args) = mcp_json_command();
    assert_eq!(command, "redline");
    let (mut child, mut stdin, stdout) =
        common::spawn_session(common::redline().args(&args).current_dir(p.path()));
    let mut stdout = BufReader::new(stdout);
    let mut request = |id: i64, method: &str, params: Value| -> Value {
        writeln!(
            stdin,
            "{}",
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        )
        .unwrap();
        stdin.flush().unwrap();
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap()
    };
    let init = request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "doc", "version": "0"}}),
    );
    assert_eq!(init["result"]["serverInfo"]["name"], "redline");
    let tools = request(2, "tools/list", json!({}));
    assert_eq!(tools["result"]["tools"].as_array().unwrap().len(), 3);
    let args: Value = serde_json::from_str(&block("edits.json")).unwrap();
    let r = request(
        3,
        "tools/call",
        json!({"name": "apply_edits", "arguments": args}),
    );
    assert_eq!(r["result"]["isError"], false, "{r}");
    drop(stdin);
    assert_eq!(child.wait().unwrap().code(), Some(0));
    assert_eq!(p.greet(), edited());
}

fn script_example() {
    let p = Project::new();
    let out = p.sh(block("script").trim(), b"");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let diff = String::from_utf8(out.stdout).unwrap();
    assert!(
        diff.starts_with("--- a/src/greet.rs\n+++ b/src/greet.rs\n"),
        "{diff}"
    );
    assert!(
        diff.contains("\n-    println!(\"hello\");\n+    println!(\"hello, world\");\n"),
        "{diff}"
    );
    assert_eq!(p.greet(), block("greet.rs"), "a dry run never writes");
}

/// Whether every field the document shows is in `actual` with the same value (arrays: same
/// length, element by element).
fn shown_in(doc: &Value, actual: &Value) -> bool {
    match (doc, actual) {
        (Value::Object(d), Value::Object(a)) => d
            .iter()
            .all(|(k, v)| a.get(k).is_some_and(|x| shown_in(v, x))),
        (Value::Array(d), Value::Array(a)) => {
            d.len() == a.len() && d.iter().zip(a).all(|(x, y)| shown_in(x, y))
        }
        _ => doc == actual,
    }
}

fn serve_session() {
    let p = Project::new();
    let input = block("serve-in");
    let out = p.sh("redline serve", input.as_bytes());
    assert_eq!(out.status.code(), Some(0));
    let got: Vec<Value> = out
        .stdout
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect();
    let want: Vec<Value> = block("serve-out")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(got.len(), want.len());
    for (w, g) in want.iter().zip(&got) {
        assert!(shown_in(w, g), "documented {w}\nbut got {g}");
    }
    assert_eq!(
        got[2]["result"]["files"][0]["edits"][0]["error"]["alreadyApplied"],
        true
    );
}

/// The `redline.lua` snippet, run as written by a real headless Neovim: an unsaved buffer (CRLF
/// on disk, the matched text only in the buffer, after multibyte characters so utf-8 columns
/// matter) and a file no buffer holds are both edited by `:RedlineApply`, then written with `:wa`.
fn neovim_snippet_edits_unsaved_and_unloaded_files() {
    let p = Project::new();
    std::fs::write(
        p.path().join("src/greet.rs"),
        block("greet.rs").replace('\n', "\r\n"),
    )
    .unwrap();
    std::fs::write(
        p.path().join("src/notes.md"),
        "# 笔记 📝\nstatus: 🙂 draft\n",
    )
    .unwrap();
    let request = json!({"files": [
        {"path": "src/greet.rs", "edits": [{"oldText": "🦀\"; println!(\"hello\");",
                                            "newText": "🦀\"; println!(\"hello, 世界\");"}]},
        {"path": "src/notes.md", "edits": [{"oldText": "🙂 draft", "newText": "🙂 done"}]}
    ]});
    std::fs::write(p.path().join("edits.json"), request.to_string()).unwrap();
    let output = nvim_redline_apply(
        &p,
        &[
            r#"lua vim.api.nvim_buf_set_lines(0, 1, 2, true, {[[    let _ = "日本語🦀"; println!("hello");]]})"#,
        ],
    );
    assert_eq!(
        std::fs::read_to_string(p.path().join("src/greet.rs")).unwrap(),
        "fn greet() {\r\n    let _ = \"日本語🦀\"; println!(\"hello, 世界\");\r\n}\r\n",
        "{output}"
    );
    assert_eq!(
        std::fs::read_to_string(p.path().join("src/notes.md")).unwrap(),
        "# 笔记 📝\nstatus: 🙂 done\n",
        "{output}"
    );
}

/// Runs the `redline.lua` snippet in a headless Neovim opened on `src/greet.rs`: the `setup`
/// commands, then `:RedlineApply edits.json`, `:wa`, `:qa!`. Returns what Neovim printed; a
/// failing Neovim fails the test.
fn nvim_redline_apply(p: &Project, setup: &[&str]) -> String {
    let home = tempfile::tempdir().unwrap();
    let rtp = home.path().join("rtp");
    std::fs::create_dir_all(rtp.join("lua")).unwrap();
    std::fs::write(rtp.join("lua/redline.lua"), block("redline.lua")).unwrap();

    let path = path_with_redline();
    let log = |name: &str| std::fs::File::create(home.path().join(name)).unwrap();
    let mut command = Command::new("nvim");
    command
        .args(["--headless", "-u", "NONE", "-i", "NONE", "-n", "--cmd"])
        .arg(format!("lua vim.opt.rtp:prepend([[{}]])", rtp.display()))
        .arg("src/greet.rs");
    for c in setup {
        command.args(["-c", c]);
    }
    let mut nvim = command
        .args([
            "-c",
            "lua require('redline')",
            "-c",
            "RedlineApply edits.json",
            "-c",
            "wa",
            "-c",
            "qa!",
        ])
        .current_dir(p.path())
        .env("PATH", path)
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .env("XDG_DATA_HOME", home.path().join("data"))
        .env("XDG_STATE_HOME", home.path().join("state"))
        .env("XDG_CACHE_HOME", home.path().join("cache"))
        .env("NVIM_LOG_FILE", home.path().join("nvim.log"))
        .stdin(Stdio::null())
        .stdout(log("stdout"))
        .stderr(log("stderr"))
        .spawn()
        .unwrap();
    // A safety net, not a timing assertion: a stuck nvim fails the test instead of hanging it.
    let mut waited = 0;
    let status = loop {
        if let Some(status) = nvim.try_wait().unwrap() {
            break status;
        }
        if waited > 1200 {
            nvim.kill().unwrap();
            panic!("nvim did not exit");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
        waited += 1;
    };
    let said = |name: &str| std::fs::read_to_string(home.path().join(name)).unwrap();
    let output = format!("stdout: {}\nstderr: {}", said("stdout"), said("stderr"));
    assert!(status.success(), "{output}");
    output
}

/// Neovim 0.7 (Debian's) does not create the parents of a created or moved file; the snippet
/// does, so a create and a move into directories that do not exist both land, and a created
/// file gets exactly its content (Neovim's 'eol' would add a line).
fn neovim_snippet_creates_parent_directories() {
    let p = Project::new();
    std::fs::write(p.path().join("old.txt"), "kept\n").unwrap();
    let request = json!({"files": [
        {"path": "docs/new/notes.md", "content": "# Notes\n"},
        {"path": "docs/new/empty.txt", "content": ""},
        {"path": "docs/new/bare.txt", "content": "no newline"},
        {"path": "old.txt", "moveTo": "archive/2026/old.txt"}
    ]});
    std::fs::write(p.path().join("edits.json"), request.to_string()).unwrap();
    let output = nvim_redline_apply(&p, &[]);
    assert!(!output.contains("E5108"), "a Lua error: {output}");
    assert_eq!(p.read("docs/new/notes.md"), "# Notes\n", "{output}");
    assert_eq!(p.read("docs/new/empty.txt"), "", "{output}");
    assert_eq!(p.read("docs/new/bare.txt"), "no newline", "{output}");
    assert_eq!(p.read("archive/2026/old.txt"), "kept\n", "{output}");
    assert!(!p.path().join("old.txt").exists(), "{output}");
}

fn main() -> std::process::ExitCode {
    use clients::Case;
    clients::main(vec![
        Case {
            name: "filter_example",
            needs: &[],
            run: filter_example,
        },
        Case {
            name: "helix_pipe_example",
            needs: &[],
            run: helix_pipe_example,
        },
        Case {
            name: "vim_filter_example",
            needs: &["vim"],
            run: vim_filter_example,
        },
        Case {
            name: "vim_filter_quotes_the_name",
            needs: &["vim"],
            run: vim_filter_quotes_the_name,
        },
        Case {
            name: "kakoune_recipe",
            needs: &["kak"],
            run: kakoune_recipe,
        },
        Case {
            name: "neovim_command_line",
            needs: &[],
            run: neovim_command_line,
        },
        Case {
            name: "neovim_snippet_edits_unsaved_and_unloaded_files",
            needs: &["nvim"],
            run: neovim_snippet_edits_unsaved_and_unloaded_files,
        },
        Case {
            name: "neovim_snippet_creates_parent_directories",
            needs: &["nvim"],
            run: neovim_snippet_creates_parent_directories,
        },
        Case {
            name: "codex_toml_starts_the_same_server",
            needs: &[],
            run: codex_toml_starts_the_same_server,
        },
        Case {
            name: "mcp_config_starts_a_working_server",
            needs: &[],
            run: mcp_config_starts_a_working_server,
        },
        Case {
            name: "script_example",
            needs: &["jq"],
            run: script_example,
        },
        Case {
            name: "serve_session",
            needs: &[],
            run: serve_session,
        },
    ])
}
