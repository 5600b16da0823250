//! Byte-pair merging of one piece, counting the tokens it ends up as.
//!
//! Both file formats reduce to one rule: repeatedly join the adjacent pair of symbols with
//! the lowest merge priority, the leftmost on ties, until no adjacent pair merges. In a
//! `tokenizer.json` the priority is the merge's line in `merges` (Hugging Face's
//! `Word::merge_all`); in a ranks file it is the rank of the joined token (tiktoken's
//! `byte_pair_merge`). Short pieces use a scan over arrays on the stack, long ones a binary
//! heap over a linked list, so a million-symbol piece stays `O(n log n)`.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::vocab::by_home;

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
#[derive(Clone, Copy, Debug)]
pub(super) struct Merge {
    pub(super) left: u32,
    pub(super) right: u32,
    pub(super) priority: u32,
    pub(super) joined: u32,
}

/// The key of a free slot: no pair has it (token ids are below 2^31).
const EMPTY: u64 = u64::MAX;

/// "No merge" key: above every `(priority, position)` pair.
const NONE: u64 = u64::MAX;

/// Most symbols merged with the array scan.
const SMALL: usize = 64;

impl Merges {
    /// The table of `merges`. A later merge of the same pair replaces the earlier one, as
    /// in Hugging Face's loader (a ranks file cannot repeat a pair).
    pub(super) fn new(merges: &[Merge]) -> Merges {
        let len = (merges.len() + merges.len() / 2).next_power_of_two().max(16);
        let mut table = Merges { slots: vec![(EMPTY, 0); len] };
        let bits = table.bits();
        let items: Vec<(u64, u64)> = merges
            .iter()
            .map(|m| (pair_key(m.left, m.right), u64::from(m.priority) << 32 | u64::from(m.joined)))
            .collect();
        // In the order of their slots, which keeps the merges of one pair in file order.
        for (key, value) in by_home(items, bits, |&(key, _)| home(key, bits)) {
            let at = table.slot(key);
            table.slots[at] = (key, value);
        }
        table
    }

    fn bits(&self) -> u32 {
        self.slots.len().trailing_zeros()
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

    /// The joined token and priority of `left` then `right`, if they merge.
    #[inline]
    fn get(&self, left: u32, right: u32) -> Option<(u32, u32)> {
        let packed = self.packed(left, right);
        (packed != NONE).then_some(((packed >> 32) as u32, packed as u32))
    }

    /// Number of symbols `symbols` merges down to.
    pub(super) fn count(&self, symbols: &[u32]) -> usize {
        if symbols.len() < 2 {
            symbols.len()
        } else if symbols.len() <= SMALL {
            self.count_small(symbols)
        } else {
            self.count_large(symbols)
        }
    }

    /// `(priority, joined)` packed so that the smaller value merges first; [`NONE`] if
    /// `left` then `right` do not merge. Equal priorities mean the same joined token in
    /// both formats, so the first minimum is the leftmost best pair.
    #[inline]
    fn packed(&self, left: u32, right: u32) -> u64 {
        let slot = self.slots[self.slot(pair_key(left, right))];
        if slot.0 == EMPTY { NONE } else { slot.1 }
    }

    /// The scan: symbols in place in a fixed array that shifts on each merge; `key[i]` is
    /// the packed merge of symbols `i` and `i + 1`.
    fn count_small(&self, symbols: &[u32]) -> usize {
        let mut token = [0u32; SMALL];
        let mut key = [NONE; SMALL];
        let mut len = symbols.len();
        token[..len].copy_from_slice(symbols);
        for i in 0..len - 1 {
            key[i] = self.packed(token[i], token[i + 1]);
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
            token[best] = min as u32;
            token.copy_within(best + 2..len, best + 1);
            key.copy_within(best + 2..len, best + 1);
            len -= 1;
            if len == 1 {
                return 1;
            }
            key[best] = if best + 1 < len {
                self.packed(token[best], token[best + 1])
            } else {
                NONE
            };
            if best > 0 {
                key[best - 1] = self.packed(token[best - 1], token[best]);
            }
        }
    }

    /// The heap over a doubly linked list of symbols, for any length.
    fn count_large(&self, symbols: &[u32]) -> usize {
        let len = symbols.len();
        let mut token = symbols.to_vec();
        let mut next: Vec<usize> = (1..=len).collect();
        let mut prev: Vec<usize> = (0..len).map(|i| i.wrapping_sub(1)).collect();
        let mut alive = vec![true; len];
        let mut heap: BinaryHeap<Reverse<(u32, usize, u32, u32)>> = BinaryHeap::new();
        let push = |heap: &mut BinaryHeap<_>, token: &[u32], left: usize, right: usize| {
            if let Some((priority, _)) = self.get(token[left], token[right]) {
                heap.push(Reverse((priority, left, token[left], token[right])));
            }
        };
        for i in 0..len - 1 {
            push(&mut heap, &token, i, i + 1);
        }
        let mut remaining = len;
        while let Some(Reverse((_, left, left_token, right_token))) = heap.pop() {
            let right = next[left];
            // Stale entries: the left symbol was merged away, or either side changed.
            if !alive[left] || right >= len || token[left] != left_token || token[right] != right_token {
                continue;
            }
            let Some((_, joined)) = self.get(left_token, right_token) else {
                continue;
            };
            token[left] = joined;
            alive[right] = false;
            next[left] = next[right];
            if next[left] < len {
                prev[next[left]] = left;
            }
            remaining -= 1;
            if next[left] < len {
                push(&mut heap, &token, left, next[left]);
            }
            if left > 0 && prev[left] < len {
                push(&mut heap, &token, prev[left], left);
            }
        }
        remaining
    }
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
mod tests {
    use super::*;

    /// The rule written out plainly: join the best pair (lowest priority, leftmost) until
    /// none merges.
    fn reference(merges: &Merges, symbols: &[u32]) -> usize {
        let mut tokens = symbols.to_vec();
        loop {
            let best = (0..tokens.len().saturating_sub(1))
                .filter_map(|i| merges.get(tokens[i], tokens[i + 1]).map(|(p, j)| (p, i, j)))
                .min();
            match best {
                Some((_, i, joined)) => {
                    tokens[i] = joined;
                    tokens.remove(i + 1);
                }
                None => return tokens.len(),
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
                let priority = (random() % 40) as u32;
                list.push(Merge { left, right, priority, joined });
            }
            let merges = Merges::new(&list);
            for len in [0, 1, 2, 3, 7, 20, 63, 64, 65, 200] {
                let symbols: Vec<u32> = (0..len).map(|_| (random() % 8) as u32).collect();
                let expected = reference(&merges, &symbols);
                assert_eq!(merges.count(&symbols), expected, "{symbols:?}");
                if len >= 2 {
                    assert_eq!(merges.count_large(&symbols), expected, "{symbols:?}");
                }
            }
        }
    }
}
