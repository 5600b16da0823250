//! ctxwin keeps a native LLM agent's conversation inside the model's context window.
//!
//! It counts tokens (exact for OpenAI's public encodings, flagged estimates otherwise),
//! groups messages into turns, tracks tokens per turn, and advances a window boundary,
//! `context_window_start`, under a token budget, so the agent's request builder iterates
//! from the boundary instead of from 0. The agent's own history is never modified.
//!
//! The safe Rust API lives in the modules below; [`ffi`] is the C ABI, thin shims over it.

#![deny(missing_docs)]

pub mod cache;
pub mod classify;
pub mod config;
pub mod error;
pub mod fields;
pub mod ffi;
pub mod json;
pub mod ledger;
pub mod limits;
pub mod message;
pub mod pairing;
pub mod persist;
pub mod report;
pub mod strategy;
pub mod strict_json;
pub mod summary;
pub mod tally;
#[cfg(test)]
mod test_rng;
pub mod tokens;
pub mod view;
pub mod window;
pub mod wire;

pub use error::{Error, ErrorKind, Result};
pub use message::Kind;
pub use tokens::{Count, Model};
pub use window::Window;
