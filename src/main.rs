//! The `redline` binary: a thin shim over the library.

fn main() {
    let status = redline::faces::cli::main();
    std::process::exit(status.code());
}
