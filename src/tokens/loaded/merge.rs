//! Byte-pair merging of one piece, counting the tokens it ends up as.
//!
//! Both file formats reduce to one rule: repeatedly join the adjacent pair of symbols with
//! the lowest merge priority, the leftmost on ties, until no adjacent pair merges. In a
//! `tokenizer.json` the priority is the merge's line in `merges` (Hugging Face's
//! `Word::merge_all`), found in a table of token pairs ([`Merges`]); in a ranks file it is
//! the rank of the joined bytes, looked up in the vocabulary itself (tiktoken's
//! `byte_pair_merge`). Short pieces use a scan over arrays on the stack, long ones a binary
//! heap over a linked list, so a million-symbol piece stays `O(n log n)`.

use std::cell::Cell;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::table::{Filling, by_home};

/// How two adjacent symbols merge.
pub(super) trait Rule {
    /// A symbol.
    type Symbol: Copy + Default;

    /// The key of `left` then `right`: [`NONE`] if they do not merge, else a value where the
    /// smaller merges first and equal keys join the same way.
    fn key(&self, left: Self::Symbol, right: Self::Symbol) -> u64;

    /// The symbol `left` and `right` join into (`key` is their key).
    fn join(&self, left: Self::Symbol, right: Self::Symbol, key: u64) -> Self::Symbol;
}

/// The merges of a vocabulary: `(left, right)` token ids to the joined token and its
/// priority, in an open-addressing table (linear probing, at most two thirds full): a
/// lookup is one cache miss, and loading 514,906 merges is one allocation.
#[derive(Debug)]
pub(super) struct Merges {
    /// `(pair key, priority << 32 | joined)`; [`EMPTY`] keys are free slots. A power of two
    /// long.
    slots: Vec<(u64, u64)>,
}

/// One merge: `left` then `right` join into `joined`, with `priority` (lower merges first).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Merge {
    pub(super) left: u32,
    pub(super) right: u32,
    pub(super) priority: u32,
    pub(super) joined: u32,
}

/// The key of a free slot: no pair has it (token ids are below 2^31).
const EMPTY: u64 = u64::MAX;

/// "No merge": above every key.
pub(super) const NONE: u64 = u64::MAX;

/// Most symbols merged with the array scan: a CJK piece of 80 characters is 240 bytes,
/// and scanning is cheaper than the heap's allocations up to there.
const SMALL: usize = 256;

impl Merges {
    /// The table of `merges`. A later merge of the same pair (a higher priority) replaces
    /// the earlier one, as in Hugging Face's loader.
    pub(super) fn new(merges: Vec<Merge>) -> Merges {
        let len = (merges.len() + merges.len() / 2).next_power_of_two().max(16);
        let bits = len.trailing_zeros();
        let mut slots = Filling::new(bits, (EMPTY, 0));
        let mut merges = merges;
        by_home(&mut merges, bits, |m| home(pair_key(m.left, m.right), bits));
        for m in merges {
            let key = pair_key(m.left, m.right);
            let value = u64::from(m.priority) << 32 | u64::from(m.joined);
            let mut at = home(key, bits);
            loop {
                let slot = slots.slot(at);
                if slot.0 == EMPTY || (slot.0 == key && slot.1 < value) {
                    *slot = (key, value);
                    break;
                }
                if slot.0 == key {
                    break;
                }
                at = (at + 1) & (len - 1);
            }
        }
        Merges { slots: slots.finish() }
    }

    fn bits(&self) -> u32 {
        self.slots.len().trailing_zeros()
    }

    /// Every merge: `(left, right, priority)`, in no particular order.
    pub(super) fn iter(&self) -> impl Iterator<Item = (u32, u32, u32)> + '_ {
        self.slots
            .iter()
            .filter(|slot| slot.0 != EMPTY)
            .map(|&(key, value)| ((key >> 32) as u32, key as u32, (value >> 32) as u32))
    }

    /// The slot of `key`: where it is, or the free slot where it would go.
    #[inline]
    fn slot(&self, key: u64) -> usize {
        let mask = self.slots.len() - 1;
        let mut at = home(key, self.bits());
        loop {
            let k = self.slots[at].0;
            if k == key || k == EMPTY {
                return at;
            }
            at = (at + 1) & mask;
        }
    }
}

/// Listed merges join two tokens (ids) when the table has their pair.
impl Rule for Merges {
    type Symbol = u32;

    /// `(priority, joined)` packed so that the smaller value merges first. Equal priorities
    /// mean the same pair, so the first minimum is the leftmost best pair.
    #[inline]
    fn key(&self, left: u32, right: u32) -> u64 {
        let slot = self.slots[self.slot(pair_key(left, right))];
        if slot.0 == EMPTY { NONE } else { slot.1 }
    }

    #[inline]
    fn join(&self, _: u32, _: u32, key: u64) -> u32 {
        key as u32
    }
}

/// A direct-mapped cache of a [`Merges`] table's answers, answers that no merge exists
/// included: merging asks the same few thousand pairs again and again (the byte pairs of a
/// script, common word parts), and a hit here is a small table that stays in the CPU's
/// cache instead of a probe into a table of many megabytes (GPT-4o's 514,906 merges take
/// 16 MB). [`JOIN_SLOTS`] entries of 16 bytes (256 KB), one per thread, in the memo.
pub(super) struct JoinCache {
    /// `(pair key, Merges::key's answer)`; [`EMPTY`] keys are free slots.
    slots: Box<[Cell<(u64, u64)>]>,
}

/// Number of entries of a [`JoinCache`] (a power of two).
const JOIN_SLOTS: usize = 1 << 14;

impl JoinCache {
    /// An empty cache.
    pub(super) fn new() -> JoinCache {
        JoinCache { slots: (0..JOIN_SLOTS).map(|_| Cell::new((EMPTY, 0))).collect() }
    }

    /// Bytes of the cache's entries.
    pub(super) fn table_bytes(&self) -> usize {
        std::mem::size_of_val(&*self.slots)
    }

    /// Forgets every answer (the memo serves another tokenizer).
    pub(super) fn clear(&self) {
        self.slots.iter().for_each(|slot| slot.set((EMPTY, 0)));
    }

    /// `merges` with this cache in front of it.
    pub(super) fn over<'a>(&'a self, merges: &'a Merges) -> CachedMerges<'a> {
        CachedMerges { merges, cache: self }
    }
}

/// [`Merges`] asked through a [`JoinCache`]: the same answers.
pub(super) struct CachedMerges<'a> {
    merges: &'a Merges,
    cache: &'a JoinCache,
}

impl Rule for CachedMerges<'_> {
    type Symbol = u32;

    #[inline]
    fn key(&self, left: u32, right: u32) -> u64 {
        let pair = pair_key(left, right);
        let slot = &self.cache.slots[home(pair, JOIN_SLOTS.trailing_zeros())];
        let (cached, answer) = slot.get();
        if cached == pair {
            return answer;
        }
        let answer = self.merges.key(left, right);
        slot.set((pair, answer));
        answer
    }

    #[inline]
    fn join(&self, _: u32, _: u32, key: u64) -> u32 {
        key as u32
    }
}

/// Number of symbols the `len` symbols `symbol(0)`, `symbol(1)`, ... merge down to under
/// `rule`.
pub(super) fn count<R: Rule>(rule: &R, len: usize, symbol: impl Fn(usize) -> R::Symbol) -> usize {
    if len < 2 {
        len
    } else if len <= 16 {
        count_small::<R, 16>(rule, len, symbol)
    } else if len <= 64 {
        count_small::<R, 64>(rule, len, symbol)
    } else if len <= SMALL {
        count_small::<R, SMALL>(rule, len, symbol)
    } else {
        count_large(rule, len, symbol)
    }
}

/// The scan: symbols in place in a fixed array that shifts on each merge; `key[i]` is the
/// key of symbols `i` and `i + 1`.
/// `N` (at least `len`) sizes the arrays, so that a short piece sets up short ones.
fn count_small<R: Rule, const N: usize>(rule: &R, mut len: usize, symbol: impl Fn(usize) -> R::Symbol) -> usize {
    let mut token = [R::Symbol::default(); N];
    let mut key = [NONE; N];
    for (i, slot) in token[..len].iter_mut().enumerate() {
        *slot = symbol(i);
    }
    for i in 0..len - 1 {
        key[i] = rule.key(token[i], token[i + 1]);
    }
    loop {
        let mut best = 0;
        let mut min = NONE;
        for (i, &k) in key[..len - 1].iter().enumerate() {
            if k < min {
                min = k;
                best = i;
            }
        }
        if min == NONE {
            return len;
        }
        token[best] = rule.join(token[best], token[best + 1], min);
        token.copy_within(best + 2..len, best + 1);
        key.copy_within(best + 2..len, best + 1);
        len -= 1;
        if len == 1 {
            return 1;
        }
        key[best] = if best + 1 < len { rule.key(token[best], token[best + 1]) } else { NONE };
        if best > 0 {
            key[best - 1] = rule.key(token[best - 1], token[best]);
        }
    }
}

/// The heap over a doubly linked list of symbols, for any length. A heap entry is the pair
/// starting at a position as it was when pushed: `version[left]` changes whenever that pair
/// does (either symbol joined, or `left` merged away), which makes older entries stale.
fn count_large<R: Rule>(rule: &R, len: usize, symbol: impl Fn(usize) -> R::Symbol) -> usize {
    let mut token: Vec<R::Symbol> = (0..len).map(symbol).collect();
    let mut next: Vec<usize> = (1..=len).collect();
    let mut prev: Vec<usize> = (0..len).map(|i| i.wrapping_sub(1)).collect();
    let mut version = vec![0usize; len];
    let mut heap: BinaryHeap<Reverse<(u64, usize, usize)>> = BinaryHeap::new();
    // The pair at `left` changed: a new version, in the heap if it merges.
    let renew = |heap: &mut BinaryHeap<_>, version: &mut [usize], token: &[R::Symbol], left: usize, right: usize| {
        version[left] += 1;
        if right < len {
            let key = rule.key(token[left], token[right]);
            if key != NONE {
                heap.push(Reverse((key, left, version[left])));
            }
        }
    };
    for i in 0..len - 1 {
        renew(&mut heap, &mut version, &token, i, i + 1);
    }
    let mut remaining = len;
    while let Some(Reverse((key, left, pushed))) = heap.pop() {
        if version[left] != pushed {
            continue;
        }
        let right = next[left];
        token[left] = rule.join(token[left], token[right], key);
        version[right] += 1;
        next[left] = next[right];
        if next[left] < len {
            prev[next[left]] = left;
        }
        remaining -= 1;
        renew(&mut heap, &mut version, &token, left, next[left]);
        if left > 0 {
            renew(&mut heap, &mut version, &token, prev[left], left);
        }
    }
    remaining
}

#[inline]
fn pair_key(left: u32, right: u32) -> u64 {
    u64::from(left) << 32 | u64::from(right)
}

/// Where a pair's search starts among `bits`-bit slot numbers.
#[inline]
fn home(key: u64, bits: u32) -> usize {
    (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as usize
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// The rule written out plainly: join the best pair (lowest key, leftmost) until none
    /// merges.
    fn reference<R: Rule>(rule: &R, symbols: &[R::Symbol]) -> usize {
        let mut tokens = symbols.to_vec();
        loop {
            let best = (0..tokens.len().saturating_sub(1)).map(|i| (rule.key(tokens[i], tokens[i + 1]), i)).min();
            match best {
                Some((key, i)) if key != NONE => {
                    tokens[i] = rule.join(tokens[i], tokens[i + 1], key);
                    tokens.remove(i + 1);
                }
                _ => return tokens.len(),
            }
        }
    }

    /// The scan, the heap and [`count`] against [`reference`] on `symbols`.
    pub(in super::super) fn check<R: Rule>(rule: &R, symbols: &[R::Symbol]) -> usize
    where
        R::Symbol: std::fmt::Debug,
    {
        let expected = reference(rule, symbols);
        let symbol = |i: usize| symbols[i];
        assert_eq!(count(rule, symbols.len(), symbol), expected, "{symbols:?}");
        if (2..=SMALL).contains(&symbols.len()) {
            assert_eq!(count_small::<R, SMALL>(rule, symbols.len(), symbol), expected, "{symbols:?}");
        }
        if symbols.len() >= 2 {
            assert_eq!(count_large(rule, symbols.len(), symbol), expected, "{symbols:?}");
        }
        expected
    }

    #[test]
    fn a_later_merge_of_a_pair_replaces_the_earlier_one() {
        // Many pairs listed twice, in an order the table's build does not keep.
        let mut list = Vec::new();
        for i in 0..3000u32 {
            list.push(Merge { left: i % 1000, right: i % 7, priority: i, joined: 5000 + i });
        }
        list.reverse();
        let merges = Merges::new(list);
        for i in 0..3000u32 {
            let last = (0..3000u32).filter(|j| (j % 1000, j % 7) == (i % 1000, i % 7)).max().unwrap();
            assert_eq!(merges.key(i % 1000, i % 7), u64::from(last) << 32 | u64::from(5000 + last));
        }
        assert_eq!(merges.key(1000, 0), NONE);
    }

    /// The cache answers as the table does, for pairs that collide in it, pairs asked
    /// twice, absent pairs, and after it is cleared for another table.
    #[test]
    fn the_join_cache_answers_as_the_table_does() {
        let table = |shift: u32| {
            Merges::new(
                (0..5000u32).map(|i| Merge { left: i % 97, right: i / 97, priority: i + shift, joined: 9000 + i }).collect(),
            )
        };
        let (first, second) = (table(0), table(7));
        let cache = JoinCache::new();
        for (merges, round) in [(&first, 0), (&first, 1), (&second, 2)] {
            if round == 2 {
                cache.clear();
            }
            let cached = cache.over(merges);
            // More pairs than the cache has slots: many share one.
            for left in 0..200u32 {
                for right in 0..120u32 {
                    assert_eq!(cached.key(left, right), merges.key(left, right), "({left}, {right}) in round {round}");
                }
            }
        }
    }

    #[test]
    fn scan_and_heap_merge_like_the_plain_rule() {
        // A small random merge table over 8 base symbols, joined tokens numbered from 8.
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut random = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..50 {
            let mut list = Vec::new();
            for joined in 8..60u32 {
                let left = (random() % u64::from(joined)) as u32;
                let right = (random() % u64::from(joined)) as u32;
                list.push(Merge { left, right, priority: joined - 8, joined });
            }
            let merges = Merges::new(list);
            let cache = JoinCache::new();
            for len in [0, 1, 2, 3, 7, 16, 17, 20, 63, 64, 65, 200, 256, 257, 400] {
                let symbols: Vec<u32> = (0..len).map(|_| (random() % 8) as u32).collect();
                assert_eq!(check(&cache.over(&merges), &symbols), check(&merges, &symbols));
            }
        }
    }
}
