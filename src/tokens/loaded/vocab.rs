//! A vocabulary table: token bytes to token id, built without an allocation per token.
//!
//! All token bytes sit end to end in one buffer; an open-addressing index (at most half
//! full, linear probing) holds each token's first 15 bytes, length and id, so most lookups
//! read one slot and never the buffer. Loading a 262,144-token vocabulary is then a few
//! large allocations instead of 262,144 small ones, and a lookup is one cache miss.

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
}

/// Longest token the key holds whole: a token up to this long is found without reading its
/// bytes from the buffer (97% of the lookups a load makes).
const INLINE: usize = 15;

/// The first 15 bytes of `bytes` and a last byte telling the length (the length itself up
/// to 15; above, 128 plus the length's low bits, and the bytes must then be compared).
#[inline]
fn key(bytes: &[u8]) -> [u64; 2] {
    let mut key = [0u8; 16];
    let head = bytes.len().min(INLINE);
    key[..head].copy_from_slice(&bytes[..head]);
    key[15] = if bytes.len() <= INLINE { bytes.len() as u8 } else { 0x80 | (bytes.len() & 0x7F) as u8 };
    let (low, high) = key.split_at(8);
    [u64::from_le_bytes(low.try_into().unwrap_or_default()), u64::from_le_bytes(high.try_into().unwrap_or_default())]
}

/// Where a key's search starts among `bits`-bit slot numbers (the high bits of a
/// multiplicative hash, which mix every bit of the key).
#[inline]
fn home(key: [u64; 2], bits: u32) -> usize {
    let h = (key[0].wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ key[1]).wrapping_mul(0xD6E8_FEB8_6659_FD93);
    (h >> (64 - bits)) as usize
}

impl Vocab {
    /// An empty table sized for `tokens` tokens of `bytes` bytes in all (hints only).
    pub(super) fn with_capacity(tokens: usize, bytes: usize) -> Vocab {
        let mut vocab = Vocab { bytes: Vec::with_capacity(bytes), ends: Vec::with_capacity(tokens), slots: Vec::new() };
        vocab.resize((tokens * 2).next_power_of_two().max(16));
        vocab
    }

    /// Number of tokens.
    pub(super) fn len(&self) -> usize {
        self.ends.len()
    }

    fn token(&self, entry: usize) -> &[u8] {
        let start = if entry == 0 { 0 } else { self.ends[entry - 1] as usize };
        &self.bytes[start..self.ends[entry] as usize]
    }

    fn bits(&self) -> u32 {
        self.slots.len().trailing_zeros()
    }

    fn resize(&mut self, slots: usize) {
        let old = std::mem::replace(&mut self.slots, vec![Slot::default(); slots]);
        let (mask, bits) = (slots - 1, self.bits());
        for slot in old.into_iter().filter(|s| s.entry != 0) {
            let mut at = home(slot.key, bits);
            while self.slots[at].entry != 0 {
                at = (at + 1) & mask;
            }
            self.slots[at] = slot;
        }
    }

    /// The slot of `bytes` (key `key`): where it is, or the empty slot where it would go.
    #[inline]
    fn find(&self, bytes: &[u8], key: [u64; 2]) -> (usize, Option<u32>) {
        let mask = self.slots.len() - 1;
        let mut at = home(key, self.bits());
        loop {
            let slot = &self.slots[at];
            if slot.entry == 0 {
                return (at, None);
            }
            if slot.key == key && (bytes.len() <= INLINE || self.token(slot.entry as usize - 1) == bytes) {
                return (at, Some(slot.id));
            }
            at = (at + 1) & mask;
        }
    }

    /// The id of `bytes`.
    #[inline]
    pub(super) fn get(&self, bytes: &[u8]) -> Option<u32> {
        self.find(bytes, key(bytes)).1
    }

    /// Adds `bytes` with `id`; when `bytes` is already a token, keeps the table as it is and
    /// returns that token's id.
    pub(super) fn insert(&mut self, bytes: &[u8], id: u32) -> Result<(), u32> {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(bytes);
        self.insert_last(start, id)
    }

    /// Adds the bytes from `start` to the end of the buffer (appended by the caller) as a
    /// token with `id`; when they are already a token, removes them again and returns that
    /// token's id.
    fn insert_last(&mut self, start: usize, id: u32) -> Result<(), u32> {
        if (self.ends.len() + 1) * 2 > self.slots.len() {
            self.resize(self.slots.len() * 2);
        }
        let key = key(&self.bytes[start..]);
        let (at, found) = self.find(&self.bytes[start..], key);
        if let Some(existing) = found {
            self.bytes.truncate(start);
            return Err(existing);
        }
        self.ends.push(self.bytes.len() as u32);
        self.slots[at] = Slot { key, id, entry: self.ends.len() as u32 };
        Ok(())
    }

    /// Adds a token whose bytes `write` appends to the buffer it is given; see
    /// [`Vocab::insert`]. `write` may fail, and then nothing is added.
    pub(super) fn insert_with<E>(&mut self, id: u32, write: impl FnOnce(&mut Vec<u8>) -> Result<(), E>) -> Result<Result<(), u32>, E> {
        let start = self.bytes.len();
        if let Err(e) = write(&mut self.bytes) {
            self.bytes.truncate(start);
            return Err(e);
        }
        Ok(self.insert_last(start, id))
    }

    /// Every token's bytes and id.
    pub(super) fn iter(&self) -> impl Iterator<Item = (&[u8], u32)> {
        self.slots.iter().filter(|s| s.entry != 0).map(|s| (self.token(s.entry as usize - 1), s.id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_what_was_added_and_refuses_duplicates() {
        let mut vocab = Vocab::with_capacity(0, 0);
        let mut expected = std::collections::HashMap::new();
        for i in 0..5000u32 {
            // Short and long tokens, long ones sharing their first 15 bytes.
            let n = i * 7919 % 3001;
            let token = if n % 3 == 0 { format!("{}{n}", "x".repeat(15 + n as usize % 200)) } else { format!("t{n}") }.into_bytes();
            let first = *expected.entry(token.clone()).or_insert(i);
            let result = vocab.insert(&token, i);
            if first == i {
                assert_eq!(result, Ok(()));
            } else {
                assert_eq!(result, Err(first));
            }
        }
        assert_eq!(vocab.len(), expected.len());
        for (token, id) in &expected {
            assert_eq!(vocab.get(token), Some(*id));
        }
        assert_eq!(vocab.get(b"absent"), None);
        assert_eq!(vocab.get(b""), None);
        let written = vocab.insert_with(9, |buffer| {
            buffer.extend_from_slice(b"new");
            Ok::<_, ()>(())
        });
        assert_eq!(written, Ok(Ok(())));
        assert_eq!(vocab.insert_with(10, |_| Err("bad")), Err("bad"));
        assert_eq!(vocab.get(b"new"), Some(9));
        assert_eq!(vocab.iter().count(), expected.len() + 1);
    }
}
