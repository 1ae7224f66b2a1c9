//! The library and the binary build, without a warning, for macOS (Intel and Apple silicon) and
//! FreeBSD: `cargo check --lib --bins` for those targets, in a target directory of its own. It
//! compiles the OS-specific code paths (the writer's `renameatx_np` and portable paths, `F_GETPATH`,
//! xattrs or none), so a Linux-only call fails here, on Linux. Compiling is not running: the
//! README says which guarantees are tested where. The test suite itself is not checked for these
//! targets here: a dev-dependency (criterion's `alloca`) needs a C compiler for the target.
//!
//! (`harness = false`: a target whose standard library is missing is reported as ignored, and
//! fails under `CI=true`, where `.ci/run` runs `rustup target add` for each.)

#[path = "support/clients.rs"]
mod clients;

use std::path::Path;
use std::process::Command;

/// The targets checked, besides the host.
const TARGETS: [&str; 3] = [
    "x86_64-apple-darwin",
    "aarch64-apple-darwin",
    "x86_64-unknown-freebsd",
];

/// One `cargo check` for all the targets (host build scripts and proc macros are built once, and
/// the targets share the cores), with warnings denied.
fn lib_and_bin_check_for_macos_and_freebsd() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let target_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("portable-check");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args([
        "check",
        "--locked",
        "--lib",
        "--bins",
        "--message-format",
        "short",
    ])
    .arg("--manifest-path")
    .arg(&manifest)
    .arg("--target-dir")
    .arg(&target_dir)
    .env_remove("CARGO_ENCODED_RUSTFLAGS")
    .env("RUSTFLAGS", "-D warnings");
    for t in TARGETS {
        cmd.args(["--target", t]);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn main() -> std::process::ExitCode {
    clients::main(vec![clients::Case {
        name: "lib_and_bin_check_for_macos_and_freebsd",
        needs: &[
            "target:x86_64-apple-darwin",
            "target:aarch64-apple-darwin",
            "target:x86_64-unknown-freebsd",
        ],
        run: lib_and_bin_check_for_macos_and_freebsd,
    }])
}
