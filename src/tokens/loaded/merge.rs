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

use rustc_hash::FxHashMap;

/// The merges of a vocabulary: `(left, right)` token ids to the joined token and its
/// priority.
#[derive(Debug, Default)]
pub(super) struct Merges {
    table: FxHashMap<u64, u64>,
}

/// "No merge" key: above every `(priority, position)` pair.
const NONE: u64 = u64::MAX;

/// Most symbols merged with the array scan.
const SMALL: usize = 64;

impl Merges {
    /// Records that `left` then `right` join into `joined` with `priority` (lower merges
    /// first). A later record of the same pair replaces the earlier one, as in Hugging
    /// Face's loader (a ranks file cannot repeat a pair).
    pub(super) fn insert(&mut self, left: u32, right: u32, priority: u32, joined: u32) {
        self.table
            .insert(pair_key(left, right), u64::from(priority) << 32 | u64::from(joined));
    }

    /// The joined token and priority of `left` then `right`, if they merge.
    #[inline]
    fn get(&self, left: u32, right: u32) -> Option<(u32, u32)> {
        self.table
            .get(&pair_key(left, right))
            .map(|&packed| ((packed >> 32) as u32, packed as u32))
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
        self.table.get(&pair_key(left, right)).copied().unwrap_or(NONE)
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
            let mut merges = Merges::default();
            for joined in 8..60u32 {
                let left = (random() % u64::from(joined)) as u32;
                let right = (random() % u64::from(joined)) as u32;
                let priority = (random() % 40) as u32;
                merges.insert(left, right, priority, joined);
            }
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
