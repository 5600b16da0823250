//! Whole characters as the symbols byte-level merging starts from, where that provably ends
//! the same: a Chinese piece then starts with a third of the symbols, skipping the merges
//! that only rebuild its characters (the built-in engine does the same for its own
//! vocabularies, from tables made at build time; here they are made at load time from the
//! file's merges, or for a ranks file from its tokens: there `A` then `B` merge, with the
//! rank of `A + B` as priority, whenever `A + B` is a token).
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
//! character after another. In a ranks file every span merging makes is a token (all 256
//! bytes are), and merges of equal rank join the same bytes: where they overlap, the
//! leftmost goes first with or without `c` whole, so the argument holds there too.
//! `tokens::loaded::whole_chars::tests` (and, for ranks files, `tokens::loaded::model::tests`)
//! check it against merging from bytes on vocabularies made to break it.

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
    /// end (its last byte, a suffix): each one's token and [`part_index`] (`u32::MAX`: none).
    edges: [[(u32, u32); 2]; 2],
}

impl Candidate {
    /// Its parts on `side` (0: at its start, 1: at its end), then its token: each one's token
    /// and [`part_index`].
    fn parts(&self, side: usize) -> impl Iterator<Item = (u32, usize)> {
        let edge = self.edges[side].into_iter().filter(|&(_, index)| index != u32::MAX);
        edge.map(|(token, index)| (token, index as usize)).chain([(self.token, self.code_point as usize)])
    }
}

/// Entries of [`Parts`]' tables: characters by code point, then single bytes, then pairs of
/// a three-byte character's bytes.
const PART_INDEXES: usize = CODE_POINTS + 256 + (0x70 << 6);

/// Where the bytes of a part are in [`Parts`]' tables (one place for any bytes): a
/// character of two or three bytes at its code point, a byte, two bytes of a three-byte
/// character (its lead byte and a continuation byte, or two continuation bytes); `None` for
/// any other bytes, which are no part.
#[inline]
fn part_index(bytes: &[u8]) -> Option<usize> {
    if let Some((code_point, len)) = two_or_three_byte_char(bytes, 0) {
        return (len == bytes.len()).then_some(code_point as usize);
    }
    match *bytes {
        [byte] => Some(CODE_POINTS + usize::from(byte)),
        [first @ (0x80..=0xBF | 0xE0..=0xEF), second @ 0x80..=0xBF] => {
            Some(CODE_POINTS + 256 + (usize::from(first - 0x80) << 6 | usize::from(second - 0x80)))
        }
        _ => None,
    }
}

/// The tokens at the candidates' edges (the parts at their start and end, and their
/// tokens), and which merges of one with a neighbour can matter: a small table read by
/// the part's bytes, so that a ranks file's tokens are split without looking their sides up
/// in the vocabulary.
pub(super) struct Parts {
    /// Per token id, bit `1 << side` when it is a part on that side: 0, at a candidate's
    /// start (its neighbour is before it), 1, at its end (its neighbour is after it).
    sides: Vec<u8>,
    /// Per side, per part (at its [`part_index`]), one above the highest priority of a
    /// merge with a neighbour on that side that can matter: the highest of the candidates
    /// it is a part of there (0: none, or not a part).
    bounds: [Vec<u32>; 2],
    /// Above every bound.
    top: u32,
}

impl Parts {
    fn new(id_limit: usize, candidates: &[Candidate]) -> Parts {
        let mut parts = Parts { sides: vec![0; id_limit], bounds: [vec![0; PART_INDEXES], vec![0; PART_INDEXES]], top: 0 };
        for candidate in candidates {
            let bound = candidate.highest.saturating_add(1);
            for side in 0..2 {
                for (token, index) in candidate.parts(side) {
                    if let Some(sides) = parts.sides.get_mut(token as usize) {
                        *sides |= 1 << side;
                    }
                    parts.bounds[side][index] = parts.bounds[side][index].max(bound);
                }
            }
            parts.top = parts.top.max(bound);
        }
        parts
    }

    /// The [`part_index`] of the token `id` if it is a part on `side`, and one above the
    /// highest priority of a merge joining it with a neighbour there that can matter.
    #[inline]
    fn of_token(&self, vocab: &Vocab, id: u32, side: usize) -> Option<(usize, u32)> {
        let sides = *self.sides.get(id as usize)?;
        if sides >> side & 1 == 0 {
            return None;
        }
        self.of_bytes(vocab.bytes_of(id)?, side)
    }

    /// The [`part_index`] of `bytes`, and one above the highest priority of a merge joining
    /// the part of these bytes with a neighbour on `side` that can matter (0: none can, or
    /// no part has these bytes).
    #[inline]
    fn of_bytes(&self, bytes: &[u8], side: usize) -> Option<(usize, u32)> {
        let index = part_index(bytes)?;
        Some((index, self.bounds[side][index]))
    }
}

/// How two tokens merge, for building the table. A merge's token is that of the two
/// tokens' bytes together (a ranks file's by definition, a `tokenizer.json`'s as read), so a
/// part of a character is that piece of its bytes.
pub(super) trait TokenMerges {
    /// The priority of `left` then `right` (each a token and its bytes) and the token they
    /// join into, if they merge.
    fn pair(&self, vocab: &Vocab, left: (u32, &[u8]), right: (u32, &[u8])) -> Option<(u32, u32)>;

    /// The priority of `left` then `right` if they merge into `joined`, the token of their
    /// bytes together.
    fn joining(&self, vocab: &Vocab, left: (u32, &[u8]), right: (u32, &[u8]), joined: u32) -> Option<u32> {
        self.pair(vocab, left, right).filter(|&(_, to)| to == joined).map(|(priority, _)| priority)
    }

    /// Calls `each(side, index, byte, priority)` at least for every merge of priority below
    /// `parts`' bound joining a part (at [`part_index`] `index`) with a neighbour token on
    /// `side`: before it (side 0) ending in the continuation byte `byte`, or after it (side
    /// 1) starting with the lead byte `byte`.
    fn for_each_edge(&self, vocab: &Vocab, parts: &Parts, each: &mut dyn FnMut(usize, usize, u8, u32));
}

/// Listed merges: those of the table.
impl TokenMerges for Merges {
    fn pair(&self, _: &Vocab, (left, _): (u32, &[u8]), (right, _): (u32, &[u8])) -> Option<(u32, u32)> {
        let key = self.key(left, right);
        (key != NONE).then(|| ((key >> 32) as u32, self.join(left, right, key)))
    }

    fn for_each_edge(&self, vocab: &Vocab, parts: &Parts, each: &mut dyn FnMut(usize, usize, u8, u32)) {
        for (left, right, priority) in self.iter() {
            for (side, part, neighbour) in [(0, right, left), (1, left, right)] {
                let Some((index, bound)) = parts.of_token(vocab, part, side) else { continue };
                let byte = vocab.bytes_of(neighbour).and_then(|b| if side == 0 { b.last() } else { b.first() });
                match byte {
                    Some(&byte) if priority < bound && (if side == 0 { CONTINUATION } else { LEAD }).contains(&byte) => {
                        each(side, index, byte, priority)
                    }
                    _ => {}
                }
            }
        }
    }
}

/// The merges of a ranks file: `A` then `B` join into the token `A + B`, its rank (its id)
/// as priority.
pub(super) struct RankMerges<'a> {
    /// The id of every two-byte token, at `first << 8 | second` (`u32::MAX`: none).
    pub(super) two_bytes: &'a [u32],
}

impl TokenMerges for RankMerges<'_> {
    fn pair(&self, vocab: &Vocab, (_, left): (u32, &[u8]), (_, right): (u32, &[u8])) -> Option<(u32, u32)> {
        let id = match (left, right) {
            (&[first], &[second]) => *self.two_bytes.get(usize::from(first) << 8 | usize::from(second))?,
            _ => vocab.get(&[left, right].concat())?,
        };
        (id != u32::MAX).then_some((id, id))
    }

    /// A token's rank is its priority: no lookup.
    fn joining(&self, _: &Vocab, _: (u32, &[u8]), _: (u32, &[u8]), joined: u32) -> Option<u32> {
        Some(joined)
    }

    /// The splits of each token ranked below `parts`' top into two tokens, cut between a
    /// continuation byte and a lead byte, whose side of at most three bytes is a part: a
    /// token has at most one such cut per side (a part holds no lead byte but its first),
    /// and its side's bound is read first (most splits are of no part, or rank above it),
    /// so that the vocabulary is searched only for the few that can matter.
    fn for_each_edge(&self, vocab: &Vocab, parts: &Parts, each: &mut dyn FnMut(usize, usize, u8, u32)) {
        for id in 0..parts.top.min(vocab.id_limit() as u32) {
            let Some(token @ &[first, .., last]) = vocab.bytes_of(id) else { continue };
            let len = token.len();
            // The part at the token's end (ending in a byte above ASCII) starts at its last
            // lead byte; that at its start (starting with one) ends before its first lead
            // byte after the first.
            let lead = |&byte: &u8| byte >= *LEAD.start();
            let end_cut = || {
                let start = len.saturating_sub(3).max(1);
                token[start..].iter().rposition(lead).map(|at| start + at)
            };
            let cuts = [
                if last >= 0x80 { end_cut() } else { None },
                if first >= 0x80 { token[1..len.min(4)].iter().position(lead).map(|at| 1 + at) } else { None },
            ];
            for (side, cut) in cuts.into_iter().enumerate() {
                let Some(cut) = cut.filter(|&cut| CONTINUATION.contains(&token[cut - 1])) else { continue };
                let (left, right) = token.split_at(cut);
                let (part, neighbour) = if side == 0 { (right, left) } else { (left, right) };
                match parts.of_bytes(part, side) {
                    Some((index, bound)) if id < bound && vocab.get(neighbour).is_some() => {
                        each(side, index, token[cut - 1 + side], id)
                    }
                    _ => {}
                }
            }
        }
    }
}

impl WholeChars {
    /// The table of a byte-level vocabulary merging by `merges` (`bytes`: each byte's
    /// token). Empty when the vocabulary's ids are too sparse to find a token's bytes.
    pub(super) fn new(vocab: &Vocab, merges: &impl TokenMerges, bytes: &[u32; 256]) -> WholeChars {
        if vocab.bytes_of(bytes[0]).is_none() {
            return WholeChars::default();
        }
        let candidates = candidates(vocab, merges, bytes);
        if candidates.is_empty() {
            return WholeChars::default();
        }
        let parts = Parts::new(vocab.id_limit(), &candidates);
        // The merges joining a candidate's edges (or its token) with a neighbour that can
        // matter, per side: (part index, neighbour's byte next to it, priority), sorted, and
        // the parts that have one (only those bytes after which, or before which, a
        // character may start whole).
        let mut edges = [Vec::new(), Vec::new()];
        let mut with_edges = [vec![0u64; PART_INDEXES.div_ceil(64)], vec![0u64; PART_INDEXES.div_ceil(64)]];
        merges.for_each_edge(vocab, &parts, &mut |side, index, byte, priority| {
            edges[side].push((index, byte, priority));
            with_edges[side][index / 64] |= 1 << (index % 64);
        });
        edges.iter_mut().for_each(|edges| edges.sort_unstable());
        let mut table =
            WholeChars { index: vec![0; CODE_POINTS / PAGE].into_boxed_slice(), pages: Box::default(), entries: Box::default() };
        let mut pages: Vec<u32> = Vec::new();
        let mut entries = Vec::with_capacity(candidates.len());
        for candidate in &candidates {
            // The neighbours' bytes next to which a merge of priority at most the
            // candidate's highest joins one of its parts on `side` (or its token) with the
            // neighbour.
            let bytes_set = |side: usize| {
                let (edges, first) = (&edges[side], if side == 0 { *CONTINUATION.start() } else { *LEAD.start() });
                candidate.parts(side).fold(0u64, |set, (_, index)| {
                    if with_edges[side][index / 64] >> (index % 64) & 1 == 0 {
                        return set;
                    }
                    let from = edges.partition_point(|edge| edge.0 < index);
                    edges[from..]
                        .iter()
                        .take_while(|edge| edge.0 == index)
                        .filter(|edge| edge.2 <= candidate.highest)
                        .fold(set, |set, edge| set | 1 << (edge.1 - first))
                })
            };
            let (before, after) = (bytes_set(0), bytes_set(1));
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

    /// Whether no character may start whole.
    pub(super) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Appends the symbols merging `piece` starts from: each byte's token, or a
    /// character's token where it may start whole.
    #[inline]
    pub(super) fn symbols(&self, piece: &[u8], bytes: &[u32; 256], symbols: &mut Vec<u32>) {
        self.for_each_symbol(piece, |at, whole| symbols.push(whole.map_or(bytes[usize::from(piece[at])], |(token, _)| token)));
    }

    /// Calls `symbol(at, whole)` for each symbol merging `piece` starts from, in order: `at`
    /// where it starts, `whole` a character's token and length where it may start whole,
    /// else `None` for the byte at `at`.
    #[inline]
    pub(super) fn for_each_symbol(&self, piece: &[u8], mut symbol: impl FnMut(usize, Option<(u32, usize)>)) {
        let mut at = 0;
        while let Some(&byte) = piece.get(at) {
            if byte >= 0xC2 {
                if let Some((token, len)) = self.whole(piece, at) {
                    symbol(at, Some((token, len)));
                    at += len;
                    continue;
                }
            }
            symbol(at, None);
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
fn candidates(vocab: &Vocab, merges: &impl TokenMerges, bytes: &[u32; 256]) -> Vec<Candidate> {
    let mut candidates = Vec::new();
    'tokens: for id in 0..vocab.id_limit() as u32 {
        let Some(encoded) = vocab.bytes_of(id).filter(|b| (2..=3).contains(&b.len()) && b[0] >= 0xC2) else { continue };
        // One character (not a surrogate's bytes, which no text holds).
        let Some((code_point, _)) = two_or_three_byte_char(encoded, 0)
            .filter(|&(code_point, len)| len == encoded.len() && !(0xD800..0xE000).contains(&code_point))
        else {
            continue;
        };
        // Its symbols: each one's token and the range of its bytes.
        let mut symbols = [(0u32, 0usize, 0usize); 3];
        let mut len = encoded.len();
        for (at, (symbol, &b)) in symbols.iter_mut().zip(encoded).enumerate() {
            *symbol = (bytes[usize::from(b)], at, at + 1);
        }
        let mut edges = [[(u32::MAX, u32::MAX); 2]; 2];
        let mut highest = 0;
        let of = |(token, start, end): (u32, usize, usize)| (token, &encoded[start..end]);
        // At most two merges: before each, the edges are parts (none is whole yet).
        #[allow(clippy::needless_range_loop)] // `step` is the inner index of `edges[side][step]`
        for step in 0..2 {
            if len < 2 {
                break;
            }
            for (side, (token, start, end)) in [symbols[0], symbols[len - 1]].into_iter().enumerate() {
                // (Every piece of a character has an index,
                // `every_piece_of_a_character_has_a_part_index`; a part without one could not
                // be looked up.)
                let Some(index) = part_index(&encoded[start..end]) else { continue 'tokens };
                edges[side][step] = (token, index as u32);
            }
            // The last two symbols spell the character: their merge, if any, makes its token.
            let best = if len == 2 {
                merges.joining(vocab, of(symbols[0]), of(symbols[1]), id).map(|priority| ((priority, id), 0))
            } else {
                (0..len - 1).filter_map(|i| Some((merges.pair(vocab, of(symbols[i]), of(symbols[i + 1]))?, i))).min()
            };
            match best {
                Some(((priority, joined), i)) => {
                    highest = highest.max(priority);
                    symbols[i] = (joined, symbols[i].1, symbols[i + 1].2);
                    symbols.copy_within(i + 2..len, i + 1);
                    len -= 1;
                }
                None => break,
            }
        }
        if len == 1 {
            candidates.push(Candidate { code_point, token: symbols[0].0, highest, edges });
        }
    }
    candidates
}

#[cfg(test)]
pub(super) mod tests {
    use super::super::merge::{self, Merge};
    use super::super::vocab::Tokens;
    use super::*;
    use crate::test_rng::XorShift;

    /// The characters of the random texts: of three, two and one byte.
    pub(in super::super) const ALPHABET: [char; 8] = ['中', '文', '字', 'я', 'ж', 'é', 'a', ' '];

    /// A random byte-level vocabulary over [`ALPHABET`] whose merges often join parts of its
    /// characters with their neighbours (so that the table must refuse many starts): every
    /// byte, then tokens joined from two earlier ones (steps of a character's own merging,
    /// and random pairs of what the text holds), and the merges making them, their
    /// priorities in a random order (a file may list a merge before those making its
    /// parts: a character's own merges then often come after merges of its token with a
    /// neighbour). `round` varies the number of merges.
    pub(in super::super) fn random_vocabulary(rng: &mut XorShift, round: usize) -> (Vec<Vec<u8>>, Vec<Merge>) {
        let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        let mut list: Vec<Merge> = Vec::new();
        let text_bytes: Vec<u8> = ALPHABET.iter().flat_map(|c| c.to_string().into_bytes()).collect();
        let mut joinable: Vec<u32> = text_bytes.iter().map(|&b| u32::from(b)).collect();
        let id_of = |tokens: &[Vec<u8>], bytes: &[u8]| tokens.iter().position(|t| t == bytes).map(|i| i as u32);
        for _ in 0..40 + round % 60 {
            let (left, right) = if rng.below(3) == 0 {
                let c = ALPHABET[rng.below(ALPHABET.len())].to_string().into_bytes();
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
        for i in (1..list.len()).rev() {
            let j = rng.below(i + 1);
            let priority = list[i].priority;
            list[i].priority = list[j].priority;
            list[j].priority = priority;
        }
        (tokens, list)
    }

    /// A random text of [`ALPHABET`]'s characters, up to 23 of them.
    pub(in super::super) fn random_text(rng: &mut XorShift) -> String {
        (0..rng.below(24)).map(|_| ALPHABET[rng.below(ALPHABET.len())]).collect()
    }

    /// Every piece of a character of two or three bytes that can be a part (its first or last
    /// byte, its first or last two, itself) has a [`part_index`], each a place of its own:
    /// a candidate's parts are all looked up, and never mistaken for one another.
    #[test]
    fn every_piece_of_a_character_has_a_part_index() {
        let mut owner = vec![None; PART_INDEXES];
        for c in (0x80..0x1_0000).filter_map(char::from_u32) {
            let mut buffer = [0u8; 4];
            let bytes = c.encode_utf8(&mut buffer).as_bytes();
            let n = bytes.len();
            assert_eq!(part_index(bytes), Some(c as usize), "{c:?}");
            for len in 1..n {
                for piece in [&bytes[..len], &bytes[n - len..]] {
                    let index = part_index(piece).unwrap_or_else(|| panic!("{piece:02X?} of {c:?}"));
                    let earlier = owner[index].get_or_insert_with(|| piece.to_vec());
                    assert_eq!(earlier.as_slice(), piece, "two pieces at {index}");
                }
            }
        }
        // Bytes that are no piece of one character have none.
        for bytes in [&b"ab"[..], &[0xE4, 0xB8, 0x41], &[0x41, 0x80], &[0xC3, 0xA9, 0xC3], &[0xF0, 0x9F], &[0xC0, 0x80]] {
            assert_eq!(part_index(bytes), None, "{bytes:02X?}");
        }
    }

    /// Merging from whole characters counts as merging from bytes, on random vocabularies
    /// with listed merges made to break it, on random text of their characters; and the
    /// table does start many characters whole.
    #[test]
    fn starting_from_whole_characters_counts_as_starting_from_bytes() {
        let mut rng = XorShift(0x5E_ED0F_C4A2);
        let mut started_whole = 0;
        for round in 0..300 {
            let (tokens, list) = random_vocabulary(&mut rng, round);
            let mut entries = Tokens::with_capacity(0, 0);
            for (id, token) in tokens.iter().enumerate() {
                entries.push(token, id as u32);
            }
            let vocab = entries.index().unwrap();
            let merges = Merges::new(list);
            let bytes: [u32; 256] = std::array::from_fn(|b| b as u32);
            let table = WholeChars::new(&vocab, &merges, &bytes);
            for _ in 0..30 {
                let text = random_text(&mut rng);
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
