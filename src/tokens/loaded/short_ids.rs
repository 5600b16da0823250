//! The ids of a vocabulary's short tokens, for the lookups a load makes.
//!
//! A `tokenizer.json` names each merge by its two tokens' strings: loading Gemma 3 looks up a
//! million of them. The vocabulary's own table ([`Vocab`](super::vocab::Vocab)) keeps 32
//! bytes a slot for counting, 16 MB for 262,144 tokens, and a lookup there is a miss in the
//! cache and in the address translation. Nine halves in ten are tokens of up to seven bytes,
//! which fit in one word with their length: this table of only those tokens (12 bytes a slot,
//! 3 MB for Gemma 3) finds them, exactly, with one read in a table the cache holds. It lives
//! only while the merges are read.

use super::vocab::key;

/// Longest token kept: its bytes and its length fit in one word.
pub(super) const SHORT: usize = 7;

/// A slot: a token's word (see [`short_key`]) in two halves, and its id ([`EMPTY`]: a free
/// slot).
#[derive(Clone, Copy, Debug)]
struct Slot {
    key: [u32; 2],
    id: u32,
}

/// The id of a free slot (token ids are below 2^31).
const EMPTY: u32 = u32::MAX;

/// Short tokens to ids: an open-addressing table (linear probing, at most half full).
#[derive(Debug)]
pub(super) struct ShortIds {
    /// A power of two long.
    slots: Vec<Slot>,
}

/// The word of a token of up to [`SHORT`] bytes: its bytes (little-endian) and its length in
/// the top byte; `None` for a longer token.
#[inline]
pub(super) fn short_key(bytes: &[u8]) -> Option<u64> {
    // The vocabulary's key of such a token is its bytes padded, then its length in the
    // top byte of the second word.
    let [low, high] = key(bytes);
    (bytes.len() <= SHORT).then_some(low | high)
}

/// The bytes of a token from its word.
pub(super) fn short_bytes(key: u64) -> Vec<u8> {
    key.to_le_bytes()[..(key >> 56) as usize].to_vec()
}

#[inline]
fn home(key: u64, bits: u32) -> usize {
    (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as usize
}

impl ShortIds {
    /// The table of the short ones of `tokens` (bytes and id; distinct tokens).
    pub(super) fn new<'t>(tokens: impl Iterator<Item = (&'t [u8], u32)> + Clone) -> ShortIds {
        let count = tokens.clone().filter(|(bytes, _)| bytes.len() <= SHORT).count();
        let len = (count * 2).next_power_of_two().max(16);
        let bits = len.trailing_zeros();
        // Inserted in file order: the table is small enough for the cache.
        let mut slots = vec![Slot { key: [0; 2], id: EMPTY }; len];
        for (key, id) in tokens.filter_map(|(bytes, id)| Some((short_key(bytes)?, id))) {
            let mut at = home(key, bits);
            while slots[at].id != EMPTY {
                at = (at + 1) & (len - 1);
            }
            slots[at] = Slot { key: [key as u32, (key >> 32) as u32], id };
        }
        ShortIds { slots }
    }

    fn bits(&self) -> u32 {
        self.slots.len().trailing_zeros()
    }

    /// The ids of the tokens of many words at once (`out[i]` for `keys[i]`, see
    /// [`short_key`]). Each group of lookups first reads all its slots, which the processor
    /// then fetches together.
    pub(super) fn get_batch(&self, keys: &[u64], out: &mut Vec<Option<u32>>) {
        const GROUP: usize = 16;
        out.clear();
        let bits = self.bits();
        let mask = self.slots.len() - 1;
        for group in keys.chunks(GROUP) {
            let mut homes = [0usize; GROUP];
            let mut first = [EMPTY; GROUP];
            for (k, &key) in group.iter().enumerate() {
                homes[k] = home(key, bits);
                first[k] = self.slots[homes[k]].id;
            }
            for (k, &key) in group.iter().enumerate() {
                let wanted = [key as u32, (key >> 32) as u32];
                let mut at = homes[k];
                let mut id = first[k];
                out.push(loop {
                    if id == EMPTY {
                        break None;
                    }
                    if self.slots[at].key == wanted {
                        break Some(id);
                    }
                    at = (at + 1) & mask;
                    id = self.slots[at].id;
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_exactly_the_short_tokens() {
        // Tokens of 0 to 9 bytes, zero bytes included (a padded word must not match them).
        let mut tokens: Vec<(Vec<u8>, u32)> = Vec::new();
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        while tokens.len() < 5000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let len = (state % 10) as usize;
            let bytes: Vec<u8> = state.to_le_bytes().iter().chain(&[0, 1]).take(len).map(|b| b % 4).collect();
            if !tokens.iter().any(|(t, _)| *t == bytes) {
                tokens.push((bytes, tokens.len() as u32 * 3));
            }
        }
        let (known, unknown) = tokens.split_at(4000);
        let table = ShortIds::new(known.iter().map(|(t, id)| (t.as_slice(), *id)));
        let queries: Vec<&(Vec<u8>, u32)> = tokens.iter().filter(|(t, _)| t.len() <= SHORT).collect();
        let keys: Vec<u64> = queries.iter().map(|(t, _)| short_key(t).unwrap()).collect();
        let mut found = Vec::new();
        table.get_batch(&keys, &mut found);
        for ((token, id), (found, key)) in queries.iter().zip(found.iter().zip(&keys)) {
            let expected = known.iter().any(|(t, _)| t == token).then_some(*id);
            assert_eq!(*found, expected, "{token:?}");
            assert_eq!(short_bytes(*key), *token);
        }
        assert!(unknown.iter().any(|(t, _)| t.len() <= SHORT));
        assert_eq!(short_key(&[1; 8]), None);
    }
}
