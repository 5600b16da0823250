//! A per-thread memo of the token counts of pieces.
//!
//! Text repeats its words, identifiers and indentation runs. The memo is
//! direct-mapped, bounded (fixed entry counts; pieces of at most
//! [`MAX_PIECE_LEN`] bytes; at most about 1.1 MB per counting thread, join
//! cache included, freed when the thread exits) and exact: an entry is used
//! only when the whole piece matches. Short pieces are stored inline, so the common case (a frequent
//! word) is answered from one cache line instead of the vocabulary's large
//! tables. Being thread-local, the memo needs no locking; its contents never
//! change any result.

use std::cell::RefCell;

use super::vocab::Vocab;

/// Longest piece whose count is remembered.
const MAX_PIECE_LEN: usize = 256;
/// Longest piece stored inline (fills a 64-byte entry).
const INLINE_LEN: usize = 48;
/// Number of remembered short pieces (a power of two).
const SHORT_ENTRIES: usize = 4096;
/// Number of remembered long pieces (a power of two).
const LONG_ENTRIES: usize = 1024;
/// Number of remembered joins of two tokens (a power of two; 8 bytes each).
const JOIN_ENTRIES: usize = 1 << 16;

/// A remembered count of a piece of at most [`INLINE_LEN`] bytes: one cache
/// line, aligned to start one, so a lookup touches a single line.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct ShortEntry {
    hash: u64,
    count: u32,
    len: u8,
    vocab: u8,
    piece: [u8; INLINE_LEN],
}

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
    short: Vec<ShortEntry>,
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

impl Memo {
    /// A memo with empty tables (allocated by [`Memo::allocate`]).
    pub(super) const fn new() -> Self {
        Memo { short: Vec::new(), long: Vec::new(), joins: JoinCache { entries: Vec::new() } }
    }

    fn allocate(&mut self) {
        if self.short.is_empty() {
            let empty = ShortEntry { hash: 0, count: 0, len: 0, vocab: u8::MAX, piece: [0; INLINE_LEN] };
            self.short = vec![empty; SHORT_ENTRIES];
            self.long = (0..LONG_ENTRIES).map(|_| LongEntry { hash: 0, vocab: u8::MAX, count: 0, piece: Vec::new() }).collect();
            self.joins.entries = vec![0; JOIN_ENTRIES];
        }
    }

    /// The remembered count of `piece` (with key hash `hash`) under `vocab`.
    #[inline]
    pub(super) fn piece_count(&self, vocab: &Vocab, piece: &[u8], hash: u64) -> Option<usize> {
        if piece.len() <= INLINE_LEN {
            let entry = self.short.get(index(hash, SHORT_ENTRIES))?;
            let hit = entry.hash == hash
                && entry.vocab == vocab.id()
                && usize::from(entry.len) == piece.len()
                && entry.piece.get(..piece.len()).is_some_and(|stored| same_short_bytes(stored, piece));
            hit.then_some(entry.count as usize)
        } else {
            let entry = self.long.get(index(hash, LONG_ENTRIES))?;
            let hit = entry.hash == hash && entry.vocab == vocab.id() && entry.piece == piece;
            hit.then_some(entry.count)
        }
    }

    /// Remembers the count of a piece (pieces longer than [`MAX_PIECE_LEN`]
    /// are not kept).
    #[inline]
    pub(super) fn remember_piece(&mut self, vocab: &Vocab, piece: &[u8], hash: u64, count: usize) {
        if piece.len() <= INLINE_LEN {
            if let (Some(entry), Ok(count)) = (self.short.get_mut(index(hash, SHORT_ENTRIES)), u32::try_from(count)) {
                entry.hash = hash;
                entry.count = count;
                entry.len = piece.len() as u8;
                entry.vocab = vocab.id();
                entry.piece[..piece.len()].copy_from_slice(piece);
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

/// Equality of two byte strings of the same length (at most [`INLINE_LEN`]),
/// compared in overlapping 8-byte words rather than with a `memcmp` call.
#[inline(always)]
fn same_short_bytes(a: &[u8], b: &[u8]) -> bool {
    let len = a.len();
    if len != b.len() {
        return false;
    }
    if len < 8 {
        return same_under_8(a, b);
    }
    let word = |s: &[u8], at: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&s[at..at + 8]);
        u64::from_le_bytes(w)
    };
    let mut at = 0;
    while at + 8 < len {
        if word(a, at) != word(b, at) {
            return false;
        }
        at += 8;
    }
    word(a, len - 8) == word(b, len - 8)
}

/// Equality of two byte strings of the same length below 8, with at most two
/// overlapping loads per side instead of a `memcmp` call (most pieces are words
/// of a few letters).
#[inline(always)]
fn same_under_8(a: &[u8], b: &[u8]) -> bool {
    let len = a.len();
    let half = |s: &[u8], at: usize| {
        let mut w = [0u8; 4];
        w.copy_from_slice(&s[at..at + 4]);
        u32::from_le_bytes(w)
    };
    match len {
        4..=7 => half(a, 0) == half(b, 0) && half(a, len - 4) == half(b, len - 4),
        _ => a == b,
    }
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
        let fits = |rank: u32| u64::from(rank) <= JOIN_FIELD_MASK;
        if !(fits(left) && fits(right) && vocab.id() < 4) {
            return lookup();
        }
        let pair = u64::from(left) << JOIN_FIELD_BITS | u64::from(right);
        let key = JOIN_VALID | u64::from(vocab.id()) << 61 | pair << JOIN_KEY_SHIFT;
        let slot = (pair.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40) as usize & (JOIN_ENTRIES - 1);
        let Some(entry) = self.entries.get_mut(slot) else {
            return lookup(); // no cache (thread teardown)
        };
        if *entry & !(JOIN_NONE | JOIN_FIELD_MASK) == key {
            return (*entry & JOIN_NONE == 0).then_some((*entry & JOIN_FIELD_MASK) as u32);
        }
        let answer = lookup();
        match answer {
            Some(rank) if fits(rank) => *entry = key | u64::from(rank),
            Some(_) => {}
            None => *entry = key | JOIN_NONE,
        }
        answer
    }
}

/// Slot of a hash in a table of `entries` (a power of two) entries.
#[inline(always)]
fn index(hash: u64, entries: usize) -> usize {
    (hash >> 40) as usize & (entries - 1)
}
