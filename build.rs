//! Link choices that shorten the start of every `redline` process on Linux with glibc (README,
//! Performance, "Process start-up"). Each is taken only where the build can tell it is safe;
//! anywhere else the binary links as cargo's defaults link it.
//!
//! - The unwinder is linked in statically (`libgcc_eh.a`, as `-static-libgcc` does for C), so the
//!   loader does not open, map and relocate `libgcc_s.so.1`, whose constructor also runs `cpuid`
//!   a dozen times (slow in a virtual machine). Panics unwind as before (`filter` catches them).
//!   Only when the target is the host, not `crt-static` (which links it so already), and the C
//!   compiler that links knows a `libgcc_eh.a`.
//! - The binary's ~10,000 relative relocations are packed (`-z pack-relative-relocs`: `.relr.dyn`
//!   of ~3 KB instead of `.rela.dyn` of ~240 KB), in a release build of the binary. The loader
//!   must understand them: glibc 2.36 or later, which the linker records as a version the binary
//!   needs (`GLIBC_ABI_DT_RELR`), so an older glibc refuses to start it with a clear message (and
//!   maturin tags such a wheel `manylinux_2_36`). Only when the target is the host and the host's
//!   glibc is 2.36 or later; `REDLINE_PORTABLE_LINK=1` turns it off, for a binary meant to run on
//!   an older glibc than the one it is built on.

use std::env;
use std::process::Command;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=REDLINE_PORTABLE_LINK");
    println!("cargo::rerun-if-env-changed=RUSTC_LINKER");
    let var = |name: &str| env::var(name).unwrap_or_default();
    let linux_gnu = var("CARGO_CFG_TARGET_OS") == "linux" && var("CARGO_CFG_TARGET_ENV") == "gnu";
    // The probes below ask the host's compiler and C library: only meaningful for a native build.
    if !linux_gnu || var("TARGET") != var("HOST") {
        return;
    }
    let crt_static = var("CARGO_CFG_TARGET_FEATURE")
        .split(',')
        .any(|f| f == "crt-static");
    if !crt_static && static_unwinder_available() {
        // `-bundle`: the archive is named on the final link line (before std's `-lgcc_s`, which
        // `--as-needed` then drops), not copied into the library's rlib.
        println!("cargo::rustc-link-lib=static:-bundle=gcc_eh");
    }
    // Release builds only: packing takes a debug binary's ~1.9 MB of `.rela.dyn` out of what
    // `redline --version` maps at rest, from which the bad-input tests derive their memory caps
    // (tests/hostile.rs), and debug builds are not what start-up time is measured on.
    let release = var("PROFILE") == "release";
    if release && var("REDLINE_PORTABLE_LINK") != "1" && !crt_static && glibc_at_least(2, 36) {
        println!("cargo::rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

/// Whether the C compiler that links (cargo's default `cc`, or the configured linker) finds
/// `libgcc_eh.a`: `-print-file-name` prints its full path when it does, the bare name when not.
fn static_unwinder_available() -> bool {
    let linker = env::var("RUSTC_LINKER").unwrap_or_else(|_| "cc".into());
    let Ok(out) = Command::new(&linker)
        .arg("-print-file-name=libgcc_eh.a")
        .output()
    else {
        return false;
    };
    let path = String::from_utf8_lossy(&out.stdout);
    let path = std::path::Path::new(path.trim());
    out.status.success() && path.is_absolute() && path.is_file()
}

/// Whether the host's glibc (`getconf GNU_LIBC_VERSION`: `glibc 2.36`) is at least
/// `major.minor`; false when it cannot tell.
fn glibc_at_least(major: u32, minor: u32) -> bool {
    let Ok(out) = Command::new("getconf").arg("GNU_LIBC_VERSION").output() else {
        return false;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let Some(version) = text.trim().strip_prefix("glibc ") else {
        return false;
    };
    let mut parts = version.split('.').map(|p| p.parse::<u32>().ok());
    match (parts.next().flatten(), parts.next().flatten()) {
        (Some(a), Some(b)) => out.status.success() && (a, b) >= (major, minor),
        _ => false,
    }
}
