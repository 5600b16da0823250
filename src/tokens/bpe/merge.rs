//! Byte-pair merging of one piece, counting the tokens it ends up as.
//!
//! tiktoken starts from single bytes and repeatedly merges the adjacent pair
//! whose concatenation has the lowest rank (the leftmost such pair on ties)
//! until no adjacent pair is a token. Only the number of parts left is needed
//! here. Every part is a token, so whether two parts join is first decided by
//! their two ranks: a bit-set test rules most pairs out and a per-thread cache
//! of joins ([`JoinCache`]) answers most others; only then are the bytes the
//! two parts cover (adjacent in the piece) looked up in the vocabulary.
//!
//! Merging starts from whole characters where that provably ends the same
//! (see [`Vocab::whole_char`]): a Chinese piece then starts with a third of
//! the parts, skipping the merges that only rebuild its characters.
//! Short lists of parts use a scan over small arrays on the stack; longer ones
//! use a binary heap over a linked list. A piece longer than a few windows (a
//! run of letters with no space, a DNA sequence) is merged window by window
//! ([`count_long`]), which keeps the time linear in its length and the memory
//! bounded by a window, with the exact result of merging it whole.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::layout::key_hash;
use super::memo::JoinCache;
use super::vocab::Vocab;

mod part_list;
use part_list::{NewPair, PartList};

/// Most parts merged with the array scan (indices, and the end index, are
/// bytes).
const SMALL_PARTS: usize = 255;

/// "No merge possible" rank.
const NO_MERGE: u32 = u32::MAX;

/// Number of tokens the merging of `piece` (at least two bytes) ends with.
pub(super) fn merged_count(vocab: &Vocab, piece: &[u8], joins: &mut JoinCache) -> usize {
    // A piece has at most one part per byte: most are short words, whose parts
    // fit an array that is cheap to set up.
    match piece.len() {
        0..=16 => merge_parts::<16>(vocab, piece, joins),
        17..=64 => merge_parts::<64>(vocab, piece, joins),
        65..=LONG_PIECE => merge_parts::<SMALL_PARTS>(vocab, piece, joins),
        _ => count_long::<WINDOW>(vocab, piece, joins),
    }
}

/// Bytes of a piece one window of [`count_long`] merges.
const WINDOW: usize = 4096;
/// Longest piece merged whole; longer ones are merged window by window.
const LONG_PIECE: usize = 4 * WINDOW;

/// [`merged_count`] of a long piece, window by window (of `W` bytes), in time
/// linear in its length and memory bounded by a window.
///
/// Exact because of how byte-pair merging composes (the argument of GitHub's
/// `bpe` crate): call a list of tokens *valid* for a text if merging the text
/// gives exactly that list. A prefix of a valid list is valid for the bytes it
/// covers (no merge crosses a boundary that the end result still has, so the
/// merges left of it happen alike without what follows). And two valid lists
/// that overlap in exactly one token, the last of the first list being the
/// first of the second one at the same bytes, join into a valid list: a merge
/// of the joined text crossing either edge of the shared token would be the
/// first such merge in one of the two texts alone, which have none.
///
/// So: merge a window; keep its tokens up to one near its end (the *seam*)
/// and merge the next window starting at the seam's first byte. If that
/// window's first token is the seam, the tokens join; if not, the seam moves
/// back one token of the previous window (a shorter prefix, still valid) and
/// the window is merged again. Seams nearly always fit at once; a piece whose
/// seams keep failing is merged whole by the heap, so the result never
/// depends on this heuristic, only the time does.
fn count_long<const W: usize>(vocab: &Vocab, piece: &[u8], joins: &mut JoinCache) -> usize {
    // The next window starts at the last token that starts at or before this
    // offset; the rest of the window is a margin wide enough that the merges
    // near that token do not depend on what follows the window, in practice.
    let seam_at = W * 3 / 4;
    // Tokens of the joined list before the seam, the seam (the list's last
    // token, as a range of the piece), and the tokens of the last window
    // before the seam, the seams to back off to.
    let mut before_seam = 0;
    let mut seam: Option<(usize, usize)> = None;
    let mut earlier: Vec<(usize, usize)> = Vec::new();
    // Windows merged again after a seam failed, over the whole piece.
    let mut retries_left = 8 + piece.len() / W;
    let mut starts = Vec::new();
    loop {
        let from = seam.map_or(0, |(start, _)| start);
        let to = (from + W).min(piece.len());
        let window = &piece[from..to];
        token_starts(vocab, window, joins, &mut starts);
        let token_end = |i: usize| from + starts.get(i + 1).map_or(window.len(), |&s| s as usize);
        if let Some((_, seam_end)) = seam {
            if token_end(0) != seam_end {
                // The window does not start with the seam: back off one token.
                match (earlier.pop(), retries_left.checked_sub(1)) {
                    (Some(previous), Some(left)) => {
                        retries_left = left;
                        before_seam -= 1;
                        seam = Some(previous);
                        continue;
                    }
                    _ => return merge_parts::<SMALL_PARTS>(vocab, piece, joins),
                }
            }
        }
        if to == piece.len() {
            return before_seam + starts.len();
        }
        // The new seam: the last token starting at or before `seam_at`, after
        // the window's first token (so that every window moves on).
        let next = starts.iter().rposition(|&s| s as usize <= seam_at).unwrap_or(0).max(1);
        if next >= starts.len() {
            return merge_parts::<SMALL_PARTS>(vocab, piece, joins); // one token fills the window
        }
        earlier.clear();
        earlier.extend((0..next).map(|i| (from + starts[i] as usize, token_end(i))));
        before_seam += next;
        seam = Some((from + starts[next] as usize, token_end(next)));
    }
}

/// The offsets in `window` at which the tokens merging it ends with start,
/// in order (the first is 0), into `starts`.
fn token_starts(vocab: &Vocab, window: &[u8], joins: &mut JoinCache, starts: &mut Vec<u32>) {
    let parts: Vec<Part> = InitialParts { vocab, piece: window, at: 0 }.collect();
    let pairs = &mut PairRanks { vocab, joins, piece: window };
    let (next, _) = heap_merge(pairs, &parts);
    starts.clear();
    let mut s = 0;
    while let Some(part) = parts.get(s) {
        starts.push(part.at);
        s = next[s] as usize;
    }
}

/// [`merged_count`] collecting the initial parts in an array of `N` (at most
/// [`SMALL_PARTS`]); more parts than that go to the heap merge. A short ASCII
/// piece's bytes are its parts as they are ([`AsciiBytes`]).
#[inline(always)]
fn merge_parts<const N: usize>(vocab: &Vocab, piece: &[u8], joins: &mut JoinCache) -> usize {
    let pairs = &mut PairRanks { vocab, joins, piece };
    if N <= AsciiBytes::MAX_PARTS && piece.len() <= N && piece.is_ascii() {
        return count_small_best(pairs, &AsciiBytes { vocab, piece });
    }
    let mut parts = InitialParts { vocab, piece, at: 0 };
    let mut first = [Part::NONE; N];
    let mut len = 0;
    while let Some(part) = parts.next() {
        let Some(slot) = first.get_mut(len) else {
            let all: Vec<Part> = first.iter().copied().chain([part]).chain(parts.by_ref()).collect();
            return count_large(pairs, &all);
        };
        *slot = part;
        len += 1;
    }
    count_small_best(pairs, &Listed { parts: &first[..len], piece_len: piece.len() })
}

/// [`count_small_any`], compiled for AVX2 where the CPU has it.
#[inline(always)]
fn count_small_best(pairs: &mut PairRanks, parts: &impl InitialList) -> usize {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: `avx2::count_small` only requires the AVX2 instructions it is
        // compiled with, and the CPU has them (checked just above).
        return unsafe { avx2::count_small(pairs, parts) };
    }
    count_small_any(pairs, parts)
}

/// A part of a piece before merging: a single byte, or a whole character.
#[derive(Clone, Copy)]
struct Part {
    /// Rank of the token the part is.
    token: u32,
    /// Offset of the part's first byte in the piece.
    at: u32,
    /// The byte, if the part is a single byte.
    byte: Option<u8>,
}

impl Part {
    /// Filler for the unused end of a fixed-size array of parts, never read.
    /// All zero bytes, so filling an array with it is one `memset`.
    const NONE: Part = Part { token: 0, at: 0, byte: None };
}

/// The parts merging starts from, left to right: every byte on its own,
/// except the characters [`Vocab::whole_char`] allows to start whole.
struct InitialParts<'a> {
    vocab: &'a Vocab,
    piece: &'a [u8],
    at: usize,
}

impl Iterator for InitialParts<'_> {
    type Item = Part;

    #[inline(always)]
    fn next(&mut self) -> Option<Part> {
        let byte = *self.piece.get(self.at)?;
        let at = self.at as u32;
        if byte >= 0xC2 {
            if let Some((token, len)) = self.vocab.whole_char(self.piece, self.at) {
                self.at += len;
                return Some(Part { token, at, byte: None });
            }
        }
        self.at += 1;
        Some(Part { token: self.vocab.byte_rank(byte), at, byte: Some(byte) })
    }
}

/// The initial parts of a piece as the array merge reads them: a list of
/// parts ([`Listed`]), or the bytes of an ASCII piece, each a part of its own
/// ([`AsciiBytes`]), which needs no list built first (2% to 5% of a first pass).
trait InitialList {
    /// The most parts such a list has.
    const MAX_PARTS: usize;
    /// Number of parts.
    fn len(&self) -> usize;
    /// Rank of the token the part at index `s` is.
    fn token(&self, s: usize) -> u32;
    /// Offset in the piece of the part at index `s`; the piece's length for
    /// `s == self.len()`.
    fn at(&self, s: usize) -> usize;
    /// Rank of the token joining the parts at `s` and `s + 1`, or
    /// [`NO_MERGE`] (also when `s` is the last part).
    fn initial_rank(&self, pairs: &mut PairRanks, s: usize) -> u32;
}

/// Initial parts collected in a list.
struct Listed<'a> {
    parts: &'a [Part],
    piece_len: usize,
}

impl InitialList for Listed<'_> {
    const MAX_PARTS: usize = SMALL_PARTS;

    #[inline(always)]
    fn len(&self) -> usize {
        self.parts.len()
    }

    #[inline(always)]
    fn token(&self, s: usize) -> u32 {
        self.parts[s].token
    }

    #[inline(always)]
    fn at(&self, s: usize) -> usize {
        self.parts.get(s).map_or(self.piece_len, |part| part.at as usize)
    }

    #[inline(always)]
    fn initial_rank(&self, pairs: &mut PairRanks, s: usize) -> u32 {
        pairs.initial(self.parts, s)
    }
}

/// The bytes of an ASCII piece of at most [`AsciiBytes::MAX_PARTS`] bytes, each
/// byte a part (no character starts whole). Only short pieces: each array size
/// the merge is compiled for adds to the library's size.
struct AsciiBytes<'a> {
    vocab: &'a Vocab,
    piece: &'a [u8],
}

impl InitialList for AsciiBytes<'_> {
    const MAX_PARTS: usize = 16;

    #[inline(always)]
    fn len(&self) -> usize {
        self.piece.len()
    }

    #[inline(always)]
    fn token(&self, s: usize) -> u32 {
        self.vocab.byte_rank(self.piece[s])
    }

    #[inline(always)]
    fn at(&self, s: usize) -> usize {
        s
    }

    #[inline(always)]
    fn initial_rank(&self, _: &mut PairRanks, s: usize) -> u32 {
        match self.piece.get(s..s + 2) {
            Some(&[first, second]) => self.vocab.pair_rank(first, second).unwrap_or(NO_MERGE),
            _ => NO_MERGE,
        }
    }
}

/// [`count_small`] with the smallest array size that fits the parts (at most
/// [`SMALL_PARTS`]): every scan covers the whole array, so it should not be
/// much longer than the list of parts.
#[inline(always)]
fn count_small_any<L: InitialList>(pairs: &mut PairRanks, parts: &L) -> usize {
    match parts.len() {
        0..=8 => count_small::<8>(pairs, parts),
        // A list of at most 16 parts: the larger arrays are not compiled for it.
        _ if L::MAX_PARTS <= 16 => count_small::<16>(pairs, parts),
        9..=16 => count_small::<16>(pairs, parts),
        17..=32 => count_small::<32>(pairs, parts),
        33..=64 => count_small::<64>(pairs, parts),
        65..=128 => count_small::<128>(pairs, parts),
        _ => count_small::<256>(pairs, parts),
    }
}

/// The array merge compiled for AVX2, whose 8-lane unsigned minimum makes the
/// best-pair scan several times cheaper than with the SSE2 baseline. The code
/// is the same safe Rust; only the instructions the compiler may use differ.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{InitialList, PairRanks, count_small_any};

    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn count_small(pairs: &mut PairRanks, parts: &impl InitialList) -> usize {
        count_small_any(pairs, parts)
    }
}

/// Rank lookups for the parts of one piece.
struct PairRanks<'a> {
    vocab: &'a Vocab,
    joins: &'a mut JoinCache,
    piece: &'a [u8],
}

impl PairRanks<'_> {
    /// Rank of the token joining the initial parts `s` and `s + 1` of `parts`,
    /// or [`NO_MERGE`] (also when `s` is the last part).
    #[inline(always)]
    fn initial(&mut self, parts: &[Part], s: usize) -> u32 {
        let (Some(left), Some(right)) = (parts.get(s), parts.get(s + 1)) else {
            return NO_MERGE;
        };
        match (left.byte, right.byte) {
            (Some(first), Some(second)) => self.vocab.pair_rank(first, second).unwrap_or(NO_MERGE),
            _ => {
                let end = parts.get(s + 2).map_or(self.piece.len(), |part| part.at as usize);
                self.join(left.token, right.token, left.at as usize, end)
            }
        }
    }

    /// Rank of the token joining adjacent parts that are the tokens `left` and
    /// `right` and together cover the bytes `from..to` of the piece, or
    /// [`NO_MERGE`].
    #[inline(always)]
    fn join(&mut self, left: u32, right: u32, from: usize, to: usize) -> u32 {
        let vocab = self.vocab;
        if !vocab.may_join(left, right) {
            return NO_MERGE;
        }
        let piece = self.piece;
        self.joins
            .joined(vocab, left, right, || {
                let bytes = piece.get(from..to)?;
                vocab.rank_hashed(bytes, key_hash(bytes))
            })
            .unwrap_or(NO_MERGE)
    }
}

/// Merges with a scan for the best pair ([`PartList`]); `1 <= parts.len() <= N`
/// and `parts.len() < 256`.
#[inline(always)]
fn count_small<const N: usize>(pairs: &mut PairRanks, parts: &impl InitialList) -> usize {
    let mut list = PartList::<N>::new();
    list.reset(parts.len(), |s| parts.token(s), |s| parts.initial_rank(pairs, s));
    while list.merge_best(
        #[inline(always)]
        |NewPair { start, left, right, to }| Some(pairs.join(left, right, parts.at(start), parts.at(to))),
    ) {}
    list.remaining
}

/// Merges with a min-heap of candidate pairs over a doubly linked list of
/// parts, for any number of parts.
fn count_large(pairs: &mut PairRanks, parts: &[Part]) -> usize {
    heap_merge(pairs, parts).1
}

/// Merges `parts` with a min-heap of candidate pairs over a doubly linked
/// list of parts. Returns the list (`next[s]`: the initial index of the part
/// after the one starting at initial index `s`, for the parts left) and the
/// number of parts left.
fn heap_merge(pairs: &mut PairRanks, parts: &[Part]) -> (Vec<u32>, usize) {
    let len = parts.len();
    // Same representation as `count_small`, in vectors: next[s], prev[s] and
    // token[s] for the part starting at s, rank[s] the rank of joining it with
    // its successor (NO_MERGE if none or if s is no longer a part start).
    let mut next: Vec<u32> = (1..=len as u32).collect();
    let mut prev: Vec<u32> = (0..len as u32).map(|s| s.wrapping_sub(1)).collect();
    let mut token: Vec<u32> = parts.iter().map(|part| part.token).collect();
    let mut rank: Vec<u32> = (0..len).map(|s| pairs.initial(parts, s)).collect();
    let mut heap: BinaryHeap<Reverse<(u32, u32)>> =
        rank.iter().enumerate().filter(|&(_, &r)| r != NO_MERGE).map(|(s, &r)| Reverse((r, s as u32))).collect();
    let mut remaining = len;
    let end_of = |next: &[u32], s: usize| next.get(s).map_or(len, |&e| e as usize);
    let piece_len = pairs.piece.len();
    let at = |s: usize| parts.get(s).map_or(piece_len, |part| part.at as usize);
    while let Some(Reverse((candidate, start))) = heap.pop() {
        let left = start as usize;
        if rank.get(left) != Some(&candidate) {
            continue; // stale: this pair changed since it was pushed
        }
        let right = end_of(&next, left);
        let after = end_of(&next, right);
        // Merge: the part at `right` disappears.
        token[left] = candidate;
        next[left] = after as u32;
        if let Some(slot) = prev.get_mut(after) {
            *slot = start;
        }
        if let Some(slot) = rank.get_mut(right) {
            *slot = NO_MERGE;
        }
        remaining -= 1;
        rank[left] = if after < len { pairs.join(candidate, token[after], at(left), at(end_of(&next, after))) } else { NO_MERGE };
        if rank[left] != NO_MERGE {
            heap.push(Reverse((rank[left], start)));
        }
        if left > 0 {
            let before = prev[left] as usize;
            if let Some(&preceding) = token.get(before) {
                rank[before] = pairs.join(preceding, candidate, at(before), at(after));
                if rank[before] != NO_MERGE {
                    heap.push(Reverse((rank[before], before as u32)));
                }
            }
        }
    }
    (next, remaining)
}

#[cfg(test)]
mod tests {
    use super::super::Encoding;
    use super::super::memo::Memo;
    use super::*;
    use crate::test_rng::XorShift;

    /// The vocabularies built in (o200k_harmony shares o200k_base's).
    fn vocabs() -> Vec<&'static Vocab> {
        Encoding::ALL.into_iter().filter(|&encoding| encoding != Encoding::O200kHarmony).filter_map(Encoding::vocab).collect()
    }

    /// Deterministic byte strings: text in several scripts, runs, and
    /// pseudo-random bytes (merging works on bytes, valid UTF-8 or not).
    fn samples() -> Vec<Vec<u8>> {
        let mut rng = XorShift(0x2545_F491_4F6C_DD1D);
        let random: Vec<u8> = (0..SMALL_PARTS).map(|_| rng.next() as u8).collect();
        let texts = [
            " internationalization and the hyperparameters of tokenization",
            "敏捷的棕色狐狸跳过了懒狗上下文窗口计算令牌人工智能模型",
            "Donaudampfschifffahrtsgesellschaftskapitänsmütze",
            "                                                  ",
            "aGVsbG8gd29ybGQhIFRoaXMgaXMgYmFzZTY0IGVuY29kZWQgdGV4dA",
            "مُحَمَّدٌ رَسُولُ اللَّهِ وَالَّذِينَ مَعَهُ",
            "1234567890123456789012345678901234567890",
            "Съешь же ещё этих мягких французских булок, да выпей чаю",
            "다람쥐 헌 쳇바퀴에 타고파ひらがなカタカナ漢字",
        ];
        let mut samples: Vec<Vec<u8>> = texts.iter().map(|text| text.as_bytes().to_vec()).collect();
        samples.push(random);
        samples
    }

    fn initial_parts(vocab: &Vocab, piece: &[u8]) -> Vec<Part> {
        InitialParts { vocab, piece, at: 0 }.collect()
    }

    /// Rank of the token with exactly these bytes, by plain lookups.
    fn rank_of(vocab: &Vocab, bytes: &[u8]) -> Option<u32> {
        match *bytes {
            [byte] => Some(vocab.byte_rank(byte)),
            [first, second] => vocab.pair_rank(first, second),
            _ => vocab.rank_hashed(bytes, key_hash(bytes)),
        }
    }

    /// tiktoken's merge written out plainly: from single bytes, join the
    /// lowest-ranked adjacent pair (leftmost on ties) while there is one.
    fn reference_count(vocab: &Vocab, piece: &[u8]) -> usize {
        let mut bounds: Vec<usize> = (0..=piece.len()).collect();
        while bounds.len() > 2 {
            let best = (0..bounds.len() - 2).filter_map(|i| Some((rank_of(vocab, &piece[bounds[i]..bounds[i + 2]])?, i))).min();
            match best {
                Some((_, i)) => {
                    bounds.remove(i + 1);
                }
                None => break,
            }
        }
        bounds.len() - 1
    }

    /// The array scan and the heap agree on every prefix they can both handle,
    /// with a join cache that is shared by all of them (so it answers most
    /// joins, across vocabularies) and without one, and with the plain merge;
    /// so does the array scan from a short ASCII piece's bytes.
    #[test]
    fn small_and_large_merges_agree() {
        let mut cache = JoinCache::allocated();
        let mut ascii = 0;
        for vocab in vocabs() {
            for sample in samples() {
                for len in 2..=sample.len().min(SMALL_PARTS) {
                    let piece = &sample[..len];
                    let parts = initial_parts(vocab, piece);
                    let mut uncached = Memo::new().joins;
                    let large = count_large(&mut PairRanks { vocab, joins: &mut uncached, piece }, &parts);
                    assert_eq!(large, reference_count(vocab, piece), "{piece:?}");
                    let pairs = &mut PairRanks { vocab, joins: &mut cache, piece };
                    assert_eq!(count_large(pairs, &parts), large, "{piece:?}");
                    let listed = Listed { parts: &parts, piece_len: piece.len() };
                    assert_eq!(count_small::<256>(pairs, &listed), large, "{piece:?}");
                    if parts.len() <= 8 {
                        assert_eq!(count_small::<8>(pairs, &listed), large, "{piece:?}");
                    }
                    if parts.len() <= 32 {
                        assert_eq!(count_small::<32>(pairs, &listed), large, "{piece:?}");
                    }
                    assert_eq!(count_small_any(pairs, &listed), large, "{piece:?}");
                    if piece.is_ascii() && piece.len() <= AsciiBytes::MAX_PARTS {
                        ascii += 1;
                        assert_eq!(count_small_any(pairs, &AsciiBytes { vocab, piece }), large, "{piece:?}");
                    }
                    #[cfg(target_arch = "x86_64")]
                    if std::arch::is_x86_feature_detected!("avx2") {
                        // SAFETY: AVX2 is available (checked just above).
                        let vector = unsafe { avx2::count_small(pairs, &listed) };
                        assert_eq!(vector, large, "{piece:?}");
                    }
                    assert_eq!(merged_count(vocab, piece, pairs.joins), large, "{piece:?}");
                }
            }
        }
        // 75 per vocabulary: every prefix of up to 16 bytes of the ASCII samples.
        assert_eq!(ascii, 75 * vocabs().len(), "ASCII pieces");
    }

    /// Merging a long piece window by window ends with as many tokens as
    /// merging it whole, with windows so small that seams often fail and
    /// pieces fall back to the whole merge, and with the real window size:
    /// runs of one letter, of random letters, of DNA, of Chinese characters,
    /// of random bytes, a word repeated without spaces.
    #[test]
    fn long_pieces_merge_window_by_window_like_whole() {
        let mut rng = XorShift(0x5DEE_CE66_D1CE_4E5B);
        let mut joins = JoinCache::allocated();
        for vocab in vocabs() {
            let mut pick = |alphabet: &[&str], len: usize| -> Vec<u8> {
                let mut text = Vec::new();
                while text.len() < len {
                    text.extend_from_slice(alphabet[rng.next() as usize % alphabet.len()].as_bytes());
                }
                text
            };
            let letters: Vec<String> = ('a'..='z').chain('A'..='Z').map(String::from).collect();
            let letters: Vec<&str> = letters.iter().map(String::as_str).collect();
            let mut pieces = vec![
                pick(&["a"], 20_000),
                pick(&letters, 20_000),
                pick(&["A", "C", "G", "T"], 20_000),
                pick(&["的", "是", "不", "了", "在", "人", "有", "我", "他", "这", "个", "们", "中", "来", "上"], 20_000),
                pick(&["token"], 20_000),
                pick(&["ab", "ba", "aab", "abb"], 3_000),
            ];
            pieces.push((0..5_000).map(|_| rng.next() as u8).collect());
            for piece in &pieces {
                let whole = count_large(&mut PairRanks { vocab, joins: &mut joins, piece }, &initial_parts(vocab, piece));
                assert_eq!(merged_count(vocab, piece, &mut joins), whole, "{:?}", String::from_utf8_lossy(&piece[..40]));
                for len in [300, 1000, piece.len()] {
                    let piece = &piece[..len.min(piece.len())];
                    let whole = count_large(&mut PairRanks { vocab, joins: &mut joins, piece }, &initial_parts(vocab, piece));
                    assert_eq!(count_long::<16>(vocab, piece, &mut joins), whole, "{:?}", String::from_utf8_lossy(&piece[..40]));
                    assert_eq!(count_long::<48>(vocab, piece, &mut joins), whole, "{:?}", String::from_utf8_lossy(&piece[..40]));
                    assert_eq!(count_long::<256>(vocab, piece, &mut joins), whole, "{:?}", String::from_utf8_lossy(&piece[..40]));
                }
            }
        }
    }

    /// Starting from whole characters merges exactly like starting from
    /// bytes, on strings made of the characters that may start whole (every
    /// one of them, in random order and next to random neighbours: other such
    /// characters, characters that are no token, ASCII), long enough to take
    /// the heap too.
    #[test]
    fn whole_characters_merge_like_their_bytes() {
        let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
        let mut cache = JoinCache::allocated();
        for vocab in vocabs() {
            let mut whole: Vec<char> = (0x80..0x1_0000u32)
                .filter_map(char::from_u32)
                .filter(|c| vocab.whole_char(c.to_string().as_bytes(), 0).is_some())
                .collect();
            assert!(whole.len() > 100, "too few whole characters: {}", whole.len());
            let others = [
                'a',
                ' ',
                '\'',
                '.',
                '0',
                '\u{0301}',
                '\u{0E01}',
                '\u{0D15}',
                '\u{0905}',
                '\u{0410}',
                '\u{4E00}',
                '\u{FFFD}',
                '\u{1F600}',
            ];
            whole.extend(others);
            for round in 0..4000 {
                let len = 1 + rng.next() as usize % if round % 50 == 0 { 400 } else { 40 };
                let text: String = (0..len).map(|_| whole[rng.next() as usize % whole.len()]).collect();
                let piece = text.as_bytes();
                if piece.len() < 2 {
                    continue;
                }
                assert_eq!(merged_count(vocab, piece, &mut cache), reference_count(vocab, piece), "{text:?}");
            }
        }
    }
}
