//! Compaction strategies: each decides what of the ledger is sent, never what is kept.

pub mod sliding;
