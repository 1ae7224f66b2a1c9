//! The writer's guarantees through the real `redline` binary: `kill -9` of `redline apply` in
//! the middle of a multi-file batch then `redline recover`; concurrent applies of edits that do
//! not conflict; hostile paths. `REDLINE_FAULT_ITERS` scales the kill count.

mod common;

use std::fs;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

const N_FILES: usize = 6;

fn apply(root: &Path, request: &str) -> std::process::Child {
    common::spawn_with_stdin(
        common::redline()
            .args(["apply", "--format", "json", "--root"])
            .arg(root)
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
        request.as_bytes(),
    )
}

fn body(tag: &str, i: usize) -> String {
    // Large enough that writing the batch takes a while.
    format!("{tag} {i}\n{}", "line of text\n".repeat(200))
}

/// A batch that rewrites every file, creates one and deletes one, toggling between two states.
fn request(to_new: bool) -> String {
    let (from, to) = if to_new {
        ("old", "new")
    } else {
        ("new", "old")
    };
    let mut files: Vec<serde_json::Value> = (0..N_FILES)
        .map(|i| serde_json::json!({"path": format!("d{}/f{i}", i % 2), "edits": [{"oldText": format!("{from} {i}\n"), "newText": format!("{to} {i}\n")}]}))
        .collect();
    let (create, delete) = if to_new {
        ("created", "deleted")
    } else {
        ("deleted", "created")
    };
    files.push(serde_json::json!({"path": create, "content": body(to, 99)}));
    files.push(serde_json::json!({"path": delete, "delete": true}));
    serde_json::json!({"files": files}).to_string()
}

/// "old" or "new" when the whole tree is in one state, else a description of the mix.
fn state(root: &Path) -> Result<&'static str, String> {
    let mut seen = Vec::new();
    for i in 0..N_FILES {
        let b = fs::read_to_string(root.join(format!("d{}/f{i}", i % 2))).unwrap();
        seen.push(if b == body("old", i) {
            "old"
        } else if b == body("new", i) {
            "new"
        } else {
            "torn"
        });
    }
    let created = root.join("created").exists();
    let deleted = root.join("deleted").exists();
    seen.push(match (created, deleted) {
        (false, true) => "old",
        (true, false) => "new",
        _ => "torn",
    });
    let mut names: Vec<_> = fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    for d in ["d0", "d1"] {
        for e in fs::read_dir(root.join(d)).unwrap() {
            names.push(format!("{d}/{}", e.unwrap().file_name().to_string_lossy()));
        }
    }
    if names.iter().any(|n| n.contains(".redline")) {
        return Err(format!("leftovers: {names:?}"));
    }
    if seen.iter().all(|s| *s == "old") {
        Ok("old")
    } else if seen.iter().all(|s| *s == "new") {
        Ok("new")
    } else {
        Err(format!("mixed: {seen:?}"))
    }
}

#[test]
fn kill9_apply_then_recover_is_all_or_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    for i in 0..N_FILES {
        let p = root.join(format!("d{}/f{i}", i % 2));
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, body("old", i)).unwrap();
    }
    fs::write(root.join("deleted"), body("old", 99)).unwrap();
    let kills = std::env::var("REDLINE_FAULT_ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100usize)
        / 3;
    let (mut old, mut new, mut rolled_back, mut rolled_forward, mut cleaned) = (0, 0, 0, 0, 0);
    let mut seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    // Calibrate: how long one apply takes here.
    let t = std::time::Instant::now();
    assert!(apply(&root, &request(true)).wait().unwrap().success());
    assert!(apply(&root, &request(false)).wait().unwrap().success());
    let span = (t.elapsed().as_micros() as u64 / 2).max(1000);
    for _ in 0..kills {
        let to_new = state(&root).unwrap() == "old";
        let mut c = apply(&root, &request(to_new));
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        if seed.is_multiple_of(2) {
            // Aim at the commit itself: wait for its journal to appear, then a little more.
            let t = std::time::Instant::now();
            while !root.join(".redline-journal").exists()
                && t.elapsed() < Duration::from_micros(span * 3)
            {
                std::thread::yield_now();
            }
            std::thread::sleep(Duration::from_micros((seed >> 8) % 1000));
        } else {
            std::thread::sleep(Duration::from_micros((seed >> 8) % span));
        }
        let _ = c.kill();
        c.wait().unwrap();
        let out = common::redline()
            .args(["recover", "--root"])
            .arg(&root)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let said = String::from_utf8_lossy(&out.stdout);
        rolled_back += said.contains("rolled back") as usize;
        rolled_forward += said.contains("had landed") as usize;
        cleaned += said.contains("leftovers were removed") as usize;
        match state(&root) {
            Ok("old") => old += 1,
            Ok(_) => new += 1,
            Err(e) => panic!("after kill and recover: {e}"),
        }
    }
    eprintln!(
        "kill -9 of `redline apply` ({N_FILES} edits + create + delete, ~{span} us each): {kills} kills, {old} all-old, {new} all-new, 0 mixed; `redline recover` rolled back {rolled_back}, rolled forward {rolled_forward}, cleaned {cleaned}"
    );
    assert!(
        rolled_back + rolled_forward + cleaned > 0,
        "no kill landed inside a commit: the delays do not exercise recovery"
    );
}

#[test]
fn concurrent_applies_of_disjoint_edits_all_land() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    fs::create_dir(&root).unwrap();
    let n = 8;
    let text: String = (0..n).map(|i| format!("line {i}\n")).collect();
    fs::write(root.join("shared.txt"), &text).unwrap();
    let kids: Vec<_> = (0..n)
        .map(|i| {
            let req = serde_json::json!({"path": "shared.txt", "edits": [{"oldText": format!("line {i}\n"), "newText": format!("LINE {i} by process {i}\n")}]});
            apply(&root, &req.to_string())
        })
        .collect();
    let ok = kids
        .into_iter()
        .filter_map(|mut c| c.wait().ok())
        .filter(|s| s.success())
        .count();
    let after = fs::read_to_string(root.join("shared.txt")).unwrap();
    let lost = (0..n)
        .filter(|i| !after.contains(&format!("LINE {i} by process {i}\n")))
        .count();
    eprintln!("{n} concurrent `redline apply` on one file: {ok} succeeded, {lost} lost updates");
    assert_eq!(ok, n);
    assert_eq!(lost, 0, "{after}");
}

#[test]
fn hostile_paths_are_refused_by_the_binary() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    let outside = dir.path().join("outside");
    fs::create_dir_all(&root).unwrap();
    fs::create_dir_all(&outside).unwrap();
    fs::write(outside.join("secret"), "secret\n").unwrap();
    std::os::unix::fs::symlink(&outside, root.join("out")).unwrap();
    std::os::unix::fs::symlink("../outside/secret", root.join("sec")).unwrap();
    let abs = outside.join("x").display().to_string();
    for path in [
        "../outside/x",
        abs.as_str(),
        "out/x",
        "out/secret",
        "sec",
        "/proc/self/root/tmp/x",
    ] {
        for req in [
            serde_json::json!({"files": [{"path": path, "content": "pwned\n"}]}),
            serde_json::json!({"files": [{"path": path, "edits": [{"oldText": "secret", "newText": "pwned"}]}]}),
            serde_json::json!({"files": [{"path": path, "delete": true}]}),
        ] {
            let out = common::output_with_stdin(
                common::redline()
                    .args(["apply", "--format", "json", "--root"])
                    .arg(&root),
                req.to_string().as_bytes(),
            );
            assert_eq!(
                out.status.code(),
                Some(1),
                "{path}: {}",
                String::from_utf8_lossy(&out.stdout)
            );
            assert!(
                String::from_utf8_lossy(&out.stdout).contains("outside_root"),
                "{path}"
            );
        }
    }
    assert_eq!(
        fs::read_to_string(outside.join("secret")).unwrap(),
        "secret\n"
    );
    assert_eq!(fs::read_dir(&outside).unwrap().count(), 1);
}
