//! A per-thread memo of the counts of recent pieces: prose and code repeat their words, so
//! most pieces are counted once per thread instead of merged again; and of the merge
//! table's recent answers ([`JoinCache`]), which merging asks again and again. The memo
//! belongs to one tokenizer at a time (an id no other tokenizer of the process gets);
//! counting with another one on the same thread starts it afresh.
//!
//! Bounded: at most [`MAX_ENTRIES`] pieces of at most [`INLINE`] bytes, keyed inline (28
//! bytes an entry: a table of at most 3.8 MB), [`MAX_LONG`] longer ones of at most
//! [`MAX_PIECE`] bytes (0.8 MB of table) and [`MAX_BYTES`] of their bytes (emptied when
//! any is reached), plus the join cache's 256 KB: at most about 7 MB per thread that counts
//! with a loaded tokenizer, freed when the thread exits. A CJK run without spaces is one piece of often a hundred bytes or more, so
//! pieces up to [`MAX_PIECE`] are kept: text seen before is not merged again.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

use rustc_hash::FxHashMap;

use super::merge::JoinCache;

/// Pieces shorter than this are not remembered: counting one (a byte's token, or one merge
/// of two) costs less than looking it up.
const MIN_PIECE: usize = 3;
/// Pieces longer than this are not remembered (they rarely repeat).
const MAX_PIECE: usize = 256;
/// The memo is emptied when it holds this many pieces of at most [`INLINE`] bytes.
const MAX_ENTRIES: usize = 1 << 16;
/// The memo is emptied when it holds this many longer pieces.
const MAX_LONG: usize = 1 << 14;
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

/// The counts of one tokenizer's pieces: those of at most [`INLINE`] bytes (nearly all of
/// them) keyed inline, with no allocation and a compare of three words, the longer ones as
/// boxed bytes.
#[derive(Default)]
pub(super) struct Pieces {
    short: FxHashMap<ShortKey, u32>,
    long: FxHashMap<Box<[u8]>, u32>,
    /// Bytes of the pieces held.
    bytes: usize,
}

/// Longest piece keyed inline.
const INLINE: usize = 23;

/// A piece of at most [`INLINE`] bytes: its length, then its bytes, zero-padded (the length
/// tells a piece ending in zero bytes from a shorter one).
type ShortKey = [u8; INLINE + 1];

impl Pieces {
    /// The count of `piece`, remembered or computed by `count`.
    #[inline]
    pub(super) fn count(&mut self, piece: &[u8], count: impl FnOnce() -> usize) -> usize {
        if !(MIN_PIECE..=MAX_PIECE).contains(&piece.len()) {
            return count();
        }
        let short = (piece.len() <= INLINE).then(|| {
            let mut key = [0u8; INLINE + 1];
            key[0] = piece.len() as u8;
            key[1..=piece.len()].copy_from_slice(piece);
            key
        });
        let known = match &short {
            Some(key) => self.short.get(key),
            None => self.long.get(piece),
        };
        if let Some(&known) = known {
            return known as usize;
        }
        let counted = count();
        if self.short.len() >= MAX_ENTRIES || self.long.len() >= MAX_LONG || self.bytes + piece.len() > MAX_BYTES {
            self.clear();
        }
        self.bytes += piece.len();
        match short {
            Some(key) => self.short.insert(key, counted as u32),
            None => self.long.insert(piece.into(), counted as u32),
        };
        counted
    }

    fn clear(&mut self) {
        self.short.clear();
        self.long.clear();
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
            let short: usize = pieces.short.keys().map(|k| usize::from(k[0])).sum();
            assert_eq!(pieces.bytes, short + pieces.long.keys().map(|k| k.len()).sum::<usize>());
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

    /// Short pieces (keyed inline) and long ones are told apart exactly: pieces that differ
    /// only by trailing zero bytes or by one byte anywhere, either side of the inline limit,
    /// each get their own count; pieces under MIN_PIECE bytes are always computed.
    #[test]
    fn tells_apart_pieces_that_differ_by_one_byte_or_trailing_zeros() {
        let mut pieces = Pieces::default();
        let mut all: Vec<Vec<u8>> = Vec::new();
        for len in MIN_PIECE..=INLINE + 3 {
            all.push(vec![0; len]);
            all.push(vec![b'a'; len]);
            for at in 0..len {
                let mut piece = vec![b'a'; len];
                piece[at] = 0;
                all.push(piece);
            }
        }
        for (i, piece) in all.iter().enumerate() {
            assert_eq!(pieces.count(piece, || i), i);
        }
        for (i, piece) in all.iter().enumerate() {
            assert_eq!(pieces.count(piece, || unreachable!("{piece:?} was counted")), i, "{piece:?}");
        }
        for len in 0..MIN_PIECE {
            let mut computed = 0;
            for _ in 0..2 {
                pieces.count(&vec![b'a'; len], || {
                    computed += 1;
                    1
                });
            }
            assert_eq!(computed, 2, "a piece of {len} bytes");
        }
    }
}
