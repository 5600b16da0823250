//! Whole characters as the symbols byte-level merging starts from, where that provably ends
//! the same: a Chinese piece then starts with a third of the symbols, skipping the merges
//! that only rebuild its characters (the built-in engine does the same for its own
//! vocabularies, from tables made at build time; here they are made at load time from the
//! file's merges).
//!
//! Why it is exact. Take a character `c` of two or three UTF-8 bytes whose bytes, merged
//! on their own, end as one token `T`, and let `M` be the highest priority of the merges
//! on the way. While `c` is not whole, a merge inside it of priority at most `M` is
//! always possible, so nothing of priority above `M` touches its bytes. If no merge of
//! priority at most `M` joins a part of `c` that is at its edge on the way (its first byte,
//! a prefix it builds, its last byte, a suffix) with a neighbour, the merges inside `c`
//! happen as they would on their own, and those elsewhere as they would with `c` already
//! whole. Starting from `T` could only add merges: a merge joining `T` with a neighbour,
//! of priority at most `M`, could then happen before `c` would have been whole; so that
//! must not exist either. Which merges exist depends on the neighbour, through its byte
//! next to `c` (every token ending, or starting, with that byte): the table keeps, per
//! character, the set of previous bytes (continuation bytes, ending another character)
//! and of following bytes (lead bytes) for which one does, and a character starts whole
//! only when neither neighbour is in its set (or there is none: the piece's edge). The
//! argument does not depend on what the neighbours are made of, so it holds for one
//! character after another. `tokens::loaded::whole_chars::tests` check it against merging
//! from bytes on vocabularies made to break it.

use super::merge::{Merges, NONE, Rule};
use super::vocab::Vocab;
use crate::tokens::utf8_char::two_or_three_byte_char;

/// Bytes that continue a UTF-8 character (a character's previous neighbour ends in one).
const CONTINUATION: std::ops::RangeInclusive<u8> = 0x80..=0xBF;
/// Bytes that start a UTF-8 character of two bytes or more (a following neighbour's first).
const LEAD: std::ops::RangeInclusive<u8> = 0xC0..=0xFF;
/// Code points in a page of the table.
const PAGE: usize = 64;
/// Code points the table covers: the characters of two and three bytes.
const CODE_POINTS: usize = 0x1_0000;

/// The characters of a byte-level vocabulary that merging may start from whole.
#[derive(Debug, Default)]
pub(super) struct WholeChars {
    /// Per page of [`PAGE`] code points, its number in `pages` plus one (0: none there).
    index: Box<[u16]>,
    /// Pages of entry numbers plus one (0: the character is not in the table).
    pages: Box<[u32]>,
    entries: Box<[Entry]>,
}

/// A character that may start whole.
#[derive(Clone, Copy, Debug)]
struct Entry {
    /// The token its bytes merge into.
    token: u32,
    /// The previous bytes (bit `byte - 0x80`) after which it must start from bytes.
    before: u64,
    /// The following bytes (bit `byte - 0xC0`) before which it must start from bytes.
    after: u64,
}

/// A character whose bytes merge into one token on their own, and the parts at its edges
/// on the way.
struct Candidate {
    code_point: u32,
    token: u32,
    /// The highest priority of the merges that build it.
    highest: u32,
    /// Its symbols at its start before it is whole (its first byte, a prefix), then at its
    /// end; `u32::MAX` for none.
    first: [u32; 2],
    last: [u32; 2],
}

impl WholeChars {
    /// The table of a byte-level vocabulary with listed merges (`bytes`: each byte's
    /// token). Empty when the vocabulary's ids are too sparse to find a token's bytes.
    pub(super) fn of_merges(vocab: &Vocab, merges: &Merges, bytes: &[u32; 256]) -> WholeChars {
        if vocab.bytes_of(bytes[0]).is_none() {
            return WholeChars::default();
        }
        let candidates = candidates(vocab, merges, bytes);
        if candidates.is_empty() {
            return WholeChars::default();
        }
        // The first and last byte of every token, read once in the order of the ids.
        let ends: Vec<(u8, u8)> = (0..vocab.id_limit() as u32)
            .map(|id| vocab.bytes_of(id).and_then(|b| Some((*b.first()?, *b.last()?))).unwrap_or((0, 0)))
            .collect();
        // The symbols at a candidate's edges (and the candidates' tokens): the merges that
        // join one with a neighbour, by the neighbour's byte next to it (only the bytes
        // after which, or before which, a character may start whole).
        let mut marked = vec![0u8; ends.len()];
        let mut mark = |id: u32, bit: u8| {
            if let Some(flags) = marked.get_mut(id as usize) {
                *flags |= bit;
            }
        };
        for candidate in &candidates {
            candidate.first.iter().chain([&candidate.token]).for_each(|&id| mark(id, 1));
            candidate.last.iter().chain([&candidate.token]).for_each(|&id| mark(id, 2));
        }
        let highest = candidates.iter().map(|c| c.highest).max().unwrap_or(0);
        // (symbol, neighbour's byte, priority) of every merge of them, sorted.
        let (mut after_byte, mut before_byte) = (Vec::new(), Vec::new());
        let flags = |id: u32| marked.get(id as usize).copied().unwrap_or(0);
        let end = |id: u32| ends.get(id as usize).copied().unwrap_or((0, 0));
        for (left, right, priority) in merges.iter() {
            if priority > highest {
                continue;
            }
            if flags(right) & 1 != 0 && CONTINUATION.contains(&end(left).1) {
                after_byte.push((right, end(left).1, priority));
            }
            if flags(left) & 2 != 0 && LEAD.contains(&end(right).0) {
                before_byte.push((left, end(right).0, priority));
            }
        }
        after_byte.sort_unstable();
        before_byte.sort_unstable();
        let mut table =
            WholeChars { index: vec![0; CODE_POINTS / PAGE].into_boxed_slice(), pages: Box::default(), entries: Box::default() };
        let mut pages: Vec<u32> = Vec::new();
        let mut entries = Vec::with_capacity(candidates.len());
        for candidate in &candidates {
            // The neighbours' bytes next to which a merge of priority at most the
            // candidate's highest joins one of `parts` (or its token) with the neighbour.
            let bytes_set = |parts: &[u32; 2], merges: &[(u32, u8, u32)], first: u8| {
                parts.iter().chain([&candidate.token]).fold(0u64, |set, &id| {
                    let from = merges.partition_point(|m| m.0 < id);
                    merges[from..]
                        .iter()
                        .take_while(|m| m.0 == id)
                        .filter(|m| m.2 <= candidate.highest)
                        .fold(set, |set, m| set | 1 << (m.1 - first))
                })
            };
            let before = bytes_set(&candidate.first, &after_byte, *CONTINUATION.start());
            let after = bytes_set(&candidate.last, &before_byte, *LEAD.start());
            let page = candidate.code_point as usize / PAGE;
            if table.index[page] == 0 {
                pages.resize(pages.len() + PAGE, 0);
                table.index[page] = (pages.len() / PAGE) as u16;
            }
            let at = (usize::from(table.index[page]) - 1) * PAGE + candidate.code_point as usize % PAGE;
            entries.push(Entry { token: candidate.token, before, after });
            pages[at] = entries.len() as u32;
        }
        table.pages = pages.into_boxed_slice();
        table.entries = entries.into_boxed_slice();
        table
    }

    /// Appends the symbols merging `piece` starts from: each byte's token, or a
    /// character's token where it may start whole.
    #[inline]
    pub(super) fn symbols(&self, piece: &[u8], bytes: &[u32; 256], symbols: &mut Vec<u32>) {
        let mut at = 0;
        while let Some(&byte) = piece.get(at) {
            if byte >= 0xC2 {
                if let Some((token, len)) = self.whole(piece, at) {
                    symbols.push(token);
                    at += len;
                    continue;
                }
            }
            symbols.push(bytes[usize::from(byte)]);
            at += 1;
        }
    }

    /// The token of the character at `at` and its length in bytes, if merging may start
    /// from it whole next to its neighbours in `piece`.
    #[inline]
    fn whole(&self, piece: &[u8], at: usize) -> Option<(u32, usize)> {
        let (code_point, len) = two_or_three_byte_char(piece, at)?;
        let page = usize::from(*self.index.get(code_point as usize / PAGE)?);
        let entry = *self.pages.get((page.checked_sub(1)?) * PAGE + code_point as usize % PAGE)?;
        let entry = self.entries.get((entry as usize).checked_sub(1)?)?;
        if let Some(&before) = at.checked_sub(1).and_then(|i| piece.get(i)) {
            if !CONTINUATION.contains(&before) || entry.before >> (before - CONTINUATION.start()) & 1 != 0 {
                return None;
            }
        }
        if let Some(&after) = piece.get(at + len) {
            if !LEAD.contains(&after) || entry.after >> (after - LEAD.start()) & 1 != 0 {
                return None;
            }
        }
        Some((entry.token, len))
    }
}

/// The characters of two and three bytes whose bytes merge into one token on their own.
fn candidates(vocab: &Vocab, merges: &Merges, bytes: &[u32; 256]) -> Vec<Candidate> {
    let mut candidates = Vec::new();
    for id in 0..vocab.id_limit() as u32 {
        let Some(encoded) = vocab.bytes_of(id).filter(|b| (2..=3).contains(&b.len()) && b[0] >= 0xC2) else { continue };
        let Some(code_point) = std::str::from_utf8(encoded).ok().and_then(|c| {
            let mut chars = c.chars();
            chars.next().filter(|_| chars.next().is_none())
        }) else {
            continue;
        };
        let mut symbols = [0u32; 3];
        let mut len = encoded.len();
        for (symbol, &b) in symbols.iter_mut().zip(encoded) {
            *symbol = bytes[usize::from(b)];
        }
        let (mut first, mut last) = ([u32::MAX; 2], [u32::MAX; 2]);
        let mut highest = 0;
        // At most two merges: before each, the edges are parts (none is whole yet).
        for step in 0..2 {
            if len < 2 {
                break;
            }
            (first[step], last[step]) = (symbols[0], symbols[len - 1]);
            let best = (0..len - 1).map(|i| (merges.key(symbols[i], symbols[i + 1]), i)).min();
            match best {
                Some((key, i)) if key != NONE => {
                    highest = highest.max((key >> 32) as u32);
                    symbols[i] = merges.join(symbols[i], symbols[i + 1], key);
                    symbols.copy_within(i + 2..len, i + 1);
                    len -= 1;
                }
                _ => break,
            }
        }
        if len == 1 {
            candidates.push(Candidate { code_point: u32::from(code_point), token: symbols[0], highest, first, last });
        }
    }
    candidates
}

#[cfg(test)]
mod tests {
    use super::super::merge::{self, Merge};
    use super::super::vocab::Tokens;
    use super::*;
    use crate::test_rng::XorShift;

    /// Merging from whole characters counts as merging from bytes, on random vocabularies
    /// over a few two- and three-byte characters whose merges often join parts of them
    /// with their neighbours (so that the table must refuse many starts), on random text of
    /// those characters and ASCII; and the table does start many characters whole.
    #[test]
    fn starting_from_whole_characters_counts_as_starting_from_bytes() {
        let mut rng = XorShift(0x5EED_0F_C4A2);
        let alphabet = ['中', '文', '字', 'я', 'ж', 'é', 'a', ' '];
        let mut started_whole = 0;
        for round in 0..300 {
            // Every byte, then tokens joined from two earlier ones: the characters' own
            // bytes among them, and random pairs of what the text holds.
            let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
            let mut list: Vec<Merge> = Vec::new();
            let text_bytes: Vec<u8> = alphabet.iter().flat_map(|c| c.to_string().into_bytes()).collect();
            let mut joinable: Vec<u32> = text_bytes.iter().map(|&b| u32::from(b)).collect();
            let id_of = |tokens: &[Vec<u8>], bytes: &[u8]| tokens.iter().position(|t| t == bytes).map(|i| i as u32);
            for _ in 0..40 + round % 60 {
                let (left, right) = if rng.below(3) == 0 {
                    // A step of a character's own merging.
                    let c = alphabet[rng.below(alphabet.len())].to_string().into_bytes();
                    let cut = 1 + rng.below(c.len().max(2) - 1);
                    match (id_of(&tokens, &c[..cut.min(c.len())]), id_of(&tokens, &c[cut.min(c.len())..])) {
                        (Some(l), Some(r)) => (l, r),
                        _ => continue,
                    }
                } else {
                    (joinable[rng.below(joinable.len())], joinable[rng.below(joinable.len())])
                };
                let joined = [tokens[left as usize].as_slice(), &tokens[right as usize]].concat();
                if joined.len() > 9 || list.iter().any(|m| (m.left, m.right) == (left, right)) {
                    continue;
                }
                let id = match id_of(&tokens, &joined) {
                    Some(id) => id,
                    None => {
                        tokens.push(joined);
                        joinable.push(tokens.len() as u32 - 1);
                        tokens.len() as u32 - 1
                    }
                };
                list.push(Merge { left, right, priority: list.len() as u32, joined: id });
            }
            // Priorities in a random order (a file may list a merge before those making its
            // parts): a character's own merges then often come after merges of its token
            // with a neighbour.
            for i in (1..list.len()).rev() {
                let j = rng.below(i + 1);
                let priority = list[i].priority;
                list[i].priority = list[j].priority;
                list[j].priority = priority;
            }
            let mut entries = Tokens::with_capacity(0, 0);
            for (id, token) in tokens.iter().enumerate() {
                entries.push(token, id as u32);
            }
            let vocab = entries.index().unwrap();
            let merges = Merges::new(list);
            let bytes: [u32; 256] = std::array::from_fn(|b| b as u32);
            let table = WholeChars::of_merges(&vocab, &merges, &bytes);
            for _ in 0..30 {
                let text: String = (0..rng.below(24)).map(|_| alphabet[rng.below(alphabet.len())]).collect();
                let piece = text.as_bytes();
                let mut whole = Vec::new();
                table.symbols(piece, &bytes, &mut whole);
                started_whole += piece.len() - whole.len();
                let from_bytes: Vec<u32> = piece.iter().map(|&b| u32::from(b)).collect();
                assert_eq!(
                    merge::tests::check(&merges, &whole),
                    merge::tests::check(&merges, &from_bytes),
                    "round {round}: {text:?}"
                );
            }
        }
        assert!(started_whole > 10_000, "{started_whole} bytes saved");
    }
}
