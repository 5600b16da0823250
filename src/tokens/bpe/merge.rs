//! Byte-pair merging of one piece, counting the tokens it ends up as.
//!
//! tiktoken starts from single bytes and repeatedly merges the adjacent pair
//! whose concatenation has the lowest rank (the leftmost such pair on ties)
//! until no adjacent pair is a token. Only the number of parts left is needed
//! here. Every part is a token, so the rank of joining two parts is looked up
//! by their two ranks: a bit-set test rules most pairs out, the vocabulary's
//! merge table answers the rest.
//! Short pieces use a scan over small arrays on the stack; long ones use a
//! binary heap over a linked list, so even a million-byte piece stays
//! `O(n log n)`.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::memo::JoinCache;
use super::vocab::Vocab;

/// Longest piece merged with the array scan (at most 256: offsets are bytes).
const SMALL_PIECE: usize = 128;

/// "No merge possible" rank.
const NO_MERGE: u32 = u32::MAX;

/// Number of tokens the merging of `piece` (at least two bytes) ends with.
pub(super) fn merged_count(vocab: &Vocab, piece: &[u8], joins: &mut JoinCache) -> usize {
    let pairs = &mut PairRanks {
        vocab,
        piece,
        joins,
    };
    if piece.len() > SMALL_PIECE {
        return count_large(pairs);
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: `avx2::count_small` only requires the AVX2 instructions it is
        // compiled with, and the CPU has them (checked just above).
        return unsafe { avx2::count_small(pairs) };
    }
    count_small_any(pairs)
}

/// [`count_small`] with the smallest array size that fits the piece (at most
/// [`SMALL_PIECE`] bytes): every scan covers the whole array, so it should not
/// be much longer than the piece.
#[inline(always)]
fn count_small_any(pairs: &mut PairRanks) -> usize {
    match pairs.piece.len() {
        0..=8 => count_small::<8>(pairs),
        9..=16 => count_small::<16>(pairs),
        17..=32 => count_small::<32>(pairs),
        33..=64 => count_small::<64>(pairs),
        _ => count_small::<SMALL_PIECE>(pairs),
    }
}

/// The array merge compiled for AVX2, whose 8-lane unsigned minimum makes the
/// best-pair scan several times cheaper than with the SSE2 baseline. The code
/// is the same safe Rust; only the instructions the compiler may use differ.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{PairRanks, count_small_any};

    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn count_small(pairs: &mut PairRanks) -> usize {
        count_small_any(pairs)
    }
}

/// Rank lookups for the parts of one piece.
struct PairRanks<'a> {
    vocab: &'a Vocab,
    piece: &'a [u8],
    joins: &'a mut JoinCache,
}

impl PairRanks<'_> {
    /// Rank of the single-byte token at `offset`.
    #[inline(always)]
    fn byte(&self, offset: usize) -> u32 {
        self.piece
            .get(offset)
            .map_or(NO_MERGE, |&byte| self.vocab.byte_rank(byte))
    }

    /// Rank of the two-byte token starting at `offset`, or [`NO_MERGE`].
    #[inline(always)]
    fn byte_pair(&self, offset: usize) -> u32 {
        match self.piece.get(offset..offset + 2) {
            Some(&[first, second]) => self.vocab.pair_rank(first, second).unwrap_or(NO_MERGE),
            _ => NO_MERGE,
        }
    }

    /// Rank of the token joining adjacent parts that are the tokens `left` and
    /// `right`, or [`NO_MERGE`].
    #[inline(always)]
    fn join(&mut self, left: u32, right: u32) -> u32 {
        let vocab = self.vocab;
        if !vocab.may_join(left, right) {
            return NO_MERGE;
        }
        self.joins
            .joined(vocab, left, right, || vocab.joined(left, right))
            .unwrap_or(NO_MERGE)
    }
}

/// Merges with a scan for the best pair; `2 <= piece.len() <= N <= 256`.
///
/// Parts are identified by their start offset `s`, linked through `next` and
/// `prev`, with `token[s]` their rank. `key[s]` packs the rank of joining the
/// part at `s` with its successor above the offset itself (ranks fit in 24
/// bits), or is [`NO_MERGE`] (also for offsets that are no longer part
/// starts). The best merge, lowest rank and leftmost on ties, is then one
/// branch-free minimum over a short array, and no array ever shifts.
#[inline(always)]
fn count_small<const N: usize>(pairs: &mut PairRanks) -> usize {
    let len = pairs.piece.len();
    let packed = |rank: u32, start: usize| {
        if rank == NO_MERGE {
            NO_MERGE
        } else {
            rank << 8 | start as u32
        }
    };
    let mut key = [NO_MERGE; N];
    let mut token = [NO_MERGE; N];
    let mut next = [0u8; N];
    let mut prev = [0u8; N];
    for start in 0..len {
        key[start] = packed(pairs.byte_pair(start), start);
        token[start] = pairs.byte(start);
        next[start] = (start + 1) as u8;
        prev[start] = start.wrapping_sub(1) as u8;
    }
    let end_of = |next: &[u8; N], start: usize| next.get(start).map_or(len, |&e| e as usize);
    let mut parts = len;
    loop {
        // Keys from `len - 1` on are NO_MERGE forever; scanning the whole
        // array gives the compiler a fixed trip count to vectorise without a
        // scalar tail.
        let best = key.iter().fold(NO_MERGE, |best, &k| best.min(k));
        if best == NO_MERGE {
            return parts;
        }
        let left = (best & 0xFF) as usize;
        let right = end_of(&next, left);
        let after = end_of(&next, right);
        token[left] = best >> 8;
        next[left] = after as u8;
        if let Some(slot) = prev.get_mut(after) {
            *slot = left as u8;
        }
        if let Some(slot) = key.get_mut(right) {
            *slot = NO_MERGE;
        }
        parts -= 1;
        if let Some(slot) = key.get_mut(left) {
            let rank = if after < len {
                pairs.join(token[left], token[after])
            } else {
                NO_MERGE
            };
            *slot = packed(rank, left);
        }
        if left > 0 {
            let before = prev[left] as usize;
            if let (Some(slot), Some(&preceding)) = (key.get_mut(before), token.get(before)) {
                *slot = packed(pairs.join(preceding, token[left]), before);
            }
        }
    }
}

/// Merges with a min-heap of candidate pairs over a doubly linked list of
/// parts, for pieces of any length.
fn count_large(pairs: &mut PairRanks) -> usize {
    let len = pairs.piece.len();
    // Same representation as `count_small`, in vectors: next[s], prev[s] and
    // token[s] for the part starting at s, rank[s] the rank of joining it with
    // its successor (NO_MERGE if none or if s is no longer a part start).
    let mut next: Vec<u32> = (1..=len as u32).collect();
    let mut prev: Vec<u32> = (0..len as u32).map(|s| s.wrapping_sub(1)).collect();
    let mut token: Vec<u32> = (0..len).map(|s| pairs.byte(s)).collect();
    let mut rank: Vec<u32> = (0..len).map(|s| pairs.byte_pair(s)).collect();
    let mut heap: BinaryHeap<Reverse<(u32, u32)>> = rank
        .iter()
        .enumerate()
        .filter(|&(_, &r)| r != NO_MERGE)
        .map(|(s, &r)| Reverse((r, s as u32)))
        .collect();
    let mut parts = len;
    let end_of = |next: &[u32], s: usize| next.get(s).map_or(len, |&e| e as usize);
    while let Some(Reverse((candidate, start))) = heap.pop() {
        let left = start as usize;
        if rank.get(left) != Some(&candidate) {
            continue; // stale: this pair changed since it was pushed
        }
        let right = end_of(&next, left);
        let after = end_of(&next, right);
        // Merge: the part at `right` disappears.
        token[left] = candidate;
        next[left] = after as u32;
        if let Some(slot) = prev.get_mut(after) {
            *slot = start;
        }
        if let Some(slot) = rank.get_mut(right) {
            *slot = NO_MERGE;
        }
        parts -= 1;
        rank[left] = if after < len {
            pairs.join(candidate, token[after])
        } else {
            NO_MERGE
        };
        if rank[left] != NO_MERGE {
            heap.push(Reverse((rank[left], start)));
        }
        if left > 0 {
            let before = prev[left] as usize;
            if let Some(&preceding) = token.get(before) {
                rank[before] = pairs.join(preceding, candidate);
                if rank[before] != NO_MERGE {
                    heap.push(Reverse((rank[before], before as u32)));
                }
            }
        }
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::super::memo::Memo;
    use super::super::vocab::{CL100K, O200K, P50K, R50K};
    use super::*;

    /// Deterministic byte strings: text in several scripts, runs, and
    /// pseudo-random bytes (merging works on bytes, valid UTF-8 or not).
    fn samples() -> Vec<Vec<u8>> {
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let random: Vec<u8> = (0..SMALL_PIECE)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state as u8
            })
            .collect();
        let texts = [
            " internationalization and the hyperparameters of tokenization",
            "敏捷的棕色狐狸跳过了懒狗上下文窗口计算令牌人工智能模型",
            "Donaudampfschifffahrtsgesellschaftskapitänsmütze",
            "                                                  ",
            "aGVsbG8gd29ybGQhIFRoaXMgaXMgYmFzZTY0IGVuY29kZWQgdGV4dA",
            "مُحَمَّدٌ رَسُولُ اللَّهِ وَالَّذِينَ مَعَهُ",
            "1234567890123456789012345678901234567890",
        ];
        let mut samples: Vec<Vec<u8>> = texts.iter().map(|text| text.as_bytes().to_vec()).collect();
        samples.push(random);
        samples
    }

    /// The array scan and the heap agree on every prefix they can both handle,
    /// with a join cache that is shared by all of them (so it answers most
    /// joins, across vocabularies) and without one.
    #[test]
    fn small_and_large_merges_agree() {
        let mut cache = JoinCache::allocated();
        for vocab in [&O200K, &CL100K, &P50K, &R50K] {
            for sample in samples() {
                for len in 2..=sample.len().min(SMALL_PIECE) {
                    let piece = &sample[..len];
                    let mut uncached = Memo::new().joins;
                    let large = count_large(&mut PairRanks {
                        vocab,
                        piece,
                        joins: &mut uncached,
                    });
                    let pairs = &mut PairRanks {
                        vocab,
                        piece,
                        joins: &mut cache,
                    };
                    assert_eq!(count_large(pairs), large, "{piece:?}");
                    assert_eq!(count_small::<SMALL_PIECE>(pairs), large, "{piece:?}");
                    if len <= 8 {
                        assert_eq!(count_small::<8>(pairs), large, "{piece:?}");
                    }
                    if len <= 32 {
                        assert_eq!(count_small::<32>(pairs), large, "{piece:?}");
                    }
                    assert_eq!(count_small_any(pairs), large, "{piece:?}");
                    #[cfg(target_arch = "x86_64")]
                    if std::arch::is_x86_feature_detected!("avx2") {
                        // SAFETY: AVX2 is available (checked just above).
                        let vector = unsafe { avx2::count_small(pairs) };
                        assert_eq!(vector, large, "{piece:?}");
                    }
                    assert_eq!(merged_count(vocab, piece, pairs.joins), large, "{piece:?}");
                }
            }
        }
    }
}
