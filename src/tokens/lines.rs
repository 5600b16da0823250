//! A per-thread memo of the token counts of whole lines, in front of the memo of pieces.
//!
//! Agents count the same text again and again: a file read twice or read again after an
//! edit, a restored session, a request rebuilt. Most of such text is lines seen before, and
//! a line's count is one lookup here instead of a split and a lookup per piece.
//!
//! **Chunks.** The text is cut into chunks that end where the split pattern's pieces provably
//! end (see [`chunk_end`]), so that a chunk split on its own gives the pieces the whole text
//! gives there, and the text's count is the sum of its chunks' counts. A chunk is a run of
//! whole lines, about a kilobyte, ending at a line end chosen by the bytes before it: an
//! edit changes the chunks around it, not the ones after.
//!
//! **Exactness.** An entry keeps its chunk's bytes and the owner of its count (the tokenizer), and
//! answers only a chunk of the same owner and the same bytes: the hash only chooses
//! where to look.
//!
//! **Memory.** A thread's first chunks go to small tables ([`Size::FIRST`], 128 KB), so
//! that a program counting a few texts neither waits for nor keeps more. Once their ring
//! is full they are replaced by the large ones ([`Size::FULL`]): 2 MiB of chunk bytes (a
//! ring: the oldest chunks are overwritten) and 65,536 entries of 32 bytes in sets of two (a
//! cache line, the older entry making way), 4 MiB in all,
//! resident at once where transparent huge pages are on (`zeroed_pages.rs`: a write maps
//! 2 MiB), else as they fill. Freed when the thread exits or calls `release_thread_memory`
//! (`thread_memory.rs`).

use std::cell::RefCell;
use std::hash::Hasher;

use super::prefetch::prefetch;
use super::zeroed_pages::ZeroedPages;

/// Longest chunk remembered; a longer line is cut into chunks of at most this many bytes.
const MAX_CHUNK: usize = 4096;
/// Shortest chunk, but at the end of the text. Chunks of at least 256 bytes made counting
/// text seen before half as fast as these, and no faster on new text (docs/speed.md).
const MIN_CHUNK: usize = 1024;
/// One line end in `2^CUT_BITS` ends a chunk, once it is long enough.
const CUT_BITS: u32 = 3;
/// The tables' sizes, both powers of two.
#[derive(Clone, Copy)]
struct Size {
    /// Bytes of chunks remembered.
    arena_bytes: usize,
    /// Entries.
    slots: usize,
}

impl Size {
    /// A thread's first tables.
    const FIRST: Size = Size { arena_bytes: 64 << 10, slots: 1 << 11 };
    /// The tables once the first ones are full.
    const FULL: Size = Size { arena_bytes: 2 << 20, slots: 1 << 16 };

    fn tables(self) -> (ZeroedPages, ZeroedPages) {
        (ZeroedPages::new(self.slots * SLOT_WORDS), ZeroedPages::new(self.arena_bytes / 8))
    }
}
/// Words of an entry: the chunk's hash, where its bytes start (counted in bytes ever written
/// to the arena), its owner (0: empty), and its length and count (bits 32 and 0).
const SLOT_WORDS: usize = 4;

/// Whose count a chunk's is: a built-in vocabulary or a loaded tokenizer. Counts are
/// remembered and answered per owner.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Owner(u64);

impl Owner {
    /// A built-in vocabulary, by its id. Each built-in vocabulary is split by one pattern
    /// (o200k_base and o200k_harmony share both), so the vocabulary names the count.
    pub(crate) fn built_in(vocab: u8) -> Owner {
        Owner(1 << 63 | u64::from(vocab))
    }

    /// A loaded tokenizer, by its id (from 1, below 2^63).
    pub(crate) fn loaded(id: u64) -> Owner {
        debug_assert!(id != 0 && id < 1 << 63, "tokenizer id {id}");
        Owner(id & !(1 << 63))
    }
}

/// The lines of one thread.
pub(crate) struct Lines {
    slots: ZeroedPages,
    arena: ZeroedPages,
    /// Bytes ever written to the arena (positions in it are this modulo its size).
    written: u64,
}

/// What counts a chunk the memo of lines does not have: an engine splitting it into pieces
/// and counting them.
pub(crate) trait ChunkCounter {
    /// The tokens of the pieces of `text[start..end]`, split as if the text ended at `end`.
    fn count_chunk(&mut self, text: &[u8], start: usize, end: usize) -> usize;
}

/// The count of `text` by `pieces` without the memo of lines (a pattern whose pieces may
/// cross the chunks' ends).
pub(crate) fn count_whole(text: &[u8], pieces: &mut impl ChunkCounter) -> usize {
    pieces.count_chunk(text, 0, text.len())
}

thread_local! {
    static LINES: RefCell<Lines> = const { RefCell::new(Lines::EMPTY) };
}

/// Frees this thread's tables (the next count starts again with the first, small ones)
/// and returns their bytes; 0 when it has none, or they are in use.
pub(crate) fn release() -> usize {
    LINES
        .try_with(|lines| {
            lines.try_borrow_mut().map_or(0, |mut lines| {
                let freed = std::mem::replace(&mut *lines, Lines::EMPTY);
                freed.slots.bytes().len() + freed.arena.bytes().len()
            })
        })
        .unwrap_or(0)
}

/// Runs `work` with this thread's lines (or with a memo that remembers nothing if the
/// thread's is in use or gone).
pub(crate) fn with_lines<R>(mut work: impl FnMut(&mut Lines) -> R) -> R {
    let done = LINES.try_with(|lines| {
        let mut lines = lines.try_borrow_mut().ok()?;
        if lines.slots.words().is_empty() {
            (lines.slots, lines.arena) = Size::FIRST.tables();
        }
        Some(work(&mut lines))
    });
    match done {
        Ok(Some(result)) => result,
        _ => {
            let mut none = Lines::EMPTY;
            work(&mut none)
        }
    }
}

impl Lines {
    /// A memo that remembers nothing (until given its tables).
    const EMPTY: Lines = Lines { slots: ZeroedPages::empty(), arena: ZeroedPages::empty(), written: 0 };

    /// The count of `text` under `owner`: the sum of its chunks' counts, each remembered
    /// or counted by `pieces` (and then remembered). The slot of the chunk after the one
    /// being counted is prefetched, so that its lookup does not wait on memory.
    #[inline]
    pub(crate) fn count(&mut self, owner: Owner, text: &[u8], pieces: &mut impl ChunkCounter) -> usize {
        let mut total = 0;
        let mut start = 0;
        let mut next = self.chunk_at(text, 0);
        while start < text.len() {
            let (end, hash) = next;
            if end < text.len() {
                next = self.chunk_at(text, end);
            }
            let chunk = &text[start..end];
            total += match hash.and_then(|hash| self.remembered(owner, chunk, hash)) {
                Some(known) => known,
                None => {
                    let tokens = pieces.count_chunk(text, start, end);
                    if let Some(hash) = hash {
                        self.remember(owner, chunk, hash, tokens);
                    }
                    tokens
                }
            };
            start = end;
        }
        total
    }

    /// The end of the chunk starting at `start` and, if it is short enough to remember
    /// (a longer one is neither hashed nor looked up), its hash, its set prefetched.
    #[inline(always)]
    fn chunk_at(&self, text: &[u8], start: usize) -> (usize, Option<u64>) {
        let end = chunk_end(text, start);
        let hash = (end - start <= MAX_CHUNK).then(|| hash(&text[start..end]));
        if let Some(hash) = hash {
            prefetch(self.slots.words(), self.set_of(hash));
        }
        (end, hash)
    }

    /// The remembered count of `chunk` (whose hash is `hash`) under `owner`, if any: in
    /// either entry of its set.
    #[inline(always)]
    fn remembered(&self, owner: Owner, chunk: &[u8], hash: u64) -> Option<usize> {
        let set: &[u64; 2 * SLOT_WORDS] = self.slots.words().get(self.set_of(hash)..)?.first_chunk()?;
        let arena_bytes = self.arena.bytes().len();
        set.chunks_exact(SLOT_WORDS).find_map(|slot| {
            let &[slot_hash, at, slot_owner, len_count] = slot else { return None };
            let fits = slot_hash == hash && slot_owner == owner.0 && (len_count >> 32) as usize == chunk.len();
            // Its bytes were not overwritten since (the ring holds the last bytes written).
            if !fits || self.written - at > arena_bytes as u64 {
                return None;
            }
            let from = at as usize & (arena_bytes - 1);
            (self.arena.bytes().get(from..from + chunk.len())? == chunk).then_some(len_count as u32 as usize)
        })
    }

    /// Remembers that `chunk` (at most [`MAX_CHUNK`] bytes, whose hash is `hash`) counts
    /// `count` under `owner`.
    fn remember(&mut self, owner: Owner, chunk: &[u8], hash: u64, count: usize) {
        let Ok(count) = u32::try_from(count) else {
            return;
        };
        // Chunks start on whole words (aligned copies) and are never cut by the ring's end
        // (the rest of a turn is skipped).
        let room = chunk.len().next_multiple_of(8);
        let arena_bytes = self.arena.bytes().len();
        let mut from = self.written as usize & arena_bytes.wrapping_sub(1);
        if from + room > arena_bytes {
            if arena_bytes == 0 {
                return;
            }
            if arena_bytes < Size::FULL.arena_bytes {
                // The first tables are full: the large ones take over, empty.
                (self.slots, self.arena) = Size::FULL.tables();
                self.written = 0;
            } else {
                self.written += (arena_bytes - from) as u64;
            }
            from = 0;
        }
        self.arena.bytes_mut()[from..from + chunk.len()].copy_from_slice(chunk);
        // An empty entry of the set takes it, else the older one.
        let set = self.set_of(hash);
        let slots = self.slots.words_mut();
        let recency = |slot: usize| if slots[slot + 2] == 0 { 0 } else { slots[slot + 1] + 1 };
        let slot = if recency(set) <= recency(set + SLOT_WORDS) { set } else { set + SLOT_WORDS };
        slots[slot..slot + SLOT_WORDS].copy_from_slice(&[
            hash,
            self.written,
            owner.0,
            (chunk.len() as u64) << 32 | u64::from(count),
        ]);
        self.written += room as u64;
    }

    /// The first word of the set of two entries (a cache line) where a chunk whose hash is
    /// `hash` is remembered.
    #[inline(always)]
    fn set_of(&self, hash: u64) -> usize {
        let sets = self.slots.words().len() / (2 * SLOT_WORDS);
        // The top bits of a multiply by an odd constant: every bit of the hash moves them.
        ((hash.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 44) as usize & sets.wrapping_sub(1)) * 2 * SLOT_WORDS
    }
}

fn hash(chunk: &[u8]) -> u64 {
    let mut hasher = rustc_hash::FxHasher::default();
    hasher.write(chunk);
    hasher.finish()
}

/// End of the chunk starting at `start` (a piece boundary): the end of the text if it is
/// less than [`MIN_CHUNK`] bytes away; else the first line end from there on that
/// [`cuts_at`] and that ends a piece; failing that within [`MAX_CHUNK`] bytes, the last line
/// end that ends a piece, else the last space between two ASCII letters, else the first
/// line end that ends a piece however far (a chunk too long to remember).
///
/// These are piece ends of the o200k and cl100k patterns, and a chunk ending there splits
/// on its own as the whole text does:
/// - after a `\n` followed by zero or more spaces or tabs, then a character that is not
///   white space, and not `/` right after the `\n`: a piece holds a `\n` only in a
///   white-space alternative or in the punctuation one's tail (`[\r\n/]*` in o200k,
///   `[\r\n]*` in cl100k), which stops at anything else. The white-space run the `\n` is in
///   has no line break after it, so o200k's `\s*[\r\n]+` and cl100k's `\s*[\r\n]` (tried
///   before the look-ahead alternatives, which then never match) end at this `\n`, and
///   cl100k's `\s++$` cannot match since the run does not reach the end of the text. Split
///   on its own, the chunk ends with that run, which `\s++$` (and, in the `tokenizer.json`
///   spelling of cl100k, the cut after the run's last line break) takes to the same end;
/// - before a space between two ASCII letters: a letter is only ever in a word piece (or
///   a contraction), which holds a space only as its first character, so the piece holding
///   the letter ends at the space; split on its own, the chunk's last word ends with the
///   text, at the same place.
///
/// Linear in all: a chunk ends at least [`MIN_CHUNK`] bytes on, or at a space found at most
/// [`MAX_CHUNK`] bytes back from where the search stopped, so each byte is searched by a
/// few chunks at most, and a line end past the reach is searched for forward only.
pub(crate) fn chunk_end(text: &[u8], start: usize) -> usize {
    let reach = text.len().min(start + MAX_CHUNK);
    let from = text.len().min(start + MIN_CHUNK - 1);
    // Most line ends are not cuts: the cheap test first.
    let cut = newlines(text, from, reach)
        .map(|newline| newline + 1)
        .find(|&after| after == text.len() || (cuts_at(text, after) && ends_piece_after_newline(&text[after..])));
    if let Some(end) = cut {
        return end;
    }
    if reach == text.len() {
        return reach;
    }
    let last_line_end =
        newlines(text, from, reach).map(|newline| newline + 1).filter(|&after| ends_piece_after_newline(&text[after..])).last();
    if let Some(end) = last_line_end {
        return end;
    }
    let window = &text[start..=reach];
    (1..window.len() - 1)
        .rev()
        .find(|&i| window[i] == b' ' && window[i - 1].is_ascii_alphabetic() && window[i + 1].is_ascii_alphabetic())
        .map_or_else(|| line_end_from(text, reach), |i| start + i)
}

/// The positions of the newlines of `text[from..to]`, in order, found eight bytes at a
/// time (text has a newline every few dozen bytes, where `memchr` spends more on each
/// match than on the bytes between).
fn newlines(text: &[u8], from: usize, to: usize) -> impl Iterator<Item = usize> + '_ {
    let mut word_at = from;
    let mut mask = newline_bytes(&text[from..to]);
    std::iter::from_fn(move || {
        while mask == 0 {
            word_at += 8;
            if word_at >= to {
                return None;
            }
            mask = newline_bytes(&text[word_at..to]);
        }
        let at = word_at + (mask.trailing_zeros() / 8) as usize;
        mask &= mask - 1;
        Some(at)
    })
}

/// The high bit of each byte of the first eight of `bytes` that is a newline.
#[inline(always)]
fn newline_bytes(bytes: &[u8]) -> u64 {
    const LOW: u64 = 0x7F7F_7F7F_7F7F_7F7F;
    let word = match bytes.first_chunk::<8>() {
        Some(word) => u64::from_le_bytes(*word),
        // Zeros after the end, which are not newlines.
        None => {
            let mut word = [0; 8];
            word[..bytes.len()].copy_from_slice(bytes);
            u64::from_le_bytes(word)
        }
    };
    // A byte of `x` is zero where `word` has a newline; adding `LOW` to its low seven bits
    // sets its high bit unless they are zero, without a carry into the next byte.
    let x = word ^ 0x0A0A_0A0A_0A0A_0A0A;
    !((x & LOW).wrapping_add(LOW) | x | LOW)
}

/// Whether the line end at `after` (after a newline, at least eight bytes into the text)
/// ends a chunk: one in `2^`[`CUT_BITS`], chosen by the eight bytes before it, so that the
/// same lines end chunks wherever the text around them starts.
#[inline(always)]
fn cuts_at(text: &[u8], after: usize) -> bool {
    let Some(&before) = text[..after].last_chunk::<8>() else {
        return false;
    };
    u64::from_le_bytes(before).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - CUT_BITS) == 0
}

/// The first line end from `from` on that ends a piece, or the end of the text.
fn line_end_from(text: &[u8], from: usize) -> usize {
    newlines(text, from, text.len())
        .map(|newline| newline + 1)
        .find(|&after| after == text.len() || ends_piece_after_newline(&text[after..]))
        .unwrap_or(text.len())
}

/// Whether a newline followed by `rest` ends a piece (see [`chunk_end`]): `rest` starts
/// with spaces or tabs, then a character that is not white space (Unicode's `White_Space`,
/// what the patterns' `\s` is), and is not `/` if no space or tab came before it. ASCII
/// control characters and DEL are refused too, which the argument does not need but costs
/// nothing.
#[inline(always)]
fn ends_piece_after_newline(rest: &[u8]) -> bool {
    let indent = rest.iter().position(|&byte| byte != b' ' && byte != b'\t').unwrap_or(rest.len());
    match rest[indent..] {
        [] => false,
        [b'/', ..] => indent > 0,
        [byte, ..] if byte.is_ascii() => byte.is_ascii_graphic(),
        ref character => !starts_with_white_space(character),
    }
}

/// Whether `text` starts with one of the characters of Unicode's `White_Space` above
/// ASCII, in UTF-8: U+0085, U+00A0, U+1680, U+2000 to U+200A, U+2028, U+2029, U+202F,
/// U+205F, U+3000.
fn starts_with_white_space(text: &[u8]) -> bool {
    matches!(
        text,
        [0xC2, 0x85 | 0xA0, ..]
            | [0xE1, 0x9A, 0x80, ..]
            | [0xE2, 0x80, 0x80..=0x8A | 0xA8 | 0xA9 | 0xAF, ..]
            | [0xE2, 0x81, 0x9F, ..]
            | [0xE3, 0x80, 0x80, ..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::XorShift;

    /// Counts a chunk as its number of bytes, each byte a piece, and
    /// notes how many bytes it was asked to count.
    #[derive(Default)]
    struct Bytes {
        asked: usize,
    }

    impl ChunkCounter for Bytes {
        fn count_chunk(&mut self, _: &[u8], start: usize, end: usize) -> usize {
            self.asked += end - start;
            end - start
        }
    }

    /// Text seen before is answered from the memo, chunk by chunk, and only for its owner:
    /// 200 texts of 8 KB of lines (1.6 MB, past the first tables into the full ones, where
    /// sets of two entries keep chunks whose hashes meet)
    /// counted, then counted again without a chunk counted twice; a text with a line
    /// changed counts only the chunks around the change again; another owner counts all.
    #[test]
    fn text_seen_before_is_answered_by_chunks() {
        let mut rng = XorShift(0x5EE_11E5);
        let texts: Vec<Vec<u8>> = (0..200)
            .map(|_| {
                let mut text = Vec::new();
                while text.len() < 8000 {
                    let line = format!("{}line {} of {}\n", " ".repeat(rng.next() as usize % 9), rng.next() % 1000, rng.next());
                    text.extend_from_slice(line.as_bytes());
                }
                text
            })
            .collect();
        let mut lines = Lines::EMPTY;
        (lines.slots, lines.arena) = Size::FIRST.tables();
        let (first, second) = (Owner::built_in(1), Owner::built_in(2));
        let mut pieces = Bytes::default();
        for text in &texts {
            assert_eq!(lines.count(first, text, &mut pieces), text.len());
        }
        assert_eq!(pieces.asked, texts.iter().map(Vec::len).sum::<usize>());
        assert_eq!(lines.arena.bytes().len(), Size::FULL.arena_bytes);
        let mut again = Bytes::default();
        // From the tenth text on, all went to the full tables.
        for text in &texts[10..] {
            assert_eq!(lines.count(first, text, &mut again), text.len());
        }
        assert_eq!(again.asked, 0, "chunks seen before were counted again");
        let mut edited = texts[7].clone();
        edited.splice(4000..4000, b"a changed line\n".iter().copied());
        let mut around = Bytes::default();
        assert_eq!(lines.count(first, &edited, &mut around), edited.len());
        assert!(around.asked > 0 && around.asked <= 3 * MAX_CHUNK, "{} bytes counted again", around.asked);
        let mut other = Bytes::default();
        assert_eq!(lines.count(second, &texts[7], &mut other), texts[7].len());
        assert_eq!(other.asked, texts[7].len());
    }

    /// The newlines found eight bytes at a time are those a byte-by-byte search finds:
    /// texts of every byte value, newlines at every place in a word, any start and end.
    #[test]
    fn newlines_are_found_where_they_are() {
        let mut rng = XorShift(0x0A0A_0A0A_1234_5678);
        for round in 0..3000 {
            let len = round % 70;
            let text: Vec<u8> = (0..len).map(|_| if rng.next() % 4 == 0 { b'\n' } else { rng.next() as u8 }).collect();
            let from = if len == 0 { 0 } else { rng.next() as usize % (len + 1) };
            let to = from + rng.next() as usize % (len - from + 1);
            let expected: Vec<usize> = (from..to).filter(|&i| text[i] == b'\n').collect();
            assert_eq!(newlines(&text, from, to).collect::<Vec<_>>(), expected, "{text:?} {from}..{to}");
        }
    }
}
