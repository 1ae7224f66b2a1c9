//! The `redline` binary: a thin shim over the library.

fn main() {
    let status = redline::cli::main();
    std::process::exit(status.code());
}
