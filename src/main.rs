//! The `redline` binary: a thin shim over the library.
mod cli;

fn main() {
    let status = cli::main();
    std::process::exit(status.code());
}
