//! A per-thread memo of the token counts of pieces: what makes counting text
//! seen before (a file read twice, a restored session, a request rebuilt) about
//! twice as fast as the first time.
//!
//! Text repeats its words, identifiers and indentation runs. The memo is
//! bounded and exact: an entry is used only when the whole piece matches.
//! - Pieces of at most [`WORD_LEN`] bytes (nine in ten) are kept inline in
//!   16-byte entries, [`WORD_ENTRIES`] of them (1 MiB), in sets of
//!   [`WAYS`] (one cache line, see `memo_sets`) that keep the most recent
//!   pieces mapped to them: a hit is one cache line, instead of the
//!   vocabulary's large tables and a merge.
//! - Pieces of up to [`INLINE_LEN`] bytes likewise, in 32-byte entries,
//!   [`SHORT_ENTRIES`] of them (1 MiB; a set is two cache lines). One table
//!   of 32-byte entries for both made the first pass over new text 3% to 6%
//!   slower (docs/speed.md): its sets read two lines for every piece.
//!
//!   Both tables are allocated zeroed, so only the pages a thread's pieces
//!   land on become resident, and their sets start on cache lines.
//! - Longer pieces, up to [`MAX_PIECE_LEN`] bytes, in [`LONG_ENTRIES`] entries
//!   (at most about 300 KB).
//! - The merge table's answers, see [`JoinCache`] (512 KB).
//!
//! So at most about 2.9 MB per thread that counts, freed when the thread exits or
//! calls `release_thread_memory` (`tokens/thread_memory.rs`).
//!
//! Where it lives: in the thread. Counting functions are thread-safe and called
//! from any thread, and a window is used by one thread at a time; a memo per
//! thread needs no lock and no atomic on the hot path, is bounded per thread,
//! and serves every window and every call on that thread (the same text counted
//! through two windows, or a window freed and rebuilt, is still remembered). A
//! memo per window would cost its memory once per agent and start cold for each
//! new window; one shared per encoding would need a lock or atomics on every
//! piece, from every thread. Its contents never change any result.

use std::cell::RefCell;

use super::super::memo_sets::{WAYS, count_in, remember_in};
use super::vocab::Vocab;

/// Longest piece whose count is remembered.
const MAX_PIECE_LEN: usize = 256;
/// Longest piece stored in a word entry (two words).
const WORD_LEN: usize = 8;
/// Number of word entries (a power of two).
const WORD_ENTRIES: usize = 1 << 16;
/// Longest piece stored inline in a short entry (four words).
const INLINE_LEN: usize = 24;
/// Number of short entries (a power of two).
const SHORT_ENTRIES: usize = 1 << 15;
/// Number of remembered long pieces (a power of two).
const LONG_ENTRIES: usize = 1024;
/// Number of remembered joins of two tokens (a power of two; 8 bytes each).
const JOIN_ENTRIES: usize = 1 << 16;

/// A remembered count of a longer piece.
struct LongEntry {
    hash: u64,
    vocab: u8,
    count: usize,
    piece: Vec<u8>,
}

/// The memo of one thread. Its tables are empty until first used, and stay
/// empty (remembering nothing) in the fallback used during thread teardown.
pub(super) struct Memo {
    /// Pieces of at most [`WORD_LEN`] bytes.
    word: Sets<2, { 2 * WAYS }, WORD_ENTRIES>,
    /// Pieces of more than [`WORD_LEN`] and at most [`INLINE_LEN`] bytes.
    short: Sets<4, { 4 * WAYS }, SHORT_ENTRIES>,
    long: Vec<LongEntry>,
    /// Remembered answers of the merge table, see [`JoinCache`].
    pub(super) joins: JoinCache,
}

/// A direct-mapped cache of the vocabulary's merge table: "which token joins
/// tokens `left` and `right`", answers included when there is none. Merging
/// asks the same few thousand questions over and over (the byte pairs of a
/// script, base64 digits), and a hit here is a small table that stays in
/// cache instead of a probe into a table of several megabytes.
///
/// An entry packs, from the top bit down: a valid bit, the vocabulary id (2
/// bits), `left` and `right` (20 bits each), a "no token" bit and the joined
/// rank (20 bits). It is used only when all of the key matches exactly.
pub(super) struct JoinCache {
    entries: Vec<u64>,
}

thread_local! {
    static MEMO: RefCell<Memo> = const { RefCell::new(Memo::new()) };
}

/// Frees this thread's memo (its tables are allocated again by the next count) and
/// returns the bytes its tables held; 0 when it has none, or is in use.
pub(crate) fn release() -> usize {
    MEMO.try_with(|memo| memo.try_borrow_mut().map_or(0, |mut memo| std::mem::replace(&mut *memo, Memo::new()).table_bytes()))
        .unwrap_or(0)
}

/// Runs `work` once with this thread's memo (or with a memo that remembers
/// nothing, if the thread-local one is unavailable).
pub(super) fn with_memo<R>(mut work: impl FnMut(&mut Memo) -> R) -> R {
    let done = MEMO.try_with(|memo| {
        let mut memo = memo.try_borrow_mut().ok()?;
        memo.allocate();
        Some(work(&mut memo))
    });
    match done {
        Ok(Some(result)) => result,
        _ => work(&mut Memo::new()),
    }
}

/// The first word of a short entry for a piece, without its count.
#[inline(always)]
fn short_key(vocab: &Vocab, hash: u64, len: usize) -> u64 {
    (hash & !0xFF_FFFF) | (len as u64) << 16 | u64::from(vocab.id()) << 8
}

/// The bytes of a piece of three to [`INLINE_LEN`] bytes as three
/// little-endian words, zero-padded. Built from whole-word reads of the piece
/// (overlapping at its end) rather than by copying it into a padded buffer:
/// a copy of a variable length is a `memcpy` call, and reading the buffer
/// back as words right after the copy stalls on the stores, which made this
/// the costliest step of a memo hit.
#[inline(always)]
fn short_words(piece: &[u8]) -> [u64; 3] {
    let len = piece.len();
    let word = |at: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&piece[at..at + 8]);
        u64::from_le_bytes(w)
    };
    let half = |at: usize| {
        let mut w = [0u8; 4];
        w.copy_from_slice(&piece[at..at + 4]);
        u64::from(u32::from_le_bytes(w))
    };
    // Bytes `8 * i..len` of a piece of more than `8 * i` and less than
    // `8 * i + 8` bytes (with `len >= 8`), from its last eight bytes.
    let tail = |i: usize| word(len - 8) >> (8 * (8 * i + 8 - len));
    match len {
        0..=2 => {
            let mut w = [0u8; 8];
            w[..len].copy_from_slice(piece);
            [u64::from_le_bytes(w), 0, 0]
        }
        3 => [u64::from(piece[0]) | u64::from(piece[1]) << 8 | u64::from(piece[2]) << 16, 0, 0],
        4..=7 => [half(0) | half(len - 4) >> (8 * (8 - len)) << 32, 0, 0],
        8 => [word(0), 0, 0],
        9..=15 => [word(0), tail(1), 0],
        16 => [word(0), word(8), 0],
        17..=23 => [word(0), word(8), tail(2)],
        _ => [word(0), word(8), word(16)],
    }
}

impl Memo {
    /// A memo with empty tables (allocated by [`Memo::allocate`]).
    pub(super) const fn new() -> Self {
        Memo { word: Sets::new(), short: Sets::new(), long: Vec::new(), joins: JoinCache { entries: Vec::new() } }
    }

    pub(super) fn allocate(&mut self) {
        if self.long.is_empty() {
            self.word.allocate();
            self.short.allocate();
            self.long = (0..LONG_ENTRIES).map(|_| LongEntry { hash: 0, vocab: u8::MAX, count: 0, piece: Vec::new() }).collect();
            self.joins.entries = vec![0; JOIN_ENTRIES];
        }
    }

    /// Bytes of the tables allocated on the heap.
    fn table_bytes(&self) -> usize {
        let long = self.long.iter().map(|entry| entry.piece.capacity()).sum::<usize>();
        self.word.words.capacity() * 8
            + self.short.words.capacity() * 8
            + self.long.capacity() * std::mem::size_of::<LongEntry>()
            + long
            + self.joins.entries.capacity() * 8
    }

    /// The remembered count of `piece` (at least three bytes, with key hash
    /// `hash`) under `vocab`.
    #[inline(always)]
    pub(super) fn piece_count(&self, vocab: &Vocab, piece: &[u8], hash: u64) -> Option<usize> {
        let key = short_key(vocab, hash, piece.len());
        if piece.len() <= WORD_LEN {
            let [first, ..] = short_words(piece);
            self.word.count(hash, [key, first])
        } else if piece.len() <= INLINE_LEN {
            let [first, second, third] = short_words(piece);
            self.short.count(hash, [key, first, second, third])
        } else {
            let entry = self.long.get(index(hash, LONG_ENTRIES))?;
            let hit = entry.hash == hash && entry.vocab == vocab.id() && entry.piece == piece;
            hit.then_some(entry.count)
        }
    }

    /// Remembers the count of a piece of at least three bytes (pieces longer
    /// than [`MAX_PIECE_LEN`] are not kept). A short piece takes the first
    /// entry of its set, whose pieces move one entry on (the oldest is
    /// forgotten): the [`WAYS`] most recent pieces of a set are kept.
    #[inline]
    pub(super) fn remember_piece(&mut self, vocab: &Vocab, piece: &[u8], hash: u64, count: usize) {
        if piece.len() <= INLINE_LEN {
            let Ok(count) = u8::try_from(count) else { return };
            let key = short_key(vocab, hash, piece.len()) | u64::from(count);
            let [first, second, third] = short_words(piece);
            if piece.len() <= WORD_LEN {
                self.word.remember(hash, [key, first]);
            } else {
                self.short.remember(hash, [key, first, second, third]);
            }
        } else if piece.len() <= MAX_PIECE_LEN {
            if let Some(entry) = self.long.get_mut(index(hash, LONG_ENTRIES)) {
                entry.hash = hash;
                entry.vocab = vocab.id();
                entry.count = count;
                entry.piece.clear();
                entry.piece.extend_from_slice(piece);
            }
        }
    }
}

/// Remembered counts of pieces up to a length, in entries of `W` words,
/// [`WAYS`] to a set of `SET` (`W * WAYS`) words that starts on a cache line,
/// `ENTRIES` entries in all (a power of two). An entry's first word packs the
/// top 40 bits of the piece's hash, its length, the vocabulary id and the
/// count (one byte each, from bit 16 down); the others hold the piece's bytes,
/// zero-padded. All zero is an empty entry (no piece of three bytes or more,
/// the only ones remembered, has length 0). Plain words so that the table can
/// be allocated zeroed.
struct Sets<const W: usize, const SET: usize, const ENTRIES: usize> {
    /// The entries, from word `at` on (the words before are unused).
    words: Vec<u64>,
    at: usize,
}

impl<const W: usize, const SET: usize, const ENTRIES: usize> Sets<W, SET, ENTRIES> {
    const fn new() -> Self {
        assert!(SET == W * WAYS && ENTRIES.is_power_of_two());
        Sets { words: Vec::new(), at: 0 }
    }

    fn allocate(&mut self) {
        // One cache line more than the entries, to start them on a line.
        self.words = vec![0; ENTRIES * W + LINE_WORDS];
        self.at = self.words.as_ptr().align_offset(LINE_WORDS * 8).min(LINE_WORDS);
    }

    /// The words of the set `hash` maps to, the most recently remembered
    /// entry first (none while the table is not allocated).
    #[inline(always)]
    fn set(&self, hash: u64) -> Option<&[u64; SET]> {
        self.words.get(self.at + set_start(hash, ENTRIES) * W..)?.first_chunk()
    }

    /// The count remembered for the piece of hash `hash` whose entry is
    /// `entry` (its count byte zero).
    #[inline(always)]
    fn count(&self, hash: u64, entry: [u64; W]) -> Option<usize> {
        count_in(self.set(hash)?, entry)
    }

    /// Remembers `entry`, its count in the low byte, for the piece of hash
    /// `hash`.
    #[inline(always)]
    fn remember(&mut self, hash: u64, entry: [u64; W]) {
        let start = self.at + set_start(hash, ENTRIES) * W;
        if let Some(set) = self.words.get_mut(start..start + SET) {
            remember_in(set, entry);
        }
    }
}

/// Words in a cache line.
const LINE_WORDS: usize = 8;

/// The first entry of the set a hash maps to in a table of `entries` entries.
#[inline(always)]
fn set_start(hash: u64, entries: usize) -> usize {
    index(hash, entries) & !(WAYS - 1)
}

const JOIN_FIELD_BITS: u32 = 20;
const JOIN_FIELD_MASK: u64 = (1 << JOIN_FIELD_BITS) - 1;
const JOIN_NONE: u64 = 1 << JOIN_FIELD_BITS;
const JOIN_KEY_SHIFT: u32 = JOIN_FIELD_BITS + 1;
const JOIN_VALID: u64 = 1 << 63;

impl JoinCache {
    /// An empty cache with its table allocated (the memo allocates its own
    /// on first use; this one is for tests).
    #[cfg(test)]
    pub(super) fn allocated() -> Self {
        JoinCache { entries: vec![0; JOIN_ENTRIES] }
    }

    /// The rank of the token joining `left` and `right` in `vocab`, or `None`:
    /// remembered, or else `lookup()` (the vocabulary's answer) remembered.
    #[inline(always)]
    pub(super) fn joined(&mut self, vocab: &Vocab, left: u32, right: u32, lookup: impl FnOnce() -> Option<u32>) -> Option<u32> {
        let Some(place) = self.place(vocab, left, right) else {
            return lookup();
        };
        if let Some(answer) = self.remembered(place) {
            return answer;
        }
        let answer = lookup();
        self.remember(place, answer);
        answer
    }

    /// Where the answer for `left` and `right` in `vocab` is kept, if it can
    /// be (both ranks fit, and the table is allocated).
    #[inline(always)]
    fn place(&self, vocab: &Vocab, left: u32, right: u32) -> Option<JoinPlace> {
        if !(fits(left) && fits(right) && vocab.id() < 4) || self.entries.is_empty() {
            return None;
        }
        let pair = u64::from(left) << JOIN_FIELD_BITS | u64::from(right);
        let key = JOIN_VALID | u64::from(vocab.id()) << 61 | pair << JOIN_KEY_SHIFT;
        let slot = (pair.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40) as usize & (JOIN_ENTRIES - 1);
        Some(JoinPlace { slot, key })
    }

    /// The answer remembered at `place`, if it is that pair's: `Some(None)`
    /// for "no token".
    #[inline(always)]
    fn remembered(&self, place: JoinPlace) -> Option<Option<u32>> {
        let entry = *self.entries.get(place.slot)?;
        (entry & !(JOIN_NONE | JOIN_FIELD_MASK) == place.key)
            .then(|| (entry & JOIN_NONE == 0).then_some((entry & JOIN_FIELD_MASK) as u32))
    }

    /// Remembers the vocabulary's answer for the pair of `place`.
    #[inline(always)]
    fn remember(&mut self, place: JoinPlace, answer: Option<u32>) {
        if let Some(entry) = self.entries.get_mut(place.slot) {
            match answer {
                Some(rank) if fits(rank) => *entry = place.key | u64::from(rank),
                Some(_) => {}
                None => *entry = place.key | JOIN_NONE,
            }
        }
    }
}

/// Where [`JoinCache`] keeps the answer for one pair of tokens: its slot and
/// the entry's key bits.
#[derive(Clone, Copy)]
struct JoinPlace {
    slot: usize,
    key: u64,
}

/// Whether a rank fits a field of a join cache entry.
#[inline(always)]
fn fits(rank: u32) -> bool {
    u64::from(rank) <= JOIN_FIELD_MASK
}

/// Slot of a hash in a table of `entries` (a power of two) entries.
#[inline(always)]
fn index(hash: u64, entries: usize) -> usize {
    (hash >> 40) as usize & (entries - 1)
}

#[cfg(test)]
mod tests {
    use super::super::Encoding;
    use super::super::layout::key_hash;
    use super::super::vocab::Vocab;
    use super::*;

    /// A piece's words are its bytes zero-padded to [`INLINE_LEN`], read as
    /// little-endian words, at every length up to [`INLINE_LEN`].
    #[test]
    fn short_words_are_the_padded_bytes() {
        let text: Vec<u8> = (1..=INLINE_LEN as u8).map(|b| b.wrapping_mul(37) | 0x80).collect();
        for len in 0..=INLINE_LEN {
            let mut padded = [0u8; INLINE_LEN];
            padded[..len].copy_from_slice(&text[..len]);
            let expected: Vec<u64> = padded.chunks_exact(8).map(|chunk| u64::from_le_bytes(chunk.try_into().unwrap())).collect();
            assert_eq!(short_words(&text[..len]).to_vec(), expected, "length {len}");
        }
    }

    /// Pieces that differ in one byte anywhere, in their length, or only in the
    /// vocabulary, each remembered with its own count: every lookup gives the
    /// count remembered for exactly that piece or nothing, never another
    /// piece's (also when two pieces' hashes collide); and the [`WAYS`] most
    /// recent pieces of a set of entries are all kept, each found in
    /// whichever entry it has moved to, while one more pushes the oldest out.
    #[test]
    fn remembers_exactly_what_was_counted() {
        let vocabs: Vec<&Vocab> = [Encoding::O200kBase, Encoding::Cl100kBase].into_iter().filter_map(Encoding::vocab).collect();
        let mut memo = Memo::new();
        memo.allocate();
        let base = b"abcdefghijklmnopqrstuvwxyz0123456789".repeat(8);
        let mut pieces: Vec<Vec<u8>> = Vec::new();
        // Every length up to 40 (both sides of INLINE_LEN), and the longest kept.
        for len in (3..=40).chain([MAX_PIECE_LEN]) {
            pieces.push(base[..len].to_vec());
            for at in [0, len / 2, len - 1] {
                let mut changed = base[..len].to_vec();
                changed[at] ^= 0x20;
                pieces.push(changed);
            }
        }
        let count_of = |vocab: usize, piece: usize| (vocab * 7 + piece) % 200 + 1;
        for (v, vocab) in vocabs.iter().enumerate() {
            for (p, piece) in pieces.iter().enumerate() {
                let hash = key_hash(piece);
                memo.remember_piece(vocab, piece, hash, count_of(v, p));
                assert_eq!(memo.piece_count(vocab, piece, hash), Some(count_of(v, p)));
            }
        }
        for (v, vocab) in vocabs.iter().enumerate() {
            for (p, piece) in pieces.iter().enumerate() {
                let found = memo.piece_count(vocab, piece, key_hash(piece));
                assert!(found.is_none() || found == Some(count_of(v, p)), "{:?}", String::from_utf8_lossy(piece));
            }
        }
        // Pieces of one set, in either table: the last WAYS remembered are all
        // answered, with their own counts, and one more forgets the oldest only.
        let vocab = vocabs[0];
        for (prefix, entries) in [("w", WORD_ENTRIES), ("a_longer_word_", SHORT_ENTRIES)] {
            let same_set: Vec<Vec<u8>> = (0u32..)
                .map(|i| format!("{prefix}{i}").into_bytes())
                .filter(|p| (p.len() <= WORD_LEN) == (entries == WORD_ENTRIES) && set_start(key_hash(p), entries) == 0)
                .take(WAYS + 1)
                .collect();
            for (k, piece) in same_set.iter().enumerate() {
                memo.remember_piece(vocab, piece, key_hash(piece), k + 3);
                for (earlier, kept) in same_set[..=k].iter().enumerate().rev().take(WAYS) {
                    assert_eq!(memo.piece_count(vocab, kept, key_hash(kept)), Some(earlier + 3), "{prefix} {k} {earlier}");
                }
            }
            assert_eq!(memo.piece_count(vocab, &same_set[0], key_hash(&same_set[0])), None, "{prefix}");
        }
        // Pieces of one length given the same hash (as if theirs collided):
        // never answered with the other's count, the more recent one found.
        for (older, newer) in [(b"coll_a".as_slice(), b"coll_b".as_slice()), (b"collide_a", b"collide_b")] {
            let hash = key_hash(older);
            memo.remember_piece(vocab, older, hash, 5);
            assert_eq!(memo.piece_count(vocab, newer, hash), None);
            memo.remember_piece(vocab, newer, hash, 6);
            assert_eq!(memo.piece_count(vocab, newer, hash), Some(6));
            assert!(memo.piece_count(vocab, older, hash).is_none_or(|count| count == 5));
        }
    }
}
