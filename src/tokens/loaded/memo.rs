//! A per-thread memo of the counts of recent pieces: prose and code repeat their words, so
//! most pieces are counted once per thread instead of merged again; and of the merge
//! table's recent answers ([`JoinCache`]), which merging asks again and again. The memo
//! belongs to one tokenizer at a time (an id no other tokenizer of the process gets);
//! counting with another one on the same thread starts it afresh.
//!
//! Bounded: at most [`MAX_ENTRIES`] pieces of at most [`MAX_PIECE`] bytes, and
//! [`MAX_BYTES`] of piece bytes (emptied when either is reached), plus the join cache's
//! 256 KB: about 5 MB per thread that counts with a loaded tokenizer, freed when the thread
//! exits. A CJK run without spaces is one piece of often a hundred bytes or more, so
//! pieces up to [`MAX_PIECE`] are kept: text seen before is not merged again.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

use rustc_hash::FxHashMap;

use super::merge::JoinCache;

/// Pieces longer than this are not remembered (they rarely repeat).
const MAX_PIECE: usize = 256;
/// The memo is emptied when it holds this many pieces.
const MAX_ENTRIES: usize = 1 << 16;
/// The memo is emptied when its pieces hold this many bytes.
const MAX_BYTES: usize = 2 << 20;

/// A new tokenizer id.
pub(super) fn new_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// The memo of one thread, for one tokenizer.
pub(super) struct Memo {
    owner: u64,
    /// The counts of recent pieces.
    pub(super) pieces: Pieces,
    /// The merge table's recent answers.
    pub(super) joins: JoinCache,
}

/// The counts of one tokenizer's pieces.
#[derive(Default)]
pub(super) struct Pieces {
    counts: FxHashMap<Box<[u8]>, u32>,
    /// Bytes of the pieces in `counts`.
    bytes: usize,
}

impl Pieces {
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
        if self.counts.len() >= MAX_ENTRIES || self.bytes + piece.len() > MAX_BYTES {
            self.clear();
        }
        self.bytes += piece.len();
        self.counts.insert(piece.into(), counted as u32);
        counted
    }

    fn clear(&mut self) {
        self.counts.clear();
        self.bytes = 0;
    }
}

impl Memo {
    fn new() -> Memo {
        Memo { owner: 0, pieces: Pieces::default(), joins: JoinCache::new() }
    }
}

thread_local! {
    static MEMO: RefCell<Memo> = RefCell::new(Memo::new());
}

/// Runs `f` with this thread's memo for tokenizer `owner` (a fresh one if the thread's is
/// in use further up the stack).
pub(super) fn with_memo<R>(owner: u64, f: impl FnOnce(&mut Memo) -> R) -> R {
    MEMO.with(|memo| match memo.try_borrow_mut() {
        Ok(mut memo) => {
            if memo.owner != owner {
                memo.owner = owner;
                memo.pieces.clear();
                memo.joins.clear();
            }
            f(&mut memo)
        }
        Err(_) => f(&mut Memo::new()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Remembered counts are the counts computed for exactly that piece; a piece above
    /// MAX_PIECE is always computed; the memo empties itself before holding more than
    /// MAX_BYTES of pieces.
    #[test]
    fn remembers_exactly_and_stays_bounded() {
        let mut pieces = Pieces::default();
        let piece = |i: usize, len: usize| format!("{i:0len$}").into_bytes();
        for i in 0..50_000 {
            let len = 100 + i % 150;
            assert_eq!(pieces.count(&piece(i, len), || i), i);
            assert!(pieces.bytes <= MAX_BYTES);
            assert_eq!(pieces.bytes, pieces.counts.keys().map(|k| k.len()).sum::<usize>());
        }
        assert!(pieces.count(&piece(49_999, 100 + 49_999 % 150), || unreachable!()) == 49_999);
        let mut computed = 0;
        pieces.count(&piece(1, MAX_PIECE + 1), || {
            computed += 1;
            1
        });
        pieces.count(&piece(1, MAX_PIECE + 1), || {
            computed += 1;
            1
        });
        assert_eq!(computed, 2);
    }
}
