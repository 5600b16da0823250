//! Binary layout of the tables that the build step writes and the runtime reads.
//!
//! This file is compiled twice: into the library (as `bpe::layout`) and into the
//! build script (through `#[path]` in `build_tables.rs`). It therefore depends on
//! nothing but `core` and holds only the facts both sides must agree on: the
//! character-class codes, the key hash and the packing of a hash-table slot.
//!
//! # Vocabulary table
//!
//! Per encoding, two files for all tokens: `slots` (a power-of-two number of little-endian `u64`
//! slots, open addressing with linear probing) and `blob` (the token byte strings
//! concatenated). A slot is `0` when empty, otherwise it packs the token's rank,
//! its length, its offset in the blob and a tag taken from the key hash, so most
//! probes that miss never touch the blob.
//!
//! A third file, `short`, holds [`SHORT_TABLE_LEN`] little-endian `u32` ranks
//! for direct lookup: entry `a * 256 + b` is the rank of the two-byte string
//! `[a, b]` or [`NO_PAIR`], entry [`SINGLE_BYTE_BASE`]` + b` the rank of `[b]`.
//!
//! A fourth file, `merges`, is the same kind of table for joining two tokens:
//! for every token `t` and every split of its bytes into two tokens `a` and
//! `b`, a slot packs the ranks of `a`, `b` and `t` (see [`pack_merge`]), so
//! joining two parts during merging needs neither their bytes nor a blob.
//! A fifth file, `sides`, is two bit sets of equal length, indexed by rank:
//! the ranks that occur as the left half of such a split, then those that
//! occur as the right half. Most pairs fail this test without a table probe.
//!
//! # Character table
//!
//! Per encoding, three files for the characters of the Basic Multilingual
//! Plane that merging may start from as one token instead of their two or
//! three UTF-8 bytes (why that is exact: `build_tables.rs`, `write_char_table`):
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

/// Size in bytes of one slot of the vocabulary hash table.
pub const SLOT_BYTES: usize = 8;

const RANK_BITS: u32 = 24;
const LEN_SHIFT: u32 = 24;
const OFFSET_SHIFT: u32 = 32;
const TAG_SHIFT: u32 = 56;
const FIELD_MASK_24: u64 = (1 << 24) - 1;

/// Largest rank, token length and blob offset a slot can hold.
pub const MAX_RANK: u32 = (1 << RANK_BITS) - 1;
/// Largest token length (in bytes) a slot can hold.
pub const MAX_TOKEN_LEN: usize = 255;
/// Largest blob offset a slot can hold.
pub const MAX_BLOB_OFFSET: usize = (1 << 24) - 1;

const MERGE_RANK_BITS: u32 = 20;
const MERGE_RANK_MASK: u64 = (1 << MERGE_RANK_BITS) - 1;
const MERGE_OCCUPIED: u64 = 1 << 63;
/// Mask of the part of a merge slot that identifies the pair (see [`merge_key`]).
pub const MERGE_KEY_MASK: u64 =
    MERGE_OCCUPIED | (MERGE_RANK_MASK << MERGE_RANK_BITS) | MERGE_RANK_MASK;
/// Largest rank a merge slot can hold.
pub const MAX_MERGE_RANK: u32 = (1 << MERGE_RANK_BITS) - 1;

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

/// Identifies the pair of tokens `left`, `right` in a merge slot; an occupied
/// slot `s` holds this pair when `s & MERGE_KEY_MASK == merge_key(left, right)`.
#[inline(always)]
pub fn merge_key(left: u32, right: u32) -> u64 {
    MERGE_OCCUPIED
        | (u64::from(left) & MERGE_RANK_MASK) << MERGE_RANK_BITS
        | (u64::from(right) & MERGE_RANK_MASK)
}

/// Hash of a pair of token ranks, for the merge table.
#[inline(always)]
pub fn merge_hash(left: u32, right: u32) -> u64 {
    mix(u64::from(left) << 32 | u64::from(right))
}

/// A merge slot: the pair's key plus the rank of the token joining them.
/// All ranks must be at most [`MAX_MERGE_RANK`].
pub fn pack_merge(left: u32, right: u32, joined: u32) -> u64 {
    merge_key(left, right) | (u64::from(joined) & MERGE_RANK_MASK) << (2 * MERGE_RANK_BITS)
}

/// Rank of the joined token in a merge slot.
#[inline(always)]
pub fn merge_joined(slot: u64) -> u32 {
    ((slot >> (2 * MERGE_RANK_BITS)) & MERGE_RANK_MASK) as u32
}

/// The 8-bit tag of a hash, stored in the slot to reject most mismatches early.
#[inline(always)]
pub fn hash_tag(hash: u64) -> u8 {
    (hash >> TAG_SHIFT) as u8
}

/// Packs a token into a slot. `len` must be in `1..=MAX_TOKEN_LEN`, `rank` at most
/// [`MAX_RANK`] and `offset` at most [`MAX_BLOB_OFFSET`].
pub fn pack_slot(rank: u32, len: usize, offset: usize, tag: u8) -> u64 {
    (rank as u64 & FIELD_MASK_24)
        | ((len as u64 & 0xFF) << LEN_SHIFT)
        | ((offset as u64 & FIELD_MASK_24) << OFFSET_SHIFT)
        | ((tag as u64) << TAG_SHIFT)
}

/// Rank of the token in a non-empty slot.
#[inline(always)]
pub fn slot_rank(slot: u64) -> u32 {
    (slot & FIELD_MASK_24) as u32
}

/// Length in bytes of the token in a slot; `0` means the slot is empty.
#[inline(always)]
pub fn slot_len(slot: u64) -> usize {
    ((slot >> LEN_SHIFT) & 0xFF) as usize
}

/// Offset of the token's bytes in the blob.
#[inline(always)]
pub fn slot_offset(slot: u64) -> usize {
    ((slot >> OFFSET_SHIFT) & FIELD_MASK_24) as usize
}

/// Tag stored in a slot (compare with [`hash_tag`]).
#[inline(always)]
pub fn slot_tag(slot: u64) -> u8 {
    (slot >> TAG_SHIFT) as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slot_fields_round_trip() {
        for (rank, len, offset, tag) in [
            (0, 1, 0, 0),
            (MAX_RANK, MAX_TOKEN_LEN, MAX_BLOB_OFFSET, 255),
            (199_997, 7, 1_234_567, 42),
        ] {
            let slot = pack_slot(rank, len, offset, tag);
            assert_eq!(
                (
                    slot_rank(slot),
                    slot_len(slot),
                    slot_offset(slot),
                    slot_tag(slot)
                ),
                (rank, len, offset, tag)
            );
        }
    }

    #[test]
    fn merge_slot_round_trips() {
        for (left, right, joined) in [
            (0, 0, 0),
            (MAX_MERGE_RANK, 1, 199_997),
            (5, MAX_MERGE_RANK, MAX_MERGE_RANK),
        ] {
            let slot = pack_merge(left, right, joined);
            assert_eq!(slot & MERGE_KEY_MASK, merge_key(left, right));
            assert_ne!(merge_key(left, right), 0);
            assert_eq!(merge_joined(slot), joined);
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
