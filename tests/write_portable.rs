//! The writer suites again with the portable path forced (`REDLINE_PORTABLE_WRITER=1`): the
//! per-component `O_NOFOLLOW` walk instead of `openat2`, `O_EXCL` temps instead of `O_TMPFILE`,
//! a hard link plus a rename instead of `RENAME_EXCHANGE`. The path that macOS and the BSDs take
//! is thereby tested on Linux. The variable is set before `main` (so before any test thread
//! reads the environment), and the `redline` processes the suites spawn inherit it.

// The suites are included whole, and two of them load the shared helpers (`tests/common`) each.
#![allow(clippy::duplicate_mod)]

#[path = "write_basic.rs"]
mod basic;
#[path = "write_e2e.rs"]
mod e2e;
#[path = "write_fault.rs"]
mod fault;
#[path = "write_paths.rs"]
mod paths;

/// Runs before `main`, while the process has one thread: setting the environment is sound.
extern "C" fn force_portable() {
    // SAFETY: no other thread exists yet (this runs from `.init_array`, before `main`).
    unsafe { std::env::set_var(redline::write::PORTABLE_ENV, "1") }
}

#[used]
#[cfg_attr(
    target_vendor = "apple",
    unsafe(link_section = "__DATA,__mod_init_func")
)]
#[cfg_attr(not(target_vendor = "apple"), unsafe(link_section = ".init_array"))]
static FORCE_PORTABLE: extern "C" fn() = force_portable;

#[test]
fn the_portable_path_is_in_force() {
    let dir = tempfile::tempdir().unwrap();
    let root = redline::write::Root::open(dir.path(), redline::write::Limits::default()).unwrap();
    assert!(
        root.portable_forced(),
        "REDLINE_PORTABLE_WRITER=1 did not reach the root: these suites would test the Linux path"
    );
}
