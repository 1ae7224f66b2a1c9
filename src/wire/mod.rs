//! Wire types: the JSON shapes of requests and responses, apart from the engine's types.
pub mod response;
