//! A test harness for tests that drive third-party programs (editors, `git`, `patch`, `node`,
//! Python): each test names the programs it needs. When one is missing the test is reported as
//! *ignored* in the summary, with the missing program as the reason; under `CI=true` it runs and
//! fails instead, because CI (`.ci/run`) installs every one of them.
#![allow(dead_code)]

use std::process::{Command, ExitCode};

/// One test: its name, what it needs, and its body (a panic fails it).
pub struct Case {
    pub name: &'static str,
    /// Programs on the PATH; an entry with a `/` is a path beneath the package root instead
    /// (packages that `.ci/run` installs there, such as `tests/node/node_modules/…`), and one
    /// of the form `target:TRIPLE` is the Rust standard library for that target (`rustup target
    /// add TRIPLE`).
    pub needs: &'static [&'static str],
    pub run: fn(),
}

/// Whether `program` is on the PATH (or, with a `/`, exists beneath the package root; or, as
/// `target:TRIPLE`, the toolchain has that target's standard library).
pub fn have(program: &str) -> bool {
    if let Some(triple) = program.strip_prefix("target:") {
        return have_target(triple);
    }
    if program.contains('/') {
        return std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(program)
            .exists();
    }
    Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {program}"))
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Whether the toolchain that runs the tests can build for `triple`: its `target-libdir` holds
/// the compiled standard library.
fn have_target(triple: &str) -> bool {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let Ok(out) = Command::new(rustc)
        .args(["--print", "target-libdir", "--target", triple])
        .output()
    else {
        return false;
    };
    let dir = String::from_utf8_lossy(&out.stdout).trim().to_string();
    out.status.success()
        && std::fs::read_dir(&dir).is_ok_and(|entries| {
            entries
                .flatten()
                .any(|e| e.file_name().to_string_lossy().starts_with("libstd-"))
        })
}

fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0")
}

/// Runs `cases` as a test binary (`harness = false`), with the standard test flags.
pub fn main(cases: Vec<Case>) -> ExitCode {
    let args = libtest_mimic::Arguments::from_args();
    let ci = in_ci();
    let trials = cases
        .into_iter()
        .map(|case| {
            let missing: Vec<&str> = case.needs.iter().copied().filter(|p| !have(p)).collect();
            let kind = case
                .needs
                .iter()
                .map(|n| n.rsplit('/').next().unwrap_or(n))
                .collect::<Vec<_>>()
                .join(",");
            let run = case.run;
            if missing.is_empty() {
                libtest_mimic::Trial::test(case.name, move || {
                    run();
                    Ok(())
                })
                .with_kind(kind)
            } else if ci {
                let why = format!(
                    "CI=true but {} not installed (.ci/run installs it)",
                    missing.join(", ")
                );
                libtest_mimic::Trial::test(case.name, move || Err(why.into())).with_kind(kind)
            } else {
                let why = format!("{} not installed", missing.join(", "));
                libtest_mimic::Trial::ignorable_test(case.name, move || {
                    Ok(libtest_mimic::Completion::ignored_with(why))
                })
                .with_kind(kind)
            }
        })
        .collect();
    libtest_mimic::run(&args, trials).exit_code()
}
