//! The parts of a short piece while the array merge
//! ([`count_small`](super::count_small)) merges it, in fixed arrays, and its
//! one step: making the best merge.

use super::NO_MERGE;

/// The parts left of at most `N` (at most 256) initial parts.
///
/// Parts are identified by their initial index `s`, linked through `next`
/// and `prev`, with `token[s]` their rank. `key[s]` packs the rank of joining
/// the part at `s` with its successor above the index itself (ranks fit in
/// 24 bits, see [`packed`]), or is [`NO_MERGE`] (also for indices that are no
/// longer part starts). The best merge, lowest rank and leftmost on ties, is
/// then one branch-free minimum over a short array, and no array ever shifts.
#[derive(Clone, Copy)]
pub(super) struct PartList<const N: usize> {
    key: [u32; N],
    token: [u32; N],
    next: [u8; N],
    prev: [u8; N],
    /// Number of initial parts.
    len: usize,
    /// Number of parts left.
    pub(super) remaining: usize,
}

/// A pair of adjacent parts that a merge made new, whose rank
/// [`PartList::set_rank`] awaits: the part starting at initial index `start`,
/// the token `left`, and the token `right` after it, which ends where the
/// part at initial index `to` starts (or at the piece's end, if `to` is the
/// number of initial parts).
#[derive(Clone, Copy)]
pub(super) struct NewPair {
    pub(super) start: usize,
    pub(super) left: u32,
    pub(super) right: u32,
    pub(super) to: usize,
}

impl<const N: usize> PartList<N> {
    /// No parts.
    #[inline(always)]
    pub(super) const fn new() -> Self {
        PartList { key: [NO_MERGE; N], token: [NO_MERGE; N], next: [0; N], prev: [0; N], len: 0, remaining: 0 }
    }

    /// Starts over from `len` initial parts (at most `N`), the part at `s`
    /// being the token `token(s)`, with the rank of joining it to the next,
    /// `initial(s)`.
    #[inline(always)]
    pub(super) fn reset(&mut self, len: usize, token: impl Fn(usize) -> u32, mut initial: impl FnMut(usize) -> u32) {
        // `token`, `next` and `prev` are only read at part starts, all set below; every key
        // is read by the best-pair scan, and those past the parts must be NO_MERGE.
        let len = len.min(N);
        self.key[len..].fill(NO_MERGE);
        for start in 0..len {
            self.key[start] = packed(initial(start), start);
            self.token[start] = token(start);
            self.next[start] = (start + 1) as u8;
            self.prev[start] = start.wrapping_sub(1) as u8;
        }
        self.len = len;
        self.remaining = len;
    }

    /// Makes the best merge, if any pair of parts joins (false when none
    /// does): the left part becomes their token. `rank` is asked about each
    /// pair the merge makes new (with the part after, then with the part
    /// before); its answer becomes the pair's key at once, and a pair it does
    /// not answer waits for [`PartList::set_rank`] (before the next merge).
    /// A merged part with no part after gets its key here.
    #[inline(always)]
    pub(super) fn merge_best(&mut self, mut rank: impl FnMut(NewPair) -> Option<u32>) -> bool {
        // Keys from `len - 1` on are NO_MERGE forever; scanning the whole
        // array gives the compiler a fixed trip count to vectorise without a
        // scalar tail.
        let best = self.key.iter().fold(NO_MERGE, |best, &k| best.min(k));
        if best == NO_MERGE {
            return false;
        }
        let left = (best & 0xFF) as usize;
        let right = self.end_of(left);
        let after = self.end_of(right);
        let token = best >> 8;
        self.token[left] = token;
        self.next[left] = after as u8;
        if let Some(slot) = self.prev.get_mut(after) {
            *slot = left as u8;
        }
        if let Some(slot) = self.key.get_mut(right) {
            *slot = NO_MERGE;
        }
        self.remaining -= 1;
        match self.token.get(after) {
            Some(&right) if after < self.len => {
                if let Some(answer) = rank(NewPair { start: left, left: token, right, to: self.end_of(after) }) {
                    self.set_rank(left, answer);
                }
            }
            _ => self.set_rank(left, NO_MERGE),
        }
        if left > 0 {
            let before = usize::from(self.prev[left]);
            let preceding = self.token.get(before).copied().unwrap_or(NO_MERGE);
            if let Some(answer) = rank(NewPair { start: before, left: preceding, right: token, to: after }) {
                self.set_rank(before, answer);
            }
        }
        true
    }

    /// Sets the rank of joining the part starting at `start` with the next.
    #[inline(always)]
    pub(super) fn set_rank(&mut self, start: usize, rank: u32) {
        if let Some(slot) = self.key.get_mut(start) {
            *slot = packed(rank, start);
        }
    }

    /// Initial index of the part after the one starting at `s` (the number
    /// of initial parts after the last).
    #[inline(always)]
    fn end_of(&self, s: usize) -> usize {
        self.next.get(s).map_or(self.len, |&e| usize::from(e))
    }
}

/// The key of the pair starting at initial index `start` whose join has
/// rank `rank`: the rank above the index, or [`NO_MERGE`].
#[inline(always)]
fn packed(rank: u32, start: usize) -> u32 {
    if rank == NO_MERGE { NO_MERGE } else { rank << 8 | start as u32 }
}
