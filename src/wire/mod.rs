//! Wire types: the JSON shapes of requests and responses, apart from the engine's types.
pub mod request;
pub mod response;
