//! Binary layout of the tables that the build step writes and the runtime reads.
//!
//! This file is compiled twice: into the library (as `bpe::layout`) and into the
//! build script (through `#[path]` in `build_tables.rs`). It therefore depends on
//! nothing but `core` and holds only the facts both sides must agree on: the
//! character-class codes, the key hash and the packing of an index entry.
//!
//! # Vocabulary index
//!
//! Per vocabulary, three files for all tokens, sized close to the token bytes
//! themselves (no empty slots, no per-token offset):
//! `entries` (one little-endian `u32` per token, see [`pack_entry`]: rank,
//! length and a tag from the key hash), grouped by bucket ([`bucket_of`], about
//! [`BUCKET_LOAD`] tokens per bucket); `blob` (the token byte strings in the
//! order of `entries`), and `buckets` (per bucket, plus one closing record,
//! two little-endian `i16`: how far the index of its first entry and the blob
//! offset of that entry's bytes are from their [`estimate`], the bucket's
//! share of the totals). A lookup hashes the key once, reads one bucket record
//! (4 bytes: the whole array is small enough to stay in cache) and scans that
//! bucket's few entries (a cache line or two), adding up their lengths to find
//! each one's bytes, and compares bytes only when the length and the tag match.
//!
//! A fourth file, `short`, answers one- and two-byte strings without hashing:
//! [`SHORT_SINGLES`] ranks of the single bytes (`u32`), then the bit set of the
//! 65,536 byte pairs `a * 256 + b` that are tokens, in [`PAIR_WORDS`] records
//! of [`PAIR_RECORD_BYTES`]: a `u64` word of the bit set and the number of pairs
//! in the words before it (`u32`, then 4 bytes of padding), so one cache line
//! answers both; then the ranks of the pairs in order (`u32`); everything
//! little-endian.
//!
//! A fifth file, `sides`, is two bit sets of equal length, indexed by rank:
//! the ranks that occur as the left half of a split of a token into two
//! tokens, then those that occur as the right half. Most pairs of parts fail
//! this test, and merging does not look their concatenation up.
//!
//! A sixth file, `pairs`, is the same bit set of the byte pairs that are
//! tokens alone, [`PAIR_SET_BYTES`] (pair `p` is bit `p % 8` of byte `p / 8`),
//! small enough to stay in the core's caches: counting a two-byte piece needs
//! only whether it is a token. r50k_base has its own (`bpe_r50k_pairs.bin`).
//!
//! r50k_base is p50k_base without its [`P50K_EXTRA`] tokens of runs of spaces
//! (ranks [`R50K_RANKS`] and up): both use p50k's tables, r50k ignoring those
//! ranks. The build step checks that this holds.
//!
//! # Character table
//!
//! Per encoding, three files for the characters of the Basic Multilingual
//! Plane that merging may start from as one token instead of their two or
//! three UTF-8 bytes (why that is exact: `build_tables.rs`, `char_table`):
//! `char_index` (one page number per block of [`CHAR_PAGE_SIZE`] code points),
//! `char_pages` (pages of little-endian `u16` entry ids, `0` for none) and
//! `char_entries` (three little-endian `u64` per id, id 0 unused): the token's
//! rank, the bit set of the bytes before the character (bit `b - 0x80` for a
//! continuation byte `b`) and of the bytes after it (bit `b - 0xC0` for a lead
//! byte `b`) next to which it must still be merged from bytes. Any other
//! neighbouring byte (ASCII) also rules it out; no neighbour (the edge of the
//! piece) never does.
//!
//! # Character-class table
//!
//! Two files: `class_index` (one page number per block of 256 code points) and
//! `class_pages` (pages of 256 class codes). Page 0 is the block U+0000..U+00FF,
//! so `class_pages[b]` is the class of the ASCII byte `b`.

/// A character that is none of the classes below: punctuation, symbols,
/// control characters that are not white space, unassigned code points.
pub const CLASS_OTHER: u8 = 0;
/// `\p{M}`: a combining mark.
pub const CLASS_MARK: u8 = 1;
/// `\p{Lu}` or `\p{Lt}`: an upper-case or title-case letter.
pub const CLASS_UPPER: u8 = 2;
/// `\p{Ll}`: a lower-case letter.
pub const CLASS_LOWER: u8 = 3;
/// `\p{Lm}` or `\p{Lo}`: a modifier or caseless letter (upper and lower for o200k).
pub const CLASS_LETTER_OTHER: u8 = 4;
/// `\p{N}`: a number.
pub const CLASS_NUMBER: u8 = 5;
/// `\s` (Unicode `White_Space`) except `\r` and `\n`.
pub const CLASS_SPACE: u8 = 6;
/// `\r` or `\n`.
pub const CLASS_NEWLINE: u8 = 7;

/// Number of code points per page of the class table.
pub const CLASS_PAGE_SIZE: usize = 256;

/// Code points covered by the character table (the Basic Multilingual Plane).
pub const CHAR_TABLE_CODE_POINTS: usize = 0x1_0000;
/// Number of code points per page of the character table.
pub const CHAR_PAGE_SIZE: usize = 256;
/// The bytes that may precede a character in its table entry's first bit set.
pub const CONTINUATION_BYTES: core::ops::RangeInclusive<u8> = 0x80..=0xBF;
/// The bytes that may follow a character in its table entry's second bit set.
pub const LEAD_BYTES: core::ops::RangeInclusive<u8> = 0xC0..=0xFF;

/// Entry of the short-token table for a pair of bytes that is no token.
pub const NO_PAIR: u32 = u32::MAX;
/// Index of the rank of the single byte `0` in the short-token table.
pub const SINGLE_BYTE_BASE: usize = 1 << 16;
/// Number of entries of the short-token table.
pub const SHORT_TABLE_LEN: usize = SINGLE_BYTE_BASE + 256;

/// Number of single-byte ranks at the start of the short-token table.
pub const SHORT_SINGLES: usize = 256;
/// Number of records (`u64` words) of the byte-pair bit set in the short-token table.
pub const PAIR_WORDS: usize = (1 << 16) / 64;
/// Size in bytes of a record of the byte-pair bit set.
pub const PAIR_RECORD_BYTES: usize = 16;
/// Byte offset of the bit set's records in the short-token table.
pub const PAIR_RECORDS_AT: usize = SHORT_SINGLES * 4;
/// Size in bytes of the bit set of the byte pairs that are tokens (`pairs`).
pub const PAIR_SET_BYTES: usize = (1 << 16) / 8;
/// Byte offset of the pair ranks in the short-token table.
pub const PAIR_RANKS_AT: usize = PAIR_RECORDS_AT + PAIR_WORDS * PAIR_RECORD_BYTES;

/// Number of ranks of r50k_base's mergeable tokens (`0..R50K_RANKS`).
pub const R50K_RANKS: u32 = 50_257;
/// Number of p50k_base's tokens that r50k_base lacks.
pub const P50K_EXTRA: u32 = 24;

/// Average number of tokens per bucket of the vocabulary index.
pub const BUCKET_LOAD: usize = 8;
/// Size in bytes of one bucket record (first entry, blob offset, each as an
/// `i16` difference from its [`estimate`]).
pub const BUCKET_BYTES: usize = 4;

/// The fixed-point share of `total` per bucket that [`estimate`] scales.
pub const fn share(total: usize, buckets: usize) -> u64 {
    ((total as u64) << 32) / buckets as u64
}

/// The estimate of the first entry (or blob offset) of `bucket`: its share of the
/// total, where `share` is [`share`]`(total, buckets)`.
#[inline(always)]
pub fn estimate(bucket: usize, share: u64) -> usize {
    ((bucket as u128 * share as u128) >> 32) as usize
}

const ENTRY_RANK_BITS: u32 = 18;
const ENTRY_LEN_SHIFT: u32 = ENTRY_RANK_BITS;
const ENTRY_TAG_SHIFT: u32 = ENTRY_LEN_SHIFT + 8;
const ENTRY_TAG_BITS: u32 = 32 - ENTRY_TAG_SHIFT;

/// Largest rank an entry can hold.
pub const MAX_RANK: u32 = (1 << ENTRY_RANK_BITS) - 1;
/// Largest token length (in bytes) an entry can hold.
pub const MAX_TOKEN_LEN: usize = 255;

/// Number of buckets of the index of `tokens` tokens (at least one).
pub const fn bucket_count(tokens: usize) -> usize {
    tokens / BUCKET_LOAD + 1
}

/// The bucket of a key hash among `buckets` (the high 32 bits, scaled: no
/// power of two needed).
#[inline(always)]
pub fn bucket_of(hash: u64, buckets: usize) -> usize {
    (((hash >> 32) * buckets as u64) >> 32) as usize
}

/// The tag of a key hash stored in its entry (bits the bucket does not use).
#[inline(always)]
pub fn entry_tag(hash: u64) -> u32 {
    (hash as u32) >> ENTRY_TAG_SHIFT
}

/// An index entry: `rank` at most [`MAX_RANK`], `len` in `1..=MAX_TOKEN_LEN`,
/// `tag` from [`entry_tag`].
pub fn pack_entry(rank: u32, len: usize, tag: u32) -> u32 {
    (rank & MAX_RANK) | (len as u32 & 0xFF) << ENTRY_LEN_SHIFT | (tag & ((1 << ENTRY_TAG_BITS) - 1)) << ENTRY_TAG_SHIFT
}

/// Rank of the token of an entry.
#[inline(always)]
pub fn entry_rank(entry: u32) -> u32 {
    entry & MAX_RANK
}

/// Length in bytes of the token of an entry.
#[inline(always)]
pub fn entry_len(entry: u32) -> usize {
    (entry >> ENTRY_LEN_SHIFT & 0xFF) as usize
}

/// The part of an entry that must match a key of length `len` and hash `hash`
/// (its length and tag), compared with [`ENTRY_MATCH_MASK`] applied.
#[inline(always)]
pub fn entry_match(len: usize, hash: u64) -> u32 {
    (len as u32 & 0xFF) << ENTRY_LEN_SHIFT | entry_tag(hash) << ENTRY_TAG_SHIFT
}

/// Mask of the length and tag of an entry.
pub const ENTRY_MATCH_MASK: u32 = !MAX_RANK;

const MUL_A: u64 = 0x9E37_79B9_7F4A_7C15;
const MUL_B: u64 = 0xD6E8_FEB8_6659_FD93;

/// Hash of a token byte string. Deterministic across platforms and builds.
#[inline(always)]
pub fn key_hash(key: &[u8]) -> u64 {
    let len = key.len();
    let mut h = (len as u64).wrapping_mul(MUL_A);
    if len >= 8 {
        let mut rest = key;
        while rest.len() > 8 {
            let (head, tail) = rest.split_at(8);
            h = mix(h ^ read_u64(head));
            rest = tail;
        }
        // The last (possibly overlapping) eight bytes.
        h ^= read_u64(&key[len - 8..]);
    } else if len >= 4 {
        let lo = read_u32(&key[..4]) as u64;
        let hi = read_u32(&key[len - 4..]) as u64;
        h ^= lo | (hi << 32);
    } else if len > 0 {
        h ^= key[0] as u64 | (key[len / 2] as u64) << 8 | (key[len - 1] as u64) << 16;
    }
    mix(h)
}

#[inline(always)]
fn mix(x: u64) -> u64 {
    let wide = (x as u128).wrapping_mul(MUL_B as u128);
    (wide as u64) ^ ((wide >> 64) as u64)
}

#[inline(always)]
fn read_u64(bytes: &[u8]) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes[..8]);
    u64::from_le_bytes(word)
}

#[inline(always)]
fn read_u32(bytes: &[u8]) -> u32 {
    let mut word = [0u8; 4];
    word.copy_from_slice(&bytes[..4]);
    u32::from_le_bytes(word)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_fields_round_trip() {
        for (rank, len, hash) in [(0, 1, 0u64), (MAX_RANK, MAX_TOKEN_LEN, u64::MAX), (199_997, 7, 0x1234_5678_9ABC_DEF0)] {
            let entry = pack_entry(rank, len, entry_tag(hash));
            assert_eq!((entry_rank(entry), entry_len(entry)), (rank, len));
            assert_eq!(entry & ENTRY_MATCH_MASK, entry_match(len, hash));
            assert_ne!(entry & ENTRY_MATCH_MASK, entry_match(len % MAX_TOKEN_LEN + 1, hash));
        }
    }

    #[test]
    fn estimates_run_from_zero_to_the_total() {
        for (total, buckets) in [(0, 1), (199_998, 25_000), (1_397_670, 25_000), (7, 3)] {
            let share = share(total, buckets);
            assert_eq!(estimate(0, share), 0);
            assert!(estimate(buckets, share).abs_diff(total) <= 1, "{total} {buckets}");
            assert!(estimate(buckets / 2, share) <= estimate(buckets / 2 + 1, share));
        }
    }

    #[test]
    fn buckets_cover_their_range() {
        for buckets in [1, 7, 25_000] {
            assert_eq!(bucket_of(0, buckets), 0);
            assert_eq!(bucket_of(u64::MAX, buckets), buckets - 1);
        }
    }

    #[test]
    fn key_hash_distinguishes_lengths_and_bytes() {
        let keys: [&[u8]; 6] = [b"", b"a", b"aa", b"ab", b"abcdefgh", b"abcdefghi"];
        for (i, a) in keys.iter().enumerate() {
            for b in &keys[i + 1..] {
                assert_ne!(key_hash(a), key_hash(b));
            }
        }
    }
}
