//! A per-thread memo of the counts of recent pieces: prose and code repeat their words, so
//! most pieces are counted once per thread instead of merged again. The memo belongs to one
//! tokenizer at a time (an id no other tokenizer of the process gets); counting with another
//! one on the same thread starts it afresh.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

use rustc_hash::FxHashMap;

/// Pieces longer than this are not remembered (they rarely repeat).
const MAX_PIECE: usize = 48;
/// The memo is emptied when it holds this many pieces.
const MAX_ENTRIES: usize = 1 << 16;

/// A new tokenizer id.
pub(super) fn new_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// The counts of one tokenizer's pieces.
#[derive(Default)]
pub(super) struct Memo {
    owner: u64,
    counts: FxHashMap<Box<[u8]>, u32>,
}

impl Memo {
    /// The count of `piece`, remembered or computed by `count`.
    #[inline]
    pub(super) fn count(&mut self, piece: &[u8], count: impl FnOnce() -> usize) -> usize {
        if piece.len() > MAX_PIECE {
            return count();
        }
        if let Some(&known) = self.counts.get(piece) {
            return known as usize;
        }
        let counted = count();
        if self.counts.len() >= MAX_ENTRIES {
            self.counts.clear();
        }
        self.counts.insert(piece.into(), counted as u32);
        counted
    }
}

thread_local! {
    static MEMO: RefCell<Memo> = RefCell::new(Memo::default());
}

/// Runs `f` with this thread's memo for tokenizer `owner` (a fresh one if the thread's is
/// in use further up the stack).
pub(super) fn with_memo<R>(owner: u64, f: impl FnOnce(&mut Memo) -> R) -> R {
    MEMO.with(|memo| match memo.try_borrow_mut() {
        Ok(mut memo) => {
            if memo.owner != owner {
                memo.owner = owner;
                memo.counts.clear();
            }
            f(&mut memo)
        }
        Err(_) => f(&mut Memo::default()),
    })
}
