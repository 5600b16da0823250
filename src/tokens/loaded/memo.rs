//! A per-thread memo of the counts of recent pieces: prose and code repeat their words, so
//! most pieces are counted once per thread instead of merged again; and of the merge
//! table's recent answers ([`JoinCache`]), which merging asks again and again. The memo
//! belongs to one tokenizer at a time (an id no other tokenizer of the process gets);
//! counting with another one on the same thread starts it afresh.
//!
//! Pieces of [`MIN_PIECE`] to [`INLINE`] bytes (nearly all of them) are kept in a table of
//! [`SHORT_SETS`] sets of two entries, one cache line a set, where a piece's set is a hash of
//! its bytes: an entry holds the piece whole (as [`ShortKey`]'s words) with its count, so a
//! lookup reads one line, which [`Pieces::prefetch`] can start loading before the lookup
//! (see `flight`), and compares four words. A new piece takes the first entry of its set
//! and moves the one there to the second: each set keeps its two most recent pieces.
//! Longer pieces up to [`MAX_PIECE`] bytes are keyed as boxed bytes, at most [`MAX_LONG`]
//! of them and [`MAX_BYTES`] of their bytes (emptied when either is reached). A CJK run
//! without spaces is one piece of often a hundred bytes or more: text seen before is not
//! merged again.
//!
//! Bounded: the short table's 2 MiB (allocated zeroed on first use, its pages resident as
//! they fill), the long pieces' at most 2 MiB of bytes (0.3 MB more of allocation headers)
//! and about 0.8 MB of table, the join cache's 256 KB: at most about 5.5 MB per thread that
//! counts with a loaded tokenizer (7 MB before the short table), freed when the thread exits.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

use rustc_hash::FxHashMap;

use super::super::bpe::prefetch;
use super::merge::JoinCache;

/// Pieces shorter than this are not remembered: counting one (a byte's token, or one merge
/// of two) costs less than looking it up.
const MIN_PIECE: usize = 3;
/// Longest piece kept in the short table.
pub(super) const INLINE: usize = 24;
/// Pieces longer than this are not remembered (they rarely repeat).
const MAX_PIECE: usize = 256;
/// Number of sets of the short table (a power of two; two entries of four words each).
const SHORT_SETS: usize = 1 << 15;
/// Words of a set: two entries of four.
const SET_WORDS: usize = 8;
/// The memo is emptied when it holds this many longer pieces.
const MAX_LONG: usize = 1 << 14;
/// The memo is emptied when its longer pieces hold this many bytes.
const MAX_BYTES: usize = 2 << 20;
/// The generations a short entry's first word can name ([`Pieces::generation`]).
const GENERATIONS: u64 = 1 << 47;

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

/// The counts of one tokenizer's pieces, see the module's documentation.
#[derive(Default)]
pub(super) struct Pieces {
    /// The short table, from word `first_set` on (where sets start on cache lines; the
    /// words before are unused). An entry is four words: the generation, the piece's length
    /// and its count (from bit 16, 8 and 0), then [`ShortKey::words`]. An entry of another
    /// generation than the memo's is empty: a new owner makes every entry empty at once.
    short: Vec<u64>,
    first_set: usize,
    /// The generation of the entries in use, from 1 (all-zero entries are empty).
    generation: u64,
    long: FxHashMap<Box<[u8]>, u32>,
    /// Bytes of the long pieces held.
    bytes: usize,
}

/// A piece of [`MIN_PIECE`] to [`INLINE`] bytes as the short table keys it: its length and
/// three words that, with the length, are exactly its bytes (read as whole words, which
/// overlap when the length is not a multiple of eight), and a hash of them.
#[derive(Clone, Copy, Default)]
pub(super) struct ShortKey {
    len: u64,
    words: [u64; 3],
    hash: u64,
}

impl ShortKey {
    /// The key of `piece`, when its length is in the short table's range.
    #[inline(always)]
    pub(super) fn of(piece: &[u8]) -> Option<ShortKey> {
        let at = |i: usize| u64::from_le_bytes(piece[i..i + 8].try_into().unwrap_or_default());
        let half = |i: usize| u64::from(u32::from_le_bytes(piece[i..i + 4].try_into().unwrap_or_default()));
        let len = piece.len();
        let words = match len {
            3 => [u64::from(piece[0]) | u64::from(piece[1]) << 8 | u64::from(piece[2]) << 16, 0, 0],
            4..=7 => [half(0) | half(len - 4) << 32, 0, 0],
            8..=16 => [at(0), at(len - 8), 0],
            17..=INLINE => [at(0), at(8), at(len - 8)],
            _ => return None,
        };
        let mixed = |h: u64, word: u64| (h ^ word).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let hash = mixed(mixed(mixed(len as u64, words[0]).rotate_left(29), words[1]).rotate_left(29), words[2]);
        Some(ShortKey { len: len as u64, words, hash })
    }

    /// The piece's bytes again (the words are exactly its bytes), written from the start of
    /// `buffer`.
    #[inline]
    pub(super) fn bytes<'b>(&self, buffer: &'b mut [u8; INLINE]) -> &'b [u8] {
        let len = self.len as usize;
        let [first, second, third] = self.words;
        buffer[..8].copy_from_slice(&first.to_le_bytes());
        match len {
            4..=7 => buffer[len - 4..len].copy_from_slice(&((first >> 32) as u32).to_le_bytes()),
            8..=16 => buffer[len - 8..len].copy_from_slice(&second.to_le_bytes()),
            17.. => {
                buffer[8..16].copy_from_slice(&second.to_le_bytes());
                buffer[len - 8..len].copy_from_slice(&third.to_le_bytes());
            }
            _ => {}
        }
        &buffer[..len]
    }

    /// The first word of the set the key maps to.
    #[inline(always)]
    fn set(&self, first_set: usize) -> usize {
        first_set + (self.hash >> 40) as usize % SHORT_SETS * SET_WORDS
    }
}

impl Pieces {
    /// The count of `piece`, remembered or computed by `count`. A short piece's count above
    /// 255 is not kept (none has more tokens than bytes, at most [`INLINE`]).
    #[inline]
    pub(super) fn count(&mut self, piece: &[u8], count: impl FnOnce() -> usize) -> usize {
        if let Some(key) = ShortKey::of(piece) {
            return self.short_count(&key).unwrap_or_else(|| self.remember_short(&key, count()));
        }
        if !(MIN_PIECE..=MAX_PIECE).contains(&piece.len()) {
            return count();
        }
        if let Some(&known) = self.long.get(piece) {
            return known as usize;
        }
        let counted = count();
        if self.long.len() >= MAX_LONG || self.bytes + piece.len() > MAX_BYTES {
            self.long.clear();
            self.bytes = 0;
        }
        self.bytes += piece.len();
        self.long.insert(piece.into(), counted as u32);
        counted
    }

    /// Starts loading the cache line [`Pieces::short_count`] reads for `key`, without
    /// waiting for it.
    #[inline(always)]
    pub(super) fn prefetch(&self, key: &ShortKey) {
        prefetch::prefetch(&self.short, key.set(self.first_set));
    }

    /// The remembered count of the piece of `key`.
    #[inline(always)]
    pub(super) fn short_count(&self, key: &ShortKey) -> Option<usize> {
        let at = key.set(self.first_set);
        let set = self.short.get(at..at + SET_WORDS)?;
        let head = self.generation << 16 | key.len << 8;
        let hit = |entry: &[u64]| entry[0] & !0xFF == head && entry[1..] == key.words;
        set.chunks_exact(4).find(|entry| hit(entry)).map(|entry| (entry[0] & 0xFF) as usize)
    }

    /// Remembers `count` for the piece of `key` and returns it.
    #[inline]
    pub(super) fn remember_short(&mut self, key: &ShortKey, count: usize) -> usize {
        if self.short.is_empty() {
            // One cache line more than the sets, to start them on a line.
            self.short = vec![0; SHORT_SETS * SET_WORDS + SET_WORDS];
            self.first_set = self.short.as_ptr().align_offset(SET_WORDS * 8).min(SET_WORDS);
            self.generation = 1;
        }
        let at = key.set(self.first_set);
        if let (Some(set), Ok(small)) = (self.short.get_mut(at..at + SET_WORDS), u8::try_from(count)) {
            let [first, second, third] = key.words;
            set.copy_within(0..4, 4);
            set[..4].copy_from_slice(&[self.generation << 16 | key.len << 8 | u64::from(small), first, second, third]);
        }
        count
    }

    /// Forgets every piece.
    fn clear(&mut self) {
        self.generation += 1;
        if self.generation == GENERATIONS {
            self.short.fill(0);
            self.generation = 1;
        }
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
            assert_eq!(pieces.bytes, pieces.long.keys().map(|k| k.len()).sum::<usize>());
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

    /// A short key gives its piece's bytes back, for every length the short table keeps
    /// (the pieces in flight are kept as keys alone), whatever bytes were there before.
    #[test]
    fn a_short_key_gives_its_piece_back() {
        let mut rng = crate::test_rng::XorShift(0x5EED_0B7E);
        for len in MIN_PIECE..=INLINE {
            for _ in 0..200 {
                let piece: Vec<u8> = (0..len).map(|_| rng.below(256) as u8).collect();
                let mut buffer = [rng.below(256) as u8; INLINE];
                let key = ShortKey::of(&piece).expect("a short piece");
                assert_eq!(key.bytes(&mut buffer), piece.as_slice(), "{len} bytes");
            }
        }
        assert!(ShortKey::of(&[b'a'; INLINE + 1]).is_none());
    }

    /// Short pieces (keyed inline) and long ones are told apart exactly: pieces that differ
    /// only by trailing zero bytes or by one byte anywhere, either side of the inline limit,
    /// each get their own count, until the memo is cleared; pieces under MIN_PIECE bytes
    /// are always computed.
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
        // Counts the short table keeps (below 256), distinct between nearby pieces.
        let count_of = |i: usize| i % 250;
        for (i, piece) in all.iter().enumerate() {
            assert_eq!(pieces.count(piece, || count_of(i)), count_of(i));
        }
        for (i, piece) in all.iter().enumerate() {
            assert_eq!(pieces.count(piece, || unreachable!("{piece:?} was counted")), count_of(i), "{piece:?}");
        }
        // A count the short table cannot keep is answered, and computed again next time.
        let short = b"not kept".as_slice();
        assert_eq!(pieces.count(short, || 300), 300);
        assert_eq!(pieces.count(short, || 301), 301);
        // A new owner: nothing remembered is answered any more, short or long.
        pieces.clear();
        for piece in &all {
            assert_eq!(pieces.count(piece, || 7), 7, "{piece:?}");
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
