//! The sets of entries both engines' memos of pieces keep their short pieces in.
//!
//! An entry is `W` plain words: the first packs what identifies the piece besides its bytes
//! (a part of its hash, its length, an owner) above its count in the low byte; the others are
//! the piece's bytes. A set is [`WAYS`] entries, the most recently remembered first, starting
//! on a cache line. Four to a set rather than two because text cycles through its words:
//! three words that share a set of two would push each other out and all be merged again on
//! every pass over the text. Entries of two words (a piece of up to eight bytes) make a set
//! one cache line, which a lookup then reads alone.

/// Entries in a set, the most recent pieces that map to it.
pub(super) const WAYS: usize = 4;

/// The bits of an entry's first word that identify its piece (all but the count).
const KEY_BITS: u64 = !0xFF;

/// The count in the most recent entry of `set` (entries of `W` words) that is `entry` but
/// for the count (`entry[0]`'s low byte zero).
///
/// The most recent entry whose first word matches is chosen without a branch per entry
/// (which one holds the piece is not predictable), then its words compared: one entry's
/// words read instead of every entry's. Two entries of one set matching there but holding
/// different pieces would need the identifying bits of their first words alike: then the
/// older piece may be missed and counted again, never given another piece's count.
#[inline(always)]
pub(super) fn count_in<const W: usize, const SET: usize>(set: &[u64; SET], entry: [u64; W]) -> Option<usize> {
    let mut at = (WAYS - 1) * W;
    for way in (0..WAYS - 1).rev() {
        if set[way * W] & KEY_BITS == entry[0] {
            at = way * W;
        }
    }
    let mut differs = (set[at] & KEY_BITS) ^ entry[0];
    for word in 1..W {
        differs |= set[at + word] ^ entry[word];
    }
    (differs == 0).then_some((set[at] & 0xFF) as usize)
}

/// Puts `entry` (its count in `entry[0]`'s low byte) first in `set`, whose entries move one
/// on: the oldest is forgotten.
#[inline(always)]
pub(super) fn remember_in<const W: usize>(set: &mut [u64], entry: [u64; W]) {
    set.copy_within(0..(WAYS - 1) * W, W);
    set[..W].copy_from_slice(&entry);
}
