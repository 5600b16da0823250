//! A per-thread memo of the counts of recent pieces: prose and code repeat their words, so
//! most pieces are counted once per thread instead of merged again; and of the merge
//! table's recent answers ([`JoinCache`]), which merging asks again and again. The memo
//! belongs to one tokenizer at a time (an id no other tokenizer of the process gets);
//! counting with another one on the same thread starts it afresh.
//!
//! Pieces of one or two bytes (with o200k's split, two in five of code's pieces: `()`,
//! `  `, `.x`; more than a quarter of English's) are kept in a table indexed by their bytes
//! ([`TINY_ENTRIES`] bytes): counting one is a call into merging (the pair's symbols, a
//! probe of the join cache), which costs several times the table's read.
//! Pieces of [`MIN_PIECE`] to [`INLINE`] bytes (nearly all of the others) are kept in a table of
//! [`SHORT_SETS`] sets of [`WAYS`] entries, two cache lines a set, where a piece's set is a
//! hash of its bytes: an entry holds the piece whole (as [`ShortKey`]'s words) with its
//! count. A lookup reads the set's two lines, which [`Pieces::prefetch`] starts loading
//! before the lookup (see `flight`): it picks the most recent entry whose first word (the
//! generation, the piece's length and 24 bits of its hash) is the piece's, then compares
//! that entry's words alone (`memo_sets`). A new piece takes the first entry of its set and
//! moves the others one on: each set keeps its [`WAYS`] most recent pieces. (The built-in
//! engine's one-line sets for pieces of up to eight bytes measured no faster here, where the
//! lookups are prefetched: 0.998 to 1.021 the time; docs/speed.md.)
//! Longer pieces up to [`MAX_PIECE`] bytes are keyed as boxed bytes, at most [`MAX_LONG`]
//! of them and [`MAX_BYTES`] of their bytes (emptied when either is reached). A CJK run
//! without spaces is one piece of often a hundred bytes or more: text seen before is not
//! merged again.
//!
//! Bounded: the short table's 2 MiB (allocated zeroed on first use, its pages resident as
//! they fill), the long pieces' at most 2 MiB of bytes (0.3 MB more of allocation headers)
//! and about 0.8 MB of table, the join cache's 256 KB, the tiny pieces' 64 KB: at most about
//! 5.6 MB per thread that counts with a loaded tokenizer (7 MB before the short table), freed
//! when the thread exits or calls `release_thread_memory` (`tokens/thread_memory.rs`). A
//! known split's text goes through the memo of lines first (`tokens/lines.rs`, at most 4 MiB
//! per thread, shared with the built-in encodings).

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

use rustc_hash::FxHashMap;

use super::super::memo_sets::{WAYS, count_in, remember_in};
use super::super::prefetch;
use super::merge::JoinCache;

/// Pieces shorter than this are kept in the table of tiny pieces, by their bytes.
const MIN_PIECE: usize = 3;
/// Entries of the table of tiny pieces: one per piece of one byte, then one per piece of two.
const TINY_ENTRIES: usize = 256 + (1 << 16);
/// Longest piece kept in the short table.
pub(super) const INLINE: usize = 24;
/// Pieces longer than this are not remembered (they rarely repeat).
const MAX_PIECE: usize = 256;
/// Number of sets of the short table (a power of two).
const SHORT_SETS: usize = 1 << 14;
/// Words of an entry.
const ENTRY_WORDS: usize = 4;
/// Words of a set: two cache lines.
const SET_WORDS: usize = WAYS * ENTRY_WORDS;
/// Words of a cache line.
const LINE_WORDS: usize = 8;
/// Where a short entry's first word keeps 24 bits of the piece's hash (those below the
/// bits that choose its set, [`TAG_SHIFT`] bits further up in the hash).
const TAG_BITS: u64 = 0xFF_FFFF_0000;
/// How far down a piece's hash is moved to put its tag at [`TAG_BITS`].
const TAG_SHIFT: u32 = 64 - SHORT_SETS.trailing_zeros() - 40;
/// Where a short entry's first word keeps the generation.
const GENERATION_AT: u32 = 40;
/// The memo is emptied when it holds this many longer pieces.
const MAX_LONG: usize = 1 << 14;
/// The memo is emptied when its longer pieces hold this many bytes.
const MAX_BYTES: usize = 2 << 20;
/// The generations a short entry's first word can name ([`Pieces::generation`]).
const GENERATIONS: u64 = 1 << (64 - GENERATION_AT);

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
    /// words before are unused). An entry is four words: the generation, [`TAG_BITS`] of the
    /// piece's hash, its length and its count (from bit 40, 16, 8 and 0), then
    /// [`ShortKey::words`]. An entry of another
    /// generation than the memo's is empty: a new owner makes every entry empty at once.
    short: Vec<u64>,
    first_set: usize,
    /// The generation of the entries in use, from 1 (all-zero entries are empty).
    generation: u64,
    /// The counts of the pieces of one and two bytes plus one (0: not counted yet), at the
    /// piece's bytes ([`tiny_index`]); empty until first used.
    tiny: Vec<u8>,
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

    /// The first word of the set the key maps to, chosen by the top bits of the hash: those
    /// depend on every byte of the piece (a difference in a word's top byte reaches no lower
    /// bit of the hash, and pieces of one length that differ in their last byte are common).
    #[inline(always)]
    fn set(&self, first_set: usize) -> usize {
        first_set + (self.hash >> (64 - SHORT_SETS.trailing_zeros())) as usize * SET_WORDS
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
        if let Some(at) = tiny_index(piece) {
            return self.tiny_count(at, count);
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

    /// The count of the tiny piece at `at` of the table, remembered or computed by `count`
    /// (a count above 254 is not kept: none has more tokens than bytes).
    #[inline(always)]
    fn tiny_count(&mut self, at: usize, count: impl FnOnce() -> usize) -> usize {
        if let Some(&known @ 1..) = self.tiny.get(at) {
            return usize::from(known - 1);
        }
        if self.tiny.is_empty() {
            self.tiny = vec![0; TINY_ENTRIES];
        }
        let counted = count();
        if let (Some(entry), Ok(kept @ ..=254)) = (self.tiny.get_mut(at), u8::try_from(counted)) {
            *entry = kept + 1;
        }
        counted
    }

    /// Starts loading the cache lines [`Pieces::short_count`] reads for `key`, without
    /// waiting for them.
    #[inline(always)]
    pub(super) fn prefetch(&self, key: &ShortKey) {
        let at = key.set(self.first_set);
        for line in 0..SET_WORDS / LINE_WORDS {
            prefetch::prefetch(&self.short, at + line * LINE_WORDS);
        }
    }

    /// The remembered count of the piece of `key`.
    #[inline(always)]
    pub(super) fn short_count(&self, key: &ShortKey) -> Option<usize> {
        let set: &[u64; SET_WORDS] = self.short.get(key.set(self.first_set)..)?.first_chunk()?;
        let [first, second, third] = key.words;
        count_in::<ENTRY_WORDS, SET_WORDS>(set, [self.head(key), first, second, third])
    }

    /// The first word of the short entry of `key`, but for the count.
    #[inline(always)]
    fn head(&self, key: &ShortKey) -> u64 {
        self.generation << GENERATION_AT | key.hash >> TAG_SHIFT & TAG_BITS | key.len << 8
    }

    /// Remembers `count` for the piece of `key` and returns it.
    #[inline]
    pub(super) fn remember_short(&mut self, key: &ShortKey, count: usize) -> usize {
        if self.short.is_empty() {
            // One set more than the sets, to start them on a set's worth of bytes.
            self.short = vec![0; SHORT_SETS * SET_WORDS + SET_WORDS];
            self.first_set = self.short.as_ptr().align_offset(SET_WORDS * 8).min(SET_WORDS);
            self.generation = 1;
        }
        let (at, head) = (key.set(self.first_set), self.head(key));
        if let (Some(set), Ok(small)) = (self.short.get_mut(at..at + SET_WORDS), u8::try_from(count)) {
            let [first, second, third] = key.words;
            remember_in(set, [head | u64::from(small), first, second, third]);
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
        self.tiny.fill(0);
        self.long.clear();
        self.bytes = 0;
    }
}

/// Where the table of tiny pieces keeps `piece`, if it is one or two bytes long.
#[inline(always)]
fn tiny_index(piece: &[u8]) -> Option<usize> {
    match *piece {
        [only] => Some(usize::from(only)),
        [first, second] => Some(256 + (usize::from(first) << 8 | usize::from(second))),
        _ => None,
    }
}

impl Memo {
    fn new() -> Memo {
        Memo { owner: 0, pieces: Pieces::default(), joins: JoinCache::new() }
    }

    /// About the bytes of the tables on the heap (the map of long pieces counted by the entries it has room for).
    fn table_bytes(&self) -> usize {
        let pieces = &self.pieces;
        let long_entries = pieces.long.capacity() * (std::mem::size_of::<(Box<[u8]>, u32)>() + 1);
        pieces.short.capacity() * 8 + pieces.tiny.capacity() + long_entries + pieces.bytes + self.joins.table_bytes()
    }
}

thread_local! {
    /// The thread's memo, from its first count with a loaded tokenizer until [`release`].
    static MEMO: RefCell<Option<Memo>> = const { RefCell::new(None) };
}

/// Frees this thread's memo and returns the bytes its tables held; 0 when it has none, or
/// it is in use.
pub(crate) fn release() -> usize {
    MEMO.try_with(|memo| memo.try_borrow_mut().ok().and_then(|mut memo| memo.take()).map_or(0, |memo| memo.table_bytes()))
        .unwrap_or(0)
}

/// Runs `f` with this thread's memo for tokenizer `owner` (a fresh one if the thread's is
/// in use further up the stack, or gone: a count from a thread-exit destructor that runs
/// after it).
pub(super) fn with_memo<R>(owner: u64, mut f: impl FnMut(&mut Memo) -> R) -> R {
    let done = MEMO.try_with(|memo| {
        let mut memo = memo.try_borrow_mut().ok()?;
        let memo = memo.get_or_insert_with(Memo::new);
        if memo.owner != owner {
            memo.pieces.clear();
            memo.joins.clear();
            memo.owner = owner;
        }
        Some(f(memo))
    });
    match done {
        Ok(Some(result)) => result,
        _ => f(&mut Memo::new()),
    }
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

    /// The [`WAYS`] most recent pieces of one set are all answered, each with its own count
    /// from whichever entry it has moved to, and one more forgets the oldest only; pieces of
    /// one length given the same hash (as if theirs collided) are never answered with the
    /// other's count, the more recent one found.
    #[test]
    fn a_set_keeps_its_most_recent_pieces() {
        let mut pieces = Pieces::default();
        let key = |piece: &[u8]| ShortKey::of(piece).expect("a short piece");
        let same_set: Vec<Vec<u8>> =
            (0u32..).map(|i| format!("word{i}").into_bytes()).filter(|p| key(p).set(0) == 0).take(WAYS + 1).collect();
        for (k, piece) in same_set.iter().enumerate() {
            pieces.remember_short(&key(piece), k + 3);
            for (earlier, kept) in same_set[..=k].iter().enumerate().rev().take(WAYS) {
                assert_eq!(pieces.short_count(&key(kept)), Some(earlier + 3), "{k} {earlier}");
            }
        }
        assert_eq!(pieces.short_count(&key(&same_set[0])), None);
        let older = key(b"collide_a");
        let newer = ShortKey { hash: older.hash, ..key(b"collide_b") };
        pieces.remember_short(&older, 5);
        assert_eq!(pieces.short_count(&newer), None);
        pieces.remember_short(&newer, 6);
        assert_eq!(pieces.short_count(&newer), Some(6));
        assert!(pieces.short_count(&older).is_none_or(|count| count == 5));
        // A new owner: none of them is answered any more.
        pieces.clear();
        assert!(same_set.iter().all(|piece| pieces.short_count(&key(piece)).is_none()));
        assert_eq!(pieces.short_count(&newer), None);
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

    /// Tiny pieces (kept by their bytes), short ones (keyed inline) and long ones are told
    /// apart exactly: pieces that differ only by trailing zero bytes or by one byte
    /// anywhere, every piece of one byte, either side of the tiny and inline limits, each
    /// get their own count, until the memo is cleared; the empty piece is always computed.
    #[test]
    fn tells_apart_pieces_that_differ_by_one_byte_or_trailing_zeros() {
        let mut pieces = Pieces::default();
        let mut all: Vec<Vec<u8>> = (0..=255u8).flat_map(|b| [vec![b], vec![b, 0], vec![0, b], vec![b'a', b]]).collect();
        for len in 1..=INLINE + 3 {
            all.push(vec![0; len]);
            all.push(vec![b'a'; len]);
            for at in 0..len {
                let mut piece = vec![b'a'; len];
                piece[at] = 0;
                all.push(piece);
            }
        }
        all.sort();
        all.dedup();
        // Counts the tiny and short tables keep (below 255), distinct between nearby pieces.
        let count_of = |i: usize| i % 250;
        for (i, piece) in all.iter().enumerate() {
            assert_eq!(pieces.count(piece, || count_of(i)), count_of(i));
        }
        for (i, piece) in all.iter().enumerate() {
            assert_eq!(pieces.count(piece, || unreachable!("{piece:?} was counted")), count_of(i), "{piece:?}");
        }
        // A count the tables cannot keep is answered, and computed again next time.
        for piece in [b"not kept".as_slice(), b"nk"] {
            assert_eq!(pieces.count(piece, || 300), 300);
            assert_eq!(pieces.count(piece, || 301), 301);
        }
        // A new owner: nothing remembered is answered any more, tiny, short or long.
        pieces.clear();
        for piece in &all {
            assert_eq!(pieces.count(piece, || 7), 7, "{piece:?}");
        }
        let mut computed = 0;
        for _ in 0..2 {
            pieces.count(b"", || {
                computed += 1;
                0
            });
        }
        assert_eq!(computed, 2, "the empty piece");
    }
}
