//! The peer edit-tool corpus (`testdata/peer-cases/`, copied from `../shared/corpus/peer-cases/`):
//! 347 cases from the test suites of OpenCode, Aider, Cline, Roo Code, Gemini CLI, Continue and Pi,
//! each run through the real binary as `redline apply --root ROOT --format json --input KIND
//! REQUEST`, the file compared afterwards.
//!
//! What each `redline_target` must do:
//! - `apply`: applied, the file byte for byte the peer's `result`;
//! - `refuse`: not applied (non-zero exit, the file untouched);
//! - `recover` (SPEC §3b and engine defects): applied at the peer's place with the peer's bytes, or
//!   with the bytes and the reason given in [`JUSTIFIED`];
//! - `dialect`, `differs`, `review`: what [`DECISIONS`] says (the README gives the reasons too).
//!
//! The test prints its counts by target, and fails on any case that does not do what it must.

mod common;

use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::Path;

const CORPUS: &str = "testdata/peer-cases/cases.json";

/// What redline does with a case.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Got {
    /// Exit 0; the file's bytes afterwards (`None`: there is no file).
    Applied(Option<Vec<u8>>),
    /// Non-zero exit and the file as it was.
    Refused(i32),
    /// Non-zero exit but the file changed: never acceptable.
    Broken(i32),
}

/// How redline decides a `dialect`, `differs` or `review` case.
enum Decision {
    /// Applied with these bytes.
    Bytes(&'static str),
    /// Refused.
    Refuse,
}

/// `recover` cases whose result is not the peer's bytes, with redline's result (`None`: redline
/// refuses) and why.
const JUSTIFIED: &[(&str, Option<&str>, &str)] = &[
    (
        "opencode-008",
        Some("function test() {\n\tconsole.log(\"world\");\n}"),
        "tabs: newText's indentation is written in the style of the matched line (a tab), the peer writes the spaces as given",
    ),
    (
        "roo-047",
        Some("start\nif (true) {\n\treturn 2\n}\nend"),
        "tabs (width 4): newText's indentation is written with the file's tab, the peer writes the spaces as given",
    ),
    (
        "roo-048",
        Some("Line 1\n\tCost: $100\nLine 3"),
        "tabs (width 4): newText's indentation is written with the file's tab, the peer writes the spaces as given",
    ),
    (
        "opencode-011",
        Some(
            "    function nested() {\n      console.log(\"updated\");\n      return false;\n    }",
        ),
        "indentation: newText is re-indented by the same +4 columns as oldText, so it lands where the file has the block; the peer writes it flush left",
    ),
    (
        "opencode-026",
        Some("  function test() {\n    return false;\n  }"),
        "indentation: newText re-indented by oldText's +2, the peer writes it as given",
    ),
    (
        "opencode-028",
        Some("\n  if (condition) {\n    doNothing();\n  }\n"),
        "indentation: newText re-indented by oldText's +2, the peer writes it as given",
    ),
    (
        "gemini-024",
        Some("  // some comment\n\n    function newFunc() {}"),
        "indentation: oldText's lines are the file's shifted by 2 spaces, so newText (already indented by the agent) is shifted too; redline applies the rule and does not guess that newText was already right",
    ),
    (
        "roo-038",
        None,
        "line_numbers: the prefixes say lines 1476-1479, the file (an excerpt) has the text at lines 1-4; SPEC §3b requires the numbers to equal the file's line numbers at the match, so it stays not_found",
    ),
    (
        "cline-011",
        Some("line1\nreplaced\nline3"),
        "the last line is deleted at the peer's place; SPEC §6 keeps the file's final-newline state (it had none), the peer adds one",
    ),
    (
        "roo-039",
        Some("line 1\nmodified line 2\nline 3"),
        "the peer's test asserts success only; these are redline's bytes",
    ),
];

/// Decisions for the `dialect`, `differs` and `review` cases (reasons in the README).
const DECISIONS: &[(&str, Decision)] = &[
    // Empty oldText is an invalid_request (SPEC §2): create with `content`.
    ("opencode-017", Decision::Refuse),
    ("opencode-044", Decision::Refuse),
    ("opencode-045", Decision::Refuse),
    ("cline-038", Decision::Refuse),
    ("roo-050", Decision::Refuse),
    ("continue-005", Decision::Refuse),
    ("continue-033", Decision::Refuse),
    ("continue-034", Decision::Refuse),
    ("continue-044", Decision::Refuse),
    ("continue-046", Decision::Refuse),
    ("gemini-028", Decision::Refuse),
    // Edits match the original, never each other's output (SPEC §3.7).
    ("continue-035", Decision::Refuse),
    // A block after prose without its own path line.
    ("aider-011", Decision::Refuse),
    // Truncated blocks (no REPLACE marker) may be cut off output: refused.
    ("cline-018", Decision::Refuse),
    ("cline-019", Decision::Refuse),
    // Marker lengths other than 7.
    ("cline-025", Decision::Refuse),
    ("cline-028", Decision::Refuse),
    ("cline-029", Decision::Refuse),
    // Roo's `:start_line:` header.
    ("roo-003", Decision::Refuse),
    ("roo-004", Decision::Refuse),
    ("roo-034", Decision::Refuse),
    // differs / review
    ("cline-006", Decision::Bytes("line1\n replaced \nline3")),
    ("gemini-047", Decision::Bytes("replaced \n \n")),
    ("cline-014", Decision::Bytes("line1\nreplaced\nline3")),
];

/// `recover` cases not recovered yet: tolerated, and required to still fail (so that this list
/// only shrinks).
const PENDING: &[&str] = &[];

fn cases() -> Vec<Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(CORPUS);
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let v: Value = serde_json::from_str(&text).unwrap();
    v["cases"].as_array().unwrap().clone()
}

fn s<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key]
        .as_str()
        .unwrap_or_else(|| panic!("{key} missing in {v}"))
}

/// Runs one case through the binary.
fn run(case: &Value) -> (Got, String) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    fs::create_dir(&root).unwrap();
    let file = root.join(s(case, "path"));
    let before = case["file_text"].as_str().map(|t| t.as_bytes().to_vec());
    if let Some(b) = &before {
        fs::create_dir_all(file.parent().unwrap()).unwrap();
        fs::write(&file, b).unwrap();
    }
    let req = &case["request"];
    let input = s(req, "input");
    let req_path = tmp.path().join("request");
    match input {
        "json" => fs::write(&req_path, serde_json::to_vec(&req["body"]).unwrap()).unwrap(),
        _ => fs::write(&req_path, s(req, "text")).unwrap(),
    }
    let out = common::redline()
        .args(["apply", "--format", "json", "--input", input, "--root"])
        .arg(&root)
        .arg(&req_path)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let after = fs::read(&file).ok();
    let code = out.status.code().unwrap_or(-1);
    let got = if code == 0 {
        Got::Applied(after)
    } else if after == before {
        Got::Refused(code)
    } else {
        Got::Broken(code)
    };
    (got, String::from_utf8_lossy(&out.stdout).into_owned())
}

fn show(got: &Got) -> String {
    match got {
        Got::Applied(Some(b)) => format!("applied {:?}", String::from_utf8_lossy(b)),
        Got::Applied(None) => "applied, no file".into(),
        Got::Refused(c) => format!("refused (exit {c})"),
        Got::Broken(c) => format!("exit {c} but the file changed"),
    }
}

/// Whether `got` is what the case must do; `Err` says what was wanted.
fn judge(case: &Value, got: &Got) -> Result<(), String> {
    let id = s(case, "id");
    let target = s(&case["redline_target"], "target");
    let peer = case["peer_expected"]["result"]
        .as_str()
        .map(|r| r.as_bytes().to_vec());
    let applied_as = |want: &[u8]| match got {
        Got::Applied(Some(b)) if b == want => Ok(()),
        _ => Err(format!("want applied {:?}", String::from_utf8_lossy(want))),
    };
    let refused = || match got {
        Got::Refused(_) => Ok(()),
        _ => Err("want refused, file untouched".to_string()),
    };
    match target {
        // `{"applies": true}`: the peer's test asserts success only.
        "apply" => match &peer {
            Some(want) => applied_as(want),
            None if matches!(got, Got::Applied(Some(_))) => Ok(()),
            None => Err("want applied".into()),
        },
        "refuse" => refused(),
        "recover" => match JUSTIFIED.iter().find(|(j, _, _)| *j == id) {
            Some((_, Some(bytes), _)) => applied_as(bytes.as_bytes()),
            Some((_, None, _)) => refused(),
            None => applied_as(peer.as_deref().expect("recover cases carry a result")),
        },
        "dialect" | "differs" | "review" => match DECISIONS.iter().find(|(d, _)| *d == id) {
            Some((_, Decision::Bytes(b))) => applied_as(b.as_bytes()),
            Some((_, Decision::Refuse)) => refused(),
            None => Err(format!("no decision for this {target} case in DECISIONS")),
        },
        other => Err(format!("unknown target {other}")),
    }
}

#[test]
fn peer_cases() {
    let cases = cases();
    assert_eq!(cases.len(), 347, "case count");
    // target -> (total, as required, pending)
    let mut counts: BTreeMap<String, (usize, usize, usize)> = BTreeMap::new();
    let mut failures = Vec::new();
    let mut table = String::new();
    // Four workers: each case is a process of its own.
    let results: Vec<(Got, String)> = std::thread::scope(|scope| {
        let chunks: Vec<_> = cases
            .chunks(cases.len().div_ceil(4))
            .map(|chunk| scope.spawn(move || chunk.iter().map(run).collect::<Vec<_>>()))
            .collect();
        chunks.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    for (case, (got, stdout)) in cases.iter().zip(results) {
        let id = s(case, "id");
        let target = s(&case["redline_target"], "target").to_string();
        let verdict = judge(case, &got);
        let pending = PENDING.contains(&id);
        let c = counts.entry(target.clone()).or_default();
        c.0 += 1;
        match (&verdict, pending) {
            (Ok(()), false) => c.1 += 1,
            (Err(_), true) => c.2 += 1,
            (Ok(()), true) => failures.push(format!(
                "{id} ({target}) now does what it must: remove it from PENDING"
            )),
            (Err(want), false) => failures.push(format!(
                "{id} ({target}): {}; {want}\n  stdout: {}",
                show(&got),
                stdout.trim()
            )),
        }
        if matches!(got, Got::Broken(_)) {
            failures.push(format!("{id}: failed but changed the file"));
        }
    }
    for (id, _, _) in JUSTIFIED {
        assert!(
            cases
                .iter()
                .any(|c| s(c, "id") == *id && s(&c["redline_target"], "target") == "recover"),
            "JUSTIFIED names {id}, which is not a recover case"
        );
    }
    writeln!(
        table,
        "{:<8} {:>5} {:>8} {:>7}",
        "target", "cases", "as must", "pending"
    )
    .unwrap();
    for (t, (n, ok, p)) in &counts {
        writeln!(table, "{t:<8} {n:>5} {ok:>8} {p:>7}").unwrap();
    }
    println!("peer cases by target:\n{table}");
    assert!(
        failures.is_empty(),
        "{} peer cases wrong:\n{}\n\n{table}",
        failures.len(),
        failures.join("\n")
    );
}
