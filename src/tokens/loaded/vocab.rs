//! A vocabulary table: token bytes to token id, built without an allocation per token.
//!
//! All token bytes sit end to end in one buffer; an open-addressing index (at most half
//! full, linear probing) holds each token's first 15 bytes, length and id, so most lookups
//! read one slot and never the buffer. Loading a 262,144-token vocabulary is then a few
//! large allocations instead of 262,144 small ones, and a lookup is one cache miss.

use super::table::{Filling, by_home};

/// A slot of the index: the token's key (its first 15 bytes and its length, see
/// [`key`]), its id, and its entry number plus one (0: the slot is empty).
#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    key: [u64; 2],
    id: u32,
    entry: u32,
}

/// Token bytes to id.
#[derive(Debug, Default)]
pub(super) struct Vocab {
    /// Every token's bytes, end to end.
    bytes: Vec<u8>,
    /// Where each token's bytes end; the previous one's end (or 0) starts them.
    ends: Vec<u32>,
    /// The index (a power of two long, at most half full).
    slots: Vec<Slot>,
    /// Entry number plus one of each id (0: no token has it); empty when the ids are too
    /// sparse for a list.
    by_id: Vec<u32>,
}

/// Longest token the key holds whole: a token up to this long is found without reading its
/// bytes from the buffer (97% of the lookups a load makes).
const INLINE: usize = 15;

/// The first 15 bytes of `bytes` and a last byte telling the length (the length itself up
/// to 15; above, 128 plus the length's low bits, and the bytes must then be compared): the
/// little-endian halves of `[bytes[..15] padded with zeros, length byte]`, read with
/// overlapping loads instead of a copy of variable length.
#[inline]
pub(super) fn key(bytes: &[u8]) -> [u64; 2] {
    let len = bytes.len();
    let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap_or_default());
    let half = |at: usize| u64::from(u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap_or_default()));
    let (low, high) = match len {
        0 => (0, 0),
        1..=3 => {
            let (first, middle, last) = (bytes[0], bytes[len / 2], bytes[len - 1]);
            (u64::from(first) | u64::from(middle) << (8 * (len / 2)) | u64::from(last) << (8 * (len - 1)), 0)
        }
        4..=7 => (half(0) | half(len - 4) << (8 * (len - 4)), 0),
        // The last eight bytes, shifted down so that bytes 8.. come first (none when len is 8).
        8..=15 => (word(0), word(len - 8) >> (8 * (15 - len)) >> 8),
        _ => (word(0), word(8) & 0x00FF_FFFF_FFFF_FFFF),
    };
    let tag = if len <= INLINE { len as u64 } else { 0x80 | (len & 0x7F) as u64 };
    [low, high | tag << 56]
}

/// Where a key's search starts among `bits`-bit slot numbers (the high bits of a
/// multiplicative hash, which mix every bit of the key).
#[inline]
fn home(key: [u64; 2], bits: u32) -> usize {
    let h = (key[0].wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ key[1]).wrapping_mul(0xD6E8_FEB8_6659_FD93);
    (h >> (64 - bits)) as usize
}

/// Tokens gathered for a [`Vocab`]: bytes end to end and ids, not indexed yet.
#[derive(Debug, Default)]
pub(super) struct Tokens {
    bytes: Vec<u8>,
    ends: Vec<u32>,
    ids: Vec<u32>,
}

/// What [`Tokens::index`] found twice.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Duplicate {
    /// A token given twice: its second id.
    Token(u32),
    /// An id given to two tokens: the id and the two tokens' bytes.
    Id(u32, Vec<u8>, Vec<u8>),
}

impl Duplicate {
    /// What is wrong, in the words of a file whose ids are called `ids` ("id", "rank").
    pub(super) fn describe(&self, ids: &str) -> String {
        match self {
            Duplicate::Token(id) => format!("the token of {ids} {id} appears twice"),
            Duplicate::Id(id, first, second) => format!(
                "{ids} {id} is given to two tokens, {:?} and {:?}",
                String::from_utf8_lossy(first),
                String::from_utf8_lossy(second)
            ),
        }
    }
}

impl Tokens {
    /// Room for `tokens` tokens of `bytes` bytes in all (hints only).
    pub(super) fn with_capacity(tokens: usize, bytes: usize) -> Tokens {
        Tokens { bytes: Vec::with_capacity(bytes), ends: Vec::with_capacity(tokens), ids: Vec::with_capacity(tokens) }
    }

    /// Adds a token.
    pub(super) fn push(&mut self, bytes: &[u8], id: u32) {
        self.bytes.extend_from_slice(bytes);
        self.ends.push(self.bytes.len() as u32);
        self.ids.push(id);
    }

    /// Adds a token whose bytes `write` appends to the buffer it is given; when `write`
    /// fails, nothing is added.
    pub(super) fn push_with<E>(&mut self, id: u32, write: impl FnOnce(&mut Vec<u8>) -> Result<(), E>) -> Result<(), E> {
        let start = self.bytes.len();
        if let Err(e) = write(&mut self.bytes) {
            self.bytes.truncate(start);
            return Err(e);
        }
        self.ends.push(self.bytes.len() as u32);
        self.ids.push(id);
        Ok(())
    }

    /// Each token's bytes and id, in the order they were added.
    pub(super) fn iter(&self) -> impl Iterator<Item = (&[u8], u32)> + Clone {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts.zip(&self.ends).zip(&self.ids).map(|((start, &end), &id)| (&self.bytes[start as usize..end as usize], id))
    }

    /// The table of these tokens; fails on the first id given to two tokens, then on the
    /// first token that repeats an earlier one.
    pub(super) fn index(self) -> Result<Vocab, Duplicate> {
        let len = (self.ends.len() * 2).next_power_of_two().max(16);
        let mut vocab = Vocab { bytes: self.bytes, ends: self.ends, slots: Vec::new(), by_id: Vec::new() };
        let largest = self.ids.iter().copied().max().map_or(0, |id| id as usize + 1);
        if largest <= 2 * self.ids.len() + 1024 {
            vocab.by_id = vec![0; largest];
            for (entry, &id) in self.ids.iter().enumerate() {
                let earlier = std::mem::replace(&mut vocab.by_id[id as usize], entry as u32 + 1);
                if earlier != 0 {
                    let (first, second) = (vocab.token(earlier as usize - 1), vocab.token(entry));
                    return Err(Duplicate::Id(id, first.to_vec(), second.to_vec()));
                }
            }
        } else {
            let mut ids = self.ids.clone();
            ids.sort_unstable();
            if let Some(pair) = ids.windows(2).find(|pair| pair[0] == pair[1]) {
                let mut entries = self.ids.iter().enumerate().filter(|&(_, &id)| id == pair[0]).map(|(entry, _)| entry);
                let (first, second) = (entries.next().expect("two entries"), entries.next().expect("two entries"));
                return Err(Duplicate::Id(pair[0], vocab.token(first).to_vec(), vocab.token(second).to_vec()));
            }
        }
        let bits = len.trailing_zeros();
        // (home slot, entry): eight bytes an item to sort; the key is found again when the
        // item is placed (the token bytes are a fraction of the size of the table).
        let mut items: Vec<(u32, u32)> =
            (0..vocab.ends.len()).map(|entry| (home(key(vocab.token(entry)), bits) as u32, entry as u32)).collect();
        by_home(&mut items, bits, |&(start, _)| start as usize);
        let mut slots = Filling::new(bits, Slot::default());
        for (start, entry) in items {
            let bytes = vocab.token(entry as usize);
            let item = Slot { key: key(bytes), id: self.ids[entry as usize], entry: entry + 1 };
            let mut at = start as usize;
            loop {
                let slot = slots.slot(at);
                if slot.entry == 0 {
                    *slot = item;
                    break;
                }
                if slot.key == item.key && (bytes.len() <= INLINE || vocab.token(slot.entry as usize - 1) == bytes) {
                    // Named by the id of the later one.
                    let later = entry.max(slot.entry - 1);
                    return Err(Duplicate::Token(self.ids[later as usize]));
                }
                at = (at + 1) & (len - 1);
            }
        }
        vocab.slots = slots.finish();
        Ok(vocab)
    }
}

impl Vocab {
    /// Number of tokens.
    pub(super) fn len(&self) -> usize {
        self.ends.len()
    }

    /// The bytes of the token `id`; `None` when no token has it, or when the ids are too
    /// sparse for a list of them (see [`Tokens::index`]).
    pub(super) fn bytes_of(&self, id: u32) -> Option<&[u8]> {
        match self.by_id.get(id as usize) {
            Some(&entry) if entry != 0 => Some(self.token(entry as usize - 1)),
            _ => None,
        }
    }

    /// Above every id [`Vocab::bytes_of`] knows.
    pub(super) fn id_limit(&self) -> usize {
        self.by_id.len()
    }

    fn token(&self, entry: usize) -> &[u8] {
        let start = if entry == 0 { 0 } else { self.ends[entry - 1] as usize };
        &self.bytes[start..self.ends[entry] as usize]
    }

    fn bits(&self) -> u32 {
        self.slots.len().trailing_zeros()
    }

    /// Whether `id` is the id of the token `left` then `right` spell together (a cheap check
    /// when the ids are dense).
    #[inline]
    pub(super) fn is_joined(&self, id: u32, left: &[u8], right: &[u8]) -> bool {
        self.bytes_of(id)
            .is_some_and(|token| token.len() == left.len() + right.len() && token.starts_with(left) && token.ends_with(right))
    }

    /// The id of `bytes`.
    #[inline]
    pub(super) fn get(&self, bytes: &[u8]) -> Option<u32> {
        let key = key(bytes);
        self.find(bytes, key, home(key, self.bits()))
    }

    #[inline]
    fn find(&self, bytes: &[u8], key: [u64; 2], home: usize) -> Option<u32> {
        let mask = self.slots.len() - 1;
        let mut at = home;
        loop {
            let slot = &self.slots[at];
            if slot.entry == 0 {
                return None;
            }
            if slot.key == key && (bytes.len() <= INLINE || self.token(slot.entry as usize - 1) == bytes) {
                return Some(slot.id);
            }
            at = (at + 1) & mask;
        }
    }

    /// The ids of many tokens at once (`out[i]` for `queries[i]`). Each group of lookups
    /// first reads all its slots, which the processor then fetches from memory together,
    /// instead of waiting for one cache miss after another.
    pub(super) fn get_batch(&self, queries: &[&[u8]], out: &mut Vec<Option<u32>>) {
        const GROUP: usize = 16;
        out.clear();
        let bits = self.bits();
        for group in queries.chunks(GROUP) {
            let mut keys = [[0u64; 2]; GROUP];
            let mut homes = [0usize; GROUP];
            let mut first = [0u32; GROUP];
            for (k, bytes) in group.iter().enumerate() {
                keys[k] = key(bytes);
                homes[k] = home(keys[k], bits);
                first[k] = self.slots[homes[k]].entry;
            }
            for (k, bytes) in group.iter().enumerate() {
                out.push(if first[k] == 0 { None } else { self.find(bytes, keys[k], homes[k]) });
            }
        }
    }

    /// The id of every two-byte token, at `first << 8 | second` (`u32::MAX`: none), read
    /// from the index alone (a two-byte token's key holds its bytes).
    pub(super) fn two_byte_ids(&self) -> Box<[u32]> {
        let mut ids = vec![u32::MAX; 1 << 16].into_boxed_slice();
        for slot in &self.slots {
            if slot.entry != 0 && slot.key[1] >> 56 == 2 {
                ids[(slot.key[0] as usize & 0xFF) << 8 | (slot.key[0] as usize >> 8 & 0xFF)] = slot.id;
            }
        }
        ids
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_is_the_padded_head_and_the_length() {
        let bytes: Vec<u8> = (1..=40).collect();
        for start in 0..3 {
            for len in 0..=(bytes.len() - start) {
                let token = &bytes[start..start + len];
                let mut plain = [0u8; 16];
                plain[..len.min(INLINE)].copy_from_slice(&token[..len.min(INLINE)]);
                plain[15] = if len <= INLINE { len as u8 } else { 0x80 | (len & 0x7F) as u8 };
                let expected =
                    [u64::from_le_bytes(plain[..8].try_into().unwrap()), u64::from_le_bytes(plain[8..].try_into().unwrap())];
                assert_eq!(key(token), expected, "{token:?}");
            }
        }
    }

    #[test]
    fn finds_what_was_added_and_refuses_duplicates() {
        let mut tokens = Tokens::with_capacity(0, 0);
        let mut expected = std::collections::HashMap::new();
        for i in 0..3001u32 {
            // Short and long tokens, long ones sharing their first 15 bytes.
            let n = i * 7919 % 3001;
            let token = if n % 3 == 0 { format!("{}{n}", "x".repeat(15 + n as usize % 200)) } else { format!("t{n}") };
            if i % 2 == 0 {
                tokens.push(token.as_bytes(), i);
            } else {
                tokens
                    .push_with(i, |buffer| {
                        buffer.extend_from_slice(token.as_bytes());
                        Ok::<_, ()>(())
                    })
                    .unwrap();
            }
            expected.insert(token.into_bytes(), i);
        }
        assert_eq!(
            tokens.push_with(9, |buffer| {
                buffer.push(b'z');
                Err("bad")
            }),
            Err("bad")
        );
        let vocab = tokens.index().unwrap();
        assert_eq!(vocab.len(), expected.len());
        let queries: Vec<&[u8]> = expected.keys().map(|k| k.as_slice()).chain([&b"absent"[..], b"", b"z"]).collect();
        let mut batch = Vec::new();
        vocab.get_batch(&queries, &mut batch);
        for (query, found) in queries.iter().zip(&batch) {
            assert_eq!(vocab.get(query), expected.get(*query).copied());
            assert_eq!(*found, expected.get(*query).copied());
        }
        let two_bytes = vocab.two_byte_ids();
        for first in 0..=255u8 {
            for second in 0..=255u8 {
                let id = two_bytes[usize::from(first) << 8 | usize::from(second)];
                assert_eq!(vocab.get(&[first, second]), (id != u32::MAX).then_some(id));
            }
        }
        for (token, &id) in &expected {
            let (left, right) = token.split_at(token.len() / 2);
            assert!(vocab.is_joined(id, left, right) && !vocab.is_joined(id + 1, left, right));
            assert!(!vocab.is_joined(id, token, b"x") && !vocab.is_joined(id, b"absent", b""));
        }
        let long = "y".repeat(40);
        for repeated in ["t7", long.as_str()] {
            let mut tokens = Tokens::with_capacity(0, 0);
            tokens.push(repeated.as_bytes(), 1);
            tokens.push(b"other", 2);
            tokens.push(repeated.as_bytes(), 3);
            assert_eq!(tokens.index().err(), Some(Duplicate::Token(3)));
        }
        // An id given to two tokens, with ids dense (a table by id) and sparse (sorted).
        for shared in [1, 1 << 30] {
            let mut tokens = Tokens::with_capacity(0, 0);
            tokens.push(b"a", shared);
            tokens.push(b"b", 7);
            tokens.push(b"c", shared);
            assert_eq!(tokens.index().err(), Some(Duplicate::Id(shared, b"a".to_vec(), b"c".to_vec())), "{shared}");
        }
    }
}
