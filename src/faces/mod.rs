//! The faces: everything a person or a program talks to. Each turns its input into a request,
//! calls [`crate::service`] and renders the result its own way.
pub mod cli;
pub mod demo;
pub mod filter;
pub mod hook;
pub mod lines;
pub mod lsp;
pub mod mcp;
pub mod read;
pub mod review;
pub mod schema;
pub mod serve;
pub mod setup;
pub mod watch;
