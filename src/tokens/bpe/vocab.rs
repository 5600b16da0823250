//! The mergeable-token vocabularies: byte string → rank, in tables built at
//! compile time (see `layout`), so looking a token up needs no initialisation.
//! Only the encoding families whose cargo feature is on are built in.

#[cfg(feature = "p50k")]
use super::layout::R50K_RANKS;
use super::layout::{
    BUCKET_BYTES, CHAR_PAGE_SIZE, CONTINUATION_BYTES, ENTRY_MATCH_MASK, LEAD_BYTES, PAIR_RANKS_AT, PAIR_RECORD_BYTES,
    PAIR_RECORDS_AT, PAIR_SET_BYTES, bucket_of, entry_len, entry_match, entry_rank, estimate, share,
};
use crate::tokens::utf8_char::two_or_three_byte_char;

/// A read-only vocabulary: a bucketed index from token bytes to rank, a
/// direct table for one- and two-byte strings, the bit sets of the ranks that
/// can be halves of a token, and the characters merging may start from whole.
pub(super) struct Vocab {
    id: u8,
    /// Ranks from this one on are not tokens of this vocabulary (r50k_base
    /// uses p50k_base's tables without its last tokens).
    ranks: u32,
    buckets: &'static [u8],
    entries: &'static [u8],
    blob: &'static [u8],
    short: &'static [u8],
    /// The byte pairs that are tokens (see `layout`).
    pairs: &'static [u8; PAIR_SET_BYTES],
    sides: &'static [u8],
    chars: CharTable,
    bucket_count: usize,
    /// [`share`] of the entries and of the blob per bucket.
    entry_share: u64,
    blob_share: u64,
}

/// The character table (see `layout`, "Character table").
struct CharTable {
    index: &'static [u8],
    pages: &'static [u8],
    entries: &'static [u8],
}

macro_rules! vocab {
    ($id:literal, $name:literal, $ranks:expr) => {
        vocab!($id, $name, $name, $ranks)
    };
    ($id:literal, $name:literal, $pairs:literal, $ranks:expr) => {
        Vocab::new(
            $id,
            $ranks,
            include_bytes!(concat!(env!("OUT_DIR"), "/bpe_", $name, "_buckets.bin")),
            include_bytes!(concat!(env!("OUT_DIR"), "/bpe_", $name, "_entries.bin")),
            include_bytes!(concat!(env!("OUT_DIR"), "/bpe_", $name, "_blob.bin")),
            include_bytes!(concat!(env!("OUT_DIR"), "/bpe_", $name, "_short.bin")),
            include_bytes!(concat!(env!("OUT_DIR"), "/bpe_", $pairs, "_pairs.bin")),
            include_bytes!(concat!(env!("OUT_DIR"), "/bpe_", $name, "_sides.bin")),
            CharTable {
                index: include_bytes!(concat!(env!("OUT_DIR"), "/bpe_", $name, "_char_index.bin")),
                pages: include_bytes!(concat!(env!("OUT_DIR"), "/bpe_", $name, "_char_pages.bin")),
                entries: include_bytes!(concat!(env!("OUT_DIR"), "/bpe_", $name, "_char_entries.bin")),
            },
        )
    };
}

/// Mergeable ranks of o200k_base (and o200k_harmony).
#[cfg(feature = "o200k")]
pub(super) static O200K: Vocab = vocab!(0, "o200k", u32::MAX);
/// Mergeable ranks of cl100k_base.
#[cfg(feature = "cl100k")]
pub(super) static CL100K: Vocab = vocab!(1, "cl100k", u32::MAX);
/// Mergeable ranks of p50k_base.
#[cfg(feature = "p50k")]
pub(super) static P50K: Vocab = vocab!(2, "p50k", u32::MAX);
/// Mergeable ranks of r50k_base: p50k_base's below [`R50K_RANKS`].
#[cfg(feature = "p50k")]
pub(super) static R50K: Vocab = vocab!(3, "p50k", "r50k", R50K_RANKS);

impl Vocab {
    /// Wraps the tables written by the build step.
    #[allow(clippy::too_many_arguments)]
    const fn new(
        id: u8,
        ranks: u32,
        buckets: &'static [u8],
        entries: &'static [u8],
        blob: &'static [u8],
        short: &'static [u8],
        pairs: &'static [u8; PAIR_SET_BYTES],
        sides: &'static [u8],
        chars: CharTable,
    ) -> Self {
        Vocab {
            id,
            ranks,
            buckets,
            entries,
            blob,
            short,
            pairs,
            sides,
            chars,
            // One closing record follows the buckets.
            bucket_count: buckets.len() / BUCKET_BYTES - 1,
            entry_share: share(entries.len() / 4, buckets.len() / BUCKET_BYTES - 1),
            blob_share: share(blob.len(), buckets.len() / BUCKET_BYTES - 1),
        }
    }

    /// Bytes of the tables, for the size report.
    pub(super) fn table_bytes(&self) -> usize {
        let chars = self.chars.index.len() + self.chars.pages.len() + self.chars.entries.len();
        self.buckets.len() + self.entries.len() + self.blob.len() + self.short.len() + self.pairs.len() + self.sides.len() + chars
    }

    /// Whether the tokens `left` and `right` can be the halves of a token at
    /// all; `false` means their concatenation is no token, at the cost of two bit
    /// tests in a small table.
    #[inline(always)]
    pub(super) fn may_join(&self, left: u32, right: u32) -> bool {
        let side_len = self.sides.len() / 2;
        let bit = |offset: usize, rank: u32| {
            let rank = rank as usize;
            rank / 8 < side_len && self.sides.get(offset + rank / 8).is_some_and(|byte| byte >> (rank % 8) & 1 != 0)
        };
        bit(0, left) && bit(side_len, right)
    }

    /// A small number distinguishing this vocabulary from the others.
    #[inline(always)]
    pub(super) fn id(&self) -> u8 {
        self.id
    }

    /// Rank of the single-byte token `[byte]` (every byte is a token).
    #[inline(always)]
    pub(super) fn byte_rank(&self, byte: u8) -> u32 {
        self.word(self.short, usize::from(byte)).unwrap_or(u32::MAX)
    }

    /// Rank of the token whose bytes are exactly `key` (of at least three
    /// bytes; see [`Vocab::pair_rank`] and [`Vocab::byte_rank`] for shorter
    /// ones), given its [`key_hash`](super::layout::key_hash) `hash`.
    #[inline]
    pub(super) fn rank_hashed(&self, key: &[u8], hash: u64) -> Option<u32> {
        let bucket = bucket_of(hash, self.bucket_count);
        let (first, mut offset) = self.bucket_start(bucket)?;
        let (end, _) = self.bucket_start(bucket + 1)?;
        let wanted = entry_match(key.len(), hash);
        for index in first..end {
            let entry = self.word(self.entries, index)?;
            let len = entry_len(entry);
            if entry & ENTRY_MATCH_MASK == wanted
                && self.blob.get(offset..offset + len).is_some_and(|token| same_bytes(token, key))
            {
                let rank = entry_rank(entry);
                return (rank < self.ranks).then_some(rank);
            }
            offset += len;
        }
        None
    }

    /// The first entry of a bucket and its blob offset, from the estimate and
    /// the bucket's record.
    #[inline(always)]
    fn bucket_start(&self, bucket: usize) -> Option<(usize, usize)> {
        let [entry_low, entry_high, blob_low, blob_high] = self.read(self.buckets, bucket * BUCKET_BYTES)?;
        let first =
            estimate(bucket, self.entry_share).checked_add_signed(isize::from(i16::from_le_bytes([entry_low, entry_high])))?;
        let offset =
            estimate(bucket, self.blob_share).checked_add_signed(isize::from(i16::from_le_bytes([blob_low, blob_high])))?;
        Some((first, offset))
    }

    /// Whether the two bytes `[first, second]` are one token (what
    /// [`Vocab::pair_rank`] says), for counting: one byte of an 8 KB bit set
    /// that stays in the core's caches, instead of the rank behind it.
    #[inline(always)]
    pub(super) fn is_pair_token(&self, first: u8, second: u8) -> bool {
        let pair = usize::from(first) << 8 | usize::from(second);
        self.pairs[pair / 8] >> (pair % 8) & 1 != 0
    }

    /// Rank of the two-byte token `[first, second]`, if there is one.
    #[inline(always)]
    pub(super) fn pair_rank(&self, first: u8, second: u8) -> Option<u32> {
        let pair = usize::from(first) << 8 | usize::from(second);
        let record = PAIR_RECORDS_AT + pair / 64 * PAIR_RECORD_BYTES;
        let word = u64::from_le_bytes(self.read(self.short, record)?);
        let bit = pair % 64;
        if word >> bit & 1 == 0 {
            return None;
        }
        let before = self.word(self.short, record / 4 + 2)? as usize;
        let index = before + (word & ((1 << bit) - 1)).count_ones() as usize;
        let rank = self.word(self.short, PAIR_RANKS_AT / 4 + index)?;
        (rank < self.ranks).then_some(rank)
    }

    /// Rank and length of the character at `piece[at]` if merging may start
    /// from it as one token rather than from its bytes (with the same
    /// result): a character of two or three bytes that is a token, whose
    /// neighbouring bytes in `piece` cannot merge with a part of it first.
    #[inline(always)]
    pub(super) fn whole_char(&self, piece: &[u8], at: usize) -> Option<(u32, usize)> {
        let (code_point, len) = two_or_three_byte_char(piece, at)?;
        let code_point = code_point as usize;
        let page = usize::from(*self.chars.index.get(code_point / CHAR_PAGE_SIZE)?);
        let id =
            self.read(self.chars.pages, (page * CHAR_PAGE_SIZE + code_point % CHAR_PAGE_SIZE) * 2).map(u16::from_le_bytes)?;
        if id == 0 {
            return None;
        }
        let word = |field: usize| self.read(self.chars.entries, (usize::from(id) * 3 + field) * 8).map(u64::from_le_bytes);
        let clear = |field: usize, byte: u8, first: u8| word(field).is_some_and(|bits| bits >> (byte - first) & 1 == 0);
        if let Some(before) = at.checked_sub(1).and_then(|i| piece.get(i)).copied() {
            if !(CONTINUATION_BYTES.contains(&before) && clear(1, before, *CONTINUATION_BYTES.start())) {
                return None;
            }
        }
        if let Some(&after) = piece.get(at + len) {
            if !(LEAD_BYTES.contains(&after) && clear(2, after, *LEAD_BYTES.start())) {
                return None;
            }
        }
        Some((word(0)? as u32, len))
    }

    /// The `index`-th little-endian `u32` of `table`.
    #[inline(always)]
    fn word(&self, table: &[u8], index: usize) -> Option<u32> {
        self.read(table, index * 4).map(u32::from_le_bytes)
    }

    #[inline(always)]
    fn read<const N: usize>(&self, table: &[u8], start: usize) -> Option<[u8; N]> {
        let mut word = [0u8; N];
        word.copy_from_slice(table.get(start..start + N)?);
        Some(word)
    }
}

/// Equality of two byte strings of the same length, without a `memcmp` call
/// for the short keys that dominate.
#[inline(always)]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let len = a.len();
    if len != b.len() {
        return false;
    }
    let word = |s: &[u8], at: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&s[at..at + 8]);
        u64::from_le_bytes(w)
    };
    let half = |s: &[u8], at: usize| {
        let mut w = [0u8; 4];
        w.copy_from_slice(&s[at..at + 4]);
        u32::from_le_bytes(w)
    };
    match len {
        0 => true,
        1..=3 => a[0] == b[0] && a[len / 2] == b[len / 2] && a[len - 1] == b[len - 1],
        4..=8 => half(a, 0) == half(b, 0) && half(a, len - 4) == half(b, len - 4),
        9..=16 => word(a, 0) == word(b, 0) && word(a, len - 8) == word(b, len - 8),
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The built-in vocabularies, with their names.
    fn built_in() -> Vec<(&'static str, &'static Vocab)> {
        let mut vocabs = Vec::new();
        #[cfg(feature = "o200k")]
        vocabs.push(("o200k", &O200K));
        #[cfg(feature = "cl100k")]
        vocabs.push(("cl100k", &CL100K));
        #[cfg(feature = "p50k")]
        vocabs.extend([("p50k", &P50K), ("r50k", &R50K)]);
        vocabs
    }

    /// Counting's bit set of the byte pairs that are tokens agrees with
    /// merging's pair ranks on all 65,536 pairs of every built-in vocabulary
    /// (r50k_base's own set included), and is no trivial set.
    #[test]
    fn pair_set_agrees_with_pair_ranks() {
        for (name, vocab) in built_in() {
            let mut tokens = 0;
            for first in 0..=u8::MAX {
                for second in 0..=u8::MAX {
                    let is_token = vocab.pair_rank(first, second).is_some();
                    assert_eq!(vocab.is_pair_token(first, second), is_token, "{name}: [{first}, {second}]");
                    tokens += usize::from(is_token);
                }
            }
            assert!((1_000..30_000).contains(&tokens), "{name}: {tokens} pairs are tokens");
        }
    }
}
