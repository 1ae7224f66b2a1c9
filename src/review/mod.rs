//! The terminal reviewer (`redline review`, SPEC §8): the human's last word on a batch.
//!
//! The Elm Architecture: [`model`] is plain data, [`update`] the one pure transition, [`keys`] the
//! table that drives dispatch, footer and help, [`view`] reads the model and draws only what is
//! visible. Decisions are per edit ([`model::Unit`]); only accepted edits are ever written, by
//! the one writing module, after the apply summary.
pub mod keys;
pub mod model;
pub mod rows;
pub mod update;
pub mod view;

pub use keys::Action;
pub use model::{Decision, Model, Options, State};
pub use update::{Effect, update};

#[cfg(test)]
mod tests;
