//! Compaction strategies: each decides what of the ledger is sent, never what is kept.

pub mod band;
pub mod clearing;
pub mod drop_oldest;
pub mod monologue;
pub mod plan;
pub mod replay;
pub mod running_turn;
pub mod sliding;
pub mod tiered;
