//! The C ABI: thin `extern "C"` shims over the safe Rust API.
//!
//! Conventions (repeated in the header): functions return a `ctxwin_status` (0 = OK);
//! handles are opaque and created/freed in pairs; strings in are `(ptr, len)` UTF-8, strings
//! out go to caller buffers; every body catches panics, which poison the handle.

#![allow(non_camel_case_types)]
#![deny(unsafe_op_in_unsafe_fn, clippy::undocumented_unsafe_blocks, missing_docs)]

pub mod boundary;
pub mod buffer;
pub mod cache;
pub mod classify;
pub mod compaction;
pub mod count;
pub mod error;
pub mod handle;
pub mod host;
pub mod persist;
pub mod settings;
pub mod summary;
pub mod thread_memory;
pub mod tokenizer;
pub mod json;
pub mod last_error;
pub mod message;
pub mod version;
pub mod view;
pub mod window;

#[cfg(test)]
mod poison_tests;

pub use cache::{ctxwin_cache_stats, ctxwin_request_info};
pub use classify::ctxwin_error_info;
pub use count::ctxwin_count;
pub use error::ctxwin_status;
pub use handle::{ctxwin_tokenizer, ctxwin_window};
pub use host::ctxwin_part;
pub use message::ctxwin_message;
pub use view::ctxwin_item;
pub use window::ctxwin_turn_info;
